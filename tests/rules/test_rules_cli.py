"""``xplique-ext rules`` errors and ``xplique-ext fire``; ``demo_section``."""

import io
import os

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
    # no tree to grow: a named error (c8a0a2f: "min() arg is an empty sequence", and with
    # it no word on wrong feature_names, which 0.x checked before growing any tree)
    for leaves in ((), [], np.array([], dtype=int)):
        with pytest.raises(ValueError, match="`leaves` must hold at least one"):
            demo_section(counts, ["a"], black_box, leaves=leaves)
    assert demo_section(counts, ["circles", "squares", "stars"], black_box, leaves=np.array([2]))


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
