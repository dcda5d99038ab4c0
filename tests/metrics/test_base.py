"""The base of the model-based metrics (``xplique_ext/metrics/base.py``): the model's
outputs checked on every batch and never cast down, inputs, datasets, targets, operators,
copies. MuFidelity is the metric that exercises the base."""

import copy
import pickle
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf

from tests.conftest import linear_model
from xplique_ext.metrics import GroundTruthLocalisation, GroundTruthSaliency, MuFidelity

FAST = dict(nb_samples=40, seed=0, progress=False)
#: pixel-wise subsets of the 6 x 6 inputs of ``x64``
PIXELWISE = dict(grid_size=None, nb_samples=30, seed=0, progress=False)


def sum_callable(x):
    """f(x) = sum(x) as a plain callable returning shape (B,) (no output axis)."""
    return tf.reduce_sum(tf.reshape(tf.cast(x, tf.float32), (tf.shape(x)[0], -1)), axis=1)


def flat_sum(b, dtype=None, offset=0.0):
    """f(x) = sum(x) (+ offset), shape (B, 1), in ``dtype`` (the input's by default)."""
    b = b if dtype is None else tf.cast(b, dtype)
    flat = tf.reshape(b, (tf.shape(b)[0], -1))
    return tf.reduce_sum(flat, axis=1, keepdims=True) + tf.cast(offset, flat.dtype)


def _model(x):
    return x


# ------------------------------------------------------- the model's outputs, every batch


@pytest.mark.parametrize(
    "returned, kind",
    [
        (lambda out: {"logits": out}, "dict with keys \\['logits'\\]"),
        (lambda out: (out, out), "tuple of 2 outputs"),
        (lambda out: [out, 2 * out], "list of 2 outputs"),
    ],
)
def test_model_returning_several_outputs_gets_an_error_that_says_so(x64, returned, kind):
    def model(b):
        return returned(flat_sum(b))

    metric = MuFidelity(model, x64, None, **PIXELWISE)
    with pytest.raises(TypeError, match=f"`model` must return a single array.*{kind}"):
        metric.evaluate(x64[..., 0])


def test_keras_multi_output_model_gets_an_error_that_says_so(x64):
    import keras

    inp = keras.Input((6, 6, 1))
    flat = keras.layers.Flatten()(inp)
    model = keras.Model(inp, [keras.layers.Dense(2)(flat), keras.layers.Dense(3)(flat)])
    with pytest.raises(TypeError, match="`model` must return a single array.*2 outputs"):
        MuFidelity(model, x64.astype(np.float32), None, **PIXELWISE).evaluate(x64[..., 0])


@pytest.mark.parametrize("dtype", [tf.string, tf.complex64, tf.bool])
def test_non_numeric_model_outputs_are_a_type_error(x64, dtype):
    def model(b):
        out = flat_sum(b)
        return tf.strings.as_string(out) if dtype == tf.string else tf.cast(out, dtype)

    with pytest.raises(TypeError, match="`model` must return real numbers.*got outputs of dtype"):
        MuFidelity(model, x64, None, **PIXELWISE).evaluate(x64[..., 0])


def test_batch_mismatch_after_the_first_batch_is_caught_inside_the_graph(x64):
    # one row for batches of one input (the first, eager probe passes), then always two:
    # the default operator would broadcast them silently over the batch
    def model(b):
        out = flat_sum(b)
        return tf.concat([out, out], axis=0)[:2]

    metric = MuFidelity(model, x64, np.ones(4), batch_size=3, **PIXELWISE)
    with pytest.raises(ValueError, match="`model` must return one output per input"):
        metric.evaluate(x64[..., 0])


