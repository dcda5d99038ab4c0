"""The ground-truth measures: EMD (Eq. 5) and KL (Eq. 6) against independent solves, known
answers, invariances (scale, batch, order, dtype, aspect ratio) and errors; relevance mass
accuracy, relevance rank accuracy and the pointing game; GroundTruthMeasure and its options."""

import inspect
import sys
import time
import warnings

import cv2
import numpy as np
import ot
import pytest
import tensorflow as tf
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.optimize import linprog
from scipy.spatial.distance import cdist

import xplique_ext.metrics as gtm
from xplique_ext.commons.resize import fit_size
from xplique_ext.commons.warnings import UndefinedScoreWarning
from xplique_ext.datasets import make_aixi_shape
from xplique_ext.explainers import ObjectLime
from xplique_ext.metrics import (
    GroundTruthLocalisation,
    GroundTruthMeasure,
    GroundTruthSaliency,
    emd,
    ground_truth_leaderboard,
    kl_divergence,
    pointing_game,
    relevance_mass_accuracy,
    relevance_rank_accuracy,
)
from xplique_ext.metrics.ground_truth_measures import DECLARATIONS, DIRECTIONS
from xplique_ext.models import AIXIFunctionModel


@pytest.fixture(scope="module")
def aixi():
    data = make_aixi_shape(3, image_size=64, function="suum", seed=1)
    model = AIXIFunctionModel("suum", dataset="shape")
    phi = np.abs(data.ground_truth) + np.random.default_rng(0).random(data.ground_truth.shape)
    return data, model, phi


EPS = float(np.finfo(np.float64).eps)


_maps = st.integers(1, 4).flatmap(
    lambda n: st.tuples(st.integers(2, 6), st.integers(2, 6)).flatmap(
        lambda hw: st.tuples(
            arrays(np.float64, (n,) + hw, elements=st.floats(-1e6, 1e6, width=64)),
            arrays(np.float64, (n,) + hw, elements=st.floats(0, 1e6, width=64)),
        )
    )
)


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


@pytest.fixture(scope="module")
def data():
    d = make_aixi_shape(24, image_size=64, function="ssin", seed=1)
    return d[d.has_ground_truth]


@pytest.fixture(scope="module")
def model():
    return AIXIFunctionModel("ssin", dataset="shape")


def _explanations(data, seed=0):
    rng = np.random.default_rng(seed)
    return data.ground_truth + 0.05 * rng.random(data.ground_truth.shape)


def _point(shape, i, j):
    a = np.zeros(shape)
    a[i, j] = 1.0
    return a


def _model(x):
    """A stand-in model for the metric classes (no targets: no accuracy check)."""
    return np.zeros((len(x), 1), np.float32)


def _saliency(truth, **kwargs):
    inputs = np.zeros(truth.shape + (1,), np.float32)
    return GroundTruthSaliency(_model, inputs, ground_truth=truth, **kwargs)


LOCALISATION = [relevance_mass_accuracy, relevance_rank_accuracy, pointing_game]


def _localisation(masks, **kwargs):
    inputs = np.zeros(np.shape(masks) + (1,), np.float32)
    return GroundTruthLocalisation(_model, inputs, masks=masks, **kwargs)


def _soft_mask_case():
    """10x10: the region is the top half; the explanation puts 0.49 of its mass there,
    0.51 (with the single largest pixel) below."""
    region = np.zeros((10, 10), bool)
    region[:5] = True
    phi = np.where(region, 0.49 / 50, 0.51 / 50)
    phi[9, 9] += 1e-4
    soft = np.where(region, 1.0, 1e-3)
    return phi, region, soft


def _pair_maps(seed, n=3, shape=(8, 8)):
    rng = np.random.default_rng(seed)
    phi = rng.random((n,) + shape) * (rng.random((n,) + shape) < 0.5)
    phi[:, 0, 0] += 0.1  # no all-zero map
    truth = np.zeros((n,) + shape)
    truth[:, 2:5, 3:6] = 1.0
    return phi, truth


PROPERTY = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])


