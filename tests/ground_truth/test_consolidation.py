"""Issue 11 in the ground-truth family: scikit-learn's accuracy and R^2, the removed
parameters (now unknown keywords), progress bars off by default, the public shared helpers."""

import inspect
import sys
import warnings

import numpy as np
import pytest

from xplique_ext.commons.resize import area_downsample
from xplique_ext.datasets import apply_function, make_aixi_shape, resolve_function, suum
from xplique_ext.explainers import ObjectLime
from xplique_ext.metrics import GroundTruthLocalisation, GroundTruthSaliency, emd
from xplique_ext.metrics.ground_truth import _agreement
from xplique_ext.models import AIXIFunctionModel


# --------------------------------------------------------------------------- scikit-learn
def _hand_written(y, pred, task):
    """The formulas the module computed by hand before scikit-learn (the oracle)."""
    if task == "classification":
        if y.shape[1] == 1:
            return float(np.mean((pred[:, 0] >= 0.5) == (y[:, 0] >= 0.5)))
        return float(np.mean(np.argmax(pred, axis=1) == np.argmax(y, axis=1)))
    residual = np.sum((y - pred) ** 2)
    total = np.sum((y - y.mean(axis=0)) ** 2)
    if total == 0:
        return 1.0 if residual == 0 else 0.0
    return float(1.0 - residual / total)


@pytest.mark.parametrize("k", [1, 4])
@pytest.mark.parametrize("seed", range(5))
def test_accuracy_and_r2_agree_with_the_hand_written_formulas(k, seed):
    rng = np.random.default_rng(seed)
    n = 50
    labels = (
        rng.integers(0, 2, (n, 1)).astype(np.float64)
        if k == 1
        else np.eye(k)[rng.integers(0, k, n)]
    )
    scores = rng.random((n, k))
    assert _agreement(labels, scores, "classification") == _hand_written(
        labels, scores, "classification"
    )
    y = rng.normal(size=(n, k)) * rng.uniform(0.1, 10, k)  # columns of unequal variance
    pred = y + rng.normal(scale=0.5, size=(n, k))
    assert _agreement(y, pred, "regression") == pytest.approx(
        _hand_written(y, pred, "regression"), abs=1e-12
    )


def test_r2_of_constant_targets():
    y = np.full((6, 2), 3.0)
    assert _agreement(y, y.copy(), "regression") == 1.0
    assert _agreement(y, y + 1.0, "regression") == 0.0


def test_metric_agreement_is_sklearn_r2_for_regression_targets():
    from sklearn.metrics import r2_score

    data = make_aixi_shape(12, image_size=64, function="suum", seed=3)
    model = AIXIFunctionModel("suum", dataset="shape")
    noisy = data.targets + np.random.default_rng(0).normal(scale=0.05, size=data.targets.shape)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        metric = GroundTruthSaliency(model, data.images, noisy, ground_truth=data.ground_truth)
    pred = np.asarray(model(data.images)).reshape(len(noisy), -1)
    expected = r2_score(noisy.reshape(len(noisy), -1), pred, multioutput="variance_weighted")
    assert metric.model_accuracy == pytest.approx(expected, abs=1e-6)
    assert metric.model_accuracy < 1.0


# --------------------------------------------------------------------------- operator, seed
@pytest.fixture(scope="module")
def aixi():
    data = make_aixi_shape(3, image_size=64, function="suum", seed=1)
    model = AIXIFunctionModel("suum", dataset="shape")
    phi = np.abs(data.ground_truth) + np.random.default_rng(0).random(data.ground_truth.shape)
    return data, model, phi


@pytest.mark.parametrize("name", ["operator", "seed"])
def test_ground_truth_metrics_reject_operator_and_seed(aixi, name):
    # Formerly accepted with a DeprecationWarning and ignored; now an unknown keyword.
    data, model, _ = aixi
    value = (lambda f, x, y: f(x)[:, 0]) if name == "operator" else 7
    builds = {
        GroundTruthSaliency: dict(ground_truth=data.ground_truth, measure="kl"),
        GroundTruthLocalisation: dict(masks=data.relevant_masks),
    }
    for cls, options in builds.items():
        assert name not in inspect.signature(cls.__init__).parameters
        with pytest.raises(TypeError, match=f"unexpected keyword argument '{name}'"):
            cls(model, data.images, data.targets, **options, **{name: value})
        assert name not in cls(model, data.images, data.targets, **options).get_config()


