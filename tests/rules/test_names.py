"""Reading and writing ``.names`` files (:mod:`xplique_ext.rules.names`): the
declarations, their error messages and the declarations inferred from a DataFrame."""

import pandas as pd
import pytest
from hypothesis import given

from tests.rules.parser_strategies import FUZZ, NAMES_TEXT, texts
from xplique_ext.rules import (
    Attribute,
    Names,
    NamesParseError,
    example_path,
    parse_names,
    read_names,
)


# -- .names files ----------------------------------------------------------------------------------
def test_voyage_names():
    names = read_names(example_path("voyage.names"))
    assert names.class_name == "voyage"
    assert names.column_names == ["outlook", "temperature", "humidity", "windy", "voyage"]
    assert names["outlook"] == Attribute("outlook", "nominal", ("sunny", "overcast", "rain"))
    assert names["temperature"].type == "real" and names["temperature"].is_numeric
    assert names["windy"].values == (
        "yes",
        "no",
    )  # voyage.names declares yes/no, not Figure 3's true/false
    assert names.feature_names == ["outlook", "temperature", "humidity", "windy"]


def test_all_types_quotes_comments_and_extensions():
    text = """| comment line
    "the class".   | the class comes first
    a: nominal(x, "y z", "1.5").
    b: enumerated(low, medium, high).
    c: integer.
    d: real : ignore_me.
    e: boolean.
    f: string.
    g: date.
    h: time.
    "válido": continuous.
    j: nominal.
    k: real := 2 x c : derived.
    "the class": 1.5, 2.5, "três".
    """
    names = parse_names(text)
    assert names.class_name == "the class"
    assert names["a"].values == ("x", "y z", "1.5")
    assert names["b"].type == "enumerated" and names["b"].is_ordered
    assert names["c"].type == "integer" and names["d"].extended == ("ignore_me",)
    assert names["e"].values == ("true", "false")
    assert [names[n].type for n in "fgh"] == ["string", "date", "time"]
    assert names["válido"].type == "real"
    assert names["j"].values is None
    assert names["k"].is_derived and "k" not in names.column_names
    assert names["the class"].values == ("1.5", "2.5", "três")
    # round trip
    assert parse_names(names.to_string()) == names


def test_null_class_and_c45_style():
    names = parse_names("null.\na: real.")
    assert names.class_name is None
    c45 = parse_names("go, dont_go.\noutlook: sunny, rain.\ntemp: continuous.")
    assert c45.class_name == "class" and c45.column_names == ["outlook", "temp", "class"]
    assert c45["class"].values == ("go", "dont_go")


@pytest.mark.parametrize(
    "text, match, line",
    [
        ("", "empty names file", None),
        ("c.\na: real", "not terminated", 2),
        ("c.\na real.", "expected 'name: type.'", 2),
        ("c.\na: reel.", "unknown attribute type", 2),
        ("c.\na: x, x.\nc: a, b.", r"listed twice", 2),
        ("c.\na: real.\na: real.\nc: a, b.", "declared twice", 3),
        ("c.\na: real.", "never declared", None),
        ('c.\n"a: real.\n', "unterminated quoted identifier", 2),
        ("c.\na: nominal(x, .\n", r"expected nominal\(v1, v2, ...\)", 2),
        ("c.\n\na: x,.\nc: a, b.", "ends with ','", 3),
    ],
)
def test_names_errors(text, match, line):
    with pytest.raises(NamesParseError, match=match) as info:
        parse_names(text, file="bad.names")
    assert info.value.file == "bad.names"
    if line is not None:
        assert info.value.line == line
    assert isinstance(info.value, ValueError)


# -- declarations inferred from a DataFrame --------------------------------------------------------
def test_names_inference():
    frame = pd.DataFrame(
        {"x": [1.5, 2.0, None], "n": [1, 2, 3], "c": ["a", "?", "b"], "flag": [True, False, True]}
    )
    names = Names.infer(frame, class_name="c")
    assert [a.type for a in names] == ["real", "integer", "nominal", "boolean"]
    assert names["c"].values == ("a", "b")


def test_names_infer_reads_numbers_written_as_text():
    frame = pd.DataFrame({"a": ["1", "2", "?"], "b": ["1.5", "2", None], "c": ["x", "y", "!"]})
    inferred = [(a.name, a.type, a.values) for a in Names.infer(frame)]
    assert inferred == [("a", "integer", None), ("b", "real", None), ("c", "nominal", ("x", "y"))]


# -- property test: any text gives declarations or a NamesParseError -------------------------------
@FUZZ
@given(texts(NAMES_TEXT))
def test_names_parser_raises_only_parse_errors(text):
    try:
        names = parse_names(text)
    except NamesParseError as error:
        assert error.file == "<string>"
        return
    # what was read writes back to the same declarations
    assert parse_names(names.to_string()) == names
