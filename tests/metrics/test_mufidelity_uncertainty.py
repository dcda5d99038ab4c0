"""MuFidelity's per-input standard error and adaptive sampling (nb_samples='auto')."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

from tests.conftest import linear_model
from xplique_ext.commons.warnings import UndefinedScoreWarning
from xplique_ext.metrics import MuFidelity
from xplique_ext.metrics.fidelity import adaptive_checkpoints, correlation_std_error


@pytest.fixture(scope="module")
def linear():
    """f(x) = sum(x) on 8x8 inputs: phi = x is exact (score 1), phi + noise is not."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(6, 8, 8, 1)).astype(np.float32)
    noisy = x[..., 0] + rng.normal(0, 2.0, (6, 8, 8)).astype(np.float32)
    return linear_model((8, 8, 1)), x, noisy


OPTIONS = dict(grid_size=4, progress=False)


def test_standard_error_formulas_by_hand():
    # Pearson: (1 - r^2) / sqrt(m - 3); Spearman: times sqrt(1 + r^2 / 2)
    assert correlation_std_error(0.5, 103, "pearson") == pytest.approx(0.75 / 10)
    assert correlation_std_error(0.5, 103, "spearman") == pytest.approx(0.75 * np.sqrt(1.125) / 10)
    out = correlation_std_error(np.array([1.0, np.nan, 0.0]), np.array([50, 50, 3]))
    assert out[0] == 0 and np.isnan(out[1]) and np.isnan(out[2])
    with pytest.raises(ValueError, match="correlation"):
        correlation_std_error(0.5, 10, "kendall")
    assert adaptive_checkpoints(10) == [10]
    assert adaptive_checkpoints(1000)[:4] == [50, 75, 113, 170]


def test_details_report_the_standard_error_and_the_subsets(linear):
    model, x, noisy = linear
    metric = MuFidelity(model, x, nb_samples=50, seed=0, correlation="pearson", **OPTIONS)
    d = metric.details(noisy)
    assert list(d.columns) == ["score", "std_error", "n_subsets"]
    np.testing.assert_array_equal(d["score"], metric.detailed_evaluate(noisy))
    assert (d["n_subsets"] == 50).all()
    np.testing.assert_allclose(d["std_error"], (1 - d["score"] ** 2) / np.sqrt(47))


@pytest.mark.parametrize("correlation", ["pearson", "spearman"])
def test_reported_standard_error_matches_the_spread_over_seeds(linear, correlation):
    # the score's spread over 30 seeds (new subsets each time) against the reported SE
    model, x, noisy = linear
    scores, errors = [], []
    for seed in range(30):
        d = MuFidelity(
            model,
            x[:3],
            nb_samples=100,
            batch_size=300,
            seed=seed,
            correlation=correlation,
            **OPTIONS,
        ).details(noisy[:3])
        scores.append(d["score"])
        errors.append(d["std_error"])
    ratio = np.std(scores, axis=0, ddof=1) / np.mean(errors, axis=0)
    assert np.all((ratio > 0.7) & (ratio < 1.4)), ratio


def _auto(model, x, batch_size, **kw):
    options = dict(OPTIONS, nb_samples="auto", seed=3, batch_size=batch_size)
    options.update(kw)
    return MuFidelity(model, x, **options)


def test_adaptive_is_the_same_at_any_batch_size_and_order(linear):
    model, x, noisy = linear
    noisy = noisy.copy()
    noisy[:2] = x[:2, ..., 0]  # exact for two inputs: they stop at the first round
    ref = _auto(model, x, 5, max_samples=300).details(noisy)
    assert list(ref["n_subsets"][:2]) == [50, 50] and ref["n_subsets"].max() == 300
    for batch_size in (1, 64, None):
        d = _auto(model, x, batch_size, max_samples=300).details(noisy)
        np.testing.assert_array_equal(d["n_subsets"], ref["n_subsets"])
        np.testing.assert_allclose(d["score"], ref["score"], rtol=1e-5, atol=1e-6)
    order = np.array([3, 0, 5, 1, 4, 2])
    d = _auto(model, x[order], 4, max_samples=300).details(noisy[order])
    np.testing.assert_array_equal(d["n_subsets"], ref["n_subsets"].to_numpy()[order])
    np.testing.assert_allclose(d["score"], ref["score"].to_numpy()[order], rtol=1e-5)


