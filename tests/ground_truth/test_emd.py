"""EMD (Eq. 5) and KL (Eq. 6): exactness against independent solves, known answers,
invariances and errors."""

import warnings

import cv2
import numpy as np
import ot
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog
from scipy.spatial.distance import cdist

from xplique_ext.commons.warnings import UndefinedScoreWarning
from xplique_ext.datasets import make_aixi_shape
from xplique_ext.metrics import _emd_solver, emd, kl_divergence

METRICS = ("euclidean", "manhattan", "sqeuclidean")


def _coords(h, w):
    ii, jj = np.meshgrid(np.arange(h), np.arange(w), indexing="ij")
    return np.stack([ii.ravel(), jj.ravel()], 1).astype(float)


def _ground(h, w, metric):
    """Independent ground-distance matrix in corner-to-corner units."""
    x = _coords(h, w)
    if metric == "euclidean":
        return cdist(x, x) / np.hypot(h - 1, w - 1)
    if metric == "manhattan":
        return cdist(x, x, "cityblock") / ((h - 1) + (w - 1))
    return cdist(x, x, "sqeuclidean") / ((h - 1) ** 2 + (w - 1) ** 2)


def _linprog_eq5(a, b, d):
    """Eq. 5 solved as a plain LP with SciPy (HiGHS), full problem, no reduction."""
    a, b = a.ravel(), b.ravel()
    n, m = len(a), len(b)
    rows_a = np.kron(np.eye(n), np.ones((1, m)))
    rows_b = np.kron(np.ones((1, n)), np.eye(m))
    res = linprog(
        d.ravel(),
        A_ub=np.vstack([rows_a, rows_b]),
        b_ub=np.concatenate([a, b]),
        A_eq=np.ones((1, n * m)),
        b_eq=[min(a.sum(), b.sum())],
        bounds=(0, None),
        method="highs",
        options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10},
    )
    assert res.status == 0
    return res.fun + abs(a.sum() - b.sum()) * d.max()


def _gt_like(rng, size):
    m = np.zeros((size, size))
    for _ in range(rng.integers(1, 5)):
        r = int(rng.integers(1, size // 5 + 2))
        c = rng.integers(r, size - r, 2)
        cv2.circle(m, (int(c[0]), int(c[1])), r, float(rng.random() + 0.1), -1)
    return m


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("normalize", [True, False])
def test_equals_linear_program_on_small_maps(metric, normalize):
    rng = np.random.default_rng(0)
    h, w = 5, 6
    d = _ground(h, w, metric)
    for _ in range(3):
        a = rng.random((h, w)) * (rng.random((h, w)) < 0.6)
        b = np.abs(rng.normal(size=(h, w)))
        if normalize:
            expected = _linprog_eq5(b / b.sum(), a / a.sum(), d)
        else:
            expected = _linprog_eq5(b, a, d)
        got = emd(a, b, resize=None, ground_distance=metric, normalize=normalize)
        assert got == pytest.approx(expected, abs=1e-8)


@pytest.mark.parametrize("metric", METRICS)
def test_equals_pot_on_the_full_unreduced_32x32_problem(metric):
    rng = np.random.default_rng(1)
    d = _ground(32, 32, metric)
    pairs = [
        (_gt_like(rng, 32), np.abs(rng.normal(size=(32, 32)))),
        (rng.random((32, 32)), np.abs(cv2.GaussianBlur(rng.normal(size=(32, 32)), (0, 0), 2))),
    ]
    for phi, gt in pairs:
        p, q = gt.ravel() / gt.sum(), phi.ravel() / phi.sum()
        expected = ot.emd2(p, q, d, numItermax=10**8)
        for solver in ("auto", "dense", "column_generation"):
            got = emd(phi, gt, resize=None, ground_distance=metric, solver=solver)
            assert got == pytest.approx(expected, abs=1e-9), solver


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


@pytest.mark.parametrize("metric", METRICS)
def test_known_answers(metric):
    a = np.zeros((16, 16))
    b = np.zeros((16, 16))
    a[0, 0] = 1
    b[15, 15] = 3  # normalised: the mass does not matter
    assert emd(a, b, resize=None, ground_distance=metric) == pytest.approx(1.0)
    assert emd(a, a, resize=None, ground_distance=metric) == 0.0
    p = np.random.default_rng(0).random((16, 16))
    assert emd(p, p, resize=None, ground_distance=metric) == pytest.approx(0.0, abs=1e-15)
    assert emd(p, 2 * p, resize=None, ground_distance=metric) == pytest.approx(0.0, abs=1e-12)
    # moving one unit of mass by 3 rows
    c = np.zeros((16, 16))
    c[3, 0] = 1
    expected = {"euclidean": 3 / np.hypot(15, 15), "manhattan": 3 / 30, "sqeuclidean": 9 / 450}[
        metric
    ]
    assert emd(a, c, resize=None, ground_distance=metric) == pytest.approx(expected)


def test_equation5_mass_penalty():
    a = np.zeros((8, 8))
    a[2, 2] = 1.0
    b = np.zeros((8, 8))
    b[2, 2] = 0.25
    # the 0.25 in common stays, 0.75 unmatched costs 0.75 * max d = 0.75
    assert emd(b, a, resize=None, normalize=False) == pytest.approx(0.75)
    c = np.zeros((8, 8))
    c[2, 5] = 0.5
    # 0.5 moved by 3 columns + 0.5 unmatched
    assert emd(c, a, resize=None, normalize=False) == pytest.approx(0.5 * 3 / np.hypot(7, 7) + 0.5)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**16), st.integers(3, 9), st.integers(3, 9))
