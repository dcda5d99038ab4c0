"""GroundTruthSaliency and GroundTruthLocalisation: the scores are the measures', the model's
agreement with the targets is checked (scikit-learn's accuracy and R^2), and what they refuse."""

import inspect
import time
import warnings

import numpy as np
import pytest
import tensorflow as tf
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import xplique_ext.metrics as gtm
from xplique_ext.commons.warnings import UndefinedScoreWarning, XpliqueExtWarning
from xplique_ext.datasets import (
    make_aixi_color,
    make_aixi_shape,
)
from xplique_ext.metrics import (
    BaseAttributionMetric,
    GroundTruthLocalisation,
    GroundTruthMeasure,
    GroundTruthSaliency,
    LowModelAccuracyWarning,
    emd,
    kl_divergence,
    relevance_mass_accuracy,
)
from xplique_ext.metrics.ground_truth import _agreement
from xplique_ext.models import AIXIFunctionModel


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


@pytest.fixture(scope="module")
def aixi():
    data = make_aixi_shape(3, image_size=64, function="suum", seed=1)
    model = AIXIFunctionModel("suum", dataset="shape")
    phi = np.abs(data.ground_truth) + np.random.default_rng(0).random(data.ground_truth.shape)
    return data, model, phi


@pytest.fixture(scope="module")
def suum_data():
    return make_aixi_shape(4, image_size=64, function="suum", seed=1)


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


PROPERTY = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _pair_maps(seed, n=3, shape=(8, 8)):
    rng = np.random.default_rng(seed)
    phi = rng.random((n,) + shape) * (rng.random((n,) + shape) < 0.5)
    phi[:, 0, 0] += 0.1  # no all-zero map
    truth = np.zeros((n,) + shape)
    truth[:, 2:5, 3:6] = 1.0
    return phi, truth


def test_declares_direction_and_base(data, model):
    assert GroundTruthSaliency.higher_is_better is False
    assert GroundTruthLocalisation.higher_is_better is True
    metric = GroundTruthSaliency(model, data.images, data.targets, ground_truth=data.ground_truth)
    assert isinstance(metric, BaseAttributionMetric)
    assert metric.model_accuracy == pytest.approx(1.0)


@pytest.mark.parametrize("measure", ["emd", "kl"])
def test_scores_equal_the_functions(data, model, measure):
    phi = _explanations(data)
    metric = GroundTruthSaliency(
        model,
        data.images,
        data.targets,
        batch_size=5,
        ground_truth=data.ground_truth,
        measure=measure,
    )
    detailed = metric.detailed_evaluate(phi)
    expected = (
        emd(phi, data.ground_truth) if measure == "emd" else kl_divergence(phi, data.ground_truth)
    )
    np.testing.assert_allclose(detailed, expected)
    assert metric.evaluate(phi) == pytest.approx(float(np.mean(expected)))
    assert metric(phi) == metric.evaluate(phi)
    assert metric.evaluate(data.ground_truth) == pytest.approx(0.0, abs=1e-12)
    # worse explanations score worse (lower is better)
    rng = np.random.default_rng(1)
    assert metric.evaluate(rng.random(phi.shape)) > metric.evaluate(phi)


def test_invariances_batch_size_inputs_and_channels(data, model):
    phi = _explanations(data)
    ref = GroundTruthSaliency(model, data.images, data.targets, ground_truth=data.ground_truth)
    expected = ref.detailed_evaluate(phi)
    for kwargs in (dict(batch_size=None), dict(batch_size=3)):
        m = GroundTruthSaliency(
            model,
            data.images,
            data.targets,
            ground_truth=data.ground_truth,
            **kwargs,
        )
        np.testing.assert_allclose(m.detailed_evaluate(phi), expected)
    ds = tf.data.Dataset.from_tensor_slices((data.images, data.targets)).batch(7)
    m = GroundTruthSaliency(model, ds, ground_truth=data.ground_truth[..., None])
    assert m.model_accuracy == pytest.approx(1.0)
    np.testing.assert_allclose(m.detailed_evaluate(tf.constant(phi[..., None])), expected)
    three = np.repeat(phi[..., None], 3, axis=-1) / 3
    np.testing.assert_allclose(ref.detailed_evaluate(three), expected, atol=1e-12)
    data_only = GroundTruthSaliency.from_aixi(model, data)
    np.testing.assert_allclose(data_only.detailed_evaluate(phi), expected)


