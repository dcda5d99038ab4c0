"""benchmarks/aixi_experiments.py runs at a tiny size and prints Tables 1-3 in the paper's
layout."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def experiments():
    spec = importlib.util.spec_from_file_location(
        "aixi_experiments", ROOT / "benchmarks" / "aixi_experiments.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_tables_1_and_2_with_the_function_as_the_model(experiments, capsys):
    results = experiments.main(
        ["--experiments", "1,2", "--n-images", "3", "--image-size", "64", "--sample-sizes", "4,64"]
    )
    printed = capsys.readouterr().out
    for caption in ("Table 1", "Table 2", "Fig. 5"):
        assert caption in printed
    for number in (1, 2):
        table = results[f"table{number}"]
        assert list(table["Function"]) == ["SSIN", "SSIN", "SUUM", "SUUM", "CLASS", "CLASS"]
        assert list(table["Dataset"]) == ["AIXI-Shape", "AIXI-Color"] * 3
        paper = experiments.PAPER[number]
        for _, row in table.iterrows():
            kl, emd = paper[(row["Function"].lower(), row["Dataset"][5:].lower())]
            assert row["KL paper"] == kl and row["EMD paper"] == emd
            if row["NaN"] == 3:  # e.g. class constant on every image: zero explanations
                assert np.isnan(row["EMD ours"]) and np.isnan(row["KL ours"])
                continue
            assert row["EMD ratio"] == pytest.approx(row["EMD ours"] / emd)
            assert row["KL ratio"] == pytest.approx(row["KL ours"] / kl)
            assert 0 <= row["EMD ours"] <= 1 and row["KL ours"] >= 0
    # 64 samples cover all 2^m subsets of at most 6 objects: exhaustive, as in Table 2
    np.testing.assert_allclose(
        results["figure5"]["n=64"].to_numpy(), results["table2"]["EMD ours"].to_numpy()
    )
    # suum is linear: exhaustive LIME on the function comes close to w_i
    assert results["table2"]["EMD ours"][2:4].max() < 0.05


def test_table_3_trains_the_cnn(experiments, capsys):
    results = experiments.main(
        [
            "--experiments",
            "3",
            "--functions",
            "class",
            "--datasets",
            "color",
            "--image-size",
            "32",
            "--n-images",
            "2",
            "--n-train",
            "16",
            "--n-val",
            "8",
            "--epochs",
            "1",
        ]
    )
    assert "Table 3" in capsys.readouterr().out
    table = results["table3"]
    assert list(table["Function"]) == ["CLASS"] and list(table["Dataset"]) == ["AIXI-Color"]
    assert 0 <= table["CNN val. acc./R2"][0] <= 1
    assert set(results["gradients"]["explainer"]) == {"Saliency", "IntegratedGradients"}
