"""Uncertainty of an aggregate score: a confidence interval over the inputs, Wilson and
exact intervals for proportions, and Holm's correction of several p-values.

:func:`summarize_scores` turns per-input scores (NaN = undefined) into a
:class:`ScoreSummary` (mean, standard error, interval, n, method);
:meth:`xplique_ext.commons.metric.BaseMetric.summary` is this function applied to a
metric's :meth:`~xplique_ext.commons.metric.BaseMetric.detailed_evaluate`.
"""

from __future__ import annotations

import functools
import math
import numbers
import warnings
from dataclasses import asdict, dataclass
from typing import Any, Optional

import numpy as np

from .params import ArrayLike, Boolean, InstanceOf, Interval, Mismatch, Options, validate_params
from .warnings import DegenerateSettingWarning, UndefinedScoreWarning, warn

__all__ = [
    "INTERVALS",
    "ScoreSummary",
    "summarize_scores",
    "wilson_interval",
    "exact_interval",
    "holm",
    "is_binary",
]

#: ``interval`` choices of :func:`summarize_scores`: 'auto' (Wilson for a proportion,
#: else BCa), the bootstrap methods 'bca' and 'percentile', and for 0/1 scores 'wilson'
#: and 'exact' (Clopper-Pearson).
INTERVALS = ("auto", "bca", "percentile", "wilson", "exact")
#: a confidence level, or a test's alpha: in (0, 1)
LEVEL = [Interval(numbers.Real, 0.0, 1.0, closed="neither")]
_BOOTSTRAP_NAMES = {"bca": "BCa", "percentile": "percentile"}
_PROPORTION_METHODS = {
    "wilson": "Wilson score interval (proportion of 0/1 scores)",
    "exact": "Clopper-Pearson exact interval (proportion of 0/1 scores)",
}


@dataclass(frozen=True)
class ScoreSummary:
    """An aggregate score with its uncertainty.

    Attributes
    ----------
    mean : float
        Mean of the defined per-input scores (what ``evaluate`` returns).
    std_error : float
        Standard error of the mean: the standard deviation of the bootstrap
        distribution, or :math:`\\sqrt{\\hat p (1 - \\hat p) / n}` for a proportion.
    ci_low, ci_high : float
        Bounds of the two-sided interval at level ``confidence``.
    confidence : float
        Level of the interval, e.g. 0.95.
    n : int
        Number of defined (scored) inputs.
    n_undefined : int
        Number of inputs whose score is undefined (NaN), left out.
    method : str
        How the interval was computed, e.g. ``'BCa bootstrap over inputs (9999
        resamples)'`` or ``'Wilson score interval (proportion)'``.
    """

    mean: float
    std_error: float
    ci_low: float
    ci_high: float
    confidence: float
    n: int
    n_undefined: int
    method: str

    def to_dict(self) -> dict:
        """The fields as a plain dict."""
        return asdict(self)

    def to_frame(self):
        """A one-row :class:`pandas.DataFrame` with one column per field."""
        import pandas as pd

        return pd.DataFrame([self.to_dict()])

    def __str__(self) -> str:
        undefined = f", {self.n_undefined} undefined" if self.n_undefined else ""
        return (
            f"{self.mean:.4g} (SE {self.std_error:.2g}; {self.confidence:.0%} CI "
            f"[{self.ci_low:.4g}, {self.ci_high:.4g}]; n={self.n}{undefined}; {self.method})"
        )


def is_binary(values: np.ndarray) -> bool:
    """Whether every value is exactly 0 or 1 (a proportion's per-input outcomes)."""
    return bool(np.isin(values, (0.0, 1.0)).all())


class Counts(ArrayLike):
    """Whole counts >= 0 (scalars or arrays of an integer or float dtype) as float64,
    Python integers beyond int64 included (NumPy holds those as objects) up to the float
    range; one beyond it is a ValueError naming the parameter."""

    def __init__(self):
        super().__init__("real", dtype=np.float64, within=Interval(numbers.Integral, 0, None))

    def _as_array(self, value: Any) -> np.ndarray:
        arr = super()._as_array(value)
        if arr.dtype == object and all(
            isinstance(v, int) and not isinstance(v, bool) for v in arr.flat
        ):
            try:
                return arr.astype(np.float64)
            except OverflowError:
                raise Mismatch(
                    "whole counts within the float range (<= 1.8e308)", "an integer beyond it", True
                ) from None
        return arr


