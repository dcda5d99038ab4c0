"""Tests of ``xplique_ext/metrics/complexity.py``: Complexity and Sparseness, and the
model-free base they share (``BaseComplexityMetric``)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import tensorflow as tf

from tests.common_case import Case
from xplique_ext.commons.warnings import UndefinedScoreWarning
from xplique_ext.metrics import BaseComplexityMetric, Complexity, Sparseness

RNG = np.random.default_rng(0)
MAPS = {
    "tabular": RNG.normal(size=(7, 12)).astype(np.float32),
    "image": RNG.normal(size=(7, 8, 9)).astype(np.float32),
    "channels": RNG.normal(size=(7, 8, 9, 3)).astype(np.float32),
    "large": RNG.random((4, 224, 224)).astype(np.float32),
}


def _quiet(fn, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedScoreWarning)
        return fn(*args)


# ------------------------------------------------------------------ known answers
def test_complexity_known_answers():
    n = 8
    uniform = np.ones((1, n))
    one_feature = np.eye(n)[:1]
    scores = Complexity().detailed_evaluate(np.concatenate([uniform, one_feature]))
    np.testing.assert_allclose(scores, [np.log(n), 0.0], atol=1e-6)


def test_sparseness_known_answers():
    n = 8
    uniform = np.ones((1, n))
    one_feature = np.eye(n)[:1]
    scores = Sparseness().detailed_evaluate(np.concatenate([uniform, one_feature]))
    np.testing.assert_allclose(scores, [0.0, (n - 1) / n], atol=1e-6)


def test_sign_and_scale_do_not_change_the_scores():
    phi = MAPS["image"]
    for metric in (Complexity(), Sparseness()):
        base = metric.detailed_evaluate(phi)
        np.testing.assert_allclose(metric.detailed_evaluate(-phi), base, rtol=1e-12)
        np.testing.assert_allclose(metric.detailed_evaluate(3.7 * phi), base, rtol=1e-6)


def test_channels_are_averaged_after_the_absolute_value():
    phi = MAPS["channels"]
    averaged = np.abs(phi).mean(axis=-1)
    for metric in (Complexity(), Sparseness()):
        np.testing.assert_allclose(
            metric.detailed_evaluate(phi), metric.detailed_evaluate(averaged), rtol=1e-6
        )


# ------------------------------------------------------------------ Xplique
@pytest.mark.parametrize("kind", sorted(MAPS))
@pytest.mark.parametrize("name", ["Complexity", "Sparseness"])
def test_scores_equal_xpliques(name, kind):
    xplique_metrics = pytest.importorskip("xplique.metrics")
    phi = MAPS[kind]
    ours = getattr(__import__("xplique_ext.metrics", fromlist=[name]), name)()
    theirs = getattr(xplique_metrics, name)()
    np.testing.assert_allclose(
        ours.detailed_evaluate(phi), theirs.detailed_evaluate(phi), rtol=0, atol=1e-5
    )
    assert abs(ours.evaluate(phi) - theirs.evaluate(phi)) < 1e-5


# ------------------------------------------------------------------ invariances
@pytest.mark.parametrize("cls", [Complexity, Sparseness])
def test_same_scores_at_any_batch_size(cls):
    phi = MAPS["image"]
    expected = cls(batch_size=None).evaluate(phi)
    for batch_size in (1, 2, 5, 64):
        assert cls(batch_size=batch_size).evaluate(phi) == expected


@pytest.mark.parametrize("cls", [Complexity, Sparseness])
def test_arrays_tensors_and_datasets_give_the_same_scores(cls):
    phi = MAPS["image"]
    metric = cls(batch_size=3)
    expected = metric.detailed_evaluate(phi)
    np.testing.assert_array_equal(metric.detailed_evaluate(tf.constant(phi)), expected)
    dataset = tf.data.Dataset.from_tensor_slices(phi).batch(2)
    np.testing.assert_array_equal(metric.detailed_evaluate(dataset), expected)
    assert metric.evaluate(dataset) == pytest.approx(metric.evaluate(phi), rel=1e-15)


# ------------------------------------------------------------------ undefined
@pytest.mark.parametrize("cls", [Complexity, Sparseness])
def test_an_all_zero_explanation_is_nan_with_its_reason(cls):
    phi = MAPS["tabular"].copy()
    phi[2] = 0.0
    with pytest.warns(UndefinedScoreWarning, match="1 of 7 explanations are all zero"):
        scores = cls().detailed_evaluate(phi)
    assert np.isnan(scores[2]) and np.isfinite(np.delete(scores, 2)).all()
    with pytest.warns(UndefinedScoreWarning, match="no distribution of relevance") as caught:
        value = cls(batch_size=2).evaluate(phi)
    assert len(caught) == 1
    assert value == pytest.approx(np.nanmean(scores), rel=1e-12)


# ------------------------------------------------------------------ errors
def test_bad_settings_and_explanations_name_the_parameter():
    with pytest.raises(ValueError, match="`batch_size`"):
        Complexity(batch_size=0)
    with pytest.raises((TypeError, ValueError), match="`explanations`"):
        Complexity().detailed_evaluate(np.zeros((2, 2, 2, 2, 2)))
    with pytest.raises(TypeError, match="`explanations`"):
        Sparseness().detailed_evaluate(np.array([["a", "b"]]))


# ------------------------------------------------------------------ the base
class _Sum(BaseComplexityMetric):
    """Xplique's way: detailed_evaluate receives each batch as a tf.Tensor."""

    higher_is_better = True

    def detailed_evaluate(self, explanations):
        return np.sum(explanations.numpy().reshape(len(explanations), -1), axis=1)


