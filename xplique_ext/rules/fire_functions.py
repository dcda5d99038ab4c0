"""The FiRe and Qs formulas (Sabbatini & Calegari) as vectorised NumPy functions, and the
check of FiRe's trade-off ``psi``.

This module is the lowest floor of the FiRe family: :mod:`~xplique_ext.rules.fire` (the
metric classes), :mod:`~xplique_ext.rules.scoring` (rule sets) and
:mod:`~xplique_ext.rules.plots` build on it. It needs NumPy only.

Every function validates its inputs: a boolean, a string or a complex number where a
number is expected is a :class:`TypeError`, a value outside the domain of Eq. 1 or arrays
that do not broadcast together a :class:`ValueError`, each naming the parameter. A result
that overflows float64 (losses near 1e308, or ``r / psi`` beyond it) is NaN with an
:class:`~xplique_ext.commons.warnings.UndefinedScoreWarning`, never ``inf`` or ``0 * inf``.
"""

from __future__ import annotations

from typing import Any, Union

import numpy as np

from ..commons.params import check_param, validate_params
from ..commons.warnings import UndefinedScoreWarning, warn
from .validation import PSI, REAL_ARRAY, as_real_array, broadcast_shape

__all__ = [
    "FIRE_EXPONENT",
    "check_psi",
    "fire_score",
    "qs_score",
    "fire_equilibrium_alpha",
    "fire_compensation_alpha",
    "fire_isoline",
]

#: The exponent of the readability term of Eq. 2.
FIRE_EXPONENT = 0.05

ArrayLike = Union[float, np.ndarray, Any]


def check_psi(psi: Any, name: str = "psi") -> float:
    """FiRe's trade-off as a float: a finite real number > 0 (Eq. 1).

    Raises
    ------
    TypeError
        For a boolean, a string or anything that is not a real number.
    ValueError
        For ``psi <= 0``, NaN or infinity.

    Examples
    --------
    >>> check_psi(2)
    2.0
    """
    return check_param(psi, name, [PSI])


def _check_domain(array: np.ndarray, name: str, low: float, what: str) -> None:
    bad = ~np.isfinite(array) | (array < low)
    if np.any(bad):
        first = array[bad].ravel()[0] if array.ndim else float(array)
        count = int(np.count_nonzero(bad))
        detail = f" ({count} of {array.size} values)" if array.ndim else ""
        raise ValueError(f"`{name}` must be {what} (Eq. 1), got {first}{detail}")


def _losses(predictive_loss: Any, readability_loss: Any):
    p = as_real_array(predictive_loss, "predictive_loss")
    r = as_real_array(readability_loss, "readability_loss")
    broadcast_shape(predictive_loss=p, readability_loss=r)
    _check_domain(p, "predictive_loss", 0.0, "a finite number >= 0")
    _check_domain(r, "readability_loss", 1.0, "a finite number >= 1")
    return p, r


def _overflow_to_nan(values: np.ndarray, what: str) -> np.ndarray:
    """NaN, with one warning, where a finite-domain formula overflowed float64."""
    bad = ~np.isfinite(values)
    if np.any(bad):
        count = int(np.count_nonzero(bad))
        warn(
            f"{what} overflows float64 ({count} of {values.size} values): the inputs are "
            "too large to be scored and the scores are set to NaN",
            UndefinedScoreWarning,
        )
        values = np.where(bad, np.nan, values)
    return values


def _result(values: np.ndarray, *inputs: Any) -> Union[float, np.ndarray]:
    if all(np.ndim(x) == 0 for x in inputs):
        return float(values)
    return values


