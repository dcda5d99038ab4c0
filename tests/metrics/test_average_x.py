"""Tests of metrics/average_x.py: Average Drop, Average Increase and Average Gain."""

import numpy as np
import pytest
import tensorflow as tf

from tests.common_case import Case
from tests.conftest import linear_model, tiny_cnn
from xplique_ext.commons.warnings import UndefinedScoreWarning
from xplique_ext.metrics import (
    AverageDropMetric,
    AverageGainMetric,
    AverageIncreaseMetric,
    BaseAverageXMetric,
    ExplanationMetric,
)

METRICS = (AverageDropMetric, AverageIncreaseMetric, AverageGainMetric)


def _common_case(cls):
    def build():
        rng = np.random.default_rng(0)
        x = rng.random((5, 4, 4, 3)).astype(np.float32)
        phi = rng.normal(size=(5, 4, 4)).astype(np.float32)
        model = tiny_cnn((4, 4, 3), classes=3)
        options = dict(batch_size=2, activation="softmax")

        def nan():
            constant = phi.copy()
            constant[2] = -1.0  # a constant explanation has no mask
            return cls(model, x, **options), (constant,)

        return Case(
            cls,
            lambda seed: cls(model, x, **options),
            (phi,),
            5,
            data={"model": model, "inputs": x},
            nan=nan,
            model_based=True,
        )

    return build


COMMON_CASES = {cls.__name__: _common_case(cls) for cls in METRICS}


def _half_mask_case():
    """f = sum(x) on ones; the map keeps features 0 and 1 (mask 1, 1, 0, 0)."""
    x = np.ones((1, 4), np.float32)
    phi = np.array([[1.0, -1.0, 0.0, 0.0]])  # absolute value: 1, 1, 0, 0
    return linear_model((4,)), x, phi


# --------------------------------------------------------------------- known answers
def test_known_answers_by_hand():
    model, x, phi = _half_mask_case()
    # before: 4, after: 2 (the mask keeps half the input)
    assert AverageDropMetric(model, x, np.ones(1))(phi) == pytest.approx(2 / (4 + 1e-8))
    assert AverageIncreaseMetric(model, x, np.ones(1))(phi) == 0.0
    assert AverageGainMetric(model, x, np.ones(1))(phi) == 0.0
    rising = np.array([[1.0, -1.0]], np.float32)  # f: 0 before, 1 after masking feature 1
    model2 = linear_model((2,))
    phi2 = np.array([[2.0, 0.0]])
    assert AverageDropMetric(model2, rising, np.ones(1))(phi2) == 0.0
    assert AverageIncreaseMetric(model2, rising, np.ones(1))(phi2) == 1.0
    assert AverageGainMetric(model2, rising, np.ones(1))(phi2) == pytest.approx(1 / (1 + 1e-8))


def test_mask_is_min_max_normalised_and_channel_averaged():
    x = np.ones((1, 2, 1, 2), np.float32)  # 2 pixels of 2 channels
    phi = np.array([[[[1.0, 3.0]], [[0.0, -2.0]]]])  # channel means of |phi|: 2, 1
    metric = AverageDropMetric(linear_model((2, 1, 2)), x, np.ones(1))
    mask = metric._mask(phi, x)
    np.testing.assert_allclose(mask[..., 0], [[[1.0 / (1 + 1e-8)], [0.0]]], rtol=1e-7)


def test_directions_and_bases():
    assert AverageDropMetric.higher_is_better is False
    assert AverageIncreaseMetric.higher_is_better is True
    assert AverageGainMetric.higher_is_better is True
    for cls in METRICS:
        assert issubclass(cls, BaseAverageXMetric) and issubclass(cls, ExplanationMetric)


def test_average_increase_is_a_proportion_with_a_wilson_interval():
    x = np.random.default_rng(1).normal(size=(12, 3)).astype(np.float32)
    phi = np.random.default_rng(2).normal(size=(12, 3))
    summary = AverageIncreaseMetric(linear_model((3,)), x, np.ones(12)).summary(phi)
    assert "Wilson" in summary.method


