"""pandas inputs pair by their index, one way everywhere
(:mod:`xplique_ext.commons.pandas_inputs`); the functions that pair inputs check it in
their own test files (compare, FiRe, the PERCY agreements, score_rules)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from xplique_ext.commons.pandas_inputs import align_by_index, paired_by_index, pandas_index


def test_align_by_index_keeps_alike_indexes_and_arrays_and_refuses_others():
    a = pd.Series([1.0, 2.0], index=["x", "y"])
    same = pd.Series([3.0, 4.0], index=["x", "y"])
    values = {"a": a, "b": same, "c": np.array([5.0, 6.0])}
    aligned = align_by_index(values, "scores")
    assert list(aligned) == ["a", "b", "c"] and all(aligned[k] is values[k] for k in values)
    reordered = pd.Series([4.0, 3.0], index=["y", "x"])
    with pytest.raises(ValueError, match="`scores` must score every item in the same order"):
        align_by_index({"a": a, "b": reordered}, "scores")
    other = pd.Series([3.0, 4.0], index=["x", "z"])
    with pytest.raises(ValueError, match="the pandas index of 'b' differs from that of 'a'"):
        align_by_index({"a": a, "b": other}, "scores")
    assert align_by_index({}, "scores") == {}
    assert pandas_index(np.zeros(2)) is None and pandas_index(a) is a.index


def test_paired_by_index_checks_the_named_arguments_only():
    @paired_by_index("a", "b")
    def add(a, b, c=None):
        return np.asarray(a) + np.asarray(b)

    x = pd.Series([1.0, 2.0], index=["x", "y"])
    y = pd.Series([10.0, 20.0], index=["y", "x"])
    with pytest.raises(ValueError, match="`b` must be indexed as `a`"):
        add(x, y)
    with pytest.raises(ValueError, match="`b` must be indexed as `a`"):
        add(b=y, a=x)
    np.testing.assert_array_equal(add(x, y.reindex(x.index), c=y), [21.0, 12.0])
    np.testing.assert_array_equal(add(x, np.array([1.0, 1.0])), [2.0, 3.0])
    with pytest.raises(TypeError):  # the function's own error for a bad call
        add(x)
