"""Lexical helpers shared by the ``.names``, ``.data`` and PBM readers and writers:
quoting a name or a value, reading it back (:func:`scan_quoted`), the one tokenizer of
both grammars (:func:`tokenize`) and the :class:`Token` it yields, and reading and writing
a text file (UTF-8, Latin-1 as a fallback; UTF-16 and UTF-32 refused).

The ``.names`` and PBM grammars differ only in their token pattern (statement ends, ``|``
comments, ``:=`` in ``.names``; comparison operators, brackets and ``+`` in PBM rules)
and in how a quoted identifier is checked; their parsers stay apart.

This module is the lowest floor of the rule files: it imports only their errors and the
package's file writer (:func:`xplique_ext.commons.files.atomic_write`) and text decoder
(:mod:`xplique_ext.commons.text_files`).
"""

from __future__ import annotations

import io
import os
import re
import sys
from typing import Collection, Iterable, Iterator, NamedTuple, Optional, Pattern, Tuple, Union

from ..commons import text_files
from ..commons.files import atomic_write
from .errors import ParseError

__all__ = [
    "LINE_END",
    "NAMES_WORD",
    "PBM_WORD",
    "Token",
    "open_text",
    "quote",
    "read_text",
    "scan_quoted",
    "tokenize",
    "write_text",
]

#: A line end of the rule files: ``\n``, ``\r\n`` or a lone ``\r`` (old Mac OS files).
LINE_END = re.compile(r"\r\n?|\n")
#: A name or value written without quotes in a ``.names`` file.
NAMES_WORD = re.compile(r"[A-Za-z0-9_]+")
#: A name or value written without quotes in a PBM rule file (dots and minus signs too).
PBM_WORD = re.compile(r"[A-Za-z0-9_.\-]+")


def quote(
    text: str,
    *,
    word: Pattern[str] = NAMES_WORD,
    reserved: Collection[str] = (),
    reserved_any_case: Collection[str] = (),
) -> str:
    """``text`` as written in a ``.names`` or PBM file.

    Plain words are written as they are; anything else (spaces, punctuation, an empty
    string, a reserved word) goes in double quotes, with ``\\`` and ``"`` escaped, so that
    the readers give ``text`` back.

    Parameters
    ----------
    text
        The name or value.
    word
        What a plain word is (:data:`NAMES_WORD` or :data:`PBM_WORD`), matched whole.
    reserved
        Keywords quoted when spelled exactly so (PBM's ``IF``, ``THEN``...).
    reserved_any_case
        Keywords, in lower case, quoted in any spelling (``.names`` types, PBM's ``in``).

    Examples
    --------
    >>> quote("outlook"), quote("petal length (cm)"), quote('say "hi"')
    ('outlook', '"petal length (cm)"', '"say \\\\"hi\\\\""')
    >>> quote("THEN", word=PBM_WORD, reserved=("THEN",)), quote("then", word=PBM_WORD)
    ('"THEN"', 'then')
    """
    if word.fullmatch(text) and text not in reserved and text.lower() not in reserved_any_case:
        return text
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


#: A double-quoted string: \" and \\ are escapes, any other backslash stands for itself.
_QUOTED = re.compile(r'"((?:\\["\\]|[^"\\\n]|\\(?!["\\]))*)"')
_ESCAPE = re.compile(r'\\(["\\])')


class Token(NamedTuple):
    """A token of a ``.names`` or PBM file: its kind ('word', 'quoted', 'punct', and
    'end' in ``.names``, 'op' in PBM), its text (unescaped for 'quoted') and its line."""

    kind: str
    value: str
    line: int


def scan_quoted(text: str, start: int) -> Tuple[Optional[str], int]:
    """Read the double-quoted string opening at ``text[start]`` (the inverse of
    :func:`quote`: ``\\"`` and ``\\\\`` are unescaped).

    Returns
    -------
    value, end
        The unescaped text and the index just past the closing quote; ``(None, j)`` when
        the string is not closed before the end of its line, ``j`` being where it stops.

    Examples
    --------
    >>> scan_quoted('say "hi" now', 4)
    ('hi', 8)
    >>> scan_quoted(quote('a "b"'), 0)
    ('a "b"', 9)
    >>> scan_quoted('"open', 0)
    (None, 5)
    """
    if (match := _QUOTED.match(text, start)) is None:
        end = text.find("\n", start)
        if end < 0:
            end = len(text)
        return None, end
    return _ESCAPE.sub(r"\1", match.group(1)), match.end()


