"""Rule learners' models as rule sets (:mod:`xplique_ext.rules.learners`, the
[rulelearners] extra): RIPPER from wittgenstein, greedy rule lists and OneR from imodels,
on scikit-learn's real tables.

The oracle of every count is independent of our evaluator: the learner's own coverage
(wittgenstein's ``Rule.covers`` on its own discretisation) or plain pandas/NumPy masks over
the data, and the learner's own ``predict``."""

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_breast_cancer, load_iris, load_wine

from xplique_ext.rules import (
    Dataset,
    RuleParseError,
    evaluate_rules,
    predict_rules,
    score_rules,
)
from xplique_ext.rules.learners import ripper_to_rules, rule_list_to_rules

# wittgenstein 0.3 calls a pandas API that pandas 3 deprecates (third party, not ours)
pytestmark = pytest.mark.filterwarnings("ignore:For backward compatibility, 'str' dtypes")


lw = pytest.importorskip("wittgenstein", reason="the [rulelearners] extra")


imodels = pytest.importorskip("imodels", reason="the [rulelearners] extra")


def table(loader):
    """A scikit-learn table as a DataFrame of features and its class names."""
    bunch = loader(as_frame=True)
    x = bunch.data
    labels = pd.Series(np.asarray(bunch.target_names)[bunch.target.to_numpy()], name="class")
    return x, labels


def dataset(x, labels):
    frame = x.copy()
    frame["class"] = np.asarray(labels)
    return Dataset.from_frame(frame, class_name="class")


def expected_counts(masks, labels, heads, ordered):
    """Contingency counts (bh, bhbar, bbarh, bbarhbar) of each rule from its coverage
    mask, in plain NumPy; ``ordered``: a rule only sees what no earlier rule covered."""
    labels = np.asarray(labels)
    taken = np.zeros(len(labels), dtype=bool)
    out = []
    for mask, head in zip(masks, heads):
        body = mask & ~taken if ordered else mask
        if ordered:
            taken |= mask
        h = labels == head
        out.append(
            (
                int((body & h).sum()),
                int((body & ~h).sum()),
                int((~body & h).sum()),
                int((~body & ~h).sum()),
            )
        )
    return out


def got_counts(result):
    k = result.known
    return [tuple(int(v) for v in row) for row in zip(k.bh, k.bhbar, k.bbarh, k.bbarhbar)]


# ------------------------------------------------------------------------ RIPPER
@pytest.fixture(scope="module")
def cancer_ripper():
    x, labels = table(load_breast_cancer)
    model = lw.RIPPER(random_state=0, max_rules=6)
    model.fit(x, labels, pos_class="benign")
    return x, labels, model


def ripper_masks(model, x):
    """Coverage of each learnt rule by wittgenstein itself, on its own discretisation."""
    binned = model.bin_transformer_.transform(x.reset_index(drop=True))
    masks = []
    for rule in model.ruleset_.rules:
        mask = np.zeros(len(x), dtype=bool)
        mask[rule.covers(binned).index.to_numpy()] = True
        masks.append(mask)
    return masks


@pytest.mark.parametrize("mode", ["unordered", "ordered"])
def test_ripper_counts_match_wittgenstein_coverage(cancer_ripper, mode):
    x, labels, model = cancer_ripper
    rules = ripper_to_rules(model, "malignant")
    assert len(rules) == len(model.ruleset_.rules) >= 2
    assert rules.default.head == "malignant" and set(rules.heads) == {"benign"}
    result = evaluate_rules(rules, dataset(x, labels), mode)
    masks = ripper_masks(model, x)
    assert got_counts(result) == expected_counts(masks, labels, rules.heads, mode == "ordered")
    assert result.unknown.n.sum() == 0


def test_ripper_predictions_and_fire_match_the_learner(cancer_ripper):
    x, labels, model = cancer_ripper
    rules = ripper_to_rules(model, "malignant")
    data = dataset(x, labels)
    theirs = np.where(model.predict(x), "benign", "malignant")
    for mode in ("ordered", "unordered"):
        assert (np.asarray(predict_rules(rules, data, mode)) == theirs).all()
    score = score_rules(rules, data, psi=2.0)
    error = float(np.mean(theirs != labels.to_numpy()))
    assert score.task == "classification"
    assert rules.task == "classification"
    assert score.predictive_loss == pytest.approx(error)
    assert score.readability_loss == len(model.ruleset_.rules)
    # 2-FiRe(p, r) = p * ceil(r / 2) * r^0.05
    r = len(model.ruleset_.rules)
    assert score.fire == pytest.approx(error * np.ceil(r / 2) * r**0.05)


