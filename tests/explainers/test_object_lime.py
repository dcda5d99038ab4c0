"""Object-level LIME and Kernel SHAP: the paper's experiments 1 and 2 (the function itself is
the model), agreement with the lime package, invariances, exact zeros for a constant
function, and what it refuses."""

import inspect
import itertools
import sys
import warnings

import numpy as np
import pytest

from xplique_ext.commons.warnings import UndefinedScoreWarning
from xplique_ext.datasets import (
    make_aixi_color,
    make_aixi_shape,
)
from xplique_ext.explainers import ObjectLime, lime_kernel_weights, shapley_kernel_weights
from xplique_ext.metrics import (
    emd,
    kl_divergence,
)
from xplique_ext.models import AIXIFunctionModel


@pytest.fixture(scope="module")
def aixi():
    data = make_aixi_shape(3, image_size=64, function="suum", seed=1)
    model = AIXIFunctionModel("suum", dataset="shape")
    phi = np.abs(data.ground_truth) + np.random.default_rng(0).random(data.ground_truth.shape)
    return data, model, phi


MAKERS = {"shape": make_aixi_shape, "color": make_aixi_color}


def _mean_emd(phi, gt):
    with warnings.catch_warnings():  # class: images whose F never changes are NaN
        warnings.simplefilter("ignore")
        return float(np.nanmean(emd(phi, gt)))


@pytest.fixture(scope="module", params=list(itertools.product(MAKERS, ("ssin", "suum", "class"))))
def experiment(request):
    """The paper's setting: 128x128 images, the function as the model."""
    dataset, function = request.param
    data = MAKERS[dataset](24, image_size=128, function=function, seed=5)
    model = AIXIFunctionModel(function, dataset=dataset)
    return data, model


def _class_images_without_squares():
    data = make_aixi_shape(40, image_size=64, function="class", seed=3)
    keep = (data.counts[:, 0] > 0) & (data.counts[:, 1] == 0)
    assert keep.sum() >= 2
    return data[np.flatnonzero(keep)[:3]]


class _Offset:
    """f = c + delta * (number of objects kept), returned in ``dtype``."""

    def __init__(self, c, delta, dtype):
        self.c, self.delta, self.dtype = c, delta, dtype

    def __call__(self, x):
        x = np.asarray(x)[..., 0]
        kept = (x > 0).mean(axis=(1, 2))  # share of the pixels on kept objects
        return (self.c + self.delta * kept).astype(self.dtype)[:, None]


def test_experiment2_shapley_kernel_recovers_the_ground_truth(experiment):
    data, model = experiment
    lime = ObjectLime(model, batch_size=256, kernel="shapley")
    coef = lime.explain_objects(data.images, object_labels=data.object_labels)
    # float32 model outputs: exact up to their rounding
    np.testing.assert_allclose(coef, data.object_values[:, : coef.shape[1]], atol=1e-7)
    maps = lime.explain(data.images, object_labels=data.object_labels)
    # the exact Shapley values: the 'object' ground truth, beyond the paper
    assert _mean_emd(maps, data.get_ground_truth("object")) < 1e-3
    if data.function == "suum":  # linear F: Shapley values proportional to the paper's w_i
        assert _mean_emd(maps, data.ground_truth) < 1e-3


def test_experiment2_lime_kernel_and_random_baseline(experiment):
    data, model = experiment
    maps = ObjectLime(model, batch_size=256, kernel="lime").explain(
        data.images, object_labels=data.object_labels
    )
    lime_emd = _mean_emd(maps, data.ground_truth)
    random_emd = _mean_emd(
        np.random.default_rng(0).random(data.ground_truth.shape), data.ground_truth
    )
    if data.function != "class":
        assert lime_emd < 0.1  # paper, Table 2: 0.04 to 0.06
    # six circles cover much of an AIXI-Color image: a uniform random map is nearer there
    assert random_emd > (0.2 if data.dataset == "shape" else 0.08)
    assert random_emd > 2 * lime_emd


@pytest.mark.parametrize("dataset", ["shape", "color"])
def test_experiment1_emd_decreases_with_the_sample_size(dataset):
    sizes = (8, 16, 32, 64)
    for function, kernel in (("ssin", "lime"), ("suum", "lime"), ("class", "shapley")):
        size = 64 if dataset == "shape" else 32  # AIXI-Color scales down to 32 px
        data = MAKERS[dataset](80, image_size=size, function=function, seed=0)
        model = AIXIFunctionModel(function, dataset=dataset)
        truth = data.get_ground_truth("paper" if kernel == "lime" else "object")
        means = [
            _mean_emd(
                ObjectLime(model, kernel=kernel, nb_samples=s, seed=0).explain(
                    data.images, object_labels=data.object_labels
                ),
                truth,
            )
            for s in sizes
        ]
        assert all(a > b for a, b in zip(means, means[1:])), (function, means)


