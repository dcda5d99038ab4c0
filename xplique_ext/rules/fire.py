"""The FiRe score (Sabbatini & Calegari, Eq. 1-2) and the Qs score it is compared with.

Both are *losses*: lower is better. They score the knowledge (rules) a symbolic
knowledge-extraction technique extracts from a black box, from its predictive loss ``p``
(1 - accuracy, or the mean absolute error) and its readability loss ``r`` (the number of
rules). This module holds the metric classes; the formulas live in
:mod:`~xplique_ext.rules.fire_functions` and are re-exported here. It needs NumPy only; it
is exported by :mod:`xplique_ext.metrics`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..commons.metric import BaseMetric
from ..commons.params import validate_params
from .fire_functions import (
    FIRE_EXPONENT,
    ArrayLike,
    check_psi,
    fire_compensation_alpha,
    fire_equilibrium_alpha,
    fire_isoline,
    fire_score,
    qs_score,
)
from .validation import PSI

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
        self.psi = check_psi(psi)

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

    def __init__(self) -> None:
        pass

    def detailed_evaluate(
        self, predictive_loss: ArrayLike, readability_loss: ArrayLike, coverage: ArrayLike = 1.0
    ) -> np.ndarray:
        """Qs for each triple: a float ndarray (N,), broadcast of the three inputs
        (scalars or 1-D arrays)."""
        return _per_sample(
            qs_score(predictive_loss, readability_loss, coverage), "QsScore.detailed_evaluate"
        )
