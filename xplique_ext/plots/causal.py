"""Plot of the Deletion and Insertion curves (the ``curve_<k>`` columns of
:meth:`xplique_ext.metrics.Deletion.details`)."""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

__all__ = ["plot_causal_curves"]

CURVE_PREFIX = "curve_"


def plot_causal_curves(details: Any, *, title: Optional[str] = None, ax: Any = None):
    """Each input's curve (thin lines) and their mean (thick line): the model's score
    against the number of features perturbed.

    Parameters
    ----------
    details
        The DataFrame of :meth:`~xplique_ext.metrics.Deletion.details` or
        :meth:`~xplique_ext.metrics.Insertion.details`: its ``curve_<k>`` columns hold the
        score with ``k`` features perturbed, one row per input (NaN rows, undefined
        curves, are left out).
    title
        Title of the axes; None leaves it empty.
    ax
        Matplotlib axes to draw on; None makes a new figure.

    Returns
    -------
    fig
        The matplotlib Figure.

    Raises
    ------
    ValueError
        When ``details`` has no ``curve_<k>`` column.
    """
    import matplotlib.pyplot as plt

    columns = [c for c in details.columns if str(c).startswith(CURVE_PREFIX)]
    if not columns:
        raise ValueError(
            "`details` must hold the curves of Deletion or Insertion (columns "
            f"'{CURVE_PREFIX}<k>'), got columns {list(details.columns)}"
        )
    counts = np.array([int(str(c)[len(CURVE_PREFIX) :]) for c in columns])
    curves = details[columns].to_numpy(dtype=np.float64)
    curves = curves[np.isfinite(curves).all(axis=1)]
    if ax is None:
        _, ax = plt.subplots(figsize=(5, 3.5))
    for curve in curves:
        ax.plot(counts, curve, color="tab:blue", alpha=0.25, linewidth=0.8)
    if len(curves):
        ax.plot(counts, curves.mean(axis=0), color="tab:blue", linewidth=2.5, label="mean")
        ax.legend(loc="best", fontsize=8)
    ax.set_xlabel("features perturbed")
    ax.set_ylabel("score")
    if title is not None:
        ax.set_title(title)
    return ax.figure
