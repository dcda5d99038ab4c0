"""Issue 15, design points 2-4, for the model-based metrics: every model output checked on
every batch (one mechanism: ``xplique_ext.runtime``, called by the metric base,
its compiled graphs, ObjectLime and the callbacks), scores never cast down to float32,
correlations and attribution sums that do not depend on the explanation's scale, warnings
and errors that name the true cause, copies, and Hypothesis property tests.

Each example of the issue is a test below, reached through the general mechanism."""

import copy
import pickle
import warnings

import numpy as np
import pytest
import tensorflow as tf
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from xplique_ext.commons import UndefinedScoreWarning, batched_pearson, batched_spearman
from xplique_ext.metrics import GroundTruthSaliency, MuFidelity
from xplique_ext.runtime import check_outputs, single_output

FAST = dict(grid_size=None, nb_samples=30, seed=0, progress=False)


def flat_sum(b, dtype=None, offset=0.0):
    """f(x) = sum(x) (+ offset), shape (B, 1), in ``dtype`` (the input's by default)."""
    b = b if dtype is None else tf.cast(b, dtype)
    flat = tf.reshape(b, (tf.shape(b)[0], -1))
    return tf.reduce_sum(flat, axis=1, keepdims=True) + tf.cast(offset, flat.dtype)


@pytest.fixture
def x64():
    return np.random.default_rng(0).random((4, 6, 6, 1))


def quiet_scores(metric, phi):
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        scores = metric.detailed_evaluate(phi)
    return scores, [w for w in record if issubclass(w.category, UndefinedScoreWarning)]


# ----------------------------------------------------------------- 2. outputs, every batch
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

    metric = MuFidelity(model, x64, None, **FAST)
    with pytest.raises(TypeError, match=f"`model` must return a single array.*{kind}"):
        metric.evaluate(x64[..., 0])


def test_keras_multi_output_model_gets_an_error_that_says_so(x64):
    import keras

    inp = keras.Input((6, 6, 1))
    flat = keras.layers.Flatten()(inp)
    model = keras.Model(inp, [keras.layers.Dense(2)(flat), keras.layers.Dense(3)(flat)])
    with pytest.raises(TypeError, match="`model` must return a single array.*2 outputs"):
        MuFidelity(model, x64.astype(np.float32), None, **FAST).evaluate(x64[..., 0])


@pytest.mark.parametrize("dtype", [tf.string, tf.complex64, tf.bool])
def test_non_numeric_model_outputs_are_a_type_error(x64, dtype):
    def model(b):
        out = flat_sum(b)
        return tf.strings.as_string(out) if dtype == tf.string else tf.cast(out, dtype)

    with pytest.raises(TypeError, match="`model` must return real numbers.*got outputs of dtype"):
        MuFidelity(model, x64, None, **FAST).evaluate(x64[..., 0])


def test_batch_mismatch_after_the_first_batch_is_caught_inside_the_graph(x64):
    # one row for batches of one input (the first, eager probe passes), then always two:
    # the default operator would broadcast them silently over the batch
    def model(b):
        out = flat_sum(b)
        return tf.concat([out, out], axis=0)[:2]

    metric = MuFidelity(model, x64, np.ones(4), batch_size=3, **FAST)
    with pytest.raises(ValueError, match="`model` must return one output per input"):
        metric.evaluate(x64[..., 0])


def test_integer_model_outputs_are_scored_in_float64(x64):
    ints = np.round(x64 * 100)

    def model(b):
        return tf.cast(flat_sum(b), tf.int64)

    metric = MuFidelity(model, ints, np.ones(4), **FAST)
    assert metric.scores(ints, np.ones((4, 1))).dtype == np.float64
    np.testing.assert_allclose(metric.detailed_evaluate(ints[..., 0]), 1.0)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_scores_keep_the_models_dtype(x64, dtype):
    metric = MuFidelity(lambda b: flat_sum(b, dtype), x64, np.ones(4), **FAST)
    assert metric.scores(x64, np.ones((4, 1))).dtype == dtype
    assert metric.model_outputs(x64).dtype == dtype


@pytest.mark.parametrize("correlation", ["spearman", "pearson"])
def test_float64_model_with_a_1e8_offset_scores_1(x64, correlation):
    # the issue: perturbed scores cast to float32 lost the drops (0.36-0.75 instead of 1)
    metric = MuFidelity(
        lambda b: flat_sum(b, tf.float64, 1e8), x64, np.ones(4), correlation=correlation, **FAST
    )
    np.testing.assert_allclose(metric.detailed_evaluate(x64[..., 0]), 1.0, atol=1e-12)


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