def test_adaptive_stops_when_the_answer_is_known(linear):
    model, x, noisy = linear
    exact = _auto(model, x, 64).details(x[..., 0])
    np.testing.assert_allclose(exact["score"], 1.0, atol=1e-6)
    assert (exact["n_subsets"] == 50).all()  # SE 0 after the first round
    noisy_d = _auto(model, x, 64, target_se=0.05, max_samples=600).details(noisy)
    assert (noisy_d["std_error"] <= 0.05).all() or (noisy_d["n_subsets"] == 600).any()
    stopped = noisy_d["n_subsets"] < 600
    assert (noisy_d["std_error"][stopped] <= 0.05).all()
    assert noisy_d["n_subsets"].isin(adaptive_checkpoints(600)).all()
    # each input stopped at its first checkpoint with SE <= target, not later
    for i in np.flatnonzero(stopped):
        used = int(noisy_d["n_subsets"][i])
        points = adaptive_checkpoints(600)
        if used > points[0]:
            before = points[points.index(used) - 1]
            prefix = _auto(model, x[i : i + 1], 64, target_se=1e-9, max_samples=before).details(
                noisy[i : i + 1]
            )
            assert prefix["std_error"][0] > 0.05


def test_adaptive_without_early_stop_is_the_fixed_setting(linear):
    model, x, noisy = linear
    fixed = MuFidelity(model, x, nb_samples=200, seed=3, batch_size=64, **OPTIONS)
    auto = _auto(model, x, 64, target_se=1e-12, max_samples=200)
    d = auto.details(noisy)
    assert (d["n_subsets"] == 200).all()
    np.testing.assert_allclose(d["score"], fixed.detailed_evaluate(noisy), rtol=1e-6)
    np.testing.assert_array_equal(auto.detailed_evaluate(noisy), d["score"])


def test_adaptive_undefined_scores_go_on_to_max_samples_and_warn(linear):
    model, x, noisy = linear
    phi = noisy.copy()
    phi[2] = 0.0  # constant attribution sums: undefined at every round
    with pytest.warns(UndefinedScoreWarning, match="constant attribution sums"):
        d = _auto(model, x, 64, max_samples=100).details(phi)
    assert np.isnan(d["score"][2]) and d["n_subsets"][2] == 100
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedScoreWarning)
        s = _auto(model, x, 64, max_samples=100).summary(phi, n_resamples=200)
    assert (s.n, s.n_undefined) == (5, 1)


def test_adaptive_settings_are_validated_and_round_trip(linear):
    model, x, _ = linear
    for bad, error in (("Auto", ValueError), ("200", ValueError), (1.5, TypeError)):
        with pytest.raises(error, match="nb_samples"):
            MuFidelity(model, x, nb_samples=bad, **OPTIONS)
    for bad, error in (
        (0.0, ValueError),
        (1.0, ValueError),
        ("a", TypeError),
        (float("nan"), ValueError),
    ):
        with pytest.raises(error, match="target_se"):
            MuFidelity(model, x, nb_samples="auto", target_se=bad, **OPTIONS)
    for bad, error in ((3, ValueError), (10.0, TypeError), (None, TypeError)):
        with pytest.raises(error, match="max_samples"):
            MuFidelity(model, x, nb_samples="auto", max_samples=bad, **OPTIONS)
    metric = _auto(model, x, 8, target_se=0.05, max_samples=64)
    config = json.loads(json.dumps(metric.get_config()))
    assert config["nb_samples"] == "auto" and config["max_samples"] == 64
    clone = MuFidelity.from_config(config, model=model, inputs=x)
    assert repr(clone) == repr(metric)
    assert "nb_samples='auto'" in repr(metric)