maps_strategy = st.integers(0, 2**31 - 1).map(lambda s: _pair_maps(s, n=3, shape=(6, 7)))


def _corrupt(kind, phi):
    bad = phi.copy()
    if kind == "nan":
        bad[0, 1, 1] = np.nan
        return bad
    if kind == "inf":
        bad[0, 1, 1] = np.inf
        return bad
    if kind == "rank1":
        return phi.ravel()
    if kind == "rank5":
        return phi[..., None, None]
    if kind == "shape":
        return phi[:, :-1]
    if kind == "strings":
        return np.full(phi.shape, "x")
    if kind == "complex":
        return phi.astype(complex)
    raise AssertionError(kind)


MEASURES = {
    "emd": (emd, "ground_truth"),
    "kl_divergence": (kl_divergence, "ground_truth"),
    **{m.__name__: (m, "masks") for m in LOCALISATION},
}


INVALID_SETTINGS = {
    "sign": st.one_of(st.text(max_size=4), st.integers(), st.none()),
    "resize": st.one_of(
        st.integers(-3, 1).map(lambda v: (v, 8)),
        st.integers(-3, 64),
        st.floats(2, 64).map(lambda v: (v, v)),
        st.text(max_size=3),
        st.tuples(st.integers(2, 8), st.integers(2, 8), st.integers(2, 8)),
    ),
    "ground_distance": st.one_of(st.text(max_size=4), st.integers()),
    "n_jobs": st.one_of(st.integers(-20, 0).filter(lambda v: v != -1), st.text(max_size=2)),
    "normalize": st.one_of(st.integers(0, 1), st.text(max_size=2), st.none()),
    "epsilon": st.one_of(
        st.floats(max_value=0.0),
        st.just(float("nan")),
        st.just(float("inf")),
        st.text(max_size=2),
        st.none(),
    ),
}


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


def test_localisation_known_answers():
    mask = np.zeros((4, 4), bool)
    mask[0, :2] = True
    phi = np.zeros((4, 4))
    phi[0, 0], phi[0, 1], phi[3, 3] = 3.0, -1.0, 2.0
    assert relevance_mass_accuracy(phi, mask) == pytest.approx(4 / 6)
    assert relevance_mass_accuracy(phi, mask, sign="positive") == pytest.approx(3 / 5)
    assert relevance_mass_accuracy(phi, mask, sign="raw") == pytest.approx(2 / 4)
    # K = 2: top-2 by |phi| are (0,0)=3 and (3,3)=2
    assert relevance_rank_accuracy(phi, mask) == pytest.approx(0.5)
    assert pointing_game(phi, mask) == 1.0
    phi[3, 3] = 5.0
    assert pointing_game(phi, mask) == 0.0
    batch = np.stack([phi, phi * 0 + mask])
    np.testing.assert_allclose(pointing_game(batch, np.stack([mask, mask])), [0.0, 1.0])


def test_measure_options_live_on_the_measure(data, model):
    phi = _explanations(data)
    measure = GroundTruthMeasure("emd", resize=None, ground_distance="manhattan", n_jobs=2)
    metric = GroundTruthSaliency(
        model, data.images, data.targets, ground_truth=data.ground_truth, measure=measure
    )
    expected = emd(phi, data.ground_truth, resize=None, ground_distance="manhattan")
    np.testing.assert_array_equal(metric.detailed_evaluate(phi), expected)
    np.testing.assert_array_equal(measure(phi, data.ground_truth), expected)
    assert not np.allclose(expected, emd(phi, data.ground_truth))  # the options are used
    config = metric.get_config()["measure"]
    assert config == {"name": "emd", "resize": None, "ground_distance": "manhattan", "n_jobs": 2}
    clone = GroundTruthSaliency(
        model, data.images, data.targets, ground_truth=data.ground_truth, measure=config
    )
    np.testing.assert_array_equal(clone.detailed_evaluate(phi), expected)
    kl = GroundTruthMeasure("kl", epsilon=1e-3, resize=(16, 16))
    np.testing.assert_array_equal(
        kl(phi, data.ground_truth),
        kl_divergence(phi, data.ground_truth, epsilon=1e-3, resize=(16, 16)),
    )
    assert (kl.label, kl.higher_is_better) == ("KL", False)
    assert repr(kl) == "GroundTruthMeasure('kl', epsilon=0.001, resize=(16, 16))"
    assert GroundTruthMeasure("pointing_game").higher_is_better


