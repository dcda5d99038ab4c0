"""Reading text files: the package's one text decoder.

Every text file the package reads (the rule files ``.names``, ``.data`` and PBM, the
``fire`` pairs, the Sentiment140 and SST-2 files of :mod:`xplique_ext.text.loaders`) is
decoded the same way:

- UTF-8, a byte-order mark (``\\ufeff``, as some editors save) skipped;
- bytes that are not UTF-8 are read as Latin-1, sequence by sequence (a Latin-1 file, or
  one that mixes both, is read as its author wrote it: ``café`` saved in UTF-8 stays
  ``café``, not ``cafÃ©``);
- a file in UTF-16 or UTF-32 (its byte-order mark, or NUL bytes in its first 4 KiB) is
  refused with :class:`WideTextError`;
- new lines are not translated (``\\n``, ``\\r\\n`` and a lone ``\\r`` reach the reader as
  they are).
"""

from __future__ import annotations

import codecs
import io
import os
from typing import Union

__all__ = ["WideTextError", "decode_text", "open_text"]

#: The ``codecs`` error handler that reads bytes that are not UTF-8 as Latin-1.
LATIN1_FALLBACK = "xplique_ext.latin-1"
#: The encoding every text file is read in (a byte-order mark skipped).
ENCODING = "utf-8-sig"
#: How many bytes are looked at for the marks of UTF-16 and UTF-32.
_HEAD = 4096


def _latin1(error: UnicodeDecodeError):
    """Decode bytes that are not UTF-8 as Latin-1 (``codecs`` error handler)."""
    return error.object[error.start : error.end].decode("latin-1"), error.end


codecs.register_error(LATIN1_FALLBACK, _latin1)


class WideTextError(ValueError):
    """A text file in UTF-16 or UTF-32, which the package does not read."""


def decode_text(data: bytes) -> str:
    """Bytes as text: UTF-8 (a byte-order mark skipped), Latin-1 for the bytes that are
    not UTF-8.

    Examples
    --------
    >>> decode_text("café’s".encode("utf-8")), decode_text("café".encode("latin-1"))
    ('café’s', 'café')
    """
    return data.decode(ENCODING, errors=LATIN1_FALLBACK)


def open_text(source: Union[str, os.PathLike, io.BufferedIOBase]) -> io.TextIOWrapper:
    """Open a text file for reading, decoded by the package's one rule (see the module).

    Parameters
    ----------
    source
        A path, or a binary file object (closed with the text stream; its first bytes are
        not checked: it holds text the caller encoded).

    Raises
    ------
    OSError
        When the file cannot be opened (its ``filename`` is ``source``).
    WideTextError
        For a file in UTF-16 or UTF-32.
    """
    binary = open(source, "rb") if isinstance(source, (str, bytes, os.PathLike)) else source
    head = binary.peek(_HEAD)[:_HEAD] if binary is not source else b""
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)) or b"\0" in head:
        binary.close()
        raise WideTextError(
            "not a UTF-8 text file (it looks like UTF-16 or UTF-32: a byte-order "
            "mark or NUL bytes); save it as UTF-8 (or ASCII)"
        )
    return io.TextIOWrapper(binary, encoding=ENCODING, errors=LATIN1_FALLBACK, newline="")
