"""Tests of ``xplique_ext/metrics/randomization.py``: RandomLogitMetric,
ModelRandomizationMetric and the randomization strategies."""

from __future__ import annotations

import warnings

import keras
import numpy as np
import pytest
import tensorflow as tf

from tests.common_case import Case
from xplique_ext.commons.warnings import UndefinedScoreWarning
from xplique_ext.metrics import (
    ModelRandomizationMetric,
    ModelRandomizationStrategy,
    ProgressiveLayerRandomization,
    RandomLogitMetric,
)
from xplique_ext.metrics.randomization import ssim

SHAPE = (8, 8, 1)
X = np.random.default_rng(0).normal(size=(10, *SHAPE)).astype(np.float32)
Y = np.arange(10) % 4


def _cnn(classes=4, seed=0):
    init = keras.initializers.GlorotUniform(seed=seed)
    return keras.Sequential(
        [
            keras.Input(SHAPE),
            keras.layers.Conv2D(3, 3, kernel_initializer=init, name="conv"),
            keras.layers.Flatten(),
            keras.layers.Dense(classes, kernel_initializer=init, name="dense"),
        ]
    )


MODEL = _cnn()

#: Randomises the top layer of MODEL's two layers with weights (the default, 0.25,
#: randomises none of two)
TOP_HALF = ProgressiveLayerRandomization(0.5)


class GradientInput:
    """Gradient x input of the target's output: an explainer that depends on the model
    and on the class, with Xplique's interface (``model``, ``explain``)."""

    def __init__(self, model):
        self.model = model

    def explain(self, inputs, targets):
        inputs = tf.convert_to_tensor(inputs)
        with tf.GradientTape() as tape:
            tape.watch(inputs)
            score = tf.reduce_sum(self.model(inputs) * tf.cast(targets, tf.float32), axis=-1)
        return (tape.gradient(score, inputs) * inputs).numpy()


def input_explainer(inputs, targets):
    return np.asarray(inputs)


# ------------------------------------------------------------------ ssim
def test_ssim_known_answers():
    a = np.random.default_rng(1).random((3, 16, 16, 1))
    np.testing.assert_allclose(ssim(a, a), 1.0, atol=1e-6)
    np.testing.assert_array_equal(ssim(np.zeros((2, 5, 5)), np.zeros((2, 5, 5))), 1.0)
    assert (ssim(a, a[::-1] ** 3) < 1).any()


def test_ssim_equals_xpliques():
    randomization = pytest.importorskip("xplique.metrics.randomization")
    rng = np.random.default_rng(2)
    for shape in [(4, 16, 16, 1), (4, 5, 5, 3), (4, 32, 32, 1)]:
        a = rng.normal(size=shape).astype(np.float32)
        b = (a + rng.normal(size=shape)).astype(np.float32)
        theirs = randomization.ssim(tf.constant(a), tf.constant(b), batched=True).numpy()
        np.testing.assert_allclose(ssim(a, b), theirs, atol=1e-5)


# ------------------------------------------------------------------ RandomLogitMetric
def test_random_logit_of_a_class_blind_explainer_is_one():
    metric = RandomLogitMetric(MODEL, X, Y, seed=0)
    np.testing.assert_allclose(metric.detailed_evaluate(input_explainer), 1.0, atol=1e-6)


def test_random_logit_draws_another_class_uniformly():
    seen = []

    def recording(inputs, targets):
        seen.append(np.asarray(targets).argmax(axis=1))
        return np.asarray(inputs)

    x = np.random.default_rng(3).normal(size=(600, 2, 2, 1)).astype(np.float32)
    y = np.zeros(600, dtype=int)
    model = keras.Sequential(
        [keras.Input((2, 2, 1)), keras.layers.Flatten(), keras.layers.Dense(4)]
    )
    RandomLogitMetric(model, x, y, batch_size=None, seed=0).evaluate(recording)
    true_class, other = seen
    assert (true_class == 0).all() and (other != 0).all()
    counts = np.bincount(other, minlength=4)[1:]
    assert counts.min() > 150  # about 200 each


