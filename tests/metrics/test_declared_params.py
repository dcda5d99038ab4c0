"""Examples of issue 15 reached through the declared validation layer (no special case)."""

from __future__ import annotations

import numpy as np
import pytest

from xplique_ext.metrics import (
    PERCY,
    GroundTruthMeasure,
    GroundTruthSaliency,
    MuFidelity,
    emd,
    ground_truth_leaderboard,
    pointing_game,
)


def _model(x):
    return x


def test_string_targets_are_a_type_error_naming_targets():
    x = np.zeros((3, 4, 4, 1), np.float32)
    with pytest.raises(
        TypeError,
        match=r"^`targets` must be an array of numbers .* or None, got an array of shape \(3,\) and dtype <U3",
    ):
        MuFidelity(_model, x, np.array(["cat", "dog", "cat"]))


def test_targets_of_rank_3_are_refused_with_their_shape():
    x = np.zeros((3, 4, 4, 1), np.float32)
    with pytest.raises(
        ValueError,
        match=r"`targets` must be an array of shape \(N,\) or "
        r"\(N, K\) or None, got shape \(3, 1, 1\)",
    ):
        MuFidelity(_model, x, np.zeros((3, 1, 1)))


def test_bool_is_not_a_number():
    x = np.zeros((3, 4, 4, 1), np.float32)
    with pytest.raises(
        TypeError, match=r"`nb_samples` must be an integer in \[2, 1000000\] or 'auto', got True"
    ):
        MuFidelity(_model, x, nb_samples=True)
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


def test_declared_values_arrive_converted():
    x = np.zeros((3, 4, 4, 1), np.float32)
    metric = MuFidelity(
        _model,
        x,
        batch_size=np.int64(2),
        nb_samples=np.int32(5),
        subset_percent=np.float32(0.25),
        grid_size=2,
    )
    assert type(metric.batch_size) is int and type(metric.nb_samples) is int
    assert type(metric.subset_percent) is float


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
