"""Plots for FiRe (isolines, Fig. 3 and 5; alpha-beta equilibrium, Fig. 4) and for rule
measures. matplotlib is imported when a function is called."""

from __future__ import annotations

import numbers
from typing import Mapping, Optional, Sequence, Tuple, Union

import numpy as np
import pandas as pd

from ..commons.params import ArrayLike, Boolean, InstanceOf, Interval, check_param, validate_params
from .fire import fire_equilibrium_alpha, fire_isoline, fire_score
from .validation import POINT, PSI

__all__ = ["plot_fire_isolines", "plot_alpha_beta", "plot_rule_measures"]

Extractors = Union[Mapping[str, Tuple[float, float]], Sequence[Tuple[float, float]]]


def _axes(ax):
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(6, 4))
    return ax


_POSITIVE = ArrayLike(
    "real", ndim=1, dtype=np.float64, within=Interval(numbers.Real, 0, None, closed="neither")
)
_AT_LEAST_ONE = Interval(numbers.Real, 1, None)


@validate_params(
    {  # extractors, a mapping or a list of pairs: each pair checked below
        "reference": [POINT],
        "psi": [PSI, _POSITIVE],
        "extractors": "no_validation",
        "r_max": [_AT_LEAST_ONE, None],
        "ax": "no_validation",
        "hatch": [Boolean()],
    }
)
def plot_fire_isolines(
    reference: Tuple[float, float],
    psi: Union[float, Sequence[float]] = 1.0,
    extractors: Optional[Extractors] = None,
    *,
    r_max: Optional[float] = None,
    ax=None,
    hatch: bool = True,
):
    """Isolines of psi-FiRe through a reference extractor (Fig. 3 and 5 of the FiRe paper).

    Parameters
    ----------
    reference
        ``(p, r)``: predictive and readability losses of the extractor the isolines go
        through.
    psi
        One value or several (one isoline each).
    extractors
        Other extractors to place on the plot: ``{label: (p, r)}`` or a list of ``(p, r)``.
        Those under an isoline are better than the reference for that psi.
    r_max
        Right end of the readability axis (default: a little past the largest ``r``).
    ax
        A matplotlib Axes (default: a new figure).
    hatch
        Hatch the region of better extractors under each isoline.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> ax = plot_fire_isolines((40.0, 1), 1.0, {"B": (9.3, 4)})
    >>> ax.get_xlabel()
    'readability loss r (rules)'
    """
    p0, r0 = reference
    if extractors is None:
        items = enumerate(())
    elif isinstance(extractors, Mapping):
        items = extractors.items()
    else:
        items = enumerate(extractors)
    points = {
        label: check_param(
            tuple(point) if isinstance(point, np.ndarray) else point,
            f"extractors[{label}]",
            [POINT],
        )
        for label, point in items
    }
    ax = _axes(ax)
    r_top = r_max if r_max is not None else 1.25 * max([r0, 2.0] + [r for _, r in points.values()])
    grid = np.linspace(1.0, r_top, 2000)
    for k, value in enumerate(np.atleast_1d(psi).tolist()):
        curve = fire_isoline(value, p0, r0, grid)
        label = f"{value:g}-FiRe = {fire_score(value, p0, r0):.3g}"
        (line,) = ax.step(grid, curve, where="post", label=label)
        if hatch:
            ax.fill_between(
                grid,
                0,
                curve,
                step="post",
                alpha=0.12,
                color=line.get_color(),
                hatch="//" if k % 2 == 0 else "\\\\",
                linewidth=0,
            )
    ax.scatter([r0], [p0], marker="x", color="black", zorder=3)
    ax.annotate("reference", (r0, p0), textcoords="offset points", xytext=(4, 4))
    for label, (p, r) in points.items():
        ax.scatter([r], [p], marker="o", zorder=3)
        if isinstance(extractors, Mapping):
            ax.annotate(label, (r, p), textcoords="offset points", xytext=(4, 4))
    ax.set(
        xlabel="readability loss r (rules)",
        ylabel="predictive loss p",
        xlim=(1, r_top),
        ylim=(0, 1.6 * max([p0] + [p for p, _ in points.values()])),
    )
    ax.legend(loc="upper right")
    return ax


@validate_params(
    {
        "readability_losses": [ArrayLike("real", ndim=1, dtype=np.float64, within=_AT_LEAST_ONE)],
        "psis": [_POSITIVE],
        "betas": [_POSITIVE, None],
        "log": [Boolean()],
        "ax": "no_validation",
    }
)
def plot_alpha_beta(
    readability_losses: Sequence[float] = (1, 4, 16),
    psis: Sequence[float] = (1, 4),
    betas: Optional[Sequence[float]] = None,
    *,
    log: bool = True,
    ax=None,
):
    """Equilibrium curves alpha(beta) of Eq. 10 (Fig. 4 of the FiRe paper): the factor on the
    predictive loss that balances a factor ``beta`` on the readability loss, for each
    readability loss ``r`` and trade-off ``psi`` (log-log axes unless ``log=False``).

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> len(plot_alpha_beta((2, 8), (1,)).get_lines())
    3
    """
    ax = _axes(ax)
    for r in readability_losses:
        grid = betas if betas is not None else np.linspace(max(1.0 / r, 0.05), 4.0, 800)
        grid = grid[grid * r >= 1.0]
        for psi in psis:
            ax.plot(grid, fire_equilibrium_alpha(grid, r, psi), label=f"r = {r:g}, psi = {psi:g}")
    ax.axhline(1.0, color="gray", linewidth=0.8)
    if log:
        ax.set(xscale="log", yscale="log")
    ax.set_xlabel("beta (factor on the readability loss)")
    ax.set_ylabel("alpha (factor on the predictive loss)")
    ax.legend(fontsize="small")
    return ax


@validate_params(
    {
        "frame": [InstanceOf(pd.DataFrame, description="a DataFrame (RuleEvaluation.to_frame)")],
        "measures": [InstanceOf(list, tuple, description="a list or tuple of measure names")],
        "ax": "no_validation",
    }
)
def plot_rule_measures(
    frame, measures: Sequence[str] = ("Acc", "Sens", "Spec", "Cov", "WRAcc"), *, ax=None
):
    """Grouped bars of some measures per rule, from
    :meth:`~xplique_ext.rules.RuleEvaluation.to_frame`.

    Returns
    -------
    matplotlib.axes.Axes
    """
    missing = [m for m in measures if m not in frame.columns]
    if missing:
        raise ValueError(f"`measures` not in the table: {missing}")
    ax = frame.set_index("rule")[list(measures)].astype(float).plot.bar(ax=_axes(ax), rot=0)
    ax.axhline(0.0, color="gray", linewidth=0.8)
    ax.legend(fontsize="small")
    return ax
