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

import os
from dataclasses import dataclass, field
from typing import Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

from ..commons.params import InstanceOf, validate_params
from .errors import NamesParseError
from .syntax import Token, quote, read_text, scan_quoted
from .validation import PATH, TEXT

__all__ = [
    "Attribute",
    "Names",
    "read_names",
    "parse_names",
    "write_names",
    "ATTRIBUTE_TYPES",
]

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
_TYPE_SPELLINGS = {
    "nominal": "nominal",
    "discrete": "nominal",
    "enumerated": "enumerated",
    "integer": "integer",
    "int": "integer",
    "real": "real",
    "continuous": "real",
    "boolean": "boolean",
    "bool": "boolean",
    "string": "string",
    "date": "date",
    "time": "time",
    "ignore": "ignore",
}
_NUMERIC_TYPES = ("integer", "real")
_ORDERED_TYPES = ("integer", "real", "date", "time", "enumerated")
_RESERVED = frozenset(_TYPE_SPELLINGS) | {"null"}  # quoted in any spelling
_PUNCTUATION = set(',:()|"')


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
        return self.type in _NUMERIC_TYPES

    @property
    def is_ordered(self) -> bool:
        """Whether ``<``, ``<=``, ``>`` and ``>=`` are meaningful for the attribute."""
        return self.type in _ORDERED_TYPES

    @property
    def is_derived(self) -> bool:
        """Whether the attribute is computed (``:=``) and so absent from ``.data`` files."""
        return self.expression is not None


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

    def __init__(
        self,
        attributes: Sequence[Attribute],
        class_name: Optional[str] = None,
        file: Optional[str] = None,
    ) -> None:
        self.attributes: Tuple[Attribute, ...] = tuple(attributes)
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
        if class_name is not None:
            if class_name not in self._by_name:
                raise NamesParseError(
                    f"the class attribute {class_name!r} named by the first statement is "
                    "never declared",
                    file=file,
                    text=class_name,
                )
            if self._by_name[class_name].is_derived:
                raise NamesParseError(
                    f"the class attribute {class_name!r} cannot be a derived attribute",
                    file=file,
                    line=self._by_name[class_name].line,
                    text=class_name,
                )

    # -- access ---------------------------------------------------------------------------
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
        return (
            f"Names(class_name={self.class_name!r}, "
            f"attributes={[a.name for a in self.attributes]!r})"
        )

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

    # -- writing --------------------------------------------------------------------------
    def to_string(self) -> str:
        """The declarations as ``.names`` text (read back by :func:`parse_names`)."""
        lines = [f"{_quote(self.class_name) if self.class_name is not None else 'null'}.", ""]
        width = max((len(_quote(a.name)) for a in self.attributes), default=0) + 1
        for attribute in self.attributes:
            lines.append(f"{(_quote(attribute.name) + ':').ljust(width)} {_type_text(attribute)}.")
        return "\n".join(lines) + "\n"

    @classmethod
    def infer(cls, frame, class_name: Optional[str] = None) -> Names:
        """Declarations guessed from a pandas DataFrame.

        Numeric columns become ``real`` (``integer`` for integer dtypes), boolean columns
        ``boolean``, and every other column ``nominal`` with the sorted values met in it
        (unknown ``?``/NaN and not-applicable ``!`` excluded).
        """
        import numpy as np
        import pandas as pd

        attributes = []
        for name in frame.columns:
            column = frame[name]
            if not isinstance(name, str):
                raise TypeError(f"column names must be strings, got {name!r}")
            if pd.api.types.is_bool_dtype(column.dtype):
                attributes.append(Attribute(name, "boolean", ("true", "false")))
            elif pd.api.types.is_integer_dtype(column.dtype):
                attributes.append(Attribute(name, "integer"))
            elif pd.api.types.is_float_dtype(column.dtype):
                attributes.append(Attribute(name, "real"))
            else:
                values = pd.Series(column.to_numpy(dtype=object))
                values = values[~values.isna()].astype(str).str.strip()
                values = values[~values.isin(["?", "!"])]
                numeric = pd.to_numeric(values, errors="coerce")
                if len(values) and not numeric.isna().any():
                    kind = "integer" if np.all(numeric == np.round(numeric)) else "real"
                    attributes.append(Attribute(name, kind))
                else:
                    attributes.append(Attribute(name, "nominal", tuple(sorted(set(values)))))
        if class_name is not None and class_name not in [a.name for a in attributes]:
            raise ValueError(f"`class_name` {class_name!r} is not a column of the DataFrame")
        return cls(attributes, class_name, file="<DataFrame>")


def _quote(identifier: str) -> str:
    return quote(identifier, reserved_any_case=_RESERVED)


