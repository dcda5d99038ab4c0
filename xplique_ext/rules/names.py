"""``.names`` files: the attribute declarations of a data set (Fig. 3 and 4 of the report).

The first statement names the class attribute (or ``null.`` when there is none); every
other statement declares one attribute, in the order of the columns of the ``.data``
file::

    voyage.

    outlook:     sunny, overcast, rain.
    temperature: continuous.
    humidity:    real.
    windy:       yes, no.
    voyage:      go, dont_go.

Supported types (Fig. 4, plus C4.5's spellings): ``nominal``, ``nominal(v1, v2, ...)``
and a bare value list ``v1, v2, ...`` (C4.5), ``enumerated(v1, v2, ...)`` (ordered values),
``integer``, ``real`` and ``continuous``, ``boolean``, ``string``, ``date`` (``yyyy/mm/dd``),
``time`` (``hh:mm:ss``) and ``ignore`` (C4.5: a column that is read but not used).
Identifiers made of letters, digits and ``_`` may be written bare; any other identifier
(spaces, accents, punctuation) is written between double quotes, with ``\\"`` and ``\\\\``
as escapes. ``|`` starts a comment that runs to the end of the line. A ``.`` ends a
statement when it is followed by white space, a comment or the end of the file, so that
``1.5`` stays a value. Derived attributes (``name: type := expression : ext.``) are read
and kept, but they have no column in the ``.data`` file and cannot be tested by rules.

If the first statement is a value list (``go, dont_go.``), the file is read as a C4.5
``.names`` file: the class is then an attribute called ``class``, in the last column.
"""

from __future__ import annotations

import numbers
import os
import re
from dataclasses import dataclass, field
from typing import Dict, Iterator, List, NamedTuple, Optional, Sequence, Tuple, Union

from ..commons.params import PATH, STRING, InstanceOf, Interval, Options, validate_params
from .errors import NamesParseError
from .syntax import LINE_END, Token, quote, read_text, tokenize, write_text

__all__ = ["Attribute", "Names", "read_names", "parse_names", "write_names", "ATTRIBUTE_TYPES"]

#: Canonical attribute types.
ATTRIBUTE_TYPES = (
    "nominal",
    "enumerated",
    "integer",
    "real",
    "boolean",
    "string",
    "date",
    "time",
    "ignore",
)
#: Every spelling of a type keyword: the canonical ones, and C4.5's.
_TYPE_SPELLINGS = {
    **{kind: kind for kind in ATTRIBUTE_TYPES},
    "discrete": "nominal",
    "int": "integer",
    "continuous": "real",
    "bool": "boolean",
}
_RESERVED = frozenset(_TYPE_SPELLINGS) | {"null"}  # quoted in any spelling
#: One token of a ``.names`` file (a ``.`` ends a statement before a blank, ``|`` or the end).
_TOKEN = re.compile(
    r'\s+|\|[^\n]*|(?P<quoted>")|(?P<punct>:=|[,:()])'
    r'|(?P<end>\.(?=\s|\||\Z))|(?P<word>(?:[^\s,:()|".]|\.(?!\s|\||\Z))+)'
)


@dataclass(frozen=True)
class Attribute:
    """One declared attribute.

    Parameters
    ----------
    name
        The identifier.
    type
        One of :data:`ATTRIBUTE_TYPES`.
    values
        The declared domain of a nominal, enumerated or boolean attribute (in order), or
        ``None`` when the domain is open (``nominal`` without a list, ``string``): it is
        then the set of values met in the data.
    expression
        The defining expression of a derived attribute (``:=``), else ``None``.
    extended
        The extended definitions that follow the type (kept as written).
    line
        Line of the declaration in its file, when read from a file.
    """

    name: str
    type: str
    values: Optional[Tuple[str, ...]] = None
    expression: Optional[str] = None
    extended: Tuple[str, ...] = ()
    line: Optional[int] = field(default=None, compare=False)

    @property
    def is_numeric(self) -> bool:
        """Whether values are numbers (integer or real), usable in linear combinations."""
        return self.type in ("integer", "real")

    @property
    def is_ordered(self) -> bool:
        """Whether ``<``, ``<=``, ``>`` and ``>=`` are meaningful for the attribute."""
        return self.type in ("integer", "real", "date", "time", "enumerated")

    @property
    def is_derived(self) -> bool:
        """Whether the attribute is computed (``:=``) and so absent from ``.data`` files."""
        return self.expression is not None


