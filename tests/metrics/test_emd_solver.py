"""The EMD solvers: the sparse multiscale column generation agrees with POT's dense network
simplex, the 128x128 path runs, and a POT solve that stops short is an error."""

import warnings

import cv2
import numpy as np
import ot
import pytest

from xplique_ext.datasets import make_aixi_shape
from xplique_ext.metrics import _emd_solver, emd


def _gt_like(rng, size):
    m = np.zeros((size, size))
    for _ in range(rng.integers(1, 5)):
        r = int(rng.integers(1, size // 5 + 2))
        c = rng.integers(r, size - r, 2)
        cv2.circle(m, (int(c[0]), int(c[1])), r, float(rng.random() + 0.1), -1)
    return m


def test_multiscale_column_generation_equals_dense_on_larger_maps(monkeypatch):
    rng = np.random.default_rng(2)
    gt = _gt_like(rng, 64)
    phi = np.abs(cv2.GaussianBlur(rng.normal(size=(64, 64)), (0, 0), 1.5))
    dense = emd(phi, gt, resize=None, solver="dense")
    # force the sparse solver on every level of the multiscale hierarchy
    monkeypatch.setattr(_emd_solver, "_DENSE_MAX", 0)
    sparse = emd(phi, gt, resize=None, solver="column_generation")
    assert sparse == pytest.approx(dense, abs=1e-10)
    unbalanced = emd(phi, gt, resize=None, normalize=False, solver="column_generation")
    monkeypatch.setattr(_emd_solver, "_DENSE_MAX", 10**12)
    assert unbalanced == pytest.approx(
        emd(phi, gt, resize=None, normalize=False, solver="dense"), abs=1e-10
    )


def test_full_resolution_sparse_versus_dense_runs():
    """Smoke test of the 128x128 path (exactness of the same solver is checked above
    against POT at 32x32 and 64x64; the benchmark times it)."""
    data = make_aixi_shape(2, image_size=128, function="suum", seed=3)
    phi = np.abs(cv2.GaussianBlur(np.random.default_rng(1).normal(size=(128, 128)), (0, 0), 2))
    full = emd(phi, data.ground_truth[0], resize=None)
    coarse = emd(phi, data.ground_truth[0])
    assert 0.0 < full < 1.0 and abs(full - coarse) < 0.05


def test_pot_stopping_short_is_a_runtime_error(monkeypatch):
    # POT warns (does not raise) when its network simplex stops before the optimum: that
    # value would be a plausible wrong EMD, so the solver turns it into a RuntimeError
    from xplique_ext.metrics import emd

    def stopped(*args, **kwargs):
        warnings.warn(
            "numItermax reached before optimality. Try to increase numItermax.",
            UserWarning,
            stacklevel=2,
        )
        return 0.0

    monkeypatch.setattr(ot, "emd2", stopped)
    a = np.zeros((1, 8, 8))
    a[0, 1, 1] = 1.0
    b = np.ones((1, 8, 8))
    with pytest.raises(RuntimeError, match="did not reach optimality"):
        emd(a, b, resize=None, solver="dense")
