"""The data model of the examples rules are evaluated on: :class:`Column`, :class:`Dataset`
and the encoding of values (section 2.3 of the report).

Whatever the source (a ``.data`` file read by :mod:`~xplique_ext.rules.datafile`, a
DataFrame, arrays, a Dask partition), a :class:`Dataset` stores every attribute column in
an encoded form made for vectorised rule evaluation: ``float64`` values for ``integer``,
``real``, ``date`` (days since 1970-01-01) and ``time`` (seconds) attributes, integer codes
for the others, plus the masks of *unknown* (``?``) and *not-applicable* (``!``) values.

The rules on values live here, once, for every reader: what a missing value is, what a
number, a date, a time and a boolean are, that a number is finite, that an ``integer`` is
whole, that a negative zero reads as 0, and that a nominal value is in its domain.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Dict, Optional, Sequence, Tuple, Union

import numpy as np
import pandas as pd

from ..commons.params import STRING, ArrayLike, InstanceOf, check_param, validate_params
from .errors import DataParseError
from .names import Attribute, Names

__all__ = ["Column", "Dataset"]

UNKNOWN = "?"
NOT_APPLICABLE = "!"
_UNKNOWN_CODE = -1
_NA_CODE = -2
_TRUE = {"true", "t", "yes", "y", "1"}
_FALSE = {"false", "f", "no", "n", "0"}


class _Refused(Exception):
    """Internal: a fast path cannot encode a column exactly (a slower one, which names the
    line or row of any error, takes over)."""


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

    @validate_params(
        {
            "names": [InstanceOf(Names, description="a Names object")],
            "columns": [InstanceOf(dict, Mapping, description="a dict of Column")],
            "file": [STRING, None],
        }
    )
    def __init__(self, names: Names, columns: Dict[str, Column], file: Optional[str] = None):
        self.names = names
        self.columns = dict(columns)
        self.file = file
        for name, column in self.columns.items():  # one per attribute, not per example
            check_param(column, f"columns[{name!r}]", [InstanceOf(Column, description="a Column")])
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
        return column.values.copy() if column.categories is None else column.decoded(missing)

    def take(self, index: Union[np.ndarray, Sequence[int]]) -> Dataset:
        """The examples at ``index`` (in that order)."""
        return self._select(np.asarray(index))

    def _select(self, index: Union[np.ndarray, slice], names: Optional[Sequence[str]] = None):
        """Internal: the examples at ``index`` (views for a slice), restricted to the
        columns ``names`` (all by default)."""
        out = Dataset.__new__(Dataset)
        out.names = self.names
        out.file = self.file
        names = self.columns if names is None else names
        out.columns = {k: self.columns[k].take(index) for k in names}
        out.n_examples = len(range(self.n_examples)[index] if isinstance(index, slice) else index)
        return out

    def to_frame(self, missing: str = UNKNOWN) -> pd.DataFrame:
        """The examples as a DataFrame, with ``?``/``!`` strings where values are missing
        (pass ``missing=None`` to get NaN/None for both)."""
        data = {}
        for name, column in self.columns.items():
            values = column.decoded(None)
            if missing is None and column.categories is None:
                values = values.astype(float)
            elif missing is not None:
                values[column.unknown] = UNKNOWN
                values[column.not_applicable] = NOT_APPLICABLE
            data[name] = values
        return pd.DataFrame(data)

    @classmethod
    @validate_params(
        {
            "frame": [InstanceOf(pd.DataFrame, description="a pandas DataFrame")],
            "names": [InstanceOf(Names, description="a Names object"), None],
            "class_name": [STRING, None],
        }
    )
    def from_frame(
        cls, frame: pd.DataFrame, names: Optional[Names] = None, *, class_name: Optional[str] = None
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
        if frame.columns.has_duplicates:  # frame[name] would be a DataFrame
            repeated = frame.columns[frame.columns.duplicated()].unique().tolist()
            raise ValueError(f"`frame` must have distinct column names, got {repeated} repeated")
        if names is None:
            names = Names.infer(frame, class_name=class_name)
        elif class_name is not None and class_name != names.class_name:
            raise ValueError(
                f"`class_name` {class_name!r} differs from the class of `names` "
                f"({names.class_name!r})"
            )
        if extra := [c for c in frame.columns if c not in names.column_names]:
            raise ValueError(f"`frame` has columns not declared in `names`: {extra}")
        if missing := [c for c in names.feature_names if c not in frame.columns]:
            raise ValueError(f"`frame` lacks the declared columns {missing}")
        rows = np.arange(1, len(frame) + 1)
        return cls(
            names,
            {
                a.name: _encode_series(a, frame[a.name], rows)
                for a in names.columns
                if a.name in frame.columns
            },
        )

    @classmethod
    @validate_params(
        {
            "features": [ArrayLike(kind="any", ndim=2, shapes="(N, F)", batch_hint=False)],
            "labels": [ArrayLike(kind="any"), None],  # its length is checked against `features`
            "feature_names": "no_validation",  # F names, any sequence: checked below
            "class_name": [STRING],
            "names": [InstanceOf(Names, description="a Names object"), None],
        }
    )
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
        default = [f"x{i}" for i in range(features.shape[1])]
        feature_names = [str(f) for f in (default if feature_names is None else feature_names)]
        if len(feature_names) != features.shape[1]:
            raise ValueError(
                f"`feature_names` must have {features.shape[1]} names, got {len(feature_names)}"
            )
        try:  # real numbers (None, NaN: unknown) or their strings; complex ones lose a part
            frame = pd.DataFrame(
                {
                    f: features[:, i].astype(
                        float, casting="unsafe" if features.dtype.kind != "c" else "safe"
                    )
                    for i, f in enumerate(feature_names)
                }
            )
        except (TypeError, ValueError):
            raise TypeError(
                f"`features` must hold real numbers, got dtype {features.dtype}: "
                "non-numeric or complex values"
            ) from None
        if labels is not None:
            y = np.asarray(labels)
            if y.shape != (features.shape[0],):
                raise ValueError(f"`labels` must have shape ({features.shape[0]},), got {y.shape}")
            frame[class_name] = y if names is not None or y.dtype.kind == "f" else y.astype(str)
        if names is None:
            attributes = [Attribute(f, "real") for f in feature_names]
            if labels is not None:
                y = frame[class_name]
                attributes.append(
                    Attribute(class_name, "real")
                    if y.dtype.kind == "f"
                    else Attribute(class_name, "nominal", tuple(sorted(set(y))))
                )
            names = Names(attributes, class_name if labels is not None else None, file="<arrays>")
        return cls.from_frame(frame, names)


# -- encoding: the rules on values, for every reader --------------------------------------
def _encode(
    attribute: Attribute,
    raw: np.ndarray,
    lines: np.ndarray,
    file: str = "<DataFrame>",
    where: str = "line",
) -> Column:
    """Encode the values ``raw`` (strings, or numbers from a DataFrame) of one attribute,
    found at ``lines`` of ``file`` (or at rows of a DataFrame, ``where="row"``)."""
    raw = np.asarray(raw)
    if raw.dtype.kind in "fiub":
        unknown = np.isnan(raw) if raw.dtype.kind == "f" else np.zeros(raw.shape, bool)
        not_applicable, text = np.zeros(raw.shape, bool), None
    else:
        series = pd.Series(raw, dtype=object)
        text = series.where(series.notna(), UNKNOWN).astype(str).str.strip().to_numpy(dtype=object)
        unknown, not_applicable = text == UNKNOWN, text == NOT_APPLICABLE  # NaN, None: unknown
    missing = unknown | not_applicable

    def check(bad: np.ndarray, message: str) -> None:
        """Raise the error ``message`` at the first value of the mask ``bad``, if any."""
        if not bad.any():
            return
        first = int(np.flatnonzero(bad)[0])
        row = f" (row {lines[first]} of the DataFrame)" if where == "row" else ""
        raise DataParseError(
            f"{message} for attribute {attribute.name!r}{row}",
            file=file,
            line=None if row else int(lines[first]),
            text=str(raw[first] if text is None else text[first]),
        )

    if attribute.type in ("integer", "real", "date", "time"):
        if text is None and attribute.type in ("date", "time"):
            check(~missing, f"a {attribute.type} must be written as text, got a number")
        values, message = (
            (raw.astype(np.float64), "")
            if text is None
            else _parse_numbers(
                attribute.type, pd.Series(np.where(missing, None, text), dtype=object)
            )
        )
        check(np.isnan(values) & ~missing, message)
        check(*_number_rules(attribute, values, missing))
        values[missing] = np.nan
        return Column(attribute, values, None, unknown, not_applicable)
    if text is None:  # numbers in a DataFrame column of a coded attribute
        text = np.asarray([label_text(v) for v in raw.tolist()], dtype=object)
        text[unknown] = UNKNOWN
    categories = ("true", "false") if attribute.type == "boolean" else attribute.values
    if attribute.type == "boolean":
        lowered = pd.Series(text, dtype=object).str.lower()
        text = np.where(lowered.isin(_TRUE), "true", np.where(lowered.isin(_FALSE), "false", text))
        message = "not a boolean (expected true/false, yes/no or 1/0)"
    elif categories is None:  # an open domain, the values met: none is outside it
        categories, message = tuple(sorted(set(text[~missing]))), ""
    else:
        message = f"value outside the declared domain {list(categories)}"
    codes = pd.Index(list(categories)).get_indexer(np.where(missing, None, text))
    check((codes < 0) & ~missing, message)
    codes = codes.astype(_code_dtype(len(categories)))
    codes[unknown], codes[not_applicable] = _UNKNOWN_CODE, _NA_CODE
    return Column(attribute, codes, tuple(categories), unknown, not_applicable)


def _parse_numbers(kind: str, series: pd.Series) -> Tuple[np.ndarray, str]:
    """The texts of a numeric-like attribute as ``float64`` (NaN where invalid), and the
    message for an invalid one."""
    if kind == "date":
        parsed = pd.to_datetime(series, format="%Y/%m/%d", errors="coerce")
        values = (parsed - pd.Timestamp("1970-01-01")) / pd.Timedelta(days=1)
        message = "invalid date (expected yyyy/mm/dd)"
    elif kind == "time":
        ok = series.str.fullmatch(r"\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?").fillna(False).astype(bool)
        values = pd.to_timedelta(series.where(ok, None), errors="coerce") / pd.Timedelta(seconds=1)
        message = "invalid time (expected hh:mm:ss)"
    else:
        values, message = pd.to_numeric(series, errors="coerce"), "non-numeric value"
    return np.array(values.to_numpy(dtype=np.float64, na_value=np.nan)), message


def _number_rules(
    attribute: Attribute, values: np.ndarray, missing: np.ndarray
) -> Tuple[np.ndarray, str]:
    """The rules on numbers, for every reader: a negative zero reads as 0 (``values`` is
    changed in place), a number is finite, an ``integer`` is whole. Returns the mask of
    the values that break the first broken rule (all False when none is) and its message."""
    values += 0.0  # -0.0 + 0.0 is +0.0; NaN stays NaN
    infinite = np.isinf(values) & ~missing
    if infinite.any() or attribute.type != "integer":
        return infinite, "infinite value"
    return ~(missing | np.isnan(values) | (values == np.round(values))), "non-integer value"


def _code_dtype(n_categories: int):
    """The smallest integer type that holds the codes of ``n_categories`` categories."""
    if n_categories < 120:
        return np.int8
    if n_categories < 32000:
        return np.int16
    return np.int32


def label_text(value: Any) -> str:
    """A label or a number as text, integral floats without their ``.0`` (``1.0`` -> ``"1"``)."""
    whole = isinstance(value, (float, np.floating)) and float(value).is_integer()
    return str(int(value)) if whole else str(value)


@functools.lru_cache(maxsize=256)
def _encode_canonical(attribute: Attribute, canonical: Tuple[str, ...]) -> Column:
    """The distinct values of a column, encoded once (blocks of one file repeat them)."""
    try:
        return _encode(attribute, np.array(canonical, dtype=object), np.zeros(len(canonical)))
    except DataParseError:
        raise _Refused from None


def _encode_distinct(attribute: Attribute, codes: np.ndarray, categories: Sequence) -> Column:
    """Encode a column given as ``codes`` into its distinct texts ``categories`` (the code
    ``len(categories)`` meaning unknown): the distinct values are checked and encoded once
    (in sorted order, so that blocks that meet the same values in another order share the
    work), then spread over the rows by their codes. Raises :class:`_Refused` on a bad or
    empty value (a slower path names its line)."""
    stripped = [str(c).strip() for c in categories] + [UNKNOWN]
    if "" in stripped:
        raise _Refused
    canonical = tuple(sorted(set(stripped)))
    distinct = _encode_canonical(attribute, canonical)
    position = {value: i for i, value in enumerate(canonical)}
    lookup = np.array([position[value] for value in stripped], dtype=np.intp)

    def spread(table: np.ndarray) -> np.ndarray:
        table = table[lookup]  # all False: zeros, whose pages never written take no memory
        return table.take(codes) if table.any() else np.zeros(len(codes), dtype=table.dtype)

    return Column(
        attribute,
        distinct.values[lookup].take(codes),
        distinct.categories,
        spread(distinct.unknown),
        spread(distinct.not_applicable),
    )


def _encode_series(attribute: Attribute, series: pd.Series, rows: np.ndarray) -> Column:
    """Encode a DataFrame column; categoricals and Arrow strings of numbers are converted
    without a Python object per value, anything else (or an error, to name its row) as
    :func:`_encode` does."""
    try:
        if isinstance(series.dtype, pd.CategoricalDtype) and not attribute.is_numeric:
            codes = np.asarray(series.array.codes)  # NaN (-1): unknown, as in an object column
            categories = list(series.array.categories.astype(object))
            return _encode_distinct(
                attribute, np.where(codes < 0, len(categories), codes), categories
            )
        if attribute.is_numeric and isinstance(series.dtype, pd.StringDtype):
            return _encode_numeric_text(attribute, series)
    except (_Refused, ImportError):
        pass
    return _encode(attribute, series.to_numpy(), rows, "<DataFrame>", "row")


def _encode_numeric_text(attribute: Attribute, series: Any) -> Column:
    """Numbers written as text (an Arrow array read from a ``.data`` file, or a Dask
    partition's Arrow strings), parsed by Arrow (correctly rounded, as pandas' parser),
    ``?`` and ``!`` kept apart. Raises :class:`_Refused` on anything to report."""
    import pyarrow as pa
    import pyarrow.compute as pc

    try:
        array = pa.array(getattr(series, "array", series))  # a Series' values, or Arrow's
        text = pc.utf8_trim_whitespace(array)
        unknown = pc.fill_null(pc.equal(text, UNKNOWN), True)
        not_applicable = pc.fill_null(pc.equal(text, NOT_APPLICABLE), False)
        missing = pc.or_(unknown, not_applicable)
        parsed = pc.cast(pc.if_else(missing, pa.scalar(None, pa.string()), text), pa.float64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, TypeError):
        raise _Refused from None
    values = parsed.to_numpy(zero_copy_only=False).astype(np.float64, copy=True)
    unknown, not_applicable = (
        np.asarray(m.to_numpy(zero_copy_only=False), bool) for m in (unknown, not_applicable)
    )
    missing = unknown | not_applicable
    if np.isnan(values[~missing]).any() or _number_rules(attribute, values, missing)[0].any():
        raise _Refused  # ``nan`` written out, or a broken rule: the exact reader says which
    values[missing] = np.nan
    return Column(attribute, values, None, unknown, not_applicable)
