"""scikit-learn decision trees as rule sets, so that a tree can be scored like any
extracted knowledge (the FiRe paper's CART experiment)."""

from __future__ import annotations

import numbers
from typing import List, Optional, Sequence, Tuple

import numpy as np

from ..commons.params import STRING, ArrayLike, Interval, validate_params
from .names import Attribute, Names
from .pbm import Condition, PBMHeader, Rule, RuleSet

__all__ = ["tree_to_rules", "tree_names"]


def _check_tree(tree):
    try:
        from sklearn.tree import BaseDecisionTree
    except ImportError as err:  # pragma: no cover - scikit-learn is a dependency
        raise ImportError("tree_to_rules needs scikit-learn") from err
    if not isinstance(tree, BaseDecisionTree):
        raise TypeError(
            "`tree` must be a fitted scikit-learn DecisionTreeClassifier or "
            f"DecisionTreeRegressor, got {type(tree).__name__}"
        )
    if not hasattr(tree, "tree_"):
        raise ValueError("`tree` is not fitted: call its fit method first")
    if tree.n_outputs_ != 1:
        raise ValueError(f"`tree` must have a single output, got {tree.n_outputs_}")
    return hasattr(tree, "classes_")


def _feature_names(tree, feature_names: Optional[Sequence[str]]) -> List[str]:
    n = tree.n_features_in_
    if feature_names is None:
        if hasattr(tree, "feature_names_in_"):
            feature_names = [str(f) for f in tree.feature_names_in_]
        else:
            feature_names = [f"x{i}" for i in range(n)]
    feature_names = [str(f) for f in feature_names]
    if len(feature_names) != n:
        raise ValueError(f"`feature_names` must have {n} names, got {len(feature_names)}")
    if len(set(feature_names)) != n:
        raise ValueError("`feature_names` must be distinct")
    return feature_names


def _class_names(tree, class_names: Optional[Sequence[str]]) -> List[str]:
    if class_names is None:
        class_names = [_label(c) for c in tree.classes_]
    class_names = [str(c) for c in class_names]
    if len(class_names) != len(tree.classes_):
        raise ValueError(
            f"`class_names` must have {len(tree.classes_)} names, got {len(class_names)}"
        )
    return class_names


def _label(value) -> str:
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    if isinstance(value, np.integer):
        return str(int(value))
    return str(value)


def _number(value: float, decimals: Optional[int]) -> str:
    if decimals is None:
        return repr(float(value))
    return f"{float(value):.{decimals}f}"


#: Names of features or classes: a 1-D sequence (list, tuple, array, pandas Index).
_NAME_LIST = [ArrayLike("any", ndim=1, batch_hint=False), None]
#: scikit-learn is imported where used: the tree's type and fitted state are checked
#: by ``_check_tree``.
_TREE = "no_validation"


@validate_params({"tree": _TREE, "feature_names": _NAME_LIST, "class_names": _NAME_LIST,
                  "class_name": [STRING]})
def tree_names(
    tree,
    feature_names: Optional[Sequence[str]] = None,
    class_names: Optional[Sequence[str]] = None,
    *,
    class_name: str = "class",
) -> Names:
    """``.names`` declarations for the data of a tree: ``real`` features and a nominal
    class (``real`` for a regressor).

    Examples
    --------
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> tree = DecisionTreeClassifier(max_leaf_nodes=2).fit([[0.0], [1.0]], ["a", "b"])
    >>> tree_names(tree).to_string().splitlines()[-1]
    'class: a, b.'
    """
    is_classifier = _check_tree(tree)
    features = _feature_names(tree, feature_names)
    if class_name in features:
        raise ValueError(f"`class_name` {class_name!r} is also a feature name")
    attributes = [Attribute(f, "real") for f in features]
    if is_classifier:
        attributes.append(Attribute(class_name, "nominal", tuple(_class_names(tree, class_names))))
    else:
        attributes.append(Attribute(class_name, "real"))
    return Names(attributes, class_name, file="<tree>")


@validate_params({"tree": _TREE, "feature_names": _NAME_LIST, "class_names": _NAME_LIST,
                  "decimals": [Interval(numbers.Integral, 0, None), None]})
def tree_to_rules(
    tree,
    feature_names: Optional[Sequence[str]] = None,
    class_names: Optional[Sequence[str]] = None,
    *,
    decimals: Optional[int] = None,
) -> RuleSet:
    """One rule per leaf of a fitted ``DecisionTreeClassifier``/``DecisionTreeRegressor``.

    Parameters
    ----------
    tree
        The fitted tree (single output).
    feature_names
        Attribute names (default: ``tree.feature_names_in_`` or ``x0, x1, ...``).
    class_names
        Heads for ``tree.classes_`` (default: the classes as text).
    decimals
        Round thresholds to this many decimals in the rule text (readability; may move
        an example that lies between the rounded and the exact threshold). By default the
        exact thresholds are written.

    Returns
    -------
    RuleSet
        Rules ``x <= t`` / ``x > t`` along each root-to-leaf path (several tests of one
        feature merged into the tightest bounds), in leaf order (left to right); heads are
        the majority class of the leaf, or its mean value for a regressor. The leaves
        partition the input space, so there is no DEFAULT rule and every evaluation
        mode gives the same tables. A tree with a single leaf becomes a DEFAULT rule.

    Notes
    -----
    scikit-learn compares features cast to ``float32`` with its thresholds; the rules
    compare the values as given, which only differs for a value within ``float32``
    rounding of a threshold.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> x, y = load_iris(return_X_y=True)
    >>> tree = DecisionTreeClassifier(max_leaf_nodes=3, random_state=0).fit(x, y)
    >>> rules = tree_to_rules(tree, ["sl", "sw", "pl", "pw"], ["setosa", "versicolor", "virginica"], decimals=2)
    >>> print(rules[0].to_string())
    R0001  IF pw <= 0.80
            THEN CLASS = setosa
    """
    is_classifier = _check_tree(tree)
    features = _feature_names(tree, feature_names)
    classes = _class_names(tree, class_names) if is_classifier else None
    structure = tree.tree_
    left, right = structure.children_left, structure.children_right
    feature, threshold, value = structure.feature, structure.threshold, structure.value

    def head(node: int) -> str:
        if is_classifier:
            return classes[int(np.argmax(value[node, 0]))]
        return repr(float(value[node, 0, 0]))

    rules: List[Rule] = []
    # depth-first, left child first: leaves come out left to right
    stack: List[Tuple[int, dict]] = [(0, {})]
    while stack:
        node, bounds = stack.pop()
        if left[node] == -1:
            conditions = []
            for f in sorted(bounds, key=lambda k: bounds[k]["order"]):
                b = bounds[f]
                if b.get("low") is not None:
                    conditions.append(Condition(features[f], ">", _number(b["low"], decimals)))
                if b.get("high") is not None:
                    conditions.append(Condition(features[f], "<=", _number(b["high"], decimals)))
            rid = f"R{len(rules) + 1:04d}"
            if conditions:
                rules.append(Rule(rid, (tuple(conditions),), head(node)))
            else:
                rules.append(Rule(rid, (), head(node), is_default=True))
            continue
        f, t = int(feature[node]), float(threshold[node])
        for child, side in ((right[node], "low"), (left[node], "high")):
            new = {k: dict(v) for k, v in bounds.items()}
            entry = new.setdefault(f, {"order": len(new)})
            entry[side] = t  # deeper tests on a feature are always inside the earlier ones
            stack.append((int(child), new))
    kind = type(tree).__name__
    return RuleSet(rules, PBMHeader(inducer=f"scikit-learn {kind}"), file=f"<{kind}>")
