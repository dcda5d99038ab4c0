"""``xplique-ext rules --csv``: Wilson intervals for the proportion measures, the rest
unchanged."""

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest

from tests.rules.rules_cli_helpers import run_cli
from xplique_ext.cli.rules import PROPORTION_MEASURES, with_wilson_columns
from xplique_ext.rules import evaluate_rules, load_voyage

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
