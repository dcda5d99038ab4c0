"""MuFidelity: known answers, agreement with Xplique, invariances and errors."""

import numpy as np
import pytest
import tensorflow as tf

from tests.conftest import linear_model, tiny_cnn
from xplique_ext.commons import UndefinedScoreWarning
from xplique_ext.metrics import MuFidelity

FAST = dict(nb_samples=40, seed=0, progress=False)


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
    model, x, y, phi = case
    runs = [
        MuFidelity(
            model, x, y, batch_size=b, grid_size=3, nb_samples=30, seed=5, progress=False
        ).detailed_evaluate(phi)
        for b in (1, 7, 64, None)
    ]
    for other in runs[1:]:
        np.testing.assert_array_equal(runs[0], other)
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