#: the declared counts and level of the proportion intervals
_PROPORTION = {"successes": [Counts()], "n": [Counts()], "confidence": LEVEL}


def _trials(name: str, k: np.ndarray, m: np.ndarray) -> np.ndarray:
    """``n`` broadcast with ``successes``, checked ``successes <= n``; an
    :class:`UndefinedScoreWarning` where ``n`` is 0 (no proportion: a NaN interval)."""
    try:
        m = np.broadcast_to(m, np.broadcast_shapes(k.shape, m.shape))
    except ValueError:
        raise ValueError(
            f"`successes` and `n` must have broadcastable shapes (one count of "
            f"trials per count of successes), got {k.shape} and {m.shape}"
        ) from None
    if (k > m).any():
        raise ValueError(f"`successes` must be in [0, n], got successes={k!r}, n={m!r}")
    empty = int(np.count_nonzero(m == 0))
    if empty:
        which = "no trials" if m.ndim == 0 else f"{empty} of {m.size} proportions have no trials"
        warn(f"{name}: {which} (n = 0): the interval is NaN", UndefinedScoreWarning)
    return m


@validate_params(_PROPORTION)
def wilson_interval(successes: Any, n: Any, confidence: float = 0.95):
    r"""Wilson score interval of a proportion, vectorised.

    .. math::

        \frac{\hat p + \frac{z^2}{2n} \pm z \sqrt{\frac{\hat p (1-\hat p)}{n}
        + \frac{z^2}{4n^2}}}{1 + \frac{z^2}{n}} \qquad (1)

    with :math:`\hat p = k / n` and :math:`z` the :math:`(1 + c) / 2` normal quantile.
    The same interval as ``scipy.stats.binomtest(k, n).proportion_ci(confidence,
    'wilson')``, for arrays of counts at once.

    Parameters
    ----------
    successes, n
        Counts (scalars or arrays of broadcastable shapes), ``0 <= successes <= n``:
        whole numbers of an integer or float dtype, or Python integers (any size within
        the float range).
    confidence
        Level in (0, 1).

    Returns
    -------
    low, high
        Bounds, of the broadcast shape of the counts (floats for scalars); NaN where
        ``n`` is 0.

    Warns
    -----
    UndefinedScoreWarning
        Where ``n`` is 0 (no trials: no proportion), counting those intervals.

    References
    ----------
    Wilson, *Probable inference, the law of succession, and statistical inference*,
    JASA 22 (1927) 209-212.

    Examples
    --------
    >>> low, high = wilson_interval(7, 10)
    >>> round(low, 4), round(high, 4)
    (0.3968, 0.8922)
    """
    from scipy.stats import norm

    k = successes
    m = _trials("wilson_interval", successes, n)
    z = norm.ppf(0.5 + confidence / 2)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = k / m
        centre = (p + z * z / (2 * m)) / (1 + z * z / m)
        # z sqrt(p (1 - p) / m + z^2 / (4 m^2)), written without m^2 (no overflow)
        half = z / m * np.sqrt(k * (1 - p) + z * z / 4) / (1 + z * z / m)
    # with trials, the bounds at k = 0 and k = n are exactly 0 and 1 (their round-off is not)
    low = np.where((k == 0) & (m > 0), 0.0, np.clip(centre - half, 0, 1))
    high = np.where((k == m) & (m > 0), 1.0, np.clip(centre + half, 0, 1))
    return _bounds(low, high)


def _bounds(low: np.ndarray, high: np.ndarray):
    """Floats for scalar counts, else the arrays."""
    return (float(low), float(high)) if low.ndim == 0 else (low, high)


_EXACT_MAX_N = 1e12


