"""Paired comparison of explainers on the same inputs: is one really better than another?

:func:`compare` scores each explainer's explanations with one metric on the same inputs
and returns a tidy :class:`ComparisonFrame`: one row per explainer (mean, confidence
interval, rank) and one row per pair (the mean paired difference, its interval, a paired
test with Holm's correction across the pairs). :func:`compare_scores` does the same from
per-input scores already computed (the ground-truth leaderboard uses it).

The module needs no metric class: any object with ``detailed_evaluate`` and
``higher_is_better`` works, so that the metrics' own modules (the leaderboard) can use it.
"""

from __future__ import annotations

import itertools
import numbers
import warnings
from typing import Any, Dict, List, Mapping, Optional, Tuple

import numpy as np
import pandas as pd

from .commons.params import (
    NO_VALIDATION,
    ArrayLike,
    Boolean,
    InstanceOf,
    Interval,
    Options,
    check_param,
    validate_params,
)
from .commons.uncertainty import (
    INTERVALS,
    MAX_RESAMPLES,
    holm,
    is_binary,
    resample_batch,
    summarize_scores,
)
from .commons.warnings import DegenerateSettingWarning, UndefinedScoreWarning, warn

__all__ = ["compare", "compare_scores", "ComparisonFrame", "TESTS"]

#: ``test`` choices: 'auto' (the permutation test when every score is 0 or 1, else
#: Wilcoxon), 'wilcoxon' (signed-rank), 'permutation' (paired, sign-flip).
TESTS = ("auto", "wilcoxon", "permutation")

COLUMNS = [
    "kind", "name", "a", "b", "estimate", "std_error", "ci_low", "ci_high", "n",
    "n_undefined", "rank", "test", "statistic", "p_value", "p_holm", "differs", "better",
    "method",
]


class ComparisonFrame(pd.DataFrame):
    """The tidy result of :func:`compare`: a :class:`pandas.DataFrame` with one row per
    explainer then one row per pair, and a :meth:`plot` of the means with their
    intervals.

    Columns
    -------
    kind
        'explainer' or 'pair'.
    name
        The explainer's name, or ``'A - B'`` for a pair.
    a, b
        A pair's two explainers (``a`` alone for an explainer row, ``b`` None).
    estimate
        The explainer's mean score, or the pair's mean paired difference
        ``mean(score_A - score_B)`` over the inputs where both are defined.
    std_error, ci_low, ci_high, method
        Standard error and interval of the estimate, and how the interval was computed
        (see :func:`~xplique_ext.commons.uncertainty.summarize_scores`).
    n, n_undefined
        Inputs scored (for a pair: both defined), and left out.
    rank
        Explainer rows: 1 for the best mean in the metric's direction (ties share the
        smaller rank); NaN for pairs.
    test, statistic, p_value
        Pair rows: the paired test and its two-sided result.
    p_holm
        The p-value after Holm's correction across all pairs.
    differs
        Pair rows: ``p_holm <= alpha``; explainers that do not differ are
        indistinguishable at that level.
    better
        Pair rows that differ: the name of the better explainer (in the metric's
        direction); None otherwise.

    Attributes
    ----------
    alpha : float
    confidence : float
    higher_is_better : bool
    metric_name : str
    """

    _metadata = ["alpha", "confidence", "higher_is_better", "metric_name"]

    @property
    def _constructor(self):
        return ComparisonFrame

    @property
    def explainers(self) -> pd.DataFrame:
        """The explainer rows, best first, as a plain DataFrame indexed by name."""
        rows = pd.DataFrame(self[self["kind"] == "explainer"])
        return rows.sort_values("rank", na_position="last").set_index("name")

    @property
    def pairs(self) -> pd.DataFrame:
        """The pair rows, as a plain DataFrame indexed by ``'A - B'``."""
        return pd.DataFrame(self[self["kind"] == "pair"]).set_index("name")

    def indistinguishable(self) -> List[Tuple[str, str]]:
        """The pairs ``(A, B)`` whose difference is not significant after Holm's
        correction (or could not be tested)."""
        pairs = self.pairs
        return [(a, b) for a, b, d in zip(pairs["a"], pairs["b"], pairs["differs"])
                if not d]

    def plot(self, ax: Any = None, **kwargs: Any):  # noqa: D401 - replaces pandas' accessor
        """Means with their intervals, best at the top; a bracket at the right joins each
        pair of explainers that do not differ (Holm-adjusted p > alpha).

        This replaces pandas' ``DataFrame.plot`` accessor on this class;
        ``pd.DataFrame(frame).plot`` still gives pandas' own.

        Parameters
        ----------
        ax
            Matplotlib axes (None: a new figure).
        **kwargs
            Passed to ``ax.errorbar``.

        Returns
        -------
        matplotlib.axes.Axes
        """
        import matplotlib.pyplot as plt

        rows = self.explainers
        if ax is None:
            _, ax = plt.subplots(figsize=(6.0, 0.5 + 0.45 * max(len(rows), 1)))
        y = np.arange(len(rows))[::-1]
        position = dict(zip(rows.index, y))
        means = rows["estimate"].to_numpy(float)
        low = np.clip(means - rows["ci_low"].to_numpy(float), 0, None)
        high = np.clip(rows["ci_high"].to_numpy(float) - means, 0, None)
        options = dict(fmt="o", capsize=3, color="tab:blue")
        options.update(kwargs)
        ax.errorbar(means, y, xerr=np.vstack([low, high]), **options)
        ax.set_yticks(y)
        ax.set_yticklabels(list(rows.index))
        direction = "higher" if self.higher_is_better else "lower"
        ax.set_xlabel(f"{self.metric_name} ({direction} is better), "
                      f"{self.confidence:.0%} CI")
        finite = np.concatenate([rows["ci_low"], rows["ci_high"], rows["estimate"]])
        finite = finite[np.isfinite(finite.astype(float))].astype(float)
        right = finite.max() if finite.size else 1.0
        span = (finite.max() - finite.min()) if finite.size else 1.0
        step = 0.04 * (span or 1.0)
        for k, (a, b) in enumerate(self.indistinguishable()):
            if a not in position or b not in position:
                continue
            x = right + step * (k + 1)
            ax.plot([x, x], [position[a], position[b]], color="0.5", lw=2,
                    solid_capstyle="butt")
        if self.indistinguishable():
            ax.set_title(f"grey bars join explainers that do not differ "
                         f"(Holm, alpha={self.alpha:g})", fontsize=9)
        ax.margins(x=0.1)
        return ax