# ----------------------------------------------------------------- 3. scale-free numerics
@pytest.mark.parametrize("correlation", ["spearman", "pearson"])
@pytest.mark.parametrize("scale", [1e-170, 1e-150, 1e150, 1e300, 1e307])
def test_explanation_scale_leaves_the_score_unchanged(x64, correlation, scale):
    # the issue: x 1e-170 gave NaN blamed on "constant attribution sums", x 1e300 gave 0
    rng = np.random.default_rng(1)
    phi = x64[..., 0] + 0.3 * rng.normal(size=x64.shape[:3])
    metric = MuFidelity(lambda b: flat_sum(b), x64, np.ones(4), correlation=correlation, **FAST)
    reference, _ = quiet_scores(metric, phi)
    scaled, caught = quiet_scores(metric, phi * scale)
    assert not caught and np.isfinite(reference).all()
    np.testing.assert_allclose(scaled, reference, rtol=1e-12, atol=1e-12)


def test_batched_pearson_does_not_depend_on_the_scale_of_either_row():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(5, 40)), rng.normal(size=(5, 40))
    ref = batched_pearson(a, b)
    for sa, sb in [(1e-170, 1), (1e300, 1e-300), (1e307, 1e307), (1e-300, 1e-300)]:
        np.testing.assert_allclose(batched_pearson(a * sa, b * sb), ref, rtol=1e-12)
    np.testing.assert_allclose(batched_spearman(a * 1e-300, b), batched_spearman(a, b))
    # a large offset on a row is still its correlation, and constant rows are undefined
    np.testing.assert_allclose(batched_pearson(a + 1e8, b), ref, rtol=1e-6)
    assert np.isnan(batched_pearson(np.ones((1, 4)) * 1e300, b[:1, :4])).all()
    assert np.isnan(batched_pearson(a[:1], np.r_[b[0, :-1], np.inf][None])).all()


# ----------------------------------------------------------------- 4. the true cause
def test_nan_targets_are_refused_not_blamed_on_the_model(x64):
    targets = np.ones(4)
    targets[1] = np.nan
    with pytest.raises(
        ValueError, match="`targets` must be an array of finite values only.*got 1 NaN"
    ):
        MuFidelity(lambda b: flat_sum(b), x64, targets, **FAST)
    ds = tf.data.Dataset.from_tensor_slices((x64, targets)).batch(2)
    metric = MuFidelity(lambda b: flat_sum(b), ds, None, **FAST)
    with pytest.raises(
        ValueError, match="`targets` must be an array of finite values only, got 1 NaN"
    ):
        metric.evaluate(x64[..., 0])


@pytest.mark.parametrize("sampling", [{}, dict(nb_samples="auto", max_samples=60)])
def test_each_undefined_score_is_blamed_on_its_own_cause(x64, sampling):
    x = x64.copy()
    x[1] = 0.5  # input 1 equals its baseline: the perturbations change nothing
    phi = np.random.default_rng(4).normal(size=x.shape[:3])
    phi[2] = 0.0  # an all-zero explanation

    def model(b):  # NaN for input 3 only (its first pixel is above 0.99 after the edit)
        out = flat_sum(b)
        return tf.where(b[:, 0, 0, :] > 0.99, tf.constant(np.nan, out.dtype), out)

    x[3, 0, 0, 0] = 0.995
    metric = MuFidelity(model, x, np.ones(4), baseline_mode=0.5, **{**FAST, **sampling})
    scores, caught = quiet_scores(metric, phi)
    assert np.isnan(scores[1:]).all() and np.isfinite(scores[0])
    message = str(caught[0].message)
    assert (
        "1 with non-finite model scores (the model returned NaN or inf); 1 with inputs "
        "equal to the baseline (the perturbations change nothing); 1 with an all-zero "
        "explanation (constant attribution sums)."
    ) in message
    assert "constant score drops" not in message


def test_predicted_class_of_a_nan_output_is_refused(x64):
    def model(b):
        return tf.concat([flat_sum(b), -flat_sum(b)], axis=1) * np.nan

    with pytest.raises(ValueError, match="`targets` is None.*NaN or inf.*pass `targets`"):
        MuFidelity(model, x64, None, **FAST).evaluate(x64[..., 0])


# ----------------------------------------------------------------- MuFidelity defect list
@pytest.mark.parametrize(
    "targets", [np.array(["cat"] * 4), np.array([b"a"] * 4), np.array([object()] * 4)]
)
def test_string_targets_are_a_type_error_naming_targets(x64, targets):
    with pytest.raises(TypeError, match="`targets` must be an array of numbers.*dtype"):
        MuFidelity(lambda b: flat_sum(b), x64, targets, **FAST)


