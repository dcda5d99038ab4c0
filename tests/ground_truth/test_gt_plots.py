"""Leaderboard table and the plot helpers of the ground-truth family."""

import matplotlib

matplotlib.use("Agg")

import warnings

import numpy as np
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from xplique_ext.datasets import make_aixi_shape  # noqa: E402
from xplique_ext.metrics import GroundTruthMeasure, emd, ground_truth_leaderboard  # noqa: E402
from xplique_ext.plots import (  # noqa: E402
    plot_aixi_samples,
    plot_ground_truth_leaderboard,
    plot_sample_size_curve,
)


@pytest.fixture(scope="module")
def data():
    return make_aixi_shape(10, image_size=64, function="class", seed=2)


def test_leaderboard_ranks_and_matches_the_measures(data):
    rng = np.random.default_rng(0)
    explanations = {
        "random": rng.random(data.ground_truth.shape),
        "truth": data.ground_truth,
        "noisy": data.ground_truth + 0.1 * rng.random(data.ground_truth.shape),
    }
    table, per_sample = ground_truth_leaderboard(
        explanations, data.ground_truth, masks=data.relevant_masks
    )
    assert list(table.index) == ["truth", "noisy", "random"]
    assert table.columns[0] == "EMD (lower is better)"
    assert "pointing game (higher is better)" in table.columns
    with warnings.catch_warnings():  # images without a circle or square: NaN
        warnings.simplefilter("ignore")
        expected = np.nanmean(emd(explanations["noisy"], data.ground_truth))
    assert table.loc["noisy", "EMD (lower is better)"] == pytest.approx(expected)
    assert per_sample["EMD"]["truth"].shape == (len(data),)
    assert table.loc["truth", "pointing game (higher is better)"] == 1.0
    # intervals over the images, and the paired comparison of the explainers
    emd_col = "EMD (lower is better)"
    assert (table["EMD ci_low"] <= table[emd_col]).all()
    assert (table[emd_col] <= table["EMD ci_high"]).all()
    comparisons = table.attrs["comparisons"]
    assert set(comparisons) == set(per_sample)
    assert comparisons["pointing game"].explainers["method"].str.startswith("Wilson").all()
    emd_pairs = comparisons["EMD"].pairs
    assert emd_pairs.loc["random - truth", "better"] == "truth"
    assert emd_pairs.loc["random - truth", "differs"]
    # an AIXIData in place of the maps: its paper ground truth and relevant masks
    table2, _ = ground_truth_leaderboard(explanations, data)
    pd.testing.assert_frame_equal(table2, table)
    shapley, _ = ground_truth_leaderboard(explanations, data, convention="object")
    assert shapley.loc["truth", "EMD (lower is better)"] > 0  # truth is the paper's map
    # measures with their options, in the order given
    chosen, scores = ground_truth_leaderboard(
        explanations, data, measures=["pointing_game", GroundTruthMeasure("emd", resize=None)]
    )
    assert list(scores) == ["pointing game", "EMD"] and chosen.columns[0].startswith("pointing")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        full = np.nanmean(emd(explanations["noisy"], data.ground_truth, resize=None))
    assert chosen.loc["noisy", "EMD (lower is better)"] == pytest.approx(full)
    with pytest.raises(ValueError, match="`measures` must have distinct labels"):
        ground_truth_leaderboard(explanations, data, measures=["emd", GroundTruthMeasure("emd")])
    with pytest.raises(ValueError, match="`measures` must be one of \\['emd', 'kl'\\]"):
        ground_truth_leaderboard(explanations, data.ground_truth, measures=["pointing_game"])


def test_plots_draw(data):
    import matplotlib.pyplot as plt

    rng = np.random.default_rng(0)
    fig = plot_aixi_samples(data, 4, explanations={"noise": rng.random((10, 64, 64))})
    assert len(fig.axes) == 3 * 4 + 2 * 4  # a colour bar next to each map
    _, per_sample = ground_truth_leaderboard(
        {"a": data.ground_truth + 0.1, "b": rng.random((10, 64, 64))}, data.ground_truth
    )
    fig = plot_ground_truth_leaderboard(per_sample)
    assert len(fig.axes) == 2
    ax = plot_sample_size_curve([8, 16, 32, 64], {"shape ssin": [0.3, 0.2, 0.1, 0.05]})
    assert len(ax.lines) == 1
    plt.close("all")
