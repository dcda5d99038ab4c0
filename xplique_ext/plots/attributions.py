"""Plots of explanations next to their scores."""

from __future__ import annotations

from typing import Dict, Mapping, Optional, Sequence, Union

import numpy as np

from .layout import finish_image_grid

__all__ = ["plot_scored_explanations", "plot_scores"]


def to_map(phi: np.ndarray) -> np.ndarray:
    """One (H, W) map of float64 from (H, W) or (H, W, C) (channels summed)."""
    phi = np.asarray(phi, dtype=np.float64)
    return phi.sum(axis=-1) if phi.ndim == 3 else phi


def symmetric_limit(values: np.ndarray) -> float:
    """The largest finite absolute value (1 for an all-zero or empty map): colour limits
    ``(-lim, lim)`` centre signed attributions on 0."""
    values = np.asarray(values, dtype=np.float64)
    finite = np.abs(values[np.isfinite(values)])
    lim = float(finite.max()) if finite.size else 0.0
    return lim if lim > 0 else 1.0


def add_colorbar(ax, mappable, *, label: Optional[str] = None):
    """A slim colour bar next to ``ax`` with ticks at -lim, 0 and lim."""
    bar = ax.figure.colorbar(mappable, ax=ax, fraction=0.046, pad=0.03)
    low, high = mappable.norm.vmin, mappable.norm.vmax
    ticks = [low, 0.0, high] if low < 0 < high else [low, high]
    bar.set_ticks(ticks, labels=[f"{t:.2g}" for t in ticks])
    bar.ax.tick_params(labelsize=6)
    if label:
        bar.set_label(label, fontsize=7)
    return bar


def plot_scored_explanations(images: np.ndarray, explanations: Mapping[str, np.ndarray],
                             scores: Optional[Mapping[str, Union[float, Sequence[float]]]] = None,
                             *, n_images: int = 4, metric_name: str = "score",
                             cmap: str = "bwr", alpha: float = 0.6):
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
    fig, axes = plt.subplots(n, len(names) + 1, figsize=(2.6 * (len(names) + 1), 2.2 * n),
                             squeeze=False)
    for i in range(n):
        img = images[i].astype(np.float64)
        img = (img - img.min()) / (np.ptp(img) or 1.0)
        shown = img[..., 0] if img.ndim == 3 and img.shape[-1] == 1 else img
        axes[i, 0].imshow(shown, cmap="gray" if shown.ndim == 2 else None)
        axes[i, 0].set_title("input" if i == 0 else "")
        for j, name in enumerate(names, start=1):
            ax = axes[i, j]
            ax.imshow(shown, cmap="gray" if shown.ndim == 2 else None)
            phi = to_map(np.asarray(explanations[name])[i])
            lim = symmetric_limit(phi)
            shown_map = ax.imshow(phi, cmap=cmap, vmin=-lim, vmax=lim, alpha=alpha)
            add_colorbar(ax, shown_map)
            title = name if i == 0 else ""
            value = None if scores is None else scores.get(name)
            if value is not None and np.ndim(value) == 0 and i == 0:
                title += f"\n{metric_name} {float(value):.3f}"
            ax.set_title(title, fontsize=9)
            if value is not None and np.ndim(value) == 1:
                ax.set_xlabel(f"{float(np.asarray(value)[i]):.3f}", fontsize=8)
    return finish_image_grid(fig, axes)


def plot_scores(scores: Mapping[str, Union[float, Sequence[float]]], *,
                metric_name: str = "score", higher_is_better: Optional[bool] = True, ax=None):
    """Horizontal bar chart of one score per method, best on top; per-sample scores (N,)
    are shown as their NaN-aware mean with the standard error as an error bar.

    Returns
    -------
    ax
        The matplotlib Axes.
    """
    import matplotlib.pyplot as plt

    means: Dict[str, float] = {}
    errors: Dict[str, float] = {}
    for name, value in scores.items():
        arr = np.asarray(value, dtype=np.float64).ravel()
        arr = arr[~np.isnan(arr)]
        means[name] = float(arr.mean()) if arr.size else np.nan
        errors[name] = float(arr.std(ddof=1) / np.sqrt(arr.size)) if arr.size > 1 else 0.0
    # barh draws the first entry at the bottom: the best comes last, on top
    order = sorted(means, key=lambda k: means[k], reverse=not higher_is_better)
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 0.5 * len(order) + 1))
    ax.barh(order, [means[k] for k in order], xerr=[errors[k] for k in order], color="tab:blue")
    direction = "" if higher_is_better is None else (
        " (higher is better)" if higher_is_better else " (lower is better)")
    ax.set_xlabel(metric_name + direction)
    return ax
