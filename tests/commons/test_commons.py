import numbers

import numpy as np
import pytest
from scipy.stats import pearsonr, spearmanr

from xplique_ext.commons import batched_pearson, batched_spearman, make_rng, seed_to_int
from xplique_ext.commons.params import ArrayLike, Interval, Options, check_param


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
        (
            lambda: check_param(1.5, "n", [Interval(numbers.Integral, None, None)]),
            TypeError,
            r"`n` must be an integer, got 1.5",
        ),
        (
            lambda: check_param(True, "n", [Interval(numbers.Integral, None, None)]),
            TypeError,
            "`n` must be an integer",
        ),
        (
            lambda: check_param(1, "n", [Interval(numbers.Integral, 2, None)]),
            ValueError,
            r"`n` must be >= 2, got 1",
        ),
        (
            lambda: check_param(1.5, "p", [Interval(numbers.Real, 0, 1, closed="left")]),
            ValueError,
            r"`p` must be in \[0, 1\), got 1.5",
        ),
        (
            lambda: check_param("a", "p", [Interval(numbers.Real, None, None)]),
            TypeError,
            "`p` must be a real number",
        ),
        (
            lambda: check_param("x", "mode", [Options(["a", "b"])]),
            ValueError,
            r"`mode` must be one of \['a', 'b'\], got 'x'",
        ),
        (
            lambda: check_param(np.array([1.0, np.nan]), "phi", [ArrayLike("any", finite=True)]),
            ValueError,
            "`phi` must be an array of finite values only, got 1 NaN and 0 inf",
        ),
        (
            lambda: check_param(object(), "x", [ArrayLike("any")]),
            TypeError,
            "`x` must be a NumPy array",
        ),
    ],
)
def test_validation_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_array_check_does_not_copy_arrays():
    x = np.zeros(3)
    assert check_param(x, "x", [ArrayLike("any")]) is x


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