# --------------------------------------------------------------------------- ObjectLime
def test_object_lime_rejects_the_old_name_sample_size(aixi):
    data, model, _ = aixi
    with pytest.raises(TypeError, match="unexpected keyword argument 'sample_size'"):
        ObjectLime(model, kernel="lime", sample_size=5, seed=3)
    new = ObjectLime(model, kernel="lime", nb_samples=5, seed=3)
    assert new.nb_samples == 5
    assert not hasattr(new, "sample_size")
    assert "sample_size" not in inspect.signature(ObjectLime.__init__).parameters


# --------------------------------------------------------------------------- progress
def test_progress_is_off_by_default_and_needs_no_tqdm(aixi, monkeypatch):
    data, model, phi = aixi
    assert inspect.signature(emd).parameters["progress"].default is False
    assert inspect.signature(ObjectLime.__init__).parameters["progress"].default is False
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)  # importing tqdm would now fail
    metric = GroundTruthSaliency(model, data.images, data.targets, ground_truth=data.ground_truth)
    assert metric.measure.options == {}  # emd's defaults: progress=False
    metric.evaluate(phi)
    emd(phi, data.ground_truth, n_jobs=2)
    ObjectLime(model).explain(data.images, object_labels=data.object_labels)
    with pytest.raises(ImportError):  # on: tqdm is imported
        emd(phi, data.ground_truth, progress=True)


def test_progress_bars_when_enabled(aixi, capsys):
    data, model, phi = aixi
    emd(phi, data.ground_truth, progress=True)
    ObjectLime(model, progress=True).explain(data.images, object_labels=data.object_labels)
    err = capsys.readouterr().err
    assert "EMD" in err and "ObjectLime" in err


# --------------------------------------------------------------------------- shared helpers
def test_resolve_and_apply_function_are_public():
    assert resolve_function("suum") == ("suum", suum)
    g = np.array([[0.1, 0.2, 0.3], [0.0, 0.0, 1.0]])
    np.testing.assert_array_equal(apply_function(suum, g), np.asarray(suum(g), np.float64))
    with pytest.raises(ValueError, match="`function`"):
        apply_function(lambda g: g, g)


def test_area_downsample_is_the_block_sum():
    rng = np.random.default_rng(0)
    maps = rng.random((300, 8, 12))  # many maps
    out = area_downsample(maps, (4, 3))
    blocks = maps.reshape(300, 4, 2, 3, 4).sum(axis=(2, 4))
    np.testing.assert_allclose(out, blocks, rtol=1e-5)
    assert area_downsample(maps, None) is maps
    assert area_downsample(maps, (16, 16)) is maps


def test_area_downsample_takes_many_maps_at_a_non_integer_factor():
    # OpenCV's INTER_AREA takes at most 4 channels at a non-integer factor (it once got up
    # to 128 maps per call, and failed for 5 maps of 33x17 pixels)
    rng = np.random.default_rng(1)
    maps, other = rng.random((6, 33, 17)), rng.random((6, 33, 17))
    out = area_downsample(maps, (10, 5))
    one_by_one = np.concatenate([area_downsample(m[None], (10, 5)) for m in maps])
    np.testing.assert_array_equal(out, one_by_one)
    np.testing.assert_allclose(out.sum(axis=(1, 2)), maps.sum(axis=(1, 2)))
    np.testing.assert_array_equal(
        emd(maps, other, resize=(10, 10)), [emd(a, b, resize=(10, 10)) for a, b in zip(maps, other)]
    )
    strided = maps.transpose(0, 2, 1)[:, ::-1]  # any strides: OpenCV copies what it must
    np.testing.assert_array_equal(
        area_downsample(strided, (4, 8)), area_downsample(np.ascontiguousarray(strided), (4, 8))
    )