def test_integer_model_outputs_are_scored_in_float64(x64):
    ints = np.round(x64 * 100)

    def model(b):
        return tf.cast(flat_sum(b), tf.int64)

    metric = MuFidelity(model, ints, np.ones(4), **PIXELWISE)
    assert metric.scores(ints, np.ones((4, 1))).dtype == np.float64
    np.testing.assert_allclose(metric.detailed_evaluate(ints[..., 0]), 1.0)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_scores_keep_the_models_dtype(x64, dtype):
    metric = MuFidelity(lambda b: flat_sum(b, dtype), x64, np.ones(4), **PIXELWISE)
    assert metric.scores(x64, np.ones((4, 1))).dtype == dtype
    assert metric.model_outputs(x64).dtype == dtype


@pytest.mark.parametrize("batch_size", [1, 8, None])
def test_model_with_1d_output_is_one_output_never_broadcast(rng, batch_size):
    # f = sum(x) returning (B,): phi = x is exact, so every score is 1 at any batch size
    # (the old operator broadcast (B,) against (B, 1) into (B, B): 0.30 at batch 8)
    x = rng.random((8, 6, 6, 1), dtype=np.float32)
    metric = MuFidelity(sum_callable, x, None, batch_size=batch_size, grid_size=None, **FAST)
    np.testing.assert_allclose(metric.detailed_evaluate(x), 1.0, atol=1e-6)
    assert metric.model_outputs(x).shape == (8, 1)
    np.testing.assert_allclose(
        metric.scores(x, np.ones((8, 1), np.float32)), x.reshape(8, -1).sum(1), rtol=1e-5
    )


def numpy_sum_model(b):
    """f(x) = sum(x) in pure NumPy (cannot be traced by tf.function), shape (B,)."""
    b = np.asarray(b)
    return b.reshape(len(b), -1).sum(axis=1)


def test_numpy_model_with_1d_output(rng):
    x = rng.random((5, 6, 6, 1), dtype=np.float32)
    for batch_size in (2, None):
        metric = MuFidelity(numpy_sum_model, x, None, batch_size=batch_size, grid_size=None, **FAST)
        np.testing.assert_allclose(metric.detailed_evaluate(x), 1.0, atol=1e-6)


def test_model_that_drops_the_batch_axis_is_refused(rng):
    x = rng.random((4, 6, 6, 1), dtype=np.float32)
    with pytest.raises(
        ValueError, match=r"`model` must return one output per input.*got shape \(\)"
    ):
        MuFidelity(lambda b: tf.reduce_sum(b), x, None, grid_size=None, **FAST).evaluate(x)


@pytest.mark.parametrize("shape", [(2, 3), (1, 1)])
def test_model_outputs_of_rank_3_are_scored_flat(rng, shape):
    # (B, 2, 3) was a raw InvalidArgumentError; (B, 1, 1) broadcast against (B, 1)
    # targets into (B, B) and the error blamed the operator
    x = rng.random((4, 8, 8, 1), dtype=np.float32)
    k = int(np.prod(shape))

    def model(v):
        total = tf.reduce_sum(tf.reshape(v, (tf.shape(v)[0], -1)), axis=1)
        return tf.reshape(tf.tile(total[:, None], [1, k]), (-1,) + shape)

    # class id 0 of 6 outputs; a single output's target is a regression target (+1)
    for targets in (np.zeros(4, np.int64) if k > 1 else np.ones(4), None):
        scores = MuFidelity(model, x, targets, grid_size=4, **FAST).detailed_evaluate(x)
        np.testing.assert_allclose(scores, 1.0, atol=1e-6)


@pytest.mark.parametrize("targets", [None, np.ones(4)])
def test_model_without_outputs_is_refused(rng, targets):
    # (B, 0) outputs gave NaN blamed on constant drops, or "class ids in [0, -1]"
    x = rng.random((4, 8, 8, 1), dtype=np.float32)
    metric = MuFidelity(lambda v: tf.zeros((tf.shape(v)[0], 0)), x, targets, grid_size=4, **FAST)
    with pytest.raises(
        ValueError,
        match=r"`model` must return one output per input .*got shape "
        r"\(1, 0\)",
    ):
        metric.detailed_evaluate(x)


