"""``commons.random``: local generators, concrete seeds, and one cell permutation per input
drawn from the seed and the input's values only."""

import numpy as np

from xplique_ext.commons import make_rng, seed_to_int


def test_make_rng_is_local_and_reproducible():
    state = np.random.get_state()[1].copy()
    assert make_rng(3).random() == make_rng(3).random()
    np.testing.assert_array_equal(np.random.get_state()[1], state)
    assert seed_to_int(5) == 5 and seed_to_int(None) >= 0


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
