"""The FiRe score (Sabbatini & Calegari, Eq. 1-2) and the Qs score it is compared with.

Both are *losses*: lower is better. They score the knowledge (rules) a symbolic
knowledge-extraction technique extracts from a black box, from its predictive loss ``p``
(1 - accuracy, or the mean absolute error) and its readability loss ``r`` (the number of
rules). This module holds the formulas, vectorised (:func:`fire_score`, :func:`qs_score`,
Eq. 10 and 12, the isolines) and the metric classes built on them. It needs NumPy only;
its public home is :mod:`xplique_ext.metrics`, and the rule metrics
(:mod:`~xplique_ext.rules.scoring`, :mod:`~xplique_ext.rules.plots`) use it.

Every function validates its inputs: a boolean, a string or a complex number where a
number is expected is a :class:`TypeError`, a value outside the domain of Eq. 1 or arrays
that do not broadcast together a :class:`ValueError`, each naming the parameter. A result
that overflows float64 (losses near 1e308, or ``r / psi`` beyond it) is NaN with an
:class:`~xplique_ext.commons.warnings.UndefinedScoreWarning`, never ``inf`` or ``0 * inf``.
"""

from __future__ import annotations

import numbers
from typing import Any, Optional, Union

import numpy as np

from ..commons.metric import BaseMetric
from ..commons.pandas_inputs import paired_by_index
from ..commons.params import ArrayLike as ArrayConstraint
from ..commons.params import Interval, check_param, validate_params
from ..commons.warnings import UndefinedScoreWarning, warn
from .validation import PSI, broadcast_shape

__all__ = [
    "FiRe",
    "QsScore",
    "fire_score",
    "qs_score",
    "fire_equilibrium_alpha",
    "fire_compensation_alpha",
    "fire_isoline",
    "FIRE_EXPONENT",
]

#: The exponent of the readability term of Eq. 2.
FIRE_EXPONENT = 0.05

ArrayLike = Union[float, np.ndarray, Any]


def _domain(low: float, bounds: Optional[str], high=None, closed: str = "both") -> list:
    """Real numbers or arrays of them (as float64) in ``[low, high]``, ``bounds`` wording
    the range in messages (Eq. 1's domain)."""
    interval = Interval(numbers.Real, low, high, closed)
    interval.bounds = bounds or interval.bounds
    return [ArrayConstraint("real", dtype=np.float64, within=interval)]


#: Eq. 1's domain: p >= 0, r >= 1 (and beta > 0, coverage in [0, 1]).
_LOSSES = {
    "predictive_loss": _domain(0, ">= 0 (Eq. 1)"),
    "readability_loss": _domain(1, ">= 1 (Eq. 1)"),
}


def _finite_or_nan(values: np.ndarray, what: str, *inputs: np.ndarray) -> Union[float, np.ndarray]:
    """NaN, with one warning, where a finite-domain formula overflowed float64; a float
    when every input is a scalar."""
    bad = ~np.isfinite(values)
    if np.any(bad):
        warn(
            f"{what} overflows float64 ({int(np.count_nonzero(bad))} of {values.size} values): "
            "the inputs are too large to be scored and the scores are set to NaN",
            UndefinedScoreWarning,
        )
        values = np.where(bad, np.nan, values)
    return float(values) if all(np.ndim(x) == 0 for x in inputs) else values


def _ceil(quotient: np.ndarray) -> np.ndarray:
    """``ceil(r / psi)`` of Eq. 2 on the float quotient, which is first rounded to the
    nearest whole number when within a relative 1e-12 of it: ``2.1 / 0.7`` is
    ``3.0000000000000004`` in floats, whose ceiling would be 4 where the exact one is 3."""
    whole = np.round(quotient)
    return np.ceil(np.where(np.abs(quotient - whole) <= 1e-12 * np.abs(whole), whole, quotient))