def test_a_measure_reads_its_declaration():
    for name, declared in DECLARATIONS.items():
        measure = GroundTruthMeasure(name)
        assert measure.declaration is declared
        assert measure.higher_is_better is declared.higher_is_better
        assert (measure.label, measure.reference, measure.proportion) == (
            declared.label,
            declared.reference,
            declared.proportion,
        )
        assert DIRECTIONS[declared.label] is declared.higher_is_better
    emd_measure = GroundTruthMeasure("emd", resize=None)
    with pytest.raises(AttributeError):  # one declaration: no copy to change
        emd_measure.higher_is_better = True
    assert emd_measure.get_config() == {"name": "emd", "resize": None}
    assert repr(emd_measure) == "GroundTruthMeasure('emd', resize=None)"


def test_non_square_maps_keep_their_aspect_ratio_and_pixel_units():
    """A shift costs its length in pixels along either axis of non-square maps, at any
    resize (a 63-px shift on 64x128 maps must not give 0.71 vertically and 0.34
    horizontally)."""
    shape = (64, 128)
    origin = _point(shape, 0, 0)
    vertical, horizontal = _point(shape, 63, 0), _point(shape, 0, 63)
    full = emd(origin, vertical, resize=None)
    assert full == pytest.approx(63 / np.hypot(63, 127), rel=1e-12)  # 0.444
    assert emd(origin, horizontal, resize=None) == pytest.approx(full, rel=1e-12)
    for resize in [(32, 32), (16, 16), (64, 16), (8, 8)]:
        cells = fit_size(shape, resize)
        assert cells[1] == 2 * cells[0]  # one factor for both axes
        v, h = emd(origin, vertical, resize=resize), emd(origin, horizontal, resize=resize)
        assert v == pytest.approx(h, abs=1e-12)
        # each mass moves to its cell's centre: at most the cell's half diagonal per side
        cell = np.hypot(shape[0] / cells[0] - 1, shape[1] / cells[1] - 1)
        assert abs(v - full) <= cell / np.hypot(63, 127) + 1e-12
    # the default grid (32, 32) gives 16x32 cells of 4x4 px: 60 px between cell centres
    assert emd(origin, vertical) == pytest.approx(60 / np.hypot(63, 127), rel=1e-12)


def test_non_square_maps_through_the_metric_class_and_kl():
    shape = (64, 128)
    truth = np.stack([_point(shape, 0, 0), _point(shape, 0, 0)])
    phi = np.stack([_point(shape, 63, 0), _point(shape, 0, 63)])
    scores = _saliency(truth).detailed_evaluate(phi)
    assert scores[0] == pytest.approx(scores[1], abs=1e-12)
    # KL on the same aspect-kept grid: 4x4 blocks summed
    rng = np.random.default_rng(0)
    a, b = rng.random((2, 64, 128)), rng.random((2, 64, 128))

    def blocks(m):
        return m.reshape(2, 16, 4, 32, 4).sum(axis=(2, 4))

    np.testing.assert_allclose(
        kl_divergence(a, b, resize=(32, 32)), kl_divergence(blocks(a), blocks(b)), rtol=1e-6
    )


def test_square_maps_are_measured_in_original_pixel_units():
    # a one-cell shift on the 32x32 grid of a 128x128 map is 4 original pixels
    a, b = _point((128, 128), 0, 0), _point((128, 128), 4, 0)
    assert emd(a, b) == pytest.approx(emd(a, b, resize=None), rel=1e-12)
    assert emd(a, b) == pytest.approx(4 / np.hypot(127, 127), rel=1e-12)


