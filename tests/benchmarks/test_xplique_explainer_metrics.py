"""benchmarks/xplique_explainer_metrics.py runs at a tiny size and prints one row per
metric, with Xplique's scores beside ours."""

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_the_benchmark_prints_a_row_per_metric(capsys):
    pytest.importorskip("xplique")
    spec = importlib.util.spec_from_file_location(
        "xplique_explainer_metrics", ROOT / "benchmarks" / "xplique_explainer_metrics.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main(["--quick", "--repeats", "1"])
    printed = capsys.readouterr().out
    rows = [line for line in printed.splitlines() if line.startswith("| ") and "---" not in line]
    names = [row.split("|")[1].strip() for row in rows[1:]]
    assert names == [
        "Complexity",
        "Sparseness",
        "AverageStability",
        "RandomLogitMetric",
        "ModelRandomizationMetric",
        "MeGe",
    ]
    reco = next(line for line in printed.splitlines() if line.startswith("ReCo"))
    ours, theirs = (part.split()[-1] for part in reco.split(","))
    assert ours == theirs
