"""Reading and writing ``.data`` files (Fig. 5 of the report).

A ``.data`` file holds one example per line, its values separated by commas in the order
of the ``.names`` declarations. ``?`` marks an *unknown* value and ``!`` a
*not-applicable* one (section 2.3 of the report). Values may be quoted with ``"`` (to hold
commas, or new lines for ``string`` attributes). Blank lines are skipped.

Two readers, one format:

- the **fast reader**, Arrow's CSV reader (``pyarrow.csv.read_csv``) driven by the
  ``.names`` schema, reads clean files, 1 MiB of whole lines at a time: no quote, every
  record complete, every value valid. It decides nothing on its own: at the first block it
  cannot read exactly (a quote, a wrong number of fields, an empty or invalid value, a
  text that is not UTF-8), it stops;
- the **exact reader**, Python's ``csv`` module over the text, defines the format and goes
  on from the first record the fast reader did not deliver. It reports the first error
  with the file, the line, its text and the attribute.

Values are checked and encoded by :mod:`~xplique_ext.rules.dataset` (the same rules for
both readers, DataFrames and Dask partitions). Text is opened by
:func:`~xplique_ext.rules.syntax.open_text`, as ``.names`` and PBM files are.
"""

from __future__ import annotations

import csv
import io
import os
from typing import Any, Dict, Iterator, List, Optional, Union

import numpy as np
import pandas as pd

from ..commons.params import InstanceOf, validate_params
from .dataset import (
    _NA_CODE,
    _UNKNOWN_CODE,
    NOT_APPLICABLE,
    UNKNOWN,
    Column,
    Dataset,
    _code_dtype,
    _encode,
    _encode_distinct,
    _encode_numeric_text,
    _LineNeeded,
    _number_rules,
    _number_text,
)
from .errors import DataParseError
from .names import Names
from .syntax import open_text
from .validation import PATH, TEXT

__all__ = ["read_data", "parse_data", "write_data", "default_names_path"]

#: Bytes of whole lines the fast reader reads at once (the unit it gives up on). Not
#: ``pyarrow.csv.open_csv``: its read-ahead takes 2.6-3.9x the file at the peak where these
#: blocks take 1.6x (``benchmarks/rules_reader_blocks.py``); 1 MiB, not 2 or 4: 1.6x, 1.9x,
#: 2.3x on the 48 MB file of ``tests/rules/test_rules_reader_memory.py``, at the same speed.
_BLOCK_BYTES = 1 << 20
#: Records the exact reader encodes at once.
_EXACT_ROWS = 1 << 15
#: ``(pyarrow, pyarrow.csv)`` once imported; set it to False to read with the exact reader
#: only.
_ARROW: Any = None


class _GiveUp(Exception):
    """Internal: the fast reader cannot read a block exactly (the exact reader goes on)."""


# -- the fast reader ----------------------------------------------------------------------
def _arrow():
    global _ARROW
    if _ARROW is None:
        import pyarrow
        import pyarrow.csv

        _ARROW = (pyarrow, pyarrow.csv)
    return _ARROW or None


def _read_block(block: bytes, names: Names, numbers_as_text: bool):
    """A block of whole records, read by Arrow's CSV reader against the ``.names``
    schema: numbers straight into ``float64`` (``?`` read as null) or, with
    ``numbers_as_text``, as text (for ``!``); the other columns dictionary-encoded."""
    pa, pacsv = _arrow()
    keys = [str(k) for k in range(len(names.columns))]
    number = pa.string() if numbers_as_text else pa.float64()
    types = {
        key: number if attribute.is_numeric else pa.dictionary(pa.int32(), pa.string())
        for key, attribute in zip(keys, names.columns)
    }
    return pacsv.read_csv(
        pa.py_buffer(block),
        read_options=pacsv.ReadOptions(
            column_names=keys, use_threads=False, block_size=len(block) + 1
        ),
        parse_options=pacsv.ParseOptions(
            delimiter=",",
            quote_char=False,
            double_quote=False,
            escape_char=False,
            newlines_in_values=False,
            ignore_empty_lines=True,
        ),
        convert_options=pacsv.ConvertOptions(
            column_types=types,
            null_values=[] if numbers_as_text else [UNKNOWN],
            strings_can_be_null=False,
            quoted_strings_can_be_null=False,
            check_utf8=True,
        ),
        # malloc's pool: freed blocks go back at once, so that the peak stays the table
        # plus the block being read (Arrow's own pools keep them for reuse)
        memory_pool=pa.system_memory_pool(),
    )