def test_lime_kernel_matches_the_lime_package():
    from lime.lime_base import LimeBase
    from sklearn.metrics import pairwise_distances

    data = make_aixi_shape(12, image_size=64, function="ssin", seed=3)
    model = AIXIFunctionModel("ssin")
    ours = ObjectLime(model, kernel="lime").explain_objects(
        data.images, object_labels=data.object_labels
    )
    base = LimeBase(lambda d: np.sqrt(np.exp(-(d**2) / 0.25**2)))
    for i in range(len(data)):
        m = int(data.n_objects[i])
        if m == 0:
            continue
        z = ((np.arange(2**m)[:, None] >> np.arange(m)) & 1).astype(float)[::-1]  # full first
        keep = np.concatenate([np.ones((len(z), 1)), z], 1).astype(bool)
        labels = data.object_labels[i]
        pert = np.where(keep[:, labels][..., None], data.images[i][None], 0.0)
        y = model(pert).numpy()
        distances = pairwise_distances(z, z[:1], metric="cosine").ravel()
        _, exp, _, _ = base.explain_instance_with_data(
            z, y, distances, 0, m, feature_selection="none"
        )
        expected = np.zeros(m)
        for feature, weight in exp:
            expected[feature] = weight
        np.testing.assert_allclose(ours[i, :m], expected, atol=1e-8)


def test_weights():
    z = np.array([[1, 1, 1], [1, 0, 0], [0, 0, 0], [1, 1, 0]])
    w = lime_kernel_weights(z)
    assert w[0] == 1.0 and w[2] == pytest.approx(np.sqrt(np.exp(-16)))
    assert w[3] == pytest.approx(np.sqrt(np.exp(-((1 - np.sqrt(2 / 3)) ** 2) / 0.0625)))
    s = shapley_kernel_weights(z)
    assert np.isinf(s[0]) and np.isinf(s[2])
    assert s[1] == pytest.approx(2 / (3 * 1 * 2)) and s[3] == pytest.approx(2 / (3 * 2 * 1))


def test_invariances_batch_size_seed_and_order():
    data = make_aixi_color(16, image_size=32, function="ssin", seed=2)
    model = AIXIFunctionModel("ssin", "color")
    kw = dict(kernel="lime", nb_samples=12, seed=4)
    ref = ObjectLime(model, batch_size=64, **kw).explain(
        data.images, object_labels=data.object_labels
    )
    for bs in (1, 7, None):
        np.testing.assert_allclose(
            ObjectLime(model, batch_size=bs, **kw).explain(
                data.images, object_labels=data.object_labels
            ),
            ref,
            atol=1e-10,
        )
    other = ObjectLime(model, kernel="lime", nb_samples=12, seed=5).explain(
        data.images, object_labels=data.object_labels
    )
    assert not np.allclose(other, ref)
    # the subsets drawn for an image do not depend on the other images
    half = ObjectLime(model, **kw).explain(data.images[:8], object_labels=data.object_labels[:8])
    np.testing.assert_allclose(half, ref[:8], atol=1e-10)


@pytest.mark.parametrize("kernel", ["lime", "shapley"])
def test_an_image_gets_the_same_explanation_alone_or_in_any_order(kernel):
    """The subsets of an image come from the seed and the image's content: explaining a
    subset of the images, the images in another order, or an image twice, gives each image
    the same coefficients (they moved by up to 0.031 when drawn from the image's index)."""
    data = make_aixi_color(12, image_size=32, function="ssin", seed=2)
    model = AIXIFunctionModel("ssin", "color")
    lime = ObjectLime(model, kernel=kernel, nb_samples=10, seed=4)
    ref = lime.explain_objects(data.images, object_labels=data.object_labels)
    for order in ([11, 3, 7], [5], list(range(12))[::-1], [2, 2, 9]):
        got = lime.explain_objects(data.images[order], object_labels=data.object_labels[order])
        width = got.shape[1]
        np.testing.assert_allclose(got, ref[order, :width], rtol=0, atol=1e-12)
        assert not ref[order, width:].any()


