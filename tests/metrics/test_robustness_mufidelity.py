"""Issue 9 for the model-metric base and MuFidelity: bad inputs and edge cases give a clear
error naming the parameter, or NaN with a warning giving the true reason, never a plausible
wrong number. One test per point of the issue (numbers in the test names), plus Xplique's
operator forms (issue 12, point 2), the progress bar (issue 12, point 6) and a Hypothesis
property test."""

import sys
import types
import warnings

import keras
import numpy as np
import pytest
import tensorflow as tf
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import linear_model
from xplique_ext.commons import DegenerateSettingWarning, UndefinedScoreWarning
from xplique_ext.commons.random import cell_permutations, seed_to_int
from xplique_ext.metrics import GroundTruthLocalisation, GroundTruthSaliency, MuFidelity
from xplique_ext.metrics.fidelity import _subset_pool

FAST = dict(nb_samples=40, seed=0, progress=False)


def sum_callable(x):
    """f(x) = sum(x) as a plain callable returning shape (B,) (no output axis)."""
    return tf.reduce_sum(tf.reshape(tf.cast(x, tf.float32), (tf.shape(x)[0], -1)), axis=1)


def undefined_warnings(record):
    return [w for w in record if issubclass(w.category, UndefinedScoreWarning)]


# ------------------------------------------------------------- 1. (N,) model outputs
@pytest.mark.parametrize("batch_size", [1, 8, None])
def test_01_model_with_1d_output_is_one_output_never_broadcast(rng, batch_size):
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


def test_01_numpy_model_with_1d_output(rng):
    x = rng.random((5, 6, 6, 1), dtype=np.float32)
    for batch_size in (2, None):
        metric = MuFidelity(numpy_sum_model, x, None, batch_size=batch_size, grid_size=None, **FAST)
        np.testing.assert_allclose(metric.detailed_evaluate(x), 1.0, atol=1e-6)


def test_01_model_that_drops_the_batch_axis_is_refused(rng):
    x = rng.random((4, 6, 6, 1), dtype=np.float32)
    with pytest.raises(
        ValueError, match=r"`model` must return one output per input.*got shape \(\)"
    ):
        MuFidelity(lambda b: tf.reduce_sum(b), x, None, grid_size=None, **FAST).evaluate(x)


# ------------------------------------------------------------- 2. missing batch axis
def test_02_single_image_without_batch_axis_is_refused(rng):
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


def test_02_inputs_of_the_wrong_rank_are_refused(rng):
    model = linear_model((8, 8, 3))
    with pytest.raises(
        ValueError, match=r"`inputs` must have rank 4 .* got shape \(2, 1, 8, 8, 3\)"
    ):
        MuFidelity(model, rng.random((2, 1, 8, 8, 3)), np.ones(2), **FAST)


def test_02_dataset_elements_of_the_wrong_rank_are_refused(rng):
    model = linear_model((8, 8, 3))
    ds = tf.data.Dataset.from_tensor_slices(rng.random((2, 8, 3), dtype=np.float32))
    with pytest.raises(
        ValueError,
        match=r"`inputs` dataset elements must have rank 4 .* or 3 "
        r"\(one input\).* got elements of shape \(8, 3\)",
    ):
        MuFidelity(model, ds, np.ones(2), **FAST)


# ------------------------------------------------------------- 3. NaN / inf inputs
def test_03_non_finite_inputs_are_refused(case):
    model, x, y, phi = case
    bad = x.copy()
    bad[3, 0, 0, 0] = np.nan
    with pytest.raises(
        ValueError, match="`inputs` must be an array of finite values only, got 1 NaN and 0 inf"
    ):
        MuFidelity(model, bad, y, **FAST).evaluate(phi)


def test_03_non_finite_inputs_are_refused_batch_by_batch_when_streamed(case):
    model, x, y, phi = case
    bad = x.copy()
    bad[-1, 2, 2, 1] = np.inf  # in the last batch only
    ds = tf.data.Dataset.from_tensor_slices(bad).batch(4)
    with pytest.raises(
        ValueError, match="`inputs` must be an array of finite values only, got 0 NaN and 1 inf"
    ):
        MuFidelity(model, ds, y, batch_size=4, **FAST).evaluate(phi)


# ------------------------------------------------------------- 4. degenerate settings
def test_04_two_samples_warn(case):
    model, x, y, _ = case
    with pytest.warns(
        DegenerateSettingWarning, match=r"`nb_samples`=2 makes every score \+1, -1 or NaN"
    ):
        MuFidelity(model, x, y, nb_samples=2, progress=False)