def _type_text(attribute: Attribute) -> str:
    kind = attribute.type
    if kind in ("nominal", "enumerated") and attribute.values is not None:
        values = ", ".join(_quote(v) for v in attribute.values)
        text = (
            f"{values}"
            if kind == "nominal" and len(attribute.values) >= 2
            else (f"{kind}({values})")
        )
    else:
        text = kind
    if attribute.expression is not None:
        text += f" := {attribute.expression}"
    for ext in attribute.extended:
        text += f" : {ext}"
    return text


# -- reading ------------------------------------------------------------------------------
_Token = Token


def _tokenize(text: str, file: str) -> Iterator[_Token]:
    i, n, line = 0, len(text), 1
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
        elif c.isspace():
            i += 1
        elif c == "|":
            while i < n and text[i] != "\n":
                i += 1
        elif c == '"':
            value, j = scan_quoted(text, i)
            if value is None:
                raise NamesParseError(
                    "unterminated quoted identifier", file=file, line=line, text=text[i:j]
                )
            if not value:
                raise NamesParseError("empty quoted identifier", file=file, line=line, text='""')
            yield _Token("quoted", value, line)
            i = j
        elif c == ":" and i + 1 < n and text[i + 1] == "=":
            yield _Token("punct", ":=", line)
            i += 2
        elif c in ",:()":
            yield _Token("punct", c, line)
            i += 1
        elif c == "." and (i + 1 >= n or text[i + 1].isspace() or text[i + 1] == "|"):
            yield _Token("end", ".", line)
            i += 1
        else:
            j = i
            while j < n:
                d = text[j]
                if d.isspace() or d in _PUNCTUATION:
                    break
                if d == "." and (j + 1 >= n or text[j + 1].isspace() or text[j + 1] == "|"):
                    break
                j += 1
            yield _Token("word", text[i:j], line)
            i = j


def _statements(tokens: Iterable[_Token], file: str) -> List[List[_Token]]:
    statements, current = [], []
    for token in tokens:
        if token.kind == "end":
            if not current:
                raise NamesParseError("empty statement", file=file, line=token.line, text=".")
            statements.append(current)
            current = []
        else:
            current.append(token)
    if current:
        raise NamesParseError(
            "statement not terminated by '.'",
            file=file,
            line=current[0].line,
            text=" ".join(t.value for t in current),
        )
    return statements


def _is_identifier(token: _Token) -> bool:
    return token.kind in ("word", "quoted")


def _statement_text(statement: Sequence[_Token]) -> str:
    return " ".join(f'"{t.value}"' if t.kind == "quoted" else t.value for t in statement)


def _parse_list(tokens: Sequence[_Token], file: str, statement) -> Tuple[str, ...]:
    """``v1 , v2 , ...`` -> tuple of identifiers (at least one)."""
    values = []
    expect_value = True
    for token in tokens:
        if expect_value:
            if not _is_identifier(token):
                raise NamesParseError(
                    f"expected a value, got {token.value!r}",
                    file=file,
                    line=token.line,
                    text=_statement_text(statement),
                )
            values.append(token.value)
        elif token.kind != "punct" or token.value != ",":
            raise NamesParseError(
                f"expected ',' between values, got {token.value!r}",
                file=file,
                line=token.line,
                text=_statement_text(statement),
            )
        expect_value = not expect_value
    if expect_value:
        line = tokens[-1].line if tokens else statement[0].line
        raise NamesParseError(
            "a value list is empty or ends with ','",
            file=file,
            line=line,
            text=_statement_text(statement),
        )
    if len(set(values)) != len(values):
        duplicated = sorted({v for v in values if values.count(v) > 1})
        raise NamesParseError(
            f"value(s) {duplicated} listed twice",
            file=file,
            line=statement[0].line,
            text=_statement_text(statement),
        )
    return tuple(values)


def _split(tokens: Sequence[_Token], separators: Tuple[str, ...]) -> List[Tuple[str, List[_Token]]]:
    """Split at top-level (outside parentheses) punctuation in ``separators``."""
    parts: List[Tuple[str, List[_Token]]] = [("", [])]
    depth = 0
    for token in tokens:
        if token.kind == "punct" and token.value == "(":
            depth += 1
        elif token.kind == "punct" and token.value == ")":
            depth -= 1
        if depth == 0 and token.kind == "punct" and token.value in separators:
            parts.append((token.value, []))
        else:
            parts[-1][1].append(token)
    return parts


