"""ExplanationMetrics: explanation scores written into Keras' logs during training."""

import csv
import functools

import numpy as np
import pytest

keras = pytest.importorskip("keras")
tf = pytest.importorskip("tensorflow")

from xplique_ext.callbacks import ExplanationMetrics  # noqa: E402
from xplique_ext.metrics import MuFidelity  # noqa: E402


def _data(n=96, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.random((n, 8, 8, 1)).astype(np.float32)
    y = (x[:, :4, :4].mean(axis=(1, 2, 3)) > 0.5).astype(np.int64)
    return x, y


def _model(seed=0):
    init = keras.initializers.GlorotUniform(seed=seed)
    model = keras.Sequential(
        [
            keras.Input((8, 8, 1)),
            keras.layers.Conv2D(2, 3, activation="relu", kernel_initializer=init),
            keras.layers.Flatten(),
            keras.layers.Dense(2, kernel_initializer=init),
        ]
    )
    model.compile(
        keras.optimizers.Adam(1e-2), keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    )
    return model


class GradientInput:
    """A minimal Xplique-style explainer: .explain(x, y) -> gradient x input (N, H, W, C)."""

    built = 0

    def __init__(self, model):
        GradientInput.built += 1
        self.model = model

    def explain(self, x, y):
        x = tf.convert_to_tensor(x)
        with tf.GradientTape() as tape:
            tape.watch(x)
            out = tf.reduce_sum(self.model(x) * y, axis=-1)
        return (tape.gradient(out, x) * x).numpy()


MU = functools.partial(MuFidelity, nb_samples=16, grid_size=4, seed=0, progress=False)


def test_three_epochs_scores_in_history_and_they_follow_the_weights():
    x, y = _data()
    model = _model()
    weights = []
    record = keras.callbacks.LambdaCallback(
        on_epoch_end=lambda epoch, logs: weights.append(model.get_weights())
    )
    GradientInput.built = 0
    callback = ExplanationMetrics(GradientInput, {"mufidelity": MU}, x[:12], y[:12])
    history = model.fit(x, y, epochs=3, batch_size=32, verbose=0, callbacks=[callback, record])
    scores = history.history["mufidelity"]
    assert len(scores) == 3 and np.all(np.isfinite(scores))
    assert [e for e, _ in callback.timings_] == [0, 1, 2]
    # built once, reused
    assert GradientInput.built == 1 and len(callback.metrics_) == 1
    # each epoch's score is the score of that epoch's weights, computed from scratch
    for epoch, w in enumerate(weights):
        fresh = _model()
        fresh.set_weights(w)
        one_hot = np.eye(2, dtype=np.float32)[y[:12]]
        expected = MU(fresh, x[:12], y[:12]).evaluate(GradientInput(fresh).explain(x[:12], one_hot))
        np.testing.assert_allclose(scores[epoch], expected, rtol=1e-4, atol=1e-6)
    # training changed the scores (the callback does not log a constant)
    assert len(set(np.round(scores, 6))) > 1


def test_every_logs_nan_on_other_epochs_and_csvlogger_records_columns(tmp_path):
    x, y = _data()
    path = tmp_path / "log.csv"
    callback = ExplanationMetrics(GradientInput, [MU], x[:8], y[:8], every=2)
    history = _model().fit(
        x,
        y,
        epochs=4,
        batch_size=32,
        verbose=0,
        callbacks=[callback, keras.callbacks.CSVLogger(str(path))],
    )
    scores = np.asarray(history.history["MuFidelity"])
    assert np.isnan(scores[[0, 2]]).all() and np.isfinite(scores[[1, 3]]).all()
    rows = list(csv.DictReader(open(path)))
    assert len(rows) == 4 and "MuFidelity" in rows[0]
    np.testing.assert_allclose(float(rows[3]["MuFidelity"]), scores[3], rtol=1e-6)


def test_epoch_collection_several_explainers_and_callable_explainers():
    x, y = _data()

    def random_explainer(model):
        rng = np.random.default_rng(0)
        return lambda inputs, targets: rng.random(inputs.shape).astype(np.float32)

    callback = ExplanationMetrics(
        {"gi": GradientInput, "random": random_explainer},
        {"mu": MU, "mu_pearson": functools.partial(MU, correlation="pearson")},
        x[:8],
        y[:8],
        every=[0, 2],
    )
    history = _model().fit(x, y, epochs=3, verbose=0, callbacks=[callback])
    keys = {"gi_mu", "gi_mu_pearson", "random_mu", "random_mu_pearson"}
    assert keys <= set(history.history)
    for key in keys:
        values = np.asarray(history.history[key])
        assert np.isfinite(values[[0, 2]]).all() and np.isnan(values[1])


def test_targets_none_one_hot_and_ids_agree():
    x, y = _data()
    model = _model()
    one_hot = np.eye(2, dtype=np.float32)[y[:8]]
    by_ids = ExplanationMetrics(GradientInput, [MU], x[:8], y[:8])
    by_one_hot = ExplanationMetrics(GradientInput, [MU], x[:8], one_hot)
    for cb in (by_ids, by_one_hot):
        cb.set_model(model)
    assert by_ids.evaluate() == by_one_hot.evaluate()
    predicted = ExplanationMetrics(GradientInput, [MU], x[:8])
    predicted.set_model(model)
    pred_ids = np.argmax(model.predict(x[:8], verbose=0), -1)
    explicit = ExplanationMetrics(GradientInput, [MU], x[:8], pred_ids)
    explicit.set_model(model)
    assert predicted.evaluate() == pytest.approx(explicit.evaluate())


def test_dataset_probe_and_probe_is_a_copy():
    x, y = _data()
    model = _model()
    probe = x[:8].copy()
    from_array = ExplanationMetrics(GradientInput, [MU], probe, y[:8])
    probe[:] = 0  # the callback kept its own copy
    from_ds = ExplanationMetrics(
        GradientInput, [MU], tf.data.Dataset.from_tensor_slices((x[:8], y[:8])).batch(3)
    )
    for cb in (from_array, from_ds):
        cb.set_model(model)
    assert from_array.evaluate() == from_ds.evaluate()


def test_built_metric_instance_is_reused_and_foreign_model_warns():
    x, y = _data()
    model = _model()
    metric = MU(model, x[:8], y[:8])
    cb = ExplanationMetrics(GradientInput, {"mu": metric}, x[:8], y[:8])
    cb.set_model(model)
    cb.evaluate()
    assert cb.metrics_["mu"] is metric
    other = ExplanationMetrics(GradientInput, {"mu": metric}, x[:8], y[:8])
    other.set_model(_model(seed=1))
    with pytest.warns(UserWarning, match="another model"):
        other.evaluate()


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(every=0), ValueError, "every"),
        (dict(every=1.5), TypeError, "every"),
        (dict(every=[]), ValueError, "every"),
        (dict(log_interval=1.5), ValueError, "log_interval"),
        (dict(log_interval="yes"), TypeError, "log_interval"),
        (dict(log_interval=True, interval_resamples=10), ValueError, "interval_resamples"),
        (dict(metrics={}), ValueError, "metrics"),
        (dict(metrics=[MU, MU]), ValueError, "two entries named 'MuFidelity'"),
        (dict(metrics=[42]), TypeError, "metrics"),
        (dict(explainer_factory="saliency"), TypeError, "explainer_factory"),
        (dict(explainer_factory={}), ValueError, "explainer_factory"),
        (dict(x_probe=np.zeros(8, np.float32)), ValueError, "x_probe"),
        (dict(x_probe=np.zeros((0, 8, 8, 1), np.float32)), ValueError, "x_probe"),
        (dict(y_probe=np.zeros(3, np.int64)), ValueError, "y_probe"),
        (dict(y_probe=np.full(8, np.nan)), ValueError, "y_probe"),
        (
            dict(x_probe=tf.data.Dataset.from_tensor_slices(np.zeros((4, 2))).repeat()),
            ValueError,
            "finite",
        ),
    ],
)
def test_constructor_errors(kwargs, error, match):
    x, y = _data()
    args = dict(explainer_factory=GradientInput, metrics=[MU], x_probe=x[:8], y_probe=y[:8])
    args.update(kwargs)
    with pytest.raises(error, match=match):
        ExplanationMetrics(**args)