def test_04_single_cell_grid_warns_and_gives_nan_with_the_reason(case):
    model, x, y, phi = case
    with pytest.warns(DegenerateSettingWarning, match="single cell.*100% of the random subsets"):
        metric = MuFidelity(model, x, y, grid_size=1, **FAST)
    with pytest.warns(UndefinedScoreWarning, match="9 with no valid subset"):
        scores = metric.detailed_evaluate(phi)
    assert np.isnan(scores).all()


def test_04_tiny_subset_percent_warns_with_the_expected_share(case):
    model, x, y, _ = case
    share = 0.999**81 + 0.001**81  # 81 cells of a 9x9 grid
    with pytest.warns(DegenerateSettingWarning, match=f"{share:.1%} of the random subsets"):
        MuFidelity(model, x, y, subset_percent=0.001, grid_size=9, **FAST)


def test_04_no_empty_or_full_subset_enters_the_correlation():
    pool = _subset_pool(np.random.default_rng(0), 500, 81, 0.001)
    sizes = pool.sum(axis=1)
    assert sizes.min() >= 1 and sizes.max() <= 80
    pool = _subset_pool(np.random.default_rng(0), 2000, 4, 0.5)
    # conditional binomial law on 1..3 of Bin(4, 1/2): 4/14, 6/14, 4/14
    np.testing.assert_allclose(
        np.bincount(pool.sum(1), minlength=4)[1:] / 2000, [4 / 14, 6 / 14, 4 / 14], atol=0.04
    )


def test_04_random_explanation_is_not_rewarded_by_empty_subsets(rng):
    # f = sum(x), x > 0, phi random and positive: unrelated to f, so the score is about 0.
    # With empty subsets (drop 0, sum 0) in the correlation, 43 of 50 tied at 0 below the
    # others gave a high, plausible and wrong score.
    x = rng.random((8, 9, 9, 1), dtype=np.float32) + 0.5
    phi = rng.random((8, 9, 9), dtype=np.float32) + 0.5
    with pytest.warns(DegenerateSettingWarning):
        metric = MuFidelity(
            linear_model((9, 9, 1)),
            x,
            np.ones(8),
            grid_size=9,
            subset_percent=0.001,
            nb_samples=50,
            seed=0,
            progress=False,
        )
    assert abs(metric.evaluate(phi)) < 0.3


# ------------------------------------------------------------- 5. uint8 inputs
@pytest.mark.parametrize("baseline", [0.5, -1.0, 0.9])
def test_05_uint8_inputs_perturbed_in_floating_point(rng, baseline):
    x8 = rng.integers(0, 256, (4, 6, 6, 1)).astype(np.uint8)
    xf = x8.astype(np.float32)
    model = linear_model((6, 6, 1))
    # f = sum(x) and baseline b: the drop of subset S is sum_S (x - b), so phi = x - b is
    # exact; a baseline cast to uint8 (0.5 -> 0, -1 -> 255) breaks it
    m8 = MuFidelity(model, x8, np.ones(4), grid_size=None, baseline_mode=baseline, **FAST)
    # (float32 model sums of values up to 255 may swap two near-tied drops: atol 1e-3)
    np.testing.assert_allclose(m8.detailed_evaluate(xf - baseline), 1.0, atol=1e-3)
    mf = MuFidelity(model, xf, np.ones(4), grid_size=None, baseline_mode=baseline, **FAST)
    phi = rng.normal(size=(4, 6, 6)).astype(np.float32)
    np.testing.assert_array_equal(m8.detailed_evaluate(phi), mf.detailed_evaluate(phi))


# ------------------------------------------------------------- 6. seeds of 2**63 and more
def test_06_large_seeds_use_all_their_bits(case):
    model, x, y, phi = case
    kw = dict(grid_size=3, nb_samples=30, progress=False)

    def run(seed, batch_size=64):
        return MuFidelity(model, x, y, batch_size=batch_size, seed=seed, **kw).detailed_evaluate(
            phi
        )

    assert not np.array_equal(run(2**63), run(0))
    assert not np.array_equal(run(2**64 + 5), run(5))
    np.testing.assert_array_equal(run(2**70 + 3), run(2**70 + 3, batch_size=2))
    assert seed_to_int(2**63) != 0 and seed_to_int(2**63) < 2**63
    assert seed_to_int(2**63 - 1) == 2**63 - 1  # seeds below 2**63 are kept as they are


