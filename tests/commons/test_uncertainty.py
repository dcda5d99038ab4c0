"""summary(): intervals that cover at their level, Wilson / exact for proportions, Holm."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.stats import binomtest

from xplique_ext.commons.metric import BaseMetric
from xplique_ext.commons.uncertainty import (
    ScoreSummary,
    exact_interval,
    holm,
    summarize_scores,
    wilson_interval,
)
from xplique_ext.commons.warnings import DegenerateSettingWarning, UndefinedScoreWarning


class Synthetic(BaseMetric):
    """A metric whose per-input scores are drawn from a known law: Beta(2, 5) mapped to
    [-1, 1] (a skewed law of correlations), mean 2 * 2/7 - 1."""

    higher_is_better = True
    MEAN = 2 * 2 / 7 - 1

    def __init__(self, seed=None):
        self.seed = seed

    def detailed_evaluate(self, n):
        rng = np.random.default_rng([11, self.seed])
        return 2 * rng.beta(2, 5, size=n) - 1


class Outcomes(BaseMetric):
    higher_is_better = True

    def __init__(self, proportion=True, seed=None):
        self.proportion = proportion
        self.seed = seed

    def _is_proportion(self):
        return self.proportion

    def detailed_evaluate(self, values):
        return np.asarray(values, dtype=float)


@pytest.mark.parametrize("interval", ["bca", "percentile"])
def test_bootstrap_interval_covers_the_true_mean_at_its_level(interval):
    # 400 seeded repetitions of n = 100 inputs; 999 resamples is the usual size for a
    # 95% interval (its Monte Carlo error on the bounds is small next to their spread)
    covered = 0
    for rep in range(400):
        s = Synthetic(seed=rep).summary(100, interval=interval, n_resamples=999)
        covered += s.ci_low <= Synthetic.MEAN <= s.ci_high
    assert 0.93 <= covered / 400 <= 0.97, covered / 400


def test_wilson_interval_covers_a_proportion_at_its_level():
    covered = 0
    rng = np.random.default_rng(5)
    for _ in range(400):
        s = Outcomes().summary((rng.random(60) < 0.3).astype(float))
        assert s.method.startswith("Wilson")
        covered += s.ci_low <= 0.3 <= s.ci_high
    assert 0.93 <= covered / 400 <= 0.97, covered / 400


def test_summary_mean_is_evaluate_and_fields():
    metric = Outcomes(proportion=False, seed=4)
    values = [0.1, 0.5, np.nan, 0.7, 0.2]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        s = metric.summary(values)
    assert sum(issubclass(w.category, UndefinedScoreWarning) for w in caught) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedScoreWarning)
        assert s.mean == metric.evaluate(values)
    assert isinstance(s, ScoreSummary)
    assert (s.n, s.n_undefined, s.confidence) == (4, 1, 0.95)
    assert s.ci_low < s.mean < s.ci_high
    frame = s.to_frame()
    assert list(frame.columns) == [
        "mean",
        "std_error",
        "ci_low",
        "ci_high",
        "confidence",
        "n",
        "n_undefined",
        "method",
    ]
    assert frame.loc[0, "method"] == "BCa bootstrap over inputs (9999 resamples)"
    # the bootstrap's standard error is near the textbook s / sqrt(n)
    x = np.random.default_rng(0).normal(size=400)
    se = Outcomes(proportion=False).summary(x).std_error
    assert se == pytest.approx(x.std(ddof=1) / 20, rel=0.1)


def test_summary_is_seeded_by_the_metric_seed():
    x = np.random.default_rng(1).normal(size=30)
    a = Outcomes(proportion=False, seed=3).summary(x)
    b = Outcomes(proportion=False, seed=3).summary(x)
    c = Outcomes(proportion=False, seed=4).summary(x)
    assert a == b
    assert a.ci_low != c.ci_low
    assert Outcomes(proportion=False).summary(x, seed=3) == a
    wider = Outcomes(proportion=False, seed=3).summary(x, confidence=0.99)
    assert wider.ci_low < a.ci_low and wider.ci_high > a.ci_high


def test_proportions_use_wilson_or_exact_and_say_so():
    values = [1, 1, 0, 1, 1, 0, 1, 1, 1, 1]
    s = Outcomes().summary(values)
    ci = binomtest(8, 10).proportion_ci(0.95, method="wilson")
    assert (s.ci_low, s.ci_high) == pytest.approx((ci.low, ci.high), abs=1e-12)
    assert s.std_error == pytest.approx(np.sqrt(0.8 * 0.2 / 10))
    assert "Wilson" in s.method
    e = Outcomes().summary(values, interval="exact")
    ci = binomtest(8, 10).proportion_ci(0.95, method="exact")
    assert (e.ci_low, e.ci_high) == pytest.approx((ci.low, ci.high), abs=1e-12)
    assert "Clopper-Pearson" in e.method
    # all successes: Wilson is still an honest interval, not [1, 1]
    assert Outcomes().summary([1.0] * 5).ci_low < 0.6
    # a PERCY sentence with two structures scores 0.5: no longer 0/1, the bootstrap
    half = Outcomes().summary([1, 0.5, 0, 1, 1])
    assert half.method.startswith("BCa") and "not all 0/1" in half.method
    with pytest.raises(ValueError, match="interval"):
        Outcomes().summary([1, 0.5, 0], interval="wilson")
    # a non-proportion metric gets the bootstrap under 'auto', Wilson on request
    assert Outcomes(proportion=False).summary(values).method.startswith("BCa")
    assert Outcomes(proportion=False).summary(values, interval="wilson").method.startswith("Wilson")


def test_wilson_interval_matches_scipy_vectorised():
    k = np.array([0, 3, 10, 7])
    n = np.array([10, 10, 10, 50])
    low, high = wilson_interval(k, n, 0.9)
    for i in range(4):
        ci = binomtest(int(k[i]), int(n[i])).proportion_ci(0.9, method="wilson")
        assert (low[i], high[i]) == pytest.approx((ci.low, ci.high), abs=1e-12)
    # at k = 0 and k = n the bounds are exactly 0 and 1 (round-off gave 5.55e-17 at k = 0)
    for n_ in (1, 7, 10, 13, 1000):
        assert wilson_interval(0, n_)[0] == 0.0 and wilson_interval(n_, n_)[1] == 1.0
    with pytest.warns(UndefinedScoreWarning, match="no trials"):
        assert np.isnan(wilson_interval(0, 0)[0])
    with pytest.raises(ValueError, match="successes"):
        wilson_interval(5, 3)
    with pytest.raises(ValueError, match=r"`successes` must be integers >= 0, got 1.5"):
        wilson_interval(1.5, 3)
    with pytest.raises(ValueError, match="confidence"):
        exact_interval(1, 3, confidence=1.0)


def test_holm_against_a_hand_computation():
    # sorted: 0.01 (x4 = 0.04), 0.02 (x3 = 0.06), 0.03 (x2 = 0.06), 0.04 (x1 = 0.04 ->
    # running max 0.06); a NaN does not count in m
    p = [0.03, 0.01, np.nan, 0.04, 0.02]
    np.testing.assert_allclose(holm(p), [0.06, 0.04, np.nan, 0.06, 0.06])
    np.testing.assert_allclose(holm([0.5, 0.9]), [1.0, 1.0])
    np.testing.assert_allclose(holm([0.2]), [0.2])
    assert holm([]).shape == (0,)
    with pytest.raises(ValueError, match="p_values"):
        holm([0.5, 1.5])


def test_undefined_constant_and_infinite_scores_are_summarised_with_their_reason():
    with pytest.warns(UndefinedScoreWarning, match="no defined score"):
        s = summarize_scores([np.nan, np.nan])
    assert np.isnan(s.mean) and s.n == 0 and s.n_undefined == 2
    with pytest.warns(UndefinedScoreWarning, match="single defined score"):
        s = summarize_scores([0.4])
    assert s.mean == 0.4 and np.isnan(s.ci_low)
    with pytest.warns(DegenerateSettingWarning, match="zero width"):
        s = summarize_scores([0.3, 0.3, 0.3])
    assert (s.ci_low, s.ci_high, s.std_error) == (0.3, 0.3, 0.0)
    with pytest.warns(UndefinedScoreWarning, match="infinite"):
        s = summarize_scores([1.0, np.inf])
    assert s.mean == np.inf and np.isnan(s.std_error)
    assert summarize_scores(np.array([1, 2, 3, 4], dtype=np.int8)).mean == 2.5
    with pytest.raises(ValueError, match="shape"):
        summarize_scores(np.zeros((2, 2)))
    with pytest.raises(TypeError, match="`scores` must be an array of numbers"):
        summarize_scores(["a", "b"])
    with pytest.raises(ValueError, match="confidence"):
        summarize_scores([1.0, 2.0], confidence=95)
    with pytest.raises(ValueError, match="interval"):
        summarize_scores([1.0, 2.0], interval="bootstrap")
    with pytest.raises(ValueError, match="n_resamples"):
        summarize_scores([1.0, 2.0], n_resamples=10)
    with pytest.raises(TypeError, match="proportion"):
        summarize_scores([1.0, 2.0], proportion="yes")
    values = np.array([0.1, 0.2, 0.9])
    before = values.copy()
    summarize_scores(values)
    np.testing.assert_array_equal(values, before)


def test_summary_near_the_float_maximum_does_not_overflow():
    # the sum of two scores near 1.8e308 overflows: the mean and the bootstrap run on the
    # scores divided by the largest |score|
    import warnings

    from xplique_ext.commons.uncertainty import summarize_scores

    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        warnings.simplefilter("ignore", UserWarning)
        equal = summarize_scores([1e308, 1e308])
        mixed = summarize_scores([1e308, 1e308, -1e308], interval="percentile", seed=0)
    assert equal.mean == 1e308 and equal.ci_low == equal.ci_high == 1e308
    np.testing.assert_allclose(mixed.mean, 1e308 / 3, rtol=1e-12)
    assert -1e308 <= mixed.ci_low < mixed.mean < mixed.ci_high <= 1e308


def test_proportion_intervals_name_mismatched_count_shapes():
    from xplique_ext.commons.uncertainty import exact_interval, wilson_interval

    for interval in (wilson_interval, exact_interval):
        with pytest.raises(ValueError, match="`successes` and `n` must have broadcastable"):
            interval([1, 2], [3, 4, 5])


def test_proportion_intervals_without_trials_are_nan_with_the_reason():
    # n == 0: no trials, no proportion; the interval is NaN and says why (it was silent)
    with pytest.warns(UndefinedScoreWarning, match=r"wilson_interval: no trials \(n = 0\)"):
        low, high = wilson_interval(0, 0)
    assert np.isnan(low) and np.isnan(high)
    with pytest.warns(UndefinedScoreWarning, match=r"exact_interval: no trials \(n = 0\)"):
        low, high = exact_interval(0, 0)
    assert np.isnan(low) and np.isnan(high)
    # arrays: the count of intervals without trials is named, the others are untouched
    with pytest.warns(
        UndefinedScoreWarning, match=r"wilson_interval: 2 of 3 proportions have no trials \(n = 0\)"
    ):
        low, high = wilson_interval(np.array([0, 3, 0]), np.array([0, 10, 0]))
    np.testing.assert_array_equal(np.isnan(low), [True, False, True])
    ci = binomtest(3, 10).proportion_ci(0.95, method="wilson")
    assert (low[1], high[1]) == pytest.approx((ci.low, ci.high), abs=1e-12)
    # no warning where every proportion has trials
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        wilson_interval(np.array([0, 3]), np.array([1, 10]))
        exact_interval(0, 1)


def test_exact_interval_is_accurate_for_rare_events_and_huge_n():
    from scipy.stats import beta

    # k = 0 and k = n: closed forms (the Beta(1, n) quantile is 1 - (1 - q) ** (1 / n))
    assert exact_interval(0, 10) == pytest.approx((0.0, 1 - 0.025**0.1), rel=1e-12)
    assert exact_interval(10, 10) == pytest.approx((0.025**0.1, 1.0), rel=1e-12)
    assert exact_interval(7, 10) == pytest.approx((0.3475471499, 0.9332604888), abs=1e-10)
    # k = 1 of n = 1e9: the lower bound is 1 - (1 - 0.025) ** (1 / n), to 1e-9 relative
    low, high = exact_interval(1, 10**9)
    assert low == pytest.approx(-np.expm1(np.log1p(-0.025) / 1e9), rel=1e-9)
    assert high == pytest.approx(beta.ppf(0.975, 2, 10**9 - 1), rel=1e-12)
    assert high == pytest.approx(5.5716434e-9, rel=1e-7)  # the Poisson limit of k = 1
    # vectorised, and the same bounds as one count at a time
    k, n = np.array([0, 1, 3, 50]), np.array([5, 10**9, 10, 50])
    lows, highs = exact_interval(k, n, 0.9)
    for i in range(4):
        assert (lows[i], highs[i]) == exact_interval(int(k[i]), int(n[i]), 0.9)


def test_proportion_intervals_take_python_integers_beyond_int64():
    # 2**70 is an object array in NumPy: read as a count (float64), not refused as "object"
    assert wilson_interval(2**70, 2**71) == pytest.approx((0.5, 0.5), abs=1e-9)
    low, high = wilson_interval(2**70, 2**71, 0.95)
    assert (high - low) / 2 == pytest.approx(1.959964 * 0.5 / 2**35.5, rel=1e-6)
    # the Beta quantiles drift past n = 1e12 (2**70 of 2**71: half-width 1.29e-11 for
    # 2.0e-11; 3 of 1e200: NaN): exact_interval refuses such an n, naming wilson_interval
    for k, n in ((2**70, 2**71), (3, 10**200), (5 * 10**16, 10**17)):
        with pytest.raises(ValueError, match=r"`n` must be <= 1e12 for exact_interval.*wilson"):
            exact_interval(k, n)
    assert exact_interval(3, 10**12)[1] * 1e12 == pytest.approx(8.767273069742, rel=1e-9)
    with pytest.raises(ValueError, match=r"`n` must be whole counts within the float range"):
        wilson_interval(1, 10**400)
    with pytest.raises(ValueError, match=r"`successes` must be whole counts within the float"):
        exact_interval(10**400, 10**401)


def test_bca_over_few_inputs_warns_once_naming_n():
    import warnings

    from xplique_ext.commons.warnings import DegenerateSettingWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        summarize_scores([0.1, 0.5, 0.2, 0.9, 0.4], seed=0, n_resamples=200)
    small = [w for w in caught if issubclass(w.category, DegenerateSettingWarning)]
    assert len(small) == 1 and "BCa interval over n=5 inputs is unreliable" in str(small[0].message)
    with warnings.catch_warnings():  # 10 inputs, or the percentile interval: no warning
        warnings.simplefilter("error")
        summarize_scores(np.linspace(0, 1, 10), seed=0, n_resamples=200)
        summarize_scores([0.1, 0.5, 0.2], seed=0, n_resamples=200, interval="percentile")


@pytest.mark.parametrize("n", [10**12, 10**100, 10**300])
def test_wilson_interval_of_rare_events_at_huge_n_is_its_poisson_limit(n):
    # k fixed, n -> inf: n * bounds -> k + z^2 / 2 -/+ z sqrt(k + z^2 / 4) (Eq. 1 times n);
    # n * n must not overflow into a zero-width interval
    from scipy.stats import norm

    z = norm.ppf(0.975)
    limit = (3 + z * z / 2 - z * np.sqrt(3 + z * z / 4), 3 + z * z / 2 + z * np.sqrt(3 + z * z / 4))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        low, high = wilson_interval(3, n)
    assert (low * float(n), high * float(n)) == pytest.approx(limit, rel=1e-9)


@pytest.mark.parametrize(
    "bad, error",
    [(["a"], TypeError), ({"a": 0.1}, TypeError), (None, TypeError), ([True, False], TypeError)],
)
def test_holm_names_its_parameter(bad, error):
    with pytest.raises(error, match="`p_values`"):
        holm(bad)  # not NumPy's "could not convert", a float() error, array(nan) or [1, 0]
    np.testing.assert_allclose(holm([0.01, 0.04, 0.03]), [0.03, 0.06, 0.06])


def test_summarize_scores_refuses_empty_scores():
    with pytest.raises(ValueError, match="`scores` must be a non-empty array"):
        summarize_scores([])


def test_large_bootstrap_is_batched(monkeypatch):
    from xplique_ext.commons import uncertainty

    monkeypatch.setattr(uncertainty, "_RESAMPLE_BUDGET", 1000)
    assert uncertainty.resample_batch(200, 10) == 100
    assert uncertainty.resample_batch(50, 10) is None
    small = summarize_scores(np.arange(40.0), n_resamples=500, seed=0)
    assert np.isfinite([small.ci_low, small.ci_high]).all()
    assert small.ci_low < small.mean < small.ci_high


def test_summarize_scores_refuses_a_huge_n_resamples():
    # refused by its declared range, before NumPy would try to allocate 146 TiB
    with pytest.raises(ValueError, match=r"`n_resamples` must be in \[100, 1000000\]"):
        summarize_scores(np.arange(20.0), n_resamples=10**12)


# ------------------------------------------------------------------ BaseMetric.summary
# ``metric.summary`` is summarize_scores over the metric's detailed_evaluate


def test_summary_of_no_sample_is_nan_with_the_true_reason():
    from xplique_ext.commons.warnings import UndefinedScoreWarning
    from xplique_ext.rules.fire import FiRe

    # the metric's own reason (no sample), not an error about a `scores` parameter the
    # user never passed, nor "all 0 are NaN"
    with pytest.warns(UndefinedScoreWarning, match="no sample to score"):
        summary = FiRe(psi=1.0).summary([], [])
    assert np.isnan(summary.mean) and summary.n == 0 and summary.n_undefined == 0
    with pytest.warns(UndefinedScoreWarning, match="no sample to score"):
        assert np.isnan(FiRe(psi=1.0).evaluate([], []))


def test_summary_checks_its_settings_before_scoring():
    calls = []

    class Counted(Outcomes):
        def detailed_evaluate(self, explanations):
            calls.append(1)
            return super().detailed_evaluate(explanations)

    for kwargs, error in (
        (dict(confidence=2), ValueError),
        (dict(n_resamples=10**9), ValueError),
        (dict(interval="normal"), ValueError),
        (dict(seed="a"), TypeError),
    ):
        with pytest.raises(error, match=f"`{next(iter(kwargs))}` must be"):
            Counted(proportion=False).summary(np.arange(5.0), **kwargs)
    assert calls == []  # a bad setting is refused before any input is scored


def test_summary_all_undefined_gives_the_reason():
    from xplique_ext.commons.warnings import UndefinedScoreWarning
    from xplique_ext.datasets import make_aixi_color
    from xplique_ext.metrics import GroundTruthLocalisation
    from xplique_ext.models import AIXIFunctionModel

    data = make_aixi_color(4, image_size=32, function="ssin", seed=1)
    metric = GroundTruthLocalisation(
        AIXIFunctionModel("ssin", dataset="color"),
        data.images,
        data.targets,
        masks=data.relevant_masks,
        measure="pointing_game",
        min_accuracy=0.0,
    )
    # "no defined score (all 4 are NaN)" says why, as evaluate does
    with pytest.warns(UndefinedScoreWarning, match="no defined score.*Reason: .*constant map"):
        summary = metric.summary(np.zeros_like(data.ground_truth))
    assert np.isnan(summary.mean) and summary.n_undefined == 4
