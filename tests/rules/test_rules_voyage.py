"""The voyage example of the report, evaluated through the API and the command line."""

import re

import numpy as np
import pytest
from rules_cli_helpers import run_cli
from rules_reference import evaluate_rules_loop
from rules_voyage_expected import (
    FIG12,
    FIG12_PRINTED,
    FIGURES,
    TABLE_COLUMNS,
    TABLE_EXCEPTIONS,
    TABLES,
)

from xplique_ext.rules import (
    evaluate_rules,
    load_voyage,
    parse_rules,
    rule_measures,
)

FILES = {
    "unordered": ("-u", "voyage.cn2.unordered.pbm"),
    "ordered": ("-o", "voyage.cn2.ordered.pbm"),
    "inter-class": ("-i", "voyage.c45rules.pbm"),
}
EVALUATED_AS = {
    "unordered": "UNORDERED",
    "ordered": "ORDERED",
    "inter-class": "INTER-CLASS ORDERED",
}


def printed_values(text):
    """{rule id: ([5 known], [5 unknown])} as printed in an extended PBM file."""
    out = {}
    pattern = re.compile(r"^(R\d{4})\b.*?\[([^\]]*)\]\s*\?\[([^\]]*)\]", re.S | re.M)
    for chunk in re.split(r"\n(?=R\d{4})", text):
        match = pattern.search(chunk)
        if match:
            known = [float(v) for v in match.group(2).split(",")]
            unknown = [float(v) for v in match.group(3).split(",")]
            out[match.group(1)] = (known, unknown)
    return out


@pytest.mark.parametrize("mode", ["unordered", "ordered", "inter-class"])
def test_cli_reproduces_figures(mode, voyage_dir, capsys):
    flag, rules_file = FILES[mode]
    assert run_cli(["rules", flag, "-d", "voyage.test", "-f", rules_file]) == 0
    text = capsys.readouterr().out
    assert f"Rules Evaluated as {EVALUATED_AS[mode]}" in text
    assert "Names File: voyage.names" in text and "Data File: voyage.test" in text
    printed = printed_values(text)
    expected = FIGURES[mode]
    assert sorted(printed) == sorted(expected)
    for rule, (known, unknown) in expected.items():
        # frequencies to the 3 printed decimals, counts exactly
        assert printed[rule][0][:4] == known[:4], rule
        assert printed[rule][1][:4] == unknown[:4], rule
        assert printed[rule][0][4] == known[4] and printed[rule][1][4] == unknown[4], rule
    # the DEFAULT rule is printed without a table
    assert re.search(r"^R\d{4}\s+DEFAULT CLASS = go\s*$", text, re.M)


def test_cli_default_mode_is_unordered_and_reads_stdin(voyage_dir, capsys, monkeypatch):
    import io

    rules = (voyage_dir / "voyage.cn2.unordered.pbm").read_text()
    monkeypatch.setattr("sys.stdin", io.StringIO(rules))
    assert run_cli(["rules", "-dvoyage.test"]) == 0  # std_info.pl's attached form
    text = capsys.readouterr().out
    assert "Rules Evaluated as UNORDERED" in text
    assert printed_values(text)["R0006"] == tuple(map(list, FIG12["R0006"]))


def test_cli_writes_output_file_and_csv(voyage_dir, capsys):
    code = run_cli(
        [
            "rules",
            "-o",
            "-d",
            "voyage.test",
            "-n",
            "voyage.names",
            "-f",
            "voyage.cn2.ordered.pbm",
            "-s",
            "out.pbm",
            "--csv",
            "out.csv",
        ]
    )
    assert code == 0
    assert capsys.readouterr().out == ""
    text = (voyage_dir / "out.pbm").read_text()
    assert printed_values(text) == {k: tuple(map(list, v)) for k, v in FIGURES["ordered"].items()}
    # the output is itself a valid (extended) PBM file
    again = parse_rules(text)
    assert again.header.evaluated_as == "ORDERED"
    assert again[3].known == (0.2, 0.0, 0.467, 0.333, 15)
    import pandas as pd

    frame = pd.read_csv(voyage_dir / "out.csv")
    assert frame["n"].tolist() == [12, 13, 13, 15]
    assert frame["unknown_n"].tolist() == [3, 2, 2, 0]


