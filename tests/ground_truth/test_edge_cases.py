"""Issue 9 for the ground-truth family: no silent wrong number, no hang, no raw crash.
One test per point; each asserts the exception and the parameter named, or the value."""

import subprocess
import sys
import time
import tracemalloc
import warnings

import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import xplique_ext.metrics as gtm
from xplique_ext.commons.warnings import UndefinedScoreWarning
from xplique_ext.datasets import (
    AIXIData,
    apply_function,
    count_patterns,
    load_aixi,
    make_aixi_color,
    make_aixi_shape,
)
from xplique_ext.metrics import GroundTruthSaliency, emd, kl_divergence
from xplique_ext.models import AIXIFunctionModel

EPS = float(np.finfo(np.float64).eps)


# ----------------------------------------------------------------- 2: missing batch axis
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


# ----------------------------------------------------------------- 7: float maximum
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


def test_unnormalised_emd_beyond_the_float_range_is_nan_with_the_reason():
    big = np.finfo(np.float64).max
    maps = np.full((1, 4, 4), big)
    with pytest.warns(UndefinedScoreWarning, match="mass beyond the float64 range"):
        assert np.isnan(emd(maps, maps, resize=None, normalize=False)[0])


# ----------------------------------------------------------------- 11: generators
@pytest.mark.parametrize("maker", [make_aixi_shape, make_aixi_color])
def test_huge_n_samples_is_refused_before_allocating(maker):
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match=r"`n_samples`=1000000000 .* GiB .* more than"):
        maker(10**9, image_size=128)
    assert time.perf_counter() - t0 < 1.0


@pytest.mark.parametrize(
    "function,error,message",
    [
        (lambda g: np.zeros(len(g) + 1), ValueError, r"`function` must return one value per image"),
        (lambda g: g, ValueError, r"`function` must return one value per image, shape \(\d+,\)"),
        (
            lambda g: np.full(len(g), np.nan),
            ValueError,
            r"`function\(g\)` must be an array of finite values only, got 8 NaN",
        ),
        (lambda g: "x" * len(g), TypeError, r"`function\(g\)` must be a NumPy array"),
        (lambda g: np.ones(len(g)) + 1j, TypeError, r"`function\(g\)` must be an array of numbers"),
        (lambda g: 1 / "x", ValueError, r"`function` must map normalised counts"),
    ],
)
def test_callable_function_output_is_checked(function, error, message):
    with pytest.raises(error, match=message):
        make_aixi_color(8, image_size=32, function=function, convention="object", seed=0)


# ----------------------------------------------------------------- 14: infinite dataset
def test_infinite_dataset_is_refused_by_ground_truth_saliency():
    data = make_aixi_color(4, image_size=32, function="suum", seed=0)
    ds = tf.data.Dataset.from_tensor_slices((data.images, data.targets)).batch(2).repeat()
    assert int(ds.cardinality()) == int(tf.data.INFINITE_CARDINALITY)
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match=r"`inputs` must be a finite tf.data.Dataset"):
        GroundTruthSaliency(AIXIFunctionModel("suum", "color"), ds, ground_truth=data.ground_truth)
    assert time.perf_counter() - t0 < 5.0
    # the same data, finite, works
    finite = tf.data.Dataset.from_tensor_slices((data.images, data.targets)).batch(2)
    metric = GroundTruthSaliency(
        AIXIFunctionModel("suum", "color"),
        finite,
        ground_truth=data.ground_truth,
    )
    assert metric.evaluate(data.ground_truth) == 0.0


# ----------------------------------------------------------------- 15: huge EMD problems
def test_dense_full_resolution_emd_is_refused_with_the_resize_to_use():
    rng = np.random.default_rng(0)
    a, b = rng.random((1, 512, 512)), rng.random((1, 512, 512))
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match=r"`resize`=None .* pass resize=\(128, 128\)"):
        emd(a, b, resize=None)
    assert time.perf_counter() - t0 < 5.0
    # the resize it names works
    assert 0 <= emd(a, b, resize=(32, 32))[0] <= 1