Attribute.__init__ = validate_params(
    {
        "name": [STRING],
        "type": [Options(ATTRIBUTE_TYPES)],
        "values": [InstanceOf(tuple, description="a tuple of values"), None],
        "expression": [STRING, None],
        "extended": [InstanceOf(tuple, description="a tuple of strings")],
        "line": [Interval(numbers.Integral, 0, None), None],
    }
)(Attribute.__init__)


class Names:
    """The declarations of a ``.names`` file.

    Parameters
    ----------
    attributes
        The attributes in column order (the class attribute among them).
    class_name
        The name of the class attribute, or ``None`` when the file declares ``null``.
    file
        Where the declarations come from (for messages).

    Examples
    --------
    >>> names = parse_names("y.\\nx: real.\\ny: a, b.")
    >>> names.class_name, names.feature_names
    ('y', ['x'])
    """

    @validate_params(
        {
            "attributes": [InstanceOf(list, tuple, description="a list or tuple of Attribute")],
            "class_name": [STRING, None],
            "file": [STRING, None],
        }
    )
    def __init__(
        self,
        attributes: Sequence[Attribute],
        class_name: Optional[str] = None,
        file: Optional[str] = None,
    ) -> None:
        self.attributes = tuple(attributes)
        self.class_name = class_name
        self.file = file
        self._by_name: Dict[str, Attribute] = {}
        for attribute in self.attributes:
            if attribute.name in self._by_name:
                raise NamesParseError(
                    f"attribute {attribute.name!r} is declared twice",
                    file=file,
                    line=attribute.line,
                    text=attribute.name,
                )
            self._by_name[attribute.name] = attribute
        declared = self._by_name.get(class_name)
        if class_name is not None and (declared is None or declared.is_derived):
            fault = (
                "named by the first statement is never declared"
                if declared is None
                else "cannot be a derived attribute"
            )
            raise NamesParseError(
                f"the class attribute {class_name!r} {fault}",
                file=file,
                line=getattr(declared, "line", None),
                text=class_name,
            )

    def __getitem__(self, name: str) -> Attribute:
        try:
            return self._by_name[name]
        except KeyError:
            raise KeyError(f"no attribute {name!r} in {self.file or 'the names'}") from None

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def __iter__(self) -> Iterator[Attribute]:
        return iter(self.attributes)

    def __len__(self) -> int:
        return len(self.attributes)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Names):
            return NotImplemented
        return self.attributes == other.attributes and self.class_name == other.class_name

    def __repr__(self) -> str:
        return f"Names(class_name={self.class_name!r}, attributes={[a.name for a in self]!r})"

    @property
    def columns(self) -> List[Attribute]:
        """The attributes that have a column in ``.data`` files (not derived), in order."""
        return [a for a in self.attributes if not a.is_derived]

    @property
    def column_names(self) -> List[str]:
        """Names of :attr:`columns`."""
        return [a.name for a in self.columns]

    @property
    def class_attribute(self) -> Optional[Attribute]:
        """The class attribute, or ``None``."""
        return None if self.class_name is None else self._by_name[self.class_name]

    @property
    def feature_names(self) -> List[str]:
        """Names of the data columns other than the class."""
        return [a.name for a in self.columns if a.name != self.class_name]

    def to_string(self) -> str:
        """The declarations as ``.names`` text (read back by :func:`parse_names`)."""
        width = max((len(_quote(a.name)) for a in self.attributes), default=0) + 1
        head = "null" if self.class_name is None else _quote(self.class_name)
        lines = [f"{head}.", ""] + [
            f"{(_quote(a.name) + ':').ljust(width)} {_type_text(a)}." for a in self.attributes
        ]
        return "\n".join(lines) + "\n"

    @classmethod
    def infer(cls, frame, class_name: Optional[str] = None) -> Names:
        """Declarations guessed from a pandas DataFrame.

        Numeric columns become ``real`` (``integer`` for integer dtypes), boolean columns
        ``boolean``, and every other column ``nominal`` with the sorted values met in it
        (unknown ``?``/NaN and not-applicable ``!`` excluded).
        """
        import pandas as pd

        attributes = []
        for name in frame.columns:
            if not isinstance(name, str):
                raise TypeError(f"column names must be strings, got {name!r}")
            dtype = frame[name].dtype
            if pd.api.types.is_bool_dtype(dtype):
                attributes.append(Attribute(name, "boolean", ("true", "false")))
            elif pd.api.types.is_integer_dtype(dtype) or pd.api.types.is_float_dtype(dtype):
                attributes.append(Attribute(name, "integer" if dtype.kind in "iu" else "real"))
            else:
                values = (
                    pd.Series(frame[name].to_numpy(dtype=object)).dropna().astype(str).str.strip()
                )
                values = values[~values.isin(["?", "!"])]
                numeric = pd.to_numeric(values, errors="coerce")
                if len(values) and not numeric.isna().any():
                    whole = bool((numeric == numeric.round()).all())
                    attributes.append(Attribute(name, "integer" if whole else "real"))
                else:
                    attributes.append(Attribute(name, "nominal", tuple(sorted(set(values)))))
        if class_name is not None and class_name not in [a.name for a in attributes]:
            raise ValueError(f"`class_name` {class_name!r} is not a column of the DataFrame")
        return cls(attributes, class_name, file="<DataFrame>")


