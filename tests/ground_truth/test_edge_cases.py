"""Issue 9 for the ground-truth family: no silent wrong number, no hang, no raw crash.
One test per point; each asserts the exception and the parameter named, or the value."""

import time
import tracemalloc
import warnings

import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from xplique_ext.commons.warnings import UndefinedScoreWarning
from xplique_ext.datasets import make_aixi_color, make_aixi_shape
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
        (lambda g: np.full(len(g), np.nan), ValueError,
         r"`function\(g\)` must be an array of finite values only, got 8 NaN"),
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
        GroundTruthSaliency(
            AIXIFunctionModel("suum", "color"), ds, ground_truth=data.ground_truth
        )
    assert time.perf_counter() - t0 < 5.0
    # the same data, finite, works
    finite = tf.data.Dataset.from_tensor_slices((data.images, data.targets)).batch(2)
    metric = GroundTruthSaliency(
        AIXIFunctionModel("suum", "color"), finite, ground_truth=data.ground_truth,
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
        one_by_one_e = [emd(phi[i : i + 1], truth[i : i + 1], sign=sign, resize=None)[0]
                        for i in range(len(phi))]
        one_by_one_k = [kl_divergence(phi[i : i + 1], truth[i : i + 1], sign=sign)[0]
                        for i in range(len(phi))]
    np.testing.assert_array_equal(e, one_by_one_e)
    np.testing.assert_array_equal(k, one_by_one_k)