@pytest.mark.parametrize("factor", [1e-170, 1e-150, 1e150, 1e300])
def test_multiplying_a_map_leaves_every_score_unchanged(factor):
    """Explanations times 1e-170 or 1e300 (float64)."""
    phi, truth = _pair_maps(0)
    masks = truth > 0
    for measure in (emd, kl_divergence):
        np.testing.assert_allclose(measure(phi * factor, truth), measure(phi, truth), rtol=1e-12)
        np.testing.assert_allclose(measure(phi, truth * factor), measure(phi, truth), rtol=1e-12)
    for measure in LOCALISATION:
        np.testing.assert_allclose(measure(phi * factor, masks), measure(phi, masks), rtol=1e-12)
    # near the float maximum the sums would overflow without the rescaling
    big = phi / phi.max() * np.finfo(np.float64).max
    np.testing.assert_allclose(
        relevance_mass_accuracy(big, masks), relevance_mass_accuracy(phi, masks), rtol=1e-12
    )


@pytest.mark.parametrize("factor", [1e-170, 1e150, 1e300])
@pytest.mark.parametrize("solver", ["dense", "column_generation"])
def test_unnormalised_emd_is_homogeneous_at_any_scale(factor, solver):
    """Eq. 5 as written scales with the masses: emd(c a, c b) = c emd(a, b). Before the
    common rescaling, 1e-170 crashed POT's solver (segmentation fault) and 1e150 or 1e300
    were 0.5-0.9% off."""
    phi, truth = _pair_maps(0)
    truth = truth * 0.2
    base = emd(phi, truth, resize=None, normalize=False, solver=solver)
    scaled = emd(phi * factor, truth * factor, resize=None, normalize=False, solver=solver)
    np.testing.assert_allclose(scaled / factor, base, rtol=1e-12)


def test_maps_near_the_float_maximum_are_scaled_before_normalising():
    big = np.finfo(np.float64).max
    truth = np.zeros((1, 8, 8))
    truth[0, 0, :2] = big  # half the mass on each of two neighbours
    phi = np.zeros((1, 8, 8))
    phi[0, 0, 0] = big
    # half the mass moves by one pixel; unit: the diagonal of the 8 x 8 grid
    assert emd(phi, truth, resize=None)[0] == pytest.approx(0.5 / np.hypot(7, 7), rel=1e-12)
    expected_kl = 0.5 * np.log(0.5 / (1 + EPS) + EPS) + 0.5 * np.log(0.5 / EPS + EPS)
    assert kl_divergence(phi, truth)[0] == pytest.approx(expected_kl, rel=1e-12)  # 17.33
    assert expected_kl == pytest.approx(17.33, abs=0.01)
    np.testing.assert_allclose(emd(phi, truth), emd(phi / big, truth / big), rtol=1e-12)


@PROPERTY
@given(maps_strategy, st.floats(-150, 150), st.floats(-150, 150))
def test_property_scale_invariance(pair, log_phi, log_truth):
    phi, truth = pair
    a, b = 10.0**log_phi, 10.0**log_truth
    masks = truth > 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning either
        for measure in (emd, kl_divergence):
            np.testing.assert_allclose(
                measure(phi * a, truth * b), measure(phi, truth), rtol=1e-10, atol=1e-13
            )
        for measure in LOCALISATION:
            np.testing.assert_allclose(measure(phi * a, masks), measure(phi, masks), rtol=1e-12)
        # Eq. 5 unnormalised: homogeneous of degree 1 in a common factor
        np.testing.assert_allclose(
            emd(phi * a, truth * a, resize=None, normalize=False) / a,
            emd(phi, truth, resize=None, normalize=False),
            rtol=1e-10,
        )
    np.testing.assert_allclose(
        _saliency(truth * b).detailed_evaluate(phi * a),
        _saliency(truth).detailed_evaluate(phi),
        rtol=1e-10,
        atol=1e-13,
    )
    assert _localisation(masks).evaluate(phi * a) == pytest.approx(
        _localisation(masks).evaluate(phi), rel=1e-12
    )


