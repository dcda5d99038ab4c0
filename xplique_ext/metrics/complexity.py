r"""Complexity metrics: how concentrated an explanation is, read from the explanation
alone (no model, no inputs), as Xplique's ``metrics/complexity.py`` computes them.

* :class:`Complexity`: the Shannon entropy of the absolute attributions (Bhatt et al.,
  2020); lower is more concentrated.
* :class:`Sparseness`: the Gini index of the absolute attributions (Chalasani et al.,
  2020); higher is more concentrated.

Both take the absolute value, average the channels of a 4D map (B, H, W, C), flatten,
and normalise each map to sum to one, with Xplique's small constant
:math:`\epsilon = 10^{-8}`, so that their scores equal Xplique's (to about 1e-6). They
compute in float64 whatever the explanations' dtype, so that huge finite float32 maps do
not overflow. An all-zero explanation has no distribution of relevance: its score is NaN
with a warning, where Xplique returns the number its :math:`\epsilon` makes up (0 for the
entropy, :math:`-(n+1)/n` for the Gini index). So is an explanation whose total absolute
relevance is below :math:`10^5 \epsilon = 10^{-3}`: there :math:`\epsilon` moves the
normalisation by more than 1e-5 and the score would depend on the explanation's scale
(Xplique's Gini index even leaves [0, 1]); rescale such explanations (e.g. divide each by
its maximum) to score them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import runtime
from ..commons.params import check_param
from ..commons.warnings import UndefinedScoreWarning, warn
from .explainer_base import EXPLANATIONS, BaseComplexityMetric

__all__ = ["Complexity", "Sparseness"]

#: Xplique's constant, kept so that the scores equal Xplique's
_EPS = 1e-8

_ALL_ZERO = "an all-zero explanation has no distribution of relevance"

#: Below this total absolute relevance, Xplique's epsilon moves the normalisation by more
#: than 1e-5: the score would depend on the explanation's scale
_MIN_TOTAL = 1e5 * _EPS

_TOO_SMALL = (
    f"the explanation's total absolute relevance is below {_MIN_TOTAL:g}, where Xplique's "
    f"epsilon {_EPS:g} changes the score with the explanation's scale (rescale the "
    "explanations, e.g. divide each by its maximum)"
)


def _relevance(explanations: Any) -> np.ndarray:
    """The absolute attributions as (N, n) float64 rows (no overflow for huge float32
    maps): channels of a 4D map averaged (after the absolute value, as Xplique), spatial
    axes flattened."""
    phi = check_param(explanations, "explanations", EXPLANATIONS)
    relevance = np.abs(phi.astype(np.float64))
    if relevance.ndim == 4:  # (N, H, W, C)
        relevance = relevance.mean(axis=-1)
    return relevance.reshape(len(relevance), -1)


def _undefined_where(scores: np.ndarray, relevance: np.ndarray, name: str) -> np.ndarray:
    """NaN for the explanations that are all zero, or too small for Xplique's epsilon,
    with one warning per reason."""
    total = relevance.sum(axis=1)
    zero = total == 0
    too_small = (total < _MIN_TOTAL) & ~zero
    causes = {
        "are all zero, set to NaN: " + _ALL_ZERO: zero,
        "are too small, set to NaN: " + _TOO_SMALL: too_small,
    }
    for reason, mask in causes.items():
        if mask.any():
            warn(
                f"{name}: {int(mask.sum())} of {len(scores)} explanations {reason}.",
                UndefinedScoreWarning,
            )
    return np.where(zero | too_small, np.nan, scores)


class _ExplanationsOnly(BaseComplexityMetric):
    """What Complexity and Sparseness share: the scores of a dataset of batches are
    those of its batches, concatenated."""

    undefined_reason = _ALL_ZERO

    def detailed_evaluate(self, explanations: Any) -> np.ndarray:
        """One score per explanation, shape (N,); NaN, with an UndefinedScoreWarning, for
        an all-zero explanation and for one whose total absolute relevance is below
        1e-3 (where Xplique's epsilon would make the score depend on the scale).

        Parameters
        ----------
        explanations
            Attribution maps (N, F), (N, H, W) or (N, H, W, C) (channels averaged): a
            NumPy array, a tf.Tensor, or a ``tf.data.Dataset`` of such batches.

        Raises
        ------
        ValueError
            Explanations holding NaN or inf, or empty (no explanation, no feature, a
            dataset of no batch): the check every metric makes of ``explanations``.
        """
        if runtime.is_dataset(explanations):
            parts = [self.detailed_evaluate(batch) for batch in self._batches(explanations)]
            return np.concatenate(parts) if parts else np.zeros(0)
        relevance = _relevance(explanations)
        scores = self._score(relevance)
        return _undefined_where(scores, relevance, type(self).__name__)

    def _score(self, relevance: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError


class Complexity(_ExplanationsOnly):
    r"""Entropy-based complexity of attribution maps (Bhatt et al., 2020).

    .. math::
        p_i = \frac{|\phi_i|}{\sum_j |\phi_j| + \epsilon}, \qquad
        \mathrm{Complexity}(\phi) = -\sum_{i=1}^{n} p_i \log(p_i + \epsilon)

    **Lower is better**: a low entropy is a concentrated explanation; a uniform one
    reaches :math:`\log n`.

    Parameters
    ----------
    batch_size
        Number of explanations scored at once by :meth:`evaluate` (Xplique's default,
        32); the scores do not depend on it.

    Notes
    -----
    The absolute attributions are averaged over the channels of a 4D map (N, H, W, C)
    and flattened, as in Xplique. :math:`\epsilon = 10^{-8}` is Xplique's, so the scores
    equal Xplique's (to about 1e-6); the sums are computed in float64 (no overflow for
    huge float32 maps). An all-zero explanation is NaN with an UndefinedScoreWarning
    (Xplique returns 0), and so is an explanation whose total absolute relevance is
    below :math:`10^5 \epsilon = 10^{-3}`, where :math:`\epsilon` would make the score
    depend on the explanation's scale: rescale such explanations to score them.

    References
    ----------
    Bhatt, Weller & Moura, *Evaluating and Aggregating Feature-based Model Explanations*,
    IJCAI 2020. https://arxiv.org/abs/2005.00631

    Examples
    --------
    >>> import numpy as np
    >>> phi = np.array([[1.0, 1.0, 1.0, 1.0], [1.0, 0.0, 0.0, 0.0]])
    >>> scores = Complexity().detailed_evaluate(phi)  # log 4, then one feature: 0
    >>> np.allclose(scores, [np.log(4), 0.0], atol=1e-6)
    True
    """

    higher_is_better = False

    def _score(self, relevance: np.ndarray) -> np.ndarray:
        eps = _EPS
        p = relevance / (relevance.sum(axis=1, keepdims=True) + eps)
        return -np.sum(p * np.log(p + eps), axis=1)


class Sparseness(_ExplanationsOnly):
    r"""Gini-index-based sparseness of attribution maps (Chalasani et al., 2020).

    With :math:`x_{(1)} \le \dots \le x_{(n)}` the L1-normalised absolute attributions
    sorted in ascending order,

    .. math::
        \mathrm{Sparseness}(\phi) = \frac{2 \sum_{i=1}^{n} i\, x_{(i)}}
        {n \sum_{i=1}^{n} x_{(i)} + \epsilon} - \frac{n + 1}{n}

    **Higher is better**: 0 for a uniform explanation, :math:`(n-1)/n` when one feature
    holds all the relevance.

    Parameters
    ----------
    batch_size
        Number of explanations scored at once by :meth:`evaluate` (Xplique's default,
        32); the scores do not depend on it.

    Notes
    -----
    As in Xplique: absolute values, channels of a 4D map averaged, L1 normalisation with
    :math:`\epsilon = 10^{-8}`; the sums are computed in float64 (no overflow for huge
    float32 maps), and the index is clipped to [0, 1] (round-off of a uniform map). An
    all-zero explanation is NaN with an UndefinedScoreWarning (Xplique returns
    :math:`-(n+1)/n`), and so is an explanation whose total absolute relevance is below
    :math:`10^5 \epsilon = 10^{-3}`, where :math:`\epsilon` would make the index depend
    on the explanation's scale (Xplique's even leaves [0, 1]): rescale such explanations
    to score them.

    References
    ----------
    Chalasani, Chen, Chowdhury, Wu & Jha, *Concise Explanations of Neural Networks using
    Adversarial Training*, ICML 2020.
    https://proceedings.mlr.press/v119/chalasani20a.html

    Examples
    --------
    >>> import numpy as np
    >>> phi = np.array([[1.0, 1.0, 1.0, 1.0], [0.0, 0.0, 0.0, 1.0]])
    >>> scores = Sparseness().detailed_evaluate(phi)  # uniform: 0, then one feature: 3/4
    >>> np.allclose(scores, [0.0, 0.75], atol=1e-6)
    True
    """

    higher_is_better = True

    def _score(self, relevance: np.ndarray) -> np.ndarray:
        eps = _EPS
        x = relevance / (relevance.sum(axis=1, keepdims=True) + eps)
        x_sorted = np.sort(x, axis=1)
        n = x_sorted.shape[1]
        rank = np.arange(1, n + 1, dtype=x.dtype)
        numerator = 2.0 * np.sum(x_sorted * rank, axis=1)
        denominator = n * np.sum(x_sorted, axis=1) + eps
        gini = numerator / denominator - (n + 1.0) / n
        return np.clip(gini, 0.0, 1.0)  # a Gini index: never outside [0, 1]
