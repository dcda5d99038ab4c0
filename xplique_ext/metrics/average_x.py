"""Average Drop, Average Increase and Average Gain: the model's score on the input masked
by its explanation (the explanation's absolute value, min-max normalised to [0, 1]),
against its score on the whole input. Xplique's ``BaseAverageXMetric`` family, with its
signatures and defaults."""

from __future__ import annotations

import abc
from typing import Any, Callable, Optional, Union

import numpy as np
import tensorflow as tf

from ..commons.params import validate_params
from ..commons.warnings import UndefinedScoreWarning, warn
from .base import BASE_PARAMETERS, ExplanationMetric, check_explanations, explanation_shapes

__all__ = [
    "BaseAverageXMetric",
    "AverageDropMetric",
    "AverageIncreaseMetric",
    "AverageGainMetric",
]

#: Xplique's ``_EPS``, added to the denominators of Average Drop and Average Gain and to
#: the range of the min-max normalisation of the mask
EPS = 1e-8
#: the smallest range (max - min of the channel-averaged |phi|) of an explanation whose
#: mask :data:`EPS` moves by less than 0.1%: below it the score depends on the
#: explanation's scale through Xplique's epsilon, and is undefined (NaN)
RANGE_FLOOR = 1e3 * EPS
#: why a score is undefined, in the order :meth:`BaseAverageXMetric._warn_undefined`
#: counts them
UNDEFINED_CAUSES = (
    "a constant explanation (its min-max normalised mask is 0 / 0)",
    "non-finite model scores (the model returned NaN or inf)",
    "a zero denominator (the score of the whole input leaves no room for the ratio)",
    f"an explanation of range (max - min of |phi|) below {RANGE_FLOOR:g}, where Xplique's "
    f"epsilon {EPS:g} moves the mask by more than 0.1% (the score would depend on the "
    "explanation's scale): rescale the explanations",
)
_DECLARED = {key: value for key, value in BASE_PARAMETERS.items() if key != "seed"}