def test_string_targets_from_a_dataset_are_a_type_error(x64):
    ds = tf.data.Dataset.from_tensor_slices((x64, ["a", "b", "c", "d"]))
    metric = MuFidelity(lambda b: flat_sum(b), ds, None, **FAST)
    with pytest.raises(TypeError, match="`targets` must be an array of numbers.*got dtype object"):
        metric.evaluate(x64[..., 0])


@pytest.mark.parametrize("batched", [False, True])
def test_infinite_dataset_is_refused_when_the_metric_is_built(x64, batched):
    # one check for every model metric (the base): it used to be accepted, and evaluate
    # then read the explanations' count as the number of inputs
    ds = tf.data.Dataset.from_tensor_slices(x64)
    ds = (ds.batch(2) if batched else ds).repeat()
    with pytest.raises(ValueError, match=r"`inputs` must be a finite tf.data.Dataset.*repeat"):
        MuFidelity(lambda b: flat_sum(b), ds, None, **FAST)
    MuFidelity(lambda b: flat_sum(b), ds.take(2), None, **FAST)  # finite: accepted


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
        MuFidelity(lambda b: flat_sum(b), make(x64), None, **FAST)


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
        MuFidelity(lambda b: flat_sum(b), make(x64), None, **FAST)


@pytest.mark.parametrize("source", ["array", "dataset"])
def test_deepcopy_gives_the_same_scores_and_an_independent_copy(x64, source):
    inputs = x64 if source == "array" else tf.data.Dataset.from_tensor_slices(x64).batch(3)
    rng = np.random.default_rng(3)
    phi = rng.normal(size=x64.shape[:3])
    metric = MuFidelity(lambda b: flat_sum(b), inputs, np.ones(4), **FAST)
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
        MuFidelity(lambda b: flat_sum(b), x64, None, **FAST),
    ):
        with pytest.raises(TypeError, match=r"MuFidelity cannot be pickled.*get_config\(\)"):
            pickle.dumps(metric)
    config = metric.get_config()
    rebuilt = MuFidelity.from_config(config, model=lambda b: flat_sum(b), inputs=x64)
    assert rebuilt.get_config() == config


