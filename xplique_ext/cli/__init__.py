"""The ``xplique-ext`` command line: ``demo`` and the families' sub-commands."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Optional, Sequence

__all__ = ["main", "build_parser"]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every sub-command registered."""
    from . import demo, rules

    parser = argparse.ArgumentParser(
        prog="xplique-ext",
        description="Measure how good explanations are (xplique_ext).",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    for module in (demo, rules):
        module.register(subparsers)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point of ``xplique-ext``; returns the exit code."""
    # keep TensorFlow's C++ start-up chatter (CPU features, absent CUDA devices) out of the
    # command's output; Python errors still surface
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    parser = build_parser()
    args = parser.parse_args(argv)
    code = args.func(args)
    return int(code or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