def _fast_parts(source, names: Names, file: str) -> Iterator[Dataset]:
    """The fast reader's data sets, block by block (:data:`_BLOCK_BYTES` of whole lines of
    a binary file); :class:`_GiveUp` at the first block it cannot read exactly."""
    pa, _ = _arrow()
    while True:
        block = source.read(_BLOCK_BYTES)
        if not block:
            return
        block += source.readline()
        try:
            try:
                table = _read_block(block, names, numbers_as_text=False)
            except pa.ArrowInvalid:  # ``!`` in a number column, or an error
                table = _read_block(block, names, numbers_as_text=True)
        except (pa.ArrowException, ValueError, UnicodeError, OverflowError):
            raise _GiveUp from None
        del block
        if table.num_rows:
            yield _encode_table(table.combine_chunks(), names, file)
        del table


def _encode_table(table, names: Names, file: str) -> Dataset:
    """An Arrow table of the fast reader, encoded by the rules of
    :mod:`~xplique_ext.rules.dataset`; :class:`_GiveUp` for anything they would report,
    or a quote (only the exact reader reads quoted values)."""
    if table.num_columns != len(names.columns):
        raise _GiveUp
    columns: Dict[str, Column] = {}
    n = table.num_rows
    try:
        for k, attribute in enumerate(names.columns):
            array = table.column(k).chunk(0) if table.column(k).num_chunks else None
            if array is None or len(array) != n:
                raise _GiveUp
            if attribute.is_numeric and array.type == _arrow()[0].string():
                columns[attribute.name] = _encode_numeric_text(attribute, array)
            elif attribute.is_numeric:
                columns[attribute.name] = _encode_numbers(attribute, array)
            else:
                categories = array.dictionary.to_pylist()
                if array.null_count or any('"' in c for c in categories):
                    raise _GiveUp
                codes = array.indices.to_numpy(zero_copy_only=False)
                columns[attribute.name] = _encode_distinct(attribute, codes, categories)
    except (_LineNeeded, DataParseError):
        raise _GiveUp from None
    return Dataset(names, columns, file=file)


def _encode_numbers(attribute, array) -> Column:
    """A ``float64`` column of the fast reader (null where ``?``)."""
    values = array.to_numpy(zero_copy_only=False)  # NaN where null
    if not values.flags.writeable:
        values = values.copy()
    unknown = np.isnan(values)
    if int(np.count_nonzero(unknown)) != array.null_count:  # ``nan`` written out
        raise _GiveUp
    if _number_rules(attribute, values, unknown)[0] is not None:
        raise _GiveUp
    return Column(attribute, values, None, unknown, np.zeros(len(values), dtype=bool))


# -- the exact reader ---------------------------------------------------------------------
class _Lines:
    """The lines of a text file (new lines kept), remembering those of the current
    record, for messages."""

    def __init__(self, handle) -> None:
        self.handle = handle
        self.held: List[str] = []

    def __iter__(self) -> _Lines:
        return self

    def __next__(self) -> str:
        line = next(self.handle)
        self.held.append(line)
        return line


#: The ``csv`` module's messages, in the format's words.
_CSV_ERRORS = {
    "unexpected end of data": "unterminated quoted value",
    "',' expected after '\"'": "text after a closing quote",
}


def _records(handle, file: str, skip: int = 0) -> Iterator[tuple]:
    """``(line number, fields, text of the line)`` of every non-blank record of a text
    file, after the first ``skip`` ones (read plainly: the fast reader had them).

    The format, as Python's ``csv`` module reads it (``skipinitialspace``, ``strict``):
    lines end at ``\\n``, ``\\r\\n`` or a lone ``\\r``; a value may be quoted, a quote in a
    quoted value doubled; spaces before a value are skipped, spaces after it stripped;
    a line of blanks is skipped.
    """
    number = 0
    while skip:
        line = next(handle, None)
        if line is None:
            return
        number += 1
        skip -= bool(line.strip())
    lines = _Lines(handle)
    reader = csv.reader(lines, skipinitialspace=True, strict=True)
    while True:
        try:
            fields = next(reader)
        except StopIteration:
            return
        except csv.Error as error:
            message = _CSV_ERRORS.get(str(error), str(error))
            text = lines.held[0] if lines.held else ""
            raise DataParseError(
                message, file=file, line=number + 1, text=text.rstrip("\r\n")
            ) from None
        text = lines.held[0].rstrip("\r\n")
        start, number = number + 1, number + len(lines.held)
        blank = not "".join(lines.held).strip()
        lines.held = []
        if not blank:
            yield start, [f.strip() for f in fields], text


