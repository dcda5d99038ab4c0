"""Rules checked against their ``.names`` declarations
(:mod:`xplique_ext.rules.checking`), before any example is evaluated."""

import re

import pytest
from sklearn.tree import DecisionTreeClassifier

from tests.rules.sklearn_tables import frame_of
from xplique_ext.rules import (
    Dataset,
    RuleParseError,
    check_rules,
    evaluate_rules,
    example_path,
    parse_rules,
    read_data,
    read_names,
    tree_to_rules,
)


@pytest.mark.parametrize(
    "rule, match",
    [
        (
            "R0003 IF humdity < 3 THEN CLASS = go",
            r"rule R0003: attribute 'humdity' is not declared in .*voyage.names",
        ),
        (
            "R0003 IF 1 x temperature + 2 x wind <= 3 THEN CLASS = go",
            "rule R0003: attribute 'wind' is not declared",
        ),
        (
            "R0003 IF outlook = foggy THEN CLASS = go",
            r"rule R0003: value 'foggy' is not valid for attribute 'outlook' \(expected one of",
        ),
        ("R0003 IF outlook < sunny THEN CLASS = go", "needs an ordered attribute"),
        ("R0003 IF humidity > high THEN CLASS = go", r"value 'high' .* \(expected a number\)"),
        ("R0003 IF 2 x outlook <= 3 THEN CLASS = go", "not integer or real"),
        ("R0003 IF windy = no THEN CLASS = maybe", "head 'maybe' is not a valid class"),
        ("R0003 IF voyage = go THEN CLASS = go", "tests the class attribute"),
        ("R0003 IF windy in {no, true} THEN CLASS = go", "value 'true'"),
    ],
)
def test_rules_checked_against_names_before_evaluation(rule, match):
    names = read_names(example_path("voyage.names"))
    data = read_data(example_path("voyage.test"), names)
    text = "R0001 IF windy = no THEN CLASS = go\n" + rule + "\nR0009 DEFAULT CLASS = go\n"
    rules = parse_rules(text, file="my.pbm")
    with pytest.raises(RuleParseError, match=match) as info:
        evaluate_rules(rules, data)
    assert info.value.file == "my.pbm" and info.value.line == 2
    with pytest.raises(RuleParseError, match=match):
        check_rules(rules, names)


def test_from_frame_refuses_a_table_missing_a_tested_column():
    frame = frame_of("wine")
    tree = DecisionTreeClassifier(max_leaf_nodes=4, random_state=0).fit(
        frame.drop(columns="class"), frame["class"]
    )
    rules = tree_to_rules(tree)
    for tested in rules.attributes:  # e.g. "od280/od315_of_diluted_wines"
        data = Dataset.from_frame(frame.drop(columns=tested), class_name="class")
        with pytest.raises(
            RuleParseError, match=f"attribute '{re.escape(tested)}' is not declared"
        ):
            evaluate_rules(rules, data)
