"""The runtime of the model-based metrics (``xplique_ext/runtime.py``): compiled functions
shared across metric instances (no TensorFlow retracing warning when many metrics are
built in a row, no mixing of one instance's options with another's, models still
garbage-collected), named structures for what they reach, replica splits declared by
name, and the checks of the model's outputs."""

import gc
import logging
import warnings
import weakref

import numpy as np
import pytest
import tensorflow as tf

from tests.conftest import tiny_cnn
from xplique_ext import runtime
from xplique_ext.metrics import GroundTruthSaliency, MuFidelity
from xplique_ext.runtime import check_outputs, single_output

RETRACING = "triggered tf.function retracing"


def flat_sum(b):
    """f(x) = sum(x), shape (B, 1)."""
    flat = tf.reshape(b, (tf.shape(b)[0], -1))
    return tf.reduce_sum(flat, axis=1, keepdims=True)


def clone(model):
    """The same function as ``model`` in a new object (so nothing compiled is shared)."""
    import keras

    copy = keras.models.clone_model(model)
    copy.set_weights(model.get_weights())
    return copy


@pytest.fixture
def tf_messages(capfd):
    """Everything TensorFlow logs, and what reaches stderr, while the test runs. The
    retracing detector is reset first, so that earlier tests cannot have used up its
    warnings (at most 2 per function), and TensorFlow's logger is set to show warnings
    (``quiet_tensorflow``, called by other tests, hides them with its level and its
    filter, both put back afterwards)."""
    try:
        from tensorflow.python.eager.polymorphic_function import polymorphic_function

        polymorphic_function._frequent_tracing_detector_manager._detectors.clear()
    except (ImportError, AttributeError):  # pragma: no cover - private API moved
        pass
    records = []

    class Collect(logging.Handler):
        def emit(self, record):
            records.append(record.getMessage())

    handler = Collect(level=logging.DEBUG)
    loggers = [tf.get_logger(), logging.getLogger("absl"), logging.getLogger()]
    levels = [logger.level for logger in loggers]
    filters = [list(logger.filters) for logger in loggers]
    for logger in loggers:
        logger.addHandler(handler)
        for kept in logger.filters[:]:  # quiet_tensorflow's errors-only filter
            logger.removeFilter(kept)
    tf.get_logger().setLevel(logging.WARNING)
    logging.getLogger("absl").setLevel(logging.WARNING)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield records
    for logger, level, kept in zip(loggers, levels, filters):
        logger.removeHandler(handler)
        logger.setLevel(level)
        for one in kept:
            logger.addFilter(one)
    records.extend(str(w.message) for w in caught)
    records.append(capfd.readouterr().err)


def no_retracing(messages):
    bad = [m for m in messages if RETRACING in m]
    assert not bad, bad[0]


def mean_baseline(x):
    return np.full_like(x, x.mean())


def negated(model, x, y):
    """A custom operator: -f(x)[y]."""
    return -tf.reduce_sum(model(x) * tf.cast(y, tf.float32), axis=-1)


SHAPE = (12, 12, 3)
BASE = dict(grid_size=4, nb_samples=20, seed=0, progress=False, batch_size=4)
# (model index, options): models and options mixed so that several instances share a
# model while their grids, nb_samples, baselines, operators and activations differ
CASES = [
    (0, {}),
    (0, dict(grid_size=6)),
    (0, dict(nb_samples=30, baseline_mode=0.5)),
    (1, dict(activation="softmax")),
    (0, dict(activation="softmax", batch_size=3)),
    (0, dict(operator=negated)),
    (2, dict(grid_size=None, seed=1)),
    (0, dict(baseline_mode=mean_baseline, subset_percent=0.4, correlation="pearson")),
]


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    x = rng.random((6,) + SHAPE, dtype=np.float32)
    y = rng.integers(0, 3, 6)
    phi = rng.normal(size=(6,) + SHAPE[:2])
    models = [tiny_cnn(SHAPE, seed=s) for s in range(3)]
    return x, y, phi, models