def _exact_parts(handle, names: Names, file: str, skip: int = 0) -> Iterator[Dataset]:
    """The examples of a text file, :data:`_EXACT_ROWS` records at a time, read exactly."""
    attributes = names.columns
    width = len(attributes)
    numbers: List[int] = []
    rows: List[List[str]] = []
    for number, fields, text in _records(handle, file, skip):
        if len(fields) != width:
            raise DataParseError(
                f"expected {width} comma-separated values "
                f"({', '.join(a.name for a in attributes)}), got {len(fields)}",
                file=file,
                line=number,
                text=text,
            )
        if "" in fields:
            raise DataParseError(
                f"empty value for attribute {attributes[fields.index('')].name!r} "
                "(write ? for an unknown value, ! for a not-applicable one)",
                file=file,
                line=number,
                text=text,
            )
        numbers.append(number)
        rows.append(fields)
        if len(rows) == _EXACT_ROWS:
            yield _encode_rows(rows, numbers, names, file)
            rows, numbers = [], []
    if rows:
        yield _encode_rows(rows, numbers, names, file)


def _encode_rows(rows: List[List[str]], numbers: List[int], names: Names, file: str) -> Dataset:
    table = np.empty((len(rows), len(names.columns)), dtype=object)
    if rows:
        table[:] = rows
    lines = np.asarray(numbers, dtype=np.int64)
    columns = {
        a.name: _encode(a, table[:, k], lines, file, "line") for k, a in enumerate(names.columns)
    }
    return Dataset(names, columns, file=file)


# -- both, in order -----------------------------------------------------------------------
def _parts(source: Union[str, bytes], names: Names, file: str) -> Iterator[Dataset]:
    """The examples of a file (its path, or its bytes), part by part: the fast reader's,
    then the exact reader's from the first record the fast reader did not deliver."""
    done = 0
    if _arrow() is not None:
        with io.BytesIO(source) if isinstance(source, bytes) else open(source, "rb") as binary:
            try:
                for part in _fast_parts(binary, names, file):
                    done += part.n_examples
                    yield part
                return
            except _GiveUp:
                pass
    with open_text(io.BytesIO(source) if isinstance(source, bytes) else source) as handle:
        yield from _exact_parts(handle, names, file, skip=done)


def _chunks(source: str, names: Names, file: str, size: int) -> Iterator[Dataset]:
    """Consecutive data sets of exactly ``size`` examples (the last one may be shorter)."""
    pending: List[Dataset] = []
    held = 0
    for part in _parts(source, names, file):
        start = 0
        while held + part.n_examples - start >= size:
            stop = start + size - held
            pending.append(part._slice(start, stop))
            yield _assemble(pending, names, file)
            pending, held, start = [], 0, stop
        if start < part.n_examples:
            pending.append(part._slice(start, part.n_examples, copy=start > 0))
            held += part.n_examples - start
        del part
    if pending:
        yield _assemble(pending, names, file)


def _assemble(parts, names: Names, file: str, size_hint: int = 0) -> Dataset:
    """One data set from consecutive parts, written into arrays allocated once (the peak
    is the table plus one part, not twice the table). Open nominal domains are merged.

    The arrays are sized from the first part's bytes per row and ``size_hint`` (the
    file's size; with a margin) and grow if the file turns out denser."""
    columns: Dict[str, Dict[str, Any]] = {}
    filled = capacity = 0
    for part in parts:
        m = part.n_examples
        if not columns:
            per_row = _BLOCK_BYTES / max(m, 1)
            capacity = max(int(1.25 * size_hint / per_row), 0) + m + 1024
        elif filled + m > capacity:
            capacity = max(2 * capacity, filled + m)
            for out in columns.values():
                for key in ("values", "unknown", "not_applicable"):
                    grown = np.zeros(capacity, dtype=out[key].dtype)
                    grown[:filled] = out[key][:filled]
                    out[key] = grown
        for name, column in part.columns.items():
            out = columns.get(name) or _new_output(columns, name, column, capacity)
            values = column.values
            if not out["fixed"]:  # open domain: codes into the categories met so far
                index = out["index"]
                lookup = [index.setdefault(c, len(index)) for c in column.categories]
                values = np.array(lookup + [_NA_CODE, _UNKNOWN_CODE], dtype=np.int32)[
                    values.astype(np.int64)
                ]
            out["values"][filled : filled + m] = values
            if column.has_unknown:
                out["unknown"][filled : filled + m] = column.unknown
            if column.has_not_applicable:
                out["not_applicable"][filled : filled + m] = column.not_applicable
        filled += m
        del part
    if not columns:
        return _encode_rows([], [], names, file)
    return Dataset(names, {k: _finish(out, filled) for k, out in columns.items()}, file=file)