@paired_by_index("predictive_loss", "readability_loss")
@validate_params({"psi": [PSI], **_LOSSES})
def fire_score(
    psi: float, predictive_loss: ArrayLike, readability_loss: ArrayLike
) -> Union[float, np.ndarray]:
    """FiRe(psi, p, r) = p * ceil(r / psi) * r ** 0.05 (Eq. 2), vectorised.

    Parameters
    ----------
    psi
        Fidelity/readability trade-off, > 0.
    predictive_loss
        ``p`` >= 0 (scalar or array).
    readability_loss
        ``r`` >= 1 (scalar or array, broadcast with ``p``). pandas Series pair by their
        index: Series indexed differently are refused with a ValueError.

    Returns
    -------
    float or np.ndarray
        A float for scalar inputs, else the broadcast array; >= 0, or NaN (with an
        :class:`~xplique_ext.commons.warnings.UndefinedScoreWarning`) where the score
        overflows float64.

    Notes
    -----
    ``r / psi`` within a relative 1e-12 of a whole number is taken as that number before
    the ceiling (float division gives ``2.1 / 0.7 = 3.0000000000000004``, whose exact
    quotient 3 is whole): ``fire_score(0.7, 1.0, 2.1)`` is ``3 * 2.1 ** 0.05``.

    Examples
    --------
    >>> round(fire_score(1.0, 5.0, 4), 1), round(fire_score(1.0, 12.0, 6), 1)
    (21.4, 78.7)
    """
    p, r = predictive_loss, readability_loss
    broadcast_shape(predictive_loss=p, readability_loss=r)
    with np.errstate(over="ignore", invalid="ignore"):
        values = p * _ceil(r / psi) * r**FIRE_EXPONENT
    # p = 0 gives 0 whatever r, unless r / psi itself overflowed (0 * inf)
    return _finite_or_nan(values, "FiRe", p, r)


@paired_by_index("predictive_loss", "readability_loss", "coverage")
@validate_params({**_LOSSES, "coverage": _domain(0, None, 1)})
def qs_score(
    predictive_loss: ArrayLike, readability_loss: ArrayLike, coverage: ArrayLike
) -> Union[float, np.ndarray]:
    """Qs = p * (2 - coverage) * r (Sabbatini & Calegari 2023, as in Table 1), vectorised.

    Parameters
    ----------
    predictive_loss
        ``p`` >= 0 (scalar or array).
    readability_loss
        ``r`` >= 1 (scalar or array).
    coverage
        In [0, 1] (scalar or array); the three broadcast together (pandas Series pair by
        their index: Series indexed differently are refused with a ValueError).

    Returns
    -------
    float or np.ndarray
        >= 0, or NaN with an :class:`~xplique_ext.commons.warnings.UndefinedScoreWarning`
        where it overflows float64.

    Examples
    --------
    >>> round(qs_score(0.02, 6, 0.43), 2)
    0.19
    """
    p, r, c = predictive_loss, readability_loss, coverage
    broadcast_shape(predictive_loss=p, readability_loss=r, coverage=c)
    with np.errstate(over="ignore", invalid="ignore"):
        values = p * (2.0 - c) * r
    return _finite_or_nan(values, "Qs", p, r, c)


_BETA = {
    "beta": _domain(0, "> 0 (Eq. 1)", closed="neither"),
    "readability_loss": _LOSSES["readability_loss"],
    "psi": [PSI],
}


@paired_by_index("beta", "readability_loss")
@validate_params(_BETA)
def fire_equilibrium_alpha(
    beta: ArrayLike, readability_loss: ArrayLike, psi: float = 1.0
) -> Union[float, np.ndarray]:
    """Eq. 10: the factor ``alpha`` on ``p`` that compensates a factor ``beta`` on ``r``.

    ``psi-FiRe(p, r) = psi-FiRe(alpha p, beta r)`` for every ``p`` when

    .. math:: \\alpha = \\frac{\\lceil r/\\psi \\rceil}{\\lceil \\beta r/\\psi \\rceil \\beta^{0.05}}

    ``beta > 1`` (more rules) gives ``alpha < 1``, and conversely. ``beta * r`` must stay
    in FiRe's domain (>= 1).

    Examples
    --------
    >>> round(fire_equilibrium_alpha(2.0, 4, psi=2.0), 3)   # 4 -> 8 rules at psi = 2
    0.483
    """
    b, r = beta, readability_loss
    broadcast_shape(beta=b, readability_loss=r)
    with np.errstate(over="ignore", invalid="ignore"):
        scaled = check_param(b * r, "beta * readability_loss", _LOSSES["readability_loss"])
        numerator = _ceil(r / psi)
        denominator = _ceil(scaled / psi) * b**FIRE_EXPONENT
        alpha = np.where(
            np.isfinite(numerator) & np.isfinite(denominator), numerator / denominator, np.inf
        )
    return _finite_or_nan(alpha, "the equilibrium alpha (Eq. 10)", b, r)