def test_properties_symmetry_bounds_and_triangle(seed, h, w):
    rng = np.random.default_rng(seed)
    a, b, c = (rng.random((h, w)) * (rng.random((h, w)) < 0.7) + 1e-3 * (k == 0) for k in range(3))
    ab = emd(a, b, resize=None)
    assert ab == pytest.approx(emd(b, a, resize=None), abs=1e-12)
    assert 0.0 <= ab <= 1.0 + 1e-12
    assert ab <= emd(a, c, resize=None) + emd(c, b, resize=None) + 1e-12


def test_batches_channels_and_tensors():
    import tensorflow as tf

    rng = np.random.default_rng(3)
    phi = rng.normal(size=(4, 16, 16, 3))
    gt = np.abs(rng.normal(size=(4, 16, 16)))
    batch = emd(phi, gt[..., None], resize=None)
    assert batch.shape == (4,)
    for i in range(4):
        assert batch[i] == pytest.approx(emd(phi[i].sum(-1), gt[i], resize=None))
    np.testing.assert_allclose(emd(tf.constant(phi), gt, resize=None), batch)
    np.testing.assert_allclose(emd(phi, gt, resize=None, n_jobs=2), batch)
    np.testing.assert_allclose(emd(phi[::-1], gt[::-1], resize=None), batch[::-1])
    positive = emd(phi, gt, resize=None, sign="positive")
    expected = [emd(np.maximum(phi[i].sum(-1), 0), gt[i], resize=None) for i in range(4)]
    np.testing.assert_allclose(positive, expected)
    assert not np.allclose(positive, batch)


