"""``xplique-ext rules`` and ``xplique-ext fire`` (:mod:`xplique_ext.cli.rules`):
the report's figures, output formats, Wilson intervals, errors naming the file and the
option, standard input, scale options and the ``--dask`` address check."""

import csv
import io
import json
import math
import os
import re
import socket
import threading
import time

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest

from tests.rules.rules_cli_helpers import run_cli
from tests.rules.rules_voyage_expected import (
    FIG12,
    FIGURES,
)
from xplique_ext.cli import build_parser, main
from xplique_ext.cli import main as cli_main
from xplique_ext.cli.rules import PROPORTION_MEASURES, with_wilson_columns
from xplique_ext.rules import (
    copy_examples,
    evaluate_rules,
    example_path,
    load_voyage,
    parse_rules,
    read_data,
    read_rules,
)

NAMES_TEXT = """class.
colour: red, green, blue.
size: real.
count: integer.
shape: nominal.
class: c0, c1, c2.
"""


@pytest.fixture
def voyage_dir(tmp_path, monkeypatch):
    """A temporary working directory holding the report's voyage example files."""
    copy_examples(tmp_path)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def voyage(voyage_dir):
    """The same directory, under the name the ``--format`` tests use."""
    return voyage_dir


def _help(command):
    with pytest.raises(SystemExit) as exit_info:
        build_parser().parse_args([command, "--help"])
    assert exit_info.value.code == 0


def test_missing_attribute_is_reported_and_nothing_evaluated(voyage_dir, capsys, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO("R0001 IF humdity < 83 THEN CLASS = go\n"))
    assert run_cli(["rules", "-d", "voyage.test", "-s", "out.pbm"]) == 1
    err = capsys.readouterr().err
    assert "rule R0001" in err and "'humdity'" in err and "voyage.names" in err
    assert not (voyage_dir / "out.pbm").exists()


@pytest.mark.parametrize(
    "edit, fragment",
    [
        (("data", "rain,\t21,\t80,\tno,\tgo", "rain, 21, 80, no"), "voyage.test, line 15"),
        (("data", "rain,\t21,", "drizzle,\t21,"), "outside the declared domain"),
        (("data", "rain,\t21,", "rain,\twarm,"), "non-numeric value for attribute 'temperature'"),
        (("rules", "AND windy = no", "AND windy == no"), "voyage.cn2.unordered.pbm, line 6"),
        (("names", "windy:       yes, no.", "windy:       yes, no"), "voyage.names"),
    ],
)
def test_bad_files(voyage_dir, capsys, edit, fragment):
    which, old, new = edit
    path = {"data": "voyage.test", "rules": "voyage.cn2.unordered.pbm", "names": "voyage.names"}[
        which
    ]
    text = (voyage_dir / path).read_text()
    assert old in text
    (voyage_dir / path).write_text(text.replace(old, new))
    assert run_cli(["rules", "-d", "voyage.test", "-f", "voyage.cn2.unordered.pbm"]) == 1
    captured = capsys.readouterr()
    assert fragment in captured.err and captured.out == ""


def test_usage_errors(voyage_dir, capsys):
    with pytest.raises(SystemExit) as exit_info:  # -d is a required option
        run_cli(["rules", "-f", "voyage.cn2.unordered.pbm"])
    assert exit_info.value.code == 2
    assert "-d DATA" in capsys.readouterr().err
    assert (
        run_cli(
            ["rules", "-d", "missing.data", "-n", "voyage.names", "-f", "voyage.cn2.unordered.pbm"]
        )
        == 1
    )
    assert "missing.data" in capsys.readouterr().err
    assert run_cli(["rules", "-d", "voyage.test", "-f", "nope.pbm"]) == 1
    assert "nope.pbm" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        run_cli(["rules", "-o", "-u", "-d", "voyage.test"])  # exclusive modes


def test_copy_examples(tmp_path, capsys):
    assert run_cli(["rules", "--copy-examples", str(tmp_path / "ex")]) == 0
    assert (tmp_path / "ex" / "voyage.test").exists()
    assert "voyage.names" in capsys.readouterr().out


