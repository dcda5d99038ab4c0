"""Plots of explanations next to their scores."""

from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence, Union

import numpy as np

from ..commons.direction import direction_word, order_best_first

__all__ = ["plot_scored_explanations", "plot_scores"]


def symmetric_limit(values: np.ndarray) -> float:
    """The largest finite absolute value (1 for an all-zero or empty map): colour limits
    ``(-lim, lim)`` centre signed attributions on 0."""
    values = np.abs(np.asarray(values, dtype=np.float64))
    return float(values[np.isfinite(values)].max(initial=0.0)) or 1.0


def overlay(ax, image: np.ndarray, phi: np.ndarray, *, cmap: str, alpha: float) -> None:
    """``image`` (values in [0, 1]; grey when 2-D) with the attributions ``phi`` (H, W) or
    (H, W, C) (channels summed) over it, in colours centred on 0 (limits -m, m with m the
    map's largest absolute value), and a slim colour bar with ticks at -m, 0 and m."""
    ax.imshow(image, cmap="gray" if image.ndim == 2 else None, vmin=0, vmax=1)
    phi = np.asarray(phi, dtype=np.float64)
    if phi.ndim == 3:
        phi = phi.sum(axis=-1)
    lim = symmetric_limit(phi)
    bar = ax.figure.colorbar(
        ax.imshow(phi, cmap=cmap, vmin=-lim, vmax=lim, alpha=alpha), ax=ax, fraction=0.046, pad=0.03
    )
    bar.set_ticks([-lim, 0.0, lim], labels=[f"{t:.2g}" for t in (-lim, 0.0, lim)])
    bar.ax.tick_params(labelsize=6)


def finish_image_grid(fig: Any, axes: Any) -> Any:
    """Hide the ticks of every axis of an image grid, tighten the layout, return ``fig``."""
    for ax in axes.ravel():
        ax.set(xticks=[], yticks=[])
    fig.tight_layout()
    return fig


def _standard_error(values: np.ndarray) -> float:
    """The standard error of the mean of ``values`` (0 for fewer than two values)."""
    if values.size > 1:
        return float(values.std(ddof=1) / np.sqrt(values.size))
    return 0.0


def plot_scored_explanations(
    images: np.ndarray,
    explanations: Mapping[str, np.ndarray],
    scores: Optional[Mapping[str, Union[float, Sequence[float]]]] = None,
    *,
    n_images: int = 4,
    metric_name: str = "score",
    cmap: str = "bwr",
    alpha: float = 0.6,
):
    """Grid of images (rows) and their explanations by each method (columns).

    Each map has its own colour bar; its colours are centred on 0 (limits -m, m with m
    the map's largest absolute value), so that white means 0, red a positive and blue a
    negative attribution with the default diverging ``cmap``.

    Parameters
    ----------
    images
        Inputs (N, H, W, C) or (N, H, W), values in [0, 1] or any range (rescaled).
    explanations
        Method name -> attributions (N, H, W), (N, H, W, 1) or (N, H, W, C).
    scores
        Method name -> aggregate score (shown in the column title) or per-image scores
        (N,) (shown under each map).
    n_images
        Number of images (rows) shown.
    metric_name
        Name printed with the scores.
    cmap
        Matplotlib colour map of the attributions (a diverging one).
    alpha
        Opacity of the attributions over the image.

    Returns
    -------
    fig
        The matplotlib Figure.
    """
    import matplotlib.pyplot as plt

    images = np.asarray(images)
    n = min(n_images, len(images))
    names = list(explanations)
    fig, axes = plt.subplots(
        n, len(names) + 1, figsize=(2.6 * (len(names) + 1), 2.2 * n), squeeze=False
    )
    for i in range(n):
        img = images[i].astype(np.float64)
        img = (img - img.min()) / (np.ptp(img) or 1.0)
        shown = img
        if img.ndim == 3 and img.shape[-1] == 1:
            shown = img[..., 0]
        axes[i, 0].imshow(shown, cmap="gray" if shown.ndim == 2 else None)
        axes[i, 0].set_title("input" if i == 0 else "")
        for name, ax in zip(names, axes[i, 1:]):
            overlay(ax, shown, np.asarray(explanations[name])[i], cmap=cmap, alpha=alpha)
            title = name if i == 0 else ""
            value = None
            if scores is not None:
                value = scores.get(name)
            if value is not None and np.ndim(value) == 0 and i == 0:
                title += f"\n{metric_name} {float(value):.3f}"
            ax.set_title(title, fontsize=9)
            if value is not None and np.ndim(value) == 1:
                ax.set_xlabel(f"{float(np.asarray(value)[i]):.3f}", fontsize=8)
    return finish_image_grid(fig, axes)


def plot_scores(
    scores: Mapping[str, Union[float, Sequence[float]]],
    *,
    metric_name: str = "score",
    higher_is_better: Optional[bool] = True,
    ax=None,
):
    """Horizontal bar chart of one score per method, best on top; per-sample scores (N,)
    are shown as their NaN-aware mean with the standard error as an error bar.

    Returns
    -------
    ax
        The matplotlib Axes.
    """
    import matplotlib.pyplot as plt

    arrays = {k: np.asarray(v, dtype=np.float64).ravel() for k, v in scores.items()}
    arrays = {k: a[~np.isnan(a)] for k, a in arrays.items()}
    means = {k: float(a.mean()) if a.size else np.nan for k, a in arrays.items()}
    errors = {k: _standard_error(a) for k, a in arrays.items()}
    # barh draws the first entry at the bottom: the best comes last, on top (None: as lower
    # is better)
    names = list(means)
    best_first = order_best_first([means[k] for k in names], bool(higher_is_better))
    order = [names[k] for k in best_first[::-1]]
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 0.5 * len(order) + 1))
    ax.barh(order, [means[k] for k in order], xerr=[errors[k] for k in order], color="tab:blue")
    direction = ""  # None: no direction
    if higher_is_better is not None:
        direction = f" ({direction_word(higher_is_better)} is better)"
    ax.set_xlabel(metric_name + direction)
    return ax
