"""scikit-learn trees as rule sets (:mod:`xplique_ext.rules.trees`): counts checked
against an independent computation, on iris and on the real tables shipped with
scikit-learn (their own column and class names)."""

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_iris
from sklearn.metrics import confusion_matrix
from sklearn.neighbors import KNeighborsClassifier
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from tests.rules.sklearn_tables import TABLES, frame_of
from xplique_ext.metrics import FiRe, QsScore
from xplique_ext.rules import (
    Dataset,
    evaluate_rules,
    parse_rules,
    predict_rules,
    score_rules,
    tree_names,
    tree_to_rules,
)

FEATURES = ["sepal_length", "sepal_width", "petal_length", "petal_width"]


CLASSES = ["setosa", "versicolor", "virginica"]


def leaves_left_to_right(tree):
    left, right = tree.tree_.children_left, tree.tree_.children_right

    def walk(node):
        if left[node] == -1:
            return [node]
        return walk(left[node]) + walk(right[node])

    return walk(0)


@pytest.fixture(scope="module")
def iris():
    x, y = load_iris(return_X_y=True)
    black_box = KNeighborsClassifier(n_neighbors=9).fit(x, y).predict(x)
    return x, y, black_box


@pytest.mark.parametrize("leaves", [3, 5, 8])
@pytest.mark.parametrize("mode", ["unordered", "ordered", "inter-class"])
def test_tree_counts_match_confusion_matrices(iris, leaves, mode):
    x, y, black_box = iris
    tree = DecisionTreeClassifier(max_leaf_nodes=leaves, random_state=0).fit(x, black_box)
    rules = tree_to_rules(tree, FEATURES, CLASSES)
    assert len(rules) == tree.get_n_leaves() and rules.default is None
    labels = np.asarray(CLASSES)[y]
    data = Dataset.from_arrays(
        x, labels, feature_names=FEATURES, names=tree_names(tree, FEATURES, CLASSES)
    )
    result = evaluate_rules(rules, data, mode)  # the leaves are disjoint: modes agree
    # independent computation: leaf of each example from the tree itself
    leaf_of = tree.apply(x.astype(np.float32))
    leaf_ids = leaves_left_to_right(tree)
    for k, leaf in enumerate(leaf_ids):
        head = CLASSES[int(np.argmax(tree.tree_.value[leaf, 0]))]
        assert rules[k].head == head
        (bh, bbarh), (bhbar, bbarhbar) = confusion_matrix(
            labels == head, leaf_of == leaf, labels=[True, False]
        )
        got = (
            result.known.bh[k],
            result.known.bhbar[k],
            result.known.bbarh[k],
            result.known.bbarhbar[k],
        )
        assert got == (bh, bhbar, bbarh, bbarhbar), (k, got)
    assert result.unknown.n.sum() == 0


def test_tree_predictions_match_sklearn(iris):
    x, y, black_box = iris
    tree = DecisionTreeClassifier(max_leaf_nodes=6, random_state=1).fit(x, black_box)
    rules = tree_to_rules(tree, FEATURES)
    data = Dataset.from_arrays(x, feature_names=FEATURES, names=tree_names(tree, FEATURES))
    predicted = predict_rules(rules, data, "ordered")
    np.testing.assert_array_equal(predicted.astype(int), tree.predict(x))
    # the written rule file reads back to the same rules
    assert parse_rules(rules.to_string()) == rules


def test_regressor(iris):
    x, _, _ = iris
    target = x[:, 3]
    tree = DecisionTreeRegressor(max_leaf_nodes=5, random_state=0).fit(x[:, :3], target)
    rules = tree_to_rules(tree, FEATURES[:3])
    assert rules.task == "regression"  # declared by the regressor
    names = tree_names(tree, FEATURES[:3], class_name="petal_width")
    data = Dataset.from_arrays(
        x[:, :3], target, feature_names=FEATURES[:3], names=names, class_name="petal_width"
    )
    np.testing.assert_allclose(predict_rules(rules, data), tree.predict(x[:, :3]))
    score = score_rules(rules, data, psi=2.0)
    assert score.task == "regression" and score.readability_loss == 5
    # plain arrays (no declared numeric class) are scored the same way
    plain = score_rules(rules, x[:, :3], target, psi=2.0, feature_names=FEATURES[:3])
    assert plain.task == "regression" and plain.predictive_loss == pytest.approx(
        score.predictive_loss
    )
    mae = np.abs(tree.predict(x[:, :3]) - target).mean()
    assert score.predictive_loss == pytest.approx(mae)
    assert score.fire == pytest.approx(FiRe(2.0).evaluate(mae, 5))


def test_fire_paper_protocol(iris):
    """CART with at most 3 leaves mimicking a 9-NN on Iris (the FiRe paper, section 5)."""
    x, y, black_box = iris
    tree = DecisionTreeClassifier(max_leaf_nodes=3, random_state=0).fit(x, black_box)
    rules = tree_to_rules(tree, FEATURES)
    frame = pd.DataFrame(x, columns=FEATURES)
    fidelity = score_rules(rules, frame, black_box, psi=1.0)
    agreement = (tree.predict(x) == black_box).mean()
    assert fidelity.predictive_loss == pytest.approx(1 - agreement)
    assert fidelity.readability_loss == 3 and fidelity.coverage == 1.0
    assert fidelity.fire == pytest.approx(FiRe(1.0).evaluate(1 - agreement, 3))
    assert fidelity.qs == pytest.approx((1 - agreement) * 1.0 * 3)
    truth = score_rules(rules, x, y, psi=3, feature_names=FEATURES)
    assert truth.psi == 3.0
    assert truth.predictive_loss == pytest.approx(1 - (tree.predict(x) == y).mean())
    # counting a DEFAULT rule
    with_default = parse_rules(rules.to_string() + "\nR0009 DEFAULT CLASS = 0\n")
    assert score_rules(with_default, frame, black_box, count_default=True).readability_loss == 4
    assert score_rules(with_default, frame, black_box).readability_loss == 3


def test_adapter_errors(iris):
    x, y, _ = iris
    with pytest.raises(TypeError, match="`tree` must be a fitted scikit-learn"):
        tree_to_rules(KNeighborsClassifier())
    with pytest.raises(ValueError, match="not fitted"):
        tree_to_rules(DecisionTreeClassifier())
    tree = DecisionTreeClassifier(max_depth=1).fit(x, y)
    with pytest.raises(ValueError, match="`feature_names` must have 4 names"):
        tree_to_rules(tree, ["a"])
    with pytest.raises(ValueError, match="`class_names` must have 3 names"):
        tree_to_rules(tree, class_names=["a"])
    with pytest.raises(ValueError, match="single output"):
        tree_to_rules(DecisionTreeClassifier().fit(x, np.stack([y, y], 1)))
    stump = DecisionTreeClassifier().fit(x[:5], y[:5])  # one class: a single leaf
    only_default = tree_to_rules(stump)
    assert len(only_default) == 0 and only_default.default.head == "0"
    with pytest.raises(ValueError, match="count_default=True"):
        score_rules(only_default, x[:5], y[:5], feature_names=["x0", "x1", "x2", "x3"])


# -- the real tables shipped with scikit-learn -----------------------------------------------------
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
