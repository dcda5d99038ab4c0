"""Errors raised by the readers of ``.names``, ``.data`` and PBM rule files.

Every problem found while reading or checking these files is reported with a
:class:`ParseError` (a ``ValueError``) that carries the file name, the line number and
the offending text, so that a user can go straight to the line to fix.
"""

from __future__ import annotations

from typing import Optional

__all__ = ["ParseError", "NamesParseError", "DataParseError", "RuleParseError"]


class ParseError(ValueError):
    """A ``.names``, ``.data`` or PBM rule file (or a DataFrame standing for one) is invalid.

    Parameters
    ----------
    message
        What is wrong, in words.
    file
        The file name, or a description such as ``"<string>"`` or ``"<DataFrame>"``.
    line
        1-based line number (row number for a DataFrame), when known.
    text
        The offending text (line or token), when known.

    Attributes
    ----------
    message, file, line, text
        The parameters, kept for programmatic use.
    """

    def __init__(
        self,
        message: str,
        *,
        file: Optional[str] = None,
        line: Optional[int] = None,
        text: Optional[str] = None,
    ) -> None:
        self.message = message
        self.file = file
        self.line = line
        self.text = text
        where = [] if file is None else [str(file)]
        if line is not None:
            where.append(f"line {line}")
        if text is not None:  # the offending text, shortened past 120 characters
            message += f": {text if len(text) <= 120 else text[:117] + '...'!r}"
        # pickled as Exception is: rebuilt from the whole message, its fields restored
        super().__init__(f"{', '.join(where)}: {message}" if where else message)


class NamesParseError(ParseError):
    """An invalid ``.names`` file (attribute declarations)."""


class DataParseError(ParseError):
    """An invalid ``.data`` file or DataFrame (examples)."""


class RuleParseError(ParseError):
    """An invalid PBM rule file, or rules that do not fit the ``.names`` declarations."""