def test_eight_mufidelity_instances_are_quiet_and_each_keeps_its_options(data, tf_messages):
    x, y, phi, models = data
    shared = []
    for index, options in CASES:
        metric = MuFidelity(models[index], x, y, **{**BASE, **options})
        shared.append(metric.detailed_evaluate(phi))
    no_retracing(tf_messages)

    # each instance against an isolated computation: a copy of its model (a new
    # object: nothing compiled is shared with the runs above), an empty cache
    runtime._SHARED.clear()
    for (index, options), scores in zip(CASES, shared):
        alone = MuFidelity(clone(models[index]), x, y, **{**BASE, **options})
        np.testing.assert_allclose(scores, alone.detailed_evaluate(phi), rtol=1e-6, atol=1e-9)
    # the options really change the scores (the comparison above can fail)
    assert not np.allclose(shared[0], shared[1])
    assert not np.allclose(shared[0], shared[2])
    assert not np.allclose(shared[0], shared[5])


def test_instances_on_one_model_share_their_compiled_functions(data):
    x, y, _, models = data
    model = models[0]
    a = MuFidelity(model, x, y, **BASE)
    # nb_samples, baseline, seed, subset_percent and batch size are arguments, not
    # part of the graph: the compiled functions are the same objects
    b = MuFidelity(
        model,
        x,
        y,
        **{
            **BASE,
            "nb_samples": 50,
            "baseline_mode": 1.0,
            "seed": 3,
            "subset_percent": 0.5,
            "batch_size": 2,
        },
    )
    assert a._perturbed_fn is b._perturbed_fn
    assert a._chunk_fn is b._chunk_fn
    assert a._score_fn is b._score_fn and a._output_fn is b._output_fn
    # what the graph depends on gives other functions
    for other in (
        MuFidelity(model, x, y, **{**BASE, "grid_size": 6}),
        MuFidelity(model, x, y, **{**BASE, "activation": "sigmoid"}),
        MuFidelity(model, x, y, **{**BASE, "operator": negated}),
        MuFidelity(models[1], x, y, **BASE),
    ):
        assert other._perturbed_fn is not a._perturbed_fn
    assert MuFidelity(model, x, y, **{**BASE, "grid_size": 6})._score_fn is a._score_fn
    assert MuFidelity(models[1], x, y, **BASE)._score_fn is not a._score_fn


def test_shared_functions_let_models_be_garbage_collected(data):
    x, y, phi, _ = data
    model = tiny_cnn(SHAPE, seed=7)
    metric = MuFidelity(model, x, y, **BASE)
    metric.detailed_evaluate(phi)
    ref = weakref.ref(model)
    n_entries = len(runtime._SHARED)
    del metric, model
    gc.collect()
    assert ref() is None
    assert len(runtime._SHARED) < n_entries  # its entries went with it


def test_shared_cache_is_bounded_and_keyed_on_identity(monkeypatch):
    monkeypatch.setattr(runtime, "MAX_SHARED_FUNCTIONS", 3)
    monkeypatch.setattr(runtime, "_SHARED", type(runtime._SHARED)())
    calls = []

    def build(live):
        calls.append(live())
        return object()

    objs = [lambda i=i: i for i in range(5)]
    first = runtime.shared_functions((objs[0], None), ("a",), build)
    assert runtime.shared_functions((objs[0], None), ("a",), build) is first
    assert runtime.shared_functions((objs[0], None), ("b",), build) is not first
    assert calls == [(objs[0], None), (objs[0], None)]
    for o in objs:
        runtime.shared_functions((o,), (), build)
    assert len(runtime._SHARED) == 3
    # objects that cannot be weakly referenced are never shared
    assert runtime.shared_functions((1,), (), build) is not runtime.shared_functions(
        (1,), (), build
    )