@PROPERTY
@given(maps_strategy, st.permutations(range(3)))
def test_property_batch_size_and_order(pair, order):
    phi, truth = pair
    masks = truth > 0
    order = list(order)
    for measure, ref in [(emd, truth), (kl_divergence, truth)] + [(m, masks) for m in LOCALISATION]:
        batch = measure(phi, ref)
        np.testing.assert_allclose(measure(phi[order], ref[order]), batch[order], rtol=1e-12)
        one_by_one = [measure(phi[i], ref[i]) for i in range(3)]
        np.testing.assert_allclose(one_by_one, batch, rtol=1e-12)
    metric = _saliency(truth[order], measure="kl")
    np.testing.assert_allclose(
        metric.detailed_evaluate(phi[order]), kl_divergence(phi, truth)[order], rtol=1e-12
    )


@PROPERTY
@given(st.integers(0, 2**31 - 1), st.sampled_from([np.float16, np.float32, np.float64]))
def test_property_input_dtype(seed, dtype):
    rng = np.random.default_rng(seed)
    # values exact in float16: multiples of 1/8 up to 4
    phi = rng.integers(0, 33, size=(2, 6, 6)) / 8.0
    phi[:, 0, 0] = 1.0
    truth = np.zeros((2, 6, 6))
    truth[:, 1:4, 2:5] = 1.0
    masks = truth > 0
    for measure, ref in [(emd, truth), (kl_divergence, truth)] + [(m, masks) for m in LOCALISATION]:
        expected = measure(phi, ref)
        got = measure(phi.astype(dtype), ref.astype(dtype) if ref.dtype != bool else ref)
        np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(
        _saliency(truth.astype(dtype)).detailed_evaluate(phi.astype(dtype)), emd(phi, truth)
    )


@settings(max_examples=30, deadline=None)
@given(pair=_maps, sign=st.sampled_from(["abs", "positive"]))
def test_property_emd_and_kl_range_nan_and_batch_invariance(pair, sign):
    phi, truth = pair
    # with the batch and channel axes: (N, H, W, 1) is never ambiguous
    phi, truth = phi[..., None], truth[..., None]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        e = emd(phi, truth, sign=sign, resize=None)
        k = kl_divergence(phi, truth, sign=sign)
    signed = np.abs(phi) if sign == "abs" else np.maximum(phi, 0)
    undefined = (signed.sum(axis=(1, 2, 3)) == 0) | (truth.sum(axis=(1, 2, 3)) == 0)
    np.testing.assert_array_equal(np.isnan(e), undefined)
    np.testing.assert_array_equal(np.isnan(k), undefined)
    if undefined.any():
        assert any(issubclass(w.category, UndefinedScoreWarning) for w in caught)
    h, w = truth.shape[1:3]
    assert np.all((e[~undefined] >= 0) & (e[~undefined] <= 1 + 1e-12))
    assert np.all(k[~undefined] >= -h * w * EPS)
    assert np.all(k[~undefined] <= np.log(1 / EPS + EPS) + 1e-9)
    # identical one map at a time (another batch size / chunking)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        one_by_one_e = [
            emd(phi[i : i + 1], truth[i : i + 1], sign=sign, resize=None)[0]
            for i in range(len(phi))
        ]
        one_by_one_k = [
            kl_divergence(phi[i : i + 1], truth[i : i + 1], sign=sign)[0] for i in range(len(phi))
        ]
    np.testing.assert_array_equal(e, one_by_one_e)
    np.testing.assert_array_equal(k, one_by_one_k)


def test_progress_is_off_by_default_and_needs_no_tqdm(aixi, monkeypatch):
    data, model, phi = aixi
    assert inspect.signature(emd).parameters["progress"].default is False
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)  # importing tqdm would now fail
    metric = GroundTruthSaliency(model, data.images, data.targets, ground_truth=data.ground_truth)
    assert metric.measure.options == {}  # emd's defaults: progress=False
    metric.evaluate(phi)
    emd(phi, data.ground_truth, n_jobs=2)
    with pytest.raises(ImportError):  # on: tqdm is imported
        emd(phi, data.ground_truth, progress=True)


