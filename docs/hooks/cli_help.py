"""MkDocs hook: ``<!-- xplique-ext-help: COMMAND -->`` in a page becomes the current
``xplique-ext COMMAND --help`` text, so that the command-line reference never drifts from
the code. ``<!-- xplique-ext-help: -->`` gives the top-level help."""

import contextlib
import io
import re

MARKER = re.compile(r"<!-- xplique-ext-help: *([\w-]*) *-->")


def _help(command: str) -> str:
    from xplique_ext.cli import build_parser

    parser = build_parser()
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
        parser.parse_args(([command] if command else []) + ["--help"])
    return out.getvalue().rstrip()


def on_page_markdown(markdown, page, config, files):
    return MARKER.sub(lambda m: "```text\n" + _help(m.group(1)) + "\n```", markdown)