def _parse_type(
    tokens: List[_Token], file: str, statement
) -> Tuple[str, Optional[Tuple[str, ...]]]:
    if not tokens:
        raise NamesParseError(
            "missing attribute type",
            file=file,
            line=statement[0].line,
            text=_statement_text(statement),
        )
    first = tokens[0]
    keyword = first.value.lower() if first.kind == "word" else None
    if len(tokens) == 1 and keyword in _TYPE_SPELLINGS:
        kind = _TYPE_SPELLINGS[keyword]
        values = ("true", "false") if kind == "boolean" else None
        return kind, values
    if keyword in ("nominal", "enumerated") and len(tokens) >= 3:
        if tokens[1].value != "(" or tokens[-1].value != ")" or tokens[1].kind != "punct":
            raise NamesParseError(
                f"expected {keyword}(v1, v2, ...)",
                file=file,
                line=first.line,
                text=_statement_text(statement),
            )
        return keyword, _parse_list(tokens[2:-1], file, statement)
    if keyword == "discrete" and len(tokens) == 2 and tokens[1].kind == "word":
        return "nominal", None  # C4.5: "discrete N", values taken from the data
    if len(tokens) >= 2 and any(t.kind == "punct" and t.value == "," for t in tokens):
        return "nominal", _parse_list(tokens, file, statement)
    raise NamesParseError(
        "unknown attribute type (expected one of "
        + ", ".join(sorted(_TYPE_SPELLINGS))
        + ", nominal(...), enumerated(...) or a list of at least two values)",
        file=file,
        line=first.line,
        text=_statement_text(statement),
    )


def _parse_extended(parts, file, statement) -> Tuple[str, ...]:
    extended = []
    for separator, tokens in parts:
        if separator != ":":
            raise NamesParseError(
                "':=' may appear once, right after the type",
                file=file,
                line=statement[0].line,
                text=_statement_text(statement),
            )
        if not tokens or not _is_identifier(tokens[0]):
            raise NamesParseError(
                "expected an extended definition after ':'",
                file=file,
                line=statement[0].line,
                text=_statement_text(statement),
            )
        if len(tokens) == 1:
            extended.append(tokens[0].value)
        else:
            if tokens[1].value != "(" or tokens[-1].value != ")":
                raise NamesParseError(
                    "expected identifier or identifier(list) as extended definition",
                    file=file,
                    line=tokens[0].line,
                    text=_statement_text(statement),
                )
            values = _parse_list(tokens[2:-1], file, statement)
            extended.append(f"{tokens[0].value}({', '.join(values)})")
    return tuple(extended)


@validate_params({"text": [TEXT], "file": [TEXT]})
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
    if not isinstance(text, str):
        raise TypeError(f"`text` must be a string, got {type(text).__name__}")
    statements = _statements(_tokenize(text, file), file)
    if not statements:
        raise NamesParseError("no declaration found (empty names file)", file=file)
    head = statements[0]
    attributes: List[Attribute] = []
    c45_class_values = None
    if len(head) == 1 and _is_identifier(head[0]):
        class_name = None if (head[0].kind == "word" and head[0].value == "null") else head[0].value
    elif len(head) >= 3 and all(
        (_is_identifier(t) if k % 2 == 0 else t.value == ",") for k, t in enumerate(head)
    ):
        c45_class_values = _parse_list(head, file, head)
        class_name = "class"
    else:
        raise NamesParseError(
            "the first statement must name the class attribute ('name.' or 'null.')",
            file=file,
            line=head[0].line,
            text=_statement_text(head),
        )
    for statement in statements[1:]:
        if (
            len(statement) < 3
            or not _is_identifier(statement[0])
            or statement[1].value != ":"
            or (statement[1].kind != "punct")
        ):
            raise NamesParseError(
                "expected 'name: type.'",
                file=file,
                line=statement[0].line,
                text=_statement_text(statement),
            )
        name = statement[0].value
        parts = _split(statement[2:], (":", ":="))
        kind, values = _parse_type(parts[0][1], file, statement)
        expression = None
        rest = parts[1:]
        if rest and rest[0][0] == ":=":
            if not rest[0][1]:
                raise NamesParseError(
                    "empty expression after ':='",
                    file=file,
                    line=statement[0].line,
                    text=_statement_text(statement),
                )
            expression = _statement_text(rest[0][1])
            rest = rest[1:]
        extended = _parse_extended(rest, file, statement)
        attributes.append(
            Attribute(name, kind, values, expression, extended, line=statement[0].line)
        )
    if c45_class_values is not None:
        if "class" in [a.name for a in attributes]:
            raise NamesParseError(
                "C4.5 names file: an attribute is already called 'class'",
                file=file,
                line=head[0].line,
                text=_statement_text(head),
            )
        attributes.append(Attribute("class", "nominal", c45_class_values, line=head[0].line))
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
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(names.to_string())


_read_text = read_text  # the name rules/dataset.py imports
