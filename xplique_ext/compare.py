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
import math
import warnings
from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Tuple

import numpy as np
import pandas as pd

from .commons import uncertainty
from .commons.direction import declared_direction, direction_word, order_best_first, rank_best_first
from .commons.metric import BaseMetric
from .commons.pandas_inputs import align_by_index
from .commons.params import Boolean, InstanceOf, Options, check_param, describe, validate_params
from .commons.warnings import DegenerateSettingWarning, UndefinedScoreWarning, warn

__all__ = ["compare", "compare_scores", "ComparisonFrame", "TESTS"]

#: ``test`` choices: 'auto' (the permutation test when every score is 0 or 1, else
#: Wilcoxon), 'wilcoxon' (signed-rank), 'permutation' (paired, sign-flip).
TESTS = ("auto", "wilcoxon", "permutation")

COLUMNS = [
    "kind",
    "name",
    "a",
    "b",
    "estimate",
    "std_error",
    "ci_low",
    "ci_high",
    "n",
    "n_undefined",
    "rank",
    "test",
    "statistic",
    "p_value",
    "p_holm",
    "differs",
    "better",
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
        The explainer's name, or ``'A - B'`` for a pair (explainer names may not contain
        ``' - '``, so that a pair's label reads back unambiguously).
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
        Explainer rows: 1 for the best, in the metric's direction, and never behind an
        explainer it is ``better`` than: the explainers are taken by their means, best
        first, each as soon as no explainer left is ``better`` than it (explainers with
        equal means that neither is better than share the smaller rank). When the paired
        tests go round in a circle (A better than B, B than C, C than A), the ranks are
        those of the means, with a DegenerateSettingWarning. NaN for pairs and for
        explainers whose mean is not finite.
    test, statistic, p_value
        Pair rows: the paired test and its two-sided result.
    p_holm
        The p-value after Holm's correction across all pairs.
    differs
        Pair rows: ``p_holm <= alpha``; explainers that do not differ are
        indistinguishable at that level.
    better
        Pair rows that differ: the name of the better explainer, in the metric's
        direction and in the direction of the test that is reported (not of the mean,
        which one outlier can turn): for Wilcoxon's test the sign of the signed-rank sum
        ``W+ - W-`` (which differences, by their ranks, favour A), for the permutation
        test that of the mean difference, its statistic. None otherwise.

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
        return [
            (a, b) for a, b, differs in zip(pairs["a"], pairs["b"], pairs["differs"]) if not differs
        ]

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
        from matplotlib.axes import Axes

        check_param(ax, "ax", [InstanceOf(Axes, description="matplotlib axes"), None])
        rows = self.explainers
        if ax is None:
            _, ax = plt.subplots(figsize=(6.0, 0.5 + 0.45 * max(len(rows), 1)))
        y = np.arange(len(rows))[::-1]
        means = rows["estimate"].to_numpy(float)
        low = rows["ci_low"].to_numpy(float)
        high = rows["ci_high"].to_numpy(float)
        style = {"fmt": "o", "capsize": 3, "color": "tab:blue", **kwargs}
        ax.errorbar(means, y, xerr=np.clip([means - low, high - means], 0, None), **style)
        ax.set_yticks(y, list(rows.index))
        direction = direction_word(self.higher_is_better)
        ax.set_xlabel(f"{self.metric_name} ({direction} is better), {self.confidence:.0%} CI")
        bounds = rows[["ci_low", "ci_high", "estimate"]].to_numpy(float)
        bounds = bounds[np.isfinite(bounds)]
        right = 1.0  # where the brackets start, and the span of the values they stand by
        span = 1.0
        if bounds.size:
            right = bounds.max()
            span = np.ptp(bounds)
        position = dict(zip(rows.index, y))
        for k, (a, b) in enumerate(self.indistinguishable()):  # a bracket per pair
            if a not in position or b not in position:  # a pair of rows cut away
                continue
            x = right + 0.04 * (span or 1.0) * (k + 1)
            ax.plot([x, x], [position[a], position[b]], color="0.5", lw=2, solid_capstyle="butt")
        if self.indistinguishable():
            ax.set_title(
                f"grey bars join explainers that do not differ (Holm, alpha={self.alpha:g})",
                fontsize=9,
            )
        ax.margins(x=0.1)
        return ax


#: the settings of compare and compare_scores: a summary's, with the tests'
_COMMON = {**uncertainty.SUMMARY_PARAMETERS, "alpha": uncertainty.LEVEL, "test": [Options(TESTS)]}


def _check_names(mapping: Any, what: str) -> Dict[str, Any]:
    if not mapping:
        raise ValueError(f"`{what}` must hold at least one explainer, got none")
    for key in mapping:
        if not isinstance(key, str) or not key:
            raise TypeError(f"`{what}` keys must be non-empty strings, got {key!r}")
        if " - " in key:  # a pair is labelled 'A - B': its two names must read back unambiguously
            raise ValueError(
                f"`{what}` keys must not contain ' - ' (it separates the two names "
                f"of a pair's label 'A - B'), got {key!r}"
            )
    return dict(mapping)


@validate_params(
    {
        "metric": "no_validation",  # duck-typed: detailed_evaluate and higher_is_better, below
        "explanations_by_name": [InstanceOf(Mapping, description="a dict {name: explanations}")],
        **_COMMON,
    }
)
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
    _check_metric(metric)
    name = type(metric).__name__
    scores = {}
    reasons = []
    for explainer, explanations in explanations_by_name.items():  # duck-typed: any metric
        scores[explainer], found = BaseMetric._scores_and_reasons(metric, explanations)
        reasons += [f"{explainer}: {reason}" for reason in found]
    why = "."
    if reasons:
        why += " Reasons: " + " ".join(reasons)
    _warn_counts(
        name, scores, np.isnan, "undefined (NaN) scores are left out of the comparison", why
    )
    if seed is None:
        seed = getattr(metric, "seed", None)
    # a proportion metric whose scores are not all 0/1 is compared as a plain mean
    proportion = bool(getattr(metric, "_is_proportion", lambda: False)())
    if proportion:
        proportion = all(uncertainty.is_binary(s[~np.isnan(s)]) for s in scores.values())
    return compare_scores(
        scores,
        higher_is_better=declared_direction(metric),
        confidence=confidence,
        proportion=proportion,
        alpha=alpha,
        interval=interval,
        test=test,
        n_resamples=n_resamples,
        seed=seed or 0,
        name=name,
    )


def _check_metric(metric: Any) -> None:
    """A metric instance with ``detailed_evaluate`` and a bool ``higher_is_better``, or a
    TypeError saying what was received (a class is named as such)."""
    if isinstance(metric, type):
        got = f"the class {metric.__name__}"
    elif not callable(getattr(metric, "detailed_evaluate", None)):
        got = describe(metric)
    elif not isinstance(getattr(metric, "higher_is_better", None), (bool, np.bool_)):
        got = describe(metric)
    else:
        return
    raise TypeError(
        "`metric` must be a metric instance with a `detailed_evaluate` method and "
        "a bool `higher_is_better`, built on the inputs (e.g. MuFidelity(model, "
        f"inputs, targets)), got {got}"
    )


def _warn_counts(name: str, arrays: Dict[str, np.ndarray], which, what: str, why: str):
    """An UndefinedScoreWarning "name: what (counts)why", counting per explainer the
    scores ``which`` selects; none when there are none."""
    counts = {k: int(which(a).sum()) for k, a in arrays.items()}
    if any(counts.values()):
        listed = ", ".join(f"{k}: {c} of {len(arrays[k])}" for k, c in counts.items() if c)
        warn(f"{name}: {what} ({listed}){why}", UndefinedScoreWarning)


@validate_params(
    {
        "scores_by_name": [InstanceOf(Mapping, description="a dict {name: scores (N,)}")],
        "higher_is_better": [Boolean()],
        "proportion": [Boolean()],
        "name": [InstanceOf(str)],
        **_COMMON,
    }
)
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

    A pair that differs names the ``better`` explainer from the direction of the test
    reported (the signed-rank sum for Wilcoxon, the mean for the permutation test), and
    the ranks never put an explainer behind one it is better than (see
    :class:`ComparisonFrame`): the mean, which one outlier can turn, decides neither alone.

    Holm's step-down correction (:func:`~xplique_ext.commons.uncertainty.holm`) is
    applied across the :math:`K(K-1)/2` pairs, so that the chance of calling any equal
    pair different stays at most ``alpha``.

    Parameters
    ----------
    scores_by_name
        ``{explainer name: per-input scores (N,)}``, NaN where undefined, all on the
        same N inputs in the same order; names without ``' - '`` (pairs read ``'A - B'``).
    higher_is_better
        The metric's direction (ranks and ``better``), as the metric declares it.
    proportion
        Whether scores are 0/1 outcomes of a proportion (Wilson intervals for the
        means; the permutation test under ``test='auto'``); other scores are then
        refused.
    confidence
        Level of the intervals, in (0, 1).
    alpha
        Level of the tests after Holm's correction, in (0, 1).
    interval
        Interval of the means, as in
        :func:`~xplique_ext.commons.uncertainty.summarize_scores`; the differences
        always get a bootstrap ('bca' unless 'percentile' is asked).
    test
        'auto' (the permutation test when ``proportion``, else Wilcoxon), 'wilcoxon'
        or 'permutation'.
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
    arrays = _check_score_arrays(scores_by_name, proportion, name)
    if test == "auto":
        test = "permutation" if proportion else "wilcoxon"
    options = dict(confidence=confidence, n_resamples=n_resamples, seed=seed)
    rows = [
        _row(
            kind="explainer",
            label=key,
            a=key,
            b=None,
            values=values,
            interval=interval,
            proportion=proportion,
            name=f"{name} of {key}",
            **options,
        )
        for key, values in arrays.items()
    ]
    pair_rows = _pair_rows(
        arrays,
        interval="percentile" if interval == "percentile" else "bca",
        test=test,
        name=name,
        options=options,
        alpha=alpha,
        higher_is_better=higher_is_better,
    )
    few = [
        r["n"]
        for r in rows + pair_rows
        if r["method"].startswith("BCa") and 2 <= r["n"] < uncertainty.BCA_MIN_N
    ]
    if few:
        warn(
            f"{name}: BCa intervals over as few as n={min(few)} inputs are unreliable (fewer "
            f"than {uncertainty.BCA_MIN_N})",
            DegenerateSettingWarning,
        )
    frame = ComparisonFrame(rows + pair_rows, columns=COLUMNS)
    frame["differs"] = frame["differs"].astype(object)
    ranks = _ranks(rows, pair_rows, higher_is_better, name)
    frame["rank"] = ranks + [math.nan] * len(pair_rows)
    frame.alpha = alpha
    frame.confidence = confidence
    frame.metric_name = name
    frame.higher_is_better = higher_is_better
    return frame


def _check_score_arrays(scores_by_name: Any, proportion: bool, name: str) -> Dict[str, np.ndarray]:
    """The scores as float64 arrays (N,), all of the same length (0 or 1 for a
    ``proportion``), or raise; an UndefinedScoreWarning counts the infinite ones."""
    scores_by_name = _check_names(scores_by_name, "scores_by_name")
    scores_by_name = align_by_index(scores_by_name, "scores_by_name")
    arrays = {
        key: check_param(values, f"scores_by_name[{key!r}]", uncertainty.SCORES)
        for key, values in scores_by_name.items()
    }
    lengths = {key: len(a) for key, a in arrays.items()}
    if len(set(lengths.values())) != 1:
        raise ValueError(
            "every explainer must be scored on the same inputs: got per-input "
            f"score counts {lengths}"
        )
    if proportion:
        _check_outcomes(arrays)
    _warn_counts(
        name,
        arrays,
        np.isinf,
        "infinite scores",
        ": the intervals, ranks and paired tests that involve them are undefined (NaN)",
    )
    return arrays


def _check_outcomes(arrays: Dict[str, np.ndarray]) -> None:
    """Every defined score is 0 or 1 (the outcomes of a proportion), or a ValueError
    naming the first explainer with other values."""
    for key, values in arrays.items():
        if not uncertainty.is_binary(values[~np.isnan(values)]):
            raise ValueError(
                "`proportion` must be False for scores other than 0 and 1 (the outcomes "
                f"of a proportion), got True with other values in `scores_by_name[{key!r}]`"
            )


def _row(
    *,
    kind: str,
    label: str,
    a: str,
    b: Optional[str],
    values: np.ndarray,
    interval: str,
    **options: Any,
) -> dict:
    """A row of the table: the summary of ``values`` (its warnings silenced: the table
    carries n and NaN); the columns of the ranks and tests are filled later (else NaN)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedScoreWarning)
        warnings.simplefilter("ignore", DegenerateSettingWarning)
        summary = uncertainty.summarize_scores(values, interval=interval, **options).to_dict()
    estimate = summary.pop("mean")
    return {"kind": kind, "name": label, "a": a, "b": b, "estimate": estimate, **summary}


def _pair_rows(arrays, *, interval, test, name, options, alpha, higher_is_better):
    """One row per pair (A, B): the mean paired difference A - B over the inputs where
    both are defined, its bootstrap interval, the paired test and Holm's correction."""
    rows = []
    directions = []
    for key_a, key_b in itertools.combinations(arrays, 2):
        with np.errstate(invalid="ignore"):
            d = arrays[key_a] - arrays[key_b]
        both = ~np.isnan(d)  # NaN in either, or inf - inf: no defined difference
        d = d[both]
        if d.size == 0:  # no input with both scores defined: the summary of one NaN
            summarised = np.full(1, np.nan)
        else:
            summarised = d
        row = _row(
            kind="pair",
            label=f"{key_a} - {key_b}",
            a=key_a,
            b=key_b,
            values=summarised,
            interval=interval,
            name=f"{name} of {key_a} - {key_b}",
            **options,
        )
        result = _paired_test(d, test, options["n_resamples"], options["seed"])
        row.update(
            n_undefined=int((~both).sum()),
            test=result.label,
            statistic=result.statistic,
            p_value=result.p_value,
        )
        rows.append(row)
        directions.append(result.direction)
    for row, direction, p in zip(rows, directions, uncertainty.holm([r["p_value"] for r in rows])):
        row.update(p_holm=float(p), differs=bool(p <= alpha))  # NaN (untestable): False
        row["better"] = _better(row, direction, higher_is_better)
    return rows


def _better(row: dict, direction: int, higher_is_better: bool) -> Optional[str]:
    """The better explainer of a pair that differs, from the ``direction`` of its test
    (+1: A's scores are the larger, -1: B's) read in the metric's direction; else None."""
    if not row["differs"]:
        return None
    if direction == 0:  # a tie on the test's scale: neither is better
        return None
    # A's scores are the larger (direction +1) or the smaller (-1); larger is better when
    # the metric declares higher is better
    a_is_better = (direction > 0) == higher_is_better
    if a_is_better:
        return row["a"]
    return row["b"]


def _ranks(
    rows: List[dict], pair_rows: List[dict], higher_is_better: bool, name: str
) -> List[float]:
    """The rank of each explainer row (see ``rank`` in :class:`ComparisonFrame`): by the
    means in the metric's direction, never behind an explainer it is ``better`` than."""
    means = [row["estimate"] for row in rows]
    names = [row["name"] for row in rows]
    by_mean = rank_best_first(means, higher_is_better)
    ranked = [k for k in order_best_first(means, higher_is_better) if np.isfinite(by_mean[k])]
    beaten_by = _beaten_by(pair_rows, names, ranked)
    ranks = [math.nan] * len(rows)
    left = list(ranked)
    previous = None
    while left:
        free = [k for k in left if not beaten_by[k].intersection(left)]
        if not free:  # the tests go round in a circle: no order agrees with all of them
            warn(
                f"{name}: the paired tests are not transitive (each of "
                f"{', '.join(names[k] for k in left)} is worse than another one): their "
                "ranks are those of the means",
                DegenerateSettingWarning,
            )
            return [float(r) for r in by_mean]
        k = free[0]
        left.remove(k)
        ranks[k] = float(len(ranked) - len(left))
        if previous is not None and means[k] == means[previous] and previous not in beaten_by[k]:
            ranks[k] = ranks[previous]  # a tie that no test breaks: the smaller rank
        previous = k
    return ranks


def _beaten_by(pair_rows: List[dict], names: List[str], ranked: List[int]) -> Dict[int, set]:
    """For each ranked explainer (its row position), the positions of the ranked
    explainers the pair rows name ``better`` than it."""
    position = {label: k for k, label in enumerate(names)}
    beaten_by = {k: set() for k in ranked}
    for pair in pair_rows:
        if pair["better"] is None:
            continue
        winner = position[pair["better"]]
        loser = position[pair["b"]]
        if pair["better"] == pair["b"]:
            loser = position[pair["a"]]
        if winner in beaten_by and loser in beaten_by:
            beaten_by[loser].add(winner)
    return beaten_by


class PairedTest(NamedTuple):
    """A paired test's two-sided result, its label (the test, and why it was not run),
    and the direction of its statistic: +1 when the differences A - B lean positive
    (A's scores are the larger), -1 when they lean negative, 0 when they do not lean."""

    statistic: float
    p_value: float
    label: str
    direction: int = 0


def _paired_test(d: np.ndarray, test: str, n_resamples: int, seed: Optional[int]) -> PairedTest:
    """The paired test of the differences ``d`` (two-sided)."""
    from scipy.stats import permutation_test, wilcoxon

    label = "Wilcoxon signed-rank" if test == "wilcoxon" else "paired permutation (sign-flip)"
    if d.size == 0 or not np.isfinite(d).all():
        why = "no input with both defined" if d.size == 0 else "infinite differences"
        return PairedTest(math.nan, math.nan, f"{label} ({why})")
    if not np.any(d):
        return PairedTest(0.0, 1.0, label + " (all differences 0)")
    if test == "wilcoxon":
        res = wilcoxon(d, zero_method="wilcox")
        direction = _signed_rank_direction(d)
    else:
        res = permutation_test(
            (d, np.zeros_like(d)),
            lambda x, y, axis: np.mean(x - y, axis=axis),
            permutation_type="samples",
            vectorized=True,
            n_resamples=n_resamples,
            rng=np.random.default_rng(seed),
            batch=uncertainty.resample_batch(n_resamples, d.size),
        )
        direction = int(np.sign(np.mean(d)))
    return PairedTest(float(res.statistic), float(min(1.0, res.pvalue)), label, direction)


def _signed_rank_direction(d: np.ndarray) -> int:
    """The sign of Wilcoxon's ``W+ - W-`` for the differences ``d``: the sum of the ranks
    of ``|d|`` (zeros dropped, ties at their mean rank, as ``scipy.stats.wilcoxon`` with
    ``zero_method='wilcox'``), each signed as its difference."""
    from scipy.stats import rankdata

    nonzero = d[d != 0]
    signed_ranks = np.sign(nonzero) * rankdata(np.abs(nonzero))
    return int(np.sign(signed_ranks.sum()))
