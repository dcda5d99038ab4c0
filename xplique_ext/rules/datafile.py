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

Values are checked and encoded by :mod:`~xplique_ext.rules.encoding` (the same rules for
both readers, DataFrames and Dask partitions). Text is opened by
:func:`~xplique_ext.rules.syntax.open_text`, as ``.names`` and PBM files are.
"""

from __future__ import annotations

import collections
import csv
import io
import numbers
import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Dict, Iterable, Iterator, List, Optional, Union

import numpy as np
import pandas as pd

from ..commons.parallel import usable_cores
from ..commons.params import PATH, STRING, InstanceOf, Interval, validate_params
from .dataset import Dataset
from .encoding import (
    NOT_APPLICABLE,
    NOT_APPLICABLE_CODE,
    UNKNOWN,
    UNKNOWN_CODE,
    Column,
    EncodingRefused,
    code_dtype,
    encode_distinct,
    encode_numeric_text,
    encode_values,
    label_text,
    number_rules,
)
from .errors import DataParseError
from .names import Names, read_names
from .syntax import open_text, write_text

__all__ = ["read_data", "parse_data", "write_data", "default_names_path"]

#: Bytes of whole lines the fast reader reads at once (the unit it gives up on). Not
#: ``pyarrow.csv.open_csv``: its read-ahead takes 2.6-3.9x the file at the peak where these
#: blocks take 1.6x (``benchmarks/rules_reader_blocks.py``); 1 MiB, not 2 or 4: 1.6x, 1.9x,
#: 2.3x on the 48 MB file of ``tests/rules/reader_table.py``, at the same speed.
_BLOCK_BYTES = 1 << 20
#: Blocks the fast reader reads ahead (each a table of about 1.5x the block in memory).
_AHEAD = 4
#: Records the exact reader encodes at once.
_EXACT_ROWS = 1 << 15


# -- the fast reader ----------------------------------------------------------------------
def _read_block(block: bytes, names: Names, numbers_as_text: bool):
    """A block of whole records, read by Arrow's CSV reader against the ``.names``
    schema: numbers straight into ``float64`` (``?`` read as null) or, with
    ``numbers_as_text``, as text (for ``!``); the other columns as text. No
    quote is special (a quoted value is refused later, for the exact reader)."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    keys = [str(k) for k in range(len(names.columns))]
    number = pa.string() if numbers_as_text else pa.float64()
    # other columns as text, dictionary-encoded afterwards (:func:`_encode_arrow`): Arrow's
    # CSV dictionary converter takes about twice the CPU time of text + dictionary_encode
    types = {
        key: number if attribute.is_numeric else pa.string()
        for key, attribute in zip(keys, names.columns)
    }
    return pacsv.read_csv(
        pa.py_buffer(block),
        read_options=pacsv.ReadOptions(
            column_names=keys, use_threads=False, block_size=len(block) + 1
        ),
        parse_options=pacsv.ParseOptions(quote_char=False, ignore_empty_lines=True),
        convert_options=pacsv.ConvertOptions(
            column_types=types,
            strings_can_be_null=False,
            null_values=[] if numbers_as_text else [UNKNOWN],
        ),
        # malloc's pool: freed blocks go back at once, so that the peak stays the table
        # plus the blocks being read (Arrow's own pools keep them for reuse)
        memory_pool=pa.system_memory_pool(),
    )


def _fast_parts(source, names: Names, file: str) -> Iterator[Dataset]:
    """The fast reader's data sets, block by block (:data:`_BLOCK_BYTES` of whole lines of
    a binary file); refused (``EncodingRefused``) at the first block it cannot read
    exactly.

    This thread reads the blocks; a thread per core parses and encodes them, up to
    :data:`_AHEAD` blocks ahead, delivered in order (Arrow's parser and NumPy release the
    GIL)."""
    workers = ThreadPoolExecutor(max_workers=min(_AHEAD, usable_cores()))
    ahead: collections.deque = collections.deque()
    try:
        while True:
            # blocks of :data:`_BLOCK_BYTES` and the rest of their last line
            while len(ahead) < _AHEAD and (block := source.read(_BLOCK_BYTES)):
                ahead.append(workers.submit(_block_part, block + source.readline(), names, file))
            if not ahead:
                return
            part = ahead.popleft().result()
            if part.n_examples:
                yield part
            del part
    finally:  # refused, or the caller stopped: no block is read past this one
        workers.shutdown(cancel_futures=True)