_LEVEL = [Interval(numbers.Real, 0.0, 1.0, closed="neither")]
_COMMON = {
    "confidence": _LEVEL,
    "alpha": _LEVEL,
    "interval": [Options(INTERVALS)],
    "test": [Options(TESTS)],
    "n_resamples": [Interval(numbers.Integral, 100, MAX_RESAMPLES)],
    "seed": [Interval(numbers.Integral, 0, None), None],
}


def _check_names(mapping: Any, what: str) -> Dict[str, Any]:
    if not mapping:
        raise ValueError(f"`{what}` must hold at least one explainer, got none")
    for key in mapping:
        if not isinstance(key, str) or not key:
            raise TypeError(f"`{what}` keys must be non-empty strings, got {key!r}")
    return dict(mapping)


@validate_params({
    "metric": NO_VALIDATION,  # duck-typed: detailed_evaluate and higher_is_better, below
    "explanations_by_name": [InstanceOf(Mapping, description="a dict {name: explanations}")],
    **_COMMON,
})
def compare(
    metric: Any,
    explanations_by_name: Mapping[str, Any],
    *,
    confidence: float = 0.95,
    alpha: float = 0.05,
    interval: str = "auto",
    test: str = "auto",
    n_resamples: int = 9999,
    seed: Optional[int] = None,
) -> ComparisonFrame:
    """Score several explainers' explanations with one metric on the same inputs, with
    intervals, ranks and paired tests.

    Parameters
    ----------
    metric
        A metric of xplique_ext (anything with ``detailed_evaluate(explanations)``
        giving one score per input and a bool ``higher_is_better``), built on the inputs.
    explanations_by_name
        ``{explainer name: explanations}``, each what ``metric.detailed_evaluate``
        takes, for the same inputs in the same order.
    confidence, alpha, interval, test, n_resamples, seed
        As in :func:`compare_scores`; ``seed`` None uses the metric's seed (0 without).

    Returns
    -------
    ComparisonFrame
        See :func:`compare_scores`.

    Examples
    --------
    >>> import numpy as np
    >>> from xplique_ext.commons.metric import BaseMetric
    >>> class Score(BaseMetric):   # a metric whose explanations are the scores
    ...     higher_is_better = True
    ...     def detailed_evaluate(self, explanations):
    ...         return np.asarray(explanations, dtype=float)
    >>> rng = np.random.default_rng(0)
    >>> base = rng.normal(size=40)
    >>> table = compare(Score(), {"good": base + 1.0, "bad": base,
    ...                           "bad too": base + rng.normal(0, 0.01, 40)})
    >>> table.explainers["rank"].to_dict()
    {'good': 1.0, 'bad too': 2.0, 'bad': 3.0}
    >>> table.indistinguishable()
    [('bad', 'bad too')]
    """
    explanations_by_name = _check_names(explanations_by_name, "explanations_by_name")
    if isinstance(metric, type):
        raise TypeError(
            "`metric` must be a metric instance, built on the inputs (e.g. "
            f"MuFidelity(model, inputs, targets)), got the class {metric.__name__}"
        )
    if not callable(getattr(metric, "detailed_evaluate", None)):
        raise TypeError(
            "`metric` must be a metric with a `detailed_evaluate` method (e.g. "
            f"xplique_ext.metrics.MuFidelity), got {type(metric).__name__}"
        )
    direction = getattr(metric, "higher_is_better", None)
    if not isinstance(direction, (bool, np.bool_)):
        raise TypeError(
            f"`metric` must declare `higher_is_better` as a bool, got {direction!r}"
        )
    name = type(metric).__name__
    scores, reasons = {}, []
    for explainer, explanations in explanations_by_name.items():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            scores[explainer] = np.asarray(metric.detailed_evaluate(explanations), float)
        for w in caught:
            if issubclass(w.category, UndefinedScoreWarning):
                reasons.append(f"{explainer}: {w.message}")
            else:
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    counts = {k: int(np.isnan(v).sum()) for k, v in scores.items()}
    if any(counts.values()):
        listed = ", ".join(f"{k}: {c} of {len(scores[k])}" for k, c in counts.items() if c)
        why = (" Reasons: " + " ".join(reasons)) if reasons else ""
        warn(f"{name}: undefined (NaN) scores are left out of the comparison "
             f"({listed}).{why}", UndefinedScoreWarning)
    if seed is None:
        seed = getattr(metric, "seed", None)
        seed = 0 if seed is None else seed
    proportion = bool(getattr(metric, "_is_proportion", lambda: False)())
    return compare_scores(
        scores, higher_is_better=bool(direction), proportion=proportion,
        confidence=confidence, alpha=alpha, interval=interval, test=test,
        n_resamples=n_resamples, seed=seed, name=name,
    )


