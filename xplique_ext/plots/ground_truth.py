"""Plots for ground-truth saliency: AIXI samples with their ground-truth explanations, the
leaderboard of explainers, and LIME's EMD against the sample size (experiment 1)."""

from __future__ import annotations

from typing import Any, Dict, Mapping, Optional, Sequence

import numpy as np

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
    per_sample: Mapping[str, Mapping[str, np.ndarray]], measures: Optional[Sequence[str]] = None
):
    """One bar chart per measure (best explainer on top, mean with standard error), from
    the ``per_sample`` scores of :func:`~xplique_ext.metrics.ground_truth_leaderboard`.

    Returns
    -------
    fig
        The matplotlib Figure.
    """
    import matplotlib.pyplot as plt

    measures = list(measures or per_sample)
    n_methods = max(len(per_sample[m]) for m in measures)
    size = (4.2 * len(measures), 0.45 * n_methods + 1.2)
    fig, axes = plt.subplots(1, len(measures), figsize=size, squeeze=False)
    for ax, measure in zip(axes[0], measures):
        plot_scores(
            per_sample[measure],
            metric_name=measure,
            higher_is_better=measure not in ("EMD", "KL"),
            ax=ax,
        )
    fig.tight_layout()
    return fig


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
