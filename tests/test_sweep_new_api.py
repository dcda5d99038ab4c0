"""Hostile inputs to the entry points that landed with the uncertainty / comparison /
text / rule-learner work (adversarial sweep): each must raise a clear error naming the
parameter, or give a documented NaN with its reason, never a raw crash or a wrong
number."""

import numpy as np
import pytest


def test_mufidelity_huge_subset_counts_are_refused():
    import keras

    from xplique_ext.metrics import MuFidelity

    x = np.random.default_rng(0).random((2, 8, 8, 1)).astype("float32")
    model = keras.Sequential(
        [keras.Input((8, 8, 1)), keras.layers.Flatten(), keras.layers.Dense(1)]
    )
    for key, value in (("nb_samples", 10**12), ("max_samples", 10**12)):
        extra = {"nb_samples": "auto"} if key == "max_samples" else {}
        with pytest.raises(ValueError, match=rf"`{key}` must be in \[\d+, 1000000\]"):
            MuFidelity(model, x, np.ones(2), grid_size=None, **{**extra, key: value})
    # within the cap but too large a pool for memory (10**6 subsets x 576 cells):
    # refused before allocation
    x = np.random.default_rng(0).random((2, 24, 24, 1)).astype("float32")
    model = keras.Sequential(
        [keras.Input((24, 24, 1)), keras.layers.Flatten(), keras.layers.Dense(1)]
    )
    metric = MuFidelity(model, x, np.ones(2), grid_size=None, nb_samples=10**6)
    with pytest.raises(ValueError, match=r"`nb_samples` x cells must be at most"):
        metric.evaluate(x[..., 0])
    metric = MuFidelity(model, x, np.ones(2), grid_size=None, nb_samples="auto", max_samples=10**6)
    with pytest.raises(ValueError, match=r"`max_samples` x cells must be at most"):
        metric.details(x[..., 0])
