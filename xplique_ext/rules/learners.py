"""Rule sets learnt by rule learners, as :class:`~xplique_ext.rules.RuleSet`: RIPPER (and
IREP) from ``wittgenstein``, greedy rule lists and OneR from ``imodels``.

Both packages are optional (``pip install "xplique_ext[rulelearners]"``); each adapter
imports its package only when called. The converted rules predict what the learner
predicts, so their contingency tables, rule measures and FiRe/Qs scores are those of the
learnt model. Scikit-learn trees: :func:`~xplique_ext.rules.tree_to_rules`.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, List, Optional, Sequence

import numpy as np
import pandas as pd

from ..commons.params import InstanceOf, Interval, validate_params
from .encoding import label_text
from .pbm import Condition, PBMHeader, Rule, RuleSet
from .trees import _check_model, _names, _number

__all__ = ["ripper_to_rules", "rule_list_to_rules"]

#: ``feature_names``: the attribute names, in the learner's training column order.
_FEATURE_NAMES = [
    InstanceOf(
        list,
        tuple,
        np.ndarray,
        pd.Index,
        description="a sequence of names (list, tuple, array or Index)",
    ),
    None,
]


# ------------------------------------------------------------------------ wittgenstein
def _negative_class(positive: Any, negative_class: Any) -> str:
    """The DEFAULT head of a RIPPER rule set: ``negative_class``, or the opposite of a
    ``True`` / ``1`` positive class."""
    if negative_class is None:
        if isinstance(positive, (bool, np.bool_)):
            negative_class = not bool(positive)
        elif isinstance(positive, numbers.Real) and float(positive) == 1.0:
            negative_class = 0
        else:
            raise ValueError(
                f"`negative_class` is required: RIPPER predicts pos_class={positive!r} "
                "or not, name the label of the other examples"
            )
    if label_text(negative_class) == label_text(positive):
        raise ValueError(
            f"`negative_class` ({label_text(negative_class)!r}) must differ from the "
            f"positive class {label_text(positive)!r}"
        )
    return label_text(negative_class)


def _ripper_conditions(rule, cond, attribute: str, bins) -> List[Condition]:
    """The conditions of one wittgenstein test ``cond`` (of ``rule``) on ``attribute``."""
    value = cond.val
    if isinstance(value, str) and value in bins.get(cond.feature, ()):
        # a bin of its pandas binning, right-closed: "<b" is x <= b, ">a" is x > a and
        # "a - b" is a < x <= b
        text = value.strip()
        try:
            if text.startswith(("<", ">")):
                operator = "<=" if text[0] == "<" else ">"
                return [Condition(attribute, operator, _number(float(text[1:]), None))]
            low, high = text.split(" - ")
            return [
                Condition(attribute, ">", _number(float(low), None)),
                Condition(attribute, "<=", _number(float(high), None)),
            ]
        except ValueError:  # not a number, or not two bounds
            raise ValueError(
                f"cannot read wittgenstein's bin {value!r} of feature "
                f"{cond.feature!r} as an interval"
            ) from None
    if isinstance(value, (bool, np.bool_)):
        return [Condition(attribute, "=", str(bool(value)))]
    if isinstance(value, numbers.Real) and not math.isfinite(float(value)):
        raise ValueError(f"rule {rule} tests a non-finite value of {attribute!r}")
    return [Condition(attribute, "=", label_text(value))]


@validate_params(
    {
        "model": "no_validation",  # an instance of the optional package's classes, checked below
        "negative_class": [  # a NaN matches no label: refused by the Interval
            InstanceOf(
                str,
                int,
                np.integer,
                bool,
                np.bool_,
                description="a class label (str, number or bool)",
            ),
            Interval(numbers.Real, None, None),
            None,
        ],
        "feature_names": _FEATURE_NAMES,
    }
)
def ripper_to_rules(
    model: Any, negative_class: Any = None, *, feature_names: Optional[Sequence[str]] = None
) -> RuleSet:
    """The rule set of a fitted ``wittgenstein`` RIPPER (or IREP) classifier.

    RIPPER learns rules for one class, ``pos_class``: an example is predicted positive
    when at least one rule covers it, negative otherwise. The rule set is therefore one
    rule per learnt rule, with head ``pos_class``, and a DEFAULT rule predicting
    ``negative_class``; every evaluation mode predicts as the learner does.

    Conditions. A feature that wittgenstein discretised is tested on its bin, a
    right-closed interval: the bin ``<b`` becomes ``x <= b``, ``>a`` becomes ``x > a`` and
    ``a - b`` becomes ``x > a AND x <= b`` (the bounds as wittgenstein parses them from
    the bin label). Other features are tested for equality (``x = v``).

    Parameters
    ----------
    model
        A fitted ``wittgenstein.RIPPER`` or ``wittgenstein.IREP``.
    negative_class
        Head of the DEFAULT rule: the label of the examples RIPPER does not cover. By
        default ``0`` when ``pos_class`` is ``1`` and ``False`` when it is ``True``;
        required otherwise. For a multi-class target (RIPPER learns one class against
        the rest), score the rules against labels where every other class is
        ``negative_class``.
    feature_names
        Attribute names, one per feature the learner was trained on, in its training
        column order (default: its column names as text).

    Returns
    -------
    RuleSet
        Rules ``R0001``... in RIPPER's order, then ``DEFAULT CLASS = negative_class``.

    Notes
    -----
    An example with a missing value in a tested attribute is never covered by
    wittgenstein (its bin is NaN); the evaluation of this package follows the report's
    semantics for unknown values instead (a test on an unknown value counts as true), so
    the two differ on such examples only.

    Examples
    --------
    >>> import pandas as pd, wittgenstein
    >>> x = pd.DataFrame({"colour": ["red", "red", "blue", "green"] * 5, "size": ["s", "l"] * 10})
    >>> y = pd.Series(["yes", "yes", "no", "no"] * 5, name="buy")
    >>> model = wittgenstein.RIPPER(random_state=0)
    >>> model.fit(x, y, pos_class="yes")
    >>> rules = ripper_to_rules(model, "no")
    >>> print(rules[0].to_string())
    R0001  IF colour = red
            THEN CLASS = yes
    >>> rules.default.head
    'no'
    """
    _check_model(
        model,
        "wittgenstein",
        ("RIPPER", "IREP"),
        "wittgenstein RIPPER or IREP classifier",
        ("ruleset_", "trainset_features_"),
    )
    positive = label_text(model.pos_class)
    # the learner's feature identifiers: their attribute names (``feature_names``, or as text)
    trained = model.trainset_features_
    rename = dict(zip(trained, _names(feature_names, [str(f) for f in trained], "feature_names")))
    bins = getattr(getattr(model, "bin_transformer_", None), "bins_", None) or {}  # bin labels
    rules: List[Rule] = []
    default = _negative_class(model.pos_class, negative_class)
    for rule in model.ruleset_.rules:
        unknown = [c.feature for c in rule.conds if c.feature not in rename]
        if unknown:
            raise ValueError(
                f"rule {rule} tests {unknown[0]!r}, which is not among the "
                f"learner's training features {list(rename)}"
            )
        conditions = [
            condition
            for c in rule.conds
            for condition in _ripper_conditions(rule, c, rename[c.feature], bins)
        ]
        if not conditions:  # an empty rule covers everything: all examples are positive
            default = positive
            break
        rules.append(Rule(f"R{len(rules) + 1:04d}", (tuple(conditions),), positive))
    rules.append(Rule(f"R{len(rules) + 1:04d}", (), default, is_default=True))
    kind = type(model).__name__
    header = PBMHeader(inducer=f"wittgenstein {kind}")
    return RuleSet(rules, header, file=f"<{kind}>", task="classification")


# ------------------------------------------------------------------------ imodels
@validate_params(
    {
        "model": "no_validation",  # an optional package's class, checked below
        "feature_names": _FEATURE_NAMES,
    }
)
def rule_list_to_rules(model: Any, *, feature_names: Optional[Sequence[str]] = None) -> RuleSet:
    """The decision list of a fitted ``imodels`` ``GreedyRuleListClassifier`` or
    ``OneRClassifier``, as ordered rules.

    The list tests one feature per step: step ``k`` sends the examples with
    ``x >= cutoff`` (``x < cutoff`` when the step is flipped) to a leaf predicting the
    class whose probability in that leaf exceeds one half, and passes the others on; the
    last entry is the leaf of the examples no step took. This gives one rule per step and
    a DEFAULT rule, to evaluate in ``"ordered"`` mode (the default of
    :func:`~xplique_ext.rules.score_rules` and
    :func:`~xplique_ext.rules.predict_rules`), which then predicts what
    ``model.predict`` predicts.

    Parameters
    ----------
    model
        A fitted ``imodels.GreedyRuleListClassifier`` or ``imodels.OneRClassifier``
        (binary classification: imodels supports no other).
    feature_names
        Attribute names, one per feature the model was trained on, in its training
        column order (default: ``model.feature_names_``).

    Returns
    -------
    RuleSet
        Rules ``attribute >= cutoff`` (or ``<``) with the classes of ``model.classes_`` as
        heads, in the list's order, then the DEFAULT rule.

    Examples
    --------
    >>> from imodels import GreedyRuleListClassifier
    >>> model = GreedyRuleListClassifier(max_depth=2).fit(
    ...     [[0.0], [1.0], [2.0], [3.0]], ["a", "a", "b", "b"], feature_names=["x"])
    >>> rules = rule_list_to_rules(model)
    >>> print(rules[0].to_string())
    R0001  IF "x" >= 1.5
            THEN CLASS = b
    >>> rules.default.head
    'a'
    """
    _check_model(
        model,
        "imodels",
        ("GreedyRuleListClassifier", "OneRClassifier"),
        "imodels GreedyRuleListClassifier or OneRClassifier",
        ("rules_", "classes_"),
    )
    steps = model.rules_
    if not len(steps):  # imodels' fit gives at least the final leaf
        raise ValueError("`model` is not fitted: its rule list `rules_` is empty")
    classes = [label_text(c) for c in model.classes_]
    if len(classes) != 2:
        raise ValueError(
            f"`model` must be a binary classifier, got {len(classes)} classes {classes}"
        )
    trained = [str(f) for f in model.feature_names_]
    rename = dict(zip(trained, _names(feature_names, trained, "feature_names")))

    def head(probability: float) -> str:
        # imodels: argmax of (1 - p, p), the first class on a tie (and for NaN)
        return classes[int(np.argmax([1.0 - probability, probability]))]

    rules: List[Rule] = []
    for k, step in enumerate(steps[:-1]):
        column = str(step["col"])
        if column not in rename:
            raise ValueError(
                f"step {k} of the rule list tests {column!r}, which is not among the "
                f"model's features {trained}"
            )
        operator = "<" if step["flip"] else ">="
        condition = Condition(rename[column], operator, _number(step["cutoff"], None))
        rules.append(Rule(f"R{k + 1:04d}", ((condition,),), head(float(step["val_right"]))))
    # imodels reads the last entry as the final leaf
    rules.append(Rule(f"R{len(steps):04d}", (), head(float(steps[-1]["val"])), is_default=True))
    kind = type(model).__name__
    header = PBMHeader(inducer=f"imodels {kind}")
    return RuleSet(rules, header, file=f"<{kind}>", task="classification")
