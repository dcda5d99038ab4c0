"""Score a rule set with FiRe and Qs from its predictions (the FiRe paper's protocol)."""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any, Optional, Sequence

import numpy as np
import pandas as pd

from ..commons.pandas_inputs import paired_by_index
from ..commons.params import Boolean, InstanceOf, Interval, Options, validate_params
from ..commons.warnings import DegenerateSettingWarning, UndefinedScoreWarning, warn
from .dataset import Dataset
from .encoding import class_text, real_value
from .evaluation import LABELS, MODE, RULES, check_label_classes, known_labels, predict_rules
from .fire import fire_score, qs_score
from .pbm import TASKS, RuleSet
from .validation import PSI

__all__ = ["RuleSetScore", "score_rules"]


@dataclass(frozen=True)
class RuleSetScore:
    """FiRe and Qs of a rule set, with the losses they come from.

    Attributes
    ----------
    predictive_loss
        ``p``: 1 - accuracy (classification) or mean absolute error (regression), over
        the examples that get a prediction.
    readability_loss
        ``r``: the number of rules (DEFAULT counted when asked).
    coverage
        Fraction of the examples that get a prediction (from a rule or the DEFAULT rule).
    fire
        psi-FiRe(p, r).
    qs
        Qs = p (2 - coverage) r.
    psi, task, n_examples
        The trade-off used, the task scored (``"classification"`` or ``"regression"``,
        see :func:`score_rules`), examples scored.
    """

    predictive_loss: float
    readability_loss: float
    coverage: float
    fire: float
    qs: float
    psi: float
    task: str
    n_examples: int


_REAL = [InstanceOf(float, numbers.Real, description="a real number (NaN where undefined)")]
RuleSetScore.__init__ = validate_params(
    {
        "predictive_loss": _REAL,
        "readability_loss": _REAL,
        "coverage": _REAL,
        "fire": _REAL,
        "qs": _REAL,
        "psi": [PSI],
        "task": [Options(TASKS)],
        "n_examples": [Interval(numbers.Integral, 0, None)],
    }
)(RuleSetScore.__init__)


def _task(
    rules: RuleSet, task: Optional[str], predictions: np.ndarray, reference: np.ndarray, mode: str
) -> str:
    """The task to score: ``task``, else the one the rules declare, else the one
    ``predict_rules`` read from the data (see the Notes of :func:`score_rules`)."""
    if task is not None and rules.task is not None and task != rules.task:
        raise ValueError(
            f"`task` must be the task the rules declare ({rules.task!r}, from the model they "
            f"describe), got {task!r}"
        )
    if task is None:
        task = rules.task
    numeric_heads = all(real_value(rule.head) is not None for rule in rules.all_rules)
    if task == "regression" and not numeric_heads:
        raise ValueError("`task` 'regression' needs rules whose heads are all numbers")
    predicted_as_numbers = predictions.dtype.kind == "f"
    if task is None and predicted_as_numbers:
        return "regression"
    if task is None:
        if numeric_heads and reference.dtype.kind == "f":
            warn(
                "score_rules: the rules declare no task and every head is a number: scored as "
                "classification (1 - accuracy), as predict_rules reads them; pass "
                "task='regression' for the mean absolute error",
                DegenerateSettingWarning,
            )
        return "classification"
    # unordered: a vote between classes, or the mean of numbers; it must be the task's
    if mode == "unordered" and predicted_as_numbers != (task == "regression"):
        predicted_by = "a vote between classes"
        if predicted_as_numbers:
            predicted_by = "the mean of the heads"
        raise ValueError(
            f"`mode` 'unordered' predicts by the class attribute of `data`, here by "
            f"{predicted_by}, which does not fit the task {task!r}: declare the class of "
            "`data` as the rules' task (a numeric class for regression, a nominal one "
            "for classification)"
        )
    return task


def _numbers(reference: np.ndarray, known: np.ndarray) -> np.ndarray:
    """The reference as float64 (NaN where unknown), or a ValueError: regression compares
    numbers."""
    values = np.full(reference.shape, np.nan)
    try:
        values[known] = reference[known].astype(np.float64)
    except (TypeError, ValueError):
        raise ValueError(
            "`reference` must hold numbers for the task 'regression', got values of dtype "
            f"{reference.dtype}"
        ) from None
    return values


def _as_dataset(data: Any, feature_names: Optional[Sequence[str]]) -> Dataset:
    if isinstance(data, (Dataset, pd.DataFrame)):
        return data if isinstance(data, Dataset) else Dataset.from_frame(data)
    array = np.asarray(data)
    if array.ndim != 2:
        raise TypeError(
            "`data` must be a Dataset, a DataFrame or an array (N, F) with "
            f"`feature_names`, got {type(data).__name__} of shape {array.shape}"
        )
    if feature_names is None:
        raise ValueError("`feature_names` is needed to match array columns to rule attributes")
    return Dataset.from_arrays(array, feature_names=feature_names)


