"""Examples to evaluate rules on: ``.data`` files (Fig. 5 of the report) or DataFrames.

A ``.data`` file holds one example per line, its values separated by commas in the order
of the ``.names`` declarations. ``?`` marks an *unknown* value and ``!`` a
*not-applicable* one (section 2.3 of the report). Values may be quoted with ``"`` (to hold
commas, or new lines for ``string`` attributes). Blank lines are skipped.

Whatever the source, a :class:`Dataset` stores every attribute column in an encoded form
made for vectorised rule evaluation: ``float64`` values for ``integer``, ``real``,
``date`` (days since 1970-01-01) and ``time`` (seconds) attributes, integer codes for the
others, plus the masks of unknown and not-applicable values.
"""

from __future__ import annotations

import collections
import concurrent.futures
import csv
import io
import os
import warnings
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple, Union

import numpy as np
import pandas as pd

from .errors import DataParseError
from .names import Attribute, Names

__all__ = ["Column", "Dataset", "read_data", "read_data_dask", "parse_data", "write_data"]

UNKNOWN = "?"
NOT_APPLICABLE = "!"
_UNKNOWN_CODE = -1
_NA_CODE = -2
_TRUE = {"true", "t", "yes", "y", "1"}
_FALSE = {"false", "f", "no", "n", "0"}


@dataclass
class Column:
    """One encoded attribute column.

    Attributes
    ----------
    attribute
        The declaration.
    values
        ``float64`` values (NaN where missing) for numeric-like attributes, integer codes
        into :attr:`categories` otherwise (-1 unknown, -2 not applicable).
    categories
        The category of each code (``None`` for numeric-like columns).
    unknown, not_applicable
        Boolean masks ``(N,)`` of ``?`` and ``!`` values.
    """

    attribute: Attribute
    values: np.ndarray
    categories: Optional[Tuple[str, ...]]
    unknown: np.ndarray
    not_applicable: np.ndarray

    def __post_init__(self) -> None:
        self.unknown_index = np.flatnonzero(self.unknown)
        self.has_unknown = self.unknown_index.size > 0
        self.has_not_applicable = bool(self.not_applicable.any())
        self._valid: Optional[np.ndarray] = None
        self._code_of = (
            {c: i for i, c in enumerate(self.categories)} if self.categories is not None else None
        )

    @property
    def valid(self) -> np.ndarray:
        """Mask of the known and applicable values (computed when first needed, so that
        reading a file does not hold it)."""
        if self._valid is None:
            self._valid = ~(self.unknown | self.not_applicable)
        return self._valid

    @property
    def is_coded(self) -> bool:
        return self.categories is not None

    def code(self, value: str) -> int:
        """Code of a category; -3 (matches nothing) for a value never seen."""
        return self._code_of.get(value, -3)

    def decoded(self, missing: Any = None) -> np.ndarray:
        """Object array of the values, ``missing`` where unknown or not applicable."""
        if self.categories is None:
            out = self.values.astype(object)
        else:
            lookup = np.asarray(list(self.categories) + [missing, missing], dtype=object)
            out = lookup[self.values.astype(np.int64)]  # -1, -2 index the two missing slots
        out[~self.valid] = missing
        return out

    def take(self, index: np.ndarray) -> Column:
        return Column(
            self.attribute,
            self.values[index],
            self.categories,
            self.unknown[index],
            self.not_applicable[index],
        )


