"""The ``xplique-ext`` command line: ``demo`` and the families' sub-commands."""

from __future__ import annotations

import argparse
import functools
import os
import re
from typing import Optional, Sequence

__all__ = ["main", "build_parser", "HelpFormatter", "plain"]

# in this order: :class:`Name` and :func:`~mod.name`, then ``literal``, then `name`
_MARKUP = [re.compile(p) for p in (r":[a-z]+:`~?([^`]+)`", r"``([^`]+)``", r"`([^`]+)`")]


def plain(text: str) -> str:
    """``text`` without reStructuredText markup (for terminal help)."""
    for pattern in _MARKUP:
        text = pattern.sub(r"\1", text)
    return text


class HelpFormatter(argparse.HelpFormatter):
    """argparse help without RST markup, with each option's default shown.

    The default is appended as ``(default: X)`` unless the help text already names it,
    and left out for flags and options whose default is None.
    """

    def _format_text(self, text):
        return super()._format_text(plain(text))

    def _expand_help(self, action):
        return plain(super()._expand_help(action))

    def _get_help_string(self, action):
        text = action.help or ""
        default = action.default
        shown = not (
            "default" in text
            or default is None
            or default is argparse.SUPPRESS
            or isinstance(default, bool)
            or not action.option_strings
            or action.nargs == 0
        )
        return f"{text} (default: %(default)s)" if shown else text


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every sub-command registered."""
    from .. import __version__
    from . import demo, rules

    # every (sub-)parser uses HelpFormatter
    new_parser = functools.partial(argparse.ArgumentParser, formatter_class=HelpFormatter)
    parser = new_parser(
        prog="xplique-ext", description="Measure how good explanations are (xplique_ext)."
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(
        dest="command", metavar="COMMAND", required=True, parser_class=new_parser
    )
    for module in (demo, rules):
        module.register(subparsers)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point of ``xplique-ext``; returns the exit code."""
    # keep TensorFlow's C++ start-up chatter (CPU features, absent CUDA devices) out of the
    # command's output; Python errors still surface
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    args = build_parser().parse_args(argv)
    return int(args.func(args) or 0)