def test_operator_returning_one_score_per_output(case):
    model, x, y, phi = case
    metric = MuFidelity(model, x, y, operator=lambda f, a, b: f(a) * b, **FAST)
    with pytest.raises(
        ValueError,
        match=r"`operator` must return one output per input of shape "
        r"\(B,\) or \(B, 1\) .*got shape \(9, 3\) for a batch of 9",
    ):
        metric.evaluate(phi)


# ---------------------------------------------------------------- inputs and datasets


def test_single_image_without_batch_axis_is_refused(rng):
    x = rng.random((8, 8, 3), dtype=np.float32)  # one image: (H, W, C), no batch axis
    model = linear_model((8, 8, 3))
    with pytest.raises(
        ValueError,
        match=r"`inputs` must have a batch axis.*rank 4.*"
        r"inputs\[None\]",
    ):
        MuFidelity(model, x, np.ones(8), **FAST)
    # with the batch axis it runs
    assert np.isfinite(
        MuFidelity(model, x[None], np.ones(1), grid_size=None, **FAST).evaluate(x[None])
    )


def test_inputs_one_axis_short_without_the_model_item_shape_get_the_expected_shape(rng):
    # (6, 4, 4) for a model of inputs (None, 4, 4, 1): a missing channel axis, not a
    # missing batch axis; inputs[None] would not help
    model = linear_model((4, 4, 1))
    with pytest.raises(ValueError, match=r"must have rank 4 .*of shape \(N, 4, 4, 1\)") as err:
        MuFidelity(model, rng.random((6, 4, 4), dtype=np.float32), np.ones(6), **FAST)
    assert "inputs[None]" not in str(err.value)
    assert "single item" not in str(err.value)


def test_inputs_of_the_wrong_rank_are_refused(rng):
    model = linear_model((8, 8, 3))
    with pytest.raises(
        ValueError, match=r"`inputs` must have rank 4 .* got shape \(2, 1, 8, 8, 3\)"
    ):
        MuFidelity(model, rng.random((2, 1, 8, 8, 3)), np.ones(2), **FAST)


def test_dataset_elements_of_the_wrong_rank_are_refused(rng):
    model = linear_model((8, 8, 3))
    ds = tf.data.Dataset.from_tensor_slices(rng.random((2, 8, 3), dtype=np.float32))
    with pytest.raises(
        ValueError,
        match=r"`inputs` dataset elements must have rank 4 .* or 3 "
        r"\(one input\).* got elements of shape \(8, 3\)",
    ):
        MuFidelity(model, ds, np.ones(2), **FAST)


def test_batched_dataset_of_the_wrong_rank_is_refused(rng):
    # batches (None, 8, 8) for a model of inputs (8, 8, 1): was accepted, then scored
    # as time series (plausible numbers)
    model = linear_model((8, 8, 1))
    ds = tf.data.Dataset.from_tensor_slices(rng.random((4, 8, 8), dtype=np.float32)).batch(2)
    with pytest.raises(
        ValueError,
        match=r"`inputs` dataset elements must have rank 4 .*"
        r"got elements of shape \(None, 8, 8\)",
    ):
        MuFidelity(model, ds, np.ones(4), grid_size=4, **FAST)


def test_inputs_with_a_feature_axis_of_size_0_are_refused():
    # was a raw "zero-size array to reduction operation maximum"
    with pytest.raises(
        ValueError, match=r"`inputs` must have .* none of size 0, got shape \(4, 0\)"
    ):
        MuFidelity(sum_callable, np.zeros((4, 0), np.float32), np.ones(4), **FAST)


def test_object_dtype_inputs(case):
    model, x, y, _ = case
    with pytest.raises(
        TypeError, match=r"`inputs` must be an array of numbers \(bool.* got dtype object"
    ):
        MuFidelity(model, x.astype(object), y, **FAST)