# --------------------------------------------------------------------- Xplique
@pytest.mark.parametrize("cls", METRICS, ids=lambda c: c.__name__)
@pytest.mark.parametrize(
    "phi_shape, activation",
    [((7, 10, 10), "softmax"), ((7, 10, 10, 3), None), ((7, 10, 10, 1), "sigmoid")],
)
def test_image_scores_equal_xplique(cls, phi_shape, activation):
    xplique_metrics = pytest.importorskip("xplique.metrics")
    rng = np.random.default_rng(3)
    x = rng.random((7, 10, 10, 3), dtype=np.float32)
    y = np.eye(3, dtype=np.float32)[rng.integers(0, 3, 7)]
    phi = rng.normal(size=phi_shape).astype(np.float32)
    model = tiny_cnn((10, 10, 3), classes=3, seed=3)
    options = dict(batch_size=3, activation=activation)
    theirs = getattr(xplique_metrics, cls.__name__)(model, x, y, **options)(phi)
    np.testing.assert_allclose(cls(model, x, y, **options)(phi), theirs, atol=1e-5)


@pytest.mark.parametrize("cls", METRICS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("x_shape, phi_shape", [((6, 8), (6, 8)), ((6, 5, 3), (6, 5))])
def test_tabular_and_series_scores_equal_xplique(cls, x_shape, phi_shape):
    xplique_metrics = pytest.importorskip("xplique.metrics")
    rng = np.random.default_rng(4)
    x = rng.random(x_shape, dtype=np.float32)
    phi = rng.normal(size=phi_shape).astype(np.float32)
    weights = rng.normal(size=int(np.prod(x_shape[1:])))
    model = linear_model(x_shape[1:], weights=weights)
    y = np.ones((len(x), 1), np.float32)
    options = dict(activation="sigmoid")
    theirs = getattr(xplique_metrics, cls.__name__)(model, x, y, **options)(phi)
    np.testing.assert_allclose(cls(model, x, y, **options)(phi), theirs, atol=1e-5)


def test_xplique_operator_reaches_float32_targets():
    xplique = pytest.importorskip("xplique")
    rng = np.random.default_rng(5)
    x = rng.random((4, 6, 6, 3), dtype=np.float32)
    y = np.eye(3)[rng.integers(0, 3, 4)]  # float64
    phi = rng.normal(size=(4, 6, 6))
    model = tiny_cnn((6, 6, 3), classes=3)
    reference = AverageDropMetric(model, x, y, activation="softmax")(phi)
    with_task = AverageDropMetric(
        model, x, y, activation="softmax", operator=xplique.Tasks.CLASSIFICATION
    )(phi)
    np.testing.assert_allclose(with_task, reference)


# --------------------------------------------------------------------- invariances
@pytest.mark.parametrize("cls", METRICS, ids=lambda c: c.__name__)
def test_same_scores_whatever_the_batching_and_input_type(cls):
    rng = np.random.default_rng(6)
    x = rng.random((7, 6))
    phi = rng.normal(size=(7, 6))
    weights = rng.normal(size=6)
    model = linear_model((6,), weights=weights)
    y = np.ones(7)
    options = dict(activation="sigmoid")
    reference = cls(model, x, y, batch_size=None, **options).detailed_evaluate(phi)
    for batch_size in (1, 3):
        out = cls(model, x, y, batch_size=batch_size, **options).detailed_evaluate(phi)
        np.testing.assert_allclose(out, reference, atol=256 * np.finfo(np.float32).eps)
    dataset = tf.data.Dataset.from_tensor_slices((x, y[:, None])).batch(2)
    out = cls(model, dataset, **options).detailed_evaluate(tf.constant(phi))
    np.testing.assert_allclose(out, reference, atol=256 * np.finfo(np.float32).eps)


# --------------------------------------------------------------------- undefined scores
@pytest.mark.parametrize("cls", METRICS, ids=lambda c: c.__name__)
def test_constant_explanation_is_nan_with_its_reason(cls):
    x = np.random.default_rng(7).random((3, 4)).astype(np.float32)
    phi = np.random.default_rng(8).normal(size=(3, 4))
    phi[0] = -3.0
    with pytest.warns(UndefinedScoreWarning, match="1 of 3: a constant explanation"):
        scores = cls(linear_model((4,)), x, np.ones(3)).detailed_evaluate(phi)
    assert np.isnan(scores[0]) and np.isfinite(scores[1:]).all()


def test_zero_denominator_is_nan_with_its_reason():
    x = np.array([[1.0, 0.0]])
    phi = np.array([[0.0, 1.0]])

    def model(v):  # the score is -1e-8, so Average Drop's b + eps is exactly 0
        return tf.fill([tf.shape(v)[0], 1], tf.constant(-1e-8, tf.float64))

    with pytest.warns(UndefinedScoreWarning, match="a zero denominator"):
        scores = AverageDropMetric(model, x, np.ones(1)).detailed_evaluate(phi)
    assert np.isnan(scores).all()


# --------------------------------------------------------------------- errors
def test_explanations_must_match_the_inputs():
    metric = AverageDropMetric(linear_model((4,)), np.ones((2, 4), np.float32), np.ones(2))
    with pytest.raises(ValueError, match="one explanation per input: got 1"):
        metric(np.ones((1, 4)))
    with pytest.raises(ValueError, match="per-input shapes"):
        metric(np.ones((2, 3)))


def test_unknown_options_are_refused():
    with pytest.raises(TypeError, match="seed"):
        AverageGainMetric(linear_model((4,)), np.ones((2, 4), np.float32), seed=0)
    with pytest.raises(ValueError, match="`activation`"):
        AverageGainMetric(linear_model((4,)), np.ones((2, 4), np.float32), activation="relu")


# --------------------------------------------------------------------- explanation scale
def _scale_case():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(6, 5)).astype(np.float32)
    y = np.eye(3, dtype=np.float32)[rng.integers(0, 3, size=6)]
    phi = rng.normal(size=(6, 5))
    return linear_model((5,), outputs=3), x, y, phi