def test_the_model_receives_the_images_in_their_precision():
    """float64 images reach the model in float64 (they were cast to float32), float32 ones
    in float32, integer ones in float64; the coefficients of float32 images are unchanged."""
    data = make_aixi_color(3, image_size=32, function="ssin", seed=2)
    model = AIXIFunctionModel("ssin", "color")
    seen = []

    def spy(x):
        seen.append(np.asarray(x).dtype)
        return model(x)

    lime = ObjectLime(spy, kernel="shapley")
    ref = ObjectLime(model, kernel="shapley").explain_objects(
        data.images, object_labels=data.object_labels
    )
    for dtype in (np.float32, np.float64, np.int64):
        seen.clear()
        images = data.images.astype(dtype)
        got = lime.explain_objects(images, object_labels=data.object_labels)
        expected = np.float32 if dtype == np.float32 else np.float64
        assert set(seen) == {np.dtype(expected)}
        if dtype == np.float32:
            np.testing.assert_array_equal(got, ref)


def test_multi_output_model_and_targets():
    import tensorflow as tf

    data = make_aixi_shape(6, image_size=64, function="class", seed=8)
    base = AIXIFunctionModel("class")

    def two(x):
        f = base(x)
        return tf.concat([1.0 - f, f], axis=1)

    lime = ObjectLime(two, kernel="shapley")
    pos = lime.explain_objects(data.images, np.ones(6, int), object_labels=data.object_labels)
    neg = lime.explain_objects(
        data.images, np.eye(2)[np.zeros(6, int)], object_labels=data.object_labels
    )
    np.testing.assert_allclose(pos, data.object_values[:, : pos.shape[1]], atol=1e-9)
    np.testing.assert_allclose(neg, -pos, atol=1e-9)


@pytest.mark.parametrize("kernel", ["lime", "shapley"])
def test_explanations_of_a_constant_function_are_exactly_zero(kernel):
    """Class is constant on an image with circles but no square: exhaustive LIME gives
    exactly zero coefficients, not ~1e-16 ones that KL would normalise into a full map."""
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


def test_progress_is_off_by_default_and_needs_no_tqdm(aixi, monkeypatch):
    data, model, _ = aixi
    assert inspect.signature(ObjectLime.__init__).parameters["progress"].default is False
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)  # importing tqdm would now fail
    ObjectLime(model).explain(data.images, object_labels=data.object_labels)


def test_object_lime_rejects_the_old_name_sample_size(aixi):
    data, model, _ = aixi
    with pytest.raises(TypeError, match="unexpected keyword argument 'sample_size'"):
        ObjectLime(model, kernel="lime", sample_size=5, seed=3)
    new = ObjectLime(model, kernel="lime", nb_samples=5, seed=3)
    assert new.nb_samples == 5
    assert not hasattr(new, "sample_size")
    assert "sample_size" not in inspect.signature(ObjectLime.__init__).parameters


def test_errors():
    data = make_aixi_shape(2, image_size=64, seed=0)
    model = AIXIFunctionModel("ssin")
    with pytest.raises(ValueError, match="`kernel` must be one of"):
        ObjectLime(model, kernel="exponential")
    with pytest.raises(ValueError, match="`nb_samples` must be >= 2"):
        ObjectLime(model, nb_samples=1)
    with pytest.raises(ValueError, match="`alpha` must be in"):
        ObjectLime(model, alpha=-1.0)
    with pytest.raises(TypeError, match="`model` must be callable"):
        ObjectLime("model")
    lime = ObjectLime(model)
    with pytest.raises(ValueError, match="`object_labels` must have shape"):
        lime.explain(data.images, object_labels=data.object_labels[:, :16])
    for labels in (data.object_labels + 0.5, data.object_labels.astype(int) - 1):
        with pytest.raises(ValueError, match="`object_labels` must be integers >= 0, got"):
            lime.explain(data.images, object_labels=labels)
    too_many = np.zeros((1,) + data.images.shape[1:3], int)
    too_many[0, 0, :13] = np.arange(1, 14)
    with pytest.raises(ValueError, match="at most 12 objects"):
        lime.explain(data.images[:1], object_labels=too_many)


def test_the_object_numbering_holds_one_copy_of_the_labels():
    import tracemalloc

    # each image's objects are renumbered into one preallocated array; a list of per-image
    # arrays stacked afterwards held every label map twice at the peak
    labels = np.random.default_rng(0).integers(0, 4, (400, 32, 32)).astype(np.uint8)
    explainer, x = (
        ObjectLime(lambda z: np.zeros((len(z), 1))),
        np.zeros((400, 32, 32, 1), np.float32),
    )
    explainer._prepare(x[:2], labels[:2])  # first-call imports and caches are not measured
    tracemalloc.start()
    try:
        local = explainer._prepare(x, labels)[1]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert local.dtype == np.int64 and local.max() == 3
    assert peak < 1.5 * local.nbytes, (peak, local.nbytes)