# ----------------------------------------------------------------- Hypothesis properties
PROPERTY = settings(
    max_examples=6,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def _setup(data_seed, n=5, shape=(5, 5, 1)):
    rng = np.random.default_rng(data_seed)
    x = rng.integers(0, 4, size=(n,) + shape).astype(np.float64)
    w = rng.integers(-3, 4, size=shape).astype(np.float64)
    phi = (x * w)[..., 0] + rng.normal(size=(n,) + shape[:2])
    return x, w, phi


def _linear(w, dtype):
    wt = tf.constant(w.reshape(-1), dtype)

    def model(b):
        flat = tf.reshape(tf.cast(b, dtype), (tf.shape(b)[0], -1))
        return tf.reduce_sum(flat * wt, axis=1, keepdims=True)

    return model


@PROPERTY
@given(
    data_seed=st.integers(0, 2**16),
    exponent=st.integers(-498, 498),
    correlation=st.sampled_from(["spearman", "pearson"]),
)
def test_property_scale_invariance(data_seed, exponent, correlation):
    # powers of two from 2^-498 (3e-150) to 2^498 (8e149) scale float64 exactly, so the
    # score must be exactly unchanged; decimal scales are checked above
    x, w, phi = _setup(data_seed)
    metric = MuFidelity(_linear(w, tf.float64), x, np.ones(len(x)), correlation=correlation, **FAST)
    ref, _ = quiet_scores(metric, phi)
    scaled, _ = quiet_scores(metric, phi * 2.0**exponent)
    np.testing.assert_array_equal(scaled, ref)
    adaptive = dict(FAST, nb_samples="auto", max_samples=60)
    metric = MuFidelity(
        _linear(w, tf.float64), x, np.ones(len(x)), correlation=correlation, **adaptive
    )
    np.testing.assert_array_equal(
        quiet_scores(metric, phi * 2.0**exponent)[0], quiet_scores(metric, phi)[0]
    )


@PROPERTY
@given(
    data_seed=st.integers(0, 2**16),
    batch_size=st.sampled_from([1, 2, 7, None]),
    order_seed=st.integers(0, 2**16),
)
def test_property_batch_size_and_input_order(data_seed, batch_size, order_seed):
    x, w, phi = _setup(data_seed)
    model = _linear(w, tf.float64)
    ref, _ = quiet_scores(MuFidelity(model, x, np.ones(len(x)), batch_size=64, **FAST), phi)
    order = np.random.default_rng(order_seed).permutation(len(x))
    metric = MuFidelity(model, x[order], np.ones(len(x)), batch_size=batch_size, **FAST)
    permuted, _ = quiet_scores(metric, phi[order])
    np.testing.assert_allclose(permuted, ref[order], rtol=1e-12, atol=1e-12)


@PROPERTY
@given(data_seed=st.integers(0, 2**16), correlation=st.sampled_from(["spearman", "pearson"]))
def test_property_model_output_dtype(data_seed, correlation):
    # integer inputs and weights in [-3, 3] on 25 pixels: every score and drop is an
    # integer below 2^11 in magnitude, exact in float16, float32 and float64, so the
    # three dtypes must give exactly the same scores (a cast down anywhere that lost
    # precision, or a float16 overflow, would show)
    x, w, phi = _setup(data_seed)
    runs = [
        quiet_scores(
            MuFidelity(_linear(w, dtype), x, np.ones(len(x)), correlation=correlation, **FAST), phi
        )[0]
        for dtype in (tf.float16, tf.float32, tf.float64)
    ]
    np.testing.assert_array_equal(runs[0], runs[2])
    np.testing.assert_array_equal(runs[1], runs[2])


def test_float16_model_on_real_valued_inputs_within_tolerance():
    # real-valued inputs: float16 rounds each score to 11 significant bits (relative
    # 4.9e-4, about 0.01 on scores near 20). Drops closer than that may swap ranks; each
    # swap of neighbours moves Spearman's rho by 12 / (n (n^2 - 1)) = 1e-4 at n = 50
    # subsets, and Pearson by about the rounding over the drops' spread (~1e-3). 0.02
    # allows many swaps; a score cast to float16 *before* the drops were taken (the
    # defect class) or a float16 overflow would be far outside it.
    rng = np.random.default_rng(7)
    x = rng.random((4, 6, 6, 1))
    w = rng.normal(size=(6, 6, 1))
    phi = (x * w)[..., 0] + 0.2 * rng.normal(size=(4, 6, 6))
    for correlation in ("spearman", "pearson"):
        settings_ = dict(FAST, nb_samples=50, correlation=correlation)
        s16 = MuFidelity(_linear(w, tf.float16), x, np.ones(4), **settings_)
        s64 = MuFidelity(_linear(w, tf.float64), x, np.ones(4), **settings_)
        np.testing.assert_allclose(
            s16.detailed_evaluate(phi), s64.detailed_evaluate(phi), atol=0.02
        )


INVALID = st.sampled_from(
    [
        ("explanations", "nan"),
        ("explanations", "inf"),
        ("explanations", "string"),
        ("explanations", "rank"),
        ("explanations", "count"),
        ("targets", "nan"),
        ("targets", "string"),
        ("targets", "count"),
        ("model", "dict"),
        ("model", "shape"),
    ]
)


@PROPERTY
@given(data_seed=st.integers(0, 2**16), case=INVALID, row=st.integers(0, 4))
def test_property_invalid_inputs_give_errors_not_numbers(data_seed, case, row):
    name, kind = case
    x, w, phi = _setup(data_seed)
    targets = np.ones(len(x))
    model = _linear(w, tf.float64)
    if name == "explanations":
        phi = {
            "nan": lambda p: np.where(np.arange(len(p))[:, None, None] == row, np.nan, p),
            "inf": lambda p: np.where(np.arange(len(p))[:, None, None] == row, -np.inf, p),
            "string": lambda p: p.astype(str),
            "rank": lambda p: p[row],
            "count": lambda p: np.delete(p, row, axis=0),
        }[kind](phi)
    elif name == "targets":
        targets = {
            "nan": lambda t: np.where(np.arange(len(t)) == row, np.nan, t),
            "string": lambda t: t.astype(str),
            "count": lambda t: np.delete(t, row),
        }[kind](targets)
    elif kind == "dict":
        linear = model

        def model(b):
            return {"out": linear(b)}
    else:  # a model whose outputs change shape after the first row: (2, 1) for every batch
        linear = model

        def model(b):
            out = linear(b)
            return tf.concat([out, out], axis=0)[:2]

    with pytest.raises((TypeError, ValueError)) as info:
        MuFidelity(model, x, targets, batch_size=3, **FAST).detailed_evaluate(phi)
    assert f"`{name}`" in str(info.value)