@pytest.mark.parametrize("mode", ["unordered", "ordered", "inter-class"])
def test_api_matches_figures_and_loop(mode):
    rules, data = load_voyage(mode)
    result = evaluate_rules(rules, data, mode)
    for k, rule in enumerate(rules):
        known, unknown = FIGURES[mode][rule.id]
        np.testing.assert_allclose(result.known.frequencies()[k], known, atol=5e-4 + 1e-12)
        np.testing.assert_allclose(result.unknown.frequencies()[k], unknown, atol=5e-4 + 1e-12)
    loop = evaluate_rules_loop(rules, data, mode)
    assert loop.known == result.known and loop.unknown == result.unknown


def within(a, b, tol=0.002):
    return abs(a - b) <= tol + 1e-12


@pytest.mark.parametrize("mode", ["unordered", "ordered", "inter-class"])
def test_measures_reproduce_tables(mode):
    rules, data = load_voyage(mode)
    frame = evaluate_rules(rules, data, mode).to_frame().set_index("rule")
    checked = 0
    for rule, row in TABLES[mode].items():
        if rule in TABLE_EXCEPTIONS[mode]:
            continue
        for column, value in zip(TABLE_COLUMNS, row):
            assert within(frame.loc[rule, column], value), (rule, column, frame.loc[rule, column])
            checked += 1
    assert checked == 9 * (len(TABLES[mode]) - len(TABLE_EXCEPTIONS[mode]))


def test_table7_exceptions_follow_the_printed_figure():
    """Table 7's R0002 and R0006 come from Figure 12's printed (defective) rows."""
    for rule in ("R0002", "R0006"):
        f = FIG12_PRINTED[rule][0]
        # printed order f_bh, f_bh̄, f_b̄h̄, f_b̄h, n: the counts are round(f * n) (the cells
        # are counts; 3 decimals pin them down for n < 1000)
        counts = [round(v * f[4]) for v in f[:4]]
        assert np.allclose([c / f[4] for c in counts], f[:4], atol=5e-4)
        m = rule_measures(counts[0], counts[1], counts[3], counts[2])
        for column, value in zip(TABLE_COLUMNS, TABLES["unordered"][rule]):
            assert within(float(m[column]), value), (rule, column)
    # and the data-derived rows differ from them where the figure row was wrong
    rules, data = load_voyage("unordered")
    frame = evaluate_rules(rules, data).to_frame().set_index("rule")
    assert not within(frame.loc["R0002", "NegRel"], TABLES["unordered"]["R0002"][2])
    assert within(frame.loc["R0002", "Acc"], TABLES["unordered"]["R0002"][0])


def test_table8_r0003_matches_n_14():
    """Table 8's R0003 row is the table bh=3, bh̄=0, b̄h=7, b̄h̄=4 (n = 14), not Figure 14's."""
    m = rule_measures(3, 0, 7, 4)
    for column, value in zip(TABLE_COLUMNS, TABLES["ordered"]["R0003"]):
        assert within(float(m[column]), value), column
    rules, data = load_voyage("ordered")
    result = evaluate_rules(rules, data, "ordered")
    assert result.known.n[2] == 13


def test_semantics_of_the_worked_example():
    """The T2/T3/T5/T9/T12 discussions of section 5."""
    rules, data = load_voyage("unordered")
    result = evaluate_rules(rules, data)
    # T3 counted as bh in both R0001 and R0003 (unordered)
    assert result.known.bh[0] == 3 and result.known.bh[2] == 1
    # T2, T9, T12 in R0001's unknown table; T5 in its known table
    assert result.unknown.n[0] == 3 and result.known.n[0] == 12
    rules, data = load_voyage("ordered")
    result = evaluate_rules(rules, data, "ordered")
    # T9 (unknown humidity) counted by R0001 and R0003: covering thanks to ? does not stop
    assert result.unknown.bh[0] == 1 and result.unknown.bh[2] == 1
    # T5 (unknown temperature) fired at R0002, so R0004 counts it in its known table
    assert result.known.n[3] == 15 and result.unknown.n[3] == 0


def test_xplique_ext_main_dispatches_rules(voyage_dir, capsys):
    """The package's entry point (``xplique-ext``) runs the same command."""
    from xplique_ext.cli import main

    assert main(["rules", "-i", "-d", "voyage.test", "-f", "voyage.c45rules.pbm"]) == 0
    printed = printed_values(capsys.readouterr().out)
    assert printed == {k: tuple(map(list, v)) for k, v in FIGURES["inter-class"].items()}
    assert main(["fire", "--psi", "2,6", "1.0,4"]) == 0
    assert capsys.readouterr().out.splitlines()[1].split()[-2:] == ["2.14", "1.07"]
