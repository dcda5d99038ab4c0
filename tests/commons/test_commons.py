import numpy as np
import pytest
from scipy.stats import pearsonr, spearmanr

from xplique_ext.commons import (
    batched_pearson,
    batched_spearman,
    check_choice,
    check_finite,
    check_float,
    check_int,
    make_rng,
    seed_to_int,
    to_numpy,
)


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


def test_make_rng_is_local_and_reproducible():
    state = np.random.get_state()[1].copy()
    assert make_rng(3).random() == make_rng(3).random()
    np.testing.assert_array_equal(np.random.get_state()[1], state)
    assert seed_to_int(5) == 5 and seed_to_int(None) >= 0


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda: check_int(1.5, "n"), TypeError, r"`n` must be an integer, got 1.5"),
        (lambda: check_int(True, "n"), TypeError, "`n` must be an integer"),
        (lambda: check_int(1, "n", minimum=2), ValueError, r"`n` must be >= 2, got 1"),
        (lambda: check_float(1.5, "p", low=0, high=1, high_inclusive=False), ValueError,
         r"`p` must be in \[0, 1\), got 1.5"),
        (lambda: check_float("a", "p"), TypeError, "`p` must be a real number"),
        (lambda: check_choice("x", "mode", ["a", "b"]), ValueError,
         r"`mode` must be one of \['a', 'b'\], got 'x'"),
        (lambda: check_finite(np.array([1.0, np.nan]), "phi"), ValueError,
         "`phi` must be an array of finite values only, got 1 NaN and 0 inf"),
        (lambda: to_numpy(object(), "x"), TypeError, "`x` must be a NumPy array"),
    ],
)
def test_validation_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_to_numpy_does_not_copy_arrays():
    x = np.zeros(3)
    assert to_numpy(x, "x") is x


def test_cell_permutations_depend_on_content_and_seed_only(rng):
    from xplique_ext.commons import cell_permutations

    x = rng.random((6, 5, 5, 3), dtype=np.float32)
    perms = cell_permutations(x, 25, seed=1)
    assert perms.shape == (6, 25)
    np.testing.assert_array_equal(np.sort(perms, axis=1), np.tile(np.arange(25), (6, 1)))
    # same input, same permutation, at any position and in any batch
    np.testing.assert_array_equal(cell_permutations(x[[4, 1]], 25, seed=1), perms[[4, 1]])
    # different inputs or seeds give different permutations
    assert len({tuple(p) for p in perms}) == 6
    assert not np.array_equal(cell_permutations(x, 25, seed=2), perms)
