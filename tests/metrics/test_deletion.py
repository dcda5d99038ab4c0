"""Tests of metrics/deletion.py: Deletion and Insertion (Xplique's CausalFidelity)."""

import numpy as np
import pytest
import tensorflow as tf

from tests.common_case import Case
from tests.conftest import linear_model, tiny_cnn
from xplique_ext.commons.warnings import DegenerateSettingWarning, UndefinedScoreWarning
from xplique_ext.metrics import Deletion, Insertion
from xplique_ext.metrics.deletion import CausalFidelity

METRICS = (Deletion, Insertion)


def _sum_model(shape):
    """f(x) = sum(x), float64: its outputs do not depend on the batch."""
    import keras

    return keras.Sequential(
        [
            keras.Input(shape, dtype="float64"),
            keras.layers.Flatten(dtype="float64"),
            keras.layers.Dense(1, use_bias=False, kernel_initializer="ones", dtype="float64"),
        ]
    )


def _common_case(cls):
    def build():
        rng = np.random.default_rng(0)
        x = rng.normal(size=(4, 4, 4, 1)).astype(np.float32)
        phi = rng.normal(size=(4, 4, 4)).astype(np.float32)
        model = linear_model((4, 4, 1))
        options = dict(steps=4, batch_size=3)

        def nan():
            constant = phi.copy()
            constant[1] = 0.5  # a constant explanation ranks nothing
            return cls(model, x, **options), (constant,)

        return Case(
            cls,
            lambda seed: cls(model, x, **options),
            (phi,),
            4,
            data={"model": model, "inputs": x},
            nan=nan,
            model_based=True,
        )

    return build


COMMON_CASES = {"Deletion": _common_case(Deletion), "Insertion": _common_case(Insertion)}


# --------------------------------------------------------------------- known answers
def test_sum_model_with_phi_x_gives_the_ideal_curves():
    # f = sum(x), phi = x = (4, 3, 2, 1): deleting the largest first leaves 10, 6, 3, 1, 0;
    # inserting them first gives 0, 4, 7, 9, 10
    x = np.array([[4.0, 3.0, 2.0, 1.0]])
    model = _sum_model((4,))
    deletion = Deletion(model, x, np.ones(1), steps=4).details(x)
    insertion = Insertion(model, x, np.ones(1), steps=4).details(x)
    curve = [f"curve_{k}" for k in range(5)]
    np.testing.assert_array_equal(deletion[curve].to_numpy()[0], [10, 6, 3, 1, 0])
    np.testing.assert_array_equal(insertion[curve].to_numpy()[0], [0, 4, 7, 9, 10])
    # trapezoids over 4 equal steps: (8 + 4.5 + 2 + 0.5) / 4 and (2 + 5.5 + 8 + 9.5) / 4
    assert deletion["score"][0] == 3.75
    assert insertion["score"][0] == 6.25


def test_image_pixels_are_removed_with_all_their_channels():
    # 2x2 pixels of 2 channels; the map ranks pixels: 10 (both channels) first
    x = np.array([[[[1.0, 9.0], [2.0, 0.0]], [[0.5, 0.5], [3.0, 3.0]]]])  # (1, 2, 2, 2)
    phi = np.array([[[10.0, 2.0], [1.0, 5.0]]])  # pixel order: (0,0), (1,1), (0,1), (1,0)
    model = _sum_model((2, 2, 2))
    details = Deletion(model, x, np.ones(1), steps=-1).details(phi)
    # sums: 19, minus 10, minus 6, minus 2, minus 1
    curve = details[[f"curve_{k}" for k in range(5)]].to_numpy()[0]
    np.testing.assert_array_equal(curve, [19, 9, 3, 1, 0])


def test_max_percentage_perturbed_stops_the_path():
    x = np.array([[4.0, 3.0, 2.0, 1.0]])
    metric = Deletion(_sum_model((4,)), x, np.ones(1), steps=2, max_percentage_perturbed=0.5)
    np.testing.assert_array_equal(metric.perturbed_counts_, [0, 1, 2])
    curve = metric.details(x)[["curve_0", "curve_1", "curve_2"]].to_numpy()[0]
    np.testing.assert_array_equal(curve, [10, 6, 3])


def test_callable_baseline_is_applied_to_the_batch():
    x = np.array([[4.0, 3.0, 2.0, 1.0], [1.0, 1.0, 1.0, 1.0]])
    model = _sum_model((4,))
    metric = Deletion(model, x, np.ones(2), steps=4, baseline_mode=lambda v: v - 1.0)
    curve = metric.details(np.array([[4.0, 3.0, 2.0, 1.0]] * 2))
    np.testing.assert_array_equal(curve["curve_4"], [6.0, 0.0])  # every feature minus 1