@paired_by_index("beta", "readability_loss")
@validate_params(_BETA)
def fire_compensation_alpha(
    beta: ArrayLike, readability_loss: ArrayLike, psi: float = 1.0
) -> Union[float, np.ndarray]:
    """Eq. 12: the factor ``alpha`` on ``p`` with the same effect as ``beta`` on ``r``.

    ``psi-FiRe(alpha p, r) = psi-FiRe(p, beta r)`` when

    .. math:: \\alpha = \\frac{\\lceil \\beta r/\\psi \\rceil \\beta^{0.05}}{\\lceil r/\\psi \\rceil}

    (the reciprocal of Eq. 10): ``alpha`` and ``beta`` are both < 1, = 1 or > 1.

    Examples
    --------
    >>> round(fire_compensation_alpha(2.0, 4, psi=2.0), 3)
    2.071
    """
    return 1.0 / fire_equilibrium_alpha(beta, readability_loss, psi)


@validate_params({"psi": [PSI], **_LOSSES, "readability_grid": _LOSSES["readability_loss"]})
def fire_isoline(
    psi: float, predictive_loss: float, readability_loss: float, readability_grid: ArrayLike
) -> np.ndarray:
    """The isoline of psi-FiRe through ``(p, r)``: for each ``r'`` of ``readability_grid``,
    the predictive loss ``p'`` with ``psi-FiRe(p', r') = psi-FiRe(p, r)``.

    Examples
    --------
    >>> fire_isoline(1.0, 40.0, 1, [2, 4, 6, 8]).round(1)   # Fig. 3
    array([19.3,  9.3,  6.1,  4.5])
    """
    level = fire_score(psi, predictive_loss, readability_loss)
    if np.ndim(level):  # arrays of (p, r) have no single isoline
        raise TypeError(
            "`predictive_loss` and `readability_loss` must be numbers (one point), "
            f"got arrays of shape {np.shape(level)}"
        )
    if np.isnan(level):  # the overflow of the level was reported
        return np.full(readability_grid.shape, np.nan)
    with np.errstate(over="ignore", invalid="ignore"):
        denominator = _ceil(readability_grid / psi) * readability_grid**FIRE_EXPONENT
        values = np.where(np.isfinite(denominator), level / denominator, np.inf)
    return np.asarray(_finite_or_nan(values, "the isoline", readability_grid), dtype=np.float64)


def _per_sample(values: Any, what: str) -> np.ndarray:
    """Scores as a float ndarray (N,): a scalar gives (1,), a grid is refused."""
    values = np.asarray(values, dtype=np.float64)
    if values.ndim > 1:
        raise ValueError(
            f"`{what}` scores one sample per value: its inputs must be scalars or 1-D "
            f"arrays, which broadcast here to shape {values.shape}; use the functions "
            "fire_score / qs_score for grids"
        )
    return values.reshape(-1)


