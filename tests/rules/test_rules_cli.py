"""``xplique-ext rules`` errors and ``xplique-ext fire``; ``demo_section``."""

import io

import numpy as np
import pytest
from rules_cli_helpers import run_cli

from xplique_ext.rules import copy_examples
from xplique_ext.rules.demo import demo_section


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


def test_demo_section():
    rng = np.random.default_rng(0)
    counts = rng.integers(0, 6, size=(300, 3)).astype(float)
    black_box = (counts[:, 0] > 2).astype(int) + (counts[:, 1] > 3)
    text = demo_section(counts, ["circles", "squares", "stars"], black_box, seed=0)
    lines = text.splitlines()
    assert lines[1].split() == ["leaves", "rules", "fidelity", "FiRe", "Qs"]
    rows = [line.split() for line in lines[2:6]]
    assert [int(r[0]) for r in rows] == [2, 3, 4, 8]
    fidelities = [float(r[2]) for r in rows]
    assert fidelities == sorted(fidelities)  # bigger trees mimic better here
    assert fidelities[-1] == 1.0 and float(rows[-1][3]) == 0.0
    assert "Best by FiRe" in text and "IF" in text
    assert demo_section(counts, ["circles", "squares", "stars"], black_box, seed=0) == text
    with pytest.raises(ValueError, match="`feature_names`"):
        demo_section(counts, ["a"], black_box)


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
