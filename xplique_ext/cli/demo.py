"""``xplique-ext demo``: placeholder registration, filled in below."""


def register(subparsers) -> None:
    parser = subparsers.add_parser("demo", help="run the built-in demonstration")
    parser.set_defaults(func=lambda args: 0)
