"""Aggregation of per-sample scores into one number, shared by every metric family."""

from __future__ import annotations

import warnings

import numpy as np

from .warnings import UndefinedScoreWarning

__all__ = ["nan_aware_mean"]


def nan_aware_mean(scores: np.ndarray, name: str) -> float:
    """Mean of the defined scores; warns how many undefined (NaN) scores were skipped.

    Parameters
    ----------
    scores
        Per-sample scores, any shape (flattened); NaN marks an undefined score.
    name
        Name of the metric, quoted in the warning.

    Returns
    -------
    mean
        ``nanmean(scores)``; NaN when every score is undefined (or there is none).

    Warns
    -----
    UndefinedScoreWarning
        Once, saying how many of the scores were NaN and skipped, when at least one was.
        ``stacklevel`` points at the caller of the metric's ``evaluate``.

    Examples
    --------
    >>> import warnings
    >>> from xplique_ext.commons import nan_aware_mean
    >>> nan_aware_mean([0.5, 1.0], "Demo")
    0.75
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     nan_aware_mean([0.5, float("nan")], "Demo")
    0.5
    >>> print(caught[0].message)
    Demo: 1 of 2 per-sample scores are undefined (NaN) and were skipped in the mean.
    """
    scores = np.asarray(scores, dtype=np.float64)
    undefined = int(np.isnan(scores).sum())
    if undefined == scores.size:
        warnings.warn(
            f"{name}: all {scores.size} per-sample scores are undefined (NaN); the "
            "aggregate is NaN.",
            UndefinedScoreWarning,
            stacklevel=3,
        )
        return float("nan")
    if undefined:
        warnings.warn(
            f"{name}: {undefined} of {scores.size} per-sample scores are undefined (NaN) "
            "and were skipped in the mean.",
            UndefinedScoreWarning,
            stacklevel=3,
        )
    return float(np.nanmean(scores))
