"""A rule set scored with FiRe and Qs from its predictions (:mod:`xplique_ext.rules.scoring`)."""

import numpy as np
import pandas as pd
import pytest

from xplique_ext.rules import load_voyage, parse_rules, predict_rules, score_rules
from xplique_ext.rules.fire import fire_score, qs_score


@pytest.mark.parametrize("mode", ["ordered", "unordered"])
def test_predictive_loss_is_one_minus_the_accuracy_of_the_predictions(mode):
    rules, data = load_voyage(mode)
    score = score_rules(rules, data, psi=2.0, mode=mode)
    predicted = predict_rules(rules, data, mode)
    accuracy = np.mean(predicted == data.labels())
    assert score.task == "classification" and score.n_examples == 15
    assert score.predictive_loss == pytest.approx(1 - accuracy)
    assert score.readability_loss == len(rules) and score.coverage == 1.0


def test_fire_and_qs_are_those_of_the_losses():
    rules, data = load_voyage("ordered")
    score = score_rules(rules, data, psi=2.0)
    p, r = score.predictive_loss, score.readability_loss
    assert score.psi == 2.0
    assert score.fire == fire_score(2.0, p, r)
    assert score.qs == qs_score(p, r, score.coverage)


def test_examples_no_rule_covers_lower_the_coverage_not_the_accuracy():
    _, data = load_voyage("ordered")
    rules = parse_rules("R0001 IF windy = no THEN CLASS = go")
    windy = data.column("windy")
    covered = (windy.decoded() == "no") | windy.unknown  # a test on "?" may hold: it predicts
    labels = data.labels()
    score = score_rules(rules, data)
    assert score.coverage == pytest.approx(covered.mean())
    assert score.predictive_loss == pytest.approx(1 - np.mean(labels[covered] == "go"))


def test_a_data_frame_or_an_array_with_feature_names_scores_the_same():
    rules, data = load_voyage("ordered")
    frame = data.to_frame()
    labels = frame.pop("voyage").to_numpy()
    expected = score_rules(rules, data)
    assert score_rules(rules, frame, labels) == expected
    with pytest.raises(ValueError, match="`feature_names` is needed"):
        score_rules(rules, np.zeros((15, 4)), labels)
    with pytest.raises(TypeError, match=r"`data` must be a Dataset, a DataFrame or an array"):
        score_rules(rules, np.zeros(15), labels)


def test_missing_reference_and_rule_count_are_named():
    rules, data = load_voyage("ordered")
    with pytest.raises(ValueError, match=r"`reference` must have shape \(15,\), got \(3,\)"):
        score_rules(rules, data, np.array(["go", "go", "go"]))
    unlabelled = data.to_frame().drop(columns="voyage")
    with pytest.raises(ValueError, match="`data` has no class column: pass `reference`"):
        score_rules(rules, pd.DataFrame(unlabelled))
    only_default = parse_rules("R0001 DEFAULT CLASS = go")
    with pytest.raises(ValueError, match="pass count_default=True"):
        score_rules(only_default, data)
    assert score_rules(only_default, data, count_default=True).readability_loss == 1
