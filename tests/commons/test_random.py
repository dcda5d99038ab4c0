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


def test_input_rng_depends_on_seed_and_content_only():
    """One generator per input, from the seed and the input's content: the same values in
    any container or dtype give the same draws; another seed, value or text does not."""
    from xplique_ext.commons.random import input_rng

    def draws(*args):
        return input_rng(*args).random(4)

    image = np.arange(12, dtype=np.float64).reshape(3, 4)
    np.testing.assert_array_equal(draws(7, image), draws(7, image.astype(np.float32)))
    np.testing.assert_array_equal(draws(7, image), draws(7, image.tolist()))
    np.testing.assert_array_equal(draws(7, "a good film"), draws(7, "a good film"))
    assert not np.array_equal(draws(7, image), draws(8, image))
    assert not np.array_equal(draws(7, image), draws(7, image + 1))
    assert not np.array_equal(draws(7, "a good film"), draws(7, "a good film!"))
    # the parts of an input are hashed in order
    assert not np.array_equal(draws(7, image, image.T), draws(7, image.T, image))


def test_cell_permutations_are_those_of_input_rng(rng):
    from xplique_ext.commons import cell_permutations
    from xplique_ext.commons.random import input_rng

    x = rng.random((3, 4, 4), dtype=np.float32)
    for row, perm in zip(x, cell_permutations(x, 16, seed=9)):
        np.testing.assert_array_equal(perm, input_rng(9, row).permutation(16))