def test_build_errors():
    x, y = _data()
    model = _model()
    for y_probe, match in (
        (np.full(8, 5), r"\[0, 1\]"),
        (np.full(8, 0.5), "integer"),
        (np.zeros((8, 3)), "K = 2"),
    ):
        cb = ExplanationMetrics(GradientInput, [MU], x[:8], y_probe)
        cb.set_model(model)
        with pytest.raises((ValueError, TypeError), match=match):
            cb.evaluate()
    cb = ExplanationMetrics(lambda m: 3, [MU], x[:8], y[:8])
    cb.set_model(model)
    with pytest.raises(TypeError, match="explainer_factory"):
        cb.evaluate()
    cb = ExplanationMetrics(GradientInput, {"loss": MU}, x[:8], y[:8])
    with pytest.raises(ValueError, match="collide"):
        model.fit(x, y, epochs=1, verbose=0, callbacks=[cb])


def test_with_xplique_explainers_and_metrics():
    attributions = pytest.importorskip("xplique.attributions")
    xplique_metrics = pytest.importorskip("xplique.metrics")
    x, y = _data()
    callback = ExplanationMetrics(
        {
            "saliency": attributions.Saliency,
            "ig": functools.partial(attributions.IntegratedGradients, steps=4),
        },
        {
            "ours": MU,
            "xplique": functools.partial(xplique_metrics.MuFidelity, grid_size=4, nb_samples=16),
        },
        x[:8],
        y[:8],
    )
    history = _model().fit(x, y, epochs=2, verbose=0, callbacks=[callback])
    for key in ("saliency_ours", "saliency_xplique", "ig_ours", "ig_xplique"):
        assert np.all(np.isfinite(history.history[key]))