def test_random_logit_same_scores_at_any_batch_size_and_order():
    explainer = GradientInput(MODEL)
    expected = RandomLogitMetric(MODEL, X, Y, batch_size=None, seed=5).detailed_evaluate(explainer)
    assert np.ptp(expected) > 0
    for batch_size in (1, 3):
        scores = RandomLogitMetric(MODEL, X, Y, batch_size=batch_size, seed=5).detailed_evaluate(
            explainer
        )
        np.testing.assert_allclose(scores, expected, atol=1e-6)
    order = np.arange(len(X))[::-1]
    reordered = RandomLogitMetric(MODEL, X[order], Y[order], seed=5).detailed_evaluate(explainer)
    np.testing.assert_allclose(reordered, expected[order], atol=1e-6)


def test_random_logit_streams_a_dataset():
    explainer = GradientInput(MODEL)
    expected = RandomLogitMetric(MODEL, X, Y, seed=5).detailed_evaluate(explainer)
    dataset = tf.data.Dataset.from_tensor_slices((X, Y)).batch(4)
    streamed = RandomLogitMetric(MODEL, dataset, None, batch_size=4, seed=5)
    np.testing.assert_allclose(streamed.detailed_evaluate(explainer), expected, atol=1e-6)


def test_random_logit_agrees_with_xplique_within_the_standard_error():
    xplique_metrics = pytest.importorskip("xplique.metrics")
    x = np.random.default_rng(6).normal(size=(48, *SHAPE)).astype(np.float32)
    y = np.eye(4, dtype=np.float32)[np.arange(48) % 4]
    explainer = GradientInput(MODEL)
    ours = RandomLogitMetric(MODEL, x, y, seed=1).detailed_evaluate(explainer)
    theirs = xplique_metrics.RandomLogitMetric(MODEL, x, y, seed=1).evaluate(explainer)
    standard_error = ours.std(ddof=1) / np.sqrt(len(ours))
    assert abs(ours.mean() - theirs) < 4 * standard_error


def test_random_logit_needs_targets_and_two_classes():
    with pytest.raises(ValueError, match="`targets` is required"):
        RandomLogitMetric(MODEL, X, None)
    one_output = keras.Sequential(
        [keras.Input(SHAPE), keras.layers.Flatten(), keras.layers.Dense(1)]
    )
    metric = RandomLogitMetric(one_output, X, np.ones(len(X)))
    with pytest.raises(ValueError, match="at least two classes"):
        metric.evaluate(input_explainer)


# ------------------------------------------------------------------ ModelRandomizationMetric
def test_model_randomization_never_modifies_the_model():
    weights = [w.copy() for w in MODEL.get_weights()]
    explainer = GradientInput(MODEL)
    ModelRandomizationMetric(MODEL, X, Y, TOP_HALF, seed=0).evaluate(explainer)
    assert explainer.model is MODEL
    for before, after in zip(weights, MODEL.get_weights()):
        np.testing.assert_array_equal(before, after)


def test_model_randomization_restores_the_explainer_model_after_an_error():
    class Failing(GradientInput):
        def explain(self, inputs, targets):
            if self.model is not MODEL:
                raise RuntimeError("the explainer failed")
            return super().explain(inputs, targets)

    explainer = Failing(MODEL)
    with pytest.raises(RuntimeError, match="the explainer failed"):
        ModelRandomizationMetric(MODEL, X, Y, TOP_HALF).evaluate(explainer)
    assert explainer.model is MODEL


def test_model_randomization_known_answers():
    class Identity(ModelRandomizationStrategy):
        def randomize(self, model):  # Xplique's interface: no seed
            return model

    explainer = GradientInput(MODEL)
    unchanged = ModelRandomizationMetric(MODEL, X, Y, Identity()).detailed_evaluate(explainer)
    np.testing.assert_allclose(unchanged, 1.0, atol=1e-12)
    blind = ModelRandomizationMetric(MODEL, X, Y, TOP_HALF).detailed_evaluate(
        type("Blind", (), {"model": MODEL, "explain": staticmethod(input_explainer)})()
    )
    np.testing.assert_allclose(blind, 1.0, atol=1e-12)
    everything = ProgressiveLayerRandomization(1.0)
    randomized = ModelRandomizationMetric(MODEL, X, Y, everything, seed=0).detailed_evaluate(
        explainer
    )
    assert randomized.mean() < 0.9


