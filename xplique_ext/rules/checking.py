"""Checking rules against ``.names`` declarations: typed values, operators, heads.

This module sits over :mod:`~xplique_ext.rules.pbm` and :mod:`~xplique_ext.rules.names`
and under :mod:`~xplique_ext.rules.compile`.
"""

from __future__ import annotations

import math
from typing import Optional, Union

import pandas as pd

from ..commons.params import InstanceOf, validate_params
from .encoding import FALSE_TEXTS, TRUE_TEXTS, parse_numbers, real_value
from .errors import RuleParseError
from .names import Attribute, Names
from .pbm import RuleSet

__all__ = [
    "BOOLEAN_VALUES",
    "ORDERING_OPERATORS",
    "check_rules",
    "describe_domain",
    "real_value",
    "typed_value",
]

#: Operators that need an ordered attribute.
ORDERING_OPERATORS = ("<", "<=", ">", ">=")
#: Spellings of boolean values and what they mean.
BOOLEAN_VALUES = {**dict.fromkeys(TRUE_TEXTS, "true"), **dict.fromkeys(FALSE_TEXTS, "false")}


def typed_value(attribute: Attribute, text: str) -> Union[float, str, None]:
    """The value of ``text`` for ``attribute`` (None when it cannot be read).

    Numbers, dates (days since 1970-01-01) and times (seconds) become floats, booleans
    ``"true"`` or ``"false"``, nominal values stay text when declared.

    Examples
    --------
    >>> typed_value(Attribute("t", "time"), "01:30:00"), typed_value(Attribute("b", "boolean"), "Y")
    (5400.0, 'true')
    >>> typed_value(Attribute("x", "real"), "warm") is None
    True
    """
    kind = attribute.type
    if kind in ("integer", "real"):
        return real_value(text)
    if kind == "boolean":
        return BOOLEAN_VALUES.get(text.lower())
    if kind in ("date", "time"):  # read as the data reader reads them
        value = float(parse_numbers(kind, pd.Series([text], dtype=object)).values[0])
        return None if math.isnan(value) else value
    return text if attribute.values is None or text in attribute.values else None


def describe_domain(attribute: Attribute) -> str:
    """What the values of ``attribute`` may be, for error messages.

    Examples
    --------
    >>> describe_domain(Attribute("t", "time"))
    'a time hh:mm:ss'
    """
    if attribute.values is not None and attribute.type in ("nominal", "enumerated"):
        return f"one of {list(attribute.values)}"
    return {
        "integer": "a number",
        "real": "a number",
        "date": "a date yyyy/mm/dd",
        "time": "a time hh:mm:ss",
        "boolean": "true or false",
    }.get(attribute.type, "a value")


def _linear_fault(condition, names: Names) -> Optional[str]:
    """What is wrong with a linear combination's terms or value, in words, or None."""
    for coefficient, name in condition.terms:
        if not names[name].is_numeric:
            return (
                f"attribute {name!r} in a linear combination is {names[name].type}, "
                "not integer or real"
            )
        if real_value(coefficient) is None:
            return f"coefficient {coefficient!r} is not a number"
    if real_value(condition.value) is None:
        return f"value {condition.value!r} of a linear combination is not a number"
    return None


def _condition_fault(condition, names: Names) -> Optional[str]:
    """What is wrong with a condition for ``names``, in words, or None."""
    for name in condition.attributes:
        if name not in names:
            return f"attribute {name!r} is not declared in {names.file or 'the names'}"
        if names[name].is_derived:
            return f"attribute {name!r} is derived (:=) and has no values to test"
        if names[name].type == "ignore":
            return f"attribute {name!r} is declared 'ignore'"
        if name == names.class_name:
            return f"the body tests the class attribute {name!r}"
    if condition.is_linear:
        return _linear_fault(condition, names)
    attribute = names[condition.attribute]
    if condition.operator in ORDERING_OPERATORS and not attribute.is_ordered:
        return (
            f"operator {condition.operator!r} needs an ordered attribute, but "
            f"{attribute.name!r} is {attribute.type}"
        )
    values = condition.value if condition.operator == "in" else (condition.value,)
    for value in values:
        if typed_value(attribute, value) is None:
            return (
                f"value {value!r} is not valid for attribute {attribute.name!r} "
                f"(expected {describe_domain(attribute)})"
            )
    return None


@validate_params(
    {
        "rules": [InstanceOf(RuleSet, description="a RuleSet")],
        "names": [InstanceOf(Names, description="a Names object")],
    }
)
def check_rules(rules: RuleSet, names: Names) -> None:
    """Check every rule of ``rules`` against ``names``; raise :class:`~xplique_ext.rules.RuleParseError` at the first fault.

    Examples
    --------
    >>> from xplique_ext.rules import example_path, read_names, read_rules
    >>> names = read_names(example_path("voyage.names"))
    >>> check_rules(read_rules(example_path("voyage.cn2.ordered.pbm")), names)  # no error
    """
    head_type = names.class_attribute
    for rule in rules.all_rules:
        for condition in rule.conditions:
            fault = _condition_fault(condition, names)
            if fault:
                raise RuleParseError(
                    f"rule {rule.id}: {fault}",
                    file=rules.file,
                    line=condition.line or rule.line,
                    text=condition.to_string(),
                )
        if head_type is not None and typed_value(head_type, rule.head) is None:
            raise RuleParseError(
                f"rule {rule.id}: head {rule.head!r} is not a valid class (expected "
                f"{describe_domain(head_type)})",
                file=rules.file,
                line=rule.line,
                text=rule.head,
            )