@pytest.mark.filterwarnings("ignore::xplique_ext.metrics.ground_truth.LowModelAccuracyWarning")
def test_ground_truth_instances_are_quiet_and_each_uses_its_model(data, tf_messages):
    x, y, phi, _ = data
    models = [tiny_cnn(SHAPE, seed=10 + s) for s in range(6)]
    truth = (np.abs(phi) > 1).astype(np.float64)
    kw = dict(ground_truth=truth, min_accuracy=0.0)
    accuracies = [
        GroundTruthSaliency(m, x, y, activation=a, **kw).model_accuracy
        for m, a in zip(models, [None, "softmax"] * 3)
    ]
    no_retracing(tf_messages)
    runtime._SHARED.clear()
    for m, a, acc in zip(models, [None, "softmax"] * 3, accuracies):
        metric = GroundTruthSaliency(clone(m), x, y, activation=a, **kw)
        assert metric.model_accuracy == acc
        np.testing.assert_allclose(
            metric.model_outputs(x),
            m(x).numpy() if a is None else tf.nn.softmax(m(x)).numpy(),
            rtol=1e-5,
            atol=1e-6,
        )


def test_text_classifier_on_many_models_is_quiet(tf_messages):
    import keras

    from xplique_ext.text import TextClassifier

    ids = np.random.default_rng(0).integers(1, 20, size=(5, 7))
    for seed in range(6):
        keras.utils.set_random_seed(seed)
        model = keras.Sequential(
            [
                keras.Input((7,), dtype="int32"),
                keras.layers.Embedding(20, 4),
                keras.layers.GlobalAveragePooling1D(),
                keras.layers.Dense(1, activation="sigmoid"),
            ]
        )
        wrapper = TextClassifier(model, lambda s: s)
        np.testing.assert_allclose(
            wrapper.forward(ids), model(ids).numpy()[:, 0], rtol=1e-5, atol=1e-7
        )
    no_retracing(tf_messages)


def test_instances_under_a_strategy_are_quiet_and_match_the_default(data, tf_messages):
    x, y, phi, models = data
    strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
    cases = [
        (0, {}),
        (1, {}),
        (2, {}),
        (0, dict(grid_size=6)),
        (1, dict(nb_samples=25)),
        (2, dict(activation="softmax")),
    ]
    distributed = [
        MuFidelity(models[i], x, y, strategy=strategy, **{**BASE, **o}) for i, o in cases
    ]
    assert distributed[0]._perturbed_fn is not distributed[1]._perturbed_fn
    scores = [m.detailed_evaluate(phi) for m in distributed]
    no_retracing(tf_messages)
    for (i, o), s in zip(cases, scores):
        alone = MuFidelity(models[i], x, y, **{**BASE, **o}).detailed_evaluate(phi)
        np.testing.assert_allclose(s, alone, rtol=1e-5, atol=1e-6)


def test_an_error_in_one_instance_leaves_the_shared_function_compiled(data):
    x, y, _, models = data
    model = models[2]
    eager = []

    def recording(f, inputs, targets):  # f(x)[y], noting whether it runs eagerly
        eager.append(tf.executing_eagerly())
        return tf.reduce_sum(f(inputs) * tf.cast(targets, tf.float32), axis=-1)

    bad = MuFidelity(model, x, y, operator=recording, **BASE)
    with pytest.raises((ValueError, tf.errors.InvalidArgumentError)):
        bad.scores(x[:2], np.ones((2, 5), np.float32))  # targets of the wrong width
    eager.clear()
    good = MuFidelity(model, x, y, operator=recording, **BASE)
    assert good._score_fn is bad._score_fn
    onehot = np.eye(3, dtype=np.float32)[y]
    expected = np.sum(model(x).numpy() * onehot, axis=-1)
    np.testing.assert_allclose(good.scores(x, onehot), expected, rtol=1e-5, atol=1e-6)
    assert eager and not any(eager)  # traced, never run eagerly


# ---------------------------------------------------------------- model outputs