def test_06_content_hash_depends_on_content_and_seed_only(rng):
    x = rng.random((5, 4, 4, 2), dtype=np.float32)
    perms = cell_permutations(x, 16, 2**64 + 1)
    np.testing.assert_array_equal(cell_permutations(x[[3, 0]], 16, 2**64 + 1), perms[[3, 0]])
    assert len({tuple(p) for p in perms.tolist()}) == 5
    assert not np.array_equal(cell_permutations(x, 16, 1), perms)
    np.testing.assert_array_equal(
        cell_permutations(x[::-1], 16, 7), cell_permutations(x, 16, 7)[::-1]
    )


# ------------------------------------------------------------- 9. crashes -> clear errors
def test_09_baseline_callable_of_wrong_shape(case):
    model, x, y, phi = case
    metric = MuFidelity(model, x, y, baseline_mode=lambda xi: xi[..., 0], **FAST)
    with pytest.raises(
        ValueError,
        match=r"`baseline_mode` callable must return an array of "
        r"the input's shape \(12, 12, 3\), got shape \(12, 12\)",
    ):
        metric.evaluate(phi)
    metric = MuFidelity(model, x, y, baseline_mode=lambda xi: "grey", **FAST)
    with pytest.raises(TypeError, match=r"`baseline_mode\(x\)` must be a NumPy array.* of numbers"):
        metric.evaluate(phi)


def test_09_operator_returning_one_score_per_output(case):
    model, x, y, phi = case
    metric = MuFidelity(model, x, y, operator=lambda f, a, b: f(a) * b, **FAST)
    with pytest.raises(
        ValueError,
        match=r"`operator` must return one output per input of shape "
        r"\(B,\) or \(B, 1\) .*got shape \(9, 3\) for a batch of 9",
    ):
        metric.evaluate(phi)


def test_09_object_dtype_inputs(case):
    model, x, y, _ = case
    with pytest.raises(
        TypeError, match=r"`inputs` must be an array of numbers \(bool.* got dtype object"
    ):
        MuFidelity(model, x.astype(object), y, **FAST)


# ------------------------------------------------------------- 10. multi-input models
def test_10_multi_input_models_are_not_supported(rng):
    a, b = keras.Input((4,)), keras.Input((3,))
    model = keras.Model([a, b], keras.layers.Dense(2)(keras.layers.Concatenate()([a, b])))
    x1, x2 = rng.random((8, 4)), rng.random((8, 3))
    with pytest.raises(
        TypeError, match="`model` has 2 inputs; multi-input models are not supported"
    ):
        MuFidelity(model, [x1, x2], None, **FAST)
    with pytest.raises(TypeError, match=r"`inputs` must be a single array .* list of 2 arrays"):
        MuFidelity(sum_callable, [x1, x2], None, **FAST)


# ------------------------------------------------------------- 17. no padded last batch
def _recording_model(sizes):
    def record(t):
        sizes.append(int(t.shape[0]))
        return tf.reduce_sum(tf.reshape(t, (t.shape[0], -1)), axis=1, keepdims=True)

    def model(x):
        out = tf.py_function(record, [x], tf.float32)
        out.set_shape([None, 1])
        return out

    return model


@pytest.mark.parametrize("batch_size, expected", [(200000, [400]), (256, [256, 144])])
def test_17_perturbation_batches_never_exceed_the_work(rng, batch_size, expected):
    x = rng.random((4, 5, 5, 1), dtype=np.float32)
    sizes = []
    metric = MuFidelity(
        _recording_model(sizes),
        x,
        np.ones(4),
        batch_size=batch_size,
        grid_size=None,
        nb_samples=100,
        seed=0,
        progress=False,
    )
    sizes.clear()
    metric.evaluate(x)
    # one probe of the output size, the unperturbed inputs, then the perturbations
    assert sizes == [1, 4] + expected


# ------------------------------------------------------------- warnings: one per call, true reason
def test_evaluate_emits_exactly_one_undefined_score_warning(rng):
    x = rng.random((3, 8, 8, 1), dtype=np.float32)
    w = np.zeros((8, 8, 1), np.float32)
    w[0] = 1.0
    x[1, 0] = 0.0  # sample 1: the model's score never changes
    metric = MuFidelity(linear_model((8, 8, 1), w), x, np.ones(3), grid_size=None, **FAST)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        metric.evaluate(w * x)
    found = undefined_warnings(record)
    assert len(found) == 1
    assert "1 of 3 per-sample scores are undefined" in str(found[0].message)
    assert "constant score drops" in str(found[0].message)