def _block_part(block: bytes, names: Names, file: str) -> Dataset:
    """A block of whole lines read by Arrow and encoded; ``EncodingRefused`` where Arrow
    cannot read it exactly."""
    import pyarrow as pa

    try:
        try:
            table = _read_block(block, names, numbers_as_text=False)
        except pa.ArrowInvalid:  # ``!`` in a number column, or an error
            table = _read_block(block, names, numbers_as_text=True)
    except (pa.ArrowException, ValueError, UnicodeError, OverflowError):
        raise EncodingRefused from None
    del block
    table = table.combine_chunks()
    return Dataset(
        names,
        {a.name: _encode_arrow(a, table.column(k).chunk(0)) for k, a in enumerate(names.columns)},
        file=file,
    )


def _encode_arrow(attribute, array) -> Column:
    """A column of the fast reader, encoded by the rules of
    :mod:`~xplique_ext.rules.encoding`; refused (``EncodingRefused``) for anything they
    would report, or a quote (only the exact reader reads quoted values)."""
    if attribute.is_numeric and array.type == "string":
        return encode_numeric_text(attribute, array)
    if not attribute.is_numeric:
        import pyarrow.compute as pc

        array = pc.dictionary_encode(array)
        categories = array.dictionary.to_pylist()
        if array.null_count or any('"' in c for c in categories):
            raise EncodingRefused
        return encode_distinct(attribute, array.indices.to_numpy(zero_copy_only=False), categories)
    values = array.to_numpy(zero_copy_only=False, writable=True)  # NaN where null (``?``)
    unknown = np.isnan(values)
    if (
        np.count_nonzero(unknown) != array.null_count  # ``nan`` written out
        or number_rules(attribute, values, unknown).mask.any()
    ):
        raise EncodingRefused
    return Column(attribute, values, None, unknown, np.zeros(len(values), dtype=bool))


# -- the exact reader ---------------------------------------------------------------------
#: The ``csv`` module's messages, in the format's words.
_CSV_ERRORS = {
    "unexpected end of data": "unterminated quoted value",
    "',' expected after '\"'": "text after a closing quote",
}


def _exact_parts(handle, names: Names, file: str, skip: int = 0) -> Iterator[Dataset]:
    """The examples of a text file after its first ``skip`` non-blank records (read
    plainly: the fast reader had them), :data:`_EXACT_ROWS` records at a time.

    The format, as Python's ``csv`` module reads it (``skipinitialspace``, ``strict``):
    lines end at ``\\n``, ``\\r\\n`` or a lone ``\\r``; a value may be quoted, a quote in a
    quoted value doubled; spaces before a value are skipped, spaces after it stripped;
    a line of blanks is skipped. Errors give the file, the record's first line and text.
    """
    number = 0  # lines read
    while skip:
        line = next(handle, None)
        if line is None:
            break
        number += 1
        if line.strip():
            skip -= 1
    held: List[str] = []  # the lines of the record being read

    def lines() -> Iterator[str]:
        for line in handle:
            held.append(line)
            yield line

    attributes = names.columns
    rows: List[List[str]] = []  # the records held, encoded :data:`_EXACT_ROWS` at a time
    line_numbers: List[int] = []  # the first line of each held record
    reader = csv.reader(lines(), skipinitialspace=True, strict=True)
    while True:
        start = number + 1
        try:
            fields = next(reader, None)
        except csv.Error as error:
            raise DataParseError(
                _CSV_ERRORS.get(str(error), str(error)),
                file=file,
                line=start,
                text=held[0].rstrip("\r\n") if held else "",
            ) from None
        if rows and (fields is None or len(rows) == _EXACT_ROWS):
            yield _encode_rows(rows, line_numbers, names, file)
            rows = []
            line_numbers = []
        if fields is None:
            return
        number += len(held)
        text = held[0].rstrip("\r\n")
        blank = not "".join(held).strip()
        held.clear()
        fields = [f.strip() for f in fields]
        if blank:
            continue
        if len(fields) != len(attributes):
            raise DataParseError(
                f"expected {len(attributes)} comma-separated values ("
                f"{', '.join(a.name for a in attributes)}), got {len(fields)}",
                file=file,
                line=start,
                text=text,
            )
        if "" in fields:
            raise DataParseError(
                f"empty value for attribute {attributes[fields.index('')].name!r} (write ? "
                "for an unknown value, ! for a not-applicable one)",
                file=file,
                line=start,
                text=text,
            )
        rows.append(fields)
        line_numbers.append(start)