def _new_output(columns: dict, name: str, column: Column, capacity: int) -> dict:
    fixed = column.categories is None or column.attribute.values is not None
    fixed = fixed or column.attribute.type == "boolean"
    out = columns[name] = {
        "column": column,
        "fixed": fixed,
        "index": {},
        "values": np.empty(capacity, dtype=column.values.dtype if fixed else np.int32),
        # zeros: pages never written (no value missing) take no memory
        "unknown": np.zeros(capacity, dtype=bool),
        "not_applicable": np.zeros(capacity, dtype=bool),
    }
    return out


def _finish(out: dict, filled: int) -> Column:
    values = out["values"][:filled]
    categories = out["column"].categories
    if not out["fixed"]:
        met = list(out["index"])
        categories = tuple(sorted(met))
        rank = {c: i for i, c in enumerate(categories)}
        lookup = np.array([rank[c] for c in met] + [_NA_CODE, _UNKNOWN_CODE])
        values = lookup[values.astype(np.int64)].astype(_code_dtype(len(categories)))
    column = Column(
        out["column"].attribute,
        values,
        categories,
        out["unknown"][:filled],
        out["not_applicable"][:filled],
    )
    out.clear()
    return column


def _parse_exact(text: str, names: Names, file: str = "<string>") -> Dataset:
    """``text`` read by the exact reader alone (the tests' reference)."""
    handle = io.StringIO(text.lstrip("\ufeff"), newline="")
    return _assemble(_exact_parts(handle, names, file), names, file)


# -- public -------------------------------------------------------------------------------
@validate_params(
    {
        "text": [TEXT],
        "names": [InstanceOf(Names, description="a Names object")],
        "file": [TEXT],
    }
)
def parse_data(text: str, names: Names, file: str = "<string>") -> Dataset:
    """Read examples from the text of a ``.data`` file.

    Parameters
    ----------
    text
        The file content.
    names
        The declarations (column order, types and domains).
    file
        A name for the source, used in messages.

    Raises
    ------
    DataParseError
        For a record with the wrong number of fields, an empty field, a value outside a
        nominal domain, a non-numeric value of a numeric attribute, an invalid date, time
        or boolean, or an unterminated quote; the message gives file, line and text.

    Notes
    -----
    See :func:`read_data` for how the text is read.
    """
    if not isinstance(text, str):
        raise TypeError(f"`text` must be a string, got {type(text).__name__}")
    if not isinstance(names, Names):
        raise TypeError(f"`names` must be a Names object, got {type(names).__name__}")
    raw = text.encode("utf-8", errors="surrogatepass")
    return _assemble(_parts(raw, names, file), names, file, len(raw))