def test_resize_downsamples_with_area_interpolation():
    data = make_aixi_shape(3, image_size=128, function="ssin", seed=1)
    rng = np.random.default_rng(0)
    phi = np.abs(rng.normal(size=(3, 128, 128)))
    small_phi = np.stack([cv2.resize(m, (32, 32), interpolation=cv2.INTER_AREA) for m in phi])
    small_gt = np.stack(
        [
            cv2.resize(m.astype(np.float64), (32, 32), interpolation=cv2.INTER_AREA)
            for m in data.ground_truth
        ]
    )
    # same transport problem; distances in the original pixel units: cells 4 px apart,
    # unit the 128 x 128 diagonal, i.e. the 32 x 32 grid's costs times 4 * 31 / 127
    np.testing.assert_allclose(
        emd(phi, data.ground_truth),
        emd(small_phi, small_gt, resize=None) * (4 * 31 / 127),
        atol=1e-12,
    )
    # more maps than OpenCV resizes at once
    many = np.abs(rng.normal(size=(600, 16, 16)))
    expected = np.stack([cv2.resize(m, (4, 4), interpolation=cv2.INTER_AREA) for m in many])
    np.testing.assert_allclose(
        kl_divergence(many, many[::-1], resize=(4, 4)),
        kl_divergence(expected, expected[::-1]),
        rtol=1e-10,
    )
    # maps already at or below the size are kept
    np.testing.assert_allclose(
        emd(small_phi, small_gt, resize=(64, 64)), emd(small_phi, small_gt, resize=None)
    )


def test_full_resolution_sparse_versus_dense_runs():
    """Smoke test of the 128x128 path (exactness of the same solver is checked above
    against POT at 32x32 and 64x64; the benchmark times it)."""
    data = make_aixi_shape(2, image_size=128, function="suum", seed=3)
    phi = np.abs(cv2.GaussianBlur(np.random.default_rng(1).normal(size=(128, 128)), (0, 0), 2))
    full = emd(phi, data.ground_truth[0], resize=None)
    coarse = emd(phi, data.ground_truth[0])
    assert 0.0 < full < 1.0 and abs(full - coarse) < 0.05