@validate_params({"psi": [PSI], "predictive_loss": [REAL_ARRAY], "readability_loss": [REAL_ARRAY]})
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
        ``r`` >= 1 (scalar or array, broadcast with ``p``).

    Returns
    -------
    float or np.ndarray
        A float for scalar inputs, else the broadcast array; >= 0, or NaN (with an
        :class:`~xplique_ext.commons.warnings.UndefinedScoreWarning`) where the score
        overflows float64.

    Examples
    --------
    >>> round(fire_score(1.0, 5.0, 4), 1), round(fire_score(1.0, 12.0, 6), 1)
    (21.4, 78.7)
    """
    psi = check_psi(psi)
    p, r = _losses(predictive_loss, readability_loss)
    with np.errstate(over="ignore", invalid="ignore"):
        steps = np.ceil(r / psi)
        values = p * steps * r**FIRE_EXPONENT
    # p = 0 gives 0 whatever r, unless r / psi itself overflowed (0 * inf)
    values = _overflow_to_nan(values, "FiRe")
    return _result(values, predictive_loss, readability_loss)


@validate_params(
    {"predictive_loss": [REAL_ARRAY], "readability_loss": [REAL_ARRAY], "coverage": [REAL_ARRAY]}
)
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
        In [0, 1] (scalar or array); the three broadcast together.

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
    p = as_real_array(predictive_loss, "predictive_loss")
    r = as_real_array(readability_loss, "readability_loss")
    c = as_real_array(coverage, "coverage")
    broadcast_shape(predictive_loss=p, readability_loss=r, coverage=c)
    _check_domain(p, "predictive_loss", 0.0, "a finite number >= 0")
    _check_domain(r, "readability_loss", 1.0, "a finite number >= 1")
    bad = ~np.isfinite(c) | (c < 0) | (c > 1)
    if np.any(bad):
        first = c[bad].ravel()[0] if c.ndim else float(c)
        raise ValueError(f"`coverage` must be in [0, 1], got {first}")
    with np.errstate(over="ignore", invalid="ignore"):
        values = p * (2.0 - c) * r
    values = _overflow_to_nan(values, "Qs")
    return _result(values, predictive_loss, readability_loss, coverage)


@validate_params({"beta": [REAL_ARRAY], "readability_loss": [REAL_ARRAY], "psi": [PSI]})
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
    psi = check_psi(psi)
    b = as_real_array(beta, "beta")
    r = as_real_array(readability_loss, "readability_loss")
    broadcast_shape(beta=b, readability_loss=r)
    _check_domain(r, "readability_loss", 1.0, "a finite number >= 1")
    _check_domain(b, "beta", np.nextafter(0.0, 1.0), "a finite number > 0")
    with np.errstate(over="ignore", invalid="ignore"):
        scaled = b * r
    _check_domain(scaled, "beta * readability_loss", 1.0, "a finite number >= 1")
    with np.errstate(over="ignore", invalid="ignore"):
        numerator = np.ceil(r / psi)
        denominator = np.ceil(scaled / psi) * b**FIRE_EXPONENT
        alpha = numerator / denominator
    alpha = np.where(np.isfinite(numerator) & np.isfinite(denominator), alpha, np.inf)
    alpha = _overflow_to_nan(alpha, "the equilibrium alpha (Eq. 10)")
    return _result(alpha, beta, readability_loss)


@validate_params({"beta": [REAL_ARRAY], "readability_loss": [REAL_ARRAY], "psi": [PSI]})
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
    return _result(
        1.0 / np.asarray(fire_equilibrium_alpha(beta, readability_loss, psi)),
        beta,
        readability_loss,
    )


@validate_params(
    {
        "psi": [PSI],
        "predictive_loss": [REAL_ARRAY],
        "readability_loss": [REAL_ARRAY],
        "readability_grid": [REAL_ARRAY],
    }
)
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
    grid = as_real_array(readability_grid, "readability_grid")
    _check_domain(grid, "readability_grid", 1.0, "a finite number >= 1")
    if np.ndim(level) or np.isnan(level):  # arrays of (p, r) have no single isoline
        if np.ndim(level):
            raise TypeError(
                "`predictive_loss` and `readability_loss` must be numbers (one point), got "
                f"arrays of shape {np.shape(level)}"
            )
        return np.full(grid.shape, np.nan)  # the overflow of the level was reported
    with np.errstate(over="ignore", invalid="ignore"):
        denominator = np.ceil(grid / check_psi(psi)) * grid**FIRE_EXPONENT
        values = np.where(np.isfinite(denominator), level / denominator, np.inf)
    return np.asarray(_overflow_to_nan(values, "the isoline"), dtype=np.float64)
