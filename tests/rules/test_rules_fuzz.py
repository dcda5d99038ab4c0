"""Property-based fuzzing: the three parsers raise nothing but the package's ParseError."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rules_reference import parse_exact

from xplique_ext.rules import (
    DataParseError,
    NamesParseError,
    ParseError,
    RuleParseError,
    check_rules,
    evaluate_rules,
    example_path,
    parse_data,
    parse_names,
    parse_rules,
    read_names,
)

with open(example_path("voyage.names"), encoding="utf-8") as f:
    NAMES_TEXT = f.read()
with open(example_path("voyage.test"), encoding="utf-8") as f:
    DATA_TEXT = f.read()
with open(example_path("voyage.cn2.unordered.pbm"), encoding="utf-8") as f:
    RULES_TEXT = f.read()
NAMES = read_names(example_path("voyage.names"))

ALPHABET = st.sampled_from(list(' \t\n,.:;()|"\\=<>!?[]{}*+-xR0123456789abcINFORDTHEAULC_é'))
FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def mutated(draw, base):
    """``base`` with a few characters deleted, inserted or replaced."""
    text = list(base)
    for _ in range(draw(st.integers(1, 6))):
        position = draw(st.integers(0, len(text)))
        action = draw(st.sampled_from(["insert", "delete", "replace"]))
        char = draw(ALPHABET)
        if action == "insert" or not text:
            text.insert(position, char)
        elif action == "delete":
            del text[min(position, len(text) - 1)]
        else:
            text[min(position, len(text) - 1)] = char
    return "".join(text)


def texts(base):
    return st.one_of(st.text(max_size=200), st.text(ALPHABET, max_size=200), mutated(base))


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


@FUZZ
@given(texts(DATA_TEXT))
def test_data_parser_raises_only_parse_errors(text):
    try:
        data = parse_data(text, NAMES)
    except DataParseError as error:
        assert error.line is None or error.line >= 1
        return
    assert data.n_examples <= text.count("\n") + 1


@FUZZ
@given(texts(RULES_TEXT))
def test_rule_parser_raises_only_parse_errors(text):
    try:
        rules = parse_rules(text)
    except RuleParseError as error:
        assert error.file == "<string>"
        return
    assert parse_rules(rules.to_string()) == rules
    # checking against the names raises the same class only
    try:
        check_rules(rules, NAMES)
    except RuleParseError:
        pass


@settings(max_examples=100, deadline=None)
@given(mutated(RULES_TEXT), mutated(DATA_TEXT))
def test_whole_pipeline_raises_only_parse_errors(rules_text, data_text):
    try:
        evaluate_rules(parse_rules(rules_text), parse_data(data_text, NAMES))
    except ParseError:
        pass


def _outcome(read, text):
    try:
        data = read(text, NAMES, "<string>")
    except DataParseError as error:
        return ("error", str(error))
    return (
        "data",
        data.n_examples,
        [
            (
                c.values.dtype.str,
                c.values.tobytes(),
                c.categories,
                c.unknown.tobytes(),
                c.not_applicable.tobytes(),
            )
            for c in data.columns.values()
        ],
    )


@FUZZ
@given(texts(DATA_TEXT))
def test_c_reader_agrees_with_the_exact_tokenizer(text):
    """The C reader (pandas) and the exact tokenizer give the same examples or the same
    error, message included, on any text."""
    assert _outcome(parse_data, text) == _outcome(parse_exact, text)


def test_fuzz_targets_parse_when_intact():
    assert parse_names(NAMES_TEXT) == NAMES
    assert parse_data(DATA_TEXT, NAMES).n_examples == 15
    assert len(parse_rules(RULES_TEXT)) == 6
    with pytest.raises(ParseError):
        parse_rules(RULES_TEXT.replace("THEN", "THAN", 1))
