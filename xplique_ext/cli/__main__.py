"""``python -m xplique_ext.cli``: the ``xplique-ext`` command."""

from . import main

if __name__ == "__main__":
    raise SystemExit(main())
