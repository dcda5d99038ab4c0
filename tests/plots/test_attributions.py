"""plots.attributions: the grid of scored explanations with centred colour bars, and the
score bars."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np

from tests.plots.colour_bars import assert_centred, attribution_layers
from xplique_ext.plots import plot_scored_explanations, plot_scores
from xplique_ext.plots.attributions import symmetric_limit


def test_scored_explanations_grid():
    rng = np.random.default_rng(0)
    images = rng.random((3, 8, 8, 3))
    maps = {"a": rng.random((3, 8, 8)), "b": rng.random((3, 8, 8, 3))}
    images0, maps0 = images.copy(), {k: v.copy() for k, v in maps.items()}
    fig = plot_scored_explanations(images, maps, {"a": 0.25, "b": [0.1, 0.2, 0.3]}, n_images=2)
    maps_axes = [ax for ax in fig.axes if ax.get_label() != "<colorbar>"]  # bars beside maps
    axes = np.array(maps_axes).reshape(2, 3)
    assert all(len(ax.get_xticks()) == 0 and len(ax.get_yticks()) == 0 for ax in axes.ravel())
    assert axes[0, 1].get_title() == "a\nscore 0.250"
    assert [ax.get_xlabel() for ax in axes[:, 2]] == ["0.100", "0.200"]
    np.testing.assert_array_equal(images, images0)
    for k in maps:
        np.testing.assert_array_equal(maps[k], maps0[k])
    matplotlib.pyplot.close(fig)


def test_scored_explanations_have_centred_colour_bars():
    rng = np.random.default_rng(0)
    images = rng.random((3, 8, 8, 1))
    signed = rng.normal(size=(3, 8, 8)) + 0.5  # not symmetric on its own
    positive = rng.random((3, 8, 8, 2))
    fig = plot_scored_explanations(images, {"signed": signed, "positive": positive}, n_images=2)
    pairs = attribution_layers(fig)
    assert len(pairs) == 4 and all(bar is not None for _, bar in pairs)
    assert_centred(pairs[0][0], signed[0])
    assert_centred(pairs[1][0], positive[0].sum(-1))
    plt.close(fig)


def test_symmetric_limit():
    assert symmetric_limit(np.array([0.5, -2.0, np.nan, np.inf])) == 2.0
    assert symmetric_limit(np.zeros(3)) == 1.0 and symmetric_limit(np.array([])) == 1.0


def test_plot_scores_best_on_top():
    scores = {"a": 0.2, "b": [0.3, 0.3, np.nan], "c": 0.1}

    def top_to_bottom(ax):
        labels = sorted(ax.get_yticklabels(), key=lambda t: -t.get_position()[1])
        return [t.get_text() for t in labels]

    assert top_to_bottom(plot_scores(scores, metric_name="MuFidelity")) == ["b", "a", "c"]
    ax = plot_scores(scores, metric_name="EMD", higher_is_better=False)
    assert top_to_bottom(ax) == ["c", "a", "b"]
    assert ax.get_xlabel() == "EMD (lower is better)"
    matplotlib.pyplot.close("all")
