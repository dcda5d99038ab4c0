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

import math
import os
import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple, Union

from ..commons.params import InstanceOf, validate_params
from ..commons.validation import check_int
from .checking import check_rules
from .errors import RuleParseError
from .names import Names
from .syntax import PBM_WORD, Token, quote, read_text, scan_quoted
from .validation import PATH, TEXT

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
#: Evaluation modes and their names in the ``Rules Evaluated as`` line.
EVALUATION_MODES = {
    "unordered": "UNORDERED",
    "ordered": "ORDERED",
    "inter-class": "INTER-CLASS ORDERED",
}
_KEYWORDS = ("IF", "AND", "OR", "THEN", "CLASS", "DEFAULT")
_RULE_START = re.compile(r"^\s*(R\d+)(?=\s|$)")
_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


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
        if self.attribute is not None:
            return (self.attribute,)
        return tuple(dict.fromkeys(a for _, a in self.terms))

    @property
    def is_linear(self) -> bool:
        return self.attribute is None

    def to_string(self) -> str:
        if self.is_linear:
            parts = []
            for k, (coefficient, attribute) in enumerate(self.terms):
                prefix = "" if k == 0 else " + "
                parts.append(f"{prefix}{coefficient} x {_quote(attribute)}")
            left = "".join(parts)
        else:
            left = _quote(self.attribute)
        if self.operator == "in":
            right = "{" + ", ".join(_quote(v) for v in self.value) + "}"
        else:
            right = _quote(self.value)
        return f"{left} {self.operator} {right}"

    def __str__(self) -> str:
        return self.to_string()


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

    def to_string(self, known=None, unknown=None, precision: int = 3) -> str:
        """The rule as PBM text; ``known``/``unknown`` frequencies are appended when given."""
        precision = check_int(precision, "precision", minimum=0)
        if self.is_default:
            text = f"{self.id}  DEFAULT CLASS = {_quote(self.head)}"
        else:
            lines = []
            for j, conjunction in enumerate(self.body):
                for k, condition in enumerate(conjunction):
                    keyword = "IF" if (j, k) == (0, 0) else ("OR" if k == 0 else "AND")
                    if (j, k) == (0, 0):
                        lines.append(f"{self.id}  IF {condition.to_string()}")
                    else:
                        lines.append(f"{' ' * 8}{keyword} {condition.to_string()}")
            lines.append(f"{' ' * 8}THEN CLASS = {_quote(self.head)}")
            text = "\n".join(lines)
        if known is not None:
            text += "  " + _format_frequencies(known, precision)
            if unknown is not None:
                text += " ?" + _format_frequencies(unknown, precision)
        return text


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

    Examples
    --------
    >>> rules = parse_rules('''
    ... R0001 IF windy = no THEN CLASS = go
    ... R0002 DEFAULT CLASS = dont_go''')
    >>> len(rules), rules.default.head, rules[0].attributes
    (1, 'dont_go', ('windy',))
    """

    def __init__(
        self,
        rules: Sequence[Rule],
        header: Optional[PBMHeader] = None,
        file: Optional[str] = None,
    ) -> None:
        rules = list(rules)
        self.file = file
        self.header = header if header is not None else PBMHeader()
        seen = set()
        for k, rule in enumerate(rules):
            if not isinstance(rule, Rule):
                raise TypeError(f"`rules` must hold Rule objects, got {type(rule).__name__}")
            if rule.id in seen:
                raise RuleParseError(
                    f"rule id {rule.id} is used twice", file=file, line=rule.line, text=rule.id
                )
            seen.add(rule.id)
            if rule.is_default and k != len(rules) - 1:
                raise RuleParseError(
                    "the DEFAULT rule must be the last rule",
                    file=file,
                    line=rule.line,
                    text=rule.id,
                )
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
        default = None if self.default is None else self.default.head
        return f"RuleSet({len(self.rules)} rules, default={default!r})"

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

    def n_rules(self, count_default: bool = False) -> int:
        """Number of rules, counting the DEFAULT rule or not."""
        return len(self.rules) + int(count_default and self.default is not None)

    # -- checking -------------------------------------------------------------------------
    def validate(self, names: Names) -> None:
        """Check the rules against ``.names`` declarations; nothing is evaluated otherwise.

        Raises
        ------
        RuleParseError
            For an attribute missing from ``names`` (the message names the rule and the
            attribute), a derived, ignored or class attribute in a body, an ordering test
            on an unordered attribute, a value outside a nominal domain, a non-numeric
            value for a numeric attribute, a linear combination of non-numeric attributes,
            or a head outside the class domain.
        """
        check_rules(self, names)

    # -- writing --------------------------------------------------------------------------
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
        precision = check_int(precision, "precision", minimum=0)
        header = header if header is not None else self.header
        out = []
        conversor = header.conversor
        if conversor is None:
            from .. import __version__

            conversor = f"Standard Rules Conversor xplique_ext-{__version__}"
        out.append(conversor)
        if header.inducer is not None or header.input_file is not None:
            left = f"Inducer: {header.inducer or ''}"
            line = left
            if header.input_file is not None:
                line = f"{left.ljust(30)} Input File: {header.input_file}"
            out.append(line)
        if header.date is not None:
            out.append(f"Date: {header.date}")
        known = unknown = None
        mode = header.evaluated_as
        if evaluation is not None:
            if len(evaluation.rules) != len(self.rules):
                raise ValueError(
                    f"`evaluation` holds {len(evaluation.rules)} rules, this set {len(self.rules)}"
                )
            mode = EVALUATION_MODES[evaluation.mode]
            names_file = names_file if names_file is not None else evaluation.names_file
            data_file = data_file if data_file is not None else evaluation.data_file
            known = evaluation.frequencies("known")
            unknown = evaluation.frequencies("unknown")
        else:
            names_file = names_file if names_file is not None else header.names_file
            data_file = data_file if data_file is not None else header.data_file
        if mode is not None or names_file is not None or data_file is not None:
            out.append("")
            if mode is not None:
                out.append(f"Rules Evaluated as {mode}")
            if names_file is not None or data_file is not None:
                files = []
                if names_file is not None:
                    files.append(f"Names File: {names_file}")
                if data_file is not None:
                    files.append(f"Data File: {data_file}")
                out.append("   ".join(files))
        out.append("")
        for k, rule in enumerate(self.rules):
            if known is not None:
                out.append(rule.to_string(known[k], unknown[k], precision))
            elif rule.known is not None:
                out.append(rule.to_string(rule.known, rule.unknown, precision))
            else:
                out.append(rule.to_string())
            out.append("")
        if self.default is not None:
            out.append(self.default.to_string())
            out.append("")
        return "\n".join(out)

    def write(self, path: Union[str, os.PathLike], evaluation=None, **kwargs) -> None:
        """Write :meth:`to_string` to ``path``."""
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(self.to_string(evaluation, **kwargs))


def _format_frequencies(values, precision: int) -> str:
    f = [float(v) for v in values[:4]]
    n = int(values[4])
    return "[" + ",".join(f"{v:.{precision}f}" for v in f) + f",{n}]"


def _quote(text: str) -> str:
    return quote(text, word=PBM_WORD, reserved=_KEYWORDS, reserved_any_case=("in", "x"))


# -- reading ------------------------------------------------------------------------------
_Tok = Token  # kinds: word, quoted, op, punct


_OPERATOR_CHARS = "<>=!"
_PUNCT_CHARS = "[]{}(),?*"


def _tokenize_rule(chunk: Sequence[Tuple[int, str]], file: str) -> List[_Tok]:
    tokens: List[_Tok] = []
    for number, line in chunk:
        i, n = 0, len(line)
        while i < n:
            c = line[i]
            if c.isspace():
                i += 1
            elif c == '"':
                value, i = scan_quoted(line, i)
                if value is None:
                    raise RuleParseError(
                        "unterminated quoted identifier", file=file, line=number, text=line
                    )
                tokens.append(_Tok("quoted", value, number))
            elif c in _OPERATOR_CHARS:
                two = line[i : i + 2]
                if two in ("<=", ">=", "!="):
                    tokens.append(_Tok("op", two, number))
                    i += 2
                elif c in "<>=":
                    tokens.append(_Tok("op", c, number))
                    i += 1
                else:
                    raise RuleParseError(
                        f"unexpected character {c!r}", file=file, line=number, text=line
                    )
            elif c in _PUNCT_CHARS:
                tokens.append(_Tok("punct", c, number))
                i += 1
            elif c == "+":
                tokens.append(_Tok("punct", "+", number))
                i += 1
            else:
                j = i
                while j < n:
                    d = line[j]
                    if d.isspace() or d in _OPERATOR_CHARS or d in _PUNCT_CHARS or d == '"':
                        break
                    if d == "+" and not (
                        j > i + 1 and line[j - 1] in "eE" and line[j - 2].isdigit()
                    ):
                        break
                    j += 1
                tokens.append(_Tok("word", line[i:j], number))
                i = j
    return tokens


class _RuleParser:
    def __init__(self, tokens: List[_Tok], lines: Dict[int, str], file: str, start: int) -> None:
        self.tokens = tokens
        self.pos = 0
        self.lines = lines
        self.file = file
        self.start = start

    # helpers
    def error(self, message: str, token: Optional[_Tok] = None) -> RuleParseError:
        if token is None:
            token = (
                self.tokens[self.pos]
                if self.pos < len(self.tokens)
                else (self.tokens[-1] if self.tokens else None)
            )
        line = token.line if token is not None else self.start
        if token is None or self.pos >= len(self.tokens):
            message += " (the rule ends too early)"
        return RuleParseError(message, file=self.file, line=line, text=self.lines.get(line, ""))

    def peek(self, offset: int = 0) -> Optional[_Tok]:
        k = self.pos + offset
        return self.tokens[k] if k < len(self.tokens) else None

    def next(self, what: str) -> _Tok:
        token = self.peek()
        if token is None:
            raise self.error(f"expected {what}")
        self.pos += 1
        return token

    def is_keyword(self, token: Optional[_Tok], keyword: str) -> bool:
        return token is not None and token.kind == "word" and token.value == keyword

    def expect_keyword(self, keyword: str) -> _Tok:
        token = self.peek()
        if not self.is_keyword(token, keyword):
            got = "the end of the rule" if token is None else repr(token.value)
            raise self.error(f"expected {keyword}, got {got}")
        self.pos += 1
        return token

    def expect_punct(self, value: str) -> _Tok:
        token = self.peek()
        if token is None or token.kind not in ("punct", "op") or token.value != value:
            got = "the end of the rule" if token is None else repr(token.value)
            raise self.error(f"expected {value!r}, got {got}")
        self.pos += 1
        return token

    def value(self, what: str = "a value") -> str:
        token = self.peek()
        if (
            token is None
            or token.kind not in ("word", "quoted")
            or (token.kind == "word" and token.value in _KEYWORDS)
        ):
            got = "the end of the rule" if token is None else repr(token.value)
            raise self.error(f"expected {what}, got {got}")
        self.pos += 1
        return token.value

    # grammar
    def rule(self) -> Rule:
        id_token = self.next("a rule id")
        if self.is_keyword(self.peek(), "DEFAULT"):
            self.pos += 1
            self.expect_keyword("CLASS")
            self.expect_punct("=")
            head = self.value("the default class")
            known, unknown = self.extension()
            self.end()
            return Rule(id_token.value, (), head, True, known, unknown, line=id_token.line)
        self.expect_keyword("IF")
        body = [self.conjunction()]
        while self.is_keyword(self.peek(), "OR"):
            self.pos += 1
            body.append(self.conjunction())
        self.expect_keyword("THEN")
        self.expect_keyword("CLASS")
        self.expect_punct("=")
        head = self.value("the class")
        known, unknown = self.extension()
        self.end()
        return Rule(id_token.value, tuple(body), head, False, known, unknown, line=id_token.line)

    def end(self) -> None:
        token = self.peek()
        if token is not None:
            raise self.error(f"unexpected {token.value!r} after the rule head", token)

    def conjunction(self) -> Tuple[Condition, ...]:
        terms = [self.condition()]
        while self.is_keyword(self.peek(), "AND"):
            self.pos += 1
            terms.append(self.condition())
        return tuple(terms)

    def condition(self) -> Condition:
        first, second = self.peek(), self.peek(1)
        if first is None:
            raise self.error("expected a condition")
        line = first.line
        if (
            first.kind == "word"
            and _NUMBER.match(first.value)
            and second is not None
            and ((second.kind == "word" and second.value == "x") or second.value == "*")
        ):
            terms = self.linear()
            operator = self.operator(allow_in=False)
            value = self.value("a number")
            return Condition(None, operator, value, tuple(terms), line=line)
        attribute = self.value("an attribute")
        operator = self.operator(allow_in=True)
        if operator == "in":
            self.expect_punct("{")
            values = [self.value()]
            while (
                self.peek() is not None and self.peek().value == "," and self.peek().kind == "punct"
            ):
                self.pos += 1
                values.append(self.value())
            self.expect_punct("}")
            return Condition(attribute, "in", tuple(values), line=line)
        return Condition(attribute, operator, self.value(), line=line)

    def operator(self, allow_in: bool) -> str:
        token = self.peek()
        if token is not None and token.kind == "op":
            self.pos += 1
            return token.value
        if allow_in and token is not None and token.kind == "word" and token.value in ("in", "IN"):
            self.pos += 1
            return "in"
        got = "the end of the rule" if token is None else repr(token.value)
        raise self.error(f"expected an operator ({', '.join(OPERATORS)}), got {got}")

    def linear(self) -> List[Tuple[str, str]]:
        terms = []
        sign = ""
        while True:
            coefficient = self.next("a coefficient")
            if coefficient.kind != "word" or not _NUMBER.match(coefficient.value):
                raise self.error(
                    f"expected a numeric coefficient, got {coefficient.value!r}", coefficient
                )
            times = self.next("'x'")
            if not ((times.kind == "word" and times.value == "x") or times.value == "*"):
                raise self.error(f"expected 'x' after a coefficient, got {times.value!r}", times)
            attribute = self.value("a numeric attribute")
            text = coefficient.value
            if sign == "-":
                text = text[1:] if text.startswith("-") else "-" + text.lstrip("+")
            terms.append((text, attribute))
            token = self.peek()
            if token is not None and token.kind == "punct" and token.value == "+":
                sign = ""
                self.pos += 1
            elif token is not None and token.kind == "word" and token.value == "-":
                sign = "-"
                self.pos += 1
            else:
                return terms

    def extension(self):
        known = unknown = None
        token = self.peek()
        if token is not None and token.kind == "punct" and token.value == "[":
            known = self.frequencies()
            token = self.peek()
            if token is not None and token.kind == "punct" and token.value == "?":
                self.pos += 1
                unknown = self.frequencies()
        return known, unknown

    def frequencies(self):
        self.expect_punct("[")
        values = []
        for k in range(5):
            token = self.next("a number")
            if token.kind != "word" or not _NUMBER.match(token.value):
                raise self.error(f"expected a number, got {token.value!r}", token)
            values.append(token.value)
            if k < 4:
                self.expect_punct(",")
        self.expect_punct("]")
        f = [float(v) for v in values[:4]]
        n = float(values[4])
        if not all(math.isfinite(v) for v in f) or not (
            math.isfinite(n) and n >= 0 and n == int(n)
        ):
            raise self.error("frequencies must be finite and n a non-negative integer")
        return (f[0], f[1], f[2], f[3], int(n))


_HEADER_PATTERNS = (
    ("conversor", re.compile(r"^\s*(Standard Rules Conversor.*?)\s*$")),
    ("inducer", re.compile(r"^\s*Inducer:\s*(.*?)\s*(?:Input File:\s*(.*?)\s*)?$")),
    ("input_file", re.compile(r"^\s*Input File:\s*(.*?)\s*$")),
    ("date", re.compile(r"^\s*Date:\s*(.*?)\s*$")),
    ("evaluated_as", re.compile(r"^\s*Rules Evaluated as\s+(.*?)\s*$")),
    ("names_file", re.compile(r"^\s*Names File:\s*(.*?)\s*(?:Data File:\s*(.*?)\s*)?$")),
    ("data_file", re.compile(r"^\s*Data File:\s*(.*?)\s*$")),
)


def _parse_header(lines: Sequence[Tuple[int, str]], file: str) -> PBMHeader:
    fields: Dict[str, Optional[str]] = {}
    for number, line in lines:
        if not line.strip():
            continue
        for key, pattern in _HEADER_PATTERNS:
            match = pattern.match(line)
            if match:
                fields[key] = match.group(1) or None
                if key == "inducer" and match.group(2) is not None:
                    fields["input_file"] = match.group(2)
                if key == "names_file" and match.group(2) is not None:
                    fields["data_file"] = match.group(2)
                break
        else:
            raise RuleParseError(
                "expected a header line (Standard Rules Conversor, Inducer:, Date:, Rules "
                "Evaluated as, Names File:) or a rule starting with its id (R0001 IF ...)",
                file=file,
                line=number,
                text=line,
            )
    evaluated = fields.get("evaluated_as")
    if evaluated is not None and evaluated.upper() not in EVALUATION_MODES.values():
        raise RuleParseError(
            f"unknown evaluation mode (expected one of {list(EVALUATION_MODES.values())})",
            file=file,
            text=evaluated,
        )
    return PBMHeader(**fields)


@validate_params({"text": [TEXT], "file": [TEXT]})
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
    if not isinstance(text, str):
        raise TypeError(f"`text` must be a string, got {type(text).__name__}")
    raw_lines = text.split("\n")
    numbered = [(k + 1, line.rstrip("\r")) for k, line in enumerate(raw_lines)]
    by_number = dict(numbered)
    header_lines: List[Tuple[int, str]] = []
    chunks: List[List[Tuple[int, str]]] = []
    for number, line in numbered:
        if _RULE_START.match(line):
            chunks.append([(number, line)])
        elif chunks:
            if line.strip():
                chunks[-1].append((number, line))
        else:
            header_lines.append((number, line))
    header = _parse_header(header_lines, file)
    rules = []
    for chunk in chunks:
        tokens = _tokenize_rule(chunk, file)
        parser = _RuleParser(tokens, by_number, file, chunk[0][0])
        rules.append(parser.rule())
    if not rules:
        raise RuleParseError("no rule found", file=file)
    try:
        return RuleSet(rules, header, file=file)
    except RuleParseError as err:
        if err.line is None:
            raise
        raise RuleParseError(
            err.message, file=file, line=err.line, text=by_number.get(err.line, err.text)
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
        "evaluation": "no_validation",  # checked by RuleSet.write
    }
)
def write_rules(rules: RuleSet, path: Union[str, os.PathLike], evaluation=None, **kwargs) -> None:
    """Write rules (and, with ``evaluation``, their frequencies) to a PBM file."""
    rules.write(path, evaluation, **kwargs)