def test_direction_follows_the_path():
    assert Deletion.higher_is_better is False
    assert Insertion.higher_is_better is True
    x = np.ones((1, 4))
    assert CausalFidelity(_sum_model((4,)), x, causal_mode="insertion", steps=2).higher_is_better


# --------------------------------------------------------------------- Xplique
XPLIQUE_SETTINGS = [
    ("images, channel maps", (6, 12, 12, 3), (6, 12, 12, 3), dict(steps=10)),
    ("images, maps", (6, 12, 12, 3), (6, 12, 12), dict(steps=7, baseline_mode=0.3)),
    ("all steps, half", (6, 6, 6, 3), (6, 6, 6), dict(steps=-1, max_percentage_perturbed=0.5)),
    ("callable baseline", (6, 12, 12, 3), (6, 12, 12), dict(baseline_mode=lambda v: v - 0.5)),
]


@pytest.mark.parametrize("cls_name", ["Deletion", "Insertion"])
@pytest.mark.parametrize("label, x_shape, phi_shape, options", XPLIQUE_SETTINGS)
def test_scores_equal_xplique(cls_name, label, x_shape, phi_shape, options):
    xplique_metrics = pytest.importorskip("xplique.metrics")
    rng = np.random.default_rng(1)
    x = rng.random(x_shape, dtype=np.float32)
    y = np.eye(3, dtype=np.float32)[rng.integers(0, 3, len(x))]
    phi = rng.normal(size=phi_shape).astype(np.float32)
    model = tiny_cnn(x_shape[1:], classes=3, seed=1)
    theirs = getattr(xplique_metrics, cls_name)(model, x, y, batch_size=4, **options)(phi)
    ours = globals()[cls_name](model, x, y, batch_size=4, **options)(phi)
    np.testing.assert_allclose(ours, theirs, atol=1e-5)


@pytest.mark.parametrize("shape", [(5, 16), (5, 8, 3)], ids=["tabular", "time series"])
def test_tabular_and_series_scores_equal_xplique(shape):
    xplique_metrics = pytest.importorskip("xplique.metrics")
    rng = np.random.default_rng(2)
    x = rng.random(shape, dtype=np.float32)
    phi = rng.normal(size=shape).astype(np.float32)
    model = linear_model(shape[1:], weights=rng.normal(size=int(np.prod(shape[1:]))))
    y = np.ones((len(x), 1), np.float32)
    for cls in METRICS:
        theirs = getattr(xplique_metrics, cls.__name__)(model, x, y, steps=5)(phi)
        np.testing.assert_allclose(cls(model, x, y, steps=5)(phi), theirs, atol=1e-5)


def test_repeated_points_are_merged_as_xplique_merges_them():
    xplique_metrics = pytest.importorskip("xplique.metrics")
    x = np.random.default_rng(3).random((3, 4), dtype=np.float32)
    phi = np.random.default_rng(4).normal(size=(3, 4))
    model = linear_model((4,))
    with pytest.warns(DegenerateSettingWarning, match="`steps`=10 exceeds the 4 features"):
        metric = Deletion(model, x, np.ones(3), steps=10)
    np.testing.assert_array_equal(metric.perturbed_counts_, [0, 1, 2, 3, 4])
    theirs = xplique_metrics.Deletion(model, x, np.ones((3, 1)), steps=10)(phi)
    np.testing.assert_allclose(metric(phi), theirs, atol=1e-5)


def test_xplique_operators_reach_the_targets_in_the_model_dtype():
    xplique = pytest.importorskip("xplique")
    from xplique.commons.operators import predictions_operator

    rng = np.random.default_rng(5)
    x = rng.random((4, 8, 8, 3), dtype=np.float32)
    y = np.eye(3)[rng.integers(0, 3, 4)]  # float64 targets
    phi = rng.normal(size=(4, 8, 8))
    model = tiny_cnn((8, 8, 3), classes=3)
    reference = Deletion(model, x, y, steps=4)(phi)
    for operator in (xplique.Tasks.CLASSIFICATION, predictions_operator, "classification"):
        np.testing.assert_allclose(
            Deletion(model, x, y, steps=4, operator=operator)(phi), reference
        )