def test_fire_table1(capsys):
    code = run_cli(
        [
            "fire",
            "--psi",
            "1,2",
            "--psi",
            "3",
            "CART=0.05,3,1.0",
            "GridEx (6 rules)=0.02,6,0.43",
            "0.13,4",
        ]
    )
    assert code == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["label", "p", "r", "coverage", "Qs", "1-FiRe", "2-FiRe", "3-FiRe"]
    assert lines[1].split() == ["CART", "0.05", "3", "1", "0.15", "0.16", "0.11", "0.05"]
    assert lines[2].split()[-5:] == ["0.43", "0.19", "0.13", "0.07", "0.04"]
    assert lines[3].split() == ["#3", "0.13", "4", "-", "-", "0.56", "0.28", "0.28"]


def test_fire_from_stdin_and_file(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO("p r label\n5.0 4 A\n12, 6, B  # comment\n"))
    assert run_cli(["fire", "--precision", "1"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1].split() == ["A", "5", "4", "21.4"] and out[2].split() == ["B", "12", "6", "78.7"]
    (tmp_path / "pairs.txt").write_text("1.0 4\n1.5 1\n")
    assert (
        run_cli(
            [
                "fire",
                "--psi",
                "2,6",
                "-f",
                str(tmp_path / "pairs.txt"),
                "-s",
                str(tmp_path / "out.txt"),
            ]
        )
        == 0
    )
    lines = (tmp_path / "out.txt").read_text().splitlines()
    assert lines[1].split()[-2:] == ["2.14", "1.07"] and lines[2].split()[-2:] == ["1.50", "1.50"]


@pytest.mark.parametrize(
    "argv, match",
    [
        (["fire", "--psi", "0", "1,2"], "`psi` must be a finite real number > 0"),
        (["fire", "1,0.5"], "`readability_loss` must be numbers >= 1"),
        (["fire", "--", "-1,2"], "`predictive_loss`"),
        (["fire", "1,2,1.5"], "`coverage` must be numbers in"),
        (["fire", "a,b"], "expected numbers"),
        (["fire", "--psi", "x", "1,2"], "--psi must be numbers"),
    ],
)
def test_fire_errors(argv, match, capsys):
    assert run_cli(argv) == 1
    assert match in capsys.readouterr().err


def test_rules_command_loads_no_heavy_module(tmp_path):
    """``xplique-ext rules`` starts fast: TensorFlow, matplotlib, SciPy, scikit-learn, tqdm
    and Dask stay unloaded (each is imported where it is used)."""
    import subprocess
    import sys

    copy_examples(tmp_path)
    heavy = ["tensorflow", "keras", "matplotlib", "scipy", "sklearn", "tqdm", "dask"]
    code = (
        "import sys; from xplique_ext.cli import main; "
        "code = main(['rules', '-o', '-d', 'voyage.test', '-f', 'voyage.cn2.ordered.pbm', "
        "'-s', 'out.pbm']); "
        f"print(code, sorted(m for m in {heavy!r} if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert out.stdout.strip() == "0 []", out.stderr
    assert "R0001" in (tmp_path / "out.pbm").read_text()


def test_standard_input_is_decoded_as_a_file(tmp_path):
    """A byte-order mark is skipped, Latin-1 bytes are read as Latin-1, as in files."""
    import subprocess
    import sys

    copy_examples(tmp_path)
    command = [sys.executable, "-m", "xplique_ext.cli"]
    rules = b"R1 IF outlook = rain THEN CLASS = go\n"
    out = subprocess.run(
        command + ["rules", "-d", "voyage.test"],
        input=b"\xef\xbb\xbf" + rules,
        capture_output=True,
        cwd=tmp_path,
    )
    assert out.returncode == 0 and b"R1  IF outlook = rain" in out.stdout, out.stderr
    pairs = b"\xef\xbb\xbf0.05 3 caf\xe9\n"
    out = subprocess.run(command + ["fire"], input=pairs, capture_output=True, cwd=tmp_path)
    assert out.stdout.decode().splitlines()[1].split()[0] == "caf\xe9", out.stderr


def test_fire_skips_a_first_line_only_when_it_is_a_header(tmp_path, capsys):
    pairs = tmp_path / "pairs.txt"
    pairs.write_bytes(b"\xef\xbb\xbf0.05 3\n0.1 2\n")  # a byte-order mark: not a header
    assert run_cli(["fire", "-f", str(pairs)]) == 0
    assert [line.split()[0] for line in capsys.readouterr().out.splitlines()] == [
        "label",
        "#1",
        "#2",
    ]
    for text in ("p, r, coverage\n0.05 3 1\n", "# FiRe inputs\n\np r coverage\n0.05 3 1\n"):
        pairs.write_text(text)  # words only, on the first line with text: a header
        assert run_cli(["fire", "-f", str(pairs)]) == 0
        assert len(capsys.readouterr().out.splitlines()) == 2
    pairs.write_text("0.05 3 1\np r coverage\n")  # a header after the first line: an error
    assert run_cli(["fire", "-f", str(pairs)]) == 1
    assert f"{pairs}, line 2: expected numbers" in capsys.readouterr().err
    pairs.write_text("0.O5 3\n0.1 2\n")  # a typo in the first line: an error, not a header
    assert run_cli(["fire", "-f", str(pairs)]) == 1
    captured = capsys.readouterr()
    assert f"{pairs}, line 1: expected numbers" in captured.err and "'0.O5 3'" in captured.err
    assert captured.out == "" and captured.err.count("\n") == 1


@pytest.mark.parametrize(
    "text, line", [("0,5 3\n", 1), ("p r\n0.05 3\n0,05 3 CART\n", 3), ("0.1 2\n0,05\t3\t0,9\n", 2)]
)
def test_fire_refuses_a_decimal_comma_naming_its_line(tmp_path, capsys, text, line):
    (tmp_path / "pairs.txt").write_text(text)
    assert run_cli(["fire", "-f", str(tmp_path / "pairs.txt")]) == 1
    err = capsys.readouterr().err
    assert f"pairs.txt, line {line}: decimal comma in" in err and "0.5, not 0,5" in err
    # commas that separate the values, with or without spaces, are not decimal commas, nor
    # are numbers in the label, nor commas and spaces both between the values (refused before)
    (tmp_path / "pairs.txt").write_text(
        "0.05, 3, 0.9\n0.05,3,0.9 CART\n0.05,3,0.9 CART depth 3\n0.04,3 0.95 GridEx\n"
    )
    assert run_cli(["fire", "-f", str(tmp_path / "pairs.txt")]) == 0
    out = [line.split() for line in capsys.readouterr().out.splitlines()]
    assert [row[:-5] for row in out[2:]] == [["CART"], ["CART", "depth", "3"], ["GridEx"]]
    assert out[3][-5:-3] == ["0.05", "3"] and out[4][-5:-2] == ["0.04", "3", "0.95"]


def test_text_inputs_in_utf16_are_refused_naming_the_file(voyage_dir, tmp_path, capsys):
    from xplique_ext.rules import ParseError, read_data, read_names, read_rules

    for name in ("voyage.names", "voyage.test", "voyage.cn2.unordered.pbm"):
        text = (voyage_dir / name).read_text()
        (voyage_dir / f"u16_{name}").write_text(text, encoding="utf-16")
        (voyage_dir / f"u16be_{name}").write_bytes(text.encode("utf-16-be"))  # no mark
    names = read_names(voyage_dir / "voyage.names")
    message = (
        "not a UTF-8 text file (it looks like UTF-16 or UTF-32: a byte-order mark or NUL "
        "bytes); save it as UTF-8 (or ASCII)"
    )
    for prefix in ("u16_", "u16be_"):
        for read, name in (
            (read_names, "voyage.names"),
            (read_rules, "voyage.cn2.unordered.pbm"),
            (lambda path: read_data(path, names), "voyage.test"),
        ):
            with pytest.raises(ParseError) as info:
                read(voyage_dir / f"{prefix}{name}")
            assert str(info.value) == f"{voyage_dir / prefix}{name}: {message}"
    for data, names_file in (
        ("u16_voyage.test", "voyage.names"),
        ("voyage.test", "u16_voyage.names"),
    ):
        argv = ["rules", "-d", data, "-n", names_file, "-f", "voyage.cn2.unordered.pbm"]
        assert run_cli(argv) == 1
        bad = data if data.startswith("u16") else names_file
        assert capsys.readouterr() == ("", f"xplique-ext rules: error: {bad}: {message}\n")
    pairs = tmp_path / "pairs.txt"
    pairs.write_text("0.05 3 A\n", encoding="utf-16")
    assert run_cli(["fire", "-f", str(pairs)]) == 1
    assert capsys.readouterr().err == f"xplique-ext fire: error: {pairs}: {message}\n"
    pairs.write_bytes("0.05 3 caf\xe9\n".encode("latin-1"))  # read as every rule file is
    assert run_cli(["fire", "-f", str(pairs)]) == 0
    assert capsys.readouterr().out.splitlines()[1].split()[0] == "caf\xe9"


def test_a_pipe_the_fast_reader_refuses_is_an_error_naming_it(voyage_dir):
    """A data file read from a pipe (``-d <(zcat f.gz)``) with a quoted value: the exact
    reader cannot read it again from its start (main: 'File or stream is not seekable'; a
    reopened pipe before that: 0 examples, silently); a plain one is read through it (it
    was 'could not broadcast': the table was sized by the pipe's size, 0)."""
    import threading

    from xplique_ext.rules import DataParseError, read_data

    text = (voyage_dir / "voyage.test").read_text()
    for data, n in (
        (text, read_data(voyage_dir / "voyage.test").n_examples),
        (text.replace("sunny", '"sunny"', 1), None),
    ):
        fifo = voyage_dir / f"pipe{n}"
        os.mkfifo(fifo)
        writer = threading.Thread(target=fifo.write_text, args=(data,))
        writer.start()
        try:
            if n is None:
                with pytest.raises(
                    DataParseError, match=f"{fifo}: .*cannot be read again from a pipe"
                ):
                    read_data(fifo, voyage_dir / "voyage.names")
            else:
                assert read_data(fifo, voyage_dir / "voyage.names").n_examples == n
        finally:
            writer.join()


def test_output_paths_are_checked_before_any_work(voyage_dir, capsys):
    (voyage_dir / "old.csv").write_text("kept\n")
    base = ["rules", "-d", "voyage.test", "-f", "voyage.cn2.unordered.pbm"]
    for option, role in (("--csv", "write the CSV file"), ("-s", "write the output file")):
        assert run_cli(base + [option, str(voyage_dir / "missing" / "out.txt")]) == 1
        captured = capsys.readouterr()
        assert captured.out == "" and captured.err.count("\n") == 1
        assert f"cannot {role} " in captured.err and "No such file or directory" in captured.err
    assert run_cli(["fire", "-s", str(voyage_dir / "missing" / "o.txt"), "0.1,2"]) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and "cannot write the output file" in captured.err
    # a failed command leaves no file of its own and an existing one as it was
    assert run_cli(base[:-1] + ["nope.pbm", "-s", "new.pbm", "--csv", "old.csv"]) == 1
    assert "nope.pbm" in capsys.readouterr().err
    assert (
        not (voyage_dir / "new.pbm").exists() and (voyage_dir / "old.csv").read_text() == "kept\n"
    )
    # a link to a file not written yet stays a link (the check removed it and wrote a file)
    (voyage_dir / "link.txt").symlink_to(voyage_dir / "target.txt")
    assert run_cli(["fire", "-s", str(voyage_dir / "link.txt"), "0.1,2"]) == 0
    assert (voyage_dir / "link.txt").is_symlink() and "0.1" in (
        voyage_dir / "target.txt"
    ).read_text()


# -- --csv: Wilson intervals for the proportion measures -------------------------------------------
ARGS = ["rules", "-d", "voyage.test", "-n", "voyage.names", "-f", "voyage.cn2.ordered.pbm"]


def test_csv_gains_wilson_columns_and_keeps_its_own(voyage_dir, capsys):
    assert run_cli(ARGS + ["--csv", "out.csv"]) == 0
    with_csv = capsys.readouterr().out
    assert run_cli(ARGS) == 0
    assert capsys.readouterr().out == with_csv  # the text output is unchanged
    frame = pd.read_csv(voyage_dir / "out.csv")
    rules, _ = load_voyage("ordered")
    from xplique_ext.rules import read_data
    from xplique_ext.rules.names import read_names

    data = read_data("voyage.test", read_names("voyage.names"))
    own = evaluate_rules(rules, data, "unordered").to_frame(zero_division="nan")
    assert list(frame.columns[: len(own.columns)]) == list(own.columns)
    added = list(frame.columns[len(own.columns) :])
    assert added == [f"{m}_{b}" for m in PROPORTION_MEASURES for b in ("ci_low", "ci_high")]
    for measure, (num, den) in PROPORTION_MEASURES.items():
        for _, row in frame.iterrows():
            k, m = int(sum(row[c] for c in num)), int(sum(row[c] for c in den))
            if m == 0:
                assert np.isnan(row[f"{measure}_ci_low"]) and np.isnan(row[measure])
                continue
            # the measure is the proportion the interval is about
            assert row[measure] == pytest.approx(k / m)
            ci = binomtest(k, m).proportion_ci(0.95, method="wilson")
            assert row[f"{measure}_ci_low"] == pytest.approx(ci.low, abs=1e-12)
            assert row[f"{measure}_ci_high"] == pytest.approx(ci.high, abs=1e-12)


def test_ci_level_is_used_and_checked(voyage_dir, capsys):
    assert run_cli(ARGS + ["--csv", "a.csv", "--ci-level", "0.5"]) == 0
    assert run_cli(ARGS + ["--csv", "b.csv"]) == 0
    a, b = pd.read_csv("a.csv"), pd.read_csv("b.csv")
    assert (a["Acc_ci_high"] - a["Acc_ci_low"] <= b["Acc_ci_high"] - b["Acc_ci_low"]).all()
    assert (a["Cov_ci_high"] - a["Cov_ci_low"] < b["Cov_ci_high"] - b["Cov_ci_low"]).all()
    capsys.readouterr()
    assert run_cli(ARGS + ["--csv", "c.csv", "--ci-level", "95"]) == 2
    assert "--ci-level" in capsys.readouterr().err


def test_with_wilson_columns_does_not_modify_its_input():
    t = pd.DataFrame(
        {
            "bh": [7, 0],
            "bhbar": [3, 0],
            "bbarhbar": [5, 5],
            "bbarh": [5, 5],
            "n": [20, 10],
            "Acc": [0.7, np.nan],
        }
    )
    before = t.copy()
    out = with_wilson_columns(t)
    pd.testing.assert_frame_equal(t, before)
    assert np.isnan(out.loc[1, "Acc_ci_low"]) and "Sens_ci_low" not in out


def test_csv_into_a_missing_folder_names_the_option(voyage_dir, capsys):
    assert run_cli(ARGS + ["--csv", "no/such/folder/out.csv"]) == 1
    err = capsys.readouterr().err
    assert "cannot write the CSV file 'no/such/folder/out.csv' (--csv FILE)" in err


def test_with_wilson_columns_of_an_empty_denominator_is_nan_without_a_warning():
    # the CLI's measures use zero_division="nan" (NaN, no warning): their intervals too
    import warnings

    t = pd.DataFrame(
        {
            "bh": [7, 0, 0],
            "bhbar": [3, 0, 0],
            "bbarhbar": [5, 5, 5],
            "bbarh": [5, 5, 5],
            "n": [20, 10, 10],
            "Acc": [0.7, np.nan, np.nan],
        }
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = with_wilson_columns(t)
    np.testing.assert_array_equal(np.isnan(out["Acc_ci_low"]), [False, True, True])
    ci = binomtest(7, 10).proportion_ci(0.95, method="wilson")
    assert (out.loc[0, "Acc_ci_low"], out.loc[0, "Acc_ci_high"]) == pytest.approx(
        (ci.low, ci.high), abs=1e-12
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        every = with_wilson_columns(t.iloc[1:])  # no row with trials
    assert np.isnan(every["Acc_ci_high"]).all()


def test_csv_is_utf8_whatever_the_locale(tmp_path):
    # a value outside ASCII, under the C locale: the CSV is UTF-8 like every output file
    import os
    import subprocess
    import sys

    (tmp_path / "v.names").write_text(
        "voyage.\n\noutlook: sunny, rain\u00e9.\ntemp: continuous.\nvoyage: go, dont_go.\n",
        encoding="utf-8",
    )
    (tmp_path / "v.data").write_text("sunny,1,go\nrain\u00e9,2,dont_go\n", encoding="utf-8")
    (tmp_path / "v.pbm").write_text(
        "R0001 IF outlook = rain\u00e9 THEN CLASS = dont_go\nR0002 DEFAULT CLASS = go\n",
        encoding="utf-8",
    )
    env = dict(os.environ, LC_ALL="C", PYTHONUTF8="0", PYTHONCOERCECLOCALE="0")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "xplique_ext.cli",
            "rules",
            "-d",
            "v.data",
            "-f",
            "v.pbm",
            "-s",
            "out.pbm",
            "--csv",
            "out.csv",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert "rain\u00e9" in (tmp_path / "out.csv").read_text(encoding="utf-8")


# -- files named with their role and option --------------------------------------------------------
def test_cli_missing_data_file_is_named(voyage_dir, capsys):
    # the default names file (nope.names) is missing too: the data file is what to report
    assert run_cli(["rules", "-d", "nope.data", "-f", "voyage.cn2.unordered.pbm"]) == 1
    err = capsys.readouterr().err
    assert "data file 'nope.data' (-d DATA)" in err and "No such file" in err
    assert "nope.names" not in err


def test_cli_missing_data_file_is_named_before_a_missing_names_file(voyage_dir, capsys):
    argv = ["rules", "-d", "nope.data", "-n", "nope.names", "-f", "voyage.cn2.unordered.pbm"]
    assert run_cli(argv) == 1
    assert "data file 'nope.data' (-d DATA)" in capsys.readouterr().err


def test_cli_fire_files_are_named(tmp_path, capsys):
    assert run_cli(["fire", "-f", str(tmp_path / "pairs.txt")]) == 1
    assert "pairs file" in capsys.readouterr().err
    assert run_cli(["fire", "0.1,3", "-s", str(tmp_path / "no" / "out.txt")]) == 1
    err = capsys.readouterr().err
    assert "output file" in err and "(-s OUT)" in err


def test_cli_missing_names_files_are_named_with_their_role(voyage_dir, capsys):
    (voyage_dir / "other.data").write_text((voyage_dir / "voyage.test").read_text())
    assert run_cli(["rules", "-d", "other.data", "-f", "voyage.cn2.unordered.pbm"]) == 1
    err = capsys.readouterr().err
    assert "names file 'other.names', the default for -d other.data" in err
    assert "-n NAMES" in err
    argv = ["rules", "-d", "voyage.test", "-n", "nope.names", "-f", "voyage.cn2.unordered.pbm"]
    assert run_cli(argv) == 1
    assert "names file 'nope.names' (-n NAMES)" in capsys.readouterr().err
    assert run_cli(["rules", "-d", "voyage.test", "-f", "nope.pbm"]) == 1
    assert "rule file 'nope.pbm' (-f RULES)" in capsys.readouterr().err
    argv = ["rules", "-d", "voyage.test", "-f", "voyage.cn2.unordered.pbm", "-s", "no/dir/out"]
    assert run_cli(argv) == 1
    assert "output file 'no/dir/out' (-s OUT)" in capsys.readouterr().err


# -- fire: negative values reach the domain error --------------------------------------------------
@pytest.mark.parametrize(
    "argv, message",
    [
        (["fire", "-0.1,3"], r"`predictive_loss` must be numbers >= 0 \(Eq. 1\), got -0.1"),
        (["fire", "0.1,3", "-.5,2"], r"`predictive_loss` .* got -0.5"),
        (["fire", "--psi", "2", "-1,-3"], r"`predictive_loss` .* got -1$"),
        (["fire", "--psi", "-1", "0.1,3"], r"`psi` must be a finite real number > 0"),
        (["fire", "A=-0.1,3"], r"`predictive_loss` .* got -0.1"),
    ],
)
def test_cli_fire_negative_values_reach_the_domain_error(argv, message, capsys):
    assert run_cli(argv) == 1
    err = capsys.readouterr().err
    assert "unrecognized arguments" not in err
    assert re.search(message, err), err


def test_cli_fire_negative_pair_through_the_main_parser(capsys):
    assert cli_main(["fire", "-0.1,3"]) == 1
    assert "`predictive_loss` must be numbers >= 0 (Eq. 1)" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # real unknown options are still refused
        cli_main(["fire", "-x", "0.1,3"])


# -- the report's figures (voyage) -----------------------------------------------------------------
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


def test_xplique_ext_main_dispatches_rules(voyage_dir, capsys):
    """The package's entry point (``xplique-ext``) runs the same command."""
    from xplique_ext.cli import main

    assert main(["rules", "-i", "-d", "voyage.test", "-f", "voyage.c45rules.pbm"]) == 0
    printed = printed_values(capsys.readouterr().out)
    assert printed == {k: tuple(map(list, v)) for k, v in FIGURES["inter-class"].items()}
    assert main(["fire", "--psi", "2,6", "1.0,4"]) == 0
    assert capsys.readouterr().out.splitlines()[1].split()[-2:] == ["2.14", "1.07"]


# -- --format --------------------------------------------------------------------------------------
def test_rules_data_is_required_in_usage_and_parsing(capsys):
    _help("rules")
    text = capsys.readouterr().out
    usage = text.split("\n\n")[0]
    assert "(-d DATA | --copy-examples DIR)" in usage  # no brackets: required
    with pytest.raises(SystemExit) as exit_info:
        main(["rules", "-f", "rules.pbm"])
    assert exit_info.value.code == 2
    assert "-d" in capsys.readouterr().err


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


# -- --dask ADDRESS: one clear error within seconds ------------------------------------------------
@pytest.fixture
def cli_files(tmp_path):
    for name in ("voyage.names", "voyage.test", "voyage.cn2.unordered.pbm"):
        (tmp_path / name).write_bytes(open(example_path(name), "rb").read())
    return [
        "rules",
        "-d",
        str(tmp_path / "voyage.test"),
        "-n",
        str(tmp_path / "voyage.names"),
        "-f",
        str(tmp_path / "voyage.cn2.unordered.pbm"),
    ]


@pytest.fixture
def plain_server():
    """A TCP server on 127.0.0.1 that accepts connections and never answers."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    held = []

    def accept():
        while True:
            try:
                held.append(server.accept()[0])
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    yield f"tcp://127.0.0.1:{server.getsockname()[1]}"
    server.close()
    for connection in held:
        connection.close()


def _closed_port():
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    return f"tcp://127.0.0.1:{port}"


@pytest.mark.parametrize(
    "address, message",
    [
        ("plain", r"--dask: no Dask scheduler answered at tcp://127\.0\.0\.1:\d+ within 5 s"),
        ("closed", r"--dask: cannot reach a Dask scheduler at tcp://127\.0\.0\.1:\d+"),
        ("notanaddress", r"--dask: invalid Dask scheduler address 'notanaddress'"),
        ("tcp://127.0.0.1:port", r"--dask: invalid Dask scheduler address"),
        ("foo://127.0.0.1:1", r"--dask: invalid Dask scheduler address .*unknown address scheme"),
    ],
)
def test_cli_dask_address_without_a_scheduler_fails_in_seconds(
    address, message, cli_files, plain_server, capsys
):
    pytest.importorskip("distributed")
    address = {"plain": plain_server, "closed": _closed_port()}.get(address, address)
    began = time.perf_counter()
    assert run_cli(cli_files + ["--dask", address]) == 1
    elapsed = time.perf_counter() - began
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("xplique-ext rules: error: "), err
    assert "Traceback" not in err
    assert re.search(message, lines[0]), lines[0]
    assert elapsed < 15, f"took {elapsed:.1f} s"


# -- --chunksize -----------------------------------------------------------------------------------
def test_cli_chunksize_on_an_empty_file(tmp_path, capsys):
    (tmp_path / "e.names").write_text(NAMES_TEXT)
    (tmp_path / "e.data").write_text("\n\n")
    (tmp_path / "r.pbm").write_text("R0001 IF colour = red THEN CLASS = c0\n")
    common = ["rules", "-d", str(tmp_path / "e.data"), "-f", str(tmp_path / "r.pbm")]
    assert run_cli(common) == 0
    whole = capsys.readouterr().out
    assert run_cli(common + ["--chunksize", "3"]) == 0
    assert capsys.readouterr().out == whole and "0]" in whole


# -- no command writes over one of its own inputs ---------------------------------------------
RULES_INPUTS = {
    "voyage.test": "the data file (-d DATA)",
    "voyage.names": "the names file read beside -d DATA",
    "voyage.cn2.unordered.pbm": "the rule file (-f RULES)",
}


def _refused(argv, capsys, protected, fragment, command="rules"):
    """Run ``argv``: refused with one usage error line naming ``fragment``, every file of
    ``protected`` byte-identical, nothing printed."""
    before = {path: path.read_bytes() for path in protected}
    assert run_cli(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert captured.err.startswith(f"xplique-ext {command}: error: ")
    assert fragment in captured.err and "write over its own input" in captured.err
    assert {path: path.read_bytes() for path in protected} == before


@pytest.mark.parametrize("option", ["-s", "--csv"])
@pytest.mark.parametrize("target", sorted(RULES_INPUTS))
def test_an_output_over_an_input_is_refused(voyage_dir, capsys, option, target):
    argv = ["rules", "-d", "voyage.test", "-f", "voyage.cn2.unordered.pbm", option, target]
    inputs = [voyage_dir / name for name in RULES_INPUTS]
    metavar = {"-s": "OUT", "--csv": "FILE"}[option]
    _refused(argv, capsys, inputs, f"{option} {metavar} {target!r} is {RULES_INPUTS[target]}")


@pytest.mark.parametrize("option", ["-s", "--csv"])
def test_an_output_over_an_explicit_names_file_is_refused(voyage_dir, capsys, option):
    argv = ["rules", "-d", "voyage.test", "-n", "voyage.names", "-f", "voyage.cn2.unordered.pbm"]
    _refused(
        argv + [option, "voyage.names"],
        capsys,
        [voyage_dir / "voyage.names"],
        "the names file (-n NAMES)",
    )


@pytest.mark.parametrize("link", ["symbolic", "hard"])
@pytest.mark.parametrize("option", ["-s", "--csv"])
def test_an_output_linked_to_an_input_is_refused(voyage_dir, capsys, link, option):
    inputs = [voyage_dir / name for name in RULES_INPUTS]
    for name in RULES_INPUTS:
        alias = voyage_dir / f"{link}-{name}"
        if link == "symbolic":
            alias.symlink_to(voyage_dir / name)
        else:
            os.link(voyage_dir / name, alias)
        argv = ["rules", "-d", "voyage.test", "-f", "voyage.cn2.unordered.pbm", option, alias.name]
        _refused(argv, capsys, inputs, RULES_INPUTS[name])
        # the input given through the link, the output by its own name
        linked = {"voyage.test": "-d", "voyage.cn2.unordered.pbm": "-f"}
        if name in linked:
            argv = ["rules", "-d", "voyage.test", "-f", "voyage.cn2.unordered.pbm"]
            argv[argv.index(linked[name]) + 1] = alias.name
            _refused(argv + [option, name], capsys, inputs, RULES_INPUTS[name])


def test_the_same_file_for_two_outputs_is_refused(voyage_dir, capsys):
    base = ["rules", "-d", "voyage.test", "-f", "voyage.cn2.unordered.pbm"]
    assert run_cli(base + ["-s", "out.txt", "--csv", "./out.txt"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert "-s OUT and --csv FILE are the same file" in captured.err
    assert not (voyage_dir / "out.txt").exists()


def test_fire_output_over_its_pairs_file_is_refused(tmp_path, capsys):
    pairs = tmp_path / "pairs.txt"
    pairs.write_text("0.1 3\n")
    (tmp_path / "link.txt").symlink_to(pairs)
    for output in (pairs, tmp_path / "link.txt"):
        argv = ["fire", "-f", str(pairs), "-s", str(output)]
        _refused(argv, capsys, [pairs], "the pairs file (-f FILE)", command="fire")


def test_an_interrupted_write_leaves_the_old_output_whole(voyage_dir, monkeypatch):
    import xplique_ext.commons.files as files

    (voyage_dir / "out.pbm").write_text("kept\n")
    real_open = open

    def open_interrupted(path, mode="r", **kwargs):
        handle = real_open(path, mode, **kwargs)
        if "w" in mode:
            real_write = handle.write

            def write(text):  # half the text, then Ctrl-C
                real_write(text[: len(text) // 2])
                raise KeyboardInterrupt

            handle.write = write
        return handle

    monkeypatch.setattr(files, "open", open_interrupted, raising=False)
    with pytest.raises(KeyboardInterrupt):
        run_cli(["rules", "-d", "voyage.test", "-f", "voyage.cn2.unordered.pbm", "-s", "out.pbm"])
    assert (voyage_dir / "out.pbm").read_text() == "kept\n"
    assert not [name for name in os.listdir(voyage_dir) if name.endswith(".tmp")]