@paired_by_index("data", "reference")
@validate_params(
    {  # data (a Dataset, a DataFrame or an array) and feature_names: below
        "rules": RULES,
        "data": "no_validation",
        "reference": LABELS,
        "psi": [PSI],
        "mode": MODE,
        "count_default": [Boolean()],
        "feature_names": "no_validation",
        "task": [Options(TASKS), None],
    }
)
def score_rules(
    rules: RuleSet,
    data: Any,
    reference: Any = None,
    *,
    psi: float = 1.0,
    mode: str = "ordered",
    count_default: bool = False,
    feature_names: Optional[Sequence[str]] = None,
    task: Optional[str] = None,
) -> RuleSetScore:
    """Score a rule set with FiRe and Qs against a black box (fidelity) or true labels.

    Parameters
    ----------
    rules
        The rule set (heads are class labels, or numbers for regression).
    data
        The examples: a :class:`~xplique_ext.rules.Dataset`, a DataFrame of the tested
        attributes, or an array ``(N, F)`` with ``feature_names``.
    reference
        ``(N,)`` outputs to match: the black box's predictions (fidelity) or the true
        labels. By default the class column of ``data``. A pandas Series pairs with a
        DataFrame ``data`` by their index (indexed differently: a ValueError). For
        classification, values that share no class with the heads are refused, head
        classes they never hold named in a warning; NaN, None and ``"?"`` are unknown (as
        ``labels`` of :func:`~xplique_ext.rules.evaluate_rules`).
    psi
        FiRe's trade-off (> 0).
    mode
        How the rules predict (see :func:`~xplique_ext.rules.predict_rules`).
    count_default
        Whether the DEFAULT rule counts in the readability loss ``r``.
    feature_names
        Column names when ``data`` is an array.
    task
        ``"classification"``, ``"regression"`` or None (default: the task the rules
        declare, see Notes). Given while the rules declare another task, it is refused:
        the task is decided in one place.

    Returns
    -------
    RuleSetScore
        ``p``, ``r``, coverage, FiRe and Qs (lower is better for both).

    Notes
    -----
    The task is the one the model declares, never guessed from the labels' dtype: the
    ``task`` given, else the rule set's :attr:`~xplique_ext.rules.RuleSet.task` (set by
    :func:`~xplique_ext.rules.tree_to_rules` from scikit-learn's ``is_classifier``, and
    by the rule learners' adapters), else, for rules that declare none (read from a PBM
    file), the way :func:`~xplique_ext.rules.predict_rules` reads the heads: regression
    for a numeric class attribute of ``data`` (its ``.names``), classification
    otherwise, with a DegenerateSettingWarning when every head is a number and the
    reference holds floats (pass ``task`` to say which). A classifier whose classes are
    ``0.0, 1.0, 2.0`` is scored on its accuracy, not on the distance between class ids.

    Classification: ``p = 1 - accuracy`` (labels compared as text, numbers by their
    value: ``1.0``, ``"1"`` and a head ``1.0`` are one class). Regression: ``p`` is the mean absolute error (every head must be a number).

    Examples
    --------
    >>> from xplique_ext.rules import load_voyage
    >>> rules, data = load_voyage("ordered")
    >>> score = score_rules(rules, data, psi=1.0)
    >>> score.readability_loss, round(score.predictive_loss, 3)
    (4.0, 0.2)
    """
    data = _as_dataset(data, feature_names)
    given = reference is not None
    if not given and not data.has_labels:
        raise ValueError("`data` has no class column: pass `reference`")
    reference = np.asarray(reference if given else data.labels())
    if reference.shape != (data.n_examples,):
        raise ValueError(f"`reference` must have shape ({data.n_examples},), got {reference.shape}")
    r = float(len(rules.all_rules if count_default else rules.rules))
    if r < 1:
        raise ValueError(
            "the rule set has no rule to count (FiRe needs r >= 1): pass count_default=True"
        )
    predictions = predict_rules(rules, data, mode)
    task = _task(rules, task, predictions, reference, mode)
    regression = task == "regression"
    predicted = ~pd.isna(predictions)
    known = known_labels(reference)
    if regression:  # heads kept as text when no numeric class is declared
        values = _numbers(reference, known)
        errors = np.abs(np.where(predicted, predictions, np.nan).astype(np.float64) - values)
    else:
        as_class = np.vectorize(class_text, otypes=[object])
        if given:  # 0/1 labels for heads go/dont_go would score p = 1 without a word
            heads = [rule.head for rule in rules.all_rules]
            check_label_classes(heads, reference[known], "reference")
        errors = (as_class(predictions) != as_class(reference)).astype(np.float64)
    scored = predicted & known
    coverage = float(predicted[known].mean()) if known.any() else float("nan")
    if not scored.any():
        warn(
            "no example gets both a prediction and a reference value: the predictive loss "
            "is undefined (NaN)",
            UndefinedScoreWarning,
        )
        return RuleSetScore(np.nan, r, coverage, np.nan, np.nan, psi, task, 0)
    p = float(errors[scored].mean())
    return RuleSetScore(
        p,
        r,
        coverage,
        fire_score(psi, p, r),
        qs_score(p, r, coverage),
        psi,
        task,
        int(scored.sum()),
    )
