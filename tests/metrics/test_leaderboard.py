"""ground_truth_leaderboard: explainers ranked by their measures, and what it refuses."""

import warnings

import numpy as np
import pandas as pd  # noqa: E402
import pytest

import xplique_ext.metrics as gtm
from xplique_ext.datasets import make_aixi_shape
from xplique_ext.metrics import (
    GroundTruthMeasure,
    emd,
    ground_truth_leaderboard,
)


@pytest.fixture(scope="module")
def suum_data():
    return make_aixi_shape(4, image_size=64, function="suum", seed=1)


@pytest.fixture(scope="module")
def data():
    return make_aixi_shape(10, image_size=64, function="class", seed=2)


def _point(shape, i, j):
    a = np.zeros(shape)
    a[i, j] = 1.0
    return a


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


def test_leaderboard_refuses_no_map_and_a_map_without_its_batch_axis(suum_data):
    truth = suum_data.ground_truth
    # was "`scores_by_name['a']` must be a non-empty array" (a parameter of compare_scores)
    with pytest.raises(ValueError, match=r"`ground_truth` must be a non-empty array"):
        gtm.ground_truth_leaderboard({"a": truth[:0]}, truth[:0])
    with pytest.raises(
        ValueError,
        match=r"`ground_truth` must be an array of shape \(N, H, W\) "
        r"or \(N, H, W, C\), got shape \(64, 64\): is the batch",
    ):
        gtm.ground_truth_leaderboard({"a": truth[0]}, truth[0])


def test_leaderboard_refuses_a_single_map_and_no_measure():
    from xplique_ext.metrics import ground_truth_leaderboard

    truth = np.zeros((2, 8, 8))
    truth[:, 2, 2] = 1
    with pytest.raises(
        ValueError,
        match=r"`ground_truth` must be an array of shape \(N, H, W\) or "
        r"\(N, H, W, C\), got shape \(8, 8\): is the batch",
    ):
        ground_truth_leaderboard({"a": truth[0], "b": truth[0]}, truth[0])
    with pytest.raises(ValueError, match="`measures` must name at least one measure"):
        ground_truth_leaderboard({"a": truth, "b": truth}, truth, measures=[])


def test_empty_leaderboard_is_a_clear_error():
    """No explainer is a ValueError naming `explanations`, not an IndexError."""
    truth = _point((8, 8), 2, 2)[None]
    with pytest.raises(ValueError, match="`explanations` must be a non-empty dict"):
        ground_truth_leaderboard({}, truth)
    with pytest.raises(TypeError, match="`explanations` must be a dict"):
        ground_truth_leaderboard([truth], truth)


def test_empty_leaderboard_is_a_value_error():
    from xplique_ext.metrics import ground_truth_leaderboard

    with pytest.raises(ValueError, match=r"`explanations` must be a non-empty dict"):
        ground_truth_leaderboard({}, np.ones((2, 4, 4)))
    with pytest.raises(TypeError, match=r"`explanations` must be a dict"):
        ground_truth_leaderboard([np.ones((2, 4, 4))], np.ones((2, 4, 4)))


def test_a_higher_is_better_first_measure_lists_the_best_explainer_first(data):
    """Sorted by the first measure in the direction it declares: mass accuracy (higher
    is better) puts the truth first, as the EMD (lower is better) does."""
    rng = np.random.default_rng(0)
    explanations = {
        "random": rng.random(data.ground_truth.shape),
        "noisy": data.ground_truth + 0.1 * rng.random(data.ground_truth.shape),
        "truth": data.ground_truth,
    }
    table, _ = ground_truth_leaderboard(explanations, data, measures=["mass_accuracy", "emd"])
    assert table.columns[0] == "mass accuracy (higher is better)"
    assert list(table.index) == ["truth", "noisy", "random"]
    assert table["mass accuracy (higher is better)"].is_monotonic_decreasing
    ranks = table.attrs["comparisons"]["mass accuracy"].explainers["rank"]
    assert ranks.reindex(table.index).tolist() == [1.0, 2.0, 3.0]
    by_emd, _ = ground_truth_leaderboard(explanations, data, measures=["emd", "mass_accuracy"])
    assert list(by_emd.index) == ["truth", "noisy", "random"]
    assert by_emd["EMD (lower is better)"].is_monotonic_increasing


def test_explainers_without_a_score_come_last():
    truth = np.zeros((3, 8, 8))
    truth[:, 2, 2] = 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table, _ = ground_truth_leaderboard(
            {"blank": np.zeros((3, 8, 8)), "flat": np.ones((3, 8, 8)), "exact": truth},
            truth,
            measures=["emd"],
        )
    assert list(table.index) == ["exact", "flat", "blank"]
    assert np.isnan(table.loc["blank", "EMD (lower is better)"])