def _quote(identifier: str) -> str:
    return quote(identifier, reserved_any_case=_RESERVED)


def _type_text(attribute: Attribute) -> str:
    kind = attribute.type
    text = attribute.type
    if kind in ("nominal", "enumerated") and attribute.values is not None:
        text = ", ".join(_quote(v) for v in attribute.values)
        if kind != "nominal" or len(attribute.values) < 2:
            text = f"{kind}({text})"
    if attribute.expression is not None:
        text += f" := {attribute.expression}"
    return text + "".join(f" : {ext}" for ext in attribute.extended)


# -- reading ------------------------------------------------------------------------------
def _statements(text: str, file: str) -> List[List[Token]]:
    """The statements of a ``.names`` text, each a list of tokens (blanks and comments
    dropped, the ``.`` that ends it too)."""
    statements: List[List[Token]] = [[]]
    tokens = tokenize(enumerate(LINE_END.split(text), 1), _TOKEN, NamesParseError, file, names=True)
    for token in tokens:
        if token.kind != "end":
            statements[-1].append(token)
        elif statements[-1]:
            statements.append([])
        else:
            raise NamesParseError("empty statement", file=file, line=token.line, text=".")
    if statements[-1]:
        raise _error("statement not terminated by '.'", statements[-1], file)
    return statements[:-1]


def _is_identifier(token: Token) -> bool:
    return token.kind in ("word", "quoted")


def _is(token: Token, punct: str) -> bool:
    return token.kind == "punct" and token.value == punct


def _text(statement: Sequence[Token]) -> str:
    return " ".join(f'"{t.value}"' if t.kind == "quoted" else t.value for t in statement)


def _error(message: str, statement: Sequence[Token], file: str, line: Optional[int] = None):
    """The error of a statement (its first line unless ``line``), its text shown."""
    line = statement[0].line if line is None else line
    return NamesParseError(message, file=file, line=line, text=_text(statement))


def _parse_list(tokens: Sequence[Token], file: str, statement) -> Tuple[str, ...]:
    """``v1 , v2 , ...`` -> tuple of identifiers (at least one)."""
    for k, token in enumerate(tokens):  # values at even positions, commas between them
        if k % 2:
            fits = _is(token, ",")
            expected = "',' between values"
        else:
            fits = _is_identifier(token)
            expected = "a value"
        if not fits:
            raise _error(f"expected {expected}, got {token.value!r}", statement, file, token.line)
    if len(tokens) % 2 == 0:
        line = tokens[-1].line if tokens else None
        raise _error("a value list is empty or ends with ','", statement, file, line)
    values = [t.value for t in tokens[::2]]
    if duplicated := sorted({v for v in values if values.count(v) > 1}):
        raise _error(f"value(s) {duplicated} listed twice", statement, file)
    return tuple(values)


class Part(NamedTuple):
    """One part of a declaration split at ``:`` and ``:=`` (see :func:`_split`)."""

    separator: str  # the ':' or ':=' before the part ('' for the first)
    tokens: List[Token]


def _split(tokens: Sequence[Token]) -> List[Part]:
    """Split at the ``:`` and ``:=`` outside parentheses."""
    parts = [Part("", [])]
    depth = 0  # of parentheses
    for token in tokens:
        depth += _is(token, "(") - _is(token, ")")
        if depth == 0 and token.kind == "punct" and token.value in (":", ":="):
            parts.append(Part(token.value, []))
        else:
            parts[-1].tokens.append(token)
    return parts


