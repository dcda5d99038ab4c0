"""The table of PERCY's conjunctions (``xplique_ext/text/conjunctions.py``)."""

from __future__ import annotations

import pytest

from xplique_ext.text.conjunctions import DEFAULT_RULES, RuleTable, resolve_rules


def test_rule_tables_default_empty_and_replacing():
    assert dict(resolve_rules()) == DEFAULT_RULES
    assert dict(resolve_rules({})) == DEFAULT_RULES
    assert dict(resolve_rules({"however": "b", "while": None})) == {
        "but": "B",
        "yet": "B",
        "though": "A",
        "however": "B",
    }
    table = RuleTable({"But": "B"})
    assert resolve_rules(table) is table and dict(table) == {"but": "B"}
    with pytest.raises(ValueError, match="`rules` must hold at least one keyword"):
        RuleTable({})
    with pytest.raises(ValueError, match=r"`rules\['but'\]` must be 'A' or 'B'"):
        RuleTable({"but": None})
