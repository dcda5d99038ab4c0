"""The declared direction of a score, read by every sort, rank and ``better``
(:mod:`xplique_ext.commons.direction`), for every exported metric and measure."""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest

import xplique_ext.metrics as metrics
from xplique_ext.commons.direction import (
    declared_direction,
    direction_word,
    order_best_first,
    rank_best_first,
)
from xplique_ext.compare import compare
from xplique_ext.metrics import GroundTruthMeasure, ground_truth_leaderboard
from xplique_ext.metrics.ground_truth_measures import DECLARATIONS


def test_order_best_first_reads_the_direction_and_puts_undefined_values_last():
    values = [0.2, np.nan, 0.9, 0.5, np.inf, 0.5]
    assert order_best_first(values, higher_is_better=True).tolist() == [2, 3, 5, 0, 1, 4]
    assert order_best_first(values, higher_is_better=False).tolist() == [0, 3, 5, 2, 1, 4]


def test_rank_best_first_shares_the_smaller_rank_and_leaves_undefined_values_unranked():
    values = [0.2, np.nan, 0.9, 0.5, -np.inf, 0.5]
    np.testing.assert_array_equal(
        rank_best_first(values, higher_is_better=True), [4, np.nan, 1, 2, np.nan, 2]
    )
    np.testing.assert_array_equal(
        rank_best_first(values, higher_is_better=False), [1, np.nan, 4, 2, np.nan, 2]
    )
    assert rank_best_first([], higher_is_better=True).shape == (0,)


def test_declared_direction_refuses_an_object_that_declares_none():
    class Declares:
        higher_is_better = False

    assert declared_direction(Declares) is False
    assert declared_direction(Declares()) is False
    assert declared_direction(GroundTruthMeasure("pointing_game")) is True
    with pytest.raises(TypeError, match="must declare a bool `higher_is_better`"):
        declared_direction(object())
    with pytest.raises(TypeError, match="higher_is_better='yes'"):
        declared_direction(type("Text", (), {"higher_is_better": "yes"}))
    assert direction_word(True) == "higher" and direction_word(False) == "lower"


def _exported_metric_classes():
    """Every class exported by xplique_ext.metrics that declares a bool direction."""
    classes = []
    for name in metrics.__all__:
        value = getattr(metrics, name)
        declared = getattr(value, "higher_is_better", None)
        if inspect.isclass(value) and isinstance(declared, bool):
            classes.append(value)
    return classes


EXPORTED_METRICS = _exported_metric_classes()


def test_the_walk_finds_every_metric_family():
    names = {cls.__name__ for cls in EXPORTED_METRICS}
    assert {"MuFidelity", "FiRe", "QsScore", "PERCY", "RuleMetrics"} <= names
    assert {"GroundTruthSaliency", "GroundTruthLocalisation", "LocalLipschitzEstimate"} <= names


@pytest.mark.parametrize("metric_class", EXPORTED_METRICS, ids=lambda cls: cls.__name__)
def test_compare_ranks_and_better_read_each_metric_class_declaration(metric_class):
    # an instance of the class itself, whose per-input scores are its explanations
    metric = metric_class.__new__(metric_class)
    metric.detailed_evaluate = lambda explanations: np.asarray(explanations, dtype=float)
    metric._is_proportion = lambda: False
    base = np.linspace(0.0, 1.0, 12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = compare(metric, {"smaller": base, "larger": base + 1.0}, n_resamples=100)
    best = "smaller"
    if metric_class.higher_is_better:
        best = "larger"
    assert table.explainers.index[0] == best
    assert table.explainers.loc[best, "rank"] == 1
    assert table.pairs["better"].iloc[0] == best
    assert table.higher_is_better is metric_class.higher_is_better
    values = [1.0, 2.0]  # smaller, larger
    expected_first = int(metric_class.higher_is_better)
    assert order_best_first(values, declared_direction(metric_class))[0] == expected_first
    assert rank_best_first(values, declared_direction(metric_class))[expected_first] == 1


def _maps_for(reference: str):
    """A reference (ground truth or masks), an explanation equal to it, and one whose
    relevance lies far from it: the exact one is the best in any measure."""
    truth = np.zeros((12, 8, 8))
    truth[:, 1:3, 1:3] = 1.0
    truth[np.arange(12), 1, 1] += np.linspace(0.1, 0.5, 12)  # maps differ image to image
    far = np.zeros_like(truth)
    far[:, 6:8, 5:8] = 1.0
    far[np.arange(12), 7, 7] += np.linspace(0.1, 0.5, 12)
    if reference == "masks":
        return truth > 0, truth, far
    return truth, truth, far


@pytest.mark.parametrize("name", sorted(DECLARATIONS))
def test_the_leaderboard_and_its_comparisons_read_each_measure_declaration(name):
    measure = GroundTruthMeasure(name)
    reference, exact, far = _maps_for(measure.reference)
    masks = None
    if measure.reference == "masks":
        masks = reference
    table, per_sample = ground_truth_leaderboard(
        {"far": far, "exact": exact}, exact, masks=masks, measures=[measure], seed=0
    )
    assert list(table.index) == ["exact", "far"]
    comparison = table.attrs["comparisons"][measure.label]
    assert comparison.higher_is_better is measure.higher_is_better
    assert comparison.explainers["rank"].to_dict() == {"exact": 1.0, "far": 2.0}
    assert comparison.pairs["better"].iloc[0] == "exact"
    direction = direction_word(measure.higher_is_better)
    assert f"{measure.label} ({direction} is better)" in table.columns
    # the declaration agrees with what the measure computes: exact beats far
    means = [np.mean(per_sample[measure.label][k]) for k in ("far", "exact")]
    assert order_best_first(means, measure.higher_is_better)[0] == 1