class FiRe(BaseMetric):
    """The psi-FiRe score of extracted knowledge (lower is better).

    Parameters
    ----------
    psi
        The fidelity/readability trade-off (> 0). ``psi = n`` counts the rules by steps of
        ``n``: larger values neglect the readability loss more.

    Notes
    -----
    .. math:: \\mathrm{FiRe}(\\psi, p, r) = p \\left\\lceil \\frac{r}{\\psi} \\right\\rceil r^{0.05}

    on :math:`\\psi > 0, p \\ge 0, r \\ge 1` (Eq. 1-2), where :math:`p` is the predictive
    loss (1 - accuracy for classification, the mean absolute error for regression,
    against the black box's predictions for fidelity or the true outputs) and :math:`r`
    the readability loss (the number of rules). It is strictly increasing in :math:`r`
    for :math:`p > 0` and in :math:`p` (Eq. 3-5), and 0 when :math:`p = 0`.

    :meth:`detailed_evaluate` scores each ``(p, r)`` pair (one per extractor, say) and
    :meth:`evaluate` returns their mean, a float (for one pair, its score). For a grid
    of scores use :func:`fire_score`.

    References
    ----------
    F. Sabbatini and R. Calegari, *Symbolic Knowledge-Extraction Evaluation Metrics: The
    FiRe Score*, ECAI 2023.

    Examples
    --------
    >>> round(FiRe(psi=1.0).evaluate(5.0, 4), 1)   # section 4.1
    21.4
    >>> FiRe(psi=2.0).detailed_evaluate([1.0, 1.5], [4, 1]).round(2)   # section 4.3
    array([2.14, 1.5 ])
    >>> FiRe(psi=2.0)
    FiRe(psi=2.0)
    """

    higher_is_better = False

    @validate_params({"psi": [PSI]})
    def __init__(self, psi: float = 1.0) -> None:
        self.psi = psi

    def detailed_evaluate(
        self, predictive_loss: ArrayLike, readability_loss: ArrayLike
    ) -> np.ndarray:
        """Eq. 2 for each pair: a float ndarray (N,), broadcast of ``predictive_loss``
        and ``readability_loss`` (scalars or 1-D arrays; scalars alone give (1,)).

        Raises
        ------
        TypeError
            If a loss is a boolean, a string or not a number.
        ValueError
            If a value lies outside the domain of Eq. 1 (``p < 0``, ``r < 1``, NaN, inf),
            if the arrays do not broadcast together, or if they broadcast to more than one
            dimension.

        Warns
        -----
        UndefinedScoreWarning
            Where the score overflows float64; it is NaN there.
        """
        return _per_sample(
            fire_score(self.psi, predictive_loss, readability_loss), "FiRe.detailed_evaluate"
        )

    def details(self, predictive_loss: ArrayLike, readability_loss: ArrayLike):
        """Table of the scored pairs: ``predictive_loss``, ``readability_loss``, ``psi``
        and ``score`` (one row per pair)."""
        import pandas as pd

        score = self.detailed_evaluate(predictive_loss, readability_loss)
        p, r = np.broadcast_arrays(
            np.asarray(predictive_loss, dtype=np.float64).reshape(-1),
            np.asarray(readability_loss, dtype=np.float64).reshape(-1),
        )
        return pd.DataFrame(
            {"predictive_loss": p, "readability_loss": r, "psi": self.psi, "score": score}
        )


class QsScore(BaseMetric):
    """The quality score Qs = p (2 - coverage) r the FiRe paper compares with (lower is
    better).

    Notes
    -----
    .. math:: Q_s = p \\times (2 - \\mathrm{coverage}) \\times r

    with :math:`p` the predictive loss, :math:`2 - \\mathrm{coverage}` the coverage loss
    (coverage in [0, 1]) and :math:`r` the number of rules, as in Table 1 of the FiRe
    paper. :meth:`detailed_evaluate` scores each triple, :meth:`evaluate` returns their
    mean (a float).

    References
    ----------
    F. Sabbatini and R. Calegari, *On the evaluation of the symbolic knowledge extracted
    from black boxes*, AAAI Spring Symposium 2023; Table 1 of the FiRe paper.

    Examples
    --------
    >>> round(QsScore().evaluate(0.04, 3, 0.95), 2)   # GridEx (3 rules), Table 1
    0.13
    >>> QsScore().detailed_evaluate([0.04, 0.02], [3, 6], [0.95, 0.43]).round(2)
    array([0.13, 0.19])
    """

    higher_is_better = False

    def detailed_evaluate(
        self, predictive_loss: ArrayLike, readability_loss: ArrayLike, coverage: ArrayLike = 1.0
    ) -> np.ndarray:
        """Qs for each triple: a float ndarray (N,), broadcast of the three inputs
        (scalars or 1-D arrays)."""
        return _per_sample(
            qs_score(predictive_loss, readability_loss, coverage), "QsScore.detailed_evaluate"
        )