class BaseAverageXMetric(ExplanationMetric):
    r"""Base of Average Drop, Average Increase and Average Gain: each input is masked by
    its explanation, and its score compared with the score of the whole input.

    Parameters
    ----------
    model
        Keras model or callable, output (N, K).
    inputs
        Images (N, H, W, C), tabular data (N, F) or time series (N, T, F), as a NumPy
        array, a tf.Tensor or a ``tf.data.Dataset`` of ``x`` or ``(x, y)`` (streamed).
    targets
        One-hot (N, K), class ids (N,) or regression targets; None uses the predicted class.
    batch_size
        Number of inputs sent to the model at once; None sends all of them at once.
    operator
        ``g(f, x, y)`` returning one scalar per sample; default ``f(x)[y]``. Also
        Xplique's task names ('classification', 'regression', ...) and ``Tasks`` members.
    activation
        None, 'sigmoid' or 'softmax', applied to the model's output. The formulas are
        meant for scores in [0, 1]: use 'softmax' or 'sigmoid' for a model that returns
        logits.
    strategy
        ``tf.distribute.Strategy`` (None: the one in scope).

    Notes
    -----
    The mask of input :math:`x` with explanation :math:`\phi` (averaged over the
    channels for a map (N, H, W, C), as in Xplique) is its absolute value, min-max
    normalised:

    .. math::

        M = \frac{|\phi| - \min |\phi|}{\max |\phi| - \min |\phi| + \epsilon},
        \qquad b = g(f, x, y), \qquad a = g(f, x \odot M, y)

    with :math:`\epsilon = 10^{-8}`. Each metric compares the score after masking
    :math:`a` with the score before :math:`b`; :meth:`evaluate` is the mean over the
    inputs, as in Xplique.

    *Undefined scores.* A constant explanation has no mask (:math:`0 / 0`: Xplique's
    :math:`\epsilon` turns it into an all-zero mask, and scores the blank input): its
    score is NaN here, as is a score with a non-finite model score or a zero
    denominator, each with an :class:`~xplique_ext.commons.warnings.UndefinedScoreWarning`
    that gives the reason. So is the score of an explanation of range (max - min of
    the channel-averaged :math:`|\phi|`) below :math:`10^3 \epsilon = 10^{-5}`: there
    :math:`\epsilon` moves the mask by more than 0.1%, and the score would depend on the
    explanation's scale (a map scaled by :math:`10^{-8}` scores differently from the
    same map); NaN is safer than a score that silently departs from the metric's
    meaning, and rescaling the explanations gives the score. The mask is computed in
    float64, so explanations of any finite scale (float64 maps near :math:`10^{300}`)
    give the score of the same map at an ordinary scale.

    *Differences from Xplique.* ``detailed_evaluate(explanations)`` scores every input
    (Xplique's takes one batch, ``detailed_evaluate(inputs, targets, explanations)``).
    The mask is computed in float64 and applied in the inputs' floating-point dtype
    (float32 in Xplique, which casts float64 inputs down); the scores equal Xplique's
    up to float32 round-off.
    """

    @validate_params(_DECLARED)
    def __init__(
        self,
        model: Callable,
        inputs: Any,
        targets: Any = None,
        batch_size: Optional[int] = 64,
        operator: Union[None, str, Callable] = None,
        activation: Optional[str] = None,
        *,
        strategy: Any = None,
    ):
        super().__init__(
            model,
            inputs,
            targets,
            batch_size,
            operator=operator,
            activation=activation,
            strategy=strategy,
        )
        self._input_shape = self._peek_input_shape()

    @abc.abstractmethod
    def _formula(self, before: np.ndarray, after: np.ndarray) -> np.ndarray:
        """The metric's per-input score from the scores before and after masking (N,)."""

    def _denominator(self, before: np.ndarray) -> Optional[np.ndarray]:
        """The denominator of the formula (N,), None for a formula without one."""
        return None

    @staticmethod
    def _magnitude(phi: np.ndarray) -> np.ndarray:
        """The explanation's absolute value in float64 (never cast down, so that no
        finite value overflows), channel-averaged for maps (B, H, W, C)."""
        magnitude = np.abs(np.asarray(phi, dtype=np.float64))
        if magnitude.ndim == 4:
            magnitude = magnitude.mean(axis=-1)  # (B, H, W): Xplique's channel mean
        return magnitude

    @staticmethod
    def _range(phi: np.ndarray) -> np.ndarray:
        """The range (max - min) of each explanation's channel-averaged absolute value
        (B,), in float64."""
        magnitude = BaseAverageXMetric._magnitude(phi)
        return np.ptp(magnitude.reshape(len(magnitude), -1), axis=1)

    @staticmethod
    def _mask(phi: np.ndarray, x: np.ndarray) -> np.ndarray:
        """The explanation's absolute value, channel-averaged, min-max normalised per
        input (in float64) and shaped to broadcast over ``x``, in ``x``'s dtype."""
        mask = BaseAverageXMetric._magnitude(phi)
        axes = tuple(range(1, mask.ndim))
        low = mask.min(axis=axes, keepdims=True)
        high = mask.max(axis=axes, keepdims=True)
        mask = (mask - low) / (high - low + EPS)
        if mask.ndim < x.ndim:
            mask = mask[..., np.newaxis]  # (B, H, W, 1) or (B, T, 1)
        return mask.astype(x.dtype)

    @staticmethod
    def _perturb_with_mask(inputs: Any, explanations: Any) -> tf.Tensor:
        """Xplique's helper of the same name: ``inputs`` masked by their explanations'
        mask (see the class Notes), as a tensor in the inputs' floating-point dtype."""
        x = np.asarray(inputs)
        x = x if np.issubdtype(x.dtype, np.floating) else x.astype(np.float32)
        phi = np.asarray(explanations)
        return tf.convert_to_tensor(x * BaseAverageXMetric._mask(phi, x))

    def detailed_evaluate(self, explanations: Any) -> np.ndarray:
        """The metric's score of each input.

        Parameters
        ----------
        explanations
            Attributions, one per input: (N, H, W), (N, H, W, 1) or (N, H, W, C) for
            images, (N, F) for tabular data, (N, T) or (N, T, F) for time series.

        Returns
        -------
        scores
            Array of shape (N,); NaN where the score is undefined (an
            :class:`~xplique_ext.commons.warnings.UndefinedScoreWarning` gives the reason).
        """
        allowed = explanation_shapes(self._input_shape, series_maps=True)
        phi_all = check_explanations(explanations, allowed, self.n_inputs)
        before_parts = []
        after_parts = []
        constant = []
        ranges = []
        for _, x, y, phi in self.explained_batches(phi_all):
            x = x if np.issubdtype(x.dtype, np.floating) else x.astype(np.float32)
            before_parts.append(self.scores(x, y))
            after_parts.append(self.scores(self._perturb_with_mask(x, phi).numpy(), y))
            flat = np.abs(phi.reshape(len(phi), -1))
            constant.append(np.ptp(flat, axis=1) == 0)
            ranges.append(self._range(phi))
        before = np.concatenate(before_parts).astype(np.float64)
        after = np.concatenate(after_parts).astype(np.float64)
        constant = np.concatenate(constant)
        small_range = (np.concatenate(ranges) < RANGE_FLOOR) & ~constant
        non_finite = ~(np.isfinite(before) & np.isfinite(after)) & ~constant & ~small_range
        denominator = self._denominator(before)
        zero = np.zeros_like(constant)
        if denominator is not None:
            zero = (denominator == 0) & ~constant & ~non_finite & ~small_range
        with np.errstate(divide="ignore", invalid="ignore"):
            scores = self._formula(before, after)
        self._warn_undefined((constant, non_finite, zero, small_range))
        scores[constant | non_finite | zero | small_range] = np.nan
        return scores

    def _warn_undefined(self, causes: tuple) -> None:
        """One UndefinedScoreWarning naming the causes of the NaN scores, if any."""
        n = len(causes[0])
        named = [
            f"{int(c.sum())} of {n}: {why}" for c, why in zip(causes, UNDEFINED_CAUSES) if c.any()
        ]
        if named:
            warn(
                f"{type(self).__name__}: the score is undefined (NaN) for " + "; ".join(named),
                UndefinedScoreWarning,
            )