@validate_params(
    {
        "path": [PATH],
        "names": [
            InstanceOf(Names, str, os.PathLike, description="a Names object or a path"),
            None,
        ],
        "chunksize": "no_validation",  # a positive integer or None: checked below
    }
)
def read_data(
    path: Union[str, os.PathLike],
    names: Union[Names, str, os.PathLike, None] = None,
    *,
    chunksize: Optional[int] = None,
) -> Union[Dataset, Iterator[Dataset]]:
    """Read a ``.data`` file, whole or in chunks.

    Parameters
    ----------
    path
        The data file.
    names
        A :class:`Names` object or the path of a ``.names`` file; by default the data
        file's name with its extension replaced by ``.names`` (``std_info.pl``'s rule).
    chunksize
        When given, an iterator of :class:`Dataset` of ``chunksize`` examples each (the
        last one may be shorter) is returned instead, so that a file of any size is read in
        bounded memory; pass it to :func:`~xplique_ext.rules.evaluate_rules` as it is.

    Returns
    -------
    Dataset or iterator of Dataset

    Raises
    ------
    DataParseError
        As :func:`parse_data`: the message gives file, line, text and the attribute.

    Notes
    -----
    The file is read by Arrow's CSV reader 1 MiB of whole lines at a time, driven by the
    ``.names`` schema: numbers are parsed by Arrow into ``float64`` arrays (as text where
    a block holds ``!``, to keep ``?`` and ``!`` apart), and every other column is
    dictionary-encoded, its distinct values checked against the declarations once. At
    the first block Arrow cannot read exactly as the format says (a quoted value,
    a wrong number of fields, an empty or invalid value, a text that is not UTF-8), the
    exact reader (Python's ``csv`` module) goes on from that block's first record, and
    reports the first error with the file, the line, its text and the attribute. Text is
    UTF-8 (a byte-order mark is skipped), bytes that are not UTF-8 are read as Latin-1.
    Peak memory stays below twice the size of the file for tables of numbers and short
    nominal values (``tests/rules/test_rules_reader_memory.py``): the encoded table,
    allocated once (8 bytes per number, 1 per nominal value, 1 for the unknown mask; the
    not-applicable mask takes memory only where there are such values), plus the block
    being parsed.

    Examples
    --------
    >>> from xplique_ext.rules import example_path
    >>> data = read_data(example_path("voyage.test"))
    >>> data.n_examples, int(data.column("humidity").unknown.sum())
    (15, 2)
    >>> [chunk.n_examples for chunk in read_data(example_path("voyage.test"), chunksize=6)]
    [6, 6, 3]
    """
    from .names import read_names

    if chunksize is not None:
        if isinstance(chunksize, bool) or not isinstance(chunksize, (int, np.integer)):
            raise TypeError(f"`chunksize` must be a positive integer, got {chunksize!r}")
        if chunksize < 1:
            raise ValueError(f"`chunksize` must be a positive integer, got {chunksize}")
    if names is None:
        names = default_names_path(path)
    if not isinstance(names, Names):
        names = read_names(names)
    file = os.fspath(path)
    size = os.path.getsize(file)  # fails now, not at the first chunk, if the file is missing
    if chunksize is not None:
        return _chunks(file, names, file, int(chunksize))
    return _assemble(_parts(file, names, file), names, file, size)


def default_names_path(data_path: Union[str, os.PathLike]) -> str:
    """``std_info.pl``'s default: the data file name without extension, plus ``.names``."""
    root, _ = os.path.splitext(os.fspath(data_path))
    return root + ".names"


def _format_value(value: Any) -> str:
    text = str(value)
    if (
        text in (UNKNOWN, NOT_APPLICABLE)
        or any(c in text for c in ',"\n\r')
        or text != text.strip()
    ):
        return '"' + text.replace('"', '""') + '"'
    return text


@validate_params({"dataset": [InstanceOf(Dataset, description="a Dataset")], "path": [PATH, None]})
def write_data(dataset: Dataset, path: Union[str, os.PathLike, None] = None) -> str:
    """Write examples as ``.data`` text (to ``path`` when given); returns the text."""
    frame_columns = []
    for attribute in dataset.names.columns:
        if attribute.name not in dataset.columns:
            continue
        column = dataset.columns[attribute.name]
        values = column.decoded(None)
        if column.categories is None:
            values = np.array([_format_number(attribute.type, v) for v in values], dtype=object)
        texts = np.array([_format_value(v) if v is not None else "" for v in values], dtype=object)
        texts[column.unknown] = UNKNOWN
        texts[column.not_applicable] = NOT_APPLICABLE
        frame_columns.append(texts)
    lines = [",".join(col[k] for col in frame_columns) for k in range(dataset.n_examples)]
    text = "\n".join(lines) + ("\n" if lines else "")
    if path is not None:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
    return text


def _format_number(kind: str, value: Any) -> Optional[str]:
    if value is None:
        return None
    if kind == "date":
        return (pd.Timestamp("1970-01-01") + pd.Timedelta(days=value)).strftime("%Y/%m/%d")
    if kind == "time":
        whole = int(round(value))
        return f"{whole // 3600:02d}:{whole % 3600 // 60:02d}:{whole % 60:02d}"
    return _number_text(float(value))