@pytest.mark.parametrize("cls", METRICS)
@pytest.mark.parametrize("scale", [1e-8, 1e-6])
def test_explanation_too_small_for_the_epsilon_is_nan_with_its_reason(cls, scale):
    model, x, y, phi = _scale_case()
    metric = cls(model, x, y, activation="softmax")
    with pytest.warns(UndefinedScoreWarning, match="epsilon"):
        scores = metric.detailed_evaluate(scale * phi)
    assert np.isnan(scores).all()


@pytest.mark.parametrize("cls", METRICS)
def test_huge_float64_explanations_score_as_at_an_ordinary_scale(cls):
    import warnings

    model, x, y, phi = _scale_case()
    metric = cls(model, x, y, activation="softmax")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        huge = metric.detailed_evaluate(phi * 1e300)
    np.testing.assert_allclose(huge, metric.detailed_evaluate(phi), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(metric.detailed_evaluate(phi * 1e3), huge, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("cls", METRICS)
@pytest.mark.parametrize("n_explanations", [4, 8])
def test_dataset_of_unknown_size_needs_one_explanation_per_input(cls, n_explanations):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(6, 5)).astype(np.float32)
    y = np.eye(3, dtype=np.float32)[rng.integers(0, 3, size=6)]
    phi = rng.normal(size=(8, 5))
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).filter(lambda a, b: True)
    metric = cls(linear_model((5,), outputs=3), dataset, batch_size=4)
    with pytest.raises(ValueError, match="`explanations` must hold one explanation per input"):
        metric(phi[:n_explanations])