def test_multi_input_models_are_not_supported(rng):
    a, b = keras.Input((4,)), keras.Input((3,))
    model = keras.Model([a, b], keras.layers.Dense(2)(keras.layers.Concatenate()([a, b])))
    x1, x2 = rng.random((8, 4)), rng.random((8, 3))
    with pytest.raises(
        TypeError, match="`model` has 2 inputs; multi-input models are not supported"
    ):
        MuFidelity(model, [x1, x2], None, **FAST)
    with pytest.raises(TypeError, match=r"`inputs` must be a single array .* list of 2 arrays"):
        MuFidelity(sum_callable, [x1, x2], None, **FAST)


@pytest.mark.parametrize("batched", [False, True])
def test_infinite_dataset_is_refused_when_the_metric_is_built(x64, batched):
    # one check for every model metric (the base): it used to be accepted, and evaluate
    # then read the explanations' count as the number of inputs
    ds = tf.data.Dataset.from_tensor_slices(x64)
    ds = (ds.batch(2) if batched else ds).repeat()
    with pytest.raises(ValueError, match=r"`inputs` must be a finite tf.data.Dataset.*repeat"):
        MuFidelity(lambda b: flat_sum(b), ds, None, **PIXELWISE)
    MuFidelity(lambda b: flat_sum(b), ds.take(2), None, **PIXELWISE)  # finite: accepted


@pytest.mark.parametrize(
    "make",
    [
        lambda x: tf.data.Dataset.from_tensor_slices({"image": x}),
        lambda x: tf.data.Dataset.from_tensor_slices({"image": x, "label": np.ones(4)}).batch(2),
        lambda x: tf.data.Dataset.from_tensor_slices(({"image": x}, np.ones(4))),
    ],
)
def test_dataset_of_dicts_is_a_clear_type_error(x64, make):
    with pytest.raises(
        TypeError, match="`inputs` dataset elements must be `x` or `\\(x, y\\)`.*dict"
    ):
        MuFidelity(lambda b: flat_sum(b), make(x64), None, **PIXELWISE)


@pytest.mark.parametrize(
    "make",
    [
        lambda x: tf.data.Dataset.from_tensor_slices(x[:0]),
        lambda x: tf.data.Dataset.from_tensor_slices(x).filter(lambda e: False),
        lambda x: tf.data.Dataset.from_tensor_slices(x).filter(lambda e: False).batch(2),
        lambda x: x[:0],
    ],
)
def test_empty_inputs_are_a_value_error_not_stop_iteration(x64, make):
    with pytest.raises(ValueError, match="`inputs` must hold at least one input"):
        MuFidelity(lambda b: flat_sum(b), make(x64), None, **PIXELWISE)


# ---------------------------------------------------------------- targets


def test_nan_targets_are_refused_not_blamed_on_the_model(x64):
    targets = np.ones(4)
    targets[1] = np.nan
    with pytest.raises(
        ValueError, match="`targets` must be an array of finite values only.*got 1 NaN"
    ):
        MuFidelity(lambda b: flat_sum(b), x64, targets, **PIXELWISE)
    ds = tf.data.Dataset.from_tensor_slices((x64, targets)).batch(2)
    metric = MuFidelity(lambda b: flat_sum(b), ds, None, **PIXELWISE)
    with pytest.raises(
        ValueError, match="`targets` must be an array of finite values only, got 1 NaN"
    ):
        metric.evaluate(x64[..., 0])


def test_predicted_class_of_a_nan_output_is_refused(x64):
    def model(b):
        return tf.concat([flat_sum(b), -flat_sum(b)], axis=1) * np.nan

    with pytest.raises(ValueError, match="`targets` is None.*NaN or inf.*pass `targets`"):
        MuFidelity(model, x64, None, **PIXELWISE).evaluate(x64[..., 0])


@pytest.mark.parametrize(
    "targets", [np.array(["cat"] * 4), np.array([b"a"] * 4), np.array([object()] * 4)]
)
def test_string_targets_are_a_type_error_naming_targets(x64, targets):
    with pytest.raises(TypeError, match="`targets` must be an array of numbers.*dtype"):
        MuFidelity(lambda b: flat_sum(b), x64, targets, **PIXELWISE)


