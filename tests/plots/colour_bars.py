"""Helpers of the plot tests: the attribution layers of a figure and their colour limits."""

import numpy as np
import pytest


def attribution_layers(fig):
    """(image, colour bar) pairs of the attribution layers of a figure."""
    pairs = []
    for ax in fig.axes:
        for image in ax.get_images()[1:]:  # layer 0: the input image
            pairs.append((image, image.colorbar))
    return pairs


def assert_centred(image, values):
    """The colour limits of ``image`` are -m and m, with m the largest |value|."""
    lim = np.abs(values).max()
    assert image.norm.vmin == pytest.approx(-lim) and image.norm.vmax == pytest.approx(lim)
