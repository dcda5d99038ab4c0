"""Fixtures shared by the tests of the model-based metrics."""

import numpy as np
import pytest

from tests.conftest import tiny_cnn


@pytest.fixture(scope="module")
def case():
    """A small CNN with 9 random 12x12x3 inputs, class ids and random explanations."""
    rng = np.random.default_rng(2)
    model = tiny_cnn((12, 12, 3), classes=3, seed=2)
    x = rng.random((9, 12, 12, 3), dtype=np.float32)
    y = rng.integers(0, 3, 9)
    phi = rng.normal(size=(9, 12, 12)).astype(np.float32)
    return model, x, y, phi


@pytest.fixture
def x64():
    """Four random 6x6x1 float64 inputs."""
    return np.random.default_rng(0).random((4, 6, 6, 1))