def test_string_targets_from_a_dataset_are_a_type_error(x64):
    ds = tf.data.Dataset.from_tensor_slices((x64, ["a", "b", "c", "d"]))
    metric = MuFidelity(lambda b: flat_sum(b), ds, None, **PIXELWISE)
    with pytest.raises(TypeError, match="`targets` must be an array of numbers.*got dtype object"):
        metric.evaluate(x64[..., 0])


def test_targets_of_words_are_refused_with_their_shape_and_dtype():
    x = np.zeros((3, 4, 4, 1), np.float32)
    with pytest.raises(
        TypeError,
        match=r"^`targets` must be an array of numbers .* or None, got an array of shape \(3,\) and dtype <U3",
    ):
        MuFidelity(_model, x, np.array(["cat", "dog", "cat"]))


def test_targets_of_rank_3_are_refused_with_their_shape():
    x = np.zeros((3, 4, 4, 1), np.float32)
    with pytest.raises(
        ValueError,
        match=r"`targets` must be an array of shape \(N,\) or "
        r"\(N, K\) or None, got shape \(3, 1, 1\)",
    ):
        MuFidelity(_model, x, np.zeros((3, 1, 1)))


def test_metric_scores_name_targets_of_the_wrong_shape():
    import keras

    from xplique_ext.metrics import MuFidelity

    x = np.random.default_rng(0).random((5, 8, 8, 1)).astype(np.float32)
    model = keras.Sequential(
        [keras.Input((8, 8, 1)), keras.layers.Flatten(), keras.layers.Dense(3)]
    )
    metric = MuFidelity(model, x, np.arange(5) % 3, grid_size=4, nb_samples=20, seed=1)
    for bad in (np.zeros((5, 8, 8)), np.eye(3)[:2], np.array(1)):
        with pytest.raises(ValueError, match="`y` must hold the targets of the 5 inputs"):
            metric.scores(x, bad)  # (5, 8, 8) was TensorFlow's InvalidArgumentError
    with pytest.raises(ValueError, match="`y` of shape"):
        metric.scores(x, np.eye(4)[np.arange(5) % 4])
    one_hot = np.eye(3, dtype=np.float32)[np.arange(5) % 3]
    expected = (model(x).numpy() * one_hot).sum(axis=1)
    np.testing.assert_allclose(metric.scores(x, one_hot), expected, rtol=1e-5)
    np.testing.assert_allclose(metric.scores(x, np.arange(5) % 3), expected, rtol=1e-5)


def test_metric_scores_of_a_one_output_model_with_targets_b():
    import keras

    from xplique_ext.metrics import MuFidelity

    x = np.random.default_rng(0).random((4, 8, 8, 1)).astype(np.float32)
    model = keras.Sequential(
        [keras.Input((8, 8, 1)), keras.layers.Flatten(), keras.layers.Dense(1)]
    )
    metric = MuFidelity(model, x, np.ones(4), grid_size=4, nb_samples=20, seed=1)
    y = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    # was f(x)_i * sum(y): (B, 1) outputs times (B,) targets broadcast to (B, B)
    np.testing.assert_allclose(metric.scores(x, y), model(x).numpy().ravel() * y, rtol=1e-5)


# ---------------------------------------------------------------- operators


def _operator_forms():
    from xplique.commons import Tasks

    def custom(f, x, y):
        return tf.reduce_sum(f(x) * y, axis=-1)

    return {
        "none": None,
        "classification": "classification",
        "regression": "regression",
        "Tasks.CLASSIFICATION": Tasks.CLASSIFICATION,
        "Tasks.REGRESSION": Tasks.REGRESSION,
        "callable": custom,
    }


