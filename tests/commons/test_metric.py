"""BaseMetric and nan_aware_mean; and the contract checks of
tests/test_common.py, each shown to fail on a metric that breaks the contract."""

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from tests.test_common import (
    check_detailed_evaluate_shape,
    check_details_has_the_scores,
    check_evaluate_is_float,
    check_evaluate_is_nanmean,
    check_get_config_round_trip,
    check_higher_is_better,
    check_inputs_not_mutated,
    check_same_seed_same_numbers,
    check_summary,
)
from xplique_ext.commons.metric import BaseMetric, nan_aware_mean
from xplique_ext.commons.warnings import UndefinedScoreWarning


class Scale(BaseMetric):
    """|x| * scale per sample; NaN where x is NaN, with a reason."""

    higher_is_better = False

    def __init__(self, scale=1.0, *, offset=0, tags=("a",)):
        self.scale = scale
        self.offset = offset
        self.tags = tags

    def detailed_evaluate(self, x):
        x = np.asarray(x, dtype=np.float64)
        if np.isnan(x).any():
            warnings.warn("x holds NaN", UndefinedScoreWarning, stacklevel=2)
        return self.scale * np.abs(x) + self.offset


def _record(fn, *args, **kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = fn(*args, **kwargs)
    return value, caught


# --------------------------------------------------------------------------- nan_aware_mean


def test_nan_aware_mean_known_answers_and_one_warning():
    value, caught = _record(nan_aware_mean, [1.0, 2.0, 6.0], "M")
    assert value == 3.0 and not caught
    value, caught = _record(nan_aware_mean, [1.0, np.nan, 3.0, np.nan], "M", reason="why")
    assert value == 2.0 and len(caught) == 1
    assert caught[0].category is UndefinedScoreWarning
    assert str(caught[0].message) == (
        "M: 2 of 4 per-sample scores are undefined (NaN) and were skipped in the mean. Reason: why"
    )


def test_nan_aware_mean_all_nan_and_empty():
    value, caught = _record(nan_aware_mean, [np.nan, np.nan], "M")
    assert np.isnan(value) and len(caught) == 1 and "all 2" in str(caught[0].message)
    value, caught = _record(nan_aware_mean, [], "M")
    assert np.isnan(value) and len(caught) == 1


def test_nan_aware_mean_does_not_overflow_when_the_mean_is_finite():
    value, caught = _record(nan_aware_mean, [1.5e308, 1.5e308, np.nan], "M")
    assert value == pytest.approx(1.5e308) and len(caught) == 1
    assert not any(w.category is RuntimeWarning for w in caught)
    assert nan_aware_mean([np.inf, 1.0], "M") == np.inf  # a real infinity stays


# --------------------------------------------------------------------------- BaseMetric


def test_base_metric_is_abstract():
    class NoScores(BaseMetric):
        higher_is_better = True

    with pytest.raises(TypeError, match="abstract"):
        NoScores()


def test_evaluate_call_and_details():
    metric = Scale(2.0)
    assert metric.evaluate([1.0, -2.0]) == 3.0 == metric([1.0, -2.0])
    table = metric.details([1.0, -2.0])
    assert isinstance(table, pd.DataFrame) and list(table.columns) == ["score"]
    assert table["score"].tolist() == [2.0, 4.0]


def test_evaluate_folds_the_reason_into_one_warning():
    value, caught = _record(Scale().evaluate, [1.0, np.nan, -3.0])
    assert value == 2.0
    assert [w.category for w in caught] == [UndefinedScoreWarning]
    message = str(caught[0].message)
    assert message.startswith("Scale: 1 of 3 per-sample scores are undefined")
    assert message.endswith("Reason: x holds NaN")


def test_evaluate_uses_the_declared_reason_and_passes_other_warnings_on():
    class Noisy(BaseMetric):
        higher_is_better = True
        undefined_reason = "declared reason"

        def detailed_evaluate(self, x):
            warnings.warn("unrelated", RuntimeWarning, stacklevel=2)
            return np.asarray(x, dtype=float)

    value, caught = _record(Noisy().evaluate, [1.0, np.nan])
    assert value == 1.0
    assert sorted(w.category.__name__ for w in caught) == [
        "RuntimeWarning",
        "UndefinedScoreWarning",
    ]
    undefined = [w for w in caught if w.category is UndefinedScoreWarning][0]
    assert str(undefined.message).endswith("Reason: declared reason")


def test_evaluate_warns_once_when_detailed_evaluate_warned_without_nan():
    class Replaced(BaseMetric):
        higher_is_better = True

        def detailed_evaluate(self, x):
            warnings.warn(
                "2 scores were undefined and set to 0", UndefinedScoreWarning, stacklevel=2
            )
            return np.asarray(x, dtype=float)

    value, caught = _record(Replaced().evaluate, [0.0, 0.0, 3.0])
    assert value == 1.0 and len(caught) == 1
    assert str(caught[0].message) == "Replaced: 2 scores were undefined and set to 0"


def test_get_config_from_config_and_repr():
    metric = Scale(2.0, offset=np.int64(1), tags=("a", "b"))
    config = metric.get_config()
    assert config == {"scale": 2.0, "offset": 1, "tags": ["a", "b"]}
    assert json.loads(json.dumps(config)) == config
    assert type(config["offset"]) is int
    clone = Scale.from_config(config)
    assert clone.get_config() == config and clone([1.0]) == metric([1.0])
    assert repr(metric) == "Scale(scale=2.0, offset=1, tags=['a', 'b'])"
    assert repr(Scale()) == "Scale()"  # only the settings that differ from the defaults


def test_data_params_are_left_out_and_given_back():
    class OnData(BaseMetric):
        higher_is_better = True
        _data_params = ("inputs",)

        def __init__(self, inputs, power=1):
            self.inputs = np.asarray(inputs)
            self.power = power

        def detailed_evaluate(self, weights):
            return (self.inputs * np.asarray(weights)) ** self.power

    metric = OnData(np.arange(3.0), power=2)
    assert metric.get_config() == {"power": 2}
    assert repr(metric) == "OnData(power=2)"
    clone = OnData.from_config(metric.get_config(), inputs=np.arange(3.0))
    np.testing.assert_array_equal(clone.detailed_evaluate(2.0), [0.0, 4.0, 16.0])
    with pytest.raises(ValueError, match="both give"):
        OnData.from_config({"power": 2, "inputs": [1.0]}, inputs=[1.0])
    with pytest.raises(TypeError, match="`config` must be a dict"):
        OnData.from_config([("power", 2)], inputs=[1.0])


def test_config_attributes_map_a_setting_stored_under_another_name():
    class Renamed(BaseMetric):
        higher_is_better = True
        _config_attributes = {"mode": "mode_name"}

        def __init__(self, mode="all"):
            self.mode_name = mode
            self.mode = ["computed", "state"]  # the attribute name is taken

        def detailed_evaluate(self, x):
            return np.asarray(x, dtype=float)

    metric = Renamed("first")
    assert metric.get_config() == {"mode": "first"}
    assert repr(metric) == "Renamed(mode='first')" and repr(Renamed()) == "Renamed()"
    assert Renamed.from_config(metric.get_config()).mode_name == "first"


def test_get_config_names_a_setting_that_is_not_json_friendly():
    metric = Scale(scale=lambda x: x)
    with pytest.raises(TypeError, match=r"Scale.get_config: the setting `scale` must be"):
        metric.get_config()


# --------------------------------------------------------------------------- the checks fail


def test_check_higher_is_better_fails_when_it_is_forgotten():
    class Forgetful(BaseMetric):
        def detailed_evaluate(self, x):
            return np.asarray(x, dtype=float)

    with pytest.raises(AssertionError, match="must be declared"):
        check_higher_is_better(Forgetful())

    class Stringly(Forgetful):
        higher_is_better = "yes"

    with pytest.raises(AssertionError, match="must be declared"):
        check_higher_is_better(Stringly())
    check_higher_is_better(Scale())


def test_check_shape_fails_on_a_list_or_a_wrong_shape():
    class AsList(Scale):
        def detailed_evaluate(self, x):
            return list(super().detailed_evaluate(x))

    with pytest.raises(AssertionError, match="returned list"):
        check_detailed_evaluate_shape(AsList(), ([1.0, 2.0],), 2)
    with pytest.raises(AssertionError, match="shape"):
        check_detailed_evaluate_shape(Scale(), ([[1.0, 2.0]],), 2)
    check_detailed_evaluate_shape(Scale(), ([1.0, 2.0],), 2)


def test_check_evaluate_is_float_fails_on_an_array():
    class ArrayEvaluate(Scale):
        def evaluate(self, x):
            return self.detailed_evaluate(x)

        __call__ = evaluate

    with pytest.raises(AssertionError, match="evaluate returned ndarray"):
        check_evaluate_is_float(ArrayEvaluate(), ([1.0, 2.0],))


def test_check_nanmean_fails_on_two_warnings_or_a_wrong_mean():
    class TwoWarnings(Scale):
        def evaluate(self, x):
            scores = self.detailed_evaluate(x)  # warns
            return nan_aware_mean(scores, "TwoWarnings")  # warns again

    with pytest.raises(AssertionError, match="2 UndefinedScoreWarning"):
        check_evaluate_is_nanmean(TwoWarnings(), ([1.0, np.nan],), expect_nan=True)

    class NanAsZero(Scale):
        def evaluate(self, x):
            return float(np.nan_to_num(self.detailed_evaluate(x)).mean())

    with pytest.raises(AssertionError):
        check_evaluate_is_nanmean(NanAsZero(), ([1.0, np.nan],), expect_nan=True)
    check_evaluate_is_nanmean(Scale(), ([1.0, np.nan],), expect_nan=True)


def test_check_seed_fails_on_unseeded_randomness():
    class Unseeded(Scale):
        def detailed_evaluate(self, x):
            return np.random.default_rng().random(len(x))

    with pytest.raises(AssertionError):
        check_same_seed_same_numbers(lambda seed: Unseeded(), ([1.0, 2.0],))


def test_check_mutation_fails_when_inputs_change():
    class Mutating(Scale):
        def detailed_evaluate(self, x):
            x *= 2.0
            return np.abs(x)

    with pytest.raises(AssertionError):
        check_inputs_not_mutated(lambda seed: Mutating(), (np.array([1.0, 2.0]),), {})


def test_check_round_trip_fails_when_a_setting_is_lost():
    class Lossy(Scale):
        def get_config(self):
            return {}

    with pytest.raises(AssertionError):
        check_get_config_round_trip(Lossy(3.0), ([1.0],), {})


def test_check_details_fails_without_the_score_column():
    class Renamed(Scale):
        def details(self, x):
            return super().details(x).rename(columns={"score": "value"})

    with pytest.raises(AssertionError, match="no `score` column"):
        check_details_has_the_scores(Renamed(), ([1.0, 2.0],))
    check_details_has_the_scores(Scale(), ([1.0, np.nan],))


def test_check_summary_fails_on_a_wrong_mean_count_or_unseeded_interval():
    from xplique_ext.commons.uncertainty import ScoreSummary

    class WrongMean(Scale):
        def summary(self, *args, **kwargs):
            s = super().summary(*args, **kwargs)
            return ScoreSummary(
                s.mean + 1,
                s.std_error,
                s.ci_low,
                s.ci_high,
                s.confidence,
                s.n,
                s.n_undefined,
                s.method,
            )

    class NoUndefined(Scale):
        def summary(self, *args, **kwargs):
            s = super().summary(*args, **kwargs)
            return ScoreSummary(
                s.mean,
                s.std_error,
                s.ci_low,
                s.ci_high,
                s.confidence,
                s.n + s.n_undefined,
                0,
                s.method,
            )

    class Unseeded(Scale):
        def summary(self, *args, **kwargs):
            kwargs["seed"] = int(np.random.default_rng().integers(1 << 30))
            return super().summary(*args, **kwargs)

    args = ([1.0, 2.0, 5.0, np.nan],)
    for broken in (WrongMean(), NoUndefined(), Unseeded()):
        with pytest.raises(AssertionError):
            check_summary(broken, args, 4)
    check_summary(Scale(), args, 4)


# --------------------------------------------------------------------------- data ownership


class Keeps(BaseMetric):
    """Keeps what it is given, as a metric's constructor does: a view of ``inputs``, a
    converted ``weights``, the caller's list of ``labels``, a dict of arrays and
    ``extra`` (a tensor or a dataset) as it is."""

    higher_is_better = True
    _data_params = ("inputs", "weights", "labels", "extra")

    def __init__(self, inputs, weights, labels, extra=None):
        self.inputs = inputs
        self.first = inputs  # the same array under a second name
        self.weights = np.asarray(weights, dtype=np.float64)  # a new array: float32 given
        self.labels = labels
        self.parts = {"head": inputs[:1]}
        self.extra = extra

    def detailed_evaluate(self):
        return (self.inputs * self.weights).sum(axis=1) + self.parts["head"].sum()


def test_a_metric_owns_the_arrays_it_keeps():
    x = np.arange(6.0).reshape(2, 3)
    w = np.ones(3, np.float32)
    labels = ["a", "b"]
    metric = Keeps(x, w, labels)
    before = metric.detailed_evaluate()
    x[...] = -1.0  # the caller overwrites its arrays and list after construction
    w[...] = 9.0
    labels.reverse()
    np.testing.assert_array_equal(metric.detailed_evaluate(), before)
    assert metric.labels == ["a", "b"]
    assert not np.shares_memory(metric.inputs, x)
    assert metric.first is metric.inputs  # one copy for an array kept under two names
    for array in (metric.inputs, metric.weights, metric.parts["head"]):
        assert not array.flags.writeable  # the library cannot write to it either
    with pytest.raises(ValueError, match="read-only"):
        metric.inputs[0, 0] = 5.0


def test_a_converted_array_is_not_copied_again():
    class Remembers(Keeps):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.converted = self.weights  # the constructor's own array (float32 -> float64)
            self.converted_id = id(self.weights)

    metric = Remembers(np.ones((2, 3)), np.ones(3, np.float32), [])
    assert id(metric.weights) == metric.converted_id  # kept, not copied a second time
    assert not metric.weights.flags.writeable


def test_tensors_and_datasets_are_kept_as_they_are():
    import tensorflow as tf

    x = np.ones((2, 3))
    tensor = tf.constant([1.0, 2.0])
    assert Keeps(x, [1.0, 1.0, 1.0], [], extra=tensor).extra is tensor  # immutable
    dataset = tf.data.Dataset.from_tensor_slices(x)
    assert Keeps(x, [1.0, 1.0, 1.0], [], extra=dataset).extra is dataset  # streamed


def test_check_later_writes_and_read_only_fail_on_a_metric_that_keeps_a_view():
    from tests.test_common import check_kept_arrays_are_read_only, check_scores_ignore_later_writes

    class KeepsAView:  # not a BaseMetric: nothing makes it own its data
        def __init__(self, inputs):
            self.inputs = inputs

        def detailed_evaluate(self):
            return self.inputs.sum(axis=1)

    x = np.ones((2, 3))
    with pytest.raises(AssertionError, match="read-only|writable"):
        check_kept_arrays_are_read_only(KeepsAView(x))
    with pytest.raises(AssertionError, match=r"overwriting the caller's \['inputs'\]"):
        check_scores_ignore_later_writes(lambda seed: KeepsAView(x), (), {"inputs": x})
    y = np.ones((2, 3))
    check_scores_ignore_later_writes(lambda seed: Keeps(y, [1.0] * 3, []), (), {"inputs": y})
    check_kept_arrays_are_read_only(Keeps(y, [1.0] * 3, []))


def test_check_any_order_fails_when_a_score_depends_on_the_others_or_the_position():
    from tests.test_common import check_scores_per_unit_in_any_order

    x = np.array([1.0, 4.0, 2.0, 8.0])

    def centred(indices, seed):  # x - mean(x): depends on the other inputs
        return Scale(), (x[indices] - x[indices].mean(),)

    def by_position(indices, seed):  # the position, not the input
        return Scale(), (np.arange(len(indices), dtype=float),)

    for make_on in (centred, by_position):
        with pytest.raises(AssertionError, match="differ from the full run"):
            check_scores_per_unit_in_any_order(make_on, len(x), tolerance=0.0)
    check_scores_per_unit_in_any_order(lambda i, seed: (Scale(), (x[i],)), len(x), 0.0)
