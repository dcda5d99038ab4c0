"""The FiRe score (Sabbatini & Calegari, Eq. 1-2) and the Qs score it is compared with.

Both are *losses*: lower is better. They score the knowledge (rules) a symbolic
knowledge-extraction technique extracts from a black box, from its predictive loss ``p``
(1 - accuracy, or the mean absolute error) and its readability loss ``r`` (the number of
rules). This module needs NumPy only; it is re-exported by :mod:`xplique_ext.metrics`.
"""

from __future__ import annotations

import numbers
from typing import Any, Union

import numpy as np

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


def _check_psi(psi: Any) -> float:
    if isinstance(psi, (bool, np.bool_)) or not isinstance(psi, numbers.Real):
        raise TypeError(f"`psi` must be a real number > 0, got {psi!r} ({type(psi).__name__})")
    psi = float(psi)
    if not np.isfinite(psi) or psi <= 0:
        raise ValueError(f"`psi` must be a finite real number > 0 (Eq. 1), got {psi}")
    return psi


def _as_array(value: Any, name: str) -> np.ndarray:
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(
            f"`{name}` must be a number or an array of numbers, got {value!r}"
        ) from None
    return array


def _check_domain(array: np.ndarray, name: str, low: float, what: str) -> None:
    bad = ~np.isfinite(array) | (array < low)
    if np.any(bad):
        first = array[bad].ravel()[0] if array.ndim else float(array)
        count = int(np.count_nonzero(bad))
        detail = f" ({count} of {array.size} values)" if array.ndim else ""
        raise ValueError(f"`{name}` must be {what} (Eq. 1), got {first}{detail}")


def _result(values: np.ndarray, *inputs: Any) -> Union[float, np.ndarray]:
    if all(np.ndim(x) == 0 for x in inputs):
        return float(values)
    return values


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
        A float for scalar inputs, else the broadcast array.

    Examples
    --------
    >>> round(fire_score(1.0, 5.0, 4), 1), round(fire_score(1.0, 12.0, 6), 1)
    (21.4, 78.7)
    """
    psi = _check_psi(psi)
    p = _as_array(predictive_loss, "predictive_loss")
    r = _as_array(readability_loss, "readability_loss")
    _check_domain(p, "predictive_loss", 0.0, "a finite number >= 0")
    _check_domain(r, "readability_loss", 1.0, "a finite number >= 1")
    values = p * np.ceil(r / psi) * r**FIRE_EXPONENT
    return _result(values, predictive_loss, readability_loss)


def qs_score(
    predictive_loss: ArrayLike, readability_loss: ArrayLike, coverage: ArrayLike
) -> Union[float, np.ndarray]:
    """Qs = p * (2 - coverage) * r (Sabbatini & Calegari 2023, as in Table 1), vectorised.

    Examples
    --------
    >>> round(qs_score(0.02, 6, 0.43), 2)
    0.19
    """
    p = _as_array(predictive_loss, "predictive_loss")
    r = _as_array(readability_loss, "readability_loss")
    c = _as_array(coverage, "coverage")
    _check_domain(p, "predictive_loss", 0.0, "a finite number >= 0")
    _check_domain(r, "readability_loss", 1.0, "a finite number >= 1")
    bad = ~np.isfinite(c) | (c < 0) | (c > 1)
    if np.any(bad):
        first = c[bad].ravel()[0] if c.ndim else float(c)
        raise ValueError(f"`coverage` must be in [0, 1], got {first}")
    values = p * (2.0 - c) * r
    return _result(values, predictive_loss, readability_loss, coverage)


class FiRe:
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

    References
    ----------
    F. Sabbatini and R. Calegari, *Symbolic Knowledge-Extraction Evaluation Metrics: The
    FiRe Score*, ECAI 2023.

    Examples
    --------
    >>> round(FiRe(psi=1.0).evaluate(5.0, 4), 1)   # section 4.1
    21.4
    >>> FiRe(psi=2.0).evaluate([1.0, 1.5], [4, 1]).round(2)   # section 4.3
    array([2.14, 1.5 ])
    """

    higher_is_better = False

    def __init__(self, psi: float = 1.0) -> None:
        self.psi = _check_psi(psi)

    def __repr__(self) -> str:
        return f"FiRe(psi={self.psi:g})"

    def detailed_evaluate(
        self, predictive_loss: ArrayLike, readability_loss: ArrayLike
    ) -> np.ndarray:
        """Scores as an array (broadcast of ``predictive_loss`` and ``readability_loss``)."""
        return np.asarray(fire_score(self.psi, predictive_loss, readability_loss), dtype=np.float64)

    def evaluate(
        self, predictive_loss: ArrayLike, readability_loss: ArrayLike
    ) -> Union[float, np.ndarray]:
        """Eq. 2: a float for scalar losses, an array for arrays.

        Raises
        ------
        ValueError
            If a value lies outside the domain of Eq. 1 (``p < 0``, ``r < 1``, NaN, inf).
        """
        return fire_score(self.psi, predictive_loss, readability_loss)

    __call__ = evaluate

    def isoline(
        self, predictive_loss: float, readability_loss: float, readability_grid: ArrayLike
    ) -> np.ndarray:
        """Predictive losses that give the same score as ``(p, r)`` at each ``r`` of the grid
        (the isolines of Fig. 3 and 5); see :func:`fire_isoline`."""
        return fire_isoline(self.psi, predictive_loss, readability_loss, readability_grid)

    def score_rules(self, rules, data, reference=None, **kwargs):
        """Score a rule set with this psi; see :func:`xplique_ext.rules.score_rules`."""
        from .scoring import score_rules

        return score_rules(rules, data, reference, psi=self.psi, **kwargs)


