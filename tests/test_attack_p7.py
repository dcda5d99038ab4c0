"""Hostile inputs found by the seventh pass's attack (each failed before its fix)."""

import numpy as np
import pytest


def test_metric_scores_name_targets_of_the_wrong_shape():
    import keras

    from xplique_ext.metrics import MuFidelity

    x = np.random.default_rng(0).random((5, 8, 8, 1)).astype(np.float32)
    model = keras.Sequential(
        [keras.Input((8, 8, 1)), keras.layers.Flatten(), keras.layers.Dense(3)]
    )
    metric = MuFidelity(model, x, np.arange(5) % 3, grid_size=4, nb_samples=20, seed=1)
    for bad in (np.zeros((5, 8, 8)), np.eye(3)[:2], np.array(1)):
        with pytest.raises(ValueError, match="`y` must hold the targets of the 5 inputs"):
            metric.scores(x, bad)  # (5, 8, 8) was TensorFlow's InvalidArgumentError
    with pytest.raises(ValueError, match="`y` of shape"):
        metric.scores(x, np.eye(4)[np.arange(5) % 4])
    one_hot = np.eye(3, dtype=np.float32)[np.arange(5) % 3]
    expected = (model(x).numpy() * one_hot).sum(axis=1)
    np.testing.assert_allclose(metric.scores(x, one_hot), expected, rtol=1e-5)
    np.testing.assert_allclose(metric.scores(x, np.arange(5) % 3), expected, rtol=1e-5)


def test_metric_scores_of_a_one_output_model_with_targets_b():
    import keras

    from xplique_ext.metrics import MuFidelity

    x = np.random.default_rng(0).random((4, 8, 8, 1)).astype(np.float32)
    model = keras.Sequential(
        [keras.Input((8, 8, 1)), keras.layers.Flatten(), keras.layers.Dense(1)]
    )
    metric = MuFidelity(model, x, np.ones(4), grid_size=4, nb_samples=20, seed=1)
    y = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    # was f(x)_i * sum(y): (B, 1) outputs times (B,) targets broadcast to (B, B)
    np.testing.assert_allclose(metric.scores(x, y), model(x).numpy().ravel() * y, rtol=1e-5)
