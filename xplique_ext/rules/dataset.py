"""The data model of the examples rules are evaluated on: :class:`Dataset`.

Whatever the source (a ``.data`` file read by :mod:`~xplique_ext.rules.datafile`, a
DataFrame, arrays, a Dask partition), a :class:`Dataset` stores every attribute as an
encoded :class:`~xplique_ext.rules.encoding.Column`; the rules on values (what a missing
value, a number, a date, a time and a boolean are) live in
:mod:`~xplique_ext.rules.encoding`, once for every reader.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Dict, Optional, Sequence, Union

import numpy as np
import pandas as pd

from ..commons.params import STRING, ArrayLike, InstanceOf, check_param, validate_params
from .encoding import NOT_APPLICABLE, UNKNOWN, Column, encode_series
from .names import Attribute, Names

__all__ = ["Column", "Dataset"]


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
                a.name: encode_series(a, frame[a.name], rows)
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
        if feature_names is None:
            feature_names = [f"x{i}" for i in range(features.shape[1])]
        feature_names = [str(f) for f in feature_names]
        if len(feature_names) != features.shape[1]:
            raise ValueError(
                f"`feature_names` must have {features.shape[1]} names, got {len(feature_names)}"
            )
        # real numbers (None, NaN: unknown) or their strings; a complex number would lose
        # its imaginary part: its cast must be safe (and fails)
        casting = "safe" if features.dtype.kind == "c" else "unsafe"
        try:
            frame = pd.DataFrame(
                {
                    f: features[:, i].astype(float, casting=casting)
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
            if names is None and y.dtype.kind != "f":
                y = y.astype(str)  # a nominal class of the labels as text
            frame[class_name] = y
        if names is None:
            attributes = [Attribute(f, "real") for f in feature_names]
            declared_class = None
            if labels is not None:
                attributes.append(_class_of_labels(class_name, frame[class_name]))
                declared_class = class_name
            names = Names(attributes, declared_class, file="<arrays>")
        return cls.from_frame(frame, names)


def _class_of_labels(name: str, labels: pd.Series) -> Attribute:
    """The class of ``labels``: ``real`` for floating point numbers, else nominal with the
    labels met as its values."""
    if labels.dtype.kind == "f":
        return Attribute(name, "real")
    return Attribute(name, "nominal", tuple(sorted(set(labels))))
