"""MuFidelity (``xplique_ext/metrics/fidelity.py``): known answers, agreement with Xplique,
invariances, repeated subsets, degenerate settings, errors, warnings, numerics, uncertainty
and adaptive sampling, and Hypothesis properties."""

import json
import sys
import types
import warnings

import numpy as np
import pytest
import tensorflow as tf
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import linear_model, tiny_cnn
from xplique_ext.commons import (
    DegenerateSettingWarning,
    UndefinedScoreWarning,
    batched_pearson,
    batched_spearman,
)
from xplique_ext.commons.random import cell_permutations, make_rng, seed_to_int
from xplique_ext.metrics import MuFidelity
from xplique_ext.metrics.fidelity import (
    ForwardPasses,
    _subset_pool,
    adaptive_checkpoints,
    correlation_std_error,
    distinct_subsets,
)

FAST = dict(nb_samples=40, seed=0, progress=False)
#: pixel-wise subsets of the 6 x 6 inputs of ``x64``
PIXELWISE = dict(grid_size=None, nb_samples=30, seed=0, progress=False)
EPS32 = float(np.finfo(np.float32).eps)
#: Tolerance on the scores of a float32 model compared across batch sizes. Such a model's
#: outputs may change in their last bits with the shape of the batch (its kernels block
#: and vectorise by shape, differently on different processors): a few units of float32's
#: eps per output. In a drop f(x) - f(x_S) that error is relative to f(x), and the
#: correlation carries it over the spread of the drops: on the CNN of ``case``, 4 eps on
#: every output moves a Pearson score by at most 2.5 eps (``batch_shape_model`` below).
#: 256 eps (3.1e-5) leaves two orders of magnitude of margin, and stays well under the
#: 12 / (m (m^2 - 1)) = 4.4e-4 that one swap of neighbouring ranks makes over m = 30
#: subsets: a tie broken by round-off (a subset evaluated twice) still fails.
FLOAT32_BATCH_TOL = 256 * EPS32


def sum_callable(x):
    """f(x) = sum(x) as a plain callable returning shape (B,) (no output axis)."""
    return tf.reduce_sum(tf.reshape(tf.cast(x, tf.float32), (tf.shape(x)[0], -1)), axis=1)


def _model(x):
    return x


def undefined_warnings(record):
    return [w for w in record if issubclass(w.category, UndefinedScoreWarning)]


def flat_sum(b, dtype=None, offset=0.0):
    """f(x) = sum(x) (+ offset), shape (B, 1), in ``dtype`` (the input's by default)."""
    b = b if dtype is None else tf.cast(b, dtype)
    flat = tf.reshape(b, (tf.shape(b)[0], -1))
    return tf.reduce_sum(flat, axis=1, keepdims=True) + tf.cast(offset, flat.dtype)


def quiet_scores(metric, phi):
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        scores = metric.detailed_evaluate(phi)
    return scores, [w for w in record if issubclass(w.category, UndefinedScoreWarning)]


