"""PBM rule files (:mod:`xplique_ext.rules.pbm`): reading, writing, the extended
format and the error messages."""

import pytest
from hypothesis import given

from tests.rules.parser_strategies import FUZZ, NAMES, RULES_TEXT, texts
from xplique_ext.rules import (
    RuleParseError,
    RuleSet,
    check_rules,
    evaluate_rules,
    example_path,
    load_voyage,
    parse_rules,
    read_rules,
)


# -- PBM files -------------------------------------------------------------------------------------
def test_voyage_rules():
    rules = read_rules(example_path("voyage.cn2.unordered.pbm"))
    assert len(rules) == 6 and rules.default.head == "go" and rules.default.is_default
    assert rules.header.inducer == "cn2"
    assert rules.header.input_file == "voyage.cn2.unordered_output"
    assert rules.header.date == "Thu Jun 14 21:15:06 2001"
    r6 = rules[5]
    assert r6.id == "R0006" and r6.head == "dont_go"
    assert [c.to_string() for c in r6.conditions] == [
        "temperature < 24.00",
        "humidity < 80.50",
        "windy = yes",
    ]
    assert r6.attributes == ("temperature", "humidity", "windy")


def test_operators_or_in_linear_and_quotes():
    text = """
R0001 IF a <= 1 AND b >= 2 AND c < 3 AND d > 4 AND e != 5 AND f = 6
      THEN CLASS = yes
R0002 IF g in {x, "y z", 3} OR 0.5 x a + -2 x b - 1e-3 * c <= 7
      OR "odd name" = "val,ue"
      THEN CLASS = "no way"
R0003 DEFAULT CLASS = yes
"""
    rules = parse_rules(text)
    r1, r2 = rules
    assert [c.operator for c in r1.conditions] == ["<=", ">=", "<", ">", "!=", "="]
    assert len(r2.body) == 3
    assert r2.body[0][0].operator == "in" and r2.body[0][0].value == ("x", "y z", "3")
    linear = r2.body[1][0]
    assert linear.is_linear and linear.terms == (("0.5", "a"), ("-2", "b"), ("-1e-3", "c"))
    assert linear.attributes == ("a", "b", "c")
    assert r2.body[2][0].attribute == "odd name" and r2.head == "no way"
    assert parse_rules(rules.to_string()) == rules


def test_extended_format_round_trip():
    rules, data = load_voyage("ordered")
    result = evaluate_rules(rules, data, "ordered")
    text = result.to_pbm(names_file="voyage.names", data_file="voyage.test")
    again = parse_rules(text)
    assert again == parse_rules(text)  # deterministic
    assert again.header.evaluated_as == "ORDERED"
    assert again.header.names_file == "voyage.names" and again.header.data_file == "voyage.test"
    assert again[0].known == (0.25, 0.083, 0.417, 0.25, 12)
    assert again[0].unknown == (0.333, 0.333, 0.333, 0.0, 3)
    # the rules themselves are unchanged (extension aside)
    assert [r.body for r in again] == [r.body for r in rules]
    # writing again without evaluation keeps the frequencies that were read
    assert parse_rules(again.to_string())[0].known == again[0].known


@pytest.mark.parametrize(
    "text, line, match",
    [
        ("R0001 IF a = 1\n      THEN CLASS yes", 2, "expected '=', got 'yes'"),
        ("R0001 IF a = 1\n   AND\n   THEN CLASS = yes", 3, "expected an attribute, got 'THEN'"),
        ("R0001 IF a 1 THEN CLASS = yes", 1, "expected an operator"),
        ("R0001 IF a = 1 THEN CLASS = yes extra", 1, "unexpected 'extra' after the rule head"),
        ("R0001 IF a = 1 THEN CLASS = yes\nR0001 IF a = 2 THEN CLASS = no", 2, "used twice"),
        ("R0001 DEFAULT CLASS = yes\nR0002 IF a = 2 THEN CLASS = no", 1, "must be the last"),
        ("Inducer: x\nnot a rule\nR0001 IF a = 1 THEN CLASS = yes", 2, "expected a header line"),
        ("R0001 IF a = 1 THEN CLASS = yes [0.1, 0.2]", 1, "expected ','"),
        ("R0001 IF a ! 1 THEN CLASS = yes", 1, "unexpected character '!'"),
        ("R0001 IF 2 x a + b <= 1 THEN CLASS = yes", 1, "expected a numeric coefficient"),
        ("R0001 IF a in {1, 2 THEN CLASS = yes", 1, "expected '}'"),
        ("R0001 IF a = = THEN CLASS = yes", 1, "expected a value, got '='"),  # not a value
        ("R0001 IF a = 1 THEN CLASS = yes [1,0,0,0,1e999]", 1, "non-negative integer"),
    ],
)
def test_malformed_rules(text, line, match):
    with pytest.raises(RuleParseError, match=match) as info:
        parse_rules(text, file="bad.pbm")
    error = info.value
    assert error.file == "bad.pbm" and error.line == line
    assert error.text == text.split("\n")[line - 1]  # the offending line, in full
    assert f"bad.pbm, line {line}" in str(error)


def test_no_rule():
    with pytest.raises(RuleParseError, match="no rule found"):
        parse_rules("Inducer: x\n")


def test_a_rule_set_refuses_an_item_that_is_not_a_rule():
    from xplique_ext.rules import Rule, RuleSet

    rule = Rule("R1", (), "go", is_default=True)
    with pytest.raises(TypeError, match="`rules` must hold Rule objects, got str"):
        RuleSet(["R1", rule])


# -- property test: any text gives rules or a RuleParseError ---------------------------------------
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


def test_a_rule_set_declares_its_task_or_none():
    rules, _ = load_voyage("ordered")
    assert rules.task is None  # read from a PBM file: not declared
    declared = RuleSet(list(rules.all_rules), task="classification")
    assert declared.task == "classification" and declared == rules
    with pytest.raises(ValueError, match="`task` must be one of"):
        RuleSet(list(rules.all_rules), task="ranking")
