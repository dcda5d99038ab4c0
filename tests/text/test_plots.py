"""text.plots: the token highlight has a colour bar centred on 0."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest

from xplique_ext.text.plots import plot_highlight


def test_highlight_has_a_centred_colour_bar():
    fig = plot_highlight("good but bad", [0.5, 0.0, -2.0])
    bars = [ax for ax in fig.axes if ax.get_label() == "<colorbar>"]
    assert len(bars) == 1
    low, high = bars[0].get_ylim()
    assert low == pytest.approx(-2.0) and high == pytest.approx(2.0)
    plt.close(fig)
