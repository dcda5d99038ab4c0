"""Hostile inputs found by the seventh pass's attack (each failed before its fix)."""

import numbers

import numpy as np
import pandas as pd
import pytest

from xplique_ext.commons.correlations import batched_pearson, batched_spearman
from xplique_ext.commons.params import Interval, check_param
from xplique_ext.commons.resize import area_downsample
from xplique_ext.commons.uncertainty import holm
from xplique_ext.rules import Dataset


@pytest.mark.parametrize("fn", [batched_pearson, batched_spearman])
def test_correlations_refuse_rows_that_numpy_would_broadcast(fn):
    a, b = np.array([[1.0, 2, 3], [3, 1, 2]]), np.array([[1.0, 2, 4]])
    with pytest.raises(ValueError, match="`a` and `b` must have the same shape"):
        fn(a, b)  # was [0.98, -0.33]: row 0 of b correlated with both rows of a
    with pytest.raises(ValueError, match="`a` and `b` must have the same shape"):
        fn(a, a[:, :2])


@pytest.mark.parametrize("fn", [batched_pearson, batched_spearman])
@pytest.mark.parametrize("bad", [np.array([1.0, 2.0]), np.ones((2, 3, 4))])
def test_correlations_name_a_wrong_rank(fn, bad):
    with pytest.raises(ValueError, match=r"`a` must be an array of shape \(N, M\)"):
        fn(bad, bad)  # was numpy's AxisError / einsum error


def test_correlations_unchanged_on_valid_rows():
    a = np.array([[1, 2, 4], [3, 1, 2]])  # integers are welcome
    b = np.array([[2.0, 3.0, 7.0], [1.0, 2.0, 3.0]])
    np.testing.assert_allclose(
        batched_pearson(a, b), [np.corrcoef(a[i], b[i])[0, 1] for i in range(2)]
    )
    np.testing.assert_allclose(batched_spearman(a, b), [1.0, -0.5])


@pytest.mark.parametrize(
    "bad, error",
    [(["a"], TypeError), ({"a": 0.1}, TypeError), (None, TypeError), ([True, False], TypeError)],
)
def test_holm_names_its_parameter(bad, error):
    with pytest.raises(error, match="`p_values`"):
        holm(bad)  # were numpy's "could not convert", float() errors, array(nan), [1, 0]
    np.testing.assert_allclose(holm([0.01, 0.04, 0.03]), [0.03, 0.06, 0.06])


def test_real_interval_names_an_int_beyond_the_float_range():
    with pytest.raises(ValueError, match="`p` must be finite"):
        check_param(10**400, "p", [Interval(numbers.Real, 0, None)])  # was OverflowError


@pytest.mark.parametrize(
    "maps, size, error, name",
    [
        (np.ones((8, 8)), (4, 4), ValueError, "maps"),
        (np.ones((1, 8, 8, 1)), (4, 4), ValueError, "maps"),
        (np.ones((1, 8, 8)), (0, 0), ValueError, "size"),
        (np.ones((1, 8, 8)), (2.5, 4), TypeError, "size"),
        (np.ones((1, 8, 8)), 4, TypeError, "size"),
        (np.ones((1, 8, 8), bool), (4, 4), TypeError, "maps"),
    ],
)
def test_area_downsample_names_bad_input(maps, size, error, name):
    with pytest.raises(error, match=f"`{name}`"):  # were OpenCV errors, unpacking errors
        area_downsample(maps, size)


@pytest.mark.parametrize("dtype", [np.int64, np.float16, np.float32])
def test_area_downsample_takes_any_real_dtype_and_keeps_mass(dtype):
    maps = np.arange(64).reshape(1, 8, 8).astype(dtype)  # int64, float16 were OpenCV errors
    out = area_downsample(maps, (4, 4))
    assert out.shape == (1, 4, 4) and np.isclose(out.sum(), maps.astype(float).sum())
    assert np.array_equal(area_downsample(maps.tolist(), (4, 4)), out)


@pytest.mark.parametrize(
    "a, b, error, name",
    [
        (None, None, TypeError, "`a_groups`"),
        ("ab", "cd", TypeError, "`a_groups`"),
        ([[np.nan, 0.2, 0.1]], [[0.5, 0.6, 0.5]], ValueError, r"`a_groups\[0\]`"),
        ([[0.5, 0.6, 0.5]], [[np.inf, 0.2, 0.1]], ValueError, r"`b_groups\[0\]`"),
        ([["a", "b"]], [[0.1, 0.2]], TypeError, r"`a_groups\[0\]`"),
    ],
)
def test_conjunct_pvalues_names_bad_groups(a, b, error, name):
    from xplique_ext.metrics.percy import conjunct_pvalues

    with pytest.raises(error, match=name):  # were len() / float() errors, or a silent NaN
        conjunct_pvalues(a, b)


def test_from_frame_names_repeated_columns():
    frame = pd.DataFrame([[1.0, 2.0, "a"]], columns=["x", "x", "c"])
    for kwargs in ({}, {"class_name": "c"}):
        with pytest.raises(ValueError, match=r"`frame` must have distinct column names.*'x'"):
            Dataset.from_frame(frame, **kwargs)  # was AttributeError: no attribute 'dtype'


@pytest.mark.parametrize("features", [np.array([["a", "b"]]), np.array([[1j, 1.0]])])
def test_from_arrays_names_non_real_features(features):
    with pytest.raises(TypeError, match="`features` must hold real numbers"):
        Dataset.from_arrays(features, np.array(["a"]))  # were float() error / imaginary dropped
    data = Dataset.from_arrays(np.array([[1, None]], dtype=object), np.array(["a"]))
    assert np.isnan(data.columns["x1"].values[0])  # None stays an unknown value