class QsScore:
    """The quality score Qs = p (2 - coverage) r the FiRe paper compares with (lower is
    better).

    Notes
    -----
    .. math:: Q_s = p \\times (2 - \\mathrm{coverage}) \\times r

    with :math:`p` the predictive loss, :math:`2 - \\mathrm{coverage}` the coverage loss
    (coverage in [0, 1]) and :math:`r` the number of rules, as in Table 1 of the FiRe
    paper.

    References
    ----------
    F. Sabbatini and R. Calegari, *On the evaluation of the symbolic knowledge extracted
    from black boxes*, AAAI Spring Symposium 2023; Table 1 of the FiRe paper.

    Examples
    --------
    >>> round(QsScore().evaluate(0.04, 3, 0.95), 2)   # GridEx (3 rules), Table 1
    0.13
    """

    higher_is_better = False

    def __repr__(self) -> str:
        return "QsScore()"

    def detailed_evaluate(
        self, predictive_loss: ArrayLike, readability_loss: ArrayLike, coverage: ArrayLike
    ) -> np.ndarray:
        """Scores as an array (broadcast of the three inputs)."""
        return np.asarray(qs_score(predictive_loss, readability_loss, coverage), dtype=np.float64)

    def evaluate(
        self, predictive_loss: ArrayLike, readability_loss: ArrayLike, coverage: ArrayLike = 1.0
    ) -> Union[float, np.ndarray]:
        """Qs: a float for scalar inputs, an array for arrays."""
        return qs_score(predictive_loss, readability_loss, coverage)

    __call__ = evaluate


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
    psi = _check_psi(psi)
    b = _as_array(beta, "beta")
    r = _as_array(readability_loss, "readability_loss")
    _check_domain(r, "readability_loss", 1.0, "a finite number >= 1")
    _check_domain(b, "beta", np.nextafter(0.0, 1.0), "a finite number > 0")
    _check_domain(b * r, "beta * readability_loss", 1.0, "a finite number >= 1")
    alpha = np.ceil(r / psi) / (np.ceil(b * r / psi) * b**FIRE_EXPONENT)
    return _result(alpha, beta, readability_loss)


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
    grid = _as_array(readability_grid, "readability_grid")
    _check_domain(grid, "readability_grid", 1.0, "a finite number >= 1")
    return np.asarray(level / (np.ceil(grid / psi) * grid**FIRE_EXPONENT), dtype=np.float64)
