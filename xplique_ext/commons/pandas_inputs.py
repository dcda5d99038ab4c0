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
>>> import pandas as pd
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

from typing import Any, Dict, Mapping

import pandas as pd

__all__ = ["align_by_index", "pandas_index"]


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
    indexes = {key: pandas_index(value) for key, value in aligned.items()}
    indexes = {key: index for key, index in indexes.items() if index is not None}
    if not indexes:
        return aligned
    first = next(iter(indexes))
    for key, index in indexes.items():
        if not index.equals(indexes[first]):
            raise ValueError(
                f"`{param}` must score every item in the same order: the pandas index of "
                f"{key!r} differs from that of {first!r} (pandas inputs pair by their "
                "index: align them, e.g. with .reindex, or pass arrays to pair by position)"
            )
    return aligned
