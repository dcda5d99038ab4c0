"""Checking rules against ``.names`` declarations: typed values, operators, heads.

This module sits under :mod:`~xplique_ext.rules.pbm` (whose ``RuleSet.validate`` calls
:func:`check_rules`) and :mod:`~xplique_ext.rules.compile`; it reads rules by their
attributes and imports neither.
"""

from __future__ import annotations

import math
import re
from typing import Union

import pandas as pd

from ..commons.params import InstanceOf, validate_params
from .errors import RuleParseError
from .names import Attribute, Names

__all__ = [
    "BOOLEAN_VALUES",
    "ORDERING_OPERATORS",
    "check_rules",
    "describe_domain",
    "typed_value",
]

#: Operators that need an ordered attribute.
ORDERING_OPERATORS = ("<", "<=", ">", ">=")
#: Spellings of boolean values and what they mean.
BOOLEAN_VALUES = {
    "true": "true",
    "t": "true",
    "yes": "true",
    "y": "true",
    "1": "true",
    "false": "false",
    "f": "false",
    "no": "false",
    "n": "false",
    "0": "false",
}


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
        try:
            value = float(text)
        except ValueError:
            return None
        return value if math.isfinite(value) else None
    if kind == "date":
        try:
            stamp = pd.to_datetime(text, format="%Y/%m/%d")
        except (ValueError, TypeError):
            return None
        return float((stamp - pd.Timestamp("1970-01-01")) / pd.Timedelta(days=1))
    if kind == "time":
        if not re.fullmatch(r"\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?", text):
            return None
        try:
            return float(pd.to_timedelta(text) / pd.Timedelta(seconds=1))
        except (ValueError, TypeError):
            return None
    if kind == "boolean":
        return BOOLEAN_VALUES.get(text.lower())
    if attribute.values is not None and text not in attribute.values:
        return None
    return text


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


@validate_params(
    {
        "rules": "no_validation",  # a RuleSet, duck-typed below (pbm builds on this module)
        "names": [InstanceOf(Names, description="a Names object")],
    }
)
def check_rules(rules, names: Names) -> None:
    """Check every rule of ``rules`` (a :class:`~xplique_ext.rules.RuleSet`) against
    ``names``; raise :class:`~xplique_ext.rules.RuleParseError` at the first fault.

    Examples
    --------
    >>> from xplique_ext.rules import example_path, read_names, read_rules
    >>> names = read_names(example_path("voyage.names"))
    >>> check_rules(read_rules(example_path("voyage.cn2.ordered.pbm")), names)  # no error
    """
    # duck-typed, since the RuleSet module (pbm) builds on this one
    if not (hasattr(rules, "all_rules") and hasattr(rules, "file")):
        raise TypeError(f"`rules` must be a RuleSet, got {type(rules).__name__}")
    if not isinstance(names, Names):
        raise TypeError(f"`names` must be a Names object, got {type(names).__name__}")
    source = names.file or "the names"
    file = rules.file

    def fail(rule, condition, message: str) -> RuleParseError:
        line = condition.line if condition is not None and condition.line else rule.line
        text = condition.to_string() if condition is not None else rule.head
        return RuleParseError(f"rule {rule.id}: {message}", file=file, line=line, text=text)

    for rule in rules.all_rules:
        for condition in rule.conditions:
            for name in condition.attributes:
                if name not in names:
                    raise fail(
                        rule,
                        condition,
                        f"attribute {name!r} is not declared in {source}",
                    )
                attribute = names[name]
                if attribute.is_derived:
                    raise fail(
                        rule,
                        condition,
                        f"attribute {name!r} is derived (:=) and has no values to test",
                    )
                if attribute.type == "ignore":
                    raise fail(rule, condition, f"attribute {name!r} is declared 'ignore'")
                if name == names.class_name:
                    raise fail(rule, condition, f"the body tests the class attribute {name!r}")
            if condition.is_linear:
                for coefficient, name in condition.terms:
                    if not names[name].is_numeric:
                        raise fail(
                            rule,
                            condition,
                            f"attribute {name!r} in a linear combination is {names[name].type}, "
                            "not integer or real",
                        )
                    if typed_value(Attribute("c", "real"), coefficient) is None:
                        raise fail(rule, condition, f"coefficient {coefficient!r} is not a number")
                if typed_value(Attribute("v", "real"), condition.value) is None:
                    raise fail(
                        rule,
                        condition,
                        f"value {condition.value!r} of a linear combination is not a number",
                    )
                continue
            attribute = names[condition.attribute]
            if condition.operator in ORDERING_OPERATORS and not attribute.is_ordered:
                raise fail(
                    rule,
                    condition,
                    f"operator {condition.operator!r} needs an ordered attribute, but "
                    f"{attribute.name!r} is {attribute.type}",
                )
            values = condition.value if condition.operator == "in" else (condition.value,)
            for value in values:
                if typed_value(attribute, value) is None:
                    raise fail(
                        rule,
                        condition,
                        f"value {value!r} is not valid for attribute {attribute.name!r} "
                        f"(expected {describe_domain(attribute)})",
                    )
        class_attribute = names.class_attribute
        if class_attribute is not None and typed_value(class_attribute, rule.head) is None:
            raise fail(
                rule,
                None,
                f"head {rule.head!r} is not a valid class (expected {describe_domain(class_attribute)})",
            )
