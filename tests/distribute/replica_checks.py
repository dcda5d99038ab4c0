"""Run in a fresh process by test_distribute.py: the CPU is split into 3 logical devices
(this must happen before TensorFlow initialises), then every model-based metric and
explainer is run on one device (default strategy) and under MirroredStrategy with 1, 2 and
3 replicas. Prints one JSON object: check name -> list of [replicas, max |difference|,
exactly equal]."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import time
import warnings

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ["CUDA_VISIBLE_DEVICES"] = ""

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

REPLICAS = (1, 2, 3)
cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(
    cpu, [tf.config.LogicalDeviceConfiguration()] * max(REPLICAS)
)
STRATEGIES = {r: tf.distribute.MirroredStrategy([f"/cpu:{i}" for i in range(r)]) for r in REPLICAS}

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from conftest import tiny_cnn  # noqa: E402

RESULTS: dict = {}
TIMES: dict = {}


def compare(name, run, replicas=(2,)):
    """run(strategy or None) -> array or tuple of arrays; compares the given replica
    counts with the default strategy."""
    t0 = time.perf_counter()
    ref = run(None)
    rows = []
    for r in replicas:
        strategy = STRATEGIES[r]
        with strategy.scope():
            out = run(strategy)
        gaps, equal = [], True
        parts = list(ref) if isinstance(ref, tuple) else [ref]
        outs = list(out) if isinstance(out, tuple) else [out]
        if len(parts) != len(outs):
            rows.append([r, float("inf"), False])
            continue
        for a, b in zip(parts, outs):
            a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
            if a.shape != b.shape:
                gaps.append(float("inf"))
                equal = False
                continue
            gaps.append(float(np.nanmax(np.abs(a - b))) if a.size else 0.0)
            equal = equal and np.array_equal(a, b, equal_nan=True)
        rows.append([r, max(gaps), bool(equal)])
    RESULTS[name] = rows
    TIMES[name] = round(time.perf_counter() - t0, 2)


def mufidelity_checks():
    from xplique_ext.metrics import MuFidelity

    rng = np.random.default_rng(0)
    model = tiny_cnn()
    x = rng.random((7, 16, 16, 3), dtype=np.float32)
    phi = rng.random((7, 16, 16), dtype=np.float32)
    y = rng.integers(0, 3, 7)

    def run(batch_size, targets=None, data=x, **kw):
        def go(strategy):
            metric = MuFidelity(
                model,
                data,
                targets,
                batch_size=batch_size,
                nb_samples=20,
                grid_size=4,
                seed=0,
                progress=False,
                **kw,
            )
            if strategy is not None and metric.strategy is not strategy:
                raise AssertionError("the metric did not pick up the strategy in scope")
            return metric.detailed_evaluate(phi)

        return go

    compare("mufidelity_uneven", run(5), REPLICAS)  # 7 inputs in batches of 5 and 2
    compare("mufidelity_batch_none", run(None, y))
    compare("mufidelity_one_input_batches", run(1, y))  # fewer inputs than replicas
    compare("mufidelity_dataset", run(4, None, tf.data.Dataset.from_tensor_slices(x).batch(3)))
    compare("mufidelity_pearson_softmax", run(3, y, correlation="pearson", activation="softmax"))
    # explicit strategy, built outside any scope
    ref = MuFidelity(
        model, x, y, batch_size=5, nb_samples=20, grid_size=4, seed=0, progress=False
    ).detailed_evaluate(phi)
    out = MuFidelity(
        model,
        x,
        y,
        batch_size=5,
        nb_samples=20,
        grid_size=4,
        seed=0,
        progress=False,
        strategy=STRATEGIES[2],
    ).detailed_evaluate(phi)
    RESULTS["mufidelity_explicit_strategy"] = [
        [2, float(np.max(np.abs(ref - out))), bool(np.array_equal(ref, out))]
    ]


def ground_truth_checks():
    from xplique_ext.datasets import make_aixi_shape
    from xplique_ext.metrics import (
        GroundTruthLocalisation,
        GroundTruthMeasure,
        GroundTruthSaliency,
    )

    data = make_aixi_shape(5, image_size=64, function="suum", seed=1)
    model = tiny_cnn((64, 64, 1), classes=2)
    phi = np.random.default_rng(1).random((5, 64, 64))

    def saliency(strategy):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            metric = GroundTruthSaliency(
                model,
                data.images,
                None,
                batch_size=3,
                ground_truth=data.ground_truth,
                measure=GroundTruthMeasure("emd", resize=None),
            )
            return (
                metric.model_outputs(data.images),
                metric.detailed_evaluate(phi),
                metric.scores(data.images, metric.format_targets(data.images, None)),
            )

    def localisation(strategy):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            metric = GroundTruthLocalisation(
                model, data.images, np.zeros(5, int), batch_size=2, masks=data.relevant_masks
            )
            return (
                np.asarray([metric.model_accuracy]),
                metric.detailed_evaluate(phi),
                metric.model_outputs(data.images),
            )

    compare("ground_truth_saliency", saliency, REPLICAS)
    compare("ground_truth_localisation", localisation)


def text_checks():
    from xplique_ext.text import (
        BagOfWordsModel,
        IntegratedGradientsTokenExplainer,
        LimeTokenExplainer,
    )

    bow = BagOfWordsModel({"good": 2.0, "bad": -2.0, "dull": -1.0})
    keras_model = bow.to_keras()
    sentences = ["a good film", "bad", "good but dull plot", "the plot was good good bad", "dull"]

    def lime(strategy):
        explainer = LimeTokenExplainer(
            keras_model, bow.tokenizer, batch_size=7, nb_samples=23, seed=0, progress=False
        )
        return tuple(explainer(sentences))

    def ig(strategy):
        explainer = IntegratedGradientsTokenExplainer(
            keras_model, bow.tokenizer, batch_size=5, steps=8, tolerance=None, progress=False
        )
        out = explainer(sentences)
        return tuple(out) + (explainer.convergence_delta_,)

    def percy(strategy):
        from xplique_ext.metrics import PERCY

        metric = PERCY(
            keras_model,
            sentences,
            [1, 0, 0, 1, 0],
            batch_size=2,
            tokenizer=bow.tokenizer,
            test=None,
        )
        exact = [bow.logit_contributions(s) for s in sentences]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return metric.p_positive, metric.detailed_evaluate(exact)

    compare("percy_lime", lime, REPLICAS)
    compare("percy_metric", percy)
    compare("percy_ig", ig)
    if importlib.util.find_spec("keras_hub") is not None:
        hub_checks()


def hub_checks():
    """A tiny keras-hub BERT task (through the adapter of text/hub.py): LIME and IG."""
    import keras_hub

    from xplique_ext.text import IntegratedGradientsTokenExplainer, LimeTokenExplainer

    vocab = [
        "[PAD]",
        "[UNK]",
        "[CLS]",
        "[SEP]",
        "[MASK]",
        "the",
        "plot",
        "was",
        "dull",
        "but",
        "cast",
        "shine",
        "##s",
        "un",
        "##fun",
        "##ny",
        "movie",
        ",",
    ]
    tokenizer = keras_hub.models.BertTokenizer(vocabulary=vocab)
    backbone = keras_hub.models.BertBackbone(
        vocabulary_size=len(vocab),
        num_layers=1,
        num_heads=2,
        hidden_dim=16,
        intermediate_dim=32,
        max_sequence_length=16,
        dropout=0.0,
    )
    task = keras_hub.models.BertTextClassifier(
        backbone,
        num_classes=2,
        dropout=0.0,
        preprocessor=keras_hub.models.BertTextClassifierPreprocessor(tokenizer, 16),
    )
    rng = np.random.default_rng(0)
    for w in task.weights:
        w.assign(rng.normal(0.0, 0.4, w.shape).astype(w.dtype))
    sentences = ["the plot was dull, but the cast shines", "unfunny movie", "movie"]

    def run(strategy):
        lime = LimeTokenExplainer(task, batch_size=7, nb_samples=23, strategy=strategy)
        ig = IntegratedGradientsTokenExplainer(
            task, batch_size=5, steps=8, tolerance=None, strategy=strategy
        )
        return tuple(lime(sentences)) + tuple(ig(sentences))

    compare("percy_hub", run)


def object_lime_checks():
    from xplique_ext.datasets import make_aixi_shape
    from xplique_ext.explainers import ObjectLime

    data = make_aixi_shape(3, image_size=64, function="class", seed=4)
    model = tiny_cnn((64, 64, 1), classes=2)

    def run(strategy):
        return ObjectLime(model, batch_size=5).explain_objects(
            data.images, object_labels=data.object_labels
        )

    compare("object_lime", run)


def runner_checks():
    from xplique_ext.runtime import ReplicaRunner

    strategy = STRATEGIES[3]
    runner = ReplicaRunner(lambda a, b, k: {"sum": a + b * k, "row": tf.reduce_sum(a, 1)}, strategy)
    a = np.arange(8.0, dtype=np.float32).reshape(4, 2)
    b = np.ones((4, 2), np.float32)
    out = runner(a, b, shared=(tf.constant(2.0),))
    ok = np.array_equal(out["sum"], a + 2) and np.array_equal(out["row"], a.sum(1))
    one = runner(a[:1], b[:1], shared=(tf.constant(2.0),))  # 1 row, 3 replicas
    ok = ok and np.array_equal(one["sum"], a[:1] + 2)
    strings = ReplicaRunner(lambda s: tf.strings.length(s), strategy)(
        np.array([b"a", b"bb", b"ccc", b"dddd", b"e"], dtype=object)
    )
    ok = ok and strings.tolist() == [1, 2, 3, 4, 1]

    # a model that cannot be traced: one device, with a warning, same numbers
    def numpy_model(x):
        return np.asarray(x).reshape(len(x), -1).sum(axis=1, keepdims=True)

    fallback = ReplicaRunner(numpy_model, strategy, fallback=numpy_model)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = fallback(a)
    ok = ok and np.array_equal(res, a.sum(1, keepdims=True)) and len(caught) == 1
    RESULTS["replica_runner"] = [[3, 0.0, bool(ok)]]


def explanation_metric_checks():
    """Deletion, Insertion and the Average metrics: their model calls go through the
    base's compiled functions, so through the replicas."""
    from xplique_ext.metrics import (
        AverageDropMetric,
        AverageGainMetric,
        AverageIncreaseMetric,
        Deletion,
        Insertion,
    )

    rng = np.random.default_rng(1)
    model = tiny_cnn()
    x = rng.random((7, 16, 16, 3), dtype=np.float32)
    phi = rng.normal(size=(7, 16, 16)).astype(np.float32)
    y = rng.integers(0, 3, 7)

    def run(cls, batch_size, data=x, targets=y, **kw):
        def go(strategy):
            metric = cls(model, data, targets, batch_size=batch_size, **kw)
            if strategy is not None and metric.strategy is not strategy:
                raise AssertionError("the metric did not pick up the strategy in scope")
            return metric.detailed_evaluate(phi)

        return go

    compare("deletion_uneven", run(Deletion, 5, steps=6), REPLICAS)  # 7 x 7 perturbed inputs
    dataset = tf.data.Dataset.from_tensor_slices((x, np.eye(3)[y])).batch(3)
    compare("insertion_dataset", run(Insertion, 4, dataset, None, steps=4))
    compare("average_drop", run(AverageDropMetric, 3, activation="softmax"))
    compare("average_increase", run(AverageIncreaseMetric, None, activation="softmax"))
    compare("average_gain", run(AverageGainMetric, 2, activation="softmax"))


