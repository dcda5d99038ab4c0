"""The encoding of values, for every reader of examples (section 2.3 of the report).

Whatever the source (a ``.data`` file read by :mod:`~xplique_ext.rules.datafile`, a
DataFrame, arrays, a Dask partition), each attribute is stored as a :class:`Column` made
for vectorised rule evaluation: ``float64`` values for ``integer``, ``real``, ``date``
(days since 1970-01-01) and ``time`` (seconds) attributes, integer codes for the others,
plus the masks of *unknown* (``?``) and *not-applicable* (``!``) values.

The rules on values live here, once, for every reader: what a missing value is, what a
number, a date, a time and a boolean are, that a number is finite, that an ``integer`` is
whole, that a negative zero reads as 0, and that a nominal value is in its domain.

Two kinds of encoders:

- the **exact encoder**, :func:`encode_values`, reads any values and names the line (or
  the DataFrame row) of the first one it refuses, in a :class:`~xplique_ext.rules.errors.
  DataParseError`;
- the **fast encoders**, :func:`encode_distinct` (a column given as codes into its
  distinct texts) and :func:`encode_numeric_text` (numbers written as text, parsed by
  Arrow), encode clean columns without a Python object per value and raise
  :class:`EncodingRefused` on anything the exact encoder would report: the caller then
  hands the values to the exact encoder.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any, NamedTuple, Optional, Sequence, Tuple, Union

import numpy as np
import pandas as pd

from ..commons.params import ArrayLike, InstanceOf, validate_params
from .errors import DataParseError
from .names import Attribute

__all__ = [
    "UNKNOWN",
    "NOT_APPLICABLE",
    "UNKNOWN_CODE",
    "NOT_APPLICABLE_CODE",
    "TRUE_TEXTS",
    "FALSE_TEXTS",
    "Column",
    "EncodingRefused",
    "ParsedNumbers",
    "BrokenNumbers",
    "encode_values",
    "encode_series",
    "encode_distinct",
    "encode_numeric_text",
    "parse_numbers",
    "number_rules",
    "code_dtype",
    "label_text",
    "real_value",
    "class_text",
]

#: How an unknown value is written.
UNKNOWN = "?"
#: How a not-applicable value is written.
NOT_APPLICABLE = "!"
#: The code of an unknown value in a coded column.
UNKNOWN_CODE = -1
#: The code of a not-applicable value in a coded column.
NOT_APPLICABLE_CODE = -2
#: Spellings of a true boolean (compared in lower case).
TRUE_TEXTS = {"true", "t", "yes", "y", "1"}
#: Spellings of a false boolean (compared in lower case).
FALSE_TEXTS = {"false", "f", "no", "n", "0"}
#: The attribute types stored as ``float64`` values.
_NUMERIC_TYPES = ("integer", "real", "date", "time")


class EncodingRefused(Exception):
    """A fast encoder cannot encode a column exactly: the exact encoder
    (:func:`encode_values`), which names the line or row of any error, takes over."""


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
        # the relation between the declared arrays: O(1), on the hot path of reading files
        for name in ("unknown", "not_applicable"):
            if getattr(self, name).shape != self.values.shape:
                raise ValueError(
                    f"`{name}` must be a mask of shape {self.values.shape} like "
                    f"`values`, got shape {getattr(self, name).shape}"
                )
        self.unknown_index = np.flatnonzero(self.unknown)
        self.has_unknown = self.unknown_index.size > 0
        self.has_not_applicable = bool(self.not_applicable.any())
        self._code_of = {c: i for i, c in enumerate(self.categories or ())}

    @property
    def valid(self) -> np.ndarray:
        """Mask of the known and applicable values."""
        return ~(self.unknown | self.not_applicable)

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

    def take(self, index: Union[np.ndarray, slice]) -> Column:
        """The values at ``index`` (views for a slice)."""
        return Column(
            self.attribute,
            self.values[index],
            self.categories,
            self.unknown[index],
            self.not_applicable[index],
        )


# The declaration wraps the generated ``__init__`` (as for ``names.Attribute``). The arrays
# are checked by dtype kind and rank only, never element by element: a Column is built for
# every attribute of every chunk read, and the readers build its values vectorised.
Column.__init__ = validate_params(
    {
        "attribute": [InstanceOf(Attribute, description="an Attribute")],
        "values": [ArrayLike(kind="real", ndim=1, batch_hint=False)],
        "categories": [InstanceOf(tuple, description="a tuple of categories"), None],
        "unknown": [ArrayLike(kind="bool", ndim=1, batch_hint=False)],
        "not_applicable": [ArrayLike(kind="bool", ndim=1, batch_hint=False)],
    }
)(Column.__init__)


class ParsedNumbers(NamedTuple):
    """Texts of a numeric-like attribute read as numbers (:func:`parse_numbers`)."""

    #: ``float64`` values, NaN where a text is missing or invalid.
    values: np.ndarray
    #: The message for an invalid text.
    message: str


class BrokenNumbers(NamedTuple):
    """The values that break the first broken rule on numbers (:func:`number_rules`)."""

    #: Mask of the values that break it (all False when no rule is broken).
    mask: np.ndarray
    #: The message for such a value.
    message: str


# -- the exact encoder --------------------------------------------------------------------
@dataclass(frozen=True)
class _Source:
    """Where the values of one attribute were read: ``lines`` of ``file``, or rows of a
    DataFrame (``where="row"``), to name the first bad value."""

    attribute: Attribute
    raw: np.ndarray
    lines: np.ndarray
    file: str
    where: str

    def check(self, bad: np.ndarray, message: str, text: Optional[np.ndarray]) -> None:
        """Raise the error ``message`` at the first value of the mask ``bad``, if any,
        quoting its ``text`` (its raw value where ``text`` is None)."""
        if not bad.any():
            return
        first = int(np.flatnonzero(bad)[0])
        if self.where == "row":
            row = f" (row {self.lines[first]} of the DataFrame)"
            line = None
        else:
            row = ""
            line = int(self.lines[first])
        raise DataParseError(
            f"{message} for attribute {self.attribute.name!r}{row}",
            file=self.file,
            line=line,
            text=str(self.raw[first] if text is None else text[first]),
        )


def encode_values(
    attribute: Attribute,
    raw: np.ndarray,
    lines: np.ndarray,
    file: str = "<DataFrame>",
    where: str = "line",
) -> Column:
    """Encode the values ``raw`` (strings, or numbers from a DataFrame) of one attribute,
    found at ``lines`` of ``file`` (or at rows of a DataFrame, ``where="row"``).

    Raises
    ------
    DataParseError
        At the first value that breaks a rule on values, naming the attribute, the file
        and the line (or the DataFrame row) and the value's text.
    """
    raw = np.asarray(raw)
    source = _Source(attribute, raw, lines, file, where)
    if raw.dtype.kind in "fiub":
        text = None
        if raw.dtype.kind == "f":
            unknown = np.isnan(raw)
        else:
            unknown = np.zeros(raw.shape, bool)
        not_applicable = np.zeros(raw.shape, bool)
    else:
        series = pd.Series(raw, dtype=object)
        text = series.where(series.notna(), UNKNOWN).astype(str).str.strip().to_numpy(dtype=object)
        unknown = text == UNKNOWN  # NaN and None too
        not_applicable = text == NOT_APPLICABLE
    if attribute.type in _NUMERIC_TYPES:
        return _encode_numbers(source, text, unknown, not_applicable)
    if text is None:  # numbers in a DataFrame column of a coded attribute
        text = np.asarray([label_text(v) for v in raw.tolist()], dtype=object)
        text[unknown] = UNKNOWN
    return _encode_codes(source, text, unknown, not_applicable)


def _encode_numbers(
    source: _Source, text: Optional[np.ndarray], unknown: np.ndarray, not_applicable: np.ndarray
) -> Column:
    """The ``float64`` column of a numeric-like attribute, from its ``text`` (or from the
    numbers of a DataFrame column where ``text`` is None)."""
    attribute = source.attribute
    missing = unknown | not_applicable
    if text is None and attribute.type in ("date", "time"):
        source.check(~missing, f"a {attribute.type} must be written as text, got a number", text)
    if text is None:
        values = source.raw.astype(np.float64)
        message = ""
    else:
        present = pd.Series(np.where(missing, None, text), dtype=object)
        values, message = parse_numbers(attribute.type, present)
    source.check(np.isnan(values) & ~missing, message, text)
    broken = number_rules(attribute, values, missing)
    source.check(broken.mask, broken.message, text)
    values[missing] = np.nan
    return Column(attribute, values, None, unknown, not_applicable)


def _encode_codes(
    source: _Source, text: np.ndarray, unknown: np.ndarray, not_applicable: np.ndarray
) -> Column:
    """The coded column of a nominal, enumerated, boolean or string attribute, from its
    ``text``: codes into the declared domain, or into the values met for an open one."""
    attribute = source.attribute
    missing = unknown | not_applicable
    if attribute.type == "boolean":
        categories = ("true", "false")
        lowered = pd.Series(text, dtype=object).str.lower()
        spelled_false = np.where(lowered.isin(FALSE_TEXTS), "false", text)
        text = np.where(lowered.isin(TRUE_TEXTS), "true", spelled_false)
        message = "not a boolean (expected true/false, yes/no or 1/0)"
    elif attribute.values is None:  # an open domain, the values met: none is outside it
        categories = tuple(sorted(set(text[~missing])))
        message = ""
    else:
        categories = attribute.values
        message = f"value outside the declared domain {list(categories)}"
    codes = pd.Index(list(categories)).get_indexer(np.where(missing, None, text))
    source.check((codes < 0) & ~missing, message, text)
    codes = codes.astype(code_dtype(len(categories)))
    codes[unknown] = UNKNOWN_CODE
    codes[not_applicable] = NOT_APPLICABLE_CODE
    return Column(attribute, codes, tuple(categories), unknown, not_applicable)


def parse_numbers(kind: str, series: pd.Series) -> ParsedNumbers:
    """The texts of a numeric-like attribute of type ``kind`` as ``float64`` (NaN where
    missing or invalid), and the message for an invalid one.

    Examples
    --------
    >>> parse_numbers("time", pd.Series(["01:30:00", "noon"], dtype=object)).values
    array([5400.,   nan])
    """
    if kind == "date":
        parsed = pd.to_datetime(series, format="%Y/%m/%d", errors="coerce")
        values = (parsed - pd.Timestamp("1970-01-01")) / pd.Timedelta(days=1)
        message = "invalid date (expected yyyy/mm/dd)"
    elif kind == "time":
        ok = series.str.fullmatch(r"\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?").fillna(False).astype(bool)
        values = pd.to_timedelta(series.where(ok, None), errors="coerce") / pd.Timedelta(seconds=1)
        message = "invalid time (expected hh:mm:ss)"
    else:
        values = pd.to_numeric(series, errors="coerce")
        message = "non-numeric value"
    return ParsedNumbers(np.array(values.to_numpy(dtype=np.float64, na_value=np.nan)), message)


def number_rules(attribute: Attribute, values: np.ndarray, missing: np.ndarray) -> BrokenNumbers:
    """The rules on numbers, for every reader: a negative zero reads as 0 (``values`` is
    changed in place), a number is finite, an ``integer`` is whole. Returns the mask of
    the values that break the first broken rule (all False when none is) and its message."""
    values += 0.0  # -0.0 + 0.0 is +0.0; NaN stays NaN
    infinite = np.isinf(values) & ~missing
    if infinite.any() or attribute.type != "integer":
        return BrokenNumbers(infinite, "infinite value")
    fractional = ~(missing | np.isnan(values) | (values == np.round(values)))
    return BrokenNumbers(fractional, "non-integer value")


def code_dtype(n_categories: int) -> type:
    """The smallest integer type that holds the codes of ``n_categories`` categories."""
    if n_categories < 120:
        return np.int8
    if n_categories < 32000:
        return np.int16
    return np.int32


def label_text(value: Any) -> str:
    """A label or a number as text, integral floats without their ``.0`` (``1.0`` -> ``"1"``).

    Examples
    --------
    >>> label_text(1.0), label_text(2.5), label_text("go")
    ('1', '2.5', 'go')
    """
    whole = isinstance(value, (float, np.floating)) and float(value).is_integer()
    return str(int(value)) if whole else str(value)


def real_value(text: str) -> Optional[float]:
    """``text`` as a finite float, or None."""
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def class_text(value: Any) -> str:
    """A class as text, numbers by their value: the one key by which rule heads, labels and
    predictions are compared as classes.

    A text that reads as a finite number is that number (the head ``'1.0'``, the label
    ``1.0`` and the label ``'1'`` are the class ``'1'``); any other value is written by
    :func:`label_text`.

    Examples
    --------
    >>> class_text("1.0"), class_text(1.0), class_text("1"), class_text("go")
    ('1', '1', '1', 'go')
    """
    if isinstance(value, str):
        number = real_value(value)
        if number is not None:
            return label_text(number)
    return label_text(value)


# -- the fast encoders --------------------------------------------------------------------
@functools.lru_cache(maxsize=256)
def _encode_canonical(attribute: Attribute, canonical: Tuple[str, ...]) -> Column:
    """The distinct values of a column, encoded once (blocks of one file repeat them)."""
    try:
        return encode_values(attribute, np.array(canonical, dtype=object), np.zeros(len(canonical)))
    except DataParseError:
        raise EncodingRefused from None


def encode_distinct(attribute: Attribute, codes: np.ndarray, categories: Sequence) -> Column:
    """Encode a column given as ``codes`` into its distinct texts ``categories`` (the code
    ``len(categories)`` meaning unknown): the distinct values are checked and encoded once
    (in sorted order, so that blocks that meet the same values in another order share the
    work), then spread over the rows by their codes.

    Raises
    ------
    EncodingRefused
        On a bad or empty value (the exact encoder names its line).
    """
    stripped = [str(c).strip() for c in categories] + [UNKNOWN]
    if "" in stripped:
        raise EncodingRefused
    canonical = tuple(sorted(set(stripped)))
    distinct = _encode_canonical(attribute, canonical)
    position = {value: i for i, value in enumerate(canonical)}
    lookup = np.array([position[value] for value in stripped], dtype=np.intp)

    def spread(table: np.ndarray) -> np.ndarray:
        table = table[lookup]  # all False: zeros, whose pages never written take no memory
        if table.any():
            return table.take(codes)
        return np.zeros(len(codes), dtype=table.dtype)

    return Column(
        attribute,
        distinct.values[lookup].take(codes),
        distinct.categories,
        spread(distinct.unknown),
        spread(distinct.not_applicable),
    )


def encode_numeric_text(attribute: Attribute, series: Any) -> Column:
    """Numbers written as text (an Arrow array read from a ``.data`` file, or a Dask
    partition's Arrow strings), parsed by Arrow (correctly rounded, as pandas' parser),
    ``?`` and ``!`` kept apart.

    Raises
    ------
    EncodingRefused
        On anything the exact encoder would report.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    try:
        array = pa.array(getattr(series, "array", series))  # a Series' values, or Arrow's
        text = pc.utf8_trim_whitespace(array)
        unknown_flags = pc.fill_null(pc.equal(text, UNKNOWN), True)
        not_applicable_flags = pc.fill_null(pc.equal(text, NOT_APPLICABLE), False)
        missing_flags = pc.or_(unknown_flags, not_applicable_flags)
        present = pc.if_else(missing_flags, pa.scalar(None, pa.string()), text)
        parsed = pc.cast(present, pa.float64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, TypeError):
        raise EncodingRefused from None
    values = parsed.to_numpy(zero_copy_only=False).astype(np.float64, copy=True)
    unknown = np.asarray(unknown_flags.to_numpy(zero_copy_only=False), bool)
    not_applicable = np.asarray(not_applicable_flags.to_numpy(zero_copy_only=False), bool)
    missing = unknown | not_applicable
    if np.isnan(values[~missing]).any():
        raise EncodingRefused  # ``nan`` written out: the exact encoder says which
    if number_rules(attribute, values, missing).mask.any():
        raise EncodingRefused  # a broken rule: the exact encoder says which
    values[missing] = np.nan
    return Column(attribute, values, None, unknown, not_applicable)


def encode_series(attribute: Attribute, series: pd.Series, rows: np.ndarray) -> Column:
    """Encode a DataFrame column found at ``rows``; categoricals and Arrow strings of
    numbers are converted without a Python object per value, anything else (or an error,
    to name its row) as :func:`encode_values` does."""
    try:
        if isinstance(series.dtype, pd.CategoricalDtype) and not attribute.is_numeric:
            codes = np.asarray(series.array.codes)  # NaN (-1): unknown, as in an object column
            categories = list(series.array.categories.astype(object))
            unknown_coded = np.where(codes < 0, len(categories), codes)
            return encode_distinct(attribute, unknown_coded, categories)
        if attribute.is_numeric and isinstance(series.dtype, pd.StringDtype):
            return encode_numeric_text(attribute, series)
    except (EncodingRefused, ImportError):
        pass
    return encode_values(attribute, series.to_numpy(), rows, "<DataFrame>", "row")
