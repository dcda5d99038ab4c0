"""GroundTruthSaliency / GroundTruthLocalisation metrics and the localisation measures."""

import warnings

import numpy as np
import pytest
import tensorflow as tf

from xplique_ext.commons.warnings import UndefinedScoreWarning, XpliqueExtWarning
from xplique_ext.datasets import make_aixi_color, make_aixi_shape
from xplique_ext.metrics import (
    BaseAttributionMetric,
    GroundTruthLocalisation,
    GroundTruthMeasure,
    GroundTruthSaliency,
    LowModelAccuracyWarning,
    emd,
    kl_divergence,
    pointing_game,
    relevance_mass_accuracy,
    relevance_rank_accuracy,
)
from xplique_ext.models import AIXIFunctionModel


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


# ---------------------------------------------------------------- localisation
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