def _encode_rows(
    rows: List[List[str]], line_numbers: List[int], names: Names, file: str
) -> Dataset:
    """The records ``rows``, found at ``line_numbers`` of ``file``, encoded."""
    table = np.array(rows, dtype=object).reshape(len(rows), len(names.columns))
    return Dataset(
        names,
        {
            a.name: encode_values(a, table[:, k], line_numbers, file)
            for k, a in enumerate(names.columns)
        },
        file=file,
    )


# -- both, in order -----------------------------------------------------------------------
def _parts(source: Union[str, bytes], names: Names, file: str) -> Iterator[Dataset]:
    """The examples of a file (its path, or its bytes), part by part: the fast reader's,
    then the exact reader's from the first record the fast reader did not deliver."""
    if not names.columns:
        raise ValueError(
            "`names` must declare at least one column read from the file (not "
            "derived with `:=`), got none: every line would be dropped"
        )
    done = 0  # a file in UTF-16 or UTF-32 is refused by open_text, before any block
    with open_text(io.BytesIO(source) if isinstance(source, bytes) else source) as handle:
        binary = handle.buffer
        try:
            for part in _fast_parts(binary, names, file):
                done += part.n_examples
                yield part
            return
        except EncodingRefused:
            if not binary.seekable():  # the exact reader starts again from the start
                raise DataParseError(
                    "holds a value only the exact reader reads (quoted, "
                    "Latin-1...), which cannot be read again from a pipe: "
                    "save it to a file",
                    file=file,
                ) from None
            binary.seek(0)  # the text stream has read nothing yet
        yield from _exact_parts(handle, names, file, skip=done)


def _chunks(parts: Iterable[Dataset], names: Names, file: str, size: int) -> Iterator[Dataset]:
    """Consecutive data sets of exactly ``size`` examples (the last one may be shorter)."""
    pending: List[Dataset] = []  # the examples held, ``held`` of them
    held = 0
    for part in parts:
        start = 0
        while held + part.n_examples - start >= size:
            stop = start + size - held
            yield _concat(pending + [part._select(slice(start, stop))], names, file, size)
            pending = []
            held = 0
            start = stop
        if start < part.n_examples:
            pending.append(part._select(slice(start, part.n_examples)))
            held += part.n_examples - start
    if pending:
        yield _concat(pending, names, file, size)


def _concat(parts: Iterable[Dataset], names: Names, file: str, capacity: int) -> Dataset:
    """One data set from consecutive parts of at most ``capacity`` examples in all, written
    into arrays allocated once (pages never written take no memory), each part freed once
    copied: the peak is the table plus one part, not twice the table."""
    columns: Dict[str, _Joined] = {}
    filled = 0
    for part in parts:
        for name, column in part.columns.items():
            if name not in columns:
                columns[name] = _Joined(column, capacity)
            columns[name].add(column, filled)
        filled += part.n_examples
        del part
    if not columns:
        return _encode_rows([], [], names, file)
    return Dataset(names, {k: out.finish(filled) for k, out in columns.items()}, file=file)


class _Joined:
    """One column of :func:`_concat`. The codes of an open domain go through the
    categories met so far, and are renumbered in sorted order at the end."""

    def __init__(self, column: Column, capacity: int) -> None:
        self.attribute = column.attribute
        self.categories = column.categories
        self.met: Dict[str, int] = {}  # category -> its code in :attr:`values`, in order met
        open_domain = column.is_coded and column.attribute.values is None
        self.open = open_domain and column.attribute.type != "boolean"
        self.values = np.empty(capacity, np.int32 if self.open else column.values.dtype)
        self.unknown = np.zeros(capacity, bool)
        self.not_applicable = np.zeros(capacity, bool)

    def add(self, column: Column, start: int) -> None:
        stop = start + len(column.values)
        values = column.values
        if self.open:
            codes = [self.met.setdefault(c, len(self.met)) for c in column.categories]
            codes += [NOT_APPLICABLE_CODE, UNKNOWN_CODE]  # the codes -2 and -1 stay
            values = np.array(codes, np.int32)[values.astype(np.intp)]
        self.values[start:stop] = values
        if column.has_unknown:
            self.unknown[start:stop] = column.unknown
        if column.has_not_applicable:
            self.not_applicable[start:stop] = column.not_applicable

    def finish(self, n: int) -> Column:
        values = self.values[:n]
        if self.open:
            self.categories = tuple(sorted(self.met))
            rank = {c: i for i, c in enumerate(self.categories)}
            lookup = np.array([rank[c] for c in self.met] + [NOT_APPLICABLE_CODE, UNKNOWN_CODE])
            values = lookup[values.astype(np.intp)].astype(code_dtype(len(self.categories)))
        return Column(
            self.attribute, values, self.categories, self.unknown[:n], self.not_applicable[:n]
        )