def test_ripper_bin_bounds_fall_as_in_wittgenstein(cancer_ripper):
    # examples lying exactly on the bounds of wittgenstein's bins (right-closed
    # intervals): the converted rules must put them where wittgenstein does
    x, labels, model = cancer_ripper
    bounds = {}
    for feature, bins in model.bin_transformer_.bins_.items():
        values = set()
        for label in bins:
            for part in label.replace("<", "").replace(">", "").split(" - "):
                values.add(float(part))
        bounds[feature] = sorted(values)
    n = max(len(v) for v in bounds.values()) * 3
    rng = np.random.default_rng(0)
    edge = pd.DataFrame({f: rng.choice(bounds.get(f, x[f].to_numpy()), n) for f in x.columns})
    edge = edge[list(x.columns)]
    rules = ripper_to_rules(model, "malignant")
    data = dataset(edge, np.resize(["benign", "malignant"], n))
    theirs = np.where(model.predict(edge), "benign", "malignant")
    assert (np.asarray(predict_rules(rules, data, "ordered")) == theirs).all()
    assert len(set(theirs)) == 2  # both sides of the bounds are exercised


def test_ripper_empty_rule_set_predicts_the_negative_class():
    # a case where RIPPER's pruning keeps no rule (it warns that all predictions are
    # negative)
    x = pd.DataFrame({"v": np.repeat(np.arange(20, dtype=float), 3)})
    y = (x["v"] <= 7).astype(int)
    model = lw.RIPPER(random_state=0, n_discretize_bins=5)
    with pytest.warns(RuntimeWarning, match="empty"):
        model.fit(x, y, pos_class=1)
    assert not model.ruleset_.rules, model.ruleset_
    rules = ripper_to_rules(model)
    assert len(rules) == 0 and rules.default.head == "0"
    predicted = predict_rules(rules, Dataset.from_frame(x), "ordered")
    assert (np.asarray(predicted, dtype=float) == 0).all()


def test_ripper_one_class_against_the_rest_on_wine():
    x, labels = table(load_wine)
    model = lw.RIPPER(random_state=1, max_rules=4)
    model.fit(x, labels, pos_class="class_0")
    rules = ripper_to_rules(model, "other")
    binary = np.where(labels == "class_0", "class_0", "other")
    result = evaluate_rules(rules, dataset(x, binary), "unordered")
    assert got_counts(result) == expected_counts(
        ripper_masks(model, x), binary, rules.heads, ordered=False
    )


def test_ripper_categorical_features_and_feature_names():
    rng = np.random.default_rng(0)
    x = pd.DataFrame(
        {
            "colour": rng.choice(["red", "green", "blue"], 200),
            "size": rng.choice(["s", "m", "l"], 200),
        }
    )
    y = ((x["colour"] == "red") & (x["size"] != "s")).map({True: "yes", False: "no"}).rename("y")
    model = lw.RIPPER(random_state=0)
    model.fit(x, y, pos_class="yes")
    rules = ripper_to_rules(model, "no", feature_names=["c", "s"])
    assert set(rules.attributes) <= {"c", "s"} and rules.attributes
    data = dataset(x.rename(columns={"colour": "c", "size": "s"}), y)
    predicted = np.asarray(predict_rules(rules, data, "ordered"))
    assert (predicted == np.where(model.predict(x), "yes", "no")).all()


def test_ripper_refuses_bad_inputs(cancer_ripper):
    x, labels, model = cancer_ripper
    with pytest.raises(ValueError, match="not fitted"):
        ripper_to_rules(lw.RIPPER())
    with pytest.raises(TypeError, match="wittgenstein RIPPER"):
        ripper_to_rules(imodels.GreedyRuleListClassifier())
    with pytest.raises(ValueError, match="negative_class.*required"):
        ripper_to_rules(model)
    with pytest.raises(ValueError, match="must differ"):
        ripper_to_rules(model, "benign")
    with pytest.raises(ValueError, match="30 names"):
        ripper_to_rules(model, "malignant", feature_names=["a", "b"])
    with pytest.raises(ValueError, match="distinct"):
        ripper_to_rules(model, "malignant", feature_names=["a"] * 30)
    with pytest.raises(TypeError, match="`feature_names` must be a sequence of names"):
        ripper_to_rules(model, "malignant", feature_names="abc")
    with pytest.raises(TypeError, match="`negative_class` must be a class label"):
        ripper_to_rules(model, ["benign"])
    # rules named after other features than the data's: refused before any count
    renamed = ripper_to_rules(model, "malignant", feature_names=[f"f{i}" for i in range(30)])
    with pytest.raises(RuleParseError, match="f"):
        evaluate_rules(renamed, dataset(x, labels))
    before = model.ruleset_.rules[0].conds[0].val
    ripper_to_rules(model, "malignant")
    assert model.ruleset_.rules[0].conds[0].val == before  # the learner is not modified