def test_emd_and_object_lime_show_progress_bars_when_enabled(aixi, capsys):
    data, model, phi = aixi
    emd(phi, data.ground_truth, progress=True)
    ObjectLime(model, progress=True).explain(data.images, object_labels=data.object_labels)
    err = capsys.readouterr().err
    assert "EMD" in err and "ObjectLime" in err


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


def test_localisation_undefined_and_errors():
    mask = np.zeros((2, 4, 4), bool)
    mask[0, 0, 0] = True
    phi = np.ones((2, 4, 4))
    for fn in (relevance_mass_accuracy, relevance_rank_accuracy, pointing_game):
        with pytest.warns(UndefinedScoreWarning):
            out = fn(phi, mask)  # image 1: empty mask; rank/pointing: image 0 constant
        assert np.isnan(out[1])
        with pytest.raises(ValueError, match="must have the same shape"):
            fn(phi, mask[:, :3])
        with pytest.raises(ValueError, match="`sign` must be one of"):
            fn(phi, mask, sign="square")


def test_signed_relevance_cancelling_to_rounding_level_is_undefined():
    masks = np.zeros((4, 4), bool)
    masks[0] = True
    phi = np.zeros((4, 4))
    phi[0, :2] = [0.1, 0.2]
    phi[3, 0] = -0.30000000000000004  # 0.1 + 0.2 in float64: the total is rounding noise
    phi[3, 1] = 1e-17
    with pytest.warns(UndefinedScoreWarning, match="cancels to rounding level"):
        assert np.isnan(relevance_mass_accuracy(phi, masks, sign="raw"))
    # a total well above rounding is a score
    phi[3, 1] = 0.1
    assert relevance_mass_accuracy(phi, masks, sign="raw") == pytest.approx(0.3 / 0.1)


def test_unnormalised_emd_beyond_the_float_range_is_nan_with_the_reason():
    big = np.finfo(np.float64).max
    maps = np.full((1, 4, 4), big)
    with pytest.warns(UndefinedScoreWarning, match="mass beyond the float64 range"):
        assert np.isnan(emd(maps, maps, resize=None, normalize=False)[0])


@pytest.mark.parametrize(
    "measure", [gtm.relevance_mass_accuracy, gtm.relevance_rank_accuracy, gtm.pointing_game]
)
def test_localisation_of_no_map_scores_no_map(measure):
    # was "cannot reshape array of size 0" (emd and kl_divergence returned an empty array)
    out = measure(np.zeros((0, 4, 4)), np.zeros((0, 4, 4), bool))
    assert out.shape == (0,)


@pytest.mark.parametrize("measure", [emd, kl_divergence])
def test_single_map_with_a_channel_axis_is_refused_not_read_as_h_maps(measure):
    rng = np.random.default_rng(0)
    a, b = rng.random((16, 16)), rng.random((16, 16))
    with pytest.raises(ValueError, match=r"`explanations` of shape \(16, 16, 1\) is ambiguous"):
        measure(a[..., None], b[..., None])
    with pytest.raises(ValueError, match=r"\(1, 16, 16, 1\)"):
        measure(a[..., None], b[..., None])
    # unambiguous forms agree: one (H, W) map, or a batch of one with channels
    single = measure(a, b)
    assert isinstance(single, float)
    batched = measure(a[None, ..., None], b[None, ..., None])
    assert batched.shape == (1,) and batched[0] == pytest.approx(single, rel=1e-12)


def test_dense_full_resolution_emd_is_refused_with_the_resize_to_use():
    rng = np.random.default_rng(0)
    a, b = rng.random((1, 512, 512)), rng.random((1, 512, 512))
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match=r"`resize`=None .* pass resize=\(128, 128\)"):
        emd(a, b, resize=None)
    assert time.perf_counter() - t0 < 5.0
    # the resize it names works
    assert 0 <= emd(a, b, resize=(32, 32))[0] <= 1