def test_nan_from_the_model_gives_the_true_reason(rng):
    x = rng.random((3, 6, 6, 1), dtype=np.float32)
    x[2] -= 2.0  # sqrt of negative values: the model returns NaN for input 2

    def model(b):
        return tf.reduce_sum(tf.sqrt(tf.reshape(b, (tf.shape(b)[0], -1))), axis=1)

    metric = MuFidelity(model, x, None, grid_size=None, **FAST)
    with pytest.warns(UndefinedScoreWarning) as record:
        scores = metric.detailed_evaluate(x)
    message = str(undefined_warnings(record)[0].message)
    assert "1 with non-finite model scores" in message and "constant" not in message
    assert np.isnan(scores[2]) and np.isfinite(scores[:2]).all()


# ------------------------------------------------------------- issue 12: operators, progress
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


def test_progress_bar_advances_per_perturbation_batch(rng, monkeypatch):
    updates = []

    class FakeBar:
        def __init__(self, *args, **kwargs):
            self.total = kwargs.get("total")

        def update(self, n):
            updates.append(n)

        def close(self):
            pass

        def __enter__(self):  # tqdm's bars are context managers
            return self

        def __exit__(self, *exc):
            self.close()

    fake = types.ModuleType("tqdm.auto")
    fake.tqdm = FakeBar
    monkeypatch.setitem(sys.modules, "tqdm.auto", fake)
    x = rng.random((5, 6, 6, 1), dtype=np.float32)
    kw = dict(batch_size=64, grid_size=None, nb_samples=30, seed=0)
    quiet = MuFidelity(linear_model((6, 6, 1)), x, np.ones(5), progress=False, **kw)
    loud = MuFidelity(linear_model((6, 6, 1)), x, np.ones(5), progress=True, **kw)
    phi = rng.normal(size=(5, 6, 6)).astype(np.float32)
    np.testing.assert_array_equal(loud.detailed_evaluate(phi), quiet.detailed_evaluate(phi))
    assert updates == [64, 64, 22]  # 150 perturbations in batches of 64


def test_tqdm_is_not_imported_without_progress(rng, monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)  # any import of tqdm now fails
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    x = rng.random((3, 6, 6, 1), dtype=np.float32)
    metric = MuFidelity(linear_model((6, 6, 1)), x, np.ones(3), grid_size=None, **FAST)
    assert metric.evaluate(x) == pytest.approx(1.0)


# ------------------------------------------------------------- property test


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    shape=st.sampled_from([(6,), (5, 2), (6, 6, 1), (4, 5, 3)]),
    n=st.integers(1, 5),
    nb_samples=st.integers(3, 30),
    subset_percent=st.floats(0.05, 0.95),
    grid=st.sampled_from([None, 2, 3]),
    correlation=st.sampled_from(["spearman", "pearson"]),
    data_seed=st.integers(0, 2**32 - 1),
    seed=st.integers(0, 2**80),
    batch_sizes=st.tuples(st.integers(1, 50), st.sampled_from([7, 64, None])),
    zero_phi=st.booleans(),
)
def test_property_scores_in_range_or_nan_with_warning_and_batch_size_invariant(
    shape,
    n,
    nb_samples,
    subset_percent,
    grid,
    correlation,
    data_seed,
    seed,
    batch_sizes,
    zero_phi,
):
    rng = np.random.default_rng(data_seed)
    x = rng.normal(size=(n,) + shape).astype(np.float32)
    w = tf.constant(rng.normal(size=(int(np.prod(shape)),)).astype(np.float32))

    def model(b):
        flat = tf.reshape(b, (tf.shape(b)[0], -1))
        return tf.tanh(tf.reduce_sum(flat * w, axis=1, keepdims=True))

    phi = (
        np.zeros((n,) + shape, np.float32)
        if zero_phi
        else rng.normal(size=(n,) + shape).astype(np.float32)
    )
    runs = []
    for batch_size in batch_sizes:
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            metric = MuFidelity(
                model,
                x,
                None,
                batch_size=batch_size,
                grid_size=grid,
                subset_percent=subset_percent,
                nb_samples=nb_samples,
                correlation=correlation,
                seed=seed,
                progress=False,
            )
            scores = metric.detailed_evaluate(phi)
        assert scores.shape == (n,)
        finite = scores[~np.isnan(scores)]
        assert ((finite >= -1) & (finite <= 1)).all()
        if np.isnan(scores).any():
            assert len(undefined_warnings(record)) == 1
        else:
            assert not undefined_warnings(record)
        runs.append(scores)
    np.testing.assert_array_equal(runs[0], runs[1])


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