@pytest.mark.parametrize("form", list(_operator_forms()))
def test_operator_forms_for_every_model_based_metric(case, form):
    operator = _operator_forms()[form]
    model, x, y, phi = case
    ref = MuFidelity(model, x, y, grid_size=3, **FAST).detailed_evaluate(phi)
    got = MuFidelity(model, x, y, grid_size=3, operator=operator, **FAST).detailed_evaluate(phi)
    np.testing.assert_allclose(got, ref, atol=1e-6)

    # The ground-truth metrics compare fixed maps and use no operator: the keyword
    # (formerly accepted and ignored) is now an unknown keyword, whatever its form.
    from xplique_ext.datasets import make_aixi_shape
    from xplique_ext.models import AIXIFunctionModel

    if form == "none":
        return
    data = make_aixi_shape(4, image_size=64, function="suum", seed=1)
    aixi_model = AIXIFunctionModel("suum", dataset="shape")
    for cls, extra in (
        (GroundTruthSaliency, dict(ground_truth=data.ground_truth, measure="kl")),
        (GroundTruthLocalisation, dict(masks=data.ground_truth > 0)),
    ):
        with pytest.raises(TypeError, match="unexpected keyword argument 'operator'"):
            cls(aixi_model, data.images, data.targets, **extra, operator=operator)


def test_unknown_operator_name_is_refused(case):
    model, x, y, _ = case
    with pytest.raises(ValueError, match=r"`operator` must be a callable .* got 'clasification'"):
        MuFidelity(model, x, y, operator="clasification", **FAST)
    with pytest.raises(TypeError, match="`operator` must be a callable"):
        MuFidelity(model, x, y, operator=3, **FAST)


def test_xplique_task_names_resolve_to_xplique_operators(monkeypatch):
    from xplique.commons import Tasks

    from xplique_ext.metrics.base import resolve_operator

    assert resolve_operator("classification") is None  # our f(x)[y], as Xplique's
    assert resolve_operator("Regression") is None
    assert resolve_operator("semantic segmentation") is Tasks.SEMANTIC_SEGMENTATION
    assert resolve_operator(Tasks.OBJECT_DETECTION) is Tasks.OBJECT_DETECTION
    monkeypatch.setitem(sys.modules, "xplique.commons", None)  # Xplique not installed
    with pytest.raises(ValueError, match=r"`operator`='object detection' uses Xplique's operator"):
        resolve_operator("object detection")
    assert resolve_operator("classification") is None  # needs no Xplique


# ---------------------------------------------------------------- copies


@pytest.mark.parametrize("source", ["array", "dataset"])
def test_deepcopy_gives_the_same_scores_and_an_independent_copy(x64, source):
    inputs = x64 if source == "array" else tf.data.Dataset.from_tensor_slices(x64).batch(3)
    rng = np.random.default_rng(3)
    phi = rng.normal(size=x64.shape[:3])
    metric = MuFidelity(lambda b: flat_sum(b), inputs, np.ones(4), **PIXELWISE)
    twin = copy.deepcopy(metric)
    np.testing.assert_array_equal(twin.detailed_evaluate(phi), metric.detailed_evaluate(phi))
    assert twin.get_config() == metric.get_config()
    assert twin.model is metric.model and twin.strategy is metric.strategy
    if source == "array":
        assert twin.inputs is not metric.inputs and twin.targets is not metric.targets
        twin.inputs[:] = 0.0  # the copy owns its arrays
        assert metric.inputs.any()
    shallow = copy.copy(metric)
    np.testing.assert_array_equal(shallow.detailed_evaluate(phi), metric.detailed_evaluate(phi))


def test_deepcopy_of_a_keras_model_metric_and_of_a_ground_truth_metric(case):
    model, x, y, phi = case
    metric = MuFidelity(model, x, y, grid_size=3, nb_samples=20, seed=1)
    np.testing.assert_array_equal(
        copy.deepcopy(metric).detailed_evaluate(phi), metric.detailed_evaluate(phi)
    )
    gt = GroundTruthSaliency(
        model, x, y, ground_truth=np.abs(phi) + 0.1, measure="kl", min_accuracy=0.0
    )
    np.testing.assert_array_equal(
        copy.deepcopy(gt).detailed_evaluate(phi), gt.detailed_evaluate(phi)
    )


