"""plots.attributions: the grid of scored explanations and the score bars."""

import matplotlib
import numpy as np

from xplique_ext.plots import plot_scored_explanations, plot_scores

matplotlib.use("Agg")


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
