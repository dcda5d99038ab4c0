"""The ``xplique-ext`` command line: --version, required options, plain help with
defaults, ``rules --format``."""

import csv
import io
import json
import math

import pytest

import xplique_ext
from xplique_ext.cli import build_parser, main, plain
from xplique_ext.rules import copy_examples, evaluate_rules, read_data, read_rules


def _help(command):
    with pytest.raises(SystemExit) as exit_info:
        build_parser().parse_args([command, "--help"])
    assert exit_info.value.code == 0


def test_version(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == f"xplique-ext {xplique_ext.__version__}"


@pytest.mark.parametrize("command", ["demo", "rules", "fire"])
def test_help_is_plain_and_shows_defaults(command, capsys):
    _help(command)
    text = capsys.readouterr().out
    assert "``" not in text and ":class:" not in text and ":func:" not in text
    assert "(default: " in text
    assert "(default: None)" not in text and "(default: False)" not in text
    for line in text.splitlines():  # a default never shown twice for one option
        assert line.count("(default:") <= 1


def test_demo_help_names_its_defaults(capsys):
    _help("demo")
    text = capsys.readouterr().out
    assert "(default: 3000)" in text and "(default: fidelity,rules,text)" in text


def test_rules_data_is_required_in_usage_and_parsing(capsys):
    _help("rules")
    text = capsys.readouterr().out
    usage = text.split("\n\n")[0]
    assert "(-d DATA | --copy-examples DIR)" in usage  # no brackets: required
    with pytest.raises(SystemExit) as exit_info:
        main(["rules", "-f", "rules.pbm"])
    assert exit_info.value.code == 2
    assert "-d" in capsys.readouterr().err


def test_plain_removes_rst_markup():
    assert (
        plain("``xplique-ext demo`` uses :class:`~xplique_ext.metrics.MuFidelity` and `x`")
        == "xplique-ext demo uses xplique_ext.metrics.MuFidelity and x"
    )


@pytest.fixture
def voyage(tmp_path, monkeypatch):
    copy_examples(tmp_path)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize(
    "mode, flag, rules_file",
    [
        ("unordered", "-u", "voyage.cn2.unordered.pbm"),
        ("ordered", "-o", "voyage.cn2.ordered.pbm"),
        ("inter-class", "-i", "voyage.c45rules.pbm"),
    ],
)
def test_rules_format_csv_and_json_match_the_library(voyage, capsys, mode, flag, rules_file):
    expected = evaluate_rules(read_rules(rules_file), read_data("voyage.test"), mode).to_frame(
        zero_division="nan"
    )
    assert main(["rules", flag, "-d", "voyage.test", "-f", rules_file, "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [r["rule"] for r in rows] == list(expected["rule"])
    assert [int(r["bh"]) for r in rows] == list(expected["bh"])
    assert main(["rules", flag, "-d", "voyage.test", "-f", rules_file, "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["mode"] == mode and document["data_file"] == "voyage.test"
    assert document["names_file"] == "voyage.names"
    assert len(document["rules"]) == len(expected)
    for record, (_, row) in zip(document["rules"], expected.iterrows()):
        assert set(record) == set(expected.columns)
        for column, value in row.items():
            if isinstance(value, float) and math.isnan(value):
                assert record[column] is None  # undefined measure: null, never 0
            elif isinstance(value, float):
                assert record[column] == pytest.approx(value, rel=1e-12)
            else:
                assert record[column] == value


def test_rules_format_pbm_is_the_default(voyage, capsys):
    assert main(["rules", "-d", "voyage.test", "-f", "voyage.cn2.unordered.pbm"]) == 0
    default = capsys.readouterr().out
    assert (
        main(["rules", "-d", "voyage.test", "-f", "voyage.cn2.unordered.pbm", "--format", "pbm"])
        == 0
    )
    assert capsys.readouterr().out == default
    assert "Rules Evaluated as UNORDERED" in default


def test_rules_format_to_file_and_bad_choice(voyage, capsys):
    assert (
        main(
            [
                "rules",
                "-d",
                "voyage.test",
                "-f",
                "voyage.cn2.unordered.pbm",
                "--format",
                "json",
                "-s",
                "out.json",
            ]
        )
        == 0
    )
    assert json.loads((voyage / "out.json").read_text())["rules"]
    with pytest.raises(SystemExit):
        main(["rules", "-d", "voyage.test", "--format", "xml"])
    assert "invalid choice" in capsys.readouterr().err
