"""PBM rule files (Fig. 1, 2, 8 and 9 of the report): reading, checking and writing.

A PBM file starts with a header and lists rules of the form::

    Standard Rules Conversor v1.1.4 Copyright (c)Ronaldo C. Prati
    Inducer: cn2                   Input File: voyage.cn2.unordered_output
    Date: Thu Jun 14 21:15:06 2001

    R0001  IF humidity < 83.00
            AND windy = no
            THEN CLASS = go

    R0002  IF outlook = overcast
            OR 0.5 x temperature + 2 x humidity >= 180
            THEN CLASS = go

    R0003  DEFAULT CLASS = go

Conditions are ``attribute op value`` with ``op`` one of ``<=, >=, <, >, !=, =`` or
``attribute in {v1, v2, ...}``, or linear combinations ``c1 x a1 + c2 x a2 ... op value``
of numeric attributes (``*`` is accepted for ``x`` and ``-`` for ``+ -c``). ``AND`` binds
tighter than ``OR``. Identifiers that are not made of letters, digits, ``_``, ``.``,
``-`` may be quoted with ``"``. Keywords (``IF AND OR THEN CLASS DEFAULT``) are upper case.

The extended format (Fig. 8 and 9) adds the lines ``Rules Evaluated as ...``, ``Names
File: ... Data File: ...`` to the header and, after each rule, the frequencies
``[f_bh, f_bh̄, f_b̄h̄, f_b̄h, n] ?[... for the examples with unknown values]`` (the order
that Figure 12 shows for R0001). Both forms are read and written.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import os
import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple, Union

from ..commons.params import PATH, STRING, Boolean, InstanceOf, Interval, Options, validate_params
from .errors import RuleParseError
from .syntax import LINE_END, PBM_WORD, Token, quote, read_text, tokenize, write_text

__all__ = [
    "Condition",
    "Rule",
    "RuleSet",
    "PBMHeader",
    "read_rules",
    "parse_rules",
    "write_rules",
    "OPERATORS",
    "EVALUATION_MODES",
]

#: Comparison operators of the PBM grammar (``in`` tests membership in a set).
OPERATORS = ("<=", ">=", "<", ">", "!=", "=", "in")
#: The tasks a rule set may declare (see :class:`RuleSet`).
TASKS = ("classification", "regression")
#: Evaluation modes and their names in the ``Rules Evaluated as`` line.
EVALUATION_MODES = {
    "unordered": "UNORDERED",
    "ordered": "ORDERED",
    "inter-class": "INTER-CLASS ORDERED",
}
_KEYWORDS = ("IF", "AND", "OR", "THEN", "CLASS", "DEFAULT")
_RULE_START = re.compile(r"^\s*(R\d+)(?=\s|$)")
_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")
_LINE = [Interval(numbers.Integral, 0, None), None]
_PRECISION = [Interval(numbers.Integral, 0, None)]


def _quote(text: str) -> str:
    return quote(text, word=PBM_WORD, reserved=_KEYWORDS, reserved_any_case=("in", "x"))


@dataclass(frozen=True)
class Condition:
    """One test of a rule body.

    Attributes
    ----------
    attribute
        The tested attribute, or ``None`` for a linear combination.
    operator
        One of :data:`OPERATORS`.
    value
        The value as written (a tuple of values for ``in``).
    terms
        For a linear combination: ``((coefficient_text, attribute), ...)``.
    line
        Line of the condition in its file (not compared).
    """

    attribute: Optional[str]
    operator: str
    value: Union[str, Tuple[str, ...]]
    terms: Tuple[Tuple[str, str], ...] = ()
    line: Optional[int] = field(default=None, compare=False)

    @property
    def attributes(self) -> Tuple[str, ...]:
        """Attributes the condition reads."""
        return (
            tuple(dict.fromkeys(a for _, a in self.terms)) if self.is_linear else (self.attribute,)
        )

    @property
    def is_linear(self) -> bool:
        return self.attribute is None

    def to_string(self) -> str:
        left = (
            " + ".join(f"{c} x {_quote(a)}" for c, a in self.terms)
            if self.is_linear
            else _quote(self.attribute)
        )
        right = (
            "{" + ", ".join(map(_quote, self.value)) + "}"
            if self.operator == "in"
            else _quote(self.value)
        )
        return f"{left} {self.operator} {right}"

    __str__ = to_string


Condition.__init__ = validate_params(
    {
        "attribute": [STRING, None],
        "operator": [Options(OPERATORS)],
        "line": _LINE,
        "value": [STRING, InstanceOf(tuple, description="a tuple of strings")],
        "terms": [InstanceOf(tuple, description="a tuple of (coefficient, attribute) pairs")],
    }
)(Condition.__init__)


def _frequencies_text(values, precision: int) -> str:
    return "[" + "".join(f"{float(v):.{precision}f}," for v in values[:4]) + f"{int(values[4])}]"


@dataclass(frozen=True)
class Rule:
    """One rule ``IF body THEN CLASS = head`` (or the ``DEFAULT`` rule).

    Attributes
    ----------
    id
        The identifier (``R0001``...).
    body
        Disjunctive normal form: a tuple of conjunctions, each a tuple of
        :class:`Condition` (empty for the DEFAULT rule).
    head
        The predicted class as written (a number as text for regression heads).
    is_default
        Whether it is the ``DEFAULT`` rule.
    known, unknown
        The frequencies ``(f_bh, f_bh̄, f_b̄h̄, f_b̄h, n)`` read from an extended file, or
        ``None``.
    line
        Line where the rule starts (not compared).
    """

    id: str
    body: Tuple[Tuple[Condition, ...], ...]
    head: str
    is_default: bool = False
    known: Optional[Tuple[float, float, float, float, int]] = None
    unknown: Optional[Tuple[float, float, float, float, int]] = None
    line: Optional[int] = field(default=None, compare=False)

    @property
    def conditions(self) -> Tuple[Condition, ...]:
        """All conditions, in order."""
        return tuple(c for conjunction in self.body for c in conjunction)

    @property
    def attributes(self) -> Tuple[str, ...]:
        """Attributes the body tests, in order of first use."""
        return tuple(dict.fromkeys(a for c in self.conditions for a in c.attributes))

    @validate_params(
        {"known": "no_validation", "unknown": "no_validation", "precision": _PRECISION}
    )
    def to_string(self, known=None, unknown=None, precision: int = 3) -> str:
        """The rule as PBM text; ``known``/``unknown`` frequencies are appended when given."""
        if self.is_default:
            text = f"{self.id}  DEFAULT CLASS = {_quote(self.head)}"
        else:
            indent = " " * 8
            lines = []
            for conjunction in self.body:
                for position, condition in enumerate(conjunction):
                    if not lines:
                        lines.append(f"{self.id}  IF {condition}")
                    elif position == 0:
                        lines.append(f"{indent}OR {condition}")
                    else:
                        lines.append(f"{indent}AND {condition}")
            lines.append(f"{indent}THEN CLASS = {_quote(self.head)}")
            text = "\n".join(lines)
        if known is not None:
            text += "  " + _frequencies_text(known, precision)
            if unknown is not None:
                text += " ?" + _frequencies_text(unknown, precision)
        return text


_FREQUENCIES = [InstanceOf(tuple, description="a tuple (f_bh, f_bh̄, f_b̄h̄, f_b̄h, n)"), None]
Rule.__init__ = validate_params(
    {
        "id": [STRING],
        "body": [InstanceOf(tuple, description="a tuple of tuples of Condition")],
        "head": [STRING],
        "is_default": [Boolean()],
        "known": _FREQUENCIES,
        "unknown": _FREQUENCIES,
        "line": _LINE,
    }
)(Rule.__init__)


@dataclass(frozen=True)
class PBMHeader:
    """The header lines of a PBM file (all optional)."""

    conversor: Optional[str] = None
    inducer: Optional[str] = None
    input_file: Optional[str] = None
    date: Optional[str] = None
    evaluated_as: Optional[str] = None
    names_file: Optional[str] = None
    data_file: Optional[str] = None

    def lines(self) -> List[str]:
        """The header as PBM text lines (a conversor line written when none was read)."""
        from .. import __version__

        out = [
            f"Standard Rules Conversor xplique_ext-{__version__}"
            if self.conversor is None
            else self.conversor
        ]
        if self.inducer is not None or self.input_file is not None:
            inducer = f"Inducer: {self.inducer or ''}"
            out.append(
                inducer
                if self.input_file is None
                else f"{inducer.ljust(30)} Input File: {self.input_file}"
            )
        if self.date is not None:
            out.append(f"Date: {self.date}")
        files = [
            f"{what} File: {name}"
            for what, name in (("Names", self.names_file), ("Data", self.data_file))
            if name is not None
        ]
        extended = [] if self.evaluated_as is None else [f"Rules Evaluated as {self.evaluated_as}"]
        if files:
            extended.append("   ".join(files))
        return out + [""] + extended if extended else out


PBMHeader.__init__ = validate_params(
    {item.name: [STRING, None] for item in dataclasses.fields(PBMHeader)}
)(PBMHeader.__init__)


class RuleSet:
    """An ordered list of rules and an optional DEFAULT rule.

    Parameters
    ----------
    rules
        The rules, in file order; at most one DEFAULT rule, which must come last.
    header
        The header of the PBM file.
    file
        Where the rules come from (for messages).
    task
        The task of the model the rules describe, as that model declares it:
        ``"classification"`` (heads are classes, even numeric ones such as ``1.0``),
        ``"regression"`` (heads are predicted values), or None (not declared: rules read
        from a PBM file). :func:`~xplique_ext.rules.tree_to_rules` sets it from the tree
        (scikit-learn's ``is_classifier``), the rule learners' adapters to
        ``"classification"``; :func:`~xplique_ext.rules.score_rules` reads it.

    Examples
    --------
    >>> rules = parse_rules('''
    ... R0001 IF windy = no THEN CLASS = go
    ... R0002 DEFAULT CLASS = dont_go''')
    >>> len(rules), rules.default.head, rules[0].attributes
    (1, 'dont_go', ('windy',))
    """

    @validate_params(
        {
            "rules": [InstanceOf(list, tuple, description="a list or tuple of Rule")],
            "header": [InstanceOf(PBMHeader), None],
            "file": [STRING, None],
            "task": [Options(TASKS), None],
        }
    )
    def __init__(
        self,
        rules: Sequence[Rule],
        header: Optional[PBMHeader] = None,
        file: Optional[str] = None,
        *,
        task: Optional[str] = None,
    ) -> None:
        rules = list(rules)
        self.file = file
        self.task = task
        self.header = header if header is not None else PBMHeader()
        seen = set()
        for k, rule in enumerate(rules):
            if not isinstance(rule, Rule):
                raise TypeError(f"`rules` must hold Rule objects, got {type(rule).__name__}")
            if rule.id in seen:
                raise RuleParseError(
                    f"rule id {rule.id} is used twice", file=file, line=rule.line, text=rule.id
                )
            if rule.is_default and k != len(rules) - 1:
                raise RuleParseError(
                    "the DEFAULT rule must be the last rule",
                    file=file,
                    line=rule.line,
                    text=rule.id,
                )
            seen.add(rule.id)
        self.default: Optional[Rule] = rules.pop() if rules and rules[-1].is_default else None
        self.rules: Tuple[Rule, ...] = tuple(rules)

    def __len__(self) -> int:
        """Number of rules, the DEFAULT rule excluded."""
        return len(self.rules)

    def __getitem__(self, index: int) -> Rule:
        return self.rules[index]

    def __iter__(self):
        return iter(self.rules)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RuleSet):
            return NotImplemented
        return (self.rules, self.default) == (other.rules, other.default)

    def __repr__(self) -> str:
        return f"RuleSet({len(self.rules)} rules, default={getattr(self.default, 'head', None)!r})"

    @property
    def all_rules(self) -> Tuple[Rule, ...]:
        """The rules followed by the DEFAULT rule when there is one."""
        return self.rules + ((self.default,) if self.default is not None else ())

    @property
    def attributes(self) -> Tuple[str, ...]:
        """Attributes tested by any rule."""
        return tuple(dict.fromkeys(a for r in self.rules for a in r.attributes))

    @property
    def heads(self) -> Tuple[str, ...]:
        """Heads of the rules (DEFAULT excluded)."""
        return tuple(r.head for r in self.rules)

    @validate_params(
        {
            "evaluation": "no_validation",
            "names_file": [STRING, None],
            "data_file": [STRING, None],
            "precision": _PRECISION,
            "header": [InstanceOf(PBMHeader), None],
        }
    )
    def to_string(
        self,
        evaluation=None,
        *,
        names_file: Optional[str] = None,
        data_file: Optional[str] = None,
        precision: int = 3,
        header: Optional[PBMHeader] = None,
    ) -> str:
        """PBM text; the extended format (Fig. 8) when ``evaluation`` is given.

        Parameters
        ----------
        evaluation
            A :class:`~xplique_ext.rules.RuleEvaluation` of these rules: adds the ``Rules
            Evaluated as`` and ``Names File:``/``Data File:`` lines and the frequencies.
        names_file, data_file
            Override the file names written in the extended header.
        precision
            Decimals of the frequencies (3 in the report).
        header
            Override the header (default: the one read, or a minimal one).
        """
        frequencies = [(rule.known, rule.unknown) for rule in self.rules]
        changes = {"names_file": names_file, "data_file": data_file}
        if evaluation is not None:
            if len(evaluation.rules) != len(self.rules):
                raise ValueError(
                    f"`evaluation` holds {len(evaluation.rules)} rules, this set {len(self.rules)}"
                )
            frequencies = list(
                zip(evaluation.known.frequencies(), evaluation.unknown.frequencies())
            )
            changes = {
                "evaluated_as": EVALUATION_MODES[evaluation.mode],
                "names_file": evaluation.names_file if names_file is None else names_file,
                "data_file": evaluation.data_file if data_file is None else data_file,
            }
        header = dataclasses.replace(
            self.header if header is None else header,
            **{k: v for k, v in changes.items() if v is not None},
        )
        blocks = [
            rule.to_string(known, unknown, precision)  # the DEFAULT rule: no frequencies
            for rule, (known, unknown) in zip(self.all_rules, frequencies + [(None, None)])
        ]
        return "\n".join(header.lines() + [""] + [f"{block}\n" for block in blocks])


# -- reading ------------------------------------------------------------------------------
#: One token of a rule at a time: white space, an operator, a punctuation mark or a word
#: (a ``+`` is part of a word only as an exponent's sign, as in ``1e+3``); quoted
#: identifiers are read by :func:`~xplique_ext.rules.syntax.tokenize`.
_TOKEN = re.compile(
    r'\s+|(?P<quoted>")|(?P<op>[<>!]=|[<>=])|(?P<punct>[][{}(),?*+])'
    r'|(?P<word>(?:[^\s<>=!\[\]{}(),?*+"]|(?<=\d[eE])\+)+)'
)


class _RuleParser:
    """A recursive-descent parser of one rule's tokens."""

    def __init__(self, chunk: Sequence[Tuple[int, str]], file: str) -> None:
        self.tokens = list(tokenize(chunk, _TOKEN, RuleParseError, file))  # tokens[0]: the id
        self.pos = 1  # :meth:`rule` reads after the id
        self.lines = dict(chunk)
        self.file = file

    def error(self, message: str, token: Optional[Token] = None) -> RuleParseError:
        if self.pos >= len(self.tokens):
            message += " (the rule ends too early)"
        line = (token or self.tokens[min(self.pos, len(self.tokens) - 1)]).line
        return RuleParseError(message, file=self.file, line=line, text=self.lines.get(line, ""))

    def peek(self, offset: int = 0) -> Optional[Token]:
        k = self.pos + offset
        return self.tokens[k] if k < len(self.tokens) else None

    def got(self) -> str:
        """The next token, in words, for messages."""
        token = self.peek()
        return "the end of the rule" if token is None else repr(token.value)

    def accept(self, *values: str) -> Optional[str]:
        """Step over the next token when it is one of ``values`` (a keyword, an operator
        or a punctuation mark, not quoted); return its text, or None."""
        token = self.peek()
        if token is None or token.kind == "quoted" or token.value not in values:
            return None
        self.pos += 1
        return token.value

    def expect(self, *values: str, what: Optional[str] = None) -> str:
        """Step over the next token, one of ``values`` (else an error naming ``what``, by
        default the first value); return its text."""
        value = self.accept(*values)
        if value is None:
            raise self.error(f"expected {what or repr(values[0])}, got {self.got()}")
        return value

    def take(self, what: str = "a value", number: bool = False) -> str:
        """The text of the next token, a value (a number with ``number``)."""
        token = self.peek()
        if not self._is_value(token, number):
            raise self.error(f"expected {what}, got {self.got()}")
        self.pos += 1
        return token.value

    @staticmethod
    def _is_value(token: Optional[Token], number: bool) -> bool:
        """Whether ``token`` is a value: a number with ``number``, else a quoted text or a
        word that is not a keyword."""
        if token is None:
            return False
        if number:
            return token.kind == "word" and bool(_NUMBER.match(token.value))
        if token.kind == "quoted":
            return True
        return token.kind == "word" and token.value not in _KEYWORDS

    def several(self, item, separator: str) -> tuple:
        """``item (separator item)*``: the items ``item()`` parsed."""
        items = [item()]
        while self.accept(separator):
            items.append(item())
        return tuple(items)

    def rule(self) -> Rule:
        id_token = self.tokens[0]  # a rule starts with its id
        default = self.accept("DEFAULT") is not None
        body = ()
        if not default:
            self.expect("IF", what="IF")
            body = self.several(lambda: self.several(self.condition, "AND"), "OR")
            self.expect("THEN", what="THEN")
        self.expect("CLASS", what="CLASS")
        self.expect("=")
        head = self.take("the default class" if default else "the class")
        known = unknown = None
        if self.accept("["):
            known = self.frequencies()
            if self.accept("?"):
                self.expect("[")
                unknown = self.frequencies()
        if (token := self.peek()) is not None:
            raise self.error(f"unexpected {token.value!r} after the rule head", token)
        return Rule(id_token.value, body, head, default, known, unknown, line=id_token.line)

    def condition(self) -> Condition:
        first, second = self.peek(), self.peek(1)
        if first is None:
            raise self.error("expected a condition")
        if (
            first.kind == "word"
            and _NUMBER.match(first.value)
            and second is not None
            and (second.value == "*" or (second.kind == "word" and second.value == "x"))
        ):
            terms = self.linear()
            operator = self.operator(allow_in=False)
            return Condition(None, operator, self.take("a number"), terms, line=first.line)
        attribute = self.take("an attribute")
        operator = self.operator(allow_in=True)
        if operator != "in":
            return Condition(attribute, operator, self.take(), line=first.line)
        self.expect("{")
        values = self.several(self.take, ",")
        self.expect("}")
        return Condition(attribute, "in", values, line=first.line)

    def operator(self, allow_in: bool) -> str:
        return self.expect(
            *OPERATORS[:-1],
            *(("in", "IN") if allow_in else ()),
            what=f"an operator ({', '.join(OPERATORS)})",
        ).lower()

    def linear(self) -> Tuple[Tuple[str, str], ...]:
        terms = []
        sign = "+"
        while sign:
            text = self.take("a numeric coefficient", number=True)
            self.expect("x", "*", what="'x' after a coefficient")
            if sign == "-":
                text = text[1:] if text.startswith("-") else "-" + text.lstrip("+")
            terms.append((text, self.take("a numeric attribute")))
            sign = self.accept("+", "-")
        return tuple(terms)

    def frequencies(self) -> Tuple[float, float, float, float, int]:
        """``f_bh, f_bh̄, f_b̄h̄, f_b̄h, n]``, after the opening bracket."""
        values = [float(self.take("a number", number=True))]
        for _ in range(4):
            self.expect(",")
            values.append(float(self.take("a number", number=True)))
        self.expect("]")
        n = values[4]
        if not all(math.isfinite(v) for v in values) or n < 0 or n != int(n):
            raise self.error("frequencies must be finite and n a non-negative integer")
        return (*values[:4], int(values[4]))


#: One item of a header line: the conversor line whole, or a label and its value (an
#: ``Inducer:`` line may go on with ``Input File:``, a ``Names File:`` one with ``Data File:``).
_HEADER_ITEM = re.compile(
    r"\s*(?:(?P<conversor>Standard Rules Conversor.*?)|(?P<label>Inducer:|"
    r"Input File:|Date:|Rules Evaluated as|Names File:|Data File:)\s*"
    r"(?P<value>.*?))\s*(?=Input File:|Data File:|$)"
)
_HEADER_FIELDS = {
    "Inducer:": "inducer",
    "Input File:": "input_file",
    "Date:": "date",
    "Rules Evaluated as": "evaluated_as",
    "Names File:": "names_file",
    "Data File:": "data_file",
}


def _parse_header(lines: Sequence[Tuple[int, str]], file: str) -> PBMHeader:
    fields: Dict[str, Optional[str]] = {}
    for number, line in lines:
        position = 0
        while line[position:].strip():
            if (match := _HEADER_ITEM.match(line, position)) is None:
                raise RuleParseError(
                    "expected a header line (Standard Rules Conversor, Inducer:, "
                    "Date:, Rules Evaluated as, Names File:) or a rule starting "
                    "with its id (R0001 IF ...)",
                    file=file,
                    line=number,
                    text=line,
                )
            key = "conversor" if match["conversor"] else _HEADER_FIELDS[match["label"]]
            fields[key] = match["conversor"] or match["value"] or None
            position = match.end()
    evaluated = fields.get("evaluated_as")
    if evaluated is not None and evaluated.upper() not in EVALUATION_MODES.values():
        raise RuleParseError(
            f"unknown evaluation mode (expected one of {list(EVALUATION_MODES.values())})",
            file=file,
            text=evaluated,
        )
    return PBMHeader(**fields)


@validate_params({"text": [STRING], "file": [STRING]})
def parse_rules(text: str, file: str = "<string>") -> RuleSet:
    """Read PBM rules (plain or extended) from a string.

    Parameters
    ----------
    text
        The content of a PBM file.
    file
        A name for the source, used in messages.

    Raises
    ------
    RuleParseError
        For a malformed header or rule; the message gives the file, the line number and
        the offending line.
    """
    numbered = list(enumerate(LINE_END.split(text), 1))
    header_lines, chunks = [], []  # (number, line) pairs; one list of them per rule
    for number, line in numbered:
        if _RULE_START.match(line):
            chunks.append([(number, line)])
        elif not chunks:
            header_lines.append((number, line))
        elif line.strip():
            chunks[-1].append((number, line))
    header = _parse_header(header_lines, file)
    rules = [_RuleParser(chunk, file).rule() for chunk in chunks]
    if not rules:
        raise RuleParseError("no rule found", file=file)
    try:
        return RuleSet(rules, header, file=file)
    except RuleParseError as err:  # a rule read here has a line: show it, not the rule's id
        raise RuleParseError(
            err.message, file=file, line=err.line, text=numbered[err.line - 1][1]
        ) from None


@validate_params({"path": [PATH]})
def read_rules(path: Union[str, os.PathLike]) -> RuleSet:
    """Read a PBM rule file.

    Examples
    --------
    >>> from xplique_ext.rules import example_path
    >>> rules = read_rules(example_path("voyage.cn2.ordered.pbm"))
    >>> [r.id for r in rules], rules.default.head
    (['R0001', 'R0002', 'R0003', 'R0004'], 'go')
    """
    return parse_rules(read_text(path), file=os.fspath(path))


@validate_params(
    {
        "rules": [InstanceOf(RuleSet, description="a RuleSet")],
        "path": [PATH],
        "evaluation": "no_validation",
    }
)  # checked by RuleSet.to_string
def write_rules(rules: RuleSet, path: Union[str, os.PathLike], evaluation=None, **kwargs) -> None:
    """Write :meth:`RuleSet.to_string` (with ``evaluation``, the frequencies) to ``path``."""
    write_text(path, rules.to_string(evaluation, **kwargs))