class AverageDropMetric(BaseAverageXMetric):
    r"""Average Drop (Chattopadhay et al., 2018): the relative drop of the model's score
    when the input is masked by its explanation. Lower is better.

    As :class:`BaseAverageXMetric` (parameters, mask, undefined scores), with Xplique's
    signature and defaults. The score of each input is

    .. math::

        \operatorname{AD}(x) = \frac{\max(0,\; b - a)}{b + \epsilon}

    References
    ----------
    Chattopadhay, Sarkar, Howlader and Balasubramanian, *Grad-CAM++: Generalized
    Gradient-Based Visual Explanations for Deep Convolutional Networks*, WACV 2018.
    https://arxiv.org/abs/1710.11063

    Examples
    --------
    >>> import numpy as np, keras
    >>> from xplique_ext.metrics import AverageDropMetric
    >>> x = np.array([[1.0, 1.0, 1.0, 1.0]], dtype="float32")
    >>> model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1, use_bias=False,
    ...                                                   kernel_initializer="ones")])
    >>> phi = np.array([[1.0, 1.0, 0.0, 0.0]])  # keeps half the input: f drops from 4 to 2
    >>> round(AverageDropMetric(model, x, np.ones(1))(phi), 6)
    0.5
    """

    higher_is_better = False

    def _denominator(self, before: np.ndarray) -> np.ndarray:
        return before + EPS

    def _formula(self, before: np.ndarray, after: np.ndarray) -> np.ndarray:
        return np.maximum(before - after, 0.0) / self._denominator(before)


class AverageIncreaseMetric(BaseAverageXMetric):
    r"""Average Increase in confidence (Chattopadhay et al., 2018): the share of inputs
    whose score rises when the input is masked by its explanation. Higher is better.

    As :class:`BaseAverageXMetric` (parameters, mask, undefined scores), with Xplique's
    signature and defaults. The score of each input is a 0/1 outcome, and the aggregate
    a proportion (:meth:`summary` gives its Wilson interval):

    .. math::

        \operatorname{AI}(x) = \mathbb{1}[a > b]

    References
    ----------
    Chattopadhay, Sarkar, Howlader and Balasubramanian, *Grad-CAM++: Generalized
    Gradient-Based Visual Explanations for Deep Convolutional Networks*, WACV 2018.
    https://arxiv.org/abs/1710.11063

    Examples
    --------
    >>> import numpy as np, keras
    >>> from xplique_ext.metrics import AverageIncreaseMetric
    >>> x = np.array([[1.0, -1.0], [1.0, 1.0]], dtype="float32")
    >>> model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1, use_bias=False,
    ...                                                   kernel_initializer="ones")])
    >>> phi = np.array([[1.0, 0.0], [1.0, 0.0]])  # masks the second feature of each input
    >>> AverageIncreaseMetric(model, x, np.ones(2)).detailed_evaluate(phi)  # 0 -> 1, 2 -> 1
    array([1., 0.])
    """

    higher_is_better = True

    def _formula(self, before: np.ndarray, after: np.ndarray) -> np.ndarray:
        return (after > before).astype(np.float64)

    def _is_proportion(self) -> bool:
        return True


class AverageGainMetric(BaseAverageXMetric):
    r"""Average Gain (Zhang et al., 2024): the relative rise of the model's score when the
    input is masked by its explanation, over the room left below 1. Higher is better.

    As :class:`BaseAverageXMetric` (parameters, mask, undefined scores), with Xplique's
    signature and defaults. The score of each input is

    .. math::

        \operatorname{AG}(x) = \frac{\max(0,\; a - b)}{1 - b + \epsilon}

    References
    ----------
    Zhang, Torres, Sicre, Avrithis and Ayache, *Opti-CAM: Optimizing saliency maps for
    interpretability*, Computer Vision and Image Understanding 248, 2024.
    https://arxiv.org/abs/2301.07002

    Examples
    --------
    >>> import numpy as np, keras
    >>> from xplique_ext.metrics import AverageGainMetric
    >>> x = np.array([[1.0, -1.0]], dtype="float32")
    >>> model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1, use_bias=False,
    ...                                                   kernel_initializer="ones")])
    >>> phi = np.array([[1.0, 0.0]])  # masks the second feature: the score rises 0 -> 1
    >>> round(AverageGainMetric(model, x, np.ones(1))(phi), 6)
    1.0
    """

    higher_is_better = True

    def _denominator(self, before: np.ndarray) -> np.ndarray:
        return 1.0 - before + EPS

    def _formula(self, before: np.ndarray, after: np.ndarray) -> np.ndarray:
        return np.maximum(after - before, 0.0) / self._denominator(before)