@pytest.fixture(scope="module")
def linear():
    """f(x) = sum(x) on 8x8 inputs: phi = x is exact (score 1), phi + noise is not."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(6, 8, 8, 1)).astype(np.float32)
    noisy = x[..., 0] + rng.normal(0, 2.0, (6, 8, 8)).astype(np.float32)
    return linear_model((8, 8, 1)), x, noisy


def _recording_model(sizes):
    """f(x) = sum(x), recording the size of every batch the model is called on."""

    def record(t):
        sizes.append(int(t.shape[0]))
        return tf.reduce_sum(tf.reshape(t, (t.shape[0], -1)), axis=1, keepdims=True)

    def model(x):
        out = tf.py_function(record, [x], tf.float32)
        out.set_shape([None, 1])
        return out

    return model


# ---------------------------------------------------------------- known answers


@pytest.mark.parametrize("grid_size", [None, 4])
@pytest.mark.parametrize("correlation", ["spearman", "pearson"])
def test_sum_model_identity_explanation_is_perfect(rng, grid_size, correlation):
    x = rng.random((5, 12, 12, 3), dtype=np.float32)
    metric = MuFidelity(
        linear_model(x.shape[1:]),
        x,
        np.ones(5),
        grid_size=grid_size,
        correlation=correlation,
        **FAST,
    )
    np.testing.assert_allclose(metric.detailed_evaluate(x), 1.0, atol=1e-6)
    assert metric.evaluate(-x) == pytest.approx(-1.0, abs=1e-6)
    # channels summed: (N, H, W) and (N, H, W, 1) maps of the same sums are equivalent
    assert metric.evaluate(x.sum(-1)) == pytest.approx(1.0, abs=1e-6)
    assert metric.evaluate(x.sum(-1, keepdims=True)) == pytest.approx(1.0, abs=1e-6)


@pytest.mark.filterwarnings("ignore::xplique_ext.commons.DegenerateSettingWarning")  # 2x2 grid
@pytest.mark.parametrize("shape", [(10,), (8, 3), (6, 6, 2)], ids=["tabular", "series", "image"])
def test_linear_model_gradient_times_input_is_perfect(rng, shape):
    x = rng.normal(size=(4,) + shape).astype(np.float32)
    w = rng.normal(size=shape).astype(np.float32)
    metric = MuFidelity(linear_model(shape, w), x, np.ones(4), grid_size=None, **FAST)
    assert metric.evaluate(w * x) == pytest.approx(1.0, abs=1e-6)
    # and with a grid over the time axis / image
    if len(shape) > 1:
        metric = MuFidelity(linear_model(shape, w), x, np.ones(4), grid_size=2, **FAST)
        assert metric.evaluate(w * x) == pytest.approx(1.0, abs=1e-6)


def test_nonzero_baseline_and_callable_baseline(rng):
    x = rng.random((4, 8, 8, 1), dtype=np.float32)
    w = rng.normal(size=(8, 8, 1)).astype(np.float32)
    model = linear_model((8, 8, 1), w)
    # with baseline b the drop is sum_S w (x - b): phi = w * (x - b) is exact
    m = MuFidelity(model, x, np.ones(4), grid_size=None, baseline_mode=0.5, **FAST)
    assert m.evaluate(w * (x - 0.5)) == pytest.approx(1.0, abs=1e-6)
    m = MuFidelity(
        model,
        x,
        np.ones(4),
        grid_size=None,
        baseline_mode=lambda xi: np.full_like(xi, xi.mean()),
        **FAST,
    )
    phi = w * (x - x.mean(axis=(1, 2, 3), keepdims=True))
    assert m.evaluate(phi) == pytest.approx(1.0, abs=1e-6)


# ---------------------------------------------------------------- Xplique as a peer


def test_agrees_with_xplique_mufidelity():
    """Same CNN, inputs and explanations: |ours - Xplique| <= 0.03 at nb_samples=1000.

    Both are Monte-Carlo estimates with independent random subsets; with 1000 subsets the
    standard error of one sample's correlation is about (1 - r^2) / sqrt(1000) <= 0.032,
    and the mean over 12 inputs shrinks it further, so 0.03 is a tolerance about 3 standard
    errors wide on the mean while any systematic difference in definition (subset size,
    grid, sign of the drop, channel handling) shows as a larger gap.
    """
    from xplique.attributions import IntegratedGradients, Saliency
    from xplique.metrics import MuFidelity as XpliqueMuFidelity

    rng = np.random.default_rng(1)
    model = tiny_cnn((16, 16, 3), classes=3, seed=1)
    x = rng.random((12, 16, 16, 3), dtype=np.float32)
    y = tf.one_hot(rng.integers(0, 3, 12), 3).numpy()
    explanations = {
        "random": rng.random((12, 16, 16), dtype=np.float32),
        "saliency": Saliency(model)(x, y),
        "integrated_gradients": IntegratedGradients(model, steps=16)(x, y),
    }
    tf.random.set_seed(0)  # Xplique draws its subsets from TF's global generator
    for name, phi in explanations.items():
        ours = MuFidelity(
            model, x, y, batch_size=256, grid_size=4, nb_samples=1000, seed=3, progress=False
        ).evaluate(phi)
        theirs = XpliqueMuFidelity(
            model, x, y, batch_size=256, grid_size=4, nb_samples=1000
        ).evaluate(phi)
        assert abs(ours - theirs) <= 0.03, (name, ours, theirs)


# ---------------------------------------------------------------- invariances


def test_same_seed_same_scores_at_any_batch_size(case):
    # a float32 CNN: its outputs may change in their last bits with the batch's shape,
    # so the scores agree within FLOAT32_BATCH_TOL (exact equality: float64 models in
    # test_property_batch_size_and_input_order, repeated subsets in
    # test_repeated_subsets_tie_exactly_on_a_model_that_changes_with_the_batch_shape)
    model, x, y, phi = case
    runs = [
        MuFidelity(
            model, x, y, batch_size=b, grid_size=3, nb_samples=30, seed=5, progress=False
        ).detailed_evaluate(phi)
        for b in (1, 7, 64, None)
    ]
    for other in runs[1:]:
        np.testing.assert_allclose(other, runs[0], rtol=0, atol=FLOAT32_BATCH_TOL)
    different = MuFidelity(
        model, x, y, grid_size=3, nb_samples=30, seed=6, progress=False
    ).detailed_evaluate(phi)
    assert not np.array_equal(runs[0], different)


def test_arrays_tensors_and_datasets_agree(case):
    model, x, y, phi = case
    kw = dict(batch_size=8, grid_size=3, nb_samples=30, seed=5, progress=False)
    ref = MuFidelity(model, x, y, **kw).detailed_evaluate(phi)
    one_hot = np.eye(3, dtype=np.float32)[y]
    variants = {
        "tensor": MuFidelity(model, tf.constant(x), tf.constant(y), **kw),
        "one-hot": MuFidelity(model, x, one_hot, **kw),
        "dataset of x": MuFidelity(model, tf.data.Dataset.from_tensor_slices(x), y, **kw),
        "batched dataset of x": MuFidelity(
            model, tf.data.Dataset.from_tensor_slices(x).batch(4), y, **kw
        ),
        "dataset of (x, y)": MuFidelity(
            model, tf.data.Dataset.from_tensor_slices((x, one_hot)).batch(5), None, **kw
        ),
    }
    for name, metric in variants.items():
        np.testing.assert_allclose(
            metric.detailed_evaluate(tf.constant(phi)), ref, atol=1e-6, err_msg=name
        )


def test_permuting_samples_permutes_scores(case):
    model, x, y, phi = case
    perm = np.random.default_rng(3).permutation(len(x))
    kw = dict(grid_size=3, nb_samples=30, seed=5, progress=False)
    ref = MuFidelity(model, x, y, **kw).detailed_evaluate(phi)
    permuted = MuFidelity(model, x[perm], y[perm], **kw).detailed_evaluate(phi[perm])
    np.testing.assert_allclose(permuted, ref[perm], atol=1e-6)


def test_inputs_and_explanations_not_modified(case):
    model, x, y, phi = case
    x0, phi0 = x.copy(), phi.copy()
    MuFidelity(model, x, y, baseline_mode=0.3, **FAST).evaluate(phi)
    np.testing.assert_array_equal(x, x0)
    np.testing.assert_array_equal(phi, phi0)


def test_operator_and_activation(case):
    model, x, y, phi = case
    kw = dict(grid_size=3, nb_samples=30, seed=5, progress=False)
    one_hot = np.eye(3, dtype=np.float32)[y]

    def softmax_operator(f, inputs, targets):
        return tf.reduce_sum(tf.nn.softmax(f(inputs)) * targets, axis=-1)

    with_operator = MuFidelity(model, x, one_hot, operator=softmax_operator, **kw)
    with_activation = MuFidelity(model, x, one_hot, activation="softmax", **kw)
    np.testing.assert_allclose(
        with_operator.detailed_evaluate(phi), with_activation.detailed_evaluate(phi), atol=1e-6
    )


def test_constant_predictions_give_nan_with_warning(rng):
    x = rng.random((3, 8, 8, 1), dtype=np.float32)
    w = np.zeros((8, 8, 1), np.float32)
    w[0] = 1.0  # the model only reads the first row
    x[1, 0] = 0.0  # so sample 1 gives the same prediction whatever the subset
    metric = MuFidelity(linear_model((8, 8, 1), w), x, np.ones(3), grid_size=None, **FAST)
    with pytest.warns(UndefinedScoreWarning, match="1 of 3 samples"):
        scores = metric.detailed_evaluate(w * x)
    assert np.isnan(scores[1]) and np.isfinite(scores[[0, 2]]).all()
    with pytest.warns(UndefinedScoreWarning) as record:
        assert metric.evaluate(w * x) == pytest.approx(np.nanmean(scores))
    assert any("1 of 3 per-sample scores are undefined" in str(r.message) for r in record)
    with pytest.warns(UndefinedScoreWarning):
        assert metric(w * x) == pytest.approx(np.nanmean(scores))


def test_declares_direction():
    assert MuFidelity.higher_is_better is True


@pytest.mark.parametrize("baseline", [0.5, -1.0, 0.9])
def test_uint8_inputs_perturbed_in_floating_point(rng, baseline):
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


def test_cell_sums_do_not_depend_on_how_many_explanations_are_summed_at_once(rng):
    # same numbers at any batch size, to the last bit: the sums of one explanation
    # alone equal its row among 64
    x = rng.random((64, 32, 32, 3)).astype(np.float32)
    metric = MuFidelity(sum_callable, x, None, grid_size=9, **FAST)
    phi = rng.standard_normal((64, 32, 32))
    together = metric._explanation_cells(phi)
    alone = np.concatenate([metric._explanation_cells(phi[i : i + 1]) for i in range(64)])
    np.testing.assert_array_equal(together, alone)


def test_large_seeds_use_all_their_bits(case):
    model, x, y, phi = case
    kw = dict(grid_size=3, nb_samples=30, progress=False)

    def run(seed, batch_size=64):
        return MuFidelity(model, x, y, batch_size=batch_size, seed=seed, **kw).detailed_evaluate(
            phi
        )

    assert not np.array_equal(run(2**63), run(0))
    assert not np.array_equal(run(2**64 + 5), run(5))
    # another batch size: the same subsets, scores within the float32 model's round-off
    np.testing.assert_allclose(
        run(2**70 + 3, batch_size=2), run(2**70 + 3), rtol=0, atol=FLOAT32_BATCH_TOL
    )
    assert seed_to_int(2**63) != 0 and seed_to_int(2**63) < 2**63
    assert seed_to_int(2**63 - 1) == 2**63 - 1  # seeds below 2**63 are kept as they are


def test_content_hash_depends_on_content_and_seed_only(rng):
    x = rng.random((5, 4, 4, 2), dtype=np.float32)
    perms = cell_permutations(x, 16, 2**64 + 1)
    np.testing.assert_array_equal(cell_permutations(x[[3, 0]], 16, 2**64 + 1), perms[[3, 0]])
    assert len({tuple(p) for p in perms.tolist()}) == 5
    assert not np.array_equal(cell_permutations(x, 16, 1), perms)
    np.testing.assert_array_equal(
        cell_permutations(x[::-1], 16, 7), cell_permutations(x, 16, 7)[::-1]
    )


# ---------------------------------------------------------------- repeated subsets
def batch_shape_model(model, ulps=4):
    """``model`` whose outputs change in their last bits with the batch's shape and a
    row's place in it (``ulps`` units of float32's eps), as BLAS kernels do on some
    processors: the same perturbed input scored in two batches gives two numbers."""

    def shaken(b):
        out = model(b)
        rows = tf.cast(tf.range(tf.shape(b)[0]), out.dtype)
        size = tf.cast(tf.shape(b)[0], out.dtype)
        noise = tf.sin(rows * 12.9898 + size * 78.233)[:, None]
        return out * (1 + ulps * EPS32 * noise)

    return shaken


class RecordingMuFidelity(MuFidelity):
    """MuFidelity that keeps the score drops of its last evaluation."""

    def _score_drops(self, *args, **kwargs):
        self.recorded = super()._score_drops(*args, **kwargs)
        return self.recorded


def test_repeated_subsets_tie_exactly_on_a_model_that_changes_with_the_batch_shape(case):
    model, x, y, phi = case
    shaken = batch_shape_model(model)
    # the model really changes with the batch's shape: one input alone, then second of two
    alone = shaken(x[:1]).numpy()
    in_pair = shaken(x[[1, 0]]).numpy()[1:]
    assert not np.array_equal(alone, in_pair)
    runs = {}
    for batch_size in (1, 7, 64, None):
        metric = RecordingMuFidelity(
            shaken, x[:4], y[:4], batch_size=batch_size, grid_size=3, nb_samples=30, seed=5
        )
        runs[batch_size] = metric.detailed_evaluate(phi[:4])
        pool = distinct_subsets(np.asarray(_subset_pool(make_rng(seed_to_int(5)), 30, 9, 0.2)))
        assert len(pool.first_row) < 30  # 9 cells, 30 subsets: some repeat
        drops = metric.recorded.drops
        for distinct in range(len(pool.first_row)):
            same = np.flatnonzero(pool.distinct_id == distinct)
            # every repeat of a subset has exactly the drop of its first occurrence
            np.testing.assert_array_equal(drops[:, same], drops[:, same[:1]].repeat(len(same), 1))
        # distinct subsets' drops are far apart next to the noise on a drop (at most twice
        # 4 eps of the largest output), so no rank can flip with the batch's shape
        noise = 2 * 4 * EPS32 * np.abs(model(x[:4]).numpy()).max()
        for row in drops:
            assert np.diff(np.unique(row)).min() > 100 * noise
    # Spearman: the same ranks at every batch size, hence exactly the same scores
    for other in (7, 64, None):
        np.testing.assert_array_equal(runs[other], runs[1])


def test_each_repeated_subset_counts_in_the_correlation(rng):
    # an exact float64 model (integer inputs and weights): the scores must equal the
    # formula computed here by hand over every subset of the pool, repeats included
    from scipy.stats import pearsonr, spearmanr

    from xplique_ext.commons.random import cell_permutations

    x = rng.integers(0, 5, (6, 5)).astype(np.float64)
    w = rng.integers(-3, 4, 5).astype(np.float64)
    phi = x * w + rng.normal(size=x.shape)
    weights = tf.constant(w)

    def model(b):
        return tf.reduce_sum(tf.cast(b, tf.float64) * weights, axis=1, keepdims=True)

    pool = _subset_pool(make_rng(seed_to_int(3)), 40, 5, 0.3)
    perms = cell_permutations(x, 5, seed_to_int(3))
    masks = pool[:, perms].transpose(1, 0, 2)  # (inputs, subsets, cells)
    drops = (masks * x[:, None, :] * w).sum(axis=-1)  # f(x) - f(x_S) of a linear model
    sums = (masks * phi[:, None, :]).sum(axis=-1)
    assert len(np.unique(pool, axis=0)) < len(pool)  # some subsets repeat
    for correlation, reference in (("spearman", spearmanr), ("pearson", pearsonr)):
        metric = MuFidelity(
            model, x, np.ones(6), nb_samples=40, subset_percent=0.3, seed=3, correlation=correlation
        )
        expected = [reference(d, s)[0] for d, s in zip(drops, sums)]
        np.testing.assert_allclose(metric.detailed_evaluate(phi), expected, rtol=1e-12)


def test_repeated_subsets_are_evaluated_once_and_counted(case):
    model, x, y, phi = case
    pool = _subset_pool(make_rng(seed_to_int(5)), 30, 9, 0.2)
    n_distinct = len(np.unique(pool, axis=0))
    assert n_distinct < 30
    metric = MuFidelity(model, x, y, batch_size=7, grid_size=3, nb_samples=30, seed=5)
    assert metric.forward_passes_ is None  # nothing evaluated yet
    metric.detailed_evaluate(phi)
    assert metric.forward_passes_ == ForwardPasses(
        evaluated=len(x) * n_distinct, perturbations=len(x) * 30
    )
    # the model sees each distinct subset once per input
    sizes = []
    counted = MuFidelity(
        _recording_model(sizes),
        x,
        np.ones(len(x)),
        batch_size=1000,
        grid_size=3,
        nb_samples=30,
        seed=5,
    )
    sizes.clear()
    counted.detailed_evaluate(phi)
    assert sizes == [1, len(x), len(x) * n_distinct]  # output size, f(x), f(x_S)
    # a fine grid, where no subset repeats: every perturbation is a model call
    fine = MuFidelity(model, x, y, grid_size=9, nb_samples=30, seed=5)
    fine.detailed_evaluate(phi)
    assert fine.forward_passes_.evaluated == fine.forward_passes_.perturbations == len(x) * 30


def test_distinct_subsets_are_numbered_by_first_occurrence():
    pool = np.array([[1, 0, 0], [0, 1, 0], [1, 0, 0], [0, 0, 1], [0, 1, 0]], dtype=bool)
    subsets = distinct_subsets(pool)
    np.testing.assert_array_equal(subsets.distinct_id, [0, 1, 0, 2, 1])
    np.testing.assert_array_equal(subsets.first_row, [0, 1, 3])
    assert [subsets.n_distinct_before(row) for row in range(6)] == [0, 1, 2, 2, 3, 3]
    # more cells than a byte holds: rows compared on every bit
    wide = np.zeros((3, 20), dtype=bool)
    wide[1, 19] = True
    wide[2, 19] = True
    np.testing.assert_array_equal(distinct_subsets(wide).distinct_id, [0, 1, 1])


@pytest.mark.filterwarnings("ignore::xplique_ext.commons.DegenerateSettingWarning")  # 2x2 grid
def test_adaptive_sampling_reuses_subsets_across_rounds(linear):
    # grid 2 x 2: 14 possible subsets, so the later rounds only repeat earlier subsets
    model, x, noisy = linear
    metric = MuFidelity(
        model, x, grid_size=2, nb_samples="auto", max_samples=200, target_se=1e-9, seed=3
    )
    metric.detailed_evaluate(noisy)
    assert metric.forward_passes_.perturbations == len(x) * 200
    assert metric.forward_passes_.evaluated <= len(x) * 14


# ---------------------------------------------------------------- degenerate settings


def test_two_samples_warn(case):
    model, x, y, _ = case
    with pytest.warns(
        DegenerateSettingWarning, match=r"`nb_samples`=2 makes every score \+1, -1 or NaN"
    ):
        MuFidelity(model, x, y, nb_samples=2, progress=False)


def test_single_cell_grid_warns_and_gives_nan_with_the_reason(case):
    model, x, y, phi = case
    with pytest.warns(DegenerateSettingWarning, match="single cell.*100% of the random subsets"):
        metric = MuFidelity(model, x, y, grid_size=1, **FAST)
    with pytest.warns(UndefinedScoreWarning, match="9 with no valid subset"):
        scores = metric.detailed_evaluate(phi)
    assert np.isnan(scores).all()


def test_tiny_subset_percent_warns_with_the_expected_share(case):
    model, x, y, _ = case
    share = 0.999**81 + 0.001**81  # 81 cells of a 9x9 grid
    with pytest.warns(DegenerateSettingWarning, match=f"{share:.1%} of the random subsets"):
        MuFidelity(model, x, y, subset_percent=0.001, grid_size=9, **FAST)


def test_no_empty_or_full_subset_enters_the_correlation():
    pool = _subset_pool(np.random.default_rng(0), 500, 81, 0.001)
    sizes = pool.sum(axis=1)
    assert sizes.min() >= 1 and sizes.max() <= 80
    pool = _subset_pool(np.random.default_rng(0), 2000, 4, 0.5)
    # conditional binomial law on 1..3 of Bin(4, 1/2): 4/14, 6/14, 4/14
    np.testing.assert_allclose(
        np.bincount(pool.sum(1), minlength=4)[1:] / 2000, [4 / 14, 6 / 14, 4 / 14], atol=0.04
    )


def test_random_explanation_is_not_rewarded_by_empty_subsets(rng):
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


# ---------------------------------------------------------------- errors


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(subset_percent=1.5), ValueError, r"`subset_percent` must be in \(0, 1\), got 1.5"),
        (dict(subset_percent=0.0), ValueError, r"`subset_percent` must be in \(0, 1\), got 0"),
        (
            dict(nb_samples=1),
            ValueError,
            r"`nb_samples` must be in \[2, 1000000\] or 'auto', got 1",
        ),
        (dict(grid_size=20), ValueError, r"`grid_size` must be at most the image size 12"),
        (dict(activation="relu"), ValueError, r"`activation` must be one of \[None, 'sigmoid'"),
        (dict(correlation="kendall"), ValueError, r"`correlation` must be one of"),
        (dict(batch_size=0), ValueError, r"`batch_size` must be >= 1 or None, got 0"),
        (dict(baseline_mode="zero"), TypeError, r"`baseline_mode` must be a real number"),
        (dict(unknown_option=1), TypeError, "unknown_option"),
    ],
)
def test_bad_parameters(case, kwargs, error, match):
    model, x, y, _ = case
    with pytest.raises(error, match=match):
        MuFidelity(model, x, y, **kwargs)


def test_bad_explanations(case):
    model, x, y, phi = case
    metric = MuFidelity(model, x, y, **FAST)
    with pytest.raises(ValueError, match="one explanation per input: got 8 explanations for 9"):
        metric.evaluate(phi[:8])
    with pytest.raises(ValueError, match=r"per-input shapes .* got \(12, 11\)"):
        metric.evaluate(phi[:, :, :11])
    bad = phi.copy()
    bad[2, 3, 3] = np.nan
    bad[4, 0, 0] = np.inf
    with pytest.raises(
        ValueError,
        match="`explanations` must be an array of finite values only, got 1 NaN and 1 inf",
    ):
        metric.evaluate(bad)
    with pytest.raises(TypeError, match="`explanations` must be an array of real numbers"):
        metric.evaluate(np.full(phi.shape, "a"))


def test_bad_targets(case):
    model, x, y, _ = case
    with pytest.raises(ValueError, match="one target per input: got 8 targets for 9 inputs"):
        MuFidelity(model, x, y[:8])
    with pytest.raises(ValueError, match=r"class ids must be in \[0, 2\]"):
        MuFidelity(model, x, y + 5, **FAST).evaluate(np.ones((9, 12, 12)))
    with pytest.raises(ValueError, match="K = 3 columns"):
        MuFidelity(model, x, np.ones((9, 2)), **FAST).evaluate(np.ones((9, 12, 12)))


def test_non_finite_inputs_are_refused(case):
    model, x, y, phi = case
    bad = x.copy()
    bad[3, 0, 0, 0] = np.nan
    with pytest.raises(
        ValueError, match="`inputs` must be an array of finite values only, got 1 NaN and 0 inf"
    ):
        MuFidelity(model, bad, y, **FAST).evaluate(phi)


def test_non_finite_inputs_are_refused_batch_by_batch_when_streamed(case):
    model, x, y, phi = case
    bad = x.copy()
    bad[-1, 2, 2, 1] = np.inf  # in the last batch only
    ds = tf.data.Dataset.from_tensor_slices(bad).batch(4)
    with pytest.raises(
        ValueError, match="`inputs` must be an array of finite values only, got 0 NaN and 1 inf"
    ):
        MuFidelity(model, ds, y, batch_size=4, **FAST).evaluate(phi)


def test_baseline_callable_of_wrong_shape(case):
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


@pytest.mark.parametrize("phi", [1.0, np.ones(4)])
def test_explanations_without_their_axes_are_refused(rng, phi):
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
def test_baseline_that_overflows_the_inputs_dtype_is_refused(rng, baseline):
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


def test_mufidelity_huge_subset_counts_are_refused():
    import keras

    from xplique_ext.metrics import MuFidelity

    x = np.random.default_rng(0).random((2, 8, 8, 1)).astype("float32")
    model = keras.Sequential(
        [keras.Input((8, 8, 1)), keras.layers.Flatten(), keras.layers.Dense(1)]
    )
    for key, value in (("nb_samples", 10**12), ("max_samples", 10**12)):
        extra = {"nb_samples": "auto"} if key == "max_samples" else {}
        with pytest.raises(ValueError, match=rf"`{key}` must be in \[\d+, 1000000\]"):
            MuFidelity(model, x, np.ones(2), grid_size=None, **{**extra, key: value})
    # within the cap but too large a pool for memory (10**6 subsets x 576 cells):
    # refused before allocation
    x = np.random.default_rng(0).random((2, 24, 24, 1)).astype("float32")
    model = keras.Sequential(
        [keras.Input((24, 24, 1)), keras.layers.Flatten(), keras.layers.Dense(1)]
    )
    metric = MuFidelity(model, x, np.ones(2), grid_size=None, nb_samples=10**6)
    with pytest.raises(ValueError, match=r"`nb_samples` x cells must be at most"):
        metric.evaluate(x[..., 0])
    metric = MuFidelity(model, x, np.ones(2), grid_size=None, nb_samples="auto", max_samples=10**6)
    with pytest.raises(ValueError, match=r"`max_samples` x cells must be at most"):
        metric.details(x[..., 0])


def test_a_bool_is_not_a_number_of_subsets():
    x = np.zeros((3, 4, 4, 1), np.float32)
    with pytest.raises(
        TypeError, match=r"`nb_samples` must be an integer in \[2, 1000000\] or 'auto', got True"
    ):
        MuFidelity(_model, x, nb_samples=True)


def test_declared_values_arrive_converted():
    x = np.zeros((3, 4, 4, 1), np.float32)
    metric = MuFidelity(
        _model,
        x,
        batch_size=np.int64(2),
        nb_samples=np.int32(5),
        subset_percent=np.float32(0.25),
        grid_size=2,
    )
    assert type(metric.batch_size) is int and type(metric.nb_samples) is int
    assert type(metric.subset_percent) is float


# ------------------------------------------------------ perturbation batches and progress


@pytest.mark.parametrize("batch_size, expected", [(200000, [400]), (256, [256, 144])])
def test_perturbation_batches_never_exceed_the_work(rng, batch_size, expected):
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


# ------------------------------------------ undefined scores: one warning, the true reason


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
    metric = MuFidelity(model, x, np.ones(4), baseline_mode=0.5, **{**PIXELWISE, **sampling})
    scores, caught = quiet_scores(metric, phi)
    assert np.isnan(scores[1:]).all() and np.isfinite(scores[0])
    message = str(caught[0].message)
    assert (
        "1 with non-finite model scores (the model returned NaN or inf); 1 with inputs "
        "equal to the baseline (the perturbations change nothing); 1 with an all-zero "
        "explanation (constant attribution sums)."
    ) in message
    assert "constant score drops" not in message


# ---------------------------------------------------------------- scale-free numerics


@pytest.mark.parametrize("correlation", ["spearman", "pearson"])
@pytest.mark.parametrize("scale", [1e-170, 1e-150, 1e150, 1e300, 1e307])
def test_explanation_scale_leaves_the_score_unchanged(x64, correlation, scale):
    # tiny or huge scales once gave NaN blamed on "constant attribution sums", or 0
    rng = np.random.default_rng(1)
    phi = x64[..., 0] + 0.3 * rng.normal(size=x64.shape[:3])
    metric = MuFidelity(
        lambda b: flat_sum(b), x64, np.ones(4), correlation=correlation, **PIXELWISE
    )
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


@pytest.mark.parametrize("correlation", ["spearman", "pearson"])
def test_float64_model_with_a_1e8_offset_scores_1(x64, correlation):
    # perturbed scores cast to float32 would lose the drops (0.36-0.75 instead of 1)
    metric = MuFidelity(
        lambda b: flat_sum(b, tf.float64, 1e8),
        x64,
        np.ones(4),
        correlation=correlation,
        **PIXELWISE,
    )
    np.testing.assert_allclose(metric.detailed_evaluate(x64[..., 0]), 1.0, atol=1e-12)


# ----------------------------------------------------- uncertainty and adaptive sampling


def test_standard_error_formulas_by_hand():
    # Pearson: (1 - r^2) / sqrt(m - 3); Spearman: times sqrt(1 + r^2 / 2)
    assert correlation_std_error(0.5, 103, "pearson") == pytest.approx(0.75 / 10)
    assert correlation_std_error(0.5, 103, "spearman") == pytest.approx(0.75 * np.sqrt(1.125) / 10)
    out = correlation_std_error(np.array([1.0, np.nan, 0.0]), np.array([50, 50, 3]))
    assert out[0] == 0 and np.isnan(out[1]) and np.isnan(out[2])
    with pytest.raises(ValueError, match="correlation"):
        correlation_std_error(0.5, 10, "kendall")
    assert adaptive_checkpoints(10) == [10]
    assert adaptive_checkpoints(1000)[:4] == [50, 75, 113, 170]


def test_details_report_the_standard_error_and_the_subsets(linear):
    model, x, noisy = linear
    metric = MuFidelity(model, x, nb_samples=50, seed=0, correlation="pearson", **OPTIONS)
    d = metric.details(noisy)
    assert list(d.columns) == ["score", "std_error", "n_subsets"]
    np.testing.assert_array_equal(d["score"], metric.detailed_evaluate(noisy))
    assert (d["n_subsets"] == 50).all()
    np.testing.assert_allclose(d["std_error"], (1 - d["score"] ** 2) / np.sqrt(47))


@pytest.mark.parametrize("correlation", ["pearson", "spearman"])
def test_reported_standard_error_matches_the_spread_over_seeds(linear, correlation):
    # the score's spread over 30 seeds (new subsets each time) against the reported SE
    model, x, noisy = linear
    scores, errors = [], []
    for seed in range(30):
        d = MuFidelity(
            model,
            x[:3],
            nb_samples=100,
            batch_size=300,
            seed=seed,
            correlation=correlation,
            **OPTIONS,
        ).details(noisy[:3])
        scores.append(d["score"])
        errors.append(d["std_error"])
    ratio = np.std(scores, axis=0, ddof=1) / np.mean(errors, axis=0)
    assert np.all((ratio > 0.7) & (ratio < 1.4)), ratio


OPTIONS = dict(grid_size=4, progress=False)


def _auto(model, x, batch_size, **kw):
    options = dict(OPTIONS, nb_samples="auto", seed=3, batch_size=batch_size)
    options.update(kw)
    return MuFidelity(model, x, **options)


def test_adaptive_is_the_same_at_any_batch_size_and_order(linear):
    model, x, noisy = linear
    noisy = noisy.copy()
    noisy[:2] = x[:2, ..., 0]  # exact for two inputs: they stop at the first round
    ref = _auto(model, x, 5, max_samples=300).details(noisy)
    assert list(ref["n_subsets"][:2]) == [50, 50] and ref["n_subsets"].max() == 300
    for batch_size in (1, 64, None):
        d = _auto(model, x, batch_size, max_samples=300).details(noisy)
        np.testing.assert_array_equal(d["n_subsets"], ref["n_subsets"])
        np.testing.assert_allclose(d["score"], ref["score"], rtol=1e-5, atol=1e-6)
    order = np.array([3, 0, 5, 1, 4, 2])
    d = _auto(model, x[order], 4, max_samples=300).details(noisy[order])
    np.testing.assert_array_equal(d["n_subsets"], ref["n_subsets"].to_numpy()[order])
    np.testing.assert_allclose(d["score"], ref["score"].to_numpy()[order], rtol=1e-5)


def test_adaptive_stops_when_the_answer_is_known(linear):
    model, x, noisy = linear
    exact = _auto(model, x, 64).details(x[..., 0])
    np.testing.assert_allclose(exact["score"], 1.0, atol=1e-6)
    assert (exact["n_subsets"] == 50).all()  # SE 0 after the first round
    noisy_d = _auto(model, x, 64, target_se=0.05, max_samples=600).details(noisy)
    assert (noisy_d["std_error"] <= 0.05).all() or (noisy_d["n_subsets"] == 600).any()
    stopped = noisy_d["n_subsets"] < 600
    assert (noisy_d["std_error"][stopped] <= 0.05).all()
    assert noisy_d["n_subsets"].isin(adaptive_checkpoints(600)).all()
    # each input stopped at its first checkpoint with SE <= target, not later
    for i in np.flatnonzero(stopped):
        used = int(noisy_d["n_subsets"][i])
        points = adaptive_checkpoints(600)
        if used > points[0]:
            before = points[points.index(used) - 1]
            prefix = _auto(model, x[i : i + 1], 64, target_se=1e-9, max_samples=before).details(
                noisy[i : i + 1]
            )
            assert prefix["std_error"][0] > 0.05


def test_adaptive_without_early_stop_is_the_fixed_setting(linear):
    model, x, noisy = linear
    fixed = MuFidelity(model, x, nb_samples=200, seed=3, batch_size=64, **OPTIONS)
    auto = _auto(model, x, 64, target_se=1e-12, max_samples=200)
    d = auto.details(noisy)
    assert (d["n_subsets"] == 200).all()
    np.testing.assert_allclose(d["score"], fixed.detailed_evaluate(noisy), rtol=1e-6)
    np.testing.assert_array_equal(auto.detailed_evaluate(noisy), d["score"])


def test_adaptive_undefined_scores_go_on_to_max_samples_and_warn(linear):
    model, x, noisy = linear
    phi = noisy.copy()
    phi[2] = 0.0  # constant attribution sums: undefined at every round
    with pytest.warns(UndefinedScoreWarning, match="constant attribution sums"):
        d = _auto(model, x, 64, max_samples=100).details(phi)
    assert np.isnan(d["score"][2]) and d["n_subsets"][2] == 100
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedScoreWarning)
        s = _auto(model, x, 64, max_samples=100).summary(phi, n_resamples=200)
    assert (s.n, s.n_undefined) == (5, 1)


def test_adaptive_settings_are_validated_and_round_trip(linear):
    model, x, _ = linear
    for bad, error in (("Auto", ValueError), ("200", ValueError), (1.5, TypeError)):
        with pytest.raises(error, match="nb_samples"):
            MuFidelity(model, x, nb_samples=bad, **OPTIONS)
    for bad, error in (
        (0.0, ValueError),
        (1.0, ValueError),
        ("a", TypeError),
        (float("nan"), ValueError),
    ):
        with pytest.raises(error, match="target_se"):
            MuFidelity(model, x, nb_samples="auto", target_se=bad, **OPTIONS)
    for bad, error in ((3, ValueError), (10.0, TypeError), (None, TypeError)):
        with pytest.raises(error, match="max_samples"):
            MuFidelity(model, x, nb_samples="auto", max_samples=bad, **OPTIONS)
    metric = _auto(model, x, 8, target_se=0.05, max_samples=64)
    config = json.loads(json.dumps(metric.get_config()))
    assert config["nb_samples"] == "auto" and config["max_samples"] == 64
    clone = MuFidelity.from_config(config, model=model, inputs=x)
    assert repr(clone) == repr(metric)
    assert "nb_samples='auto'" in repr(metric)


# ---------------------------------------------------------------- Hypothesis properties


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
    # a float32 model: the same scores within its round-off (FLOAT32_BATCH_TOL)
    np.testing.assert_allclose(runs[1], runs[0], rtol=0, atol=FLOAT32_BATCH_TOL)


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
    metric = MuFidelity(
        _linear(w, tf.float64), x, np.ones(len(x)), correlation=correlation, **PIXELWISE
    )
    ref, _ = quiet_scores(metric, phi)
    scaled, _ = quiet_scores(metric, phi * 2.0**exponent)
    np.testing.assert_array_equal(scaled, ref)
    adaptive = dict(PIXELWISE, nb_samples="auto", max_samples=60)
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
    ref, _ = quiet_scores(MuFidelity(model, x, np.ones(len(x)), batch_size=64, **PIXELWISE), phi)
    order = np.random.default_rng(order_seed).permutation(len(x))
    metric = MuFidelity(model, x[order], np.ones(len(x)), batch_size=batch_size, **PIXELWISE)
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
            MuFidelity(_linear(w, dtype), x, np.ones(len(x)), correlation=correlation, **PIXELWISE),
            phi,
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
        settings_ = dict(PIXELWISE, nb_samples=50, correlation=correlation)
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
        MuFidelity(model, x, targets, batch_size=3, **PIXELWISE).detailed_evaluate(phi)
    assert f"`{name}`" in str(info.value)


def test_empty_or_full_subsets_warn_from_five_percent_naming_the_option(case):
    # grid 5 with subset_percent=0.1: 0.9**25 = 7.2% of the draws are empty, where
    # keeping them (as Xplique does) moves the score by up to 0.05
    model, x, y, _ = case
    share = 0.9**25 + 0.1**25
    with pytest.warns(DegenerateSettingWarning) as caught:
        MuFidelity(model, x, y, grid_size=5, subset_percent=0.1, **FAST)
    message = str(caught[0].message)
    assert f"{share:.1%} of the random subsets" in message
    assert "`subset_draws='unconditioned'`" in message and "Xplique" in message


def test_under_five_percent_empty_or_full_subsets_do_not_warn(case):
    model, x, y, _ = case
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateSettingWarning)
        MuFidelity(model, x, y, grid_size=9, subset_percent=0.1, **FAST)  # 0.9**81: 0.02%


def test_unconditioned_draws_keep_empty_subsets_as_xplique_does(case):
    model, x, y, phi = case
    with pytest.warns(DegenerateSettingWarning, match="kept as drawn"):
        metric = MuFidelity(
            model, x, y, grid_size=2, subset_percent=0.1, subset_draws="unconditioned", **FAST
        )
    subsets = metric._draw_subsets(4, 0)
    sizes = subsets.pool.sum(axis=1)
    assert (sizes == 0).mean() > 0.4  # 0.9**4 = 66% of Bernoulli draws are empty
    conditioned = MuFidelity(model, x, y, grid_size=2, subset_percent=0.1, **FAST)
    assert conditioned._draw_subsets(4, 0).pool.sum(axis=1).min() == 1
    assert metric.get_config()["subset_draws"] == "unconditioned"
    with pytest.raises(ValueError, match="`subset_draws`"):
        MuFidelity(model, x, y, subset_draws="xplique", **FAST)


def test_unconditioned_draws_agree_with_xplique_within_noise():
    xplique_metrics = pytest.importorskip("xplique.metrics")
    rng = np.random.default_rng(4)
    x = rng.random((6, 10, 10, 1), dtype=np.float32) + 0.5
    phi = x[..., 0] + rng.normal(scale=0.3, size=(6, 10, 10)).astype(np.float32)
    model = linear_model((10, 10, 1))
    options = dict(grid_size=5, subset_percent=0.1, nb_samples=400)
    theirs = xplique_metrics.MuFidelity(model, x, np.ones((6, 1)), **options)(phi)
    with pytest.warns(DegenerateSettingWarning):
        ours = MuFidelity(model, x, np.ones(6), subset_draws="unconditioned", seed=0, **options)
    details = ours.details(phi)
    # the mean's standard error over the subsets, for both draws (independent)
    se = np.sqrt(2 * np.mean(details["std_error"] ** 2) / len(x))
    assert abs(details["score"].mean() - theirs) < 4 * se


def test_get_config_saves_a_task_name_operator_and_refuses_a_callable_one():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(6, 5)).astype(np.float32)
    y = np.eye(3, dtype=np.float32)[rng.integers(0, 3, size=6)]
    model = linear_model((5,), outputs=3)

    def squared(f, inputs, targets):
        return tf.reduce_sum(f(inputs) * targets, -1) ** 2

    named = MuFidelity(model, x, y, grid_size=None, operator="classification")
    assert named.get_config()["operator"] == "classification"
    with pytest.raises(TypeError, match="`operator`"):
        MuFidelity(model, x, y, grid_size=None, operator=squared).get_config()