def test_cell_sums_do_not_depend_on_how_many_explanations_are_summed_at_once(rng):
    # same numbers at any batch size, to the last bit: the sums of one explanation
    # alone equal its row among 64
    x = rng.random((64, 32, 32, 3)).astype(np.float32)
    metric = MuFidelity(sum_callable, x, None, grid_size=9, **FAST)
    phi = rng.standard_normal((64, 32, 32))
    together = metric._explanation_cells(phi)
    alone = np.concatenate([metric._explanation_cells(phi[i : i + 1]) for i in range(64)])
    np.testing.assert_array_equal(together, alone)


# ------------------------------------------------------------- hostile-input sweep (issue 18)
def test_sweep_batched_dataset_of_the_wrong_rank_is_refused(rng):
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


def test_sweep_inputs_with_a_feature_axis_of_size_0_are_refused():
    # was a raw "zero-size array to reduction operation maximum"
    with pytest.raises(
        ValueError, match=r"`inputs` must have .* none of size 0, got shape \(4, 0\)"
    ):
        MuFidelity(sum_callable, np.zeros((4, 0), np.float32), np.ones(4), **FAST)


@pytest.mark.parametrize("phi", [1.0, np.ones(4)])
def test_sweep_explanations_without_their_axes_are_refused(rng, phi):
    # a scalar was a raw "len() of unsized object"
    x = rng.random((4, 8, 8, 1), dtype=np.float32)
    metric = MuFidelity(linear_model((8, 8, 1)), x, np.ones(4), grid_size=4, **FAST)
    with pytest.raises(
        ValueError, match=r"`explanations` must be an array of rank 3 or 4, got shape"
    ):
        metric.evaluate(phi)
    with pytest.raises(ValueError, match=r"per-input shapes \[\(8, 8, 1\), \(8, 8\)\] to"):
        metric.evaluate(np.ones((4, 8, 8, 2)))  # each allowed shape named once


@pytest.mark.parametrize("baseline", [1e300, lambda v: np.full(v.shape, 1e300)])
def test_sweep_baseline_that_overflows_the_inputs_dtype_is_refused(rng, baseline):
    # 1e300 became inf in float32 inputs: NaN scores blamed on the model's outputs
    x = rng.random((4, 8, 8, 1), dtype=np.float32)
    metric = MuFidelity(
        linear_model((8, 8, 1)), x, np.ones(4), grid_size=4, baseline_mode=baseline, **FAST
    )
    with pytest.raises(
        ValueError,
        match=r"`baseline_mode(\(x\))?` must be (numbers )?in "
        r"\[-3\.40282e\+38, 3\.40282e\+38\], got 1e\+300",
    ):
        metric.evaluate(x[..., 0])


@pytest.mark.parametrize("shape", [(2, 3), (1, 1)])
def test_sweep_model_outputs_of_rank_3_are_scored_flat(rng, shape):
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
def test_sweep_model_without_outputs_is_refused(rng, targets):
    # (B, 0) outputs gave NaN blamed on constant drops, or "class ids in [0, -1]"
    x = rng.random((4, 8, 8, 1), dtype=np.float32)
    metric = MuFidelity(lambda v: tf.zeros((tf.shape(v)[0], 0)), x, targets, grid_size=4, **FAST)
    with pytest.raises(
        ValueError,
        match=r"`model` must return one output per input .*got shape "
        r"\(1, 0\)",
    ):
        metric.detailed_evaluate(x)


def test_scores_do_not_depend_on_the_inputs_dtype(rng):
    # the cell order was drawn from the rows' bytes: the same images as float32, float64
    # or a list (read as float64) got other permutations, hence other scores for one seed
    x = rng.random((6, 8, 8, 1)).astype(np.float32)
    phi = rng.standard_normal((6, 8, 8))
    scores = [
        MuFidelity(sum_callable, inputs, np.ones(6), grid_size=4, **FAST).detailed_evaluate(phi)
        for inputs in (x, x.astype(np.float64), x.tolist())
    ]
    np.testing.assert_array_equal(scores[0], scores[1])
    np.testing.assert_array_equal(scores[0], scores[2])