# --------------------------------------------------------------------- invariances
@pytest.mark.parametrize("cls", METRICS)
def test_same_scores_whatever_the_batching_and_input_type(cls):
    rng = np.random.default_rng(6)
    x = rng.integers(0, 10, size=(7, 5, 5, 2)).astype(np.float64)  # exact sums in any order
    phi = rng.normal(size=(7, 5, 5))
    y = np.ones(7)
    model = _sum_model((5, 5, 2))
    reference = cls(model, x, y, steps=6, batch_size=None).detailed_evaluate(phi)
    for batch_size in (1, 3, 64):
        out = cls(model, x, y, steps=6, batch_size=batch_size).detailed_evaluate(phi)
        np.testing.assert_array_equal(out, reference)
    tensor = cls(model, tf.constant(x), y, steps=6).detailed_evaluate(tf.constant(phi))
    np.testing.assert_array_equal(tensor, reference)
    dataset = tf.data.Dataset.from_tensor_slices((x, y[:, None])).batch(2)
    np.testing.assert_array_equal(cls(model, dataset, steps=6).detailed_evaluate(phi), reference)
    order = rng.permutation(7)
    shuffled = cls(model, x[order], y, steps=6).detailed_evaluate(phi[order])
    np.testing.assert_array_equal(shuffled, reference[order])


def test_float32_model_agrees_across_batch_sizes(case):
    model, x, y, phi = case
    reference = Deletion(model, x, y, batch_size=None).detailed_evaluate(phi)
    out = Deletion(model, x, y, batch_size=4).detailed_evaluate(phi)
    np.testing.assert_allclose(out, reference, atol=256 * np.finfo(np.float32).eps)


def test_inputs_and_explanations_are_not_modified():
    x = np.random.default_rng(7).random((3, 4))
    phi = np.random.default_rng(8).normal(size=(3, 4))
    x_copy = x.copy()
    phi_copy = phi.copy()
    Insertion(_sum_model((4,)), x, np.ones(3), steps=4, baseline_mode=lambda v: v * 0 + 1)(phi)
    np.testing.assert_array_equal(x, x_copy)
    np.testing.assert_array_equal(phi, phi_copy)


def test_ties_are_taken_in_decreasing_index_order():
    x = np.array([[1.0, 2.0, 3.0, 4.0]])
    phi = np.array([[1.0, 1.0, 0.0, 1.0]])  # features 3, 1, 0 tie: 3 first, then 1, 0
    curve = Deletion(_sum_model((4,)), x, np.ones(1), steps=-1).details(phi)
    np.testing.assert_array_equal(curve.iloc[0, 1:].to_numpy(), [10, 6, 4, 3, 0])


# --------------------------------------------------------------------- undefined scores
@pytest.mark.parametrize("cls", METRICS)
def test_constant_explanation_is_nan_with_its_reason(cls):
    x = np.random.default_rng(9).random((3, 4))
    phi = np.random.default_rng(10).normal(size=(3, 4))
    phi[1] = 2.0
    with pytest.warns(UndefinedScoreWarning, match="1 of 3: a constant explanation"):
        scores = cls(_sum_model((4,)), x, np.ones(3), steps=4).detailed_evaluate(phi)
    assert np.isnan(scores[1]) and np.isfinite(scores[[0, 2]]).all()
    with pytest.warns(UndefinedScoreWarning, match="order of its features is undefined"):
        value = cls(_sum_model((4,)), x, np.ones(3), steps=4).evaluate(phi)
    assert value == pytest.approx(np.nanmean(scores))


def test_non_finite_model_scores_are_nan_with_their_reason():
    def model(v):
        return tf.where(tf.reduce_sum(v, axis=1, keepdims=True) < 1.0, np.inf, 1.0)

    x = np.array([[1.0, 1.0], [0.2, 0.2]])
    phi = np.array([[1.0, 0.0], [1.0, 0.0]])
    with pytest.warns(UndefinedScoreWarning, match="2 of 2: non-finite model scores"):
        scores = Deletion(model, x, np.ones(2), steps=2).detailed_evaluate(phi)
    assert np.isnan(scores).all()