def test_from_aixi_uses_the_papers_ground_truth_unless_told_otherwise():
    d = make_aixi_shape(12, image_size=64, function="ssin", seed=4, convention="object")
    d = d[d.counts.sum(1) > 0]
    model = AIXIFunctionModel("ssin")
    paper = GroundTruthSaliency.from_aixi(model, d)
    np.testing.assert_array_equal(paper.ground_truth, d.get_ground_truth("paper"))
    assert paper.evaluate(d.get_ground_truth("paper")) == 0.0
    shapley = GroundTruthSaliency.from_aixi(model, d, convention="object")
    np.testing.assert_array_equal(shapley.ground_truth, d.ground_truth)
    # ssin: the Shapley values are not proportional to w_i, so the two maps differ
    assert paper.evaluate(d.ground_truth) > 0.0
    with pytest.raises(ValueError, match="`convention` must be one of"):
        GroundTruthSaliency.from_aixi(model, d, convention="shapley")


def test_localisation_metric_on_aixi():
    d = make_aixi_color(24, image_size=32, function="ssin", seed=1)
    d = d[d.has_ground_truth]
    metric = GroundTruthLocalisation.from_aixi(
        AIXIFunctionModel("ssin", "color"), d, measure="pointing_game"
    )
    assert metric.evaluate(d.ground_truth) == 1.0
    rng = np.random.default_rng(0)
    noise = rng.random(d.ground_truth.shape)
    for measure in ("mass_accuracy", "rank_accuracy", "pointing_game"):
        m = GroundTruthLocalisation(
            AIXIFunctionModel("ssin", "color"),
            d.images,
            d.targets,
            masks=d.relevant_masks,
            measure=measure,
        )
        assert m.evaluate(d.ground_truth) == pytest.approx(1.0)
        assert m.evaluate(noise) < 0.6
    with pytest.raises(ValueError, match="`measure` must be one of"):
        GroundTruthLocalisation(
            AIXIFunctionModel("ssin", "color"),
            d.images,
            d.targets,
            masks=d.relevant_masks,
            measure="emd",
        )


def test_warns_when_the_model_does_not_reproduce_the_targets(data):
    def constant(x):
        return tf.fill((tf.shape(x)[0], 1), 0.5)

    with pytest.warns(LowModelAccuracyWarning, match="min_accuracy=0.93"):
        m = GroundTruthSaliency(constant, data.images, data.targets, ground_truth=data.ground_truth)
    assert m.model_accuracy < 0.93
    assert issubclass(LowModelAccuracyWarning, XpliqueExtWarning)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        GroundTruthSaliency(
            constant,
            data.images,
            data.targets,
            min_accuracy=-1e9,
            ground_truth=data.ground_truth,
        )
        GroundTruthSaliency(
            constant,
            data.images,
            None,  # no targets: no check
            ground_truth=data.ground_truth,
        )


def test_classification_agreement_is_accuracy():
    d = make_aixi_color(40, image_size=32, function="class", seed=2)
    perfect = AIXIFunctionModel("class", dataset="color")
    m = GroundTruthSaliency(perfect, d.images, d.targets, ground_truth=d.ground_truth)
    assert m.model_accuracy == 1.0

    wrong = d.targets.copy()
    wrong[:10] = 1 - wrong[:10]  # the model disagrees with 10 of the 40 labels
    with pytest.warns(LowModelAccuracyWarning):
        m = GroundTruthSaliency(perfect, d.images, wrong, ground_truth=d.ground_truth)
    assert m.model_accuracy == pytest.approx(0.75)
    # two-column logits with integer ids: argmax accuracy
    two = lambda x: tf.concat([1 - perfect(x), perfect(x)], axis=1)  # noqa: E731
    m = GroundTruthSaliency(two, d.images, d.targets.astype(int), ground_truth=d.ground_truth)
    assert m.model_accuracy == 1.0


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


def test_nan_for_all_zero_ground_truth_is_skipped_with_warning():
    d = make_aixi_shape(30, image_size=64, function="class", seed=0)
    assert (~d.has_ground_truth).any()
    m = GroundTruthSaliency(
        AIXIFunctionModel("class"), d.images, d.targets, ground_truth=d.ground_truth
    )
    phi = np.random.default_rng(0).random(d.ground_truth.shape)
    with pytest.warns(UndefinedScoreWarning):
        scores = m.detailed_evaluate(phi)
    np.testing.assert_array_equal(np.isnan(scores), ~d.has_ground_truth)
    with pytest.warns(UndefinedScoreWarning) as record:
        value = m.evaluate(phi)
    assert any("skipped in the mean" in str(w.message) for w in record)
    assert value == pytest.approx(np.nanmean(scores))


