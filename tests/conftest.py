"""Shared fixtures: tiny Keras models built in code (nothing is downloaded)."""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import pytest  # noqa: E402


def linear_model(shape, weights=None, outputs=1):
    """f(x) = sum(w * x) (per output), as a Keras model without bias."""
    import keras

    size = int(np.prod(shape))
    model = keras.Sequential(
        [
            keras.Input(shape),
            keras.layers.Flatten(),
            keras.layers.Dense(outputs, use_bias=False),
        ]
    )
    w = np.ones((size, outputs), np.float32) if weights is None else weights
    model.layers[-1].set_weights([np.asarray(w, np.float32).reshape(size, outputs)])
    return model


def tiny_cnn(shape=(16, 16, 3), classes=3, seed=0):
    """A small random CNN (deterministic weights from ``seed``)."""
    import keras

    init = keras.initializers.GlorotUniform(seed=seed)
    return keras.Sequential(
        [
            keras.Input(shape),
            keras.layers.Conv2D(4, 3, activation="relu", kernel_initializer=init),
            keras.layers.MaxPooling2D(2),
            keras.layers.Flatten(),
            keras.layers.Dense(classes, kernel_initializer=init),
        ]
    )


@pytest.fixture
def rng():
    return np.random.default_rng(0)


@pytest.fixture(scope="session")
def cnn():
    return tiny_cnn()