# --------------------------------------------------------------------- errors
@pytest.mark.parametrize(
    "options, error, match",
    [
        (dict(steps=0), ValueError, "`steps`"),
        (dict(steps=-2), ValueError, "`steps`"),
        (dict(steps=2.5), ValueError, "`steps` must be an integer"),
        (dict(max_percentage_perturbed=0.0), ValueError, "`max_percentage_perturbed`"),
        (dict(max_percentage_perturbed=1.5), ValueError, "`max_percentage_perturbed`"),
        (dict(max_percentage_perturbed=0.1), ValueError, "perturb at least one of the 4"),
        (dict(baseline_mode="zero"), TypeError, "`baseline_mode`"),
        (dict(seed=0), TypeError, "seed"),
    ],
)
def test_invalid_settings_are_refused(options, error, match):
    with pytest.raises(error, match=match):
        Deletion(_sum_model((4,)), np.ones((2, 4)), np.ones(2), **options)


def test_invalid_causal_mode_is_refused():
    with pytest.raises(ValueError, match="`causal_mode`"):
        CausalFidelity(_sum_model((4,)), np.ones((2, 4)), causal_mode="both")


def test_explanations_must_match_the_inputs():
    metric = Deletion(tiny_cnn((6, 6, 3)), np.ones((2, 6, 6, 3), np.float32), np.zeros(2, int))
    with pytest.raises(ValueError, match="one explanation per input: got 3"):
        metric(np.ones((3, 6, 6)))
    with pytest.raises(ValueError, match="per-input shapes"):
        metric(np.ones((2, 5, 6)))
    with pytest.raises(ValueError, match="`explanations`"):
        metric(np.full((2, 6, 6), np.nan))


def test_callable_baseline_must_keep_the_shape():
    metric = Deletion(
        _sum_model((4,)), np.ones((2, 4)), np.ones(2), steps=2, baseline_mode=lambda v: v[:1]
    )
    with pytest.raises(ValueError, match="`baseline_mode` callable must return"):
        metric(np.random.default_rng(0).normal(size=(2, 4)))


# --------------------------------------------------------------------- configuration
def _tabular_case():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(6, 5)).astype(np.float32)
    y = np.eye(3, dtype=np.float32)[rng.integers(0, 3, size=6)]
    phi = rng.normal(size=(6, 5)).astype(np.float32)
    return linear_model((5,), outputs=3), x, y, phi


@pytest.mark.parametrize("cls", METRICS)
def test_get_config_refuses_a_callable_operator_rather_than_drop_it(cls):
    model, x, y, _ = _tabular_case()

    def squared(f, inputs, targets):
        return tf.reduce_sum(f(inputs) * targets, -1) ** 2

    metric = cls(model, x, y, operator=squared, steps=-1)
    with pytest.raises(TypeError, match="`operator`"):
        metric.get_config()
    assert "operator=" in repr(metric)


@pytest.mark.parametrize("cls", METRICS)
def test_get_config_saves_an_operator_task_name(cls):
    model, x, y, phi = _tabular_case()
    metric = cls(model, x, y, operator="regression", steps=-1)
    config = metric.get_config()
    assert config["operator"] == "regression"
    rebuilt = cls.from_config(config, model=model, inputs=x, targets=y)
    assert rebuilt.get_config() == config
    assert rebuilt(phi) == metric(phi)
    assert "operator='regression'" in repr(metric)


# --------------------------------------------------------------------- operator
@pytest.mark.parametrize("cls", METRICS)
def test_operator_returning_one_score_per_output_is_refused(cls):
    model, x, y, phi = _tabular_case()
    metric = cls(model, x, y, operator=lambda f, a, b: f(a), steps=-1)
    with pytest.raises(
        ValueError,
        match=r"`operator` must return one output per input of shape \(B,\) or \(B, 1\)",
    ):
        metric(phi)


@pytest.mark.parametrize("cls", METRICS)
def test_operator_returning_a_scalar_is_refused(cls):
    model, x, y, phi = _tabular_case()
    metric = cls(model, x, y, operator=lambda f, a, b: tf.reduce_sum(f(a) * b), steps=-1)
    with pytest.raises(ValueError, match=r"`operator` must return one output per input"):
        metric(phi)


# --------------------------------------------------------------------- datasets
@pytest.mark.parametrize("cls", METRICS)
@pytest.mark.parametrize("n_explanations", [4, 8])
def test_dataset_of_unknown_size_needs_one_explanation_per_input(cls, n_explanations):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(6, 4, 4, 1)).astype(np.float32)
    y = np.eye(2, dtype=np.float32)[rng.integers(0, 2, size=6)]
    phi = rng.normal(size=(8, 4, 4)).astype(np.float32)
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).filter(lambda a, b: True)
    metric = cls(linear_model((4, 4, 1), outputs=2), dataset, steps=4)
    with pytest.raises(ValueError, match="`explanations` must hold one explanation per input"):
        metric(phi[:n_explanations])
