"""How pandas inputs pair up: by their index, one way everywhere.

Several values scored on the same items (explainers' per-input scores, frameworks'
per-sentence PERCY vectors, models' columns) are paired item by item. NumPy arrays and
lists carry no labels: they pair by position. pandas objects carry an index, and pandas
pairs them by it. :func:`align_by_index` is the one place that decides how ours pair:

* pandas values whose indexes are equal pair item by item (by position, which is then
  by label);
* pandas values whose indexes differ (other labels, or the same labels in another
  order) are refused with a ValueError naming the parameter: pairing them by position
  would pair different items without a word, and reordering them silently would hide
  that the caller's tables are not aligned. Align them first (``.reindex``), or pass
  arrays to pair by position;
* arrays and lists pair by position, with each other and with pandas values.

Examples
--------
>>> import numpy as np, pandas as pd
>>> a = pd.Series([1.0, 2.0], index=["x", "y"])
>>> b = pd.Series([20.0, 10.0], index=["y", "x"])
>>> align_by_index({"a": a, "b": b.reindex(a.index)}, "scores")["b"].tolist()
[10.0, 20.0]
>>> align_by_index({"a": a, "b": b}, "scores")
Traceback (most recent call last):
...
ValueError: `scores` must score every item in the same order: the pandas index of 'b' differs from that of 'a' (pandas inputs pair by their index: align them, e.g. with .reindex, or pass arrays to pair by position)
"""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, Dict, Mapping

import pandas as pd

__all__ = ["align_by_index", "pandas_index", "paired_by_index"]


def pandas_index(value: Any):
    """The index of a pandas Series or DataFrame, else None (arrays, lists, tensors)."""
    if isinstance(value, (pd.Series, pd.DataFrame)):
        return value.index
    return None


def align_by_index(values_by_key: Mapping[Any, Any], param: str) -> Dict[Any, Any]:
    """The values of ``values_by_key``, checked to pair item by item: every pandas value
    indexed like the first one.

    Parameters
    ----------
    values_by_key
        Key (an explainer, a framework, a column) -> values scored on the same items:
        arrays, lists (paired by position) or pandas Series / DataFrames (paired by
        index).
    param
        The parameter's name, for errors.

    Returns
    -------
    dict
        The same keys and values, in their order (nothing passed in is modified).

    Raises
    ------
    ValueError
        When two pandas values are not indexed alike (other labels, or the same labels
        in another order): pairing them by position would pair different items.
    """
    aligned = dict(values_by_key)
    mismatch = _first_mismatch(aligned)
    if mismatch is not None:
        key, first = mismatch
        raise ValueError(
            f"`{param}` must score every item in the same order: the pandas index of "
            f"{key!r} differs from that of {first!r} ({_HOW})"
        )
    return aligned


#: How to pair pandas values, for the errors.
_HOW = "pandas inputs pair by their index: align them, e.g. with .reindex, or pass arrays to pair by position"


def _first_mismatch(values_by_key: Mapping[Any, Any]):
    """``(key, first)``: the first key whose pandas value is not indexed as the first
    pandas value, under the key ``first``; None when all are indexed alike."""
    indexes = {key: pandas_index(value) for key, value in values_by_key.items()}
    indexes = {key: index for key, index in indexes.items() if index is not None}
    if not indexes:
        return None
    first = next(iter(indexes))
    for key, index in indexes.items():
        if not index.equals(indexes[first]):
            return key, first
    return None


def paired_by_index(*params: str) -> Callable:
    """Decorator: the arguments ``params`` of the function are paired item by item, so
    their pandas values must be indexed alike (as :func:`align_by_index` decides), or a
    ValueError names the two arguments. Apply it outside ``validate_params``, which turns
    pandas values into arrays.

    Examples
    --------
    >>> @paired_by_index("a", "b")
    ... def add(a, b):
    ...     return np.asarray(a) + np.asarray(b)
    >>> add(pd.Series([1, 2], index=["x", "y"]), pd.Series([10, 20], index=["y", "x"]))
    Traceback (most recent call last):
    ...
    ValueError: `b` must be indexed as `a`: their pandas indexes differ (pandas inputs pair by their index: align them, e.g. with .reindex, or pass arrays to pair by position)
    """

    def decorate(function: Callable) -> Callable:
        signature = inspect.signature(function)

        @functools.wraps(function)
        def checked(*args: Any, **kwargs: Any):
            try:
                arguments = signature.bind(*args, **kwargs).arguments
            except TypeError:  # the function's own call error
                return function(*args, **kwargs)
            mismatch = _first_mismatch({p: arguments[p] for p in params if p in arguments})
            if mismatch is not None:
                name, first = mismatch
                raise ValueError(
                    f"`{name}` must be indexed as `{first}`: their pandas indexes differ ({_HOW})"
                )
            return function(*args, **kwargs)

        return checked

    return decorate
