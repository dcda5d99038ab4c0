"""Plots for ground-truth saliency: AIXI samples with their ground-truth explanations, the
leaderboard of explainers, and LIME's EMD against the sample size (experiment 1)."""

from __future__ import annotations

from typing import Any, Dict, Mapping, Optional, Sequence

import numpy as np

from ..commons.direction import declared_direction
from .attributions import finish_image_grid, overlay, plot_scores

__all__ = ["plot_aixi_samples", "plot_ground_truth_leaderboard", "plot_sample_size_curve"]


def plot_aixi_samples(
    data: Any,
    n_images: int = 6,
    *,
    explanations: Optional[Mapping[str, np.ndarray]] = None,
    cmap: str = "bwr",
):
    """Images of an :class:`~xplique_ext.datasets.AIXIData` (first row), their ground
    truth in the dataset's convention (second row; the paper's w_i by default) and
    optionally explanations (one row each), with the pattern counts and F(I) in the
    titles. Diverging colours centred on 0 (limits -m, m with m the map's largest
    absolute value), a colour bar next to each map.

    Returns
    -------
    fig
        The matplotlib Figure.
    """
    import matplotlib.pyplot as plt

    n = min(n_images, len(data))
    rows = [("ground truth", data.ground_truth)] + list((explanations or {}).items())
    fig, axes = plt.subplots(
        len(rows) + 1, n, figsize=(2.5 * n, 2.1 * (len(rows) + 1)), squeeze=False
    )
    for i in range(n):
        axes[0, i].imshow(data.images[i, ..., 0], cmap="gray", vmin=0, vmax=1)
        counts = ", ".join(f"{c} {p}" for c, p in zip(data.counts[i], data.pattern_names) if c)
        axes[0, i].set_title(f"{counts or 'empty'}\nF = {data.targets[i]:.3f}", fontsize=7)
        for r, (label, maps) in enumerate(rows, start=1):
            overlay(axes[r, i], data.images[i, ..., 0], maps[i], cmap=cmap, alpha=0.75)
            if i == 0:
                axes[r, i].set_ylabel(label, fontsize=8)
    return finish_image_grid(fig, axes)


def plot_ground_truth_leaderboard(
    per_sample: Mapping[str, Mapping[str, np.ndarray]],
    measures: Optional[Sequence[str]] = None,
    *,
    directions: Mapping[str, Any],
):
    """One bar chart per measure (best explainer on top, mean with standard error), from
    the ``per_sample`` scores of :func:`~xplique_ext.metrics.ground_truth_leaderboard`.

    Parameters
    ----------
    per_sample
        Measure label -> explainer name -> scores (N,).
    measures
        The labels to plot, in order (default: every label of ``per_sample``).
    directions
        Measure label -> its direction, as the measure declares it: a bool
        ``higher_is_better``, or anything that declares one (a
        :class:`~xplique_ext.metrics.GroundTruthMeasure`, a ``MeasureDeclaration``, the
        ``ComparisonFrame`` of ``table.attrs['comparisons']``). The plot decides no
        direction itself: the measures' declarations are
        :data:`xplique_ext.metrics.ground_truth_measures.DIRECTIONS`.

    Returns
    -------
    fig
        The matplotlib Figure.

    Raises
    ------
    ValueError
        When ``directions`` lacks a measure plotted.
    TypeError
        When a direction is neither a bool nor declared.

    Examples
    --------
    >>> from xplique_ext.metrics.ground_truth_measures import DIRECTIONS
    >>> per_sample = {"EMD": {"a": np.array([0.1, 0.2]), "b": np.array([0.3, 0.4])}}
    >>> fig = plot_ground_truth_leaderboard(per_sample, directions=DIRECTIONS)
    >>> fig.axes[0].get_xlabel()
    'EMD (lower is better)'
    >>> import matplotlib.pyplot as plt; plt.close(fig)
    """
    import matplotlib.pyplot as plt

    measures = list(measures or per_sample)
    missing = [m for m in measures if m not in directions]
    if missing:
        raise ValueError(
            f"`directions` must give the direction of each measure plotted, missing "
            f"{missing} (got directions for {list(directions)})"
        )
    higher_is_better = {m: _direction(directions[m]) for m in measures}
    n_methods = max(len(per_sample[m]) for m in measures)
    size = (4.2 * len(measures), 0.45 * n_methods + 1.2)
    fig, axes = plt.subplots(1, len(measures), figsize=size, squeeze=False)
    for ax, measure in zip(axes[0], measures):
        plot_scores(
            per_sample[measure],
            metric_name=measure,
            higher_is_better=higher_is_better[measure],
            ax=ax,
        )
    fig.tight_layout()
    return fig


def _direction(declared: Any) -> bool:
    """A direction given as a bool, or read from what declares it."""
    if isinstance(declared, (bool, np.bool_)):
        return bool(declared)
    return declared_direction(declared)


def plot_sample_size_curve(
    sample_sizes: Sequence[int],
    curves: Dict[str, Sequence[float]],
    *,
    measure: str = "EMD",
    ax=None,
):
    """Mean distance to the ground truth against LIME's sample size (experiment 1,
    Fig. 5 of the paper), one line per (dataset, function).

    Returns
    -------
    ax
        The matplotlib Axes.
    """
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(5, 3.5))
    for label, values in curves.items():
        ax.plot(sample_sizes, values, marker="o", label=label)
    ax.set_xscale("log", base=2)
    ax.set_xticks(list(sample_sizes), [str(s) for s in sample_sizes])
    ax.set_xlabel("sample size")
    ax.set_ylabel(f"mean {measure} to the ground truth (lower is better)")
    ax.legend(fontsize=8)
    return ax