def _records_bound(size: int, names: Names) -> int:
    """An upper bound of the records in ``size`` bytes: a record holds at least one
    character per value, the commas between them and a line end."""
    return size // (2 * max(1, len(names.columns))) + 1


# -- public -------------------------------------------------------------------------------
@validate_params(
    {"text": [STRING], "names": [InstanceOf(Names, description="a Names object")], "file": [STRING]}
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
    raw = text.encode("utf-8", errors="surrogatepass")
    return _concat(_parts(raw, names, file), names, file, _records_bound(len(raw), names))


@validate_params(
    {
        "path": [PATH],
        "names": [
            InstanceOf(Names, str, os.PathLike, description="a Names object or a path"),
            None,
        ],
        "chunksize": [Interval(numbers.Integral, 1, None), None],
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
    nominal values (``tests/rules/test_datafile.py``): the encoded table,
    allocated once (8 bytes per number, 1 per nominal value, 1 for the unknown mask; the
    not-applicable mask takes memory only where there are such values), plus the blocks
    being read (parsed and encoded by one thread per core, up to 4 blocks ahead).

    Examples
    --------
    >>> from xplique_ext.rules import example_path
    >>> data = read_data(example_path("voyage.test"))
    >>> data.n_examples, int(data.column("humidity").unknown.sum())
    (15, 2)
    >>> [chunk.n_examples for chunk in read_data(example_path("voyage.test"), chunksize=6)]
    [6, 6, 3]
    """
    file = os.fspath(path)
    # a missing data file fails now: not at the first chunk, nor as its missing .names
    size = os.path.getsize(file)
    names = names if isinstance(names, Names) else read_names(names or default_names_path(path))
    if chunksize is not None:
        return _chunks(_parts(file, names, file), names, file, int(chunksize))
    if not os.path.isfile(file):  # a pipe: no size to bound the table, its parts counted first
        parts = list(_parts(file, names, file))
        return _concat(parts, names, file, sum(part.n_examples for part in parts))
    return _concat(_parts(file, names, file), names, file, _records_bound(size, names))


def default_names_path(data_path: Union[str, os.PathLike]) -> str:
    """``std_info.pl``'s default: the data file name without extension, plus ``.names``."""
    return os.path.splitext(os.fspath(data_path))[0] + ".names"


@validate_params({"dataset": [InstanceOf(Dataset, description="a Dataset")], "path": [PATH, None]})
def write_data(dataset: Dataset, path: Union[str, os.PathLike, None] = None) -> str:
    """Write examples as ``.data`` text (to ``path`` when given); returns the text."""
    columns = []
    for attribute in dataset.names.columns:
        if attribute.name in dataset.columns:
            column = dataset.columns[attribute.name]
            number = column.categories is None
            flags = zip(column.decoded(None), column.unknown, column.not_applicable)
            columns.append(
                [
                    _written_value(attribute.type, value, number, unknown, not_applicable)
                    for value, unknown, not_applicable in flags
                ]
            )
    text = "".join(",".join(column[k] for column in columns) + "\n" for k in range(len(dataset)))
    if path is not None:
        write_text(path, text)
    return text


def _written_value(kind: str, value: Any, number: bool, unknown: bool, not_applicable: bool) -> str:
    """A value as written in a ``.data`` file, ``!`` or ``?`` where it is missing."""
    if not_applicable:
        return NOT_APPLICABLE
    if unknown:
        return UNKNOWN
    return _format_value(kind, value, number)


def _format_value(kind: str, value: Any, number: bool) -> str:
    """A value as written in a ``.data`` file (numbers, dates and times in their format;
    quoted when needed to read back the same)."""
    if number and kind == "date":
        return (pd.Timestamp("1970-01-01") + pd.Timedelta(days=value)).strftime("%Y/%m/%d")
    if number and kind == "time":
        whole = int(round(value))
        return f"{whole // 3600:02d}:{whole % 3600 // 60:02d}:{whole % 60:02d}"
    text = label_text(float(value)) if number else str(value)
    special = text in (UNKNOWN, NOT_APPLICABLE) or text != text.strip()
    if special or any(c in text for c in ',"\n\r'):
        return '"' + text.replace('"', '""') + '"'
    return text