def test_model_randomization_same_scores_at_any_batch_size_and_for_a_seed():
    explainer = GradientInput(MODEL)
    strategy = ProgressiveLayerRandomization(0.5)
    expected = ModelRandomizationMetric(MODEL, X, Y, strategy, None, seed=2).detailed_evaluate(
        explainer
    )
    for batch_size in (1, 4):
        scores = ModelRandomizationMetric(
            MODEL, X, Y, strategy, batch_size, seed=2
        ).detailed_evaluate(explainer)
        np.testing.assert_allclose(scores, expected, atol=1e-6)
    other = ModelRandomizationMetric(MODEL, X, Y, strategy, seed=3).detailed_evaluate(explainer)
    assert not np.allclose(other, expected)


def test_model_randomization_agrees_with_xplique_within_the_standard_error():
    xplique_metrics = pytest.importorskip("xplique.metrics")
    y = np.eye(4, dtype=np.float32)[Y]
    explainer = GradientInput(MODEL)
    strategy = ProgressiveLayerRandomization(0.5)
    ours = [
        ModelRandomizationMetric(MODEL, X, y, strategy, seed=seed).evaluate(explainer)
        for seed in range(8)
    ]
    theirs = xplique_metrics.ModelRandomizationMetric(
        MODEL, X, y, xplique_metrics.ProgressiveLayerRandomization(0.5), batch_size=None
    ).evaluate(explainer)
    # over the draws of the randomised model: the spread of our means
    assert abs(np.mean(ours) - theirs) < 4 * np.std(ours, ddof=1) + 1e-6


def test_a_constant_explanation_is_nan_with_its_reason():
    class ConstantForFirst(GradientInput):
        def explain(self, inputs, targets):
            out = super().explain(inputs, targets)
            out[np.asarray(inputs)[:, 0, 0, 0] > 50] = 1.0
            return out

    x = X.copy()
    x[0, 0, 0, 0] = 100.0
    with pytest.warns(UndefinedScoreWarning, match="a constant explanation has no ranks"):
        scores = ModelRandomizationMetric(MODEL, x, Y, TOP_HALF).detailed_evaluate(
            ConstantForFirst(MODEL)
        )
    assert np.isnan(scores[0]) and np.isfinite(scores[1:]).all()


def test_model_randomization_refusals_name_the_parameter():
    with pytest.raises(ValueError, match="`targets` is required"):
        ModelRandomizationMetric(MODEL, X, None)
    with pytest.raises(TypeError, match="`randomization_strategy`"):
        ModelRandomizationMetric(MODEL, X, Y, "top")
    with pytest.raises(TypeError, match="`explainer`"):
        ModelRandomizationMetric(MODEL, X, Y).evaluate(input_explainer)


# ------------------------------------------------------------------ strategies
def test_progressive_randomization_from_the_top_stops_before_the_layer():
    model = _cnn()
    conv = model.get_layer("conv").get_weights()
    dense = model.get_layer("dense").get_weights()
    ProgressiveLayerRandomization("conv").randomize(model, seed=0)
    for before, after in zip(conv, model.get_layer("conv").get_weights()):
        np.testing.assert_array_equal(before, after)
    for before, after in zip(dense, model.get_layer("dense").get_weights()):
        assert not np.allclose(before, after)
        assert after.min() >= 0 and after.max() < 1  # uniform in [0, 1), as Xplique


def test_progressive_randomization_is_seeded():
    first = ProgressiveLayerRandomization(1.0).randomize(_cnn(), seed=4).get_weights()
    again = ProgressiveLayerRandomization(1.0).randomize(_cnn(), seed=4).get_weights()
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)


def test_progressive_randomization_refusals():
    with pytest.raises(TypeError, match="`stop_layer`"):
        ProgressiveLayerRandomization({"not": "allowed"})
    for fraction in (1.5, -0.1):
        with pytest.raises(ValueError, match="`stop_layer`"):
            ProgressiveLayerRandomization(fraction)
    with pytest.raises(ValueError, match="not found"):
        ProgressiveLayerRandomization("nowhere").randomize(_cnn())
    with pytest.raises(TypeError, match="`reverse`"):
        ProgressiveLayerRandomization(0.5, reverse="yes")


# ------------------------------------------------------------------ common checks
class _NanForLarge(GradientInput):
    """NaN explanations for the inputs whose first value is large."""

    def explain(self, inputs, targets):
        out = super().explain(inputs, targets).astype(np.float64)
        out[np.asarray(inputs)[:, 0, 0, 0] > 50] = np.nan
        return out