# ------------------------------------------------------------------------ imodels
def rule_list_masks(model, x):
    """Coverage of each step of an imodels rule list, with pandas comparisons."""
    masks = []
    for step in model.rules_[:-1]:
        column = x[str(step["col"])].to_numpy()
        masks.append(column < step["cutoff"] if step["flip"] else column >= step["cutoff"])
    return masks


@pytest.mark.parametrize("kind", ["GreedyRuleListClassifier", "OneRClassifier"])
def test_rule_list_counts_and_predictions(kind):
    x, labels = table(load_breast_cancer)
    model = getattr(imodels, kind)(max_depth=3).fit(x, labels)
    rules = rule_list_to_rules(model)
    assert len(rules) == len(model.rules_) - 1 >= 1 and rules.default is not None
    data = dataset(x, labels)
    result = evaluate_rules(rules, data, "ordered")
    assert got_counts(result) == expected_counts(
        rule_list_masks(model, x), labels, rules.heads, ordered=True
    )
    assert (np.asarray(predict_rules(rules, data, "ordered")) == model.predict(x)).all()
    score = score_rules(rules, data, psi=1.0)
    assert score.predictive_loss == pytest.approx(np.mean(model.predict(x) != labels))


def test_rule_list_on_iris_one_class_and_renamed_features():
    x, labels = table(load_iris)
    binary = np.where(labels == "virginica", "virginica", "other")
    model = imodels.GreedyRuleListClassifier(max_depth=2).fit(x.to_numpy(), binary)
    assert list(model.feature_names_) == ["X0", "X1", "X2", "X3"]
    rules = rule_list_to_rules(model, feature_names=list(x.columns))
    data = dataset(x, binary)
    assert (np.asarray(predict_rules(rules, data, "ordered")) == model.predict(x.to_numpy())).all()


def test_rule_list_refuses_bad_inputs():
    x, labels = table(load_breast_cancer)
    with pytest.raises(ValueError, match="not fitted"):
        rule_list_to_rules(imodels.GreedyRuleListClassifier())
    emptied = imodels.GreedyRuleListClassifier(max_depth=2).fit(x, labels)
    emptied.rules_ = []  # no final leaf: refused as unfitted, not an IndexError
    with pytest.raises(ValueError, match="rules_` is empty"):
        rule_list_to_rules(emptied)
    with pytest.raises(TypeError, match="GreedyRuleListClassifier"):
        rule_list_to_rules(lw.RIPPER())
    model = imodels.GreedyRuleListClassifier(max_depth=2).fit(x, labels)
    with pytest.raises(ValueError, match="30 names"):
        rule_list_to_rules(model, feature_names=["a"])
    with pytest.raises(TypeError, match="`feature_names` must be a sequence of names"):
        rule_list_to_rules(model, feature_names={"a": 1})
    with pytest.raises(ValueError, match="binary"):
        model3 = imodels.GreedyRuleListClassifier(max_depth=2).fit(x, labels)
        model3.classes_ = np.array(["a", "b", "c"])
        rule_list_to_rules(model3)
    # imodels itself refuses a multi-class target
    with pytest.raises(ValueError):
        imodels.GreedyRuleListClassifier().fit(*load_iris(return_X_y=True))


@pytest.mark.parametrize("nan", [float("nan"), np.float32("nan"), np.nan])
def test_ripper_refuses_a_nan_negative_class(cancer_ripper, nan):
    # a NaN head would never equal a label: every example would count as misclassified
    _, _, model = cancer_ripper
    with pytest.raises(ValueError, match=r"`negative_class` .* got nan"):
        ripper_to_rules(model, nan)


def test_wittgenstein_bins_become_right_closed_intervals():
    from types import SimpleNamespace

    from xplique_ext.rules.learners import _ripper_conditions

    bins = {"f": {"<2.5", ">7", "-3 - -1", "abc", "1 - 2 - 3"}}

    def conditions(label):
        cond = SimpleNamespace(feature="f", val=label)
        return [c.to_string() for c in _ripper_conditions("rule", cond, "a", bins)]

    assert conditions("<2.5") == ["a <= 2.5"] and conditions(">7") == ["a > 7.0"]
    assert conditions("-3 - -1") == ["a > -3.0", "a <= -1.0"]
    assert conditions("plain") == ["a = plain"]  # not a bin: equality
    for label in ("abc", "1 - 2 - 3"):
        with pytest.raises(ValueError, match=f"cannot read wittgenstein's bin '{label}'"):
            conditions(label)
