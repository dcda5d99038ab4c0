"""Examples of issue 15 reached through the declared validation layer (no special case)."""

from __future__ import annotations

import numpy as np
import pytest

from xplique_ext.metrics import (
    PERCY,
    GroundTruthMeasure,
    GroundTruthSaliency,
    emd,
    ground_truth_leaderboard,
    pointing_game,
)


def _model(x):
    return x


def test_bool_is_not_a_number():
    with pytest.raises(TypeError, match=r"`progress` must be a bool, got 1 \(int\)"):
        emd(np.ones((4, 4)), np.ones((4, 4)), progress=1)


def test_empty_leaderboard_is_a_value_error():
    with pytest.raises(ValueError, match=r"`explanations` must be a non-empty dict"):
        ground_truth_leaderboard({}, np.ones((2, 4, 4)))
    with pytest.raises(TypeError, match=r"`explanations` must be a dict"):
        ground_truth_leaderboard([np.ones((2, 4, 4))], np.ones((2, 4, 4)))


def test_tensors_and_lists_are_accepted_as_maps():
    tf = pytest.importorskip("tensorflow")
    a = np.zeros((2, 4, 4))
    a[:, 1, 1] = 1
    expected = pointing_game(a, a != 0)
    np.testing.assert_array_equal(pointing_game(tf.constant(a), (a != 0).tolist()), expected)


def test_percy_options_use_the_layer():
    with pytest.raises(ValueError, match=r"^`alpha` must be in \(0, 1\), got 1$"):
        PERCY(_model, ["a but b"], [1], alpha=1.0)
    with pytest.raises(TypeError, match=r"^`top_k` must be an integer >= 1 or None, got 2.5"):
        PERCY(_model, ["a but b"], [1], top_k=2.5)


def test_ground_truth_measure_options_are_declared():
    with pytest.raises(
        TypeError,
        match=r"`resize` must be None or a pair of integers "
        r">= 2 \(height, width\), got 'small'",
    ):
        GroundTruthSaliency(
            _model,
            np.zeros((2, 4, 4, 1)),
            ground_truth=np.ones((2, 4, 4)),
            measure=GroundTruthMeasure("kl", resize="small"),
        )