@validate_params(_PROPORTION)
def exact_interval(successes: Any, n: Any, confidence: float = 0.95):
    r"""Clopper-Pearson ("exact") interval of a proportion, vectorised.

    .. math::

        \left[B\left(\tfrac{\alpha}{2}; k, n - k + 1\right),\;
        B\left(1 - \tfrac{\alpha}{2}; k + 1, n - k\right)\right] \qquad (1)

    with :math:`B(q; a, b)` the quantile of the Beta distribution
    (``scipy.stats.beta.ppf``), :math:`\alpha = 1 - c`, and the bounds 0 at
    :math:`k = 0` and 1 at :math:`k = n`. The quantiles are accurate for rare events and
    huge ``n`` (``k = 1`` of ``n = 1e9``), where the root search of
    ``binomtest(k, n).proportion_ci(method='exact')`` stops at an absolute tolerance.
    Beyond ``n = 1e12`` the quantiles themselves lose accuracy when both ``k`` and
    ``n - k`` are large (widths 0.5 % off at ``1e15``, 74 % at ``1e17``), so such an
    ``n`` is refused: use :func:`wilson_interval` there.

    Parameters
    ----------
    successes, n
        Counts (scalars or arrays of broadcastable shapes), ``0 <= successes <= n``, as
        in :func:`wilson_interval`.
    confidence
        Level in (0, 1).

    Returns
    -------
    low, high
        Bounds (floats for scalar counts, else arrays); NaN, with an
        :class:`~xplique_ext.commons.warnings.UndefinedScoreWarning`, where ``n`` is 0
        (no trials).

    References
    ----------
    Clopper & Pearson, *The use of confidence or fiducial limits illustrated in the case
    of the binomial*, Biometrika 26 (1934) 404-413.

    Examples
    --------
    >>> low, high = exact_interval(7, 10)
    >>> round(low, 4), round(high, 4)
    (0.3475, 0.9333)
    """
    from scipy.stats import beta

    k = successes
    m = _trials("exact_interval", successes, n)
    if (m > _EXACT_MAX_N).any():  # central bounds drift past 1e11 (widths 74 % off at 1e17)
        raise ValueError(
            "`n` must be <= 1e12 for exact_interval: scipy's Beta quantiles lose "
            f"accuracy beyond (use wilson_interval), got {m.max():.6g}"
        )
    tail = (1 - confidence) / 2
    with np.errstate(invalid="ignore", divide="ignore"):
        low = np.where(k == 0, 0.0, beta.ppf(tail, k, m - k + 1))
        high = np.where(k == m, 1.0, beta.ppf(1 - tail, k + 1, m - k))
    low = np.where(m == 0, np.nan, low)  # no trials
    high = np.where(m == 0, np.nan, high)
    return _bounds(low, high)


@validate_params({"p_values": [ArrayLike("real", dtype=np.float64)]})
def holm(p_values: Any) -> np.ndarray:
    r"""Holm's step-down adjustment of ``m`` p-values (family-wise error control).

    With the p-values sorted :math:`p_{(1)} \le \dots \le p_{(m)}`, the adjusted value
    of the i-th is

    .. math::

        \tilde p_{(i)} = \min\Big(1, \max_{j \le i} (m - j + 1)\, p_{(j)}\Big) \qquad (1)

    and rejecting where :math:`\tilde p \le \alpha` keeps the probability of any false
    rejection at most :math:`\alpha`. NaN p-values are left NaN and do not count in
    :math:`m`.

    Parameters
    ----------
    p_values
        Array-like of p-values in [0, 1] (NaN allowed), any order.

    Returns
    -------
    adjusted
        Array of the same shape, in the same order.

    References
    ----------
    Holm, *A simple sequentially rejective multiple test procedure*, Scandinavian
    Journal of Statistics 6 (1979) 65-70.

    Examples
    --------
    >>> holm([0.01, 0.04, 0.03])
    array([0.03, 0.06, 0.06])
    """
    p = p_values  # float64, converted by @validate_params
    defined = ~np.isnan(p)
    q = p[defined]
    if ((q < 0) | (q > 1)).any():
        raise ValueError(f"`p_values` must be in [0, 1], got {p_values!r}")
    order = np.argsort(q, kind="stable")
    steps = (q.size - np.arange(q.size)) * q[order]
    out = np.full(p.shape, np.nan)  # the adjusted values, at their defined positions
    out.reshape(-1)[np.flatnonzero(defined)[order]] = np.minimum(1.0, np.maximum.accumulate(steps))
    return out


#: the fewest defined scores for which a BCa interval is given without a warning: below,
#: its bias correction and acceleration come from a handful of jackknife values and its
#: coverage falls short of the level (Efron & Tibshirani, *An Introduction to the
#: Bootstrap*, 1993, ch. 14 and 22; Carpenter & Bithell, Stat. Med. 19 (2000) 1141-1164)
BCA_MIN_N = 10
#: the most resamples a bootstrap or permutation test may draw (a larger value is a typo
#: that would exhaust memory or time)
MAX_RESAMPLES = 10**6
#: resampled values held in memory at once (int64 indices: 128 MiB)
_RESAMPLE_BUDGET = 2**24


