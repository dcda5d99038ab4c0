"""Tests of ``xplique_ext/metrics/mege.py``: MeGe and ReCo."""

from __future__ import annotations

import warnings

import keras
import numpy as np
import pytest

from tests.common_case import Case
from xplique_ext.commons.warnings import UndefinedScoreWarning
from xplique_ext.metrics import MeGe
from xplique_ext.metrics.mege import MeGeScore

X = np.random.default_rng(0).normal(size=(8, 5)).astype(np.float32)


def _linear(weights):
    model = keras.Sequential([keras.Input((5,)), keras.layers.Dense(2, use_bias=False)])
    model.layers[-1].set_weights([np.asarray(weights, np.float32)])
    return model


BASE = np.random.default_rng(1).normal(size=(5, 2))
MODEL = _linear(BASE)
PREDICTED = np.asarray(MODEL(X)).argmax(axis=1)


class WeightTimesInput:
    """phi = x * w[:, class]: an explainer whose maps follow the model's weights."""

    def __init__(self, model):
        self.model = model

    def explain(self, inputs, targets):
        w = self.model.layers[-1].get_weights()[0]
        return np.asarray(inputs) * (np.asarray(targets) @ w.T)

    def __call__(self, inputs, targets):  # Xplique's MeGe calls the explainer
        return self.explain(inputs, targets)


def same_model(x_train, y_train, x_test, y_test):
    return MODEL


def _quiet(fn, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedScoreWarning)
        return fn(*args)


def test_identical_models_are_perfectly_representative():
    metric = MeGe(same_model, X, PREDICTED, k_splits=2)
    score = metric.evaluate(WeightTimesInput)
    assert isinstance(score, MeGeScore) and isinstance(score, float)
    np.testing.assert_allclose(metric.detailed_evaluate(WeightTimesInput), 1.0)
    mege, reco = score  # Xplique's pair
    assert mege == pytest.approx(1.0) and reco == score.reco


def test_an_input_no_model_predicts_is_nan_with_its_reason():
    labels = PREDICTED.copy()
    labels[:2] = 1 - labels[:2]  # two inputs every model gets wrong
    metric = MeGe(same_model, X, labels, k_splits=2)
    with pytest.warns(UndefinedScoreWarning, match="2 of 8 inputs have an undefined score"):
        scores = metric.detailed_evaluate(WeightTimesInput)
    assert np.isnan(scores[:2]).all() and np.isfinite(scores[2:]).all()


def _split_models(seed):
    """Models that differ by split, and an algorithm that hands them out in order."""
    rng = np.random.default_rng(seed)
    models = [_linear(BASE + 0.8 * rng.normal(size=BASE.shape)) for _ in range(4)]
    calls = iter(models)
    return models, (lambda x_train, y_train, x_test, y_test: next(calls))


def test_reco_equals_xpliques_and_mege_is_close_to_xpliques():
    representativity = pytest.importorskip("xplique.metrics.representativity")
    x = np.random.default_rng(2).normal(size=(16, 5)).astype(np.float32)
    labels = np.eye(2, dtype=np.float32)[np.asarray(MODEL(x)).argmax(axis=1)]
    _, ours_algorithm = _split_models(3)
    _, theirs_algorithm = _split_models(3)
    ours = _quiet(MeGe(ours_algorithm, x, labels, k_splits=4).evaluate, WeightTimesInput)
    theirs_mege, theirs_reco = representativity.MeGe(
        theirs_algorithm, x, labels, k_splits=4
    ).evaluate(WeightTimesInput)
    assert ours.reco == pytest.approx(theirs_reco, abs=1e-9)
    # the mean of the inputs' scores against Xplique's pooled distances: close, not equal
    assert abs(float(ours) - theirs_mege) < 0.05


def test_models_are_trained_on_every_split_but_their_own():
    seen = []

    def recording(x_train, y_train, x_test, y_test):
        seen.append((len(x_train), len(x_test), x_test[0].copy()))
        return MODEL

    MeGe(recording, X, PREDICTED, k_splits=4)
    assert [(a, b) for a, b, _ in seen] == [(6, 2)] * 4
    for i, (_, _, first_test) in enumerate(seen):
        np.testing.assert_array_equal(first_test, X[2 * i])


def test_refusals_name_the_parameter():
    with pytest.raises(ValueError, match="`targets` is required"):
        MeGe(same_model, X)
    with pytest.raises(ValueError, match="`k_splits` must divide"):
        MeGe(same_model, X, PREDICTED, k_splits=3)
    with pytest.raises(ValueError, match="`k_splits`"):
        MeGe(same_model, X, PREDICTED, k_splits=1)
    with pytest.raises(TypeError, match="`explainer_params`"):
        MeGe(same_model, X, PREDICTED, k_splits=2).evaluate(WeightTimesInput, [1])


def _common_case():
    labels = PREDICTED.copy()
    labels[0] = 1 - labels[0]
    return Case(
        MeGe,
        lambda seed: MeGe(same_model, X, PREDICTED, batch_size=4, k_splits=2),
        (WeightTimesInput,),
        len(X),
        data={"learning_algorithm": same_model, "inputs": X, "targets": PREDICTED},
        nan=lambda: (MeGe(same_model, X, labels, k_splits=2), (WeightTimesInput,)),
        model_based=True,
        not_per_unit="MeGe trains one model per fold of the inputs: an input's score "
        "depends on the inputs it shares its folds with",
    )


COMMON_CASES = {"MeGe": _common_case}


class _FirstFeatures(WeightTimesInput):
    """Explanations of the wrong shape: the first three features only."""

    def explain(self, inputs, targets):
        return super().explain(inputs, targets)[:, :3]


class _Summed(WeightTimesInput):
    """Explanations of the wrong shape: one value per input."""

    def explain(self, inputs, targets):
        return super().explain(inputs, targets).sum(axis=1)


@pytest.mark.parametrize("explainer_class", [_FirstFeatures, _Summed])
def test_an_explanation_of_the_wrong_shape_is_refused_naming_the_explainer(explainer_class):
    metric = MeGe(same_model, X, PREDICTED, k_splits=2)
    name = explainer_class.__name__
    with pytest.raises(ValueError, match=rf"`explainer` \({name}\) must return one explanation"):
        metric.evaluate(explainer_class)
