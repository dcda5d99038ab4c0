"""plots.ground_truth: AIXI samples with centred colour bars, the leaderboard's bars and the
sample-size curve."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest

from tests.plots.colour_bars import assert_centred, attribution_layers
from xplique_ext.datasets import make_aixi_shape
from xplique_ext.metrics import GroundTruthMeasure, ground_truth_leaderboard
from xplique_ext.metrics.ground_truth_measures import DECLARATIONS, DIRECTIONS
from xplique_ext.plots import (
    plot_aixi_samples,
    plot_ground_truth_leaderboard,
    plot_sample_size_curve,
)


@pytest.fixture(scope="module")
def data():
    return make_aixi_shape(10, image_size=64, function="class", seed=2)


def test_plots_draw(data):
    import matplotlib.pyplot as plt

    rng = np.random.default_rng(0)
    fig = plot_aixi_samples(data, 4, explanations={"noise": rng.random((10, 64, 64))})
    assert len(fig.axes) == 3 * 4 + 2 * 4  # a colour bar next to each map
    _, per_sample = ground_truth_leaderboard(
        {"a": data.ground_truth + 0.1, "b": rng.random((10, 64, 64))}, data.ground_truth
    )
    fig = plot_ground_truth_leaderboard(per_sample, directions=DIRECTIONS)
    assert len(fig.axes) == 2
    ax = plot_sample_size_curve([8, 16, 32, 64], {"shape ssin": [0.3, 0.2, 0.1, 0.05]})
    assert len(ax.lines) == 1
    plt.close("all")


def test_aixi_samples_have_centred_colour_bars():
    from xplique_ext.datasets import make_aixi_shape

    data = make_aixi_shape(4, image_size=64, function="class", seed=0)
    noise = np.random.default_rng(0).normal(size=(4, 64, 64)) - 0.3
    fig = plot_aixi_samples(data, 3, explanations={"noise": noise})
    pairs = attribution_layers(fig)
    assert len(pairs) == 2 * 3 and all(bar is not None for _, bar in pairs)
    assert_centred(pairs[-1][0], noise[2])  # last map drawn: explanation of image 3
    plt.close(fig)


def _top_to_bottom(ax):
    labels = sorted(ax.get_yticklabels(), key=lambda t: -t.get_position()[1])
    return [t.get_text() for t in labels]


def test_leaderboard_bars_follow_the_declared_directions():
    per_sample = {
        "mass accuracy": {"a": np.array([0.9, 0.8]), "b": np.array([0.1, 0.2])},
        "my distance": {"a": np.array([0.9, 0.8]), "b": np.array([0.1, 0.2])},
    }
    directions = {"mass accuracy": DECLARATIONS["mass_accuracy"], "my distance": False}
    fig = plot_ground_truth_leaderboard(per_sample, directions=directions)
    accuracy, distance = fig.axes
    assert _top_to_bottom(accuracy) == ["a", "b"]  # higher is better: a on top
    assert accuracy.get_xlabel() == "mass accuracy (higher is better)"
    # a label the plot does not know: its direction is the one passed, not guessed
    assert _top_to_bottom(distance) == ["b", "a"]
    assert distance.get_xlabel() == "my distance (lower is better)"
    fig = plot_ground_truth_leaderboard(
        {"EMD": per_sample["my distance"]}, directions={"EMD": GroundTruthMeasure("emd")}
    )
    assert _top_to_bottom(fig.axes[0]) == ["b", "a"]
    plt.close("all")


def test_leaderboard_plot_needs_the_direction_of_each_measure():
    per_sample = {"EMD": {"a": np.array([0.1])}, "KL": {"a": np.array([0.2])}}
    with pytest.raises(ValueError, match=r"`directions` must give .* missing \['KL'\]"):
        plot_ground_truth_leaderboard(per_sample, directions={"EMD": False})
    with pytest.raises(TypeError, match="must declare a bool `higher_is_better`"):
        plot_ground_truth_leaderboard(per_sample, ["EMD"], directions={"EMD": "lower"})
    plt.close("all")
