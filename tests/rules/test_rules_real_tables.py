"""Rule sets scored on the real tables shipped with scikit-learn (iris, wine, breast cancer)
through ``Dataset.from_frame``, with the tables' own column names ("sepal length (cm)",
"od280/od315_of_diluted_wines", ...) and class names.

Oracle: the leaf each example reaches in the tree itself (``tree.apply``) and the tree's
own predictions, counted with plain NumPy.
"""

import re

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_breast_cancer, load_iris, load_wine
from sklearn.tree import DecisionTreeClassifier

from xplique_ext.metrics import FiRe, QsScore
from xplique_ext.rules import (
    Dataset,
    RuleParseError,
    evaluate_rules,
    parse_rules,
    predict_rules,
    rule_measures,
    score_rules,
    tree_to_rules,
)

TABLES = {"iris": load_iris, "wine": load_wine, "breast_cancer": load_breast_cancer}


def frame_of(name):
    bunch = TABLES[name](as_frame=True)
    frame = bunch.data.copy()
    frame["class"] = np.asarray(bunch.target_names)[bunch.target.to_numpy()]
    return frame


def leaves_left_to_right(tree):
    left, right = tree.tree_.children_left, tree.tree_.children_right

    def walk(node):
        return [node] if left[node] == -1 else walk(left[node]) + walk(right[node])

    return walk(0)


@pytest.mark.parametrize("name", sorted(TABLES))
@pytest.mark.parametrize("mode", ["unordered", "ordered"])
def test_tree_rules_on_real_tables(name, mode):
    frame = frame_of(name)
    x, labels = frame.drop(columns="class"), frame["class"].to_numpy()
    tree = DecisionTreeClassifier(max_leaf_nodes=5, random_state=0).fit(x, labels)
    rules = tree_to_rules(tree)  # names from the DataFrame, classes from the labels
    assert set(rules.attributes) <= set(x.columns)
    data = Dataset.from_frame(frame, class_name="class")
    assert data.n_examples == len(frame)
    result = evaluate_rules(rules, data, mode)
    leaf_of = tree.apply(x.astype(np.float32))
    for k, leaf in enumerate(leaves_left_to_right(tree)):
        head = rules[k].head
        body, h = leaf_of == leaf, labels == head
        expected = ((body & h).sum(), (body & ~h).sum(), (~body & h).sum(), (~body & ~h).sum())
        got = (
            result.known.bh[k],
            result.known.bhbar[k],
            result.known.bbarh[k],
            result.known.bbarhbar[k],
        )
        assert tuple(map(int, got)) == tuple(map(int, expected)), (name, k)
    # rule measures from the same counts: accuracy (Eq. 1) = bh / (bh + bhbar)
    frame_out = result.to_frame()
    acc = result.known.bh / (result.known.bh + result.known.bhbar)
    np.testing.assert_allclose(frame_out["Acc"].to_numpy(), acc)
    # predictions and FiRe / Qs against the true labels
    predicted = np.asarray(predict_rules(rules, data, "ordered"))
    assert (predicted == tree.predict(x)).all()
    score = score_rules(rules, data, psi=2.0)
    p = float(np.mean(tree.predict(x) != labels))
    assert score.predictive_loss == pytest.approx(p)
    assert score.readability_loss == tree.get_n_leaves()
    assert score.fire == pytest.approx(FiRe(2.0).evaluate(p, tree.get_n_leaves()))
    assert score.qs == pytest.approx(QsScore().evaluate(p, tree.get_n_leaves(), 1.0))


def test_hand_written_rules_on_breast_cancer_with_quoted_names():
    frame = frame_of("breast_cancer")
    rules = parse_rules("""
R0001  IF "worst radius" > 16.8
        THEN CLASS = malignant
R0002  IF "worst concave points" > 0.14 AND "mean texture" > 16
        THEN CLASS = malignant
R0003  DEFAULT CLASS = benign""")
    data = Dataset.from_frame(frame, class_name="class")
    result = evaluate_rules(rules, data, "unordered")
    malignant = frame["class"].to_numpy() == "malignant"
    masks = [
        frame["worst radius"].to_numpy() > 16.8,
        (frame["worst concave points"].to_numpy() > 0.14) & (frame["mean texture"].to_numpy() > 16),
    ]
    for k, body in enumerate(masks):
        assert int(result.known.bh[k]) == int((body & malignant).sum())
        assert int(result.known.bhbar[k]) == int((body & ~malignant).sum())
        assert int(result.known.bbarh[k]) == int((~body & malignant).sum())
    measures = rule_measures(
        bh=result.known.bh,
        bhbar=result.known.bhbar,
        bbarh=result.known.bbarh,
        bbarhbar=result.known.bbarhbar,
    )
    np.testing.assert_allclose(
        measures["Sens"], [(m & malignant).sum() / malignant.sum() for m in masks]
    )


def test_from_frame_refuses_a_table_missing_a_tested_column():
    frame = frame_of("wine")
    tree = DecisionTreeClassifier(max_leaf_nodes=4, random_state=0).fit(
        frame.drop(columns="class"), frame["class"]
    )
    rules = tree_to_rules(tree)
    for tested in rules.attributes:  # e.g. "od280/od315_of_diluted_wines"
        data = Dataset.from_frame(frame.drop(columns=tested), class_name="class")
        with pytest.raises(
            RuleParseError, match=f"attribute '{re.escape(tested)}' is not declared"
        ):
            evaluate_rules(rules, data)


def test_iris_frame_values_unchanged():
    frame = frame_of("iris")
    copy = frame.copy()
    Dataset.from_frame(frame, class_name="class")
    pd.testing.assert_frame_equal(frame, copy)