def test_check_outputs_names_the_rows_and_keeps_the_dtype():
    out = np.array([[0.5], [12.5], [-2.5], [0.1]], dtype=np.float32)
    with pytest.raises(ValueError, match=r"probabilities in \[0, 1\].*\(inputs 11, 12 out"):
        check_outputs(out, 4, probabilities=True, offset=10)
    with pytest.raises(ValueError, match="finite outputs.*rows 1 of a batch of 2"):
        check_outputs(np.array([1.0, np.nan]), 2, finite=True)
    with pytest.raises(ValueError, match=r"shape \(3, 1\) or \(3, 2\), got shape \(3, 4\)"):
        check_outputs(np.zeros((3, 4)), 3, trailing=[(1,), (2,)])
    assert check_outputs(out[:1], 1, probabilities=True).dtype == np.float32
    # a list of B numbers is one output; a list of arrays is several
    assert single_output([0.1, 0.2]) == [0.1, 0.2]
    with pytest.raises(TypeError, match="list of 2 outputs"):
        single_output([np.zeros(2), np.zeros(2)])


def test_object_lime_checks_every_batch():
    from xplique_ext.explainers.object_lime import ObjectLime

    x = np.random.default_rng(0).random((2, 6, 6, 1)).astype(np.float32)
    labels = np.zeros((2, 6, 6), np.int64)
    labels[:, :2, :2], labels[:, 3:, 3:] = 1, 2
    calls = []

    def model(b):  # finite for the first batch, NaN afterwards
        calls.append(len(b))
        out = flat_sum(b).numpy()
        return out if len(calls) == 1 else out * np.nan

    with pytest.raises(ValueError, match="`model` must return finite outputs"):
        ObjectLime(model, batch_size=2).explain_objects(x, object_labels=labels)
    with pytest.raises(TypeError, match="dict with keys"):
        ObjectLime(lambda b: {"p": flat_sum(b)}).explain_objects(x, object_labels=labels)


# ---------------------------------------------------------------- named structures
def test_live_gives_the_objects_by_name_through_weak_references():
    from xplique_ext.metrics.base import ModelObjects

    class Model:
        def __call__(self, x):
            return x

    model = Model()
    seen = []

    def build(live):
        seen.append(live())
        return ("built",)

    objects = ModelObjects(model=model, operator=None, strategy=None)
    runtime.shared_functions(objects, ("named",), build)
    assert seen[0].model is model and seen[0].operator is None
    assert isinstance(seen[0], ModelObjects)


def test_model_functions_keep_the_names_of_the_functions_built(data):
    x, y, _, models = data
    metric = MuFidelity(models[0], x, y, **BASE)
    functions = metric._model_functions("model", _score_and_outputs)
    assert functions._fields == ("score", "outputs")
    assert functions.score is metric._score_fn


def _score_and_outputs(live, activation):
    from xplique_ext.metrics.base import model_score_functions

    return model_score_functions(live, activation)


def test_split_across_replicas_names_the_leading_arguments():
    @runtime.split_across_replicas("x", "y")
    def score(x, y, subsets):
        return x

    assert score.replica_split == 2
    with pytest.raises(TypeError, match=r"starts with \('x', 'subsets'\), got \('x', 'y'\)"):

        @runtime.split_across_replicas("x", "y")
        def wrong(x, subsets, y):
            return x


def test_a_replica_runner_splits_only_the_declared_arguments():
    strategy = tf.distribute.OneDeviceStrategy("/cpu:0")

    @runtime.split_across_replicas("x")
    def shifted(x, shift):
        return x + shift

    functions = runtime.model_functions((), ("split",), lambda live: (shifted,), strategy)
    (runner,) = functions
    assert isinstance(runner, runtime.ReplicaRunner) and runner.split == 1
    np.testing.assert_array_equal(runner(np.arange(3.0), np.float64(1.0)), [1.0, 2.0, 3.0])


# ---------------------------------------------------------------- datasets with a static batch


