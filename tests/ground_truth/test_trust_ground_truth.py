"""Issue 15, ground-truth family: trust by construction.

Every example of the issue is a test reached through the general mechanism (the resize
grid with its aspect ratio and original pixel units, the one mask reader, rescaling by
max|.| before normalising, the explainer's rule for constant functions), followed by
Hypothesis property tests of the ground-truth metrics: scale (1e-150 to 1e150, float64),
batch size and order, input dtype, and errors (never numbers) for invalid inputs.
"""

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from xplique_ext.commons.resize import fit_size
from xplique_ext.commons.warnings import UndefinedScoreWarning
from xplique_ext.datasets import make_aixi_color, make_aixi_shape
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
from xplique_ext.models import AIXIFunctionModel

PROPERTY = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
LOCALISATION = [relevance_mass_accuracy, relevance_rank_accuracy, pointing_game]


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


def _localisation(masks, **kwargs):
    inputs = np.zeros(np.shape(masks) + (1,), np.float32)
    return GroundTruthLocalisation(_model, inputs, masks=masks, **kwargs)


# ============================================================ non-square maps and resize
def test_non_square_maps_keep_their_aspect_ratio_and_pixel_units():
    """Issue: a 63-px shift on 64x128 maps gave 0.71 vertically and 0.34 horizontally at
    the default resize, 0.44 at full resolution."""
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


@pytest.mark.parametrize("resize", [(1, 1), (1, 32), (32, 1), (0, 4), (-2, 2)])
def test_degenerate_resize_is_refused_everywhere(resize):
    """Issue: resize=(1, 1) gave 0 for disjoint maps."""
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


# ============================================================ masks
def _soft_mask_case():
    """10x10: the region is the top half; the explanation puts 0.49 of its mass there,
    0.51 (with the single largest pixel) below."""
    region = np.zeros((10, 10), bool)
    region[:5] = True
    phi = np.where(region, 0.49 / 50, 0.51 / 50)
    phi[9, 9] += 1e-4
    soft = np.where(region, 1.0, 1e-3)
    return phi, region, soft


def test_soft_masks_are_refused_and_binarised_masks_give_the_answer():
    """Issue: a soft mask with background 1e-3 gave 1.0 where the answer is 0.49."""
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


# ============================================================ leaderboard
def test_empty_leaderboard_is_a_clear_error():
    """Issue: ground_truth_leaderboard({}) raised IndexError."""
    truth = _point((8, 8), 2, 2)[None]
    with pytest.raises(ValueError, match="`explanations` must be a non-empty dict"):
        ground_truth_leaderboard({}, truth)
    with pytest.raises(TypeError, match="`explanations` must be a dict"):
        ground_truth_leaderboard([truth], truth)


# ============================================================ scale (design point 3)
def _pair_maps(seed, n=3, shape=(8, 8)):
    rng = np.random.default_rng(seed)
    phi = rng.random((n,) + shape) * (rng.random((n,) + shape) < 0.5)
    phi[:, 0, 0] += 0.1  # no all-zero map
    truth = np.zeros((n,) + shape)
    truth[:, 2:5, 3:6] = 1.0
    return phi, truth


@pytest.mark.parametrize("factor", [1e-170, 1e-150, 1e150, 1e300])
def test_multiplying_a_map_leaves_every_score_unchanged(factor):
    """Issue, design point 3: explanations times 1e-170 or 1e300 (float64)."""
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


# ============================================================ AIXI class: constant F
def _class_images_without_squares():
    data = make_aixi_shape(40, image_size=64, function="class", seed=3)
    keep = (data.counts[:, 0] > 0) & (data.counts[:, 1] == 0)
    assert keep.sum() >= 2
    return data[np.flatnonzero(keep)[:3]]