def tokenize(
    lines: Iterable[Tuple[int, str]],
    pattern: Pattern[str],
    error: type,
    file: str,
    *,
    names: bool = False,
) -> Iterator[Token]:
    """The tokens of numbered lines, the one tokenizer of the ``.names`` and PBM grammars:
    a match of a named group of ``pattern`` is a token of that kind (``quoted`` read by
    :func:`scan_quoted`), any other match (white space, a comment) is dropped.

    Raises ``error`` (a :class:`ParseError`) with the line for a character ``pattern``
    does not match, or an unterminated quoted identifier. With ``names`` (the ``.names``
    rules), an empty quoted identifier is refused too, and the error shows the quoted
    text, not the whole line.
    """
    for number, line in lines:
        i = 0
        while i < len(line):
            if (match := pattern.match(line, i)) is None:
                raise error(f"unexpected character {line[i]!r}", file=file, line=number, text=line)
            i = match.end()
            if match.lastgroup == "quoted":
                value, i = scan_quoted(line, match.start())
                if value is None or (names and not value):
                    raise error(
                        "empty quoted identifier"
                        if value == ""
                        else "unterminated quoted identifier",
                        file=file,
                        line=number,
                        text=line[match.start() : i] if names else line,
                    )
                yield Token("quoted", value, number)
            elif match.lastgroup:
                yield Token(match.lastgroup, match.group(), number)


def open_text(source: Union[str, os.PathLike, io.BufferedIOBase]) -> io.TextIOWrapper:
    """Open a text input of the rule files (``.names``, ``.data``, PBM, ``fire`` pairs) for
    reading: the one opener of every reader.

    The text is decoded by the package's one text decoder
    (:func:`xplique_ext.commons.text_files.open_text`): UTF-8, a byte-order mark
    (``\ufeff``, as some editors save) skipped; bytes that are not UTF-8 are read as
    Latin-1. A file in UTF-16 or UTF-32 (its byte-order mark, or NUL bytes in its first
    4 KiB) is refused. New lines are not translated (the readers count ``\n``, ``\r\n``
    and a lone ``\r`` as line ends).

    Parameters
    ----------
    source
        A path, or a binary file object (closed with the text stream; its encoding is not
        checked: it holds text the caller encoded).

    Raises
    ------
    OSError
        When the file cannot be opened (its ``filename`` is ``source``).
    ParseError
        For a file in UTF-16 or UTF-32.
    """
    try:
        return text_files.open_text(source)
    except text_files.WideTextError as exc:
        raise ParseError(str(exc), file=os.fspath(source)) from None


def read_text(path: Union[str, os.PathLike, None]) -> str:
    """The text of a file, opened by :func:`open_text`; with ``path`` None, standard
    input, decoded as a file is (a UTF-16 or UTF-32 one is not recognised there).

    Raises
    ------
    OSError
        When the file cannot be read (its ``filename`` is ``path``).

    Examples
    --------
    >>> from xplique_ext.rules import example_path
    >>> read_text(example_path("voyage.names")).startswith("| The voyage example")
    True
    """
    if path is None:
        if not hasattr(sys.stdin, "buffer"):  # a StringIO holds text
            return sys.stdin.read()
        return text_files.decode_text(sys.stdin.buffer.read())
    with open_text(path) as handle:
        return handle.read()


def write_text(path: Union[str, os.PathLike, None], text: str) -> None:
    """Write ``text`` to a file in UTF-8 (the one writer of the rule files and of the
    command line's outputs) or, with ``path`` None, to standard output (flushed).

    The file is written whole or not at all (:func:`~xplique_ext.commons.files.atomic_write`):
    an interrupted write leaves the old file as it was."""
    if path is None:
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        with atomic_write(path, encoding="utf-8") as handle:
            handle.write(text)