def test_kl_epsilon_of_one_or_more_is_refused():
    # epsilon = 1e308 gave log(1e308) = 709.2 for every pair of maps, whatever the maps
    p = np.random.default_rng(0).random((2, 8, 8))
    for epsilon in (1.0, 1e308):
        with pytest.raises(ValueError, match=r"`epsilon` must be in \(0, 1\), got"):
            kl_divergence(p, p[::-1], epsilon=epsilon)
    assert np.isfinite(kl_divergence(p, p[::-1], epsilon=0.5)).all()


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


def test_maps_without_pixels_are_refused_by_every_measure():
    # emd divided by zero in the resize, kl returned [nan] without a warning
    from xplique_ext.metrics import emd, kl_divergence, pointing_game

    empty = np.zeros((1, 0, 8))
    for measure in (emd, kl_divergence, pointing_game):
        with pytest.raises(ValueError, match="`explanations` must be maps of at least one pixel"):
            measure(empty, empty)


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


@pytest.mark.parametrize("resize", [(1, 1), (1, 32), (32, 1), (0, 4), (-2, 2)])
def test_degenerate_resize_is_refused_everywhere(resize):
    """A resize of one cell along an axis is refused: resize=(1, 1) would give 0 for
    disjoint maps."""
    a, b = _point((8, 8), 0, 0), _point((8, 8), 7, 7)
    for call in (
        lambda: emd(a, b, resize=resize),
        lambda: kl_divergence(a, b, resize=resize),
        lambda: _saliency(b[None], measure=GroundTruthMeasure("emd", resize=resize)),
        lambda: _saliency(b[None], measure=GroundTruthMeasure("kl", resize=resize)),
        lambda: ground_truth_leaderboard(
            {"x": a[None]}, b[None], measures=[GroundTruthMeasure("emd", resize=resize)]
        ),
    ):
        with pytest.raises(ValueError, match=r"`resize` must be None or a pair of integers >= 2"):
            call()


def test_resize_that_collapses_an_axis_of_the_maps_is_refused():
    a, b = _point((64, 128), 0, 0), _point((64, 128), 63, 0)
    with pytest.raises(ValueError, match=r"`resize`=\(2, 2\) reduces maps of 64x128 .* 1x2"):
        emd(a, b, resize=(2, 2))
    with pytest.raises(ValueError, match=r"vertical axis would be a single cell"):
        kl_divergence(a, b, resize=(2, 2))
    # maps that have a single row are not collapsed by it
    row_a, row_b = _point((1, 16), 0, 0), _point((1, 16), 0, 15)
    assert emd(row_a, row_b, resize=(4, 4)) == pytest.approx(
        emd(row_a, row_b, resize=None), abs=3 / 15 + 1e-12
    )


def test_soft_masks_are_refused_and_binarised_masks_give_the_answer():
    """Soft masks are refused: read as 'non-zero = inside', a mask with a background of
    1e-3 would give 1.0 where the answer is 0.49."""
    phi, region, soft = _soft_mask_case()
    for measure in LOCALISATION:
        with pytest.raises(ValueError, match=r"`masks` must be boolean masks .* `masks > 0.5`"):
            measure(phi, soft)
    with pytest.raises(ValueError, match="`masks` must be boolean masks"):
        _localisation(soft[None])
    with pytest.raises(ValueError, match="`masks` must be boolean masks"):
        ground_truth_leaderboard({"x": phi[None]}, region[None], masks=soft[None])
    assert relevance_mass_accuracy(phi, soft > 0.5) == pytest.approx(0.49, abs=1e-4)
    assert pointing_game(phi, soft > 0.5) == 0.0
    assert _localisation((soft > 0.5)[None]).evaluate(phi[None]) == pytest.approx(0.49, abs=1e-4)


def test_masks_of_zeros_and_ones_in_any_dtype_read_as_booleans():
    phi, region, _ = _soft_mask_case()
    expected = [f(phi, region) for f in LOCALISATION]
    for dtype in (np.float16, np.float32, np.float64, np.int8, np.uint8, np.int64):
        assert [f(phi, region.astype(dtype)) for f in LOCALISATION] == expected
    # channels: a pixel is inside when any channel is
    channels = np.zeros((1, 10, 10, 3), bool)
    channels[0, :5, :, 1] = True
    assert relevance_mass_accuracy(phi[None], channels)[0] == expected[0]
    with pytest.raises(TypeError, match="`masks` must be .* dtype <U1"):
        pointing_game(phi, np.full((10, 10), "a"))
    with pytest.raises(ValueError, match="`masks` must .*finite values.* 100 NaN"):
        pointing_game(phi, np.full((10, 10), np.nan))