@validate_params({
    "scores_by_name": [InstanceOf(Mapping, description="a dict {name: scores (N,)}")],
    "higher_is_better": [Boolean()],
    "proportion": [Boolean()],
    "name": [InstanceOf(str)],
    **_COMMON,
})
def compare_scores(
    scores_by_name: Mapping[str, Any],
    *,
    higher_is_better: bool,
    proportion: bool = False,
    confidence: float = 0.95,
    alpha: float = 0.05,
    interval: str = "auto",
    test: str = "auto",
    n_resamples: int = 9999,
    seed: Optional[int] = 0,
    name: str = "score",
) -> ComparisonFrame:
    r"""Paired comparison of per-input scores of several explainers on the same inputs.

    For explainers A and B scored on the same N inputs, the paired difference is
    :math:`d_i = s_i^A - s_i^B` over the inputs where both are defined; its mean
    :math:`\bar d` estimates how much better A is (in the metric's direction), with a
    bootstrap interval (1). The paired test asks whether the :math:`d_i` are centred on 0:

    * Wilcoxon's signed-rank test (``scipy.stats.wilcoxon``, zero differences dropped,
      exact for small N): for continuous scores (1);
    * a paired permutation test, flipping the sign of each :math:`d_i`
      (``scipy.stats.permutation_test``, ``permutation_type='samples'``, statistic
      :math:`\bar d`; exact enumeration when :math:`2^N` <= ``n_resamples``): for
      proportions, whose many ties and zeros the signed-rank test handles poorly (2).

    Holm's step-down correction (:func:`~xplique_ext.commons.uncertainty.holm`) is
    applied across the :math:`K(K-1)/2` pairs, so that the chance of calling any equal
    pair different stays at most ``alpha``.

    Parameters
    ----------
    scores_by_name
        ``{explainer name: per-input scores (N,)}``, NaN where undefined, all on the
        same N inputs in the same order.
    higher_is_better
        The metric's direction (ranks and ``better``).
    proportion
        Whether scores are 0/1 outcomes of a proportion (Wilson intervals for the
        means; the permutation test under ``test='auto'``).
    confidence
        Level of the intervals, in (0, 1).
    alpha
        Level of the tests after Holm's correction, in (0, 1).
    interval
        Interval of the means, as in
        :func:`~xplique_ext.commons.uncertainty.summarize_scores`; the differences
        always get a bootstrap ('bca' unless 'percentile' is asked).
    test
        'auto' (the permutation test when ``proportion`` and every score is 0 or 1,
        else Wilcoxon), 'wilcoxon' or 'permutation'.
    n_resamples
        Bootstrap and permutation resamples, in [100, 10**6].
    seed
        Seed of the bootstraps and permutations.
    name
        The metric's name (plot label, warnings).

    Returns
    -------
    ComparisonFrame
        One row per explainer, then one per pair (see :class:`ComparisonFrame`).

    References
    ----------
    (1) Wilcoxon, *Individual comparisons by ranking methods*, Biometrics Bulletin 1
    (1945) 80-83. (2) Good, *Permutation, Parametric and Bootstrap Tests of Hypotheses*,
    Springer 2005, ch. 3 (paired samples). Holm, Scand. J. Statist. 6 (1979) 65-70.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(1)
    >>> base = rng.normal(size=30)
    >>> t = compare_scores({"A": base + 0.5, "B": base}, higher_is_better=True)
    >>> t.pairs[["estimate", "differs", "better"]].round(3).to_dict("records")
    [{'estimate': 0.5, 'differs': True, 'better': 'A'}]
    """
    scores_by_name = _check_names(scores_by_name, "scores_by_name")
    arrays = _check_score_arrays(scores_by_name)
    binary = all(is_binary(a[~np.isnan(a)]) for a in arrays.values())
    if test == "auto":
        test = "permutation" if (proportion and binary) else "wilcoxon"
    options = dict(confidence=confidence, n_resamples=n_resamples, seed=seed)
    rows = _explainer_rows(arrays, higher_is_better, proportion, interval, name, options)
    pair_rows = _pair_rows(arrays, "percentile" if interval == "percentile" else "bca",
                           test, name, options)
    adjusted = holm([r["p_value"] for r in pair_rows]) if pair_rows else []
    for row, p in zip(pair_rows, adjusted):
        row["p_holm"] = float(p)
        row["differs"] = bool(p <= alpha)  # NaN (untestable): False
        if row["differs"]:
            a_better = (row["estimate"] > 0) == bool(higher_is_better)
            row["better"] = row["a"] if a_better else row["b"]
    frame = ComparisonFrame(rows + pair_rows, columns=COLUMNS)
    frame["differs"] = frame["differs"].astype(object)
    frame.alpha = alpha
    frame.confidence = confidence
    frame.higher_is_better = bool(higher_is_better)
    frame.metric_name = name
    return frame