def _with_a_large_input():
    x = X.copy()
    x[0, 0, 0, 0] = 100.0
    return x


def _quiet(build):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return build()


def _random_logit_case():
    explainer = GradientInput(MODEL)
    return Case(
        RandomLogitMetric,
        lambda seed: RandomLogitMetric(MODEL, X, Y, batch_size=4, seed=seed),
        (explainer,),
        len(X),
        data={"model": MODEL, "inputs": X, "targets": Y},
        nan=lambda: (
            RandomLogitMetric(MODEL, _with_a_large_input(), Y, seed=0),
            (_NanForLarge(MODEL),),
        ),
        model_based=True,
    )


def _model_randomization_case():
    explainer = GradientInput(MODEL)
    strategy = ProgressiveLayerRandomization(0.5)
    return Case(
        ModelRandomizationMetric,
        lambda seed: ModelRandomizationMetric(MODEL, X, Y, strategy, 4, seed=seed),
        (explainer,),
        len(X),
        data={"model": MODEL, "inputs": X, "targets": Y, "randomization_strategy": strategy},
        nan=lambda: (
            ModelRandomizationMetric(MODEL, _with_a_large_input(), Y, strategy, seed=0),
            (_NanForLarge(MODEL),),
        ),
        model_based=True,
    )


COMMON_CASES = {
    "RandomLogitMetric": _random_logit_case,
    "ModelRandomizationMetric": _model_randomization_case,
}


# ------------------------------------------------------------------ explainer outputs
class _CroppedGradient(GradientInput):
    """Explanations of the wrong shape: the first four rows of each image only."""

    def explain(self, inputs, targets):
        return super().explain(inputs, targets)[:, :4]


class _SummedGradient(GradientInput):
    """Explanations of the wrong shape: one value per input."""

    def explain(self, inputs, targets):
        return super().explain(inputs, targets).sum(axis=(1, 2, 3))


@pytest.mark.parametrize("metric_class", [RandomLogitMetric, ModelRandomizationMetric])
@pytest.mark.parametrize("explainer_class", [_CroppedGradient, _SummedGradient])
def test_an_explanation_of_the_wrong_shape_is_refused_naming_the_explainer(
    metric_class, explainer_class
):
    metric = metric_class(MODEL, X, Y, seed=0)
    if metric_class is ModelRandomizationMetric:
        metric = metric_class(MODEL, X, Y, TOP_HALF, seed=0)
    name = explainer_class.__name__
    with pytest.raises(ValueError, match=rf"`explainer` \({name}\) must return one explanation"):
        metric(explainer_class(MODEL))


@pytest.mark.parametrize("stop_layer", [0.25, 0, 0.0, "dense"])
def test_a_randomization_of_no_layer_is_refused_naming_stop_layer(stop_layer):
    metric = ModelRandomizationMetric(MODEL, X, Y, ProgressiveLayerRandomization(stop_layer))
    with pytest.raises(ValueError, match="`stop_layer` .* randomizes no layer"):
        metric.evaluate(GradientInput(MODEL))
    default = ModelRandomizationMetric(MODEL, X, Y)  # 0.25 of two layers with weights
    with pytest.raises(ValueError, match="`stop_layer` 0.25 randomizes no layer"):
        default.evaluate(GradientInput(MODEL))


@pytest.mark.parametrize("metric_class", [RandomLogitMetric, ModelRandomizationMetric])
def test_targets_default_to_those_an_x_y_dataset_carries(metric_class):
    dataset = tf.data.Dataset.from_tensor_slices((X, Y)).batch(4)
    strategy = (
        {"randomization_strategy": TOP_HALF} if metric_class is ModelRandomizationMetric else {}
    )
    streamed = metric_class(MODEL, dataset, batch_size=4, seed=5, **strategy)
    expected = metric_class(MODEL, X, Y, batch_size=4, seed=5, **strategy)
    explainer = GradientInput(MODEL)
    np.testing.assert_allclose(
        streamed.detailed_evaluate(explainer), expected.detailed_evaluate(explainer), atol=1e-6
    )
    for no_targets in (X, tf.data.Dataset.from_tensor_slices(X).batch(4)):
        with pytest.raises(ValueError, match="`targets` is required.*carry no targets"):
            metric_class(MODEL, no_targets)