def test_log_interval_logs_the_bounds_of_the_summary(tmp_path):
    x, y = _data()
    path = tmp_path / "log.csv"
    callback = ExplanationMetrics(
        GradientInput, {"mu": MU}, x[:12], y[:12], every=2, log_interval=0.9, interval_resamples=500
    )
    model = _model()
    history = model.fit(
        x,
        y,
        epochs=2,
        batch_size=32,
        verbose=0,
        callbacks=[callback, keras.callbacks.CSVLogger(str(path))],
    )
    h = history.history
    assert callback.log_keys == ["mu", "mu_ci_low", "mu_ci_high"]
    assert np.isnan([h["mu"][0], h["mu_ci_low"][0], h["mu_ci_high"][0]]).all()
    assert h["mu_ci_low"][1] < h["mu"][1] < h["mu_ci_high"][1]
    # the bounds are the summary of the last epoch's explanations, at level 0.9
    one_hot = np.eye(2, dtype=np.float32)[y[:12]]
    expected = MU(model, x[:12], y[:12]).summary(
        GradientInput(model).explain(x[:12], one_hot), confidence=0.9, n_resamples=500
    )
    np.testing.assert_allclose(
        [h["mu"][1], h["mu_ci_low"][1], h["mu_ci_high"][1]],
        [expected.mean, expected.ci_low, expected.ci_high],
        rtol=1e-4,
        atol=1e-5,
    )
    rows = list(csv.DictReader(open(path)))
    assert {"mu", "mu_ci_low", "mu_ci_high"} <= set(rows[0])


def test_log_interval_refuses_metrics_without_summary():
    x, y = _data()

    class Plain:
        def __init__(self, model, x, y):
            pass

        def evaluate(self, explanations):
            return 0.0

    cb = ExplanationMetrics(GradientInput, [Plain], x[:8], y[:8], log_interval=True)
    cb.set_model(_model())
    with pytest.raises(TypeError, match="summary"):
        cb.evaluate()


# ------------------------------------------------------------- hostile inputs
@pytest.mark.parametrize(
    "x_probe, error, match",
    [
        (np.full((4, 8, 8, 1), np.nan, np.float32), ValueError, "`x_probe` must be .*finite"),
        (np.array([["a", "b"]]), TypeError, "`x_probe` must be an array of numbers"),
        (np.zeros((4, 0), np.float32), ValueError, "`x_probe` must be a non-empty array"),
        (
            lambda: tf.data.Dataset.from_tensor_slices({"image": np.zeros((4, 8, 8, 1))}),
            TypeError,
            "`x_probe` must be a NumPy array",
        ),
        (
            lambda: tf.data.Dataset.from_tensor_slices(np.full((4, 8, 8, 1), np.inf)),
            ValueError,
            "`x_probe` must be .*finite",
        ),
    ],
)
def test_probe_inputs_are_checked_when_the_callback_is_built(x_probe, error, match):
    # were accepted, then failed after the first epoch of training (or an AttributeError)
    x_probe = x_probe() if callable(x_probe) else x_probe
    with pytest.raises(error, match=match):
        ExplanationMetrics(GradientInput, [MU], x_probe)


class _Returns:
    def __init__(self, value):
        self.value = value

    def evaluate(self, explanations):
        return self.value


@pytest.mark.parametrize(
    "value, error", [(None, TypeError), ("high", TypeError), (np.ones(2), ValueError)]
)
def test_metric_returning_no_number_is_refused(value, error):
    # None was logged as NaN, a string was a raw "could not convert string to float"
    x, y = _data()
    cb = ExplanationMetrics(GradientInput, {"m": _Returns(value)}, x[:8], y[:8])
    cb.set_model(_model())
    with pytest.raises(error, match=r"`metrics\['m'\]\.evaluate\(explanations\)` must be"):
        cb.evaluate()


def test_explainer_writing_into_its_arguments_leaves_the_probe_fixed():
    x, y = _data()

    def zeroing(model):
        def explain(inputs, targets):
            inputs *= 0
            targets *= 0
            return np.ones(inputs.shape[:3], np.float32)

        return explain

    cb = ExplanationMetrics(zeroing, [MU], x[:8], y[:8])
    cb.set_model(_model())
    cb.evaluate()
    np.testing.assert_array_equal(cb.x_probe, x[:8])
    np.testing.assert_array_equal(cb._y_formatted, np.eye(2)[y[:8]])
