"""Checking rules against ``.names`` declarations and turning conditions into boolean masks.

Every condition of a rule becomes one vectorised NumPy comparison over a whole encoded
column (see :class:`~xplique_ext.rules.encoding.Column`); no Python loop runs over the
examples. For each condition we compute the *certain* mask: the test holds and every
attribute it reads is known and applicable. The *possible* mask adds the examples where
an attribute the test reads is unknown (``?``), since the report evaluates a test on an
unknown value as true; a test on a not-applicable value (``!``) is false.
"""

from __future__ import annotations

import operator
from collections import Counter
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from .checking import BOOLEAN_VALUES, check_rules, typed_value
from .dataset import Dataset
from .names import Names
from .pbm import Condition, Rule, RuleSet

__all__ = ["COMPARISONS", "CompiledCondition", "CompiledRule", "compile_rules", "typed_head"]

#: The comparison of each PBM operator but ``in`` (elementwise on arrays).
COMPARISONS = {
    "=": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


def typed_head(names: Names, head: str) -> Union[str, float]:
    """A rule head as a class label (str, ``"true"`` or ``"false"`` for a boolean class)
    or, for a numeric class, a float. A head :func:`check_rules` did not check keeps its
    text (boolean class) or raises ``float``'s ValueError (numeric class)."""
    attribute = names.class_attribute
    if attribute is not None and attribute.is_numeric:
        return float(head)
    if attribute is not None and attribute.type == "boolean":
        return BOOLEAN_VALUES.get(head.lower(), head)
    return head


@dataclass(frozen=True)
class CompiledCondition:
    """A condition ready for evaluation."""

    attributes: Tuple[str, ...]
    operator: str
    value: object
    terms: Tuple[Tuple[float, str], ...] = ()

    @property
    def key(self) -> Tuple:
        """What makes two conditions one mask (the values of ``in`` as a set)."""
        value = frozenset(self.value) if self.operator == "in" else self.value
        return self.attributes, self.operator, value, self.terms

    def _known(self, mask: np.ndarray, data: Dataset, operators: Sequence[str]) -> np.ndarray:
        """``mask`` restricted to the examples whose attributes read are known and
        applicable, for the ``operators`` that could hold on the encoding of a missing
        value (NaN, or a negative code)."""
        if self.operator in operators:
            for name in self.attributes:
                column = data.column(name)
                if column.has_unknown or column.has_not_applicable:
                    mask &= column.valid
        return mask

    def certain(self, data: Dataset) -> np.ndarray:
        """Mask ``(N,)``: the test holds and every attribute it reads is known and
        applicable."""
        op = self.operator
        compare = COMPARISONS.get(op)
        column = data.column(self.attributes[0])
        if self.terms or not column.is_coded:  # numbers (NaN where missing)
            values = (
                sum(c * data.column(a).values for c, a in self.terms)
                if self.terms
                else column.values
            )
            if op == "in":
                return np.isin(values, np.asarray(self.value, dtype=np.float64))
            return self._known(compare(values, self.value), data, ("!=",))
        if op == "in":  # a look-up table over the codes, shifted past the missing ones
            table = np.zeros(len(column.categories) + 2, dtype=bool)
            table[[column.code(v) + 2 for v in self.value if column.code(v) >= 0]] = True
            return table[column.values.astype(np.intp) + 2]
        code = column.code(self.value)
        if code < 0 and op == "!=":  # a value never met in the data
            return column.valid.copy()
        if code < 0 and op in ("=", ">", ">="):
            return np.zeros(column.values.shape, dtype=bool)
        return self._known(compare(column.values, code), data, ("!=", "<", "<="))

    def unknown(self, data: Dataset, index: np.ndarray) -> np.ndarray:
        """Mask over ``index``: some attribute read is unknown and none is not applicable."""
        unknown = np.zeros(index.shape, dtype=bool)
        applicable = np.ones(index.shape, dtype=bool)
        for name in self.attributes:
            column = data.column(name)
            if column.has_unknown:
                unknown |= column.unknown[index]
            if column.has_not_applicable:
                applicable &= ~column.not_applicable[index]
        return unknown & applicable


@dataclass(frozen=True)
class CompiledRule:
    """A rule ready for evaluation."""

    rule: Rule
    body: Tuple[Tuple[CompiledCondition, ...], ...]
    head: Union[str, float]
    attributes: Tuple[str, ...]


def _compile_condition(condition: Condition, names: Names) -> CompiledCondition:
    if condition.is_linear:
        return CompiledCondition(
            condition.attributes,
            condition.operator,
            float(condition.value),
            tuple((float(c), a) for c, a in condition.terms),
        )
    attribute = names[condition.attribute]  # enumerated: codes follow the declared order
    value = (
        tuple(typed_value(attribute, v) for v in condition.value)
        if condition.operator == "in"
        else typed_value(attribute, condition.value)
    )
    return CompiledCondition((attribute.name,), condition.operator, value)


def compile_rules(
    rules: RuleSet, names: Names
) -> Tuple[List[CompiledRule], Optional[Union[str, float]]]:
    """Check ``rules`` against ``names`` and compile them.

    Returns the compiled rules (DEFAULT excluded) and the typed DEFAULT head (or None).
    """
    check_rules(rules, names)
    compiled = []
    for rule in rules.rules:
        body = tuple(tuple(_compile_condition(c, names) for c in conj) for conj in rule.body)
        compiled.append(CompiledRule(rule, body, typed_head(names, rule.head), rule.attributes))
    default = None if rules.default is None else typed_head(names, rules.default.head)
    return compiled, default


def _union(parts: Sequence[np.ndarray]) -> np.ndarray:
    """The sorted union of sorted index arrays: a stable sort merges the sorted runs (no
    hashing, unlike ``np.unique``: 5x faster here), then the repeats are dropped."""
    if len(parts) < 2:
        return parts[0] if parts else np.empty(0, dtype=np.intp)
    rows = np.sort(np.concatenate(parts), kind="stable")
    first = np.ones(rows.shape, dtype=bool)
    np.not_equal(rows[1:], rows[:-1], out=first[1:])
    return rows[first]


class MaskCache:
    """Certain masks of conditions shared by several rules, freed after their last use,
    and the unknown rows of each set of attributes."""

    def __init__(self, compiled: Sequence[CompiledRule], data: Dataset) -> None:
        self.data = data
        self.remaining = Counter(c.key for rule in compiled for part in rule.body for c in part)
        self.cache: Dict[Tuple, np.ndarray] = {}
        self.rows: Dict[Tuple[str, ...], np.ndarray] = {}

    def certain(self, condition: CompiledCondition) -> np.ndarray:
        """Certain mask ``(N,)`` of a condition (shared: never modify it)."""
        key = condition.key
        if key not in self.cache:
            self.cache[key] = condition.certain(self.data)
        self.remaining[key] -= 1
        return self.cache.pop(key) if self.remaining[key] <= 0 else self.cache[key]

    def unknown_rows(self, attributes: Sequence[str]) -> np.ndarray:
        """Sorted indices of the examples with an unknown value in any of ``attributes``,
        computed once per set of attributes."""
        key = tuple(sorted(set(attributes)))
        if key not in self.rows:
            columns = [self.data.column(a) for a in key]
            self.rows[key] = _union([c.unknown_index for c in columns if c.has_unknown])
        return self.rows[key]

    def body(self, rule: CompiledRule, rows: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        """Certain coverage of a rule body ``(N,)`` (a fresh array the caller may modify)
        and its possible coverage over ``rows`` (a test on an unknown value counting as
        true)."""
        covered = np.zeros(self.data.n_examples, bool)
        possible = np.zeros(rows.shape, bool)
        for conjunction in rule.body:
            part = np.ones(covered.shape, bool)
            part_possible = np.ones(possible.shape, bool)
            for condition in conjunction:
                mask = self.certain(condition)
                part &= mask
                if rows.size:
                    part_possible &= mask[rows] | condition.unknown(self.data, rows)
            covered |= part
            possible |= part_possible
        return covered, possible