# ----------------------------------------------------------------- 16: memory by chunk
def test_one_huge_image_allocates_about_its_own_arrays():
    tracemalloc.start()
    try:
        data = make_aixi_shape(1, image_size=4096, seed=0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    own = data.images.nbytes + data.ground_truth.nbytes + data.object_labels.nbytes
    assert own == 4096 * 4096 * 9
    assert peak < 2 * own  # the earlier chunk of 256 images peaked at 6.9 GB


# ----------------------------------------------------------------- Hypothesis
_maps = st.integers(1, 4).flatmap(
    lambda n: st.tuples(st.integers(2, 6), st.integers(2, 6)).flatmap(
        lambda hw: st.tuples(
            arrays(np.float64, (n,) + hw, elements=st.floats(-1e6, 1e6, width=64)),
            arrays(np.float64, (n,) + hw, elements=st.floats(0, 1e6, width=64)),
        )
    )
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


# ----------------------------------------------------------------- issue 18, fourth pass
# Hostile inputs: each case was a raw crash, a silent wrong number or an unclear message,
# and is now refused (or scored) by the declared params layer.
@pytest.fixture(scope="module")
def suum_data():
    return make_aixi_shape(4, image_size=64, function="suum", seed=1)


@pytest.mark.parametrize(
    "measure", [gtm.relevance_mass_accuracy, gtm.relevance_rank_accuracy, gtm.pointing_game]
)
def test_localisation_of_no_map_scores_no_map(measure):
    # was "cannot reshape array of size 0" (emd and kl_divergence returned an empty array)
    out = measure(np.zeros((0, 4, 4)), np.zeros((0, 4, 4), bool))
    assert out.shape == (0,)


def test_kl_epsilon_of_one_or_more_is_refused():
    # epsilon = 1e308 gave log(1e308) = 709.2 for every pair of maps, whatever the maps
    p = np.random.default_rng(0).random((2, 8, 8))
    for epsilon in (1.0, 1e308):
        with pytest.raises(ValueError, match=r"`epsilon` must be in \(0, 1\), got"):
            kl_divergence(p, p[::-1], epsilon=epsilon)
    assert np.isfinite(kl_divergence(p, p[::-1], epsilon=0.5)).all()


def test_metric_keeps_its_reference_when_the_caller_changes_its_array(suum_data):
    truth = suum_data.ground_truth.astype(np.float64)  # float64: read without a copy before
    metric = GroundTruthSaliency(
        AIXIFunctionModel("suum"), suum_data.images, suum_data.targets, ground_truth=truth
    )
    kept = truth.copy()
    truth[:] = 0.0  # the caller reuses its array; the metric's scores must not change
    assert metric.evaluate(kept) == 0.0


@pytest.mark.parametrize(
    "metric,reference",
    [(GroundTruthSaliency, "ground_truth"), (gtm.GroundTruthLocalisation, "masks")],
)
def test_metric_of_no_input_is_refused(suum_data, metric, reference):
    # both were "not enough values to unpack (expected 2, got 0)"
    model, masks = AIXIFunctionModel("suum"), suum_data.relevant_masks
    x, y = suum_data.images[:0], suum_data.targets[:0]
    with pytest.raises(
        ValueError,
        match=rf"`{reference}` must be a non-empty array .*got shape "
        r"\(0, 64, 64\)",
    ):
        metric(model, x, y, **{reference: masks[:0]})
    with pytest.raises(
        ValueError,
        match=rf"`{reference}` must hold one map per input: got 4 "
        "maps for 0 inputs",
    ):
        metric(model, x, y, **{reference: masks})


def test_from_aixi_refuses_what_is_not_an_aixi_dataset(suum_data):
    # was AttributeError: 'numpy.ndarray' object has no attribute 'get_ground_truth'
    with pytest.raises(TypeError, match=r"`data` must be an instance of AIXIData, got an array"):
        GroundTruthSaliency.from_aixi(AIXIFunctionModel("suum"), suum_data.ground_truth)


def test_leaderboard_refuses_no_map_and_a_map_without_its_batch_axis(suum_data):
    truth = suum_data.ground_truth
    # was "`scores_by_name['a']` must be a non-empty array" (a parameter of compare_scores)
    with pytest.raises(ValueError, match=r"`ground_truth` must be a non-empty array"):
        gtm.ground_truth_leaderboard({"a": truth[:0]}, truth[:0])
    with pytest.raises(
        ValueError,
        match=r"`ground_truth` must be an array of shape \(N, H, W\) "
        r"or \(N, H, W, C\), got shape \(64, 64\): is the batch",
    ):
        gtm.ground_truth_leaderboard({"a": truth[0]}, truth[0])


def test_complex_function_is_refused_not_cut_to_its_real_part():
    # was the real part, with a ComplexWarning: targets silently wrong
    with pytest.raises(TypeError, match=r"`function\(g\)` must be an array of numbers"):
        apply_function(lambda g: g[:, 0] + 1j, np.ones((2, 3)))
    with pytest.raises(TypeError, match=r"`function\(g\)`"):
        make_aixi_shape(2, image_size=64, function=lambda g: g[:, 0] + 1j, convention="object")
    np.testing.assert_array_equal(apply_function(lambda g: g[:, 0] > 0, np.ones((2, 3))), 1.0)


def test_count_patterns_refuses_non_finite_images(suum_data):
    # NaN pixels were read as background and inf ones as objects: counts silently wrong
    for bad in (np.nan, np.inf):
        with pytest.raises(ValueError, match="`images` must be an array of finite values only"):
            count_patterns(np.where(suum_data.images > 0, bad, 0.0))


def test_images_of_no_pixel_are_refused_not_a_crash():
    # count_patterns crashed the interpreter (OpenCV, segmentation fault) on (N, 0, 0)
    code = (
        "import numpy as np\nfrom xplique_ext.datasets import count_patterns\n"
        "try:\n    count_patterns(np.zeros((2, 0, 0)))\n"
        "except ValueError as err:\n    print(err)\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-500:]
    assert "`images` must have shape (N, H, W) or (N, H, W, 1) with H, W >= 1" in run.stdout
    # AIXIData accepted a drawing of no pixel, whose relevant_masks raised a raw TypeError
    with pytest.raises(ValueError, match="`object_labels` must be images of at least one pixel"):
        AIXIData(
            np.zeros((1, 0, 0), np.uint8), np.full((1, 6), -1), dataset="shape", function="ssin"
        )


def test_load_of_another_file_names_what_it_must_be(tmp_path):
    # a text file gave NumPy's "pickled (object) data" message, an .npz without the arrays
    # a KeyError, a .npy a TypeError about the context manager protocol
    (tmp_path / "a.txt").write_text("not a dataset")
    np.savez(tmp_path / "b.npz", a=np.ones(3))
    np.save(tmp_path / "c.npy", np.ones(3))
    for name in ("a.txt", "b.npz", "c.npy"):
        with pytest.raises(
            ValueError,
            match=r"`path` must be a file written by AIXIData.save "
            r"\(format 2\), got format none \(another file\)",
        ):
            load_aixi(tmp_path / name)