class Dataset:
    """Examples, encoded for rule evaluation.

    Build it with :func:`read_data`, :func:`parse_data`, :meth:`Dataset.from_frame` or
    :meth:`Dataset.from_arrays`.

    Parameters
    ----------
    names
        The declarations.
    columns
        One :class:`Column` per attribute in ``names.columns`` (the class column may be
        missing for unlabelled data).
    file
        Where the examples come from (for messages and the PBM ``Data File:`` line).

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"x": [1.0, None, 3.0], "y": ["a", "b", "?"]})
    >>> data = Dataset.from_frame(frame, class_name="y")
    >>> data.n_examples, data.column("x").unknown.tolist(), data.labels().tolist()
    (3, [False, True, False], ['a', 'b', None])
    """

    def __init__(
        self, names: Names, columns: Dict[str, Column], file: Optional[str] = None
    ) -> None:
        self.names = names
        self.columns = dict(columns)
        self.file = file
        sizes = {len(c.values) for c in self.columns.values()}
        if len(sizes) > 1:
            raise ValueError(f"all columns must have the same length, got {sorted(sizes)}")
        self.n_examples = sizes.pop() if sizes else 0
        for attribute in names.columns:
            if attribute.name not in self.columns and attribute.name != names.class_name:
                raise ValueError(f"no column for attribute {attribute.name!r}")

    def __len__(self) -> int:
        return self.n_examples

    def __repr__(self) -> str:
        return (
            f"Dataset(n_examples={self.n_examples}, columns={list(self.columns)!r}, "
            f"class_name={self.names.class_name!r})"
        )

    @property
    def has_labels(self) -> bool:
        """Whether the class column is present."""
        return self.names.class_name is not None and self.names.class_name in self.columns

    def column(self, name: str) -> Column:
        """The encoded column of an attribute."""
        try:
            return self.columns[name]
        except KeyError:
            raise KeyError(f"no column {name!r} in the data set") from None

    def labels(self, missing: Any = None) -> np.ndarray:
        """The class of every example: an object array of labels (``missing`` where the
        class is unknown) or, for a numeric class, a float array (NaN where unknown)."""
        if not self.has_labels:
            raise ValueError("the data set has no class column")
        column = self.columns[self.names.class_name]
        if column.categories is None:
            values = column.values.copy()
            return values
        return column.decoded(missing)

    def take(self, index: Union[np.ndarray, Sequence[int]]) -> Dataset:
        """The examples at ``index`` (in that order)."""
        index = np.asarray(index)
        return Dataset(self.names, {k: c.take(index) for k, c in self.columns.items()}, self.file)

    def _select(self, index: np.ndarray, names: Sequence[str]) -> Dataset:
        """Internal: the examples at ``index``, restricted to the columns ``names``."""
        out = Dataset.__new__(Dataset)
        out.names = self.names
        out.columns = {k: self.columns[k].take(index) for k in names}
        out.file = self.file
        out.n_examples = len(index)
        return out

    def _slice(self, start: int, stop: int, copy: bool = False) -> Dataset:
        """Internal: examples ``start:stop`` (views unless ``copy``)."""

        def cut(array: np.ndarray) -> np.ndarray:
            return array[start:stop].copy() if copy else array[start:stop]

        out = Dataset.__new__(Dataset)
        out.names = self.names
        out.columns = {
            k: Column(
                c.attribute, cut(c.values), c.categories, cut(c.unknown), cut(c.not_applicable)
            )
            for k, c in self.columns.items()
        }
        out.file = self.file
        out.n_examples = max(0, min(stop, self.n_examples) - start)
        return out

    def to_frame(self, missing: str = UNKNOWN) -> pd.DataFrame:
        """The examples as a DataFrame, with ``?``/``!`` strings where values are missing
        (pass ``missing=None`` to get NaN/None for both)."""
        data = {}
        for name, column in self.columns.items():
            if missing is None:
                data[name] = column.decoded(None)
                if column.categories is None:
                    data[name] = data[name].astype(float)
            else:
                values = column.decoded(None)
                values[column.unknown] = UNKNOWN
                values[column.not_applicable] = NOT_APPLICABLE
                data[name] = values
        return pd.DataFrame(data)

    # -- constructors ---------------------------------------------------------------------
    @classmethod
    def from_frame(
        cls,
        frame: pd.DataFrame,
        names: Optional[Names] = None,
        *,
        class_name: Optional[str] = None,
    ) -> Dataset:
        """Examples from a DataFrame, one column per attribute.

        Missing values are NaN/None or the strings ``"?"`` (unknown) and ``"!"`` (not
        applicable). With ``names``, the columns are checked against the declarations
        (every feature column present, no extra column, nominal values in their domain,
        numbers where numbers are declared); the class column may be absent. Without
        ``names``, declarations are inferred with :meth:`Names.infer`.

        Raises
        ------
        DataParseError
            For a value outside its nominal domain or a non-numeric value of a numeric
            attribute (the message names the column and row).
        """
        if not isinstance(frame, pd.DataFrame):
            raise TypeError(f"`frame` must be a pandas DataFrame, got {type(frame).__name__}")
        if names is None:
            names = Names.infer(frame, class_name=class_name)
        elif class_name is not None and class_name != names.class_name:
            raise ValueError(
                f"`class_name` {class_name!r} differs from the class of `names` "
                f"({names.class_name!r})"
            )
        if not isinstance(names, Names):
            raise TypeError(f"`names` must be a Names object, got {type(names).__name__}")
        expected = names.column_names
        extra = [c for c in frame.columns if c not in expected]
        if extra:
            raise ValueError(f"`frame` has columns not declared in `names`: {extra}")
        missing = [c for c in expected if c not in frame.columns and c != names.class_name]
        if missing:
            raise ValueError(f"`frame` lacks the declared columns {missing}")
        rows = np.arange(1, len(frame) + 1)
        columns = {}
        for attribute in names.columns:
            if attribute.name in frame.columns:
                columns[attribute.name] = _encode_series(attribute, frame[attribute.name], rows)
        return cls(names, columns, file=None)

    @classmethod
    def from_arrays(
        cls,
        features: Any,
        labels: Any = None,
        *,
        feature_names: Optional[Sequence[str]] = None,
        class_name: str = "class",
        names: Optional[Names] = None,
    ) -> Dataset:
        """Numeric examples from an array ``(N, F)`` and optional labels ``(N,)``.

        Features become ``real`` attributes called ``feature_names`` (default ``x0``,
        ``x1``, ...); labels become a nominal class (or a ``real`` one when they are
        floating point numbers), unless ``names`` declares them.
        """
        x = np.asarray(features)
        if x.ndim != 2:
            raise ValueError(f"`features` must have shape (N, F), got shape {x.shape}")
        if feature_names is None:
            feature_names = [f"x{i}" for i in range(x.shape[1])]
        feature_names = [str(f) for f in feature_names]
        if len(feature_names) != x.shape[1]:
            raise ValueError(
                f"`feature_names` must have {x.shape[1]} names, got {len(feature_names)}"
            )
        frame = pd.DataFrame({f: x[:, i].astype(float) for i, f in enumerate(feature_names)})
        if labels is not None:
            y = np.asarray(labels)
            if y.shape != (x.shape[0],):
                raise ValueError(f"`labels` must have shape ({x.shape[0]},), got {y.shape}")
            if names is None and y.dtype.kind != "f":
                y = y.astype(str)
            frame[class_name] = y
        if names is None:
            attrs = [Attribute(f, "real") for f in feature_names]
            if labels is not None:
                if frame[class_name].dtype.kind == "f":
                    attrs.append(Attribute(class_name, "real"))
                else:
                    attrs.append(
                        Attribute(class_name, "nominal", tuple(sorted(set(frame[class_name]))))
                    )
            names = Names(attrs, class_name if labels is not None else None, file="<arrays>")
        return cls.from_frame(frame, names)