def _check_score_arrays(scores_by_name: Dict[str, Any]) -> Dict[str, np.ndarray]:
    """The scores as float64 arrays (N,), all of the same length, or raise."""
    arrays: Dict[str, np.ndarray] = {}
    indexes: Dict[str, Any] = {}
    scores = [ArrayLike("numeric", ndim=1, shapes="(N,)", batch_hint=False, nonempty=True)]
    for key, values in scores_by_name.items():
        if isinstance(getattr(values, "index", None), pd.Index):
            indexes[key] = values.index  # pandas: aligned by position, so the same index
        arrays[key] = check_param(values, f"scores_by_name[{key!r}]", scores).astype(
            np.float64)
    first = next(iter(indexes.items()), None)
    for key, index in indexes.items():
        if not index.equals(first[1]):
            raise ValueError(
                "`scores_by_name` must score every explainer on the same inputs in the "
                f"same order: the pandas index of {key!r} differs from that of "
                f"{first[0]!r} (align them, e.g. with .reindex, or pass arrays)"
            )
    lengths = {key: len(a) for key, a in arrays.items()}
    if len(set(lengths.values())) != 1:
        raise ValueError(
            "every explainer must be scored on the same inputs: got per-input score "
            f"counts {lengths}"
        )
    return arrays


def _quiet_summary(values: np.ndarray, **kwargs: Any):
    """:func:`summarize_scores` without its warnings (the table carries n and NaN)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedScoreWarning)
        warnings.simplefilter("ignore", DegenerateSettingWarning)
        return summarize_scores(values, **kwargs)


def _explainer_rows(arrays, higher_is_better, proportion, interval, name, options):
    """One row per explainer: mean, interval, rank (1 = best in the metric's direction;
    ties share the smaller rank; NaN for a NaN mean)."""
    from scipy.stats import rankdata

    rows = []
    for key, a in arrays.items():
        s = _quiet_summary(a, interval=interval, proportion=bool(proportion),
                           name=f"{name} of {key}", **options)
        rows.append(_row("explainer", key, key, None, s))
    values = np.array([row["estimate"] for row in rows])
    order = -values if higher_is_better else values
    ranks = np.full(len(values), np.nan)
    finite = np.isfinite(values)
    ranks[finite] = rankdata(order[finite], method="min")
    for row, rank in zip(rows, ranks):
        row["rank"] = float(rank)
    return rows


def _pair_rows(arrays, interval, test, name, options):
    """One row per pair (A, B): the mean paired difference A - B over the inputs where
    both are defined, its bootstrap interval and the paired test (before Holm)."""
    rows = []
    for key_a, key_b in itertools.combinations(arrays, 2):
        a, b = arrays[key_a], arrays[key_b]
        with np.errstate(invalid="ignore"):
            d = a - b
        both = ~np.isnan(d)  # NaN in either, or inf - inf: no defined difference
        d = d[both]
        if d.size:
            s = _quiet_summary(d, interval=interval, name=f"{name} of {key_a} - {key_b}",
                               **options)
        else:  # no input with both scores defined: nothing to summarise
            s = _quiet_summary(np.array([np.nan]), interval=interval, name=name, **options)
        row = _row("pair", f"{key_a} - {key_b}", key_a, key_b, s)
        row["n_undefined"] = int((~both).sum())
        statistic, p_value, label = _paired_test(d, test, options["n_resamples"],
                                                 options["seed"])
        row.update(test=label, statistic=statistic, p_value=p_value)
        rows.append(row)
    return rows


def _row(kind: str, label: str, a: str, b: Optional[str], s) -> dict:
    return {
        "kind": kind, "name": label, "a": a, "b": b, "estimate": s.mean,
        "std_error": s.std_error, "ci_low": s.ci_low, "ci_high": s.ci_high, "n": s.n,
        "n_undefined": s.n_undefined, "rank": np.nan, "test": None,
        "statistic": np.nan, "p_value": np.nan, "p_holm": np.nan, "differs": None,
        "better": None, "method": s.method,
    }


def _paired_test(d: np.ndarray, test: str, n_resamples: int,
                 seed: Optional[int]) -> Tuple[float, float, str]:
    """(statistic, two-sided p-value, test label) for the paired differences ``d``."""
    if test == "wilcoxon":
        label = "Wilcoxon signed-rank"
        nonzero = d[d != 0]
        if d.size == 0:
            return float("nan"), float("nan"), label + " (no input with both defined)"
        if nonzero.size == 0:
            return 0.0, 1.0, label + " (all differences 0)"
        from scipy.stats import wilcoxon

        res = wilcoxon(d, zero_method="wilcox")
        return float(res.statistic), float(res.pvalue), label
    label = "paired permutation (sign-flip)"
    if d.size == 0:
        return float("nan"), float("nan"), label + " (no input with both defined)"
    if not np.any(d):
        return 0.0, 1.0, label + " (all differences 0)"
    from scipy.stats import permutation_test

    from .commons.random import make_rng

    res = permutation_test(
        (d, np.zeros_like(d)), lambda x, y, axis: np.mean(x - y, axis=axis),
        permutation_type="samples", vectorized=True, n_resamples=n_resamples,
        rng=make_rng(seed), batch=resample_batch(n_resamples, d.size),
    )
    return float(res.statistic), float(min(1.0, res.pvalue)), label