@pytest.mark.parametrize("kernel", ["lime", "shapley"])
def test_explanations_of_a_constant_function_are_exactly_zero(kernel):
    """Issue: class is constant on an image with circles but no square; exhaustive LIME
    returned ~1e-16 coefficients that KL normalised into a full map (KL up to 33)."""
    data = _class_images_without_squares()
    lime = ObjectLime(AIXIFunctionModel("class", dataset="shape"), kernel=kernel)
    coef = lime.explain_objects(data.images, object_labels=data.object_labels)
    assert np.all(coef == 0.0)
    maps = lime.explain(data.images, object_labels=data.object_labels)
    assert np.all(maps == 0.0)
    for measure in (emd, kl_divergence):
        with pytest.warns(UndefinedScoreWarning, match="sum to zero"):
            assert np.isnan(measure(maps, data.ground_truth)).all()
    # an image with a square (class not constant) keeps its explanation
    full = make_aixi_shape(40, image_size=64, function="class", seed=3)
    varying = full[np.flatnonzero(full.counts[:, 1] > 0)[:2]]
    assert (
        np.abs(lime.explain_objects(varying.images, object_labels=varying.object_labels)).max()
        > 0.1
    )


class _Offset:
    """f = c + delta * (number of objects kept), returned in ``dtype``."""

    def __init__(self, c, delta, dtype):
        self.c, self.delta, self.dtype = c, delta, dtype

    def __call__(self, x):
        x = np.asarray(x)[..., 0]
        kept = (x > 0).mean(axis=(1, 2))  # share of the pixels on kept objects
        return (self.c + self.delta * kept).astype(self.dtype)[:, None]


def test_constant_tolerance_is_relative_to_the_function_scale_and_dtype():
    data = make_aixi_color(2, image_size=32, function="suum", seed=0)
    labels = data.object_labels

    def coef(model):
        return ObjectLime(model).explain_objects(data.images, object_labels=labels)

    # exactly constant, and constant up to a few float64 ulps of 1e8: zero
    assert np.all(coef(_Offset(1e8, 0.0, np.float64)) == 0)
    assert np.all(coef(_Offset(1e8, 1e8 * 2e-16, np.float64)) == 0)
    # the same function varying at 1e-9 relative is not constant in float64 ...
    assert np.abs(coef(_Offset(1.0, 1e-9, np.float64))).max() > 0
    # ... but is rounding level for a float32 model (eps 1.2e-7)
    assert np.all(coef(_Offset(1.0, 1e-7, np.float32)) == 0)


# ============================================================ properties (Hypothesis)
maps_strategy = st.integers(0, 2**31 - 1).map(lambda s: _pair_maps(s, n=3, shape=(6, 7)))


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


@PROPERTY
@given(st.data(), st.sampled_from(sorted(INVALID_SETTINGS)))
def test_property_invalid_settings_raise_naming_the_parameter(data, name):
    value = data.draw(INVALID_SETTINGS[name])
    phi, truth = _pair_maps(1, n=1)
    measure = kl_divergence if name == "epsilon" else emd
    with pytest.raises((ValueError, TypeError), match=f"`{name}`"):
        measure(phi, truth, **{name: value})


@PROPERTY
@given(st.integers(0, 2**31 - 1), st.sampled_from([np.float16, np.float32, np.float64]))
def test_property_model_output_dtype(seed, dtype):
    """The model is only used for the accuracy check: its output dtype changes neither the
    agreement nor the scores."""
    rng = np.random.default_rng(seed)
    classes = rng.integers(0, 3, size=4)
    inputs = rng.random((4, 6, 6, 1)).astype(np.float32)
    inputs[:, 0, 0, 0] = classes / 4  # the class the model reads back

    def model(x):
        return np.eye(3, dtype=dtype)[np.rint(np.asarray(x)[:, 0, 0, 0] * 4).astype(int)]

    phi, truth = _pair_maps(seed, n=4, shape=(6, 6))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no LowModelAccuracyWarning
        metric = GroundTruthSaliency(model, inputs, np.eye(3)[classes], ground_truth=truth)
        local = GroundTruthLocalisation(model, inputs, np.eye(3)[classes], masks=truth > 0)
    assert metric.model_accuracy == local.model_accuracy == 1.0
    np.testing.assert_array_equal(metric.detailed_evaluate(phi), emd(phi, truth))
    np.testing.assert_array_equal(
        local.detailed_evaluate(phi), relevance_mass_accuracy(phi, truth > 0)
    )


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