def test_summary_all_undefined_gives_the_reason():
    from xplique_ext.commons.warnings import UndefinedScoreWarning
    from xplique_ext.datasets import make_aixi_color
    from xplique_ext.metrics import GroundTruthLocalisation
    from xplique_ext.models import AIXIFunctionModel

    data = make_aixi_color(4, image_size=32, function="ssin", seed=1)
    metric = GroundTruthLocalisation(
        AIXIFunctionModel("ssin", dataset="color"),
        data.images,
        data.targets,
        masks=data.relevant_masks,
        measure="pointing_game",
        min_accuracy=0.0,
    )
    # the summary says why no score is defined (as evaluate does)
    with pytest.warns(UndefinedScoreWarning, match="no defined score.*Reason: .*constant map"):
        summary = metric.summary(np.zeros_like(data.ground_truth))
    assert np.isnan(summary.mean) and summary.n_undefined == 4


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


@pytest.mark.parametrize("name", ["operator", "seed"])
def test_ground_truth_metrics_reject_operator_and_seed(aixi, name):
    # neither is a parameter: giving one is an unknown keyword
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


def test_metric_errors(data, model):
    kw = dict(ground_truth=data.ground_truth)
    with pytest.raises(ValueError, match="`measure` must be one of"):
        GroundTruthSaliency(model, data.images, data.targets, measure="l2", **kw)
    with pytest.raises(ValueError, match="`ground_distance` must be one of"):
        GroundTruthSaliency(
            model,
            data.images,
            data.targets,
            measure=GroundTruthMeasure("emd", ground_distance="cosine"),
            **kw,
        )
    with pytest.raises(TypeError, match=r"`options` of 'kl' must be among \['epsilon'"):
        GroundTruthMeasure("kl", solver="dense")  # an EMD option given to KL
    with pytest.raises(ValueError, match="`measure` must be one of \\['emd', 'kl'\\]"):
        GroundTruthSaliency(
            model, data.images, data.targets, measure=GroundTruthMeasure("pointing_game"), **kw
        )
    with pytest.raises(TypeError, match="unexpected keyword argument 'resize'"):
        GroundTruthSaliency(model, data.images, data.targets, resize=None, **kw)  # on measure
    with pytest.raises(ValueError, match="`ground_truth` must hold one map per input"):
        GroundTruthSaliency(model, data.images, data.targets, ground_truth=data.ground_truth[:-1])
    with pytest.raises(ValueError, match="`task` must be one of"):
        GroundTruthSaliency(model, data.images, data.targets, task="ranking", **kw)
    with pytest.raises(TypeError, match="unexpected keyword"):
        GroundTruthSaliency(model, data.images, data.targets, normalise=True, **kw)
    m = GroundTruthSaliency(model, data.images, data.targets, **kw)
    with pytest.raises(ValueError, match="`explanations` and `ground_truth` must have the same"):
        m.evaluate(data.ground_truth[:, :16])
    bad = data.ground_truth.copy()
    bad[0, 0, 0] = np.nan
    with pytest.raises(ValueError, match="finite"):
        m.evaluate(bad)
    with pytest.raises(ValueError, match="`ground_truth` must be an array of finite values only"):
        GroundTruthSaliency(model, data.images, data.targets, ground_truth=bad)


@pytest.mark.parametrize("with_targets", [True, False])
def test_reference_length_is_checked_for_datasets_too(data, model, with_targets):
    # a tf.data dataset has no length up front: the maps are counted against its inputs
    x = data.images.astype(np.float32)
    ds = tf.data.Dataset.from_tensor_slices((x, data.targets) if with_targets else x).batch(3)
    for metric in (
        lambda: GroundTruthSaliency(model, ds, ground_truth=data.ground_truth[:2]),
        lambda: GroundTruthLocalisation(model, ds, masks=data.relevant_masks[:2]),
    ):
        with pytest.raises(ValueError, match="must hold one map per input: got 2 maps for"):
            metric()


def _identity(x):
    return x


def test_ground_truth_measure_options_are_declared():
    from xplique_ext.metrics import GroundTruthMeasure, GroundTruthSaliency

    with pytest.raises(
        TypeError,
        match=r"`resize` must be None or a pair of integers "
        r">= 2 \(height, width\), got 'small'",
    ):
        GroundTruthSaliency(
            _identity,
            np.zeros((2, 4, 4, 1)),
            ground_truth=np.ones((2, 4, 4)),
            measure=GroundTruthMeasure("kl", resize="small"),
        )
