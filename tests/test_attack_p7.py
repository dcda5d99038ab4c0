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
    np.testing.assert_allclose(batched_pearson(a, b), [np.corrcoef(a[i], b[i])[0, 1]
                                                       for i in range(2)])
    np.testing.assert_allclose(batched_spearman(a, b), [1.0, -0.5])


@pytest.mark.parametrize("bad, error", [(["a"], TypeError), ({"a": 0.1}, TypeError),
                                        (None, TypeError), ([True, False], TypeError)])
def test_holm_names_its_parameter(bad, error):
    with pytest.raises(error, match="`p_values`"):
        holm(bad)  # were numpy's "could not convert", float() errors, array(nan), [1, 0]
    np.testing.assert_allclose(holm([0.01, 0.04, 0.03]), [0.03, 0.06, 0.06])


def test_real_interval_names_an_int_beyond_the_float_range():
    with pytest.raises(ValueError, match="`p` must be finite"):
        check_param(10**400, "p", [Interval(numbers.Real, 0, None)])  # was OverflowError
