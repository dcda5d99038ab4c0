"""Model-based metrics on tf.distribute: the same results on 1, 2 and 3 replicas.

Logical devices must be configured before TensorFlow initialises, so the checks run in
one fresh process (``replica_checks.py``, 3 logical CPU devices) whose results every
test below reads.
"""

import copy
import importlib.util
import json
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

CHECKS = {
    # name: replica counts that must have been compared
    "mufidelity_uneven": [1, 2, 3],  # 7 inputs, batches of 5: uneven at 2 and 3 replicas
    "mufidelity_batch_none": [2],
    "mufidelity_one_input_batches": [2],  # fewer inputs than replicas
    "mufidelity_dataset": [2],
    "mufidelity_pearson_softmax": [2],
    "mufidelity_explicit_strategy": [2],
    "ground_truth_saliency": [1, 2, 3],
    "ground_truth_localisation": [2],
    "percy_lime": [1, 2, 3],
    "percy_ig": [2],
    "percy_metric": [2],
    "object_lime": [2],
    "replica_runner": [3],
    "deletion_uneven": [1, 2, 3],
    "insertion_dataset": [2],
    "average_drop": [2],
    "average_increase": [2],
    "average_gain": [2],
    "average_stability_uneven": [1, 2, 3],  # predicted classes, 7 inputs in batches of 5
    "random_logit_dataset": [2],
    "model_randomization": [2],
    "mege": [1, 2, 3],
    "explainer_explicit_strategy": [2],
}
# The explainer metrics' scores come from the explainer's outputs, computed as the user's
# explainer computes them; the replicas only give the model's outputs of which the metric
# reads a class (an argmax) or the number of outputs. Their scores are identical.
EXPLAINER_CHECKS = (
    "average_stability_uneven",
    "random_logit_dataset",
    "model_randomization",
    "mege",
    "explainer_explicit_strategy",
)
if importlib.util.find_spec("keras_hub") is not None:  # the [text] extra (part of dev)
    CHECKS["percy_hub"] = [2]  # a tiny keras-hub BERT through LIME and IG