def test_pickle_is_a_clear_type_error_saying_to_save_the_config(case, x64):
    model, x, y, _ = case
    for metric in (
        MuFidelity(model, x, y, grid_size=3, nb_samples=20),
        MuFidelity(lambda b: flat_sum(b), x64, None, **PIXELWISE),
    ):
        with pytest.raises(TypeError, match=r"MuFidelity cannot be pickled.*get_config\(\)"):
            pickle.dumps(metric)
    config = metric.get_config()
    rebuilt = MuFidelity.from_config(config, model=lambda b: flat_sum(b), inputs=x64)
    assert rebuilt.get_config() == config


# ------------------------------------------------------- Xplique compatibility


@pytest.mark.parametrize(
    "operator_name", ["Tasks.CLASSIFICATION", "predictions_operator", "plain function"]
)
def test_xplique_operators_get_float32_targets_for_a_float32_model(operator_name):
    # float64 targets (np.eye's dtype) reached the operator as float64, and Xplique's
    # operators multiplied them with the float32 outputs: a raw TensorFlow TypeError
    xplique = pytest.importorskip("xplique")
    from xplique.commons.operators import predictions_operator

    def plain(model, inputs, targets):
        return tf.reduce_sum(model(inputs) * targets, axis=-1)

    operators = {
        "Tasks.CLASSIFICATION": xplique.Tasks.CLASSIFICATION,
        "predictions_operator": predictions_operator,
        "plain function": plain,
    }
    rng = np.random.default_rng(0)
    x = rng.random((4, 6, 6, 1), dtype=np.float32)
    y = np.eye(2)[[0, 1, 1, 0]]
    model = linear_model((6, 6, 1), outputs=2, weights=rng.normal(size=(36, 2)))
    phi = x[..., 0]
    reference = MuFidelity(model, x, y, grid_size=3, **FAST)(phi)
    metric = MuFidelity(model, x, y, grid_size=3, operator=operators[operator_name], **FAST)
    np.testing.assert_allclose(metric(phi), reference)


def test_targets_keep_float64_for_a_float64_model(x64):
    seen = []

    def operator(model, inputs, targets):
        seen.append(targets.dtype)
        return tf.reduce_sum(model(inputs) * targets, axis=-1)

    metric = MuFidelity(
        lambda b: flat_sum(b, tf.float64), x64, np.ones(4), operator=operator, **PIXELWISE
    )
    metric(x64[..., 0])
    assert set(seen) == {tf.float64}
    metric32 = MuFidelity(
        lambda b: flat_sum(b, tf.float32), x64, np.ones(4), operator=operator, **PIXELWISE
    )
    seen.clear()
    metric32(x64[..., 0])
    assert set(seen) == {tf.float32}


@pytest.mark.filterwarnings("ignore::xplique_ext.commons.DegenerateSettingWarning")  # 4 cells
def test_inference_functions_have_xplique_signatures():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    y = np.eye(2, dtype=np.float32)[[0, 1, 0]]
    model = linear_model((4,), outputs=2, weights=np.ones((4, 2)))
    metric = MuFidelity(model, x, y, **FAST)
    expected = x.sum(axis=1)
    np.testing.assert_allclose(metric.inference_function(model, x, y), expected)
    np.testing.assert_allclose(metric.batch_inference_function(model, x, y, 2), expected)
    np.testing.assert_allclose(metric.batch_inference_function(model, x, y, None), expected)

    def double(f, inputs, targets):
        return 2 * tf.reduce_sum(f(inputs) * targets, axis=-1)

    with_operator = MuFidelity(model, x, y, operator=double, **FAST)
    np.testing.assert_allclose(with_operator.batch_inference_function(model, x, y, 2), 2 * expected)


def test_explanation_metric_is_xplique_base_name():
    from xplique_ext.metrics import BaseAttributionMetric, Deletion, ExplanationMetric

    assert issubclass(ExplanationMetric, BaseAttributionMetric)
    assert issubclass(MuFidelity, ExplanationMetric) and issubclass(Deletion, ExplanationMetric)