def _parse_type(tokens: List[Token], file: str, statement) -> Tuple[str, Optional[Tuple]]:
    if not tokens:
        raise _error("missing attribute type", statement, file)
    first = tokens[0]
    keyword = first.value.lower() if first.kind == "word" else None
    if len(tokens) == 1 and keyword in _TYPE_SPELLINGS:
        kind = _TYPE_SPELLINGS[keyword]
        return kind, ("true", "false") if kind == "boolean" else None
    if keyword in ("nominal", "enumerated") and len(tokens) >= 3:
        if not (_is(tokens[1], "(") and tokens[-1].value == ")"):
            raise _error(f"expected {keyword}(v1, v2, ...)", statement, file, first.line)
        return keyword, _parse_list(tokens[2:-1], file, statement)
    if keyword == "discrete" and len(tokens) == 2 and tokens[1].kind == "word":
        return "nominal", None  # C4.5: "discrete N", values taken from the data
    if len(tokens) >= 2 and any(_is(t, ",") for t in tokens):
        return "nominal", _parse_list(tokens, file, statement)
    raise _error(
        f"unknown attribute type (expected one of {', '.join(sorted(_TYPE_SPELLINGS))}, "
        "nominal(...), enumerated(...) or a list of at least two values)",
        statement,
        file,
        first.line,
    )


def _parse_extended(parts: Sequence[Part], file, statement) -> Tuple[str, ...]:
    extended = []
    for separator, tokens in parts:
        if separator != ":":
            raise _error("':=' may appear once, right after the type", statement, file)
        if not tokens or not _is_identifier(tokens[0]):
            raise _error("expected an extended definition after ':'", statement, file)
        if len(tokens) == 1:
            extended.append(tokens[0].value)
        elif tokens[1].value != "(" or tokens[-1].value != ")":
            raise _error(
                "expected identifier or identifier(list) as extended definition",
                statement,
                file,
                tokens[0].line,
            )
        else:
            values = _parse_list(tokens[2:-1], file, statement)
            extended.append(f"{tokens[0].value}({', '.join(values)})")
    return tuple(extended)


def _parse_attribute(statement: List[Token], file: str) -> Attribute:
    """``name: type [:= expression] [: extended]...``"""
    if len(statement) < 3 or not _is_identifier(statement[0]) or not _is(statement[1], ":"):
        raise _error("expected 'name: type.'", statement, file)
    parts = _split(statement[2:])
    kind, values = _parse_type(parts[0].tokens, file, statement)
    expression = None
    rest = parts[1:]
    if rest and rest[0].separator == ":=":
        if not rest[0].tokens:
            raise _error("empty expression after ':='", statement, file)
        expression = _text(rest[0].tokens)
        rest = rest[1:]
    extended = _parse_extended(rest, file, statement)
    return Attribute(statement[0].value, kind, values, expression, extended, statement[0].line)


@validate_params({"text": [STRING], "file": [STRING]})
def parse_names(text: str, file: str = "<string>") -> Names:
    """Read ``.names`` declarations from a string.

    Parameters
    ----------
    text
        The content of a ``.names`` file.
    file
        A name for the source, used in error messages.

    Returns
    -------
    Names
        The declarations.

    Raises
    ------
    NamesParseError
        On any syntax error, unknown type, duplicated attribute or value, or a class
        attribute that is never declared; the message gives the file, line and text.
    """
    statements = _statements(text, file)
    if not statements:
        raise NamesParseError("no declaration found (empty names file)", file=file)
    head = statements[0]
    c45_values = None
    if len(head) == 1 and _is_identifier(head[0]):
        class_name = None if (head[0].kind == "word" and head[0].value == "null") else head[0].value
    elif len(head) >= 2 and _is(head[1], ","):  # C4.5: the class values
        c45_values = _parse_list(head, file, head)
        class_name = "class"
    else:
        raise _error(
            "the first statement must name the class attribute ('name.' or 'null.')", head, file
        )
    attributes = [_parse_attribute(statement, file) for statement in statements[1:]]
    if c45_values is not None:
        if "class" in [a.name for a in attributes]:
            raise _error("C4.5 names file: an attribute is already called 'class'", head, file)
        attributes.append(Attribute("class", "nominal", c45_values, line=head[0].line))
    if not attributes:
        raise NamesParseError("no attribute declared", file=file, line=head[0].line)
    return Names(attributes, class_name, file=file)


@validate_params({"path": [PATH]})
def read_names(path: Union[str, os.PathLike]) -> Names:
    """Read a ``.names`` file (UTF-8, Latin-1 accepted as a fallback).

    Examples
    --------
    >>> from xplique_ext.rules import example_path
    >>> read_names(example_path("voyage.names")).feature_names
    ['outlook', 'temperature', 'humidity', 'windy']
    """
    return parse_names(read_text(path), file=os.fspath(path))


@validate_params({"names": [InstanceOf(Names, description="a Names object")], "path": [PATH]})
def write_names(names: Names, path: Union[str, os.PathLike]) -> None:
    """Write declarations to a ``.names`` file."""
    write_text(path, names.to_string())