@pytest.fixture(scope="module")
def replica_results():
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    env["TF_CPP_MIN_LOG_LEVEL"] = "2"
    proc = subprocess.run(
        [sys.executable, os.path.join(HERE, "replica_checks.py")],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULTS ")]
    assert proc.returncode == 0 and lines, proc.stderr[-4000:]
    return json.loads(lines[-1][len("RESULTS ") :])


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_same_results_on_every_replica_count(replica_results, name):
    rows = replica_results[name]
    assert [r for r, _, _ in rows] == CHECKS[name]
    for replicas, gap, _ in rows:
        assert gap <= 1e-6, f"{name}: {replicas} replicas differ from one device by {gap}"


def test_mufidelity_rank_scores_are_identical(replica_results):
    # Spearman's rho of the same ranks: round-off may not change it. A subset that repeats
    # is evaluated once, so its drops tie exactly whatever share of the batch a replica
    # scores; distinct subsets' drops are far apart next to the model's round-off. A
    # Pearson score moves with the last bits of the model's outputs, which may change with
    # the shape of each replica's share: it is held within 1e-6 (the check above).
    for name in CHECKS:
        if name.startswith("mufidelity") and "pearson" not in name:
            assert all(equal for _, _, equal in replica_results[name]), name


@pytest.mark.parametrize("name", EXPLAINER_CHECKS)
def test_explainer_metric_scores_are_identical(replica_results, name):
    assert all(equal for _, _, equal in replica_results[name]), name


EXPLAINER_METRICS = ("AverageStability", "RandomLogitMetric", "ModelRandomizationMetric", "MeGe")


def _explainer_metric(name, strategy=None):
    """One of the explainer metrics (or MeGe) on a tiny CNN, with ``strategy``; MeGe's
    models are the CNN, whatever their split."""
    from tests.conftest import tiny_cnn
    from xplique_ext import metrics

    model = tiny_cnn()
    x = np.random.default_rng(0).random((4, 16, 16, 3), dtype=np.float32)
    y = np.eye(3, dtype=np.float32)[np.asarray(model(x)).argmax(axis=1)]  # MeGe: defined
    if name == "AverageStability":
        return metrics.AverageStability(
            model, x, None, batch_size=3, nb_samples=2, seed=0, strategy=strategy
        )
    if name == "RandomLogitMetric":
        return metrics.RandomLogitMetric(model, x, y, batch_size=3, strategy=strategy)
    if name == "ModelRandomizationMetric":
        return metrics.ModelRandomizationMetric(
            model, x, y, metrics.ProgressiveLayerRandomization(0.5), 3, strategy=strategy
        )

    def same_model(x_train, y_train, x_test, y_test):
        return model

    return metrics.MeGe(same_model, x, y, batch_size=3, k_splits=2, strategy=strategy)


class _Saliency:
    """|gradient| of sum(model(x) * y), as Xplique's Saliency (with ``model``)."""

    def __init__(self, model):
        self.model = model

    def explain(self, inputs, targets):
        import tensorflow as tf

        x = tf.convert_to_tensor(inputs)
        with tf.GradientTape() as tape:
            tape.watch(x)
            score = tf.reduce_sum(self.model(x) * tf.cast(targets, x.dtype), axis=-1)
        return np.abs(tape.gradient(score, x).numpy())


def _explain_with(name, metric):
    if name == "MeGe":
        return metric.detailed_evaluate(_Saliency)
    return metric.detailed_evaluate(_Saliency(metric.model))


@pytest.mark.parametrize("name", EXPLAINER_METRICS)
def test_explainer_metrics_refuse_a_strategy_that_is_not_one(name):
    with pytest.raises(TypeError, match="`strategy` must be a tf.distribute.Strategy"):
        _explainer_metric(name, strategy="mirrored")


@pytest.mark.parametrize("name", EXPLAINER_METRICS)
def test_explainer_metrics_on_a_one_device_strategy(name):
    """The engine's model calls go through strategy.run (no logical devices needed): same
    scores; the strategy is data, as for the model metrics (not in get_config)."""
    import tensorflow as tf

    from xplique_ext.runtime import ReplicaRunner, is_default_strategy

    metric = _explainer_metric(name)
    strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
    with strategy.scope():
        in_scope = _explainer_metric(name)
    explicit = _explainer_metric(name, strategy)
    assert is_default_strategy(metric.strategy)
    assert in_scope.strategy is strategy
    assert explicit.strategy is strategy
    assert "strategy" not in explicit.get_config()
    ref = _explain_with(name, metric)
    np.testing.assert_array_equal(_explain_with(name, in_scope), ref)
    np.testing.assert_array_equal(_explain_with(name, explicit), ref)
    if name != "MeGe":  # MeGe builds an engine per model at each evaluation
        assert not isinstance(metric.engine._output_fn, ReplicaRunner)
        assert isinstance(explicit.engine._output_fn, ReplicaRunner)
        assert copy.deepcopy(explicit).strategy is strategy


def test_strategy_must_be_a_strategy():
    from xplique_ext.metrics import MuFidelity
    from xplique_ext.runtime import resolve_strategy

    with pytest.raises(TypeError, match="`strategy` must be a tf.distribute.Strategy"):
        resolve_strategy("mirrored")
    x = np.zeros((2, 4), np.float32)
    with pytest.raises(TypeError, match="`strategy`"):
        MuFidelity(lambda v: v, x, np.ones(2), strategy=2)


def test_default_strategy_keeps_the_single_device_path():
    import tensorflow as tf

    from tests.conftest import linear_model
    from xplique_ext.metrics import MuFidelity
    from xplique_ext.metrics.base import BaseAttributionMetric
    from xplique_ext.runtime import ReplicaRunner, is_default_strategy

    metric = MuFidelity(linear_model((4,)), np.ones((2, 4), np.float32), np.ones(2), progress=False)
    assert is_default_strategy(metric.strategy)
    assert metric.strategy is tf.distribute.get_strategy()
    assert not isinstance(metric._score_fn, ReplicaRunner)
    assert not isinstance(metric._perturbed_fn, ReplicaRunner)
    assert isinstance(metric, BaseAttributionMetric)


def test_one_device_strategy_in_process():
    """A non-default strategy with one replica goes through strategy.run (no logical
    devices needed) and gives the same scores."""
    import tensorflow as tf

    from tests.conftest import tiny_cnn
    from xplique_ext.metrics import MuFidelity
    from xplique_ext.runtime import ReplicaRunner

    rng = np.random.default_rng(0)
    model = tiny_cnn()
    x = rng.random((3, 16, 16, 3), dtype=np.float32)
    phi = rng.random((3, 16, 16), dtype=np.float32)
    kw = dict(batch_size=2, nb_samples=10, grid_size=4, seed=0, progress=False)
    ref = MuFidelity(model, x, None, **kw).detailed_evaluate(phi)
    strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
    with strategy.scope():
        metric = MuFidelity(model, x, None, **kw)
    assert isinstance(metric._score_fn, ReplicaRunner)
    assert isinstance(metric._perturbed_fn, ReplicaRunner)
    np.testing.assert_allclose(metric.detailed_evaluate(phi), ref, atol=1e-6)


def test_replica_runner_errors_and_fallbacks():
    import tensorflow as tf

    from xplique_ext.commons.warnings import XpliqueExtWarning
    from xplique_ext.runtime import ReplicaRunner

    strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
    runner = ReplicaRunner(lambda a, b: a + b, strategy, fallback=lambda a, b: a + b)
    with pytest.raises(ValueError, match="same first dimension"):
        runner(np.zeros(3), np.zeros(2))
    assert runner(np.zeros((0, 2)), np.zeros((0, 2))).shape == (0, 2)  # empty batch

    def bad_model(x):  # a genuine error: raised as is, no "cannot be traced" warning
        raise ValueError("`x` has the wrong shape")

    bad = ReplicaRunner(bad_model, strategy, fallback=bad_model)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="wrong shape"):
            bad(np.zeros((2, 2)))

    def numpy_model(x):
        return np.asarray(x) * 3.0

    untraceable = ReplicaRunner(numpy_model, strategy, fallback=numpy_model)
    with pytest.warns(XpliqueExtWarning, match="cannot be traced"):
        np.testing.assert_array_equal(untraceable(np.arange(3.0)), [0.0, 3.0, 6.0])


def test_text_classifier_keeps_its_own_strategy():
    import tensorflow as tf

    from xplique_ext.text import BagOfWordsModel
    from xplique_ext.text.classifier import TextClassifier, as_text_classifier

    bow = BagOfWordsModel({"good": 1.0})
    clf = TextClassifier(bow.to_keras(), bow.tokenizer)
    assert as_text_classifier(clf) is clf
    with pytest.raises(ValueError, match="`strategy` must be None"):
        as_text_classifier(clf, strategy=tf.distribute.OneDeviceStrategy("/cpu:0"))
