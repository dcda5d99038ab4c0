"""Checking rules against ``.names`` declarations and turning conditions into boolean masks.

Every condition of a rule becomes one vectorised NumPy comparison over a whole encoded
column (see :class:`~xplique_ext.rules.dataset.Column`); no Python loop runs over the
examples. For each condition we compute the *certain* mask: the test holds and every
attribute it reads is known and applicable. The *possible* mask adds the examples where
an attribute the test reads is unknown (``?``), since the report evaluates a test on an
unknown value as true; a test on a not-applicable value (``!``) is false.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from .checking import BOOLEAN_VALUES, ORDERING_OPERATORS, check_rules, typed_value
from .dataset import Dataset
from .names import Names
from .pbm import Condition, Rule, RuleSet

__all__ = ["COMPARISONS", "CompiledCondition", "CompiledRule", "compile_rules", "typed_head"]


def typed_head(names: Optional[Names], head: str) -> Union[str, float]:
    """A rule head as a class label (str) or, for a numeric class, a float."""
    if names is not None and names.class_attribute is not None:
        attribute = names.class_attribute
        if attribute.is_numeric:
            return float(head)
        if attribute.type == "boolean":
            return BOOLEAN_VALUES.get(head.lower(), head)
    return head


@dataclass(frozen=True)
class CompiledCondition:
    """A condition ready for evaluation."""

    key: Tuple
    attributes: Tuple[str, ...]
    operator: str
    value: object
    terms: Tuple[Tuple[float, str], ...] = ()

    def certain(self, data: Dataset, index: Optional[np.ndarray] = None) -> np.ndarray:
        """Mask ``(N,)`` (or over the rows ``index``): the test holds and every attribute
        it reads is known and applicable."""
        op = self.operator

        def values_of(column):
            return column.values if index is None else column.values[index]

        def valid_of(column):
            return column.valid if index is None else column.valid[index]

        if self.terms:
            total = None
            for coefficient, name in self.terms:
                part = coefficient * values_of(data.column(name))
                total = part if total is None else total + part
            mask = _compare(total, op, self.value)
            if op == "!=":
                for name in self.attributes:
                    column = data.column(name)
                    if column.has_unknown or column.has_not_applicable:
                        mask &= valid_of(column)
            return mask
        column = data.column(self.attributes[0])
        values = values_of(column)
        missing = column.has_unknown or column.has_not_applicable
        if column.is_coded:
            if op == "in":
                lut = np.zeros(len(column.categories) + 2, dtype=bool)
                for v in self.value:
                    code = column.code(v)
                    if code >= 0:
                        lut[code + 2] = True
                return lut[values.astype(np.intp) + 2]
            code = column.code(self.value)
            if code < 0:  # a value never met in the data
                if op == "!=":
                    return valid_of(column).copy()
                if op in ("=", ">", ">="):
                    return np.zeros(values.shape, dtype=bool)
            mask = _compare(values, op, code)
            if missing and op in ("!=", "<", "<="):
                mask &= valid_of(column)
            return mask
        if op == "in":
            return np.isin(values, np.asarray(self.value, dtype=np.float64))
        mask = _compare(values, op, self.value)
        if missing and op == "!=":
            mask &= valid_of(column)
        return mask

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


#: The comparison of each PBM operator but ``in`` (elementwise on arrays).
COMPARISONS = {
    "=": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


def _compare(values: np.ndarray, op: str, value) -> np.ndarray:
    if op not in COMPARISONS:  # pragma: no cover - parser guarantees
        raise ValueError(f"unknown operator {op!r}")
    return COMPARISONS[op](values, value)


@dataclass(frozen=True)
class CompiledRule:
    """A rule ready for evaluation."""

    rule: Rule
    body: Tuple[Tuple[CompiledCondition, ...], ...]
    head: Union[str, float]
    attributes: Tuple[str, ...]


def _compile_condition(condition: Condition, names: Names) -> CompiledCondition:
    if condition.is_linear:
        terms = tuple((float(c), a) for c, a in condition.terms)
        value = float(condition.value)
        key = ("linear", terms, condition.operator, value)
        return CompiledCondition(key, condition.attributes, condition.operator, value, terms)
    attribute = names[condition.attribute]
    if condition.operator == "in":
        value = tuple(typed_value(attribute, v) for v in condition.value)
        key = (attribute.name, "in", frozenset(value))
    else:
        value = typed_value(attribute, condition.value)
        key = (attribute.name, condition.operator, value)
    if attribute.type == "enumerated" and condition.operator in ORDERING_OPERATORS:
        # codes follow the declared order, so ordering tests compare codes
        pass
    return CompiledCondition(key, (attribute.name,), condition.operator, value)


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


def unknown_rows(data: Dataset, attributes: Sequence[str]) -> np.ndarray:
    """Sorted indices of the examples with an unknown value in any of ``attributes``."""
    parts = [data.column(a).unknown_index for a in attributes if data.column(a).has_unknown]
    if not parts:
        return np.empty(0, dtype=np.intp)
    if len(parts) == 1:
        return parts[0]
    # a stable sort merges the sorted runs (no hashing); then drop the repeats
    rows = np.sort(np.concatenate(parts), kind="stable")
    first = np.empty(rows.shape, dtype=bool)
    first[:1] = True
    np.not_equal(rows[1:], rows[:-1], out=first[1:])
    return rows[first]


class MaskCache:
    """Certain masks of conditions shared by several rules, freed after their last use,
    and the unknown rows of each set of attributes."""

    def __init__(self, compiled: Sequence[CompiledRule], data: Dataset) -> None:
        self.data = data
        self.remaining: Dict[Tuple, int] = {}
        for rule in compiled:
            for conjunction in rule.body:
                for condition in conjunction:
                    self.remaining[condition.key] = self.remaining.get(condition.key, 0) + 1
        self.cache: Dict[Tuple, np.ndarray] = {}
        self.rows: Dict[Tuple[str, ...], np.ndarray] = {}

    def certain(self, condition: CompiledCondition) -> np.ndarray:
        """Certain mask ``(N,)`` of a condition (shared: never modify it)."""
        key = condition.key
        uses = self.remaining.get(key, 1)
        if uses <= 1:
            self.remaining.pop(key, None)
            mask = self.cache.pop(key, None)
            return condition.certain(self.data) if mask is None else mask
        self.remaining[key] = uses - 1
        mask = self.cache.get(key)
        if mask is None:
            mask = condition.certain(self.data)
            self.cache[key] = mask
        return mask

    def unknown_rows(self, attributes: Sequence[str]) -> np.ndarray:
        """:func:`unknown_rows` of ``attributes``, computed once per set of attributes."""
        key = tuple(sorted(set(attributes)))
        rows = self.rows.get(key)
        if rows is None:
            rows = self.rows[key] = unknown_rows(self.data, key)
        return rows

    def body(self, rule: CompiledRule, rows: Optional[np.ndarray] = None):
        """Certain coverage of a rule body ``(N,)`` (a fresh array the caller may modify);
        with ``rows``, also its possible coverage over ``rows`` (a test on an unknown value
        counting as true), as :func:`possible_on` gives it: ``(certain, possible)``."""
        covered = possible = None
        fresh = False  # whether ``covered`` is ours (not a cached mask)
        for conjunction in rule.body:
            part = part_possible = None
            part_fresh = False
            for condition in conjunction:
                mask = self.certain(condition)
                if rows is not None:
                    maybe = mask[rows]
                    maybe |= condition.unknown(self.data, rows)
                    if part_possible is None:
                        part_possible = maybe
                    else:
                        np.logical_and(part_possible, maybe, out=part_possible)
                if part is None:
                    part = mask
                elif part_fresh:
                    np.logical_and(part, mask, out=part)
                else:
                    part, part_fresh = np.logical_and(part, mask), True
            if part is None:  # an empty conjunction: true
                part, part_fresh = np.ones(self.data.n_examples, dtype=bool), True
                if rows is not None:
                    part_possible = np.ones(rows.shape, dtype=bool)
            if covered is None:
                covered, fresh = part, part_fresh
            elif fresh:
                np.logical_or(covered, part, out=covered)
            else:
                covered, fresh = np.logical_or(covered, part), True
            if rows is not None:
                if possible is None:
                    possible = part_possible
                else:
                    np.logical_or(possible, part_possible, out=possible)
        if covered is not None and not fresh:
            covered = covered.copy()
        if rows is None:
            return covered
        if possible is None:
            possible = np.zeros(rows.shape, dtype=bool)
        return covered, possible


def possible_on(rule: CompiledRule, data: Dataset, index: np.ndarray) -> np.ndarray:
    """Possible coverage (a test on an unknown value counts as true) of ``rule`` on the
    rows ``index`` (all rows when ``index`` is None)."""
    if index is None:
        index = np.arange(data.n_examples)
    covered = np.zeros(index.shape, dtype=bool)
    for conjunction in rule.body:
        part = np.ones(index.shape, dtype=bool)
        for condition in conjunction:
            part &= condition.certain(data, index) | condition.unknown(data, index)
        covered |= part
    return covered