def test_a_subclass_receives_each_batch_as_a_tensor():
    phi = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    for batch_size in (1, 2, 4, None):
        metric = _Sum(batch_size=batch_size)
        assert metric.evaluate(phi) == pytest.approx(phi.reshape(2, -1).sum(axis=1).mean())
        assert metric(phi) == metric.evaluate(phi)


# ------------------------------------------------------------------ common checks
def _case(cls):
    phi = MAPS["image"]
    zero = phi.copy()
    zero[0] = 0.0
    return Case(
        cls,
        lambda seed: cls(batch_size=3),
        (phi,),
        len(phi),
        nan=lambda: (cls(batch_size=3), (zero,)),
    )


COMMON_CASES = {
    "Complexity": lambda: _case(Complexity),
    "Sparseness": lambda: _case(Sparseness),
}


@pytest.mark.parametrize("cls", [Complexity, Sparseness])
@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_non_finite_explanations_are_refused_as_explanations(cls, value):
    phi = MAPS["tabular"].copy()
    phi[1, 3] = value
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no NumPy warning, no undefined score: a refusal
        with pytest.raises(ValueError, match="`explanations` must be an array of finite"):
            cls().detailed_evaluate(phi)
        with pytest.raises(ValueError, match="`explanations` must be an array of finite"):
            cls()(phi)
        dataset = tf.data.Dataset.from_tensor_slices(phi).batch(4)
        with pytest.raises(ValueError, match="`explanations` must be an array of finite"):
            cls()(dataset)


@pytest.mark.parametrize("cls", [Complexity, Sparseness])
def test_empty_explanations_are_refused_as_explanations(cls):
    phi = MAPS["tabular"]
    for empty in (phi[:0], phi[:, :0]):
        with pytest.raises(ValueError, match="`explanations` must be a non-empty array"):
            cls()(empty)
    no_batches = tf.data.Dataset.from_tensor_slices(phi).batch(4).take(0)
    with pytest.raises(ValueError, match="`explanations` must hold at least one explanation"):
        cls()(no_batches)


# ------------------------------------------------------------------ scale
@pytest.mark.parametrize("cls", [Complexity, Sparseness])
@pytest.mark.parametrize("scale", [1e-9, 1e-20])
def test_explanations_too_small_for_the_epsilon_are_nan_with_their_reason(cls, scale):
    phi = MAPS["image"].copy()
    phi[3] *= scale
    with pytest.warns(UndefinedScoreWarning, match="1 of 7 explanations are too small"):
        scores = cls().detailed_evaluate(phi)
    assert np.isnan(scores[3]) and np.isfinite(np.delete(scores, 3)).all()
    with pytest.warns(UndefinedScoreWarning, match="epsilon 1e-08 changes the score") as caught:
        cls().evaluate(phi)
    assert len(caught) == 1


@pytest.mark.parametrize("cls", [Complexity, Sparseness])
def test_huge_float32_explanations_do_not_overflow(cls):
    phi = np.abs(MAPS["image"]) / np.abs(MAPS["image"]).max()
    huge = np.float32(1e38) * phi
    assert huge.dtype == np.float32 and np.isfinite(huge).all()
    np.testing.assert_allclose(
        cls().detailed_evaluate(huge), cls().detailed_evaluate(phi), rtol=1e-5
    )


def test_a_gini_index_is_never_outside_zero_one():
    tabular = np.pad(np.abs(MAPS["tabular"]), ((0, 0), (0, 988)))
    maps = np.concatenate([np.ones((1, 1000)), np.eye(1000)[:1], tabular])
    for scale in (1.0, 1e-2, 1e6):
        scores = Sparseness().detailed_evaluate(scale * maps)
        assert ((scores >= 0.0) & (scores <= 1.0)).all()