def resample_batch(n_resamples: int, n: int) -> Optional[int]:
    """``batch`` for scipy's bootstrap / permutation_test: None (all at once)
    while ``n_resamples * n`` fits :data:`_RESAMPLE_BUDGET`, else a batch that does."""
    if n_resamples * max(n, 1) <= _RESAMPLE_BUDGET:
        return None
    return max(1, _RESAMPLE_BUDGET // max(n, 1))


#: the declared settings of an uncertainty summary (also checked by
#: ``BaseMetric.summary`` before it scores anything)
SUMMARY_PARAMETERS = {
    "confidence": LEVEL,
    "interval": [Options(INTERVALS)],
    "n_resamples": [Interval(numbers.Integral, 100, MAX_RESAMPLES)],
    "seed": [Interval(numbers.Integral, 0, None), None],
}


#: per-input scores (N,), NaN where undefined, as float64
SCORES = [
    ArrayLike("numeric", ndim=1, shapes="(N,)", batch_hint=False, nonempty=True, dtype=np.float64)
]


@validate_params(
    {"scores": SCORES, **SUMMARY_PARAMETERS, "proportion": [Boolean()], "name": [InstanceOf(str)]}
)
def summarize_scores(
    scores: Any,
    *,
    confidence: float = 0.95,
    interval: str = "auto",
    proportion: bool = False,
    n_resamples: int = 9999,
    seed: Optional[int] = None,
    name: str = "scores",
) -> ScoreSummary:
    """Mean of per-input scores with its standard error and confidence interval.

    Parameters
    ----------
    scores
        Per-input scores, shape (N,); NaN marks an undefined score (left out and counted
        in ``n_undefined``).
    confidence
        Level of the two-sided interval, in (0, 1).
    interval
        'auto' (default): the Wilson interval when ``proportion`` is true and every
        defined score is 0 or 1, else the BCa bootstrap. 'bca' or 'percentile': that
        bootstrap of the mean over the inputs (``scipy.stats.bootstrap``). 'wilson' or
        'exact' (Clopper-Pearson): for 0/1 scores only.
    proportion
        Whether the aggregate is a proportion (PERCY, the pointing game): only read by
        ``interval='auto'``.
    n_resamples
        Bootstrap resamples, in [100, 10**6] (drawn in batches of bounded memory).
    seed
        Seed of the bootstrap's local generator (same seed, same interval).
    name
        Name quoted in warnings and errors.

    Returns
    -------
    ScoreSummary

    Warns
    -----
    UndefinedScoreWarning
        When fewer than two scores are defined (no bootstrap interval: NaN) or scores
        are infinite.
    DegenerateSettingWarning
        When every defined score is equal: the bootstrap interval has zero width,
        which understates the uncertainty of so few or so coarse scores. When a BCa
        interval is computed over fewer than :data:`BCA_MIN_N` (10) defined scores: it
        is unreliable there (one warning, naming n).

    Notes
    -----
    The bootstrap resamples the inputs (the per-input scores) with replacement; its
    standard error is the standard deviation of the resampled means. BCa (bias-corrected
    and accelerated, Efron 1987) is second-order accurate and scipy's default; the
    percentile interval is the plain quantiles of the resampled means. The Wilson
    interval (Eq. 1 of :func:`wilson_interval`) keeps its level near the nominal one
    for small n and proportions near 0 or 1, where the normal approximation fails; the
    standard error reported with it is :math:`\\sqrt{\\hat p (1-\\hat p)/n}`.

    References
    ----------
    Efron, *Better bootstrap confidence intervals*, JASA 82 (1987) 171-185.

    Examples
    --------
    >>> s = summarize_scores([0.2, 0.4, 0.6, 0.8, float("nan")], seed=0)
    >>> s.mean, s.n, s.n_undefined
    (0.5, 4, 1)
    >>> s.ci_low < 0.5 < s.ci_high
    True
    >>> summarize_scores([1, 1, 0, 1], proportion=True).method
    'Wilson score interval (proportion of 0/1 scores)'
    """
    defined = scores[~np.isnan(scores)]  # float64, declared and converted by @validate_params
    n = int(defined.size)
    n_undefined = int(scores.size - defined.size)

    result = functools.partial(_summary, confidence=confidence, n=n, n_undefined=n_undefined)
    if n == 0:
        warn(
            f"{name}: no defined score (all {n_undefined} are NaN): the mean and its "
            "interval are NaN",
            UndefinedScoreWarning,
        )
        return result(math.nan, "none: no defined score")
    with np.errstate(invalid="ignore"):  # inf - inf
        mean = _mean(defined)
    if np.isinf(defined).any():
        warn(
            f"{name}: {int(np.isinf(defined).sum())} scores are infinite: the standard "
            "error and interval are undefined (NaN)",
            UndefinedScoreWarning,
        )
        return result(mean, "none: infinite scores")
    binary = is_binary(defined)
    if interval in ("wilson", "exact") and not binary:
        raise ValueError(
            f"`interval`={interval!r} is for proportions (scores 0 or 1); the "
            f"{name} hold other values: use 'bca' or 'percentile'"
        )
    note = ""
    if interval == "auto" and proportion and binary:
        interval = "wilson"
    elif interval == "auto":
        interval = "bca"
        if proportion:
            note = "; scores not all 0/1, so no Wilson interval"
    if interval in ("wilson", "exact"):
        bounds = wilson_interval if interval == "wilson" else exact_interval
        low, high = bounds(int(defined.sum()), n, confidence)
        se = math.sqrt(mean * (1 - mean) / n)
        return result(mean, _PROPORTION_METHODS[interval], se, low, high)
    method = f"{_BOOTSTRAP_NAMES[interval]} bootstrap over inputs ({n_resamples} resamples){note}"
    return _bootstrap(
        defined,
        chosen=interval,
        confidence=confidence,
        n_resamples=n_resamples,
        seed=seed,
        result=result,
        method=method,
        name=name,
    )


def _summary(
    mean, method, se=math.nan, low=math.nan, high=math.nan, *, confidence, n, n_undefined
) -> ScoreSummary:
    """A :class:`ScoreSummary` of Python floats (NaN: undefined)."""
    return ScoreSummary(
        mean=float(mean),
        std_error=float(se),
        ci_low=float(low),
        ci_high=float(high),
        confidence=confidence,
        n=n,
        n_undefined=n_undefined,
        method=method,
    )


def _bootstrap(defined, *, chosen, confidence, n_resamples, seed, result, method, name):
    """The bootstrap summary (``result`` builds it), or its degenerate cases with a warning."""
    from scipy.stats import bootstrap

    mean = _mean(defined)
    if defined.size < 2:
        warn(
            f"{name}: a single defined score has no bootstrap interval: the standard error "
            "and bounds are NaN",
            UndefinedScoreWarning,
        )
        return result(mean, method)
    if defined.min() == defined.max():
        warn(
            f"{name}: all {defined.size} defined scores are equal ({mean:g}): the bootstrap "
            "interval has zero width, which understates the uncertainty",
            DegenerateSettingWarning,
        )
        return result(mean, method + "; all scores equal", 0.0, mean, mean)
    if chosen == "bca" and defined.size < BCA_MIN_N:
        warn(
            f"{name}: a BCa interval over n={defined.size} inputs is unreliable (its bias "
            f"correction and acceleration are estimated from fewer than {BCA_MIN_N}): its "
            "coverage may fall well short of the level",
            DegenerateSettingWarning,
        )
    with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
        # a NaN BCa bound (flat jackknife) is handled below
        warnings.filterwarnings("ignore", message=".*(degenerate|jackknife|BCa).*")
        # on the scores divided by the largest |score|: no overflow near the float maximum
        scale = float(np.max(np.abs(defined)))
        res = bootstrap(
            (defined / scale,),
            np.mean,
            n_resamples=n_resamples,
            vectorized=True,
            confidence_level=confidence,
            method=chosen,
            rng=np.random.default_rng(seed),
            batch=resample_batch(n_resamples, defined.size),
        )
    low = res.confidence_interval.low
    high = res.confidence_interval.high
    if chosen == "bca" and not (np.isfinite(low) and np.isfinite(high)):
        # BCa has no acceleration when the jackknife is flat: the percentile interval
        low, high = np.quantile(
            res.bootstrap_distribution, [(1 - confidence) / 2, (1 + confidence) / 2]
        )
        method += "; BCa undefined here, percentile bounds"
    return result(mean, method, scale * res.standard_error, scale * low, scale * high)


def _mean(scores: np.ndarray) -> float:
    """The mean, computed on the scores divided by the largest finite |score| (the sum of
    two scores near the float maximum would overflow to inf)."""
    finite = np.abs(scores[np.isfinite(scores)])
    scale = float(finite.max()) if finite.size and finite.max() > 0 else 1.0
    return scale * float(np.mean(scores / scale))
