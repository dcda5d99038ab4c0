"""scikit-learn decision trees as rule sets, so that a tree can be scored like any
extracted knowledge (the FiRe paper's CART experiment)."""

from __future__ import annotations

import numbers
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from ..commons.params import STRING, ArrayLike, Interval, validate_params
from .encoding import label_text
from .names import Attribute, Names
from .pbm import Condition, PBMHeader, Rule, RuleSet

__all__ = ["tree_to_rules", "tree_names"]


def _check_model(
    model,
    module: str,
    kinds: Sequence[str],
    described: str,
    fitted: Sequence[str],
    name: str = "model",
) -> None:
    """Import the package ``module`` (the optional ones: an ImportError saying how to
    install it), then a TypeError unless ``model`` (the parameter ``name``) is one of its
    classes ``kinds``, a ValueError unless it has the ``fitted`` attributes."""
    import importlib

    try:
        package = importlib.import_module(module)
    except ImportError as err:
        raise ImportError(
            f"this adapter needs the package {module!r}: pip install "
            f'"xplique_ext[rulelearners]" (or pip install {module})'
        ) from err
    classes = tuple(k for k in (getattr(package, kind, None) for kind in kinds) if k)
    if not isinstance(model, classes):
        raise TypeError(f"`{name}` must be a fitted {described}, got {type(model).__name__}")
    if any(getattr(model, attribute, None) is None for attribute in fitted):
        raise ValueError(f"`{name}` is not fitted: call its fit method first")


def _check_tree(tree, feature_names: Optional[Sequence], class_names: Optional[Sequence]):
    """Check ``tree`` is a fitted single-output scikit-learn tree; its feature names and its
    class names (None for a regressor)."""
    _check_model(
        tree,
        "sklearn.tree",
        ("BaseDecisionTree",),
        "scikit-learn DecisionTreeClassifier or DecisionTreeRegressor",
        ("tree_",),
        "tree",
    )
    if tree.n_outputs_ != 1:
        raise ValueError(f"`tree` must have a single output, got {tree.n_outputs_}")
    default = [str(f) for f in getattr(tree, "feature_names_in_", [])] or [
        f"x{i}" for i in range(tree.n_features_in_)
    ]
    features = _names(feature_names, default, "feature_names")
    if not hasattr(tree, "classes_"):
        return features, None
    return features, _names(class_names, [label_text(c) for c in tree.classes_], "class_names")


def _names(given: Optional[Sequence], default: List[str], what: str) -> List[str]:
    """``given`` (or ``default``) as text, one per item of ``default``, distinct."""
    names = [str(f) for f in (default if given is None else given)]
    if len(names) != len(default):
        raise ValueError(f"`{what}` must have {len(default)} names, got {len(names)}")
    if len(set(names)) != len(names):
        raise ValueError(f"`{what}` must be distinct, got {names}")
    return names


def _number(value: float, decimals: Optional[int]) -> str:
    return repr(float(value)) if decimals is None else f"{float(value):.{decimals}f}"


#: Names of features or classes: a 1-D sequence (list, tuple, array, pandas Index).
_NAME_LIST = [ArrayLike("any", ndim=1, batch_hint=False), None]
#: scikit-learn is imported where used: the tree's type and fitted state are checked
#: by ``_check_tree``.
_TREE = "no_validation"


@validate_params(
    {"tree": _TREE, "feature_names": _NAME_LIST, "class_names": _NAME_LIST, "class_name": [STRING]}
)
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
    features, classes = _check_tree(tree, feature_names, class_names)
    if class_name in features:
        raise ValueError(f"`class_name` {class_name!r} is also a feature name")
    kind = ("real",) if classes is None else ("nominal", tuple(classes))
    attributes = [Attribute(f, "real") for f in features] + [Attribute(class_name, *kind)]
    return Names(attributes, class_name, file="<tree>")


@validate_params(
    {
        "tree": _TREE,
        "feature_names": _NAME_LIST,
        "class_names": _NAME_LIST,
        "decimals": [Interval(numbers.Integral, 0, None), None],
    }
)
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
        Its ``task`` is the one the tree declares (scikit-learn's ``is_classifier``):
        ``"classification"`` for a classifier, whatever its classes (``1.0`` too),
        ``"regression"`` for a regressor.

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
    features, classes = _check_tree(tree, feature_names, class_names)
    structure = tree.tree_
    left = structure.children_left
    right = structure.children_right
    feature = structure.feature
    threshold = structure.threshold
    value = structure.value

    def head(node: int) -> str:
        if classes is not None:
            return classes[int(np.argmax(value[node, 0]))]
        return repr(float(value[node, 0, 0]))

    rules: List[Rule] = []
    # depth-first, left child first: leaves come out left to right; each path keeps the
    # bounds [low, high] of the features it tests, in the order of their first test
    stack: List[Tuple[int, Dict[int, list]]] = [(0, {})]
    while stack:
        node, bounds = stack.pop()
        if left[node] == -1:
            conditions = tuple(
                Condition(features[f], op, _number(t, decimals))
                for f, pair in bounds.items()
                for op, t in zip((">", "<="), pair)
                if t is not None
            )
            rules.append(
                Rule(
                    f"R{len(rules) + 1:04d}",
                    (conditions,) if conditions else (),
                    head(node),
                    is_default=not conditions,
                )
            )
            continue
        for child, side in ((right[node], 0), (left[node], 1)):
            new = {f: list(pair) for f, pair in bounds.items()}
            # deeper tests on a feature are always inside the earlier ones
            new.setdefault(int(feature[node]), [None, None])[side] = float(threshold[node])
            stack.append((int(child), new))
    from sklearn.base import is_classifier

    kind = type(tree).__name__
    task = "regression"
    if is_classifier(tree):
        task = "classification"
    return RuleSet(rules, PBMHeader(inducer=f"scikit-learn {kind}"), file=f"<{kind}>", task=task)
