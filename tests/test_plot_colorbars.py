"""Every explanation figure has a colour bar, and signed attributions are centred on 0."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from xplique_ext.plots import plot_aixi_samples, plot_scored_explanations  # noqa: E402
from xplique_ext.plots.attributions import symmetric_limit  # noqa: E402
from xplique_ext.text.plots import plot_highlight  # noqa: E402


def _maps(fig):
    """(image, colour bar) pairs of the attribution layers of a figure."""
    pairs = []
    for ax in fig.axes:
        for image in ax.get_images()[1:]:  # layer 0: the input image
            pairs.append((image, image.colorbar))
    return pairs


def _assert_centred(image, values):
    lim = np.abs(values).max()
    assert image.norm.vmin == pytest.approx(-lim) and image.norm.vmax == pytest.approx(lim)


def test_scored_explanations_have_centred_colour_bars():
    rng = np.random.default_rng(0)
    images = rng.random((3, 8, 8, 1))
    signed = rng.normal(size=(3, 8, 8)) + 0.5  # not symmetric on its own
    positive = rng.random((3, 8, 8, 2))
    fig = plot_scored_explanations(images, {"signed": signed, "positive": positive}, n_images=2)
    pairs = _maps(fig)
    assert len(pairs) == 4 and all(bar is not None for _, bar in pairs)
    _assert_centred(pairs[0][0], signed[0])
    _assert_centred(pairs[1][0], positive[0].sum(-1))
    plt.close(fig)


def test_aixi_samples_have_centred_colour_bars():
    from xplique_ext.datasets import make_aixi_shape

    data = make_aixi_shape(4, image_size=64, function="class", seed=0)
    noise = np.random.default_rng(0).normal(size=(4, 64, 64)) - 0.3
    fig = plot_aixi_samples(data, 3, explanations={"noise": noise})
    pairs = _maps(fig)
    assert len(pairs) == 2 * 3 and all(bar is not None for _, bar in pairs)
    _assert_centred(pairs[-1][0], noise[2])  # last map drawn: explanation of image 3
    plt.close(fig)


def test_highlight_has_a_centred_colour_bar():
    fig = plot_highlight("good but bad", [0.5, 0.0, -2.0])
    bars = [ax for ax in fig.axes if ax.get_label() == "<colorbar>"]
    assert len(bars) == 1
    low, high = bars[0].get_ylim()
    assert low == pytest.approx(-2.0) and high == pytest.approx(2.0)
    plt.close(fig)


def test_symmetric_limit():
    assert symmetric_limit(np.array([0.5, -2.0, np.nan, np.inf])) == 2.0
    assert symmetric_limit(np.zeros(3)) == 1.0 and symmetric_limit(np.array([])) == 1.0