class GradientExplainer:
    """Gradient x input of ``sum(model(x) * y)``, computed eagerly by the explainer itself,
    with the ``model`` attribute and ``explain(inputs, targets)`` of Xplique's
    explainers. It runs wherever it is called: the metrics do not distribute it."""

    def __init__(self, model):
        self.model = model

    def explain(self, inputs, targets):
        x = tf.convert_to_tensor(inputs)
        with tf.GradientTape() as tape:
            tape.watch(x)
            score = tf.reduce_sum(self.model(x) * tf.cast(targets, x.dtype), axis=-1)
        return (tape.gradient(score, x) * x).numpy()


def centroid_learning_algorithm(x_train, y_train, x_test, y_test):
    """MeGe's learning algorithm without training: a linear model whose weights are the
    class centroids of its split (deterministic, so that the strategy alone can change
    the models' predicted classes). Built where it is called (inside the scope)."""
    import keras

    flat = x_train.reshape(len(x_train), -1)
    labels = y_train.argmax(axis=1)
    centroids = np.stack([flat[labels == c].mean(axis=0) for c in range(y_train.shape[1])])
    model = keras.Sequential(
        [keras.Input(x_train.shape[1:]), keras.layers.Flatten(), keras.layers.Dense(3)]
    )
    model.set_weights([centroids.T.astype(np.float32), -0.5 * (centroids**2).sum(axis=1)])
    return model


