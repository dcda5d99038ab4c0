"""Tests of ``xplique_ext/metrics/stability.py``: AverageStability, and through it the
explainer base (``xplique_ext/metrics/explainer_base.py``)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import tensorflow as tf

from tests.common_case import Case
from xplique_ext.commons.warnings import UndefinedScoreWarning
from xplique_ext.metrics import AverageStability

SHAPE = (6, 6, 1)
X = np.random.default_rng(0).random((9, *SHAPE)).astype(np.float32)
Y = np.arange(9) % 3


def _model(z):
    """Three outputs, no weights: the predicted class is the argmax of three sums."""
    flat = np.reshape(z, (len(z), -1))
    return np.stack([flat[:, :12].sum(1), flat[:, 12:24].sum(1), flat[:, 24:].sum(1)], axis=1)


def identity_explainer(inputs, targets):
    return np.asarray(inputs)


def constant_explainer(inputs, targets):
    return np.ones(np.shape(inputs))


# ------------------------------------------------------------------ known answers
def test_a_constant_explainer_is_perfectly_stable():
    assert AverageStability(_model, X, Y, seed=0).evaluate(constant_explainer) == 0.0


def test_the_identity_explainer_measures_the_noise():
    """phi = x: the distance is the norm of the noise, uniform in [0, r) per feature."""
    radius = 0.2
    metric = AverageStability(_model, X, Y, radius=radius, nb_samples=400, seed=0)
    n = int(np.prod(SHAPE))
    l1 = AverageStability(
        _model, X, Y, radius=radius, nb_samples=400, seed=0, distance="l1"
    ).detailed_evaluate(identity_explainer)
    np.testing.assert_allclose(l1, n * radius / 2, rtol=0.01)  # E|u| = r / 2
    l2 = metric.detailed_evaluate(identity_explainer)
    np.testing.assert_allclose(l2, np.sqrt(n * radius**2 / 3), rtol=0.01)  # E u^2 = r^2 / 3


def test_an_explainer_that_changes_completely_scores_its_norm():
    def worst(inputs, targets):
        original = any(np.array_equal(np.asarray(inputs)[0], x) for x in X)
        return np.ones(np.shape(inputs)) if original else np.zeros(np.shape(inputs))

    score = AverageStability(_model, X, Y, batch_size=None, seed=0).evaluate(worst)
    assert score == pytest.approx(np.sqrt(np.prod(SHAPE)))


def test_a_callable_distance_is_called_on_each_pair():
    def l_inf(a, b):
        return np.max(np.abs(a - b))

    scores = AverageStability(_model, X, Y, distance=l_inf, radius=0.1, seed=0).detailed_evaluate(
        identity_explainer
    )
    assert np.all((scores > 0.05) & (scores < 0.1))


def test_base_explanations_replace_the_explanations_of_the_inputs():
    metric = AverageStability(_model, X, Y, seed=0)
    given = metric.detailed_evaluate(identity_explainer, base_explanations=X)
    np.testing.assert_array_equal(given, metric.detailed_evaluate(identity_explainer))
    with pytest.raises(ValueError, match="`base_explanations` must hold one explanation"):
        metric.detailed_evaluate(identity_explainer, base_explanations=X[:3])


def test_xplique_explainers_with_explain_are_accepted():
    class Explainer:
        def explain(self, inputs, targets):
            return np.asarray(inputs) * 2

    metric = AverageStability(_model, X, Y, seed=0)
    np.testing.assert_allclose(
        metric.detailed_evaluate(Explainer()),
        2 * metric.detailed_evaluate(identity_explainer),
        rtol=1e-6,
    )


def test_the_explainer_never_gets_more_than_batch_size_inputs():
    sizes = []

    def recording(inputs, targets):
        sizes.append(len(inputs))
        return np.asarray(inputs)

    AverageStability(_model, X, Y, batch_size=8, nb_samples=3, seed=0).evaluate(recording)
    assert max(sizes) <= 8 and sum(sizes) == len(X) * (3 + 1)
    sizes.clear()  # more neighbours than batch_size: one input's at a time, in batches
    AverageStability(_model, X, Y, batch_size=2, nb_samples=5, seed=0).evaluate(recording)
    assert max(sizes) <= 2


def test_explain_methods_get_tensors_and_functions_get_arrays():
    received = []

    class Explainer:
        def explain(self, inputs, targets):
            received.append((type(inputs), type(targets)))
            return inputs

    def function(inputs, targets):
        received.append((type(inputs), type(targets)))
        return inputs

    metric = AverageStability(_model, X, Y, nb_samples=2, seed=0)
    metric.evaluate(Explainer())
    assert set(received) == {(type(tf.constant(0.0)), type(tf.constant(0.0)))}
    received.clear()
    metric.evaluate(function)
    assert set(received) == {(np.ndarray, np.ndarray)}


# ------------------------------------------------------------------ invariances
def test_same_scores_at_any_batch_size_and_order():
    expected = AverageStability(_model, X, Y, batch_size=None, seed=3).detailed_evaluate(
        identity_explainer
    )
    for batch_size in (1, 2, 4):
        scores = AverageStability(_model, X, Y, batch_size=batch_size, seed=3).detailed_evaluate(
            identity_explainer
        )
        np.testing.assert_array_equal(scores, expected)
    order = np.random.default_rng(1).permutation(len(X))
    shuffled = AverageStability(_model, X[order], Y[order], seed=3).detailed_evaluate(
        identity_explainer
    )
    np.testing.assert_array_equal(shuffled, expected[order])


def test_arrays_tensors_and_datasets_give_the_same_scores():
    expected = AverageStability(_model, X, Y, seed=3).detailed_evaluate(identity_explainer)
    tensor = AverageStability(_model, tf.constant(X), Y, seed=3)
    np.testing.assert_array_equal(tensor.detailed_evaluate(identity_explainer), expected)
    dataset = tf.data.Dataset.from_tensor_slices((X, Y)).batch(4)
    streamed = AverageStability(_model, dataset, batch_size=4, seed=3)
    np.testing.assert_array_equal(streamed.detailed_evaluate(identity_explainer), expected)


def test_the_seed_decides_the_noise():
    first = AverageStability(_model, X, Y, seed=1).detailed_evaluate(identity_explainer)
    again = AverageStability(_model, X, Y, seed=1).detailed_evaluate(identity_explainer)
    other = AverageStability(_model, X, Y, seed=2).detailed_evaluate(identity_explainer)
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)


def test_targets_reach_the_explainer_one_hot_and_none_uses_the_predicted_class():
    seen = []

    def recording(inputs, targets):
        seen.append(np.asarray(targets))
        return np.asarray(inputs)

    AverageStability(_model, X, Y, nb_samples=2, seed=0).evaluate(recording)
    np.testing.assert_array_equal(seen[0], np.eye(3, dtype=np.float32)[Y])
    seen.clear()
    AverageStability(_model, X, nb_samples=2, seed=0).evaluate(recording)
    np.testing.assert_array_equal(seen[0].argmax(axis=1), _model(X).argmax(axis=1))


# ------------------------------------------------------------------ Xplique
def test_agrees_with_xplique_within_the_standard_error():
    xplique_metrics = pytest.importorskip("xplique.metrics")
    x = np.random.default_rng(5).random((40, 8, 8, 1)).astype(np.float32)
    y = np.eye(3, dtype=np.float32)[np.arange(40) % 3]

    def squared(inputs, targets):  # a non-linear explainer: the noise's values matter
        return np.asarray(inputs) ** 2

    ours = AverageStability(_model, x, y, nb_samples=10, seed=0).detailed_evaluate(squared)
    theirs = xplique_metrics.AverageStability(_model, x, y, nb_samples=10).evaluate(squared)
    standard_error = ours.std(ddof=1) / np.sqrt(len(ours))
    assert abs(ours.mean() - theirs) < 4 * standard_error + 1e-3 * theirs


# ------------------------------------------------------------------ undefined
def test_a_nan_distance_or_explanation_is_nan_with_its_reason():
    def nan_for_first(a, b):
        return np.nan if a.max() > 1.5 else float(np.abs(a - b).sum())

    x = X.copy()
    x[0] = 2.0
    with pytest.warns(UndefinedScoreWarning, match="1 because the distance returned NaN"):
        scores = AverageStability(_model, x, Y, distance=nan_for_first, seed=0).detailed_evaluate(
            identity_explainer
        )
    assert np.isnan(scores[0]) and np.isfinite(scores[1:]).all()

    def nan_explainer(inputs, targets):
        out = np.array(inputs, dtype=np.float64)
        out[np.asarray(inputs).reshape(len(out), -1).max(axis=1) > 1.5] = np.nan
        return out

    with pytest.warns(UndefinedScoreWarning, match="the explainer returned NaN or inf"):
        scores = AverageStability(_model, x, Y, seed=0).detailed_evaluate(nan_explainer)
    assert np.isnan(scores[0]) and np.isfinite(scores[1:]).all()


# ------------------------------------------------------------------ errors
def test_bad_settings_name_the_parameter():
    with pytest.raises(ValueError, match="`radius`"):
        AverageStability(_model, X, Y, radius=0.0)
    with pytest.raises(ValueError, match="`distance`"):
        AverageStability(_model, X, Y, distance="l3")
    with pytest.raises(ValueError, match="`nb_samples`"):
        AverageStability(_model, X, Y, nb_samples=0)
    with pytest.raises(ValueError, match="`targets`"):
        AverageStability(_model, X, Y[:3])
    with pytest.raises(TypeError, match="`explainer`"):
        AverageStability(_model, X, Y).evaluate(3)


def test_an_explainer_returning_the_wrong_number_of_maps_is_refused():
    with pytest.raises(ValueError, match="explainer"):
        AverageStability(_model, X, Y).evaluate(lambda inputs, targets: np.ones((1, 6, 6, 1)))


def test_a_deep_copy_gives_the_same_scores_and_shares_the_model():
    import copy
    import pickle

    metric = AverageStability(_model, X, Y, nb_samples=3, seed=0)
    clone = copy.deepcopy(metric)
    assert clone.model is metric.model and clone.inputs is not metric.inputs
    np.testing.assert_array_equal(
        clone.detailed_evaluate(identity_explainer), metric.detailed_evaluate(identity_explainer)
    )
    with pytest.raises(TypeError, match="get_config"):
        pickle.dumps(metric)


# ------------------------------------------------------------------ common checks
def _common_case():
    x = X.copy()
    x[0] = 2.0

    def nan_for_ones(a, b):
        return np.nan if a.max() > 1.5 else float(np.abs(a - b).sum())

    def nan():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            metric = AverageStability(_model, x, Y, distance=nan_for_ones, nb_samples=4, seed=0)
        return metric, (identity_explainer,)

    return Case(
        AverageStability,
        lambda seed: AverageStability(_model, X, Y, batch_size=4, nb_samples=4, seed=seed),
        (identity_explainer,),
        len(X),
        data={"model": _model, "inputs": X, "targets": Y},
        nan=nan,
        model_based=True,
    )


COMMON_CASES = {"AverageStability": _common_case}


# ------------------------------------------------------------------ explainer outputs
@pytest.mark.parametrize(
    "explainer",
    [
        lambda x, y: np.asarray(x)[:, :3],  # fewer features
        lambda x, y: np.asarray(x).sum(1),  # one value per input
        lambda x, y: np.asarray(x)[:2],  # fewer explanations than inputs
    ],
    ids=["fewer-features", "one-value", "fewer-explanations"],
)
def test_an_explanation_of_the_wrong_shape_is_refused_naming_the_explainer(explainer):
    tabular = tf.keras.Sequential([tf.keras.Input((6,)), tf.keras.layers.Dense(3)])
    x = np.random.default_rng(0).random((8, 6)).astype(np.float32)
    metric = AverageStability(tabular, x, np.arange(8) % 3, nb_samples=5, seed=0)
    with pytest.raises(ValueError, match=r"`explainer` \(<lambda>\) must return one explanation"):
        metric(explainer)


def test_an_image_explainer_may_return_maps_without_channels():
    metric = AverageStability(_model, X, Y, seed=0)
    assert metric(lambda x, y: np.asarray(x)[..., 0]) >= 0.0


def test_base_explanations_of_the_wrong_shape_are_refused_naming_them():
    metric = AverageStability(_model, X, Y, seed=0)
    with pytest.raises(ValueError, match="`base_explanations` must have one of the per-input"):
        metric(identity_explainer, X[:, :3])
