"""A rule set scored with FiRe and Qs from its predictions (:mod:`xplique_ext.rules.scoring`)."""

import warnings

import numpy as np
import pandas as pd
import pytest

from xplique_ext.commons.warnings import DegenerateSettingWarning
from xplique_ext.rules import RuleSet, load_voyage, parse_rules, predict_rules, score_rules
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


def _classifier_with_float_class_ids():
    """A tree fitted on class ids 0.0, 1.0, 2.0, and a reference where 2 of 30 labels
    are two classes away from the tree's prediction."""
    from sklearn.tree import DecisionTreeClassifier

    rng = np.random.default_rng(0)
    x = rng.normal(size=(30, 2))
    y = np.digitize(x[:, 0], [-0.5, 0.5]).astype(float)
    tree = DecisionTreeClassifier(max_depth=2, random_state=0).fit(x, y)
    reference = tree.predict(x).copy()
    wrong = np.flatnonzero(reference != 1.0)[:2]
    reference[wrong] = 2.0 - reference[wrong]  # 0 <-> 2: an absolute error of 2 each
    return tree, x, reference


def test_a_classifier_with_float_class_ids_is_scored_on_its_accuracy():
    from xplique_ext.rules import tree_to_rules

    tree, x, reference = _classifier_with_float_class_ids()
    rules = tree_to_rules(tree)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the task is declared: nothing to warn about
        score = score_rules(rules, x, reference, feature_names=["x0", "x1"])
    accuracy = np.mean(tree.predict(x) == reference)
    assert score.predictive_loss == pytest.approx(1 - accuracy) == pytest.approx(2 / 30)
    assert score.predictive_loss != pytest.approx(np.mean(np.abs(tree.predict(x) - reference)))
    assert score.task == "classification" and rules.task == "classification"
    frame = pd.DataFrame(x, columns=["x0", "x1"])
    assert score_rules(rules, frame, reference, task="classification") == score
    with pytest.raises(ValueError, match="`task` must be the task the rules declare"):
        score_rules(rules, frame, reference, task="regression")


def test_undeclared_numeric_heads_are_classes_unless_the_task_says_otherwise():
    rules = parse_rules("R0001 IF a <= 1 THEN CLASS = 1.0\nR0002 DEFAULT CLASS = 4")
    assert rules.task is None
    frame = pd.DataFrame({"a": [0.0, 1.0, 2.0, 3.0]})
    reference = np.array([1.0, 1.5, 4.0, 5.0])
    with pytest.warns(DegenerateSettingWarning, match="the rules declare no task"):
        as_classes = score_rules(rules, frame, reference)
    assert as_classes.task == "classification" and as_classes.predictive_loss == 0.5
    regression = score_rules(rules, frame, reference, task="regression")
    assert regression.task == "regression"
    assert regression.predictive_loss == pytest.approx(np.mean([0.0, 0.5, 0.0, 1.0]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # integer labels: classes, nothing ambiguous
        assert score_rules(rules, frame, np.array([1, 4, 4, 4])).predictive_loss == 0.25


def test_the_task_regression_needs_number_heads_and_number_references():
    rules, data = load_voyage("ordered")
    with pytest.raises(ValueError, match="needs rules whose heads are all numbers"):
        score_rules(rules, data, task="regression")
    numeric = parse_rules("R0001 IF a <= 1 THEN CLASS = 1.0\nR0002 DEFAULT CLASS = 4")
    frame = pd.DataFrame({"a": [0.0, 2.0]})
    with pytest.raises(ValueError, match="`reference` must hold numbers for the task"):
        score_rules(numeric, frame, np.array(["low", "high"]), task="regression")
    with pytest.raises(ValueError, match="`task` must be one of"):
        score_rules(rules, data, task="ranking")


def test_an_unordered_vote_must_be_the_task_declared():
    from xplique_ext.rules import Attribute, Dataset, Names

    names = Names([Attribute("a", "real"), Attribute("t", "real")], "t")
    data = Dataset.from_frame(pd.DataFrame({"a": [0.0, 1.0, 2.0], "t": [1.0, 4.0, 4.0]}), names)
    text = "R0001 IF a <= 1 THEN CLASS = 1\nR0002 IF a >= 1 THEN CLASS = 4\nR0003 DEFAULT CLASS = 4"
    classes = RuleSet(list(parse_rules(text).all_rules), task="classification")
    # a numeric class predicts the mean of the heads (2.5 for a = 1): not a class
    with pytest.raises(ValueError, match="here by the mean of the heads"):
        score_rules(classes, data, mode="unordered")
    assert score_rules(classes, data).predictive_loss == pytest.approx(1 / 3)  # ordered
    undeclared = parse_rules(text)
    assert score_rules(undeclared, data, mode="unordered").task == "regression"


def test_score_rules_pairs_a_data_frame_and_a_series_reference_by_index():
    rules, data = load_voyage("ordered")
    frame = data.to_frame()
    labels = frame.pop("voyage")
    expected = score_rules(rules, data)
    assert score_rules(rules, frame, labels) == expected
    with pytest.raises(ValueError, match="`reference` must be indexed as `data`"):
        score_rules(rules, frame, labels[::-1])
    shuffled = frame.sample(frac=1.0, random_state=0)
    assert score_rules(rules, shuffled, labels.reindex(shuffled.index)) == expected