def explainer_metric_checks():
    """AverageStability, RandomLogitMetric, ModelRandomizationMetric and MeGe: their own
    model calls (the number of outputs, the predicted classes, MeGe's predictions) go
    through the engine, so through the replicas; the explainer is the user's, called as
    it is."""
    from xplique_ext.metrics import (
        AverageStability,
        MeGe,
        ModelRandomizationMetric,
        ProgressiveLayerRandomization,
        RandomLogitMetric,
    )
    from xplique_ext.runtime import ReplicaRunner

    rng = np.random.default_rng(2)
    model = tiny_cnn()
    x = rng.random((7, 16, 16, 3), dtype=np.float32)
    y = rng.integers(0, 3, 7)
    explainer = GradientExplainer(model)

    def run(make):
        def go(strategy):
            metric = make()
            if strategy is not None and metric.strategy is not strategy:
                raise AssertionError("the metric did not pick up the strategy in scope")
            if strategy is not None and not isinstance(metric.engine._output_fn, ReplicaRunner):
                raise AssertionError("the engine's model calls are not replicated")
            return metric.detailed_evaluate(explainer)

        return go

    def stability():  # no targets: the predicted classes, 7 inputs in batches of 5 and 2
        return AverageStability(model, x, None, batch_size=5, nb_samples=3, seed=0)

    def random_logit():  # a dataset of (x, y) pairs: the targets it carries
        inputs = tf.data.Dataset.from_tensor_slices((x, y)).batch(3)
        return RandomLogitMetric(model, inputs, None, batch_size=4, seed=0)

    def model_randomization():
        strategy = ProgressiveLayerRandomization(0.5)
        return ModelRandomizationMetric(model, x, y, strategy, batch_size=2, seed=0)

    compare("average_stability_uneven", run(stability), REPLICAS)
    compare("random_logit_dataset", run(random_logit))
    compare("model_randomization", run(model_randomization))

    # 12 inputs of 3 classes around their own means: most pairs of models agree
    labels = np.arange(12) % 3
    means = np.random.default_rng(3).random((3, 4, 4, 1))
    noise = np.random.default_rng(4).normal(0.0, 0.3, (12, 4, 4, 1))
    x_mege = (means[labels] + noise).astype(np.float32)
    y_mege = np.eye(3, dtype=np.float32)[labels]

    def mege(strategy):
        metric = MeGe(centroid_learning_algorithm, x_mege, y_mege, batch_size=3, k_splits=4)
        if strategy is not None and metric.strategy is not strategy:
            raise AssertionError("MeGe did not pick up the strategy in scope")
        scores = metric.detailed_evaluate(GradientExplainer)
        return scores, np.asarray([metric.reco_])

    compare("mege", mege, REPLICAS)

    # explicit strategy, built outside any scope: the engine's model calls are replicated
    ref = stability().detailed_evaluate(explainer)
    metric = AverageStability(
        model, x, None, batch_size=5, nb_samples=3, seed=0, strategy=STRATEGIES[2]
    )
    replicated = metric.strategy is STRATEGIES[2]
    replicated = replicated and isinstance(metric.engine._output_fn, ReplicaRunner)
    out = metric.detailed_evaluate(explainer)
    RESULTS["explainer_explicit_strategy"] = [
        [2, float(np.max(np.abs(ref - out))), bool(replicated and np.array_equal(ref, out))]
    ]


if __name__ == "__main__":
    checks = sys.argv[1:] or [
        "mufidelity",
        "ground_truth",
        "text",
        "object_lime",
        "runner",
        "explanation_metric",
        "explainer_metric",
    ]
    for name in checks:
        globals()[f"{name}_checks"]()
    print("TIMES " + json.dumps(TIMES), file=sys.stderr)
    print("RESULTS " + json.dumps(RESULTS))
