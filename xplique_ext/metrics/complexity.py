r"""Complexity metrics: how concentrated an explanation is, read from the explanation
alone (no model, no inputs), as Xplique's ``metrics/complexity.py`` computes them.

* :class:`Complexity`: the Shannon entropy of the absolute attributions (Bhatt et al.,
  2020); lower is more concentrated.
* :class:`Sparseness`: the Gini index of the absolute attributions (Chalasani et al.,
  2020); higher is more concentrated.

Both take the absolute value, average the channels of a 4D map (B, H, W, C), flatten,
and normalise each map to sum to one, with Xplique's small constant
:math:`\epsilon = 10^{-8}`, so that their scores equal Xplique's. They compute in the
explanations' precision (float32 maps in float32, as Xplique; float64 maps in float64;
integers in float64): the two agree to about 1e-6. An all-zero explanation has
no distribution of relevance: its score is NaN with a warning, where Xplique returns the
number its :math:`\epsilon` makes up (0 for the entropy, :math:`-(n+1)/n` for the Gini
index).
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


def _relevance(explanations: Any) -> np.ndarray:
    """The absolute attributions as (N, n) rows in the explanations' floating precision
    (float64 for integers): channels of a 4D map averaged (after the absolute value, as
    Xplique), spatial axes flattened."""
    phi = check_param(explanations, "explanations", EXPLANATIONS)
    dtype = phi.dtype if phi.dtype.kind == "f" and phi.itemsize >= 4 else np.float64
    relevance = np.abs(phi.astype(dtype, copy=False))
    if relevance.ndim == 4:  # (N, H, W, C)
        relevance = relevance.mean(axis=-1)
    return relevance.reshape(len(relevance), -1)


def _undefined_where_all_zero(scores: np.ndarray, relevance: np.ndarray, name: str) -> np.ndarray:
    """NaN (with one warning) for the explanations that are all zero."""
    zero = ~relevance.any(axis=1)
    if not zero.any():
        return scores
    warn(
        f"{name}: {int(zero.sum())} of {len(scores)} explanations are all zero, set to NaN: "
        f"{_ALL_ZERO}.",
        UndefinedScoreWarning,
    )
    return np.where(zero, np.nan, scores)


class _ExplanationsOnly(BaseComplexityMetric):
    """What Complexity and Sparseness share: the scores of a dataset of batches are
    those of its batches, concatenated."""

    undefined_reason = _ALL_ZERO

    def detailed_evaluate(self, explanations: Any) -> np.ndarray:
        """One score per explanation, shape (N,); NaN for an all-zero explanation.

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
        scores = self._score(relevance).astype(np.float64)
        return _undefined_where_all_zero(scores, relevance, type(self).__name__)

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
    equal Xplique's (to about 1e-6; float32 maps are computed in float32, as Xplique,
    float64 maps in float64). An all-zero
    explanation is NaN with an UndefinedScoreWarning (Xplique returns 0).

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
        eps = relevance.dtype.type(_EPS)
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
    :math:`\epsilon = 10^{-8}`. An all-zero explanation is NaN with an
    UndefinedScoreWarning (Xplique returns :math:`-(n+1)/n`).

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
        eps = relevance.dtype.type(_EPS)
        x = relevance / (relevance.sum(axis=1, keepdims=True) + eps)
        x_sorted = np.sort(x, axis=1)
        n = x_sorted.shape[1]
        rank = np.arange(1, n + 1, dtype=x.dtype)
        numerator = 2.0 * np.sum(x_sorted * rank, axis=1)
        denominator = n * np.sum(x_sorted, axis=1) + eps
        return numerator / denominator - x.dtype.type((n + 1.0) / n)