def test_all_zero_map_is_nan_with_warning():
    phi = np.zeros((3, 8, 8))
    phi[1, 2, 2] = 1
    gt = np.ones((3, 8, 8))
    gt[2] = 0
    with pytest.warns(UndefinedScoreWarning, match="2 of 3 maps"):
        out = emd(phi, gt, resize=None)
    assert np.isnan(out[0]) and np.isnan(out[2]) and np.isfinite(out[1])
    with pytest.warns(UndefinedScoreWarning):
        assert np.isnan(kl_divergence(phi, gt)[0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        emd(gt[:2], gt[:2], resize=None)  # no warning when all are defined


def test_kl_matches_direct_numpy_equation6():
    rng = np.random.default_rng(4)
    gt = np.abs(rng.normal(size=(5, 12, 12))) * (rng.random((5, 12, 12)) < 0.3)
    gt[:, 0, 0] += 0.1
    phi = rng.normal(size=(5, 12, 12))
    eps = 1e-7
    sm = gt / gt.sum(axis=(1, 2), keepdims=True)
    sm_hat = np.abs(phi) / np.abs(phi).sum(axis=(1, 2), keepdims=True)
    expected = [
        sum(
            sm[i].ravel()[k] * np.log(sm[i].ravel()[k] / (sm_hat[i].ravel()[k] + eps) + eps)
            for k in range(144)
        )
        for i in range(5)
    ]
    np.testing.assert_allclose(kl_divergence(phi, gt, epsilon=eps), expected, rtol=1e-10)
    assert kl_divergence(gt[0], gt[0]) == pytest.approx(0.0, abs=1e-12)
    # direction: KL(ground truth || explanation) is not symmetric
    assert kl_divergence(phi[0], gt[0]) != pytest.approx(kl_divergence(gt[0], phi[0]))
    # resize applies the same area downsampling as for the EMD
    big = np.abs(rng.normal(size=(2, 64, 64)))
    small = np.stack([cv2.resize(m, (16, 16), interpolation=cv2.INTER_AREA) for m in big])
    np.testing.assert_allclose(
        kl_divergence(big[::-1], big, resize=(16, 16)),
        kl_divergence(small[::-1], small),
        rtol=1e-10,
    )


@pytest.mark.parametrize("fn", [emd, kl_divergence])
def test_errors(fn):
    a = np.ones((2, 8, 8))
    with pytest.raises(ValueError, match="must have the same shape"):
        fn(a, np.ones((2, 8, 9)))
    with pytest.raises(ValueError, match="must have the same shape"):
        fn(a, np.ones((3, 8, 8)))
    bad = a.copy()
    bad[0, 0, 0] = np.nan
    with pytest.raises(ValueError, match="`explanations` must be an array of finite values only"):
        fn(bad, a)
    bad[0, 0, 0] = np.inf
    with pytest.raises(ValueError, match="`ground_truth` must be an array of finite values only"):
        fn(a, bad)
    with pytest.raises(ValueError, match="`sign` must be one of"):
        fn(a, a, sign="square")
    with pytest.raises(ValueError, match="`resize` must be None or a pair"):
        fn(a, a, resize=(0, 4))
    with pytest.raises(
        ValueError, match=r"`explanations` must be an array of shape \(H, W\), .*got shape \(8,\)"
    ):
        fn(np.ones(8), np.ones(8))


def test_emd_specific_errors():
    a = np.ones((8, 8))
    with pytest.raises(ValueError, match="`ground_distance` must be one of"):
        emd(a, a, ground_distance="chebyshev")
    with pytest.raises(ValueError, match="`solver` must be one of"):
        emd(a, a, solver="sinkhorn")
    with pytest.raises(TypeError, match="`normalize` must be a bool"):
        emd(a, a, normalize="yes")
    with pytest.raises(ValueError, match="`n_jobs` must be >= 1 or -1"):
        emd(a, a, n_jobs=0)
    with pytest.raises(ValueError, match="`epsilon` must be in"):
        kl_divergence(a, a, epsilon=0.0)


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


def test_maps_without_pixels_are_refused_by_every_measure():
    # emd divided by zero in the resize, kl returned [nan] without a warning
    from xplique_ext.metrics import emd, kl_divergence, pointing_game

    empty = np.zeros((1, 0, 8))
    for measure in (emd, kl_divergence, pointing_game):
        with pytest.raises(ValueError, match="`explanations` must be maps of at least one pixel"):
            measure(empty, empty)


def test_leaderboard_refuses_a_single_map_and_no_measure():
    from xplique_ext.metrics import ground_truth_leaderboard

    truth = np.zeros((2, 8, 8))
    truth[:, 2, 2] = 1
    with pytest.raises(
        ValueError,
        match=r"`ground_truth` must be an array of shape \(N, H, W\) or "
        r"\(N, H, W, C\), got shape \(8, 8\): is the batch",
    ):
        ground_truth_leaderboard({"a": truth[0], "b": truth[0]}, truth[0])
    with pytest.raises(ValueError, match="`measures` must name at least one measure"):
        ground_truth_leaderboard({"a": truth, "b": truth}, truth, measures=[])


def test_maps_of_at_most_128x128_pixels_are_never_refused_for_their_size(monkeypatch):
    # two dense 96x96 maps under 'sqeuclidean' (no reduction: supply x demand = 8.5e7
    # arcs, beyond EMD_MAX_ARCS) are solved, as the advice "resize=(128, 128) or smaller"
    # of the size error promises (a few seconds: the solver is replaced here)
    from xplique_ext.metrics import ground_truth_measures

    monkeypatch.setattr(ground_truth_measures, "grid_transport_cost", lambda *args, **kwargs: 0.25)
    maps = np.random.default_rng(0).random((2, 1, 96, 96)).astype(np.float32) + 0.1
    for resize in (None, (96, 96), (128, 128)):
        assert emd(maps[0], maps[1], resize=resize, ground_distance="sqeuclidean").tolist() == [
            0.25
        ]
    with pytest.raises(
        ValueError,
        match=r"maps of 180x180 pixels: map 0 is a transport "
        r"problem of 2\.62e\+08 arcs.*resize=\(128, 128\)",
    ):
        half = np.zeros((1, 180, 180))
        half[:, :, 90:] = 1
        emd(half, 1 - half, resize=None)