@PROPERTY
@given(
    maps_strategy,
    st.sampled_from(["nan", "inf", "rank1", "rank5", "shape", "strings", "complex"]),
    st.sampled_from(sorted(MEASURES)),
    st.booleans(),
)
def test_property_invalid_maps_raise_naming_the_parameter(pair, kind, measure, in_reference):
    phi, truth = pair
    function, reference_name = MEASURES[measure]
    args = [phi, truth if reference_name == "ground_truth" else (truth > 0).astype(float)]
    args[int(in_reference)] = _corrupt(kind, args[int(in_reference)])
    name = reference_name if in_reference else "explanations"
    with pytest.raises((ValueError, TypeError), match=f"`{name}`"):
        function(*args)


@PROPERTY
@given(st.data(), st.sampled_from(sorted(INVALID_SETTINGS)))
def test_property_invalid_settings_raise_naming_the_parameter(data, name):
    value = data.draw(INVALID_SETTINGS[name])
    phi, truth = _pair_maps(1, n=1)
    measure = kl_divergence if name == "epsilon" else emd
    with pytest.raises((ValueError, TypeError), match=f"`{name}`"):
        measure(phi, truth, **{name: value})


def test_a_refused_resize_suggests_one_that_works():
    # the hint said "pass a larger `resize` (e.g. (32, 32))", also when (32, 32) had failed
    import re

    from xplique_ext.commons.resize import fit_size

    a, b = _point((10, 1000), 0, 0), _point((10, 1000), 9, 999)
    with pytest.raises(ValueError) as info:
        emd(a, b, resize=(32, 32))
    message = str(info.value)
    assert message.startswith("`resize`=(32, 32) reduces maps of 10x1000 pixels to 1x32 cells")
    assert "pass resize=(2, 200) or larger in both entries" in message
    hint = message.split("pass ", 1)[1]
    assert "(32, 32)" not in hint
    # the suggestion works (as does any pair at least as large in both entries), for other
    # shapes too
    for shape, resize in (
        ((10, 1000), (32, 32)),
        ((64, 128), (2, 2)),
        ((1000, 10), (3, 50)),
        ((100, 300), (1000, 2)),
        ((3, 7), (2, 2)),
        ((5, 400), (300, 40)),
        ((2, 9), (4, 4)),
    ):
        maps = _point(shape, 0, 0)
        with pytest.raises(ValueError, match="single cell") as info:
            kl_divergence(maps, maps, resize=resize)
        suggested = tuple(
            int(v) for v in re.search(r"pass resize=\((\d+), (\d+)\)", str(info.value)).groups()
        )
        assert min(suggested) >= 2  # a value the declaration accepts
        assert min(s for s, e in zip(fit_size(shape, suggested), shape) if e > 1) >= 2, shape
        assert emd(maps, maps, resize=suggested) == pytest.approx(0.0)
        larger = (suggested[0] + 3, suggested[1])
        assert min(s for s, e in zip(fit_size(shape, larger), shape) if e > 1) >= 2, shape


def test_a_bool_is_not_a_progress_flag():
    from xplique_ext.metrics import emd

    with pytest.raises(TypeError, match=r"`progress` must be a bool, got 1 \(int\)"):
        emd(np.ones((4, 4)), np.ones((4, 4)), progress=1)


def test_tensors_and_lists_are_accepted_as_maps():
    from xplique_ext.metrics import pointing_game

    tf = pytest.importorskip("tensorflow")
    a = np.zeros((2, 4, 4))
    a[:, 1, 1] = 1
    expected = pointing_game(a, a != 0)
    np.testing.assert_array_equal(pointing_game(tf.constant(a), (a != 0).tolist()), expected)
