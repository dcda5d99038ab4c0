"""The ground-truth leaderboard: explainers ranked by their distance to the exact ground truth."""

from __future__ import annotations

import numbers
import warnings
from typing import Any, Optional, Sequence

import numpy as np

from ..commons.direction import direction_word, order_best_first
from ..commons.params import (
    NO_VALIDATION,
    InstanceOf,
    Interval,
    Options,
    check_param,
    validate_params,
)
from .ground_truth_measures import DISTANCES, LOCALISATION, MAPS, as_measure, map_constraint

__all__ = ["ground_truth_leaderboard"]


@validate_params(
    {
        "explanations": [InstanceOf(dict, description="a dict explainer name -> maps")],
        "ground_truth": NO_VALIDATION,  # maps or an AIXIData: checked by the measures
        "masks": [*MAPS, None],
        "measures": [InstanceOf(list, tuple, description="a list of measures"), None],
        "convention": [Options(["paper", "object", "pixel"])],
        "confidence": [Interval(numbers.Real, 0.0, 1.0, closed="neither")],
        "seed": [Interval(numbers.Integral, 0, None), None],
    }
)
def ground_truth_leaderboard(
    explanations: dict,
    ground_truth: Any,
    *,
    masks: Any = None,
    measures: Optional[Sequence[Any]] = None,
    convention: str = "paper",
    confidence: float = 0.95,
    seed: Optional[int] = 0,
):
    """Rank explainers by their distance to the exact ground truth.

    Parameters
    ----------
    explanations
        Explainer name -> maps (N, H, W[, C]).
    ground_truth
        Ground-truth maps (N, H, W), or an :class:`~xplique_ext.datasets.AIXIData`, whose
        ground truth in ``convention`` is then used, with its relevant-object masks when
        ``masks`` is None.
    masks
        Optional boolean masks (N, H, W) (e.g. ``AIXIData.relevant_masks``): adds the
        localisation measures (mass accuracy, rank accuracy, pointing game).
    measures
        The measures, as names or :class:`GroundTruthMeasure` with their options (e.g.
        ``[GroundTruthMeasure("emd", resize=None, n_jobs=-1), "kl"]``); default: 'emd'
        (maps reduced within (32, 32)) and 'kl' (full resolution), and the three
        localisation measures when there are masks. Their labels must differ.
    convention
        With an ``AIXIData``: 'paper' (default; the paper's ground truth, w_i on each
        object of pattern i) or 'object' / 'pixel' (exact Shapley values, beyond the
        paper).
    confidence
        Level of the intervals over the images, in (0, 1).
    seed
        Seed of the bootstrap intervals and permutation tests.

    Returns
    -------
    table : pandas.DataFrame
        One row per explainer, sorted by its first measure, best first in the direction
        that measure declares (:attr:`GroundTruthMeasure.higher_is_better`): by its
        ``rank`` in ``table.attrs['comparisons']`` (the means, and no explainer behind
        one the paired test finds better; see
        :class:`~xplique_ext.compare.ComparisonFrame`), explainers without a rank (NaN
        mean) last, ties in the order given. The columns: the mean of each
        measure (EMD and KL: lower is better; localisation: higher is better), then, for
        each measure, the bounds of its interval over the images (``'<measure> ci_low'``,
        ``'<measure> ci_high'``: BCa bootstrap, Wilson for the pointing game). NaN scores
        (all-zero maps) are skipped in the means. ``table.attrs['comparisons']`` maps each
        measure to the :class:`~xplique_ext.compare.ComparisonFrame` of the explainers
        (paired tests, Holm-corrected: which explainers do not differ).
    per_sample : dict
        Measure label -> explainer name -> scores (N,), for plots and tests.

    Examples
    --------
    >>> truth = np.zeros((2, 8, 8)); truth[:, 2, 2] = 1
    >>> table, _ = ground_truth_leaderboard({"exact": truth, "flat": np.ones((2, 8, 8))},
    ...                                     truth)
    >>> list(table.index)
    ['exact', 'flat']
    """
    import pandas as pd

    from ..compare import compare_scores
    from ..datasets.aixi import AIXIData

    if not explanations:
        raise ValueError("`explanations` must be a non-empty dict explainer name -> maps, got {}")
    if isinstance(ground_truth, AIXIData):
        if masks is None:
            masks = ground_truth.relevant_masks_for(convention)
        ground_truth = ground_truth.get_ground_truth(convention)
    # maps (N, H, W[, C]): one score per map, compared across explainers
    check_param(
        ground_truth,
        "ground_truth",
        [
            map_constraint(
                ndim=(3, 4), shapes="(N, H, W) or (N, H, W, C)", batch_hint=True, nonempty=True
            )
        ],
    )
    if measures is not None and not measures:
        raise ValueError(
            "`measures` must name at least one measure (None: the defaults), got an empty list"
        )
    names = DISTANCES
    if masks is not None:
        names = (*DISTANCES, *LOCALISATION)
    if measures is None:
        measures = names
    measures = [as_measure(m, names, "measures") for m in measures]
    if len({m.label for m in measures}) < len(measures):
        raise ValueError(f"`measures` must have distinct labels, got {measures}")
    per_sample = {}
    comparisons = {}
    table = pd.DataFrame(index=pd.Index(list(explanations), name="explainer"))
    references = {"ground_truth": ground_truth, "masks": masks}
    for m in measures:
        reference = references[m.reference]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # NaN scores are skipped; the tests are noisy
            scores = {name: m(phi, reference) for name, phi in explanations.items()}
            per_sample[m.label] = scores
            comparisons[m.label] = compare_scores(
                scores,
                higher_is_better=m.higher_is_better,
                confidence=confidence,
                seed=seed,
                proportion=m.proportion,
                name=m.label,
            )
            direction = direction_word(m.higher_is_better)
            # NaN scores are skipped; all-NaN scores give a NaN mean (its warning is ignored)
            table[f"{m.label} ({direction} is better)"] = [np.nanmean(s) for s in scores.values()]
    for label, frame in comparisons.items():
        table[[f"{label} ci_low", f"{label} ci_high"]] = frame.explainers[["ci_low", "ci_high"]]
    # best first: the first measure's ranks (1 = best), which read its declared direction
    first_ranks = comparisons[measures[0].label].explainers["rank"].reindex(table.index)
    table = table.iloc[order_best_first(first_ranks, higher_is_better=False)]
    table.attrs["comparisons"] = comparisons
    return table, per_sample
