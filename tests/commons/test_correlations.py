"""The batched Spearman and Pearson of ``commons.correlations`` against scipy.stats.

We keep our own because it is one vectorised pass over all rows (scipy.stats.spearmanr /
pearsonr take one pair of vectors, or return the full cross-correlation matrix); these
tests hold it to scipy's numbers, ties, integer inputs, NaN and constant rows included.
"""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy import stats
from scipy.stats import pearsonr, spearmanr

from xplique_ext.commons.correlations import batched_pearson, batched_spearman


def _scipy_rows(fn, a, b):
    with warnings.catch_warnings():  # scipy warns on constant rows; NaN is what we compare
        warnings.simplefilter("ignore", stats.ConstantInputWarning)
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.array([fn(x, y).statistic for x, y in zip(a, b)], dtype=np.float64)


def _assert_same(ours, theirs, atol=1e-12):
    assert ours.shape == theirs.shape
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(theirs))
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=atol, equal_nan=True)


@pytest.mark.parametrize(
    "n, m, levels", [(50, 2, 3), (40, 3, 2), (64, 17, 4), (20, 200, 5), (30, 64, None)]
)
def test_random_rows_with_ties_match_scipy(n, m, levels):
    rng = np.random.default_rng(n * 1000 + m)
    if levels is None:  # continuous, correlated
        a = rng.normal(size=(n, m))
        b = 0.5 * a + rng.normal(size=(n, m))
    else:  # few distinct values: ties everywhere, some rows constant
        a = rng.integers(0, levels, size=(n, m)).astype(np.float64)
        b = rng.integers(0, levels, size=(n, m)).astype(np.float64)
    _assert_same(batched_pearson(a, b), _scipy_rows(stats.pearsonr, a, b))
    _assert_same(batched_spearman(a, b), _scipy_rows(stats.spearmanr, a, b))


def test_constant_rows_nan_and_integers():
    rng = np.random.default_rng(0)
    a = rng.integers(0, 5, size=(6, 9))  # integer dtype
    b = rng.integers(0, 5, size=(6, 9))
    a[1] = 3
    b[4] = -2
    for ours, theirs in ((batched_pearson, stats.pearsonr), (batched_spearman, stats.spearmanr)):
        r = ours(a, b)
        assert np.isnan(r[[1, 4]]).all() and np.isfinite(np.delete(r, [1, 4])).all()
        _assert_same(r, _scipy_rows(theirs, a, b))


def test_nan_rows_propagate_like_scipy():
    rng = np.random.default_rng(1)
    a = rng.normal(size=(4, 12))
    b = rng.normal(size=(4, 12))
    a[2, 5] = np.nan
    for ours, theirs in ((batched_pearson, stats.pearsonr), (batched_spearman, stats.spearmanr)):
        r = ours(a, b)
        assert np.isnan(r[2]) and np.isfinite(np.delete(r, 2)).all()
        _assert_same(r, _scipy_rows(theirs, a, b))


def test_large_offset_keeps_precision():
    """Centring before the products: a mean of 1e8 does not eat the digits."""
    rng = np.random.default_rng(2)
    a = 1e8 + rng.normal(size=(5, 40))
    b = a + rng.normal(size=(5, 40))
    _assert_same(batched_pearson(a, b), _scipy_rows(stats.pearsonr, a, b), atol=1e-8)


def test_inputs_not_modified():
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=(3, 8)), rng.integers(0, 3, size=(3, 8)).astype(np.float64)
    a0, b0 = a.copy(), b.copy()
    batched_pearson(a, b)
    batched_spearman(a, b)
    np.testing.assert_array_equal(a, a0)
    np.testing.assert_array_equal(b, b0)


@settings(max_examples=60, deadline=None)
@given(
    hnp.arrays(
        np.int64,
        st.tuples(st.integers(1, 6), st.integers(2, 12)).map(lambda s: (2,) + s),
        elements=st.integers(-3, 3),
    )
)
def test_property_small_integers_match_scipy(ab):
    a, b = ab
    _assert_same(batched_pearson(a, b), _scipy_rows(stats.pearsonr, a, b), atol=1e-10)
    _assert_same(batched_spearman(a, b), _scipy_rows(stats.spearmanr, a, b), atol=1e-10)


# ------------------------------------------------------------ shapes and validation
def test_batched_correlations_match_scipy(rng):
    a = rng.normal(size=(7, 30))
    b = a + rng.normal(size=(7, 30))
    b[0, :10] = b[0, 10]  # ties
    expected_p = [pearsonr(x, y)[0] for x, y in zip(a, b)]
    expected_s = [spearmanr(x, y)[0] for x, y in zip(a, b)]
    np.testing.assert_allclose(batched_pearson(a, b), expected_p, atol=1e-12)
    np.testing.assert_allclose(batched_spearman(a, b), expected_s, atol=1e-12)


def test_batched_correlation_constant_row_is_nan(rng):
    a = rng.normal(size=(3, 5))
    b = rng.normal(size=(3, 5))
    a[1] = 0.3
    r = batched_spearman(a, b)
    assert np.isnan(r[1]) and np.isfinite(r[[0, 2]]).all()


@pytest.mark.parametrize("fn", [batched_pearson, batched_spearman])
def test_correlations_refuse_rows_that_numpy_would_broadcast(fn):
    a, b = np.array([[1.0, 2, 3], [3, 1, 2]]), np.array([[1.0, 2, 4]])
    with pytest.raises(ValueError, match="`a` and `b` must have the same shape"):
        fn(a, b)  # NumPy would correlate row 0 of b with both rows of a
    with pytest.raises(ValueError, match="`a` and `b` must have the same shape"):
        fn(a, a[:, :2])


@pytest.mark.parametrize("fn", [batched_pearson, batched_spearman])
@pytest.mark.parametrize("bad", [np.array([1.0, 2.0]), np.ones((2, 3, 4))])
def test_correlations_name_a_wrong_rank(fn, bad):
    with pytest.raises(ValueError, match=r"`a` must be an array of shape \(N, M\)"):
        fn(bad, bad)  # not NumPy's AxisError or einsum error


def test_correlations_unchanged_on_valid_rows():
    a = np.array([[1, 2, 4], [3, 1, 2]])  # integers are welcome
    b = np.array([[2.0, 3.0, 7.0], [1.0, 2.0, 3.0]])
    np.testing.assert_allclose(
        batched_pearson(a, b), [np.corrcoef(a[i], b[i])[0, 1] for i in range(2)]
    )
    np.testing.assert_allclose(batched_spearman(a, b), [1.0, -0.5])