# -- encoding -----------------------------------------------------------------------------
def _error(message, file, line, text, where):
    if where == "row":
        message = f"{message} (row {line} of the DataFrame)"
        return DataParseError(message, file=file, line=None, text=text)
    return DataParseError(message, file=file, line=line, text=text)


def _missing_masks(raw: np.ndarray) -> Tuple[np.ndarray, np.ndarray, Optional[np.ndarray]]:
    """Unknown / not-applicable masks, and the stripped strings (None for float input)."""
    if raw.dtype.kind in "fiub":
        unknown = np.isnan(raw) if raw.dtype.kind == "f" else np.zeros(raw.shape, bool)
        return unknown, np.zeros(raw.shape, bool), None
    series = pd.Series(raw, dtype=object)
    isna = series.isna().to_numpy()
    text = series.where(~isna, "?").astype(str).str.strip()
    unknown = (text == UNKNOWN).to_numpy() | isna
    not_applicable = (text == NOT_APPLICABLE).to_numpy()
    return unknown, not_applicable, text.to_numpy(dtype=object)


def _encode(
    attribute: Attribute, raw: np.ndarray, lines: np.ndarray, file: str, where: str
) -> Column:
    unknown, not_applicable, text = _missing_masks(np.asarray(raw))
    missing = unknown | not_applicable
    kind = attribute.type
    name = attribute.name

    def fail(bad: np.ndarray, message: str) -> DataParseError:
        first = int(np.flatnonzero(bad)[0])
        shown = raw[first] if text is None else text[first]
        return _error(
            f"{message} for attribute {name!r}", file, int(lines[first]), str(shown), where
        )

    if kind in ("integer", "real", "date", "time"):
        if text is None:
            values = np.asarray(raw, dtype=np.float64).copy()
            if kind in ("date", "time") and len(values) and not missing.all():
                raise fail(~missing, f"a {kind} must be written as text, got a number")
        else:
            series = pd.Series(np.where(missing, None, text), dtype=object)
            if kind == "date":
                parsed = pd.to_datetime(series, format="%Y/%m/%d", errors="coerce")
                values = ((parsed - pd.Timestamp("1970-01-01")) / pd.Timedelta(days=1)).to_numpy(
                    dtype=np.float64, na_value=np.nan
                )
                message = "invalid date (expected yyyy/mm/dd)"
            elif kind == "time":
                ok = series.str.fullmatch(r"\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?").fillna(False)
                parsed = pd.to_timedelta(series.where(ok.astype(bool), None), errors="coerce")
                values = (parsed / pd.Timedelta(seconds=1)).to_numpy(
                    dtype=np.float64, na_value=np.nan
                )
                message = "invalid time (expected hh:mm:ss)"
            else:
                values = pd.to_numeric(series, errors="coerce").to_numpy(
                    dtype=np.float64, na_value=np.nan
                )
                message = "non-numeric value"
            values = np.array(values, dtype=np.float64)  # writable copy
            bad = np.isnan(values) & ~missing
            if bad.any():
                raise fail(bad, message)
        infinite = np.isinf(values)
        if infinite.any():
            raise fail(infinite, "infinite value")
        values[missing] = np.nan
        if kind == "integer":
            bad = ~missing & (values != np.round(values))
            if bad.any():
                raise fail(bad, "non-integer value")
        return Column(attribute, values, None, unknown, not_applicable)

    # coded attributes
    if text is None:
        text = np.asarray([_number_text(v) for v in np.asarray(raw).tolist()], dtype=object)
        if raw.dtype.kind == "f":
            text[unknown] = UNKNOWN
    series = pd.Series(text, dtype=object)
    if kind == "boolean":
        lowered = series.str.lower()
        canonical = np.where(
            lowered.isin(_TRUE), "true", np.where(lowered.isin(_FALSE), "false", None)
        )
        bad = (canonical == None) & ~missing  # noqa: E711 (elementwise)
        if bad.any():
            raise fail(bad, "not a boolean (expected true/false, yes/no or 1/0)")
        series = pd.Series(canonical, dtype=object)
        categories: Tuple[str, ...] = ("true", "false")
    elif attribute.values is not None:
        categories = attribute.values
    else:
        categories = tuple(sorted(set(series[~missing])))
    codes = pd.Categorical(series.where(~missing, None), categories=list(categories)).codes
    bad = (codes < 0) & ~missing
    if bad.any():
        raise fail(bad, f"value outside the declared domain {list(categories)}")
    codes = codes.astype(_code_dtype(len(categories)))
    codes[unknown] = _UNKNOWN_CODE
    codes[not_applicable] = _NA_CODE
    return Column(attribute, codes, tuple(categories), unknown, not_applicable)


def _code_dtype(n_categories: int):
    return np.int8 if n_categories < 120 else (np.int16 if n_categories < 32000 else np.int32)