def _pipelines():
    x = np.zeros((16, 3), np.float32)
    y = np.zeros(16, np.int64)
    slices = tf.data.Dataset.from_tensor_slices(x)
    pairs = tf.data.Dataset.from_tensor_slices((x, y))
    return {
        "batch": (slices.batch(8), True),
        "batch, drop_remainder": (slices.batch(8, drop_remainder=True), True),
        "(x, y) pairs, drop_remainder": (pairs.batch(8, drop_remainder=True), True),
        "padded_batch, drop_remainder": (slices.padded_batch(8, drop_remainder=True), True),
        "parallel batch, drop_remainder": (
            slices.batch(8, drop_remainder=True, num_parallel_calls=2),
            True,
        ),
        "then map, prefetch, cache, take, shuffle": (
            slices.batch(8, drop_remainder=True)
            .map(lambda z: 2.0 * z)
            .prefetch(1)
            .cache()
            .take(2)
            .shuffle(2),
            True,
        ),
        "single inputs": (slices, False),
        "batched, then unbatched": (slices.batch(8, drop_remainder=True).unbatch(), False),
        "batched, then mapped to one row": (
            slices.batch(8, drop_remainder=True).map(lambda z: z[0]),
            False,
        ),
        "(N, B, d) slices: one input per element": (
            tf.data.Dataset.from_tensor_slices(x.reshape(2, 8, 3)),
            False,
        ),
    }


@pytest.mark.parametrize("name", sorted(_pipelines()))
def test_dataset_is_batched_reads_the_spec_and_the_batch_step(name):
    dataset, batched = _pipelines()[name]
    assert runtime.dataset_is_batched(dataset) is batched


def test_the_model_input_rank_decides_where_it_is_known():
    x = np.zeros((16, 3), np.float32)
    dataset = tf.data.Dataset.from_tensor_slices(x.reshape(2, 8, 3))  # no batch step
    assert runtime.dataset_is_batched(dataset, model_input_rank=2) is True  # (B, 3) inputs
    dataset = tf.data.Dataset.from_tensor_slices(x).batch(8, drop_remainder=True)
    assert runtime.dataset_is_batched(dataset, model_input_rank=3) is False  # (8, 3) inputs


@pytest.fixture(scope="module")
def static_batches():
    """16 inputs scored by a plain callable (no declared input rank), as arrays and as a
    dataset batched with ``drop_remainder=True`` (a leading dimension of static size)."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(16, 4, 4, 1)).astype(np.float32)
    phi = rng.normal(size=(16, 4, 4, 1)).astype(np.float32)
    w = rng.normal(size=(16, 3)).astype(np.float32)
    y = rng.integers(0, 3, 16)

    def model(z):
        return tf.reshape(z, (-1, 16)) @ w

    return x, phi, y, model


@pytest.mark.parametrize("with_targets", ["targets", "(x, y) pairs", "predicted"])
def test_mufidelity_reads_a_dataset_batched_with_a_static_size(static_batches, with_targets):
    x, phi, y, model = static_batches
    options = dict(grid_size=2, nb_samples=8, batch_size=8, seed=0, progress=False)
    targets = None if with_targets == "predicted" else y
    expected = MuFidelity(model, x, targets, **options).detailed_evaluate(phi)
    if with_targets == "(x, y) pairs":
        dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(8, drop_remainder=True)
    else:
        dataset = tf.data.Dataset.from_tensor_slices(x).batch(8, drop_remainder=True)
    given = None if with_targets != "targets" else y
    scores = MuFidelity(model, dataset, given, **options).detailed_evaluate(phi)
    np.testing.assert_array_equal(scores, expected)


def test_ground_truth_reads_a_dataset_batched_with_a_static_size(static_batches):
    x, phi, y, model = static_batches
    truth = np.abs(np.random.default_rng(1).normal(size=(16, 4, 4)))
    dataset = tf.data.Dataset.from_tensor_slices(x).batch(8, drop_remainder=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the model does not reproduce the targets
        expected = GroundTruthSaliency(model, x, y, ground_truth=truth, measure="kl")
        metric = GroundTruthSaliency(model, dataset, y, ground_truth=truth, measure="kl")
        np.testing.assert_array_equal(
            metric.detailed_evaluate(phi[..., 0]), expected.detailed_evaluate(phi[..., 0])
        )
