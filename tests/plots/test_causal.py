"""Tests of plots/causal.py: the curves of Deletion and Insertion."""

import warnings

import numpy as np
import pytest

from tests.conftest import linear_model
from xplique_ext.commons.warnings import UndefinedScoreWarning
from xplique_ext.metrics import Insertion


def test_plot_draws_each_curve_and_their_mean():
    import matplotlib

    matplotlib.use("Agg")
    from xplique_ext.plots import plot_causal_curves

    x = np.random.default_rng(11).random((3, 4))
    phi = np.random.default_rng(12).normal(size=(3, 4))
    phi[0] = 1.0  # an undefined curve is left out
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedScoreWarning)
        details = Insertion(linear_model((4,)), x, np.ones(3), steps=4).details(phi)
    fig = plot_causal_curves(details, title="Insertion")
    lines = fig.axes[0].get_lines()
    assert len(lines) == 3  # two defined curves and the mean
    np.testing.assert_array_equal(lines[0].get_xdata(), [0, 1, 2, 3, 4])
    assert fig.axes[0].get_title() == "Insertion"
    with pytest.raises(ValueError, match="curve_<k>"):
        plot_causal_curves(details[["score"]])