def _number_text(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


# -- reading ------------------------------------------------------------------------------
#: Bytes of a ``.data`` file handed to the CSV engine at once (cut at the end of a record).
_BLOCK_BYTES = 2 << 20


class _Fallback(Exception):
    """Internal: the C reader's result cannot be trusted for a block (read it exactly)."""


def _records(text: str, file: str, first_line: int = 1) -> Iterator[Tuple[int, List[str]]]:
    """Yield (line number, fields) for every non-blank record (the exact tokenizer, used
    for blocks with quoted values and to report errors)."""
    lines = text.split("\n")
    i, n = 0, len(lines)
    offset = first_line - 1
    while i < n:
        line = lines[i].rstrip("\r")
        number = i + 1 + offset
        i += 1
        if not line.strip():
            continue
        if '"' not in line:
            yield number, [f.strip() for f in line.split(",")]
            continue
        fields: List[str] = []
        current: List[str] = []
        in_quotes = False
        was_quoted = False
        j = 0
        while True:
            if j >= len(line):
                if in_quotes:
                    if i >= n:
                        raise DataParseError(
                            "unterminated quoted value", file=file, line=number, text=line
                        )
                    current.append("\n")
                    line = lines[i].rstrip("\r")
                    i += 1
                    j = 0
                    continue
                break
            c = line[j]
            if in_quotes:
                if c == '"':
                    if j + 1 < len(line) and line[j + 1] == '"':
                        current.append('"')
                        j += 1
                    else:
                        in_quotes = False
                else:
                    current.append(c)
            elif c == '"':
                if "".join(current).strip() or was_quoted:
                    raise DataParseError(
                        "a quote may only open a value", file=file, line=number, text=line
                    )
                current = []
                in_quotes = True
                was_quoted = True
            elif c == ",":
                fields.append("".join(current) if was_quoted else "".join(current).strip())
                current, was_quoted = [], False
            elif was_quoted and not c.isspace():
                raise DataParseError(
                    "text after a closing quote", file=file, line=number, text=line
                )
            else:
                current.append(c)
            j += 1
        fields.append("".join(current) if was_quoted else "".join(current).strip())
        yield number, fields


def _parse_exact(text: str, names: Names, file: str, first_line: int = 1) -> Dataset:
    """Read records with the exact tokenizer, then encode them column-wise."""
    attributes = names.columns
    width = len(attributes)
    numbers: List[int] = []
    rows: List[List[str]] = []

    def line_text(number: int) -> str:
        return text.split("\n")[number - first_line].rstrip("\r")

    for number, fields in _records(text, file, first_line):
        if len(fields) != width:
            raise DataParseError(
                f"expected {width} comma-separated values "
                f"({', '.join(a.name for a in attributes)}), got {len(fields)}",
                file=file,
                line=number,
                text=line_text(number),
            )
        for k, value in enumerate(fields):
            if value == "":
                raise DataParseError(
                    f"empty value for attribute {attributes[k].name!r} "
                    "(write ? for an unknown value, ! for a not-applicable one)",
                    file=file,
                    line=number,
                    text=line_text(number),
                )
        numbers.append(number)
        rows.append(fields)
    lines = np.asarray(numbers, dtype=np.int64)
    table = np.empty((len(rows), width), dtype=object)
    if rows:
        table[:] = rows
    columns = {
        a.name: _encode(a, table[:, k], lines, file, "line") for k, a in enumerate(attributes)
    }
    return Dataset(names, columns, file=file)


def _parse_fast(block: bytes, encoding: str, names: Names, file: str) -> Dataset:
    """Read a block of records with pandas' C reader, driven by the ``.names`` schema.

    Numbers are converted by the reader itself (``?`` read as NaN); every other column is
    read as a categorical, whose few distinct values are checked and encoded once and then
    spread over the rows by their codes. Anything the exact reader could read differently
    (quotes, a lone carriage return, a wrong number of fields, a value to reject) raises
    :class:`_Fallback`: the caller then reads the block exactly, for the exact message.
    """
    if b'"' in block or b"\x00" in block:  # quoted values: the exact tokenizer reads them
        raise _Fallback
    if b"\r" in block and block.count(b"\r") != block.count(b"\r\n"):  # a lone CR
        raise _Fallback
    attributes = names.columns
    width = len(attributes)
    dtype: Dict[int, str] = {}
    na_values: Dict[int, List[str]] = {}
    for k, attribute in enumerate(attributes):
        if attribute.type in ("integer", "real"):
            na_values[k] = [UNKNOWN]
        else:
            dtype[k] = "category"
    try:
        with warnings.catch_warnings():
            # a column of numbers with some text in it comes back mixed: encoded as text below
            warnings.simplefilter("ignore", pd.errors.DtypeWarning)
            warnings.simplefilter("error", pd.errors.ParserWarning)  # fields lost: read exactly
            frame = pd.read_csv(
                io.BytesIO(block),
                header=None,
                names=list(range(width)),
                index_col=False,
                dtype=dtype,
                na_values=na_values,
                keep_default_na=False,
                skipinitialspace=True,
                skip_blank_lines=True,
                quoting=csv.QUOTE_NONE,
                encoding=encoding,
                engine="c",
            )
    except (
        ValueError,
        UnicodeError,
        pd.errors.ParserError,
        pd.errors.ParserWarning,
        OverflowError,
    ):
        raise _Fallback from None
    if block.count(b",") != (width - 1) * len(frame):  # a record with too few fields
        raise _Fallback
    rows = _NoLines()
    columns: Dict[str, Column] = {}
    for k, attribute in enumerate(attributes):
        series = frame[k]
        try:
            if attribute.type in ("integer", "real"):
                if series.dtype.kind in "fiu":
                    values = series.to_numpy(dtype=np.float64)  # a view: the frame is ours
                    unknown = np.isnan(values)
                    if not np.isfinite(values[~unknown]).all() or (
                        attribute.type == "integer"
                        and (values[~unknown] != np.round(values[~unknown])).any()
                    ):
                        raise _Fallback
                    columns[attribute.name] = Column(
                        attribute, values, None, unknown, np.zeros(len(values), dtype=bool)
                    )
                else:  # text somewhere (``!``, an error): column-wise, as text
                    raw = series.to_numpy(dtype=object, na_value=UNKNOWN)
                    if (raw == "").any():
                        raise _Fallback
                    columns[attribute.name] = _encode(attribute, raw, rows, file, "line")
            else:
                columns[attribute.name] = _encode_categorical(attribute, series.array)
        except (DataParseError, _LineNeeded):
            raise _Fallback from None
    return Dataset(names, columns, file=file)


def _arrow_csv():
    """``(pyarrow, pyarrow.csv)``, or None when pyarrow is not installed."""
    global _ARROW
    if _ARROW is None:
        try:
            import pyarrow
            import pyarrow.csv
        except ImportError:
            _ARROW = False
        else:
            _ARROW = (pyarrow, pyarrow.csv)
    return _ARROW or None


#: ``(pyarrow, pyarrow.csv)`` once imported, False when pyarrow is missing (set it to False
#: to read with pandas' C reader only).
_ARROW: Any = None


def _parse_arrow(block: bytes, encoding: str, names: Names, file: str) -> Dataset:
    """Read a block of records with Arrow's CSV reader, driven by the ``.names`` schema.

    Numbers are parsed by the reader straight into ``float64`` arrays (``?`` read as
    null); every other column is dictionary-encoded by the reader, and its few distinct
    values are checked and encoded once, then spread over the rows by their codes. No
    Python object is made per value. Anything that the pandas reader or the exact
    tokenizer could read differently (quotes, a lone carriage return, a text that is not
    UTF-8, a wrong number of fields, ``nan``, an infinite value, a negative zero, a value to
    reject) raises :class:`_Fallback`: the caller then reads the block with pandas' C
    reader, or exactly.
    """
    arrow = _arrow_csv()
    if arrow is None or encoding != "utf-8" or not block:
        raise _Fallback
    if b'"' in block or b"\x00" in block:
        raise _Fallback
    if b"\r" in block and block.count(b"\r") != block.count(b"\r\n"):  # a lone CR
        raise _Fallback
    pa, csv_ = arrow
    attributes = names.columns
    keys = [str(k) for k in range(len(attributes))]
    types = {
        key: pa.float64()
        if attribute.type in ("integer", "real")
        else pa.dictionary(pa.int32(), pa.string())
        for key, attribute in zip(keys, attributes)
    }
    try:
        table = csv_.read_csv(
            pa.py_buffer(block),
            read_options=csv_.ReadOptions(
                column_names=keys, use_threads=False, block_size=len(block) + 1
            ),
            parse_options=csv_.ParseOptions(
                delimiter=",",
                quote_char=False,
                double_quote=False,
                escape_char=False,
                newlines_in_values=False,
                ignore_empty_lines=True,
            ),
            convert_options=csv_.ConvertOptions(
                column_types=types,
                null_values=[UNKNOWN],
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
                check_utf8=True,
            ),
            # malloc's pool: freed blocks go back at once, so that the peak stays the
            # table plus the blocks in flight (Arrow's own pools keep them for reuse)
            memory_pool=pa.system_memory_pool(),
        )
    except (pa.ArrowException, ValueError, UnicodeError, OverflowError):
        raise _Fallback from None
    n = table.num_rows
    if n == 0 or table.num_columns != len(attributes):
        raise _Fallback
    columns: Dict[str, Column] = {}
    for key, attribute in zip(keys, attributes):
        chunks = table.column(key).chunks
        if len(chunks) != 1 or len(chunks[0]) != n:
            raise _Fallback
        array = chunks[0]
        if attribute.type in ("integer", "real"):
            values = array.to_numpy(zero_copy_only=False)  # NaN where null (``?``)
            if not values.flags.writeable:
                values = values.copy()
            unknown = np.isnan(values)
            if (
                int(np.count_nonzero(unknown)) != array.null_count  # ``nan`` written out
                or np.isinf(values).any()
                or (attribute.type == "integer" and (np.mod(values[~unknown], 1) != 0).any())
            ):
                raise _Fallback
            zero = values == 0
            if zero.any() and np.signbit(values[zero]).any():
                known = values[~unknown]
                if (known == np.round(known)).all():
                    # pandas reads a column of integers as such, and ``-0`` as 0: let it
                    raise _Fallback
            columns[attribute.name] = Column(
                attribute, values, None, unknown, np.zeros(n, dtype=bool)
            )
        else:
            if array.null_count:
                raise _Fallback
            codes = array.indices.to_numpy(zero_copy_only=False)
            try:
                columns[attribute.name] = _encode_distinct(
                    attribute, codes, array.dictionary.to_pylist()
                )
            except (DataParseError, _LineNeeded):
                raise _Fallback from None
    del table
    return Dataset(names, columns, file=file)


class _LineNeeded(Exception):
    pass


class _NoLines:
    """Line numbers are not known on the fast path: asking for one means an error, which
    the exact reader will report."""

    def __getitem__(self, index):
        raise _LineNeeded


def _encode_categorical(
    attribute: Attribute, values: pd.Categorical, missing_is_unknown: bool = False
) -> Column:
    """Encode a categorical column: check and encode its distinct values once, then take
    them by code. Raises :class:`_LineNeeded`/:class:`DataParseError` on a bad value."""
    codes = np.asarray(values.codes)
    categories = values.categories.astype(object)
    if codes.size and codes.min() < 0:  # NaN: unknown in a DataFrame, a missing field in a file
        if not missing_is_unknown:
            raise _LineNeeded
        codes = np.where(codes < 0, len(categories), codes)
    return _encode_distinct(attribute, codes, categories)


def _encode_distinct(attribute: Attribute, codes: np.ndarray, categories: Sequence) -> Column:
    """Encode a column given as ``codes`` into its distinct texts ``categories`` (the code
    ``len(categories)`` meaning unknown): the distinct values are checked and encoded once
    (in sorted order, so that blocks that meet the same values in another order share the
    work), then spread over the rows by their codes. Raises :class:`_LineNeeded` or
    :class:`DataParseError` on a bad value."""
    stripped = [str(c).strip() for c in categories] + [UNKNOWN]
    if "" in stripped:
        raise _LineNeeded
    canonical = tuple(sorted(set(stripped)))
    key = (attribute, canonical)
    distinct = _DISTINCT.get(key)
    if distinct is None:
        distinct = _encode(attribute, np.array(canonical, dtype=object), _NoLines(), "", "line")
        if len(_DISTINCT) > 256:
            _DISTINCT.clear()
        _DISTINCT[key] = distinct
    position = {value: i for i, value in enumerate(canonical)}
    lookup = np.array([position[value] for value in stripped], dtype=np.intp)
    n = len(codes)

    def spread(table: np.ndarray) -> np.ndarray:
        table = table[lookup]
        if not table.any():  # zeros: pages never written take no memory
            return np.zeros(n, dtype=table.dtype)
        return table.take(codes)

    return Column(
        attribute,
        distinct.values[lookup].take(codes),
        distinct.categories,
        spread(distinct.unknown),
        spread(distinct.not_applicable),
    )


#: The encoded distinct values of the categoricals met last (blocks of one file repeat them).
_DISTINCT: Dict[Tuple[Attribute, Tuple[str, ...]], Column] = {}


def _encode_series(attribute: Attribute, series: pd.Series, rows: np.ndarray) -> Column:
    """Encode a DataFrame column; categoricals and Arrow strings of numbers are converted
    without a Python object per value, anything else (or an error, to name its row) as
    :func:`_encode` does."""
    try:
        if isinstance(series.dtype, pd.CategoricalDtype) and not attribute.is_numeric:
            return _encode_categorical(attribute, series.array, missing_is_unknown=True)
        if attribute.is_numeric and isinstance(series.dtype, pd.StringDtype):
            return _encode_numeric_text(attribute, series)
    except (_LineNeeded, DataParseError, ImportError):
        pass
    return _encode(attribute, series.to_numpy(), rows, "<DataFrame>", "row")


def _encode_numeric_text(attribute: Attribute, series: pd.Series) -> Column:
    """Numbers written as text (a Dask partition read from a ``.data`` file), parsed by
    Arrow (correctly rounded, as pandas' reader)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    try:
        text = pc.utf8_trim_whitespace(pa.array(series.array))
        unknown = pc.fill_null(pc.equal(text, UNKNOWN), True)
        not_applicable = pc.fill_null(pc.equal(text, NOT_APPLICABLE), False)
        missing = pc.or_(unknown, not_applicable)
        parsed = pc.cast(pc.if_else(missing, pa.scalar(None, pa.string()), text), pa.float64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, TypeError):
        raise _LineNeeded from None
    values = parsed.to_numpy(zero_copy_only=False).astype(np.float64, copy=True)
    unknown = unknown.to_numpy(zero_copy_only=False).astype(bool)
    not_applicable = not_applicable.to_numpy(zero_copy_only=False).astype(bool)
    known = ~(unknown | not_applicable)
    if not np.isfinite(values[known]).all() or (
        attribute.type == "integer" and (values[known] != np.round(values[known])).any()
    ):
        raise _LineNeeded
    values[~known] = np.nan
    return Column(attribute, values, None, unknown, not_applicable)


def import_dask():
    """Import Dask (an optional dependency), or say which extra installs it."""
    try:
        import dask
        import dask.dataframe  # noqa: F401
    except ImportError as error:
        raise ImportError(
            "this needs Dask, an optional dependency: install it with "
            "pip install 'xplique_ext[distributed]'"
        ) from error
    return dask


def read_data_dask(
    path: Union[str, os.PathLike],
    names: Union[Names, str, os.PathLike, None] = None,
    *,
    blocksize: Union[int, str] = "64MB",
) -> Any:
    """A ``.data`` file as a ``dask.dataframe.DataFrame``, read with
    ``dask.dataframe.read_csv`` against the ``.names`` schema.

    Nominal, boolean, date and time columns are categoricals, numbers are Arrow strings
    (``?`` and ``!`` are kept as text), so that
    :func:`~xplique_ext.rules.evaluate_rules` (with ``names``) encodes and checks each
    partition as :func:`read_data` does. Partitions are cut at new lines, so a quoted
    value may not span lines here.

    Parameters
    ----------
    path
        The data file (or a glob of files, as Dask accepts).
    names
        As for :func:`read_data`.
    blocksize
        Bytes per partition.

    Returns
    -------
    dask.dataframe.DataFrame
        Columns named after the attributes; pass ``names`` along to ``evaluate_rules``.
    """
    from .names import read_names

    dask = import_dask()
    if names is None:
        names = default_names_path(path)
    if not isinstance(names, Names):
        names = read_names(names)
    dtype = {a.name: ("string" if a.is_numeric else "category") for a in names.columns}
    frame = dask.dataframe.read_csv(
        os.fspath(path),
        header=None,
        names=names.column_names,
        dtype=dtype,
        blocksize=blocksize,
        skipinitialspace=True,
        keep_default_na=False,
        na_filter=False,
        skip_blank_lines=True,
        index_col=False,
    )
    return frame.map_partitions(_check_fields, names, os.fspath(path), meta=frame._meta)


def _check_fields(frame: pd.DataFrame, names: Names, file: str, partition_info=None):
    """A Dask partition read from a file: no empty value (a record that lacks fields
    reads as empty values too), and extra fields are refused by the reader itself."""
    number = partition_info["number"] if partition_info else "?"
    for name in frame.columns:
        series = frame[name]
        if isinstance(series.dtype, pd.CategoricalDtype):
            categories = series.cat.categories.astype(object)
            empty_categories = [k for k, c in enumerate(categories) if not str(c).strip()]
            empty = np.isin(series.cat.codes.to_numpy(), empty_categories) | series.isna()
        else:
            empty = series.isna().to_numpy() | (series.str.strip() == "").to_numpy(
                dtype=bool, na_value=True
            )
        if empty.any():
            row = int(np.flatnonzero(empty)[0])
            values = [str(v) for v in frame.iloc[row].tolist() if not pd.isna(v)]
            raise DataParseError(
                f"empty value for attribute {name!r} (write ? for an unknown value, ! for a "
                f"not-applicable one), or fewer than {len(names.columns)} values (row "
                f"{row + 1} of partition {number})",
                file=file,
                text=",".join(values),
            )
    return frame


def _encoding(block: bytes) -> str:
    """UTF-8, or Latin-1 for a block that is not valid UTF-8 (as for ``.names`` files)."""
    if block.isascii():
        return "utf-8"
    try:
        block.decode("utf-8")
    except UnicodeDecodeError:
        return "latin-1"
    return "utf-8"


def _parse_block(block: bytes, names: Names, file: str, first_line: int) -> Dataset:
    encoding = _encoding(block)
    try:
        return _parse_arrow(block, encoding, names, file)
    except _Fallback:
        pass
    try:
        return _parse_fast(block, encoding, names, file)
    except _Fallback:
        return _parse_exact(block.decode(encoding), names, file, first_line)


def _blocks(handle, block_bytes: int) -> Iterator[Tuple[bytes, int]]:
    """``(bytes, first line)`` of consecutive blocks of whole records of a binary file:
    ``block_bytes``, then up to the end of the line (of the quoted value)."""
    line = 1
    while True:
        data = handle.read(block_bytes)
        if not data:
            return
        parts = [data, handle.readline()]
        if b'"' in data:  # a new line inside a quoted value does not end the record
            quotes = data.count(b'"') + parts[-1].count(b'"')
            while quotes % 2:
                more = handle.readline()
                if not more:
                    break
                parts.append(more)
                quotes += more.count(b'"')
        del data
        block = b"".join(parts) if parts[-1] else parts[0]
        del parts
        yield block, line
        line += block.count(b"\n")


def _concat(parts: List[Dataset], names: Names, file: Optional[str]) -> Dataset:
    """One data set from consecutive ones (open nominal domains are merged)."""
    if len(parts) == 1:
        return parts[0]
    if not parts:
        return _parse_exact("", names, file or "<string>")
    columns: Dict[str, Column] = {}
    for name in list(parts[0].columns):
        pieces = [part.columns.pop(name) for part in parts]
        first = pieces[0]
        if first.categories is None or all(p.categories == first.categories for p in pieces):
            values = np.concatenate([p.values for p in pieces])
            categories = first.categories
        else:
            categories = tuple(sorted(set().union(*(p.categories for p in pieces))))
            index = {c: i for i, c in enumerate(categories)}
            dtype = _code_dtype(len(categories))
            remapped = []
            for p in pieces:
                lookup = np.array([index[c] for c in p.categories] + [_NA_CODE, _UNKNOWN_CODE])
                remapped.append(lookup[p.values.astype(np.int64)].astype(dtype))
            values = np.concatenate(remapped)
        columns[name] = Column(
            first.attribute,
            values,
            categories,
            np.concatenate([p.unknown for p in pieces]),
            np.concatenate([p.not_applicable for p in pieces]),
        )
        del pieces
    return Dataset(names, columns, file=file)


def _read_whole(open_source, names: Names, file: str) -> Dataset:
    """The whole table, block by block, written into arrays allocated once (the peak is
    the table plus one block, not twice the table)."""
    columns: Dict[str, Dict[str, Any]] = {}
    filled = 0
    with open_source() as handle:
        size = handle.seek(0, io.SEEK_END)
        handle.seek(0)
        # a record takes at least one byte per value (commas and its new line): an upper
        # bound of the rows. The arrays are sized from the first block's bytes per row
        # (with a margin, never above the bound) and grow if the file turns out denser.
        bound = size // max(len(names.columns), 1) + 1
        capacity = 0
        for part in _read_blocks(handle, names, file, _BLOCK_BYTES):
            m = part.n_examples
            if not columns:
                per_row = min(size, _BLOCK_BYTES) / max(m, 1)
                capacity = min(bound, int(1.25 * size / per_row) + m + 1024)
            elif filled + m > capacity:
                capacity = min(bound, max(2 * capacity, filled + m))
                for out in columns.values():
                    for key in ("values", "unknown", "not_applicable"):
                        grown = np.zeros(capacity, dtype=out[key].dtype)
                        grown[:filled] = out[key][:filled]
                        out[key] = grown
            for name, column in part.columns.items():
                out = columns.get(name)
                if out is None:
                    fixed = column.categories is None or column.attribute.values is not None
                    fixed = fixed or column.attribute.type == "boolean"
                    dtype = column.values.dtype if fixed else np.int32
                    out = columns[name] = {
                        "column": column,
                        "fixed": fixed,
                        "index": {},
                        "values": np.empty(capacity, dtype=dtype),
                        # zeros: pages never written (no value missing) take no memory
                        "unknown": np.zeros(capacity, dtype=bool),
                        "not_applicable": np.zeros(capacity, dtype=bool),
                    }
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
        return _parse_exact("", names, file)
    result = {}
    for name, out in columns.items():
        values = out["values"][:filled]
        categories = out["column"].categories
        if not out["fixed"]:
            met = list(out["index"])
            categories = tuple(sorted(met))
            rank = {c: i for i, c in enumerate(categories)}
            lookup = np.array([rank[c] for c in met] + [_NA_CODE, _UNKNOWN_CODE])
            values = lookup[values.astype(np.int64)].astype(_code_dtype(len(categories)))
        result[name] = Column(
            out["column"].attribute,
            values,
            categories,
            out["unknown"][:filled],
            out["not_applicable"][:filled],
        )
        out.clear()
    return Dataset(names, result, file=file)


def _read_blocks(source, names: Names, file: str, block_bytes: int) -> Iterator[Dataset]:
    """The data set of each block, in order. Blocks are parsed by a pool of threads as
    wide as the machine (at most 4; pandas' C reader releases the GIL while it tokenizes),
    with at most one block per thread in flight, so that memory stays bounded."""
    workers = min(4, os.cpu_count() or 1)
    if workers == 1:
        for block, first_line in _blocks(source, block_bytes):
            yield _parse_block(block, names, file, first_line)
        return
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        pending: collections.deque = collections.deque()
        for block, first_line in _blocks(source, block_bytes):
            pending.append(pool.submit(_parse_block, block, names, file, first_line))
            del block
            if len(pending) >= workers:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()


def _rechunk(parts: Iterator[Dataset], chunksize: int, names: Names, file) -> Iterator[Dataset]:
    """Consecutive data sets of exactly ``chunksize`` examples (the last one may be
    shorter) from data sets of any sizes."""
    pending: List[Dataset] = []
    held = 0
    for part in parts:
        if part.n_examples == 0:
            continue
        pending.append(part)
        held += part.n_examples
        if held < chunksize:
            continue
        whole = _concat(pending, names, file)
        pending = []
        stop = 0
        for start in range(0, whole.n_examples - chunksize + 1, chunksize):
            stop = start + chunksize
            yield whole._slice(start, stop)
        if stop < whole.n_examples:  # a copy, so that ``whole`` can be freed
            pending = [whole._slice(stop, whole.n_examples, copy=True)]
        held = whole.n_examples - stop
        del whole
    if pending:
        yield _concat(pending, names, file)


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
    return _read_whole(lambda: io.BytesIO(raw), names, file)


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
    The file is read in blocks of whole records (2 MiB) by Arrow's CSV reader, driven by
    the ``.names`` schema: numbers are parsed by the reader straight into ``float64``
    arrays, and every other column is dictionary-encoded, its distinct values checked
    against the declarations once, column by column. A block that Arrow does not read
    exactly as pandas' C reader would (a negative zero in a column of integers, a text
    that is not UTF-8, ``!`` in a numeric column) goes to pandas' C reader (which also
    reads every block when pyarrow is not installed). A block that neither can read
    exactly as the format says (a quoted value, a wrong number of fields, an empty or
    invalid value) is read again by an exact tokenizer, which reports the error with the
    file, the line, its text and the attribute.
    Where a file has several errors, the first one of the first bad block is reported.
    Peak memory stays below twice the size of the file for tables of numbers and short
    nominal values (``tests/rules/test_rules_reader_memory.py``; 1.3x on the 200 MB file
    of ``benchmarks/rules.py``): the encoded table, allocated once (8 bytes per number, 1
    per nominal value, 1 for the unknown mask; the not-applicable mask takes memory only
    where there are such values), plus the blocks being parsed.

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
    if chunksize is not None:
        return _read_chunks(file, names, int(chunksize))
    return _read_whole(lambda: open(file, "rb"), names, file)


def _read_chunks(file: str, names: Names, chunksize: int) -> Iterator[Dataset]:
    open(file, "rb").close()  # fail now, not at the first chunk, if the file is missing
    return _chunk_generator(file, names, chunksize)


def _chunk_generator(file: str, names: Names, chunksize: int) -> Iterator[Dataset]:
    with open(file, "rb") as handle:
        yield from _rechunk(_read_blocks(handle, names, file, _BLOCK_BYTES), chunksize, names, file)


def default_names_path(data_path: Union[str, os.PathLike]) -> str:
    """``std_info.pl``'s default: the data file name without extension, plus ``.names``."""
    root, _ = os.path.splitext(os.fspath(data_path))
    return root + ".names"


def _format_value(value: Any) -> str:
    text = str(value)
    if text in (UNKNOWN, NOT_APPLICABLE) or any(c in text for c in ',"\n') or text != text.strip():
        return '"' + text.replace('"', '""') + '"'
    return text


def write_data(dataset: Dataset, path: Union[str, os.PathLike, None] = None) -> str:
    """Write examples as ``.data`` text (to ``path`` when given); returns the text."""
    lines = []
    frame_columns = []
    for attribute in dataset.names.columns:
        if attribute.name not in dataset.columns:
            continue
        column = dataset.columns[attribute.name]
        values = column.decoded(None)
        if column.categories is None:
            if attribute.type == "date":
                values = np.array(
                    [
                        None
                        if v is None
                        else (pd.Timestamp("1970-01-01") + pd.Timedelta(days=v)).strftime(
                            "%Y/%m/%d"
                        )
                        for v in values
                    ],
                    dtype=object,
                )
            elif attribute.type == "time":
                values = np.array(
                    [None if v is None else _format_time(v) for v in values], dtype=object
                )
            else:
                values = np.array(
                    [None if v is None else _number_text(float(v)) for v in values], dtype=object
                )
        texts = np.array([_format_value(v) if v is not None else "" for v in values], dtype=object)
        texts[column.unknown] = UNKNOWN
        texts[column.not_applicable] = NOT_APPLICABLE
        frame_columns.append(texts)
    for k in range(dataset.n_examples):
        lines.append(",".join(col[k] for col in frame_columns))
    text = "\n".join(lines) + ("\n" if lines else "")
    if path is not None:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
    return text


def _format_time(seconds: float) -> str:
    whole = int(round(seconds))
    return f"{whole // 3600:02d}:{whole % 3600 // 60:02d}:{whole % 60:02d}"
