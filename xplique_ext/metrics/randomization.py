r"""Randomization sanity checks of an explainer (Adebayo et al., 2018), as Xplique's
``metrics/randomization.py``: an explainer that passes them gives explanations that
change when the target class or the model's parameters are randomised.

* :class:`RandomLogitMetric`: the SSIM between the explanations for the true class and
  for a random other class;
* :class:`ModelRandomizationMetric`: the Spearman correlation between the explanations
  under the model and under a randomised copy of it (:class:`ProgressiveLayerRandomization`
  or any :class:`ModelRandomizationStrategy`).

Both are lower-is-better. Neither modifies the user's model: the model is cloned, the
weights copied, and the clone randomised from the metric's ``seed``.
"""

from __future__ import annotations

import abc
import inspect
import numbers
from typing import Any, Callable, NamedTuple, Optional, Union

import numpy as np
import tensorflow as tf

from .. import runtime
from ..commons.correlations import batched_spearman
from ..commons.params import InstanceOf, Interval, validate_params
from ..commons.random import input_generators, make_rng, seed_to_int
from .explainer_base import (
    EXPLAINER_PARAMETERS,
    ExplainerMetric,
    explainer_targets,
    not_finite,
)

__all__ = [
    "ModelRandomizationStrategy",
    "ProgressiveLayerRandomization",
    "RandomLogitMetric",
    "ModelRandomizationMetric",
    "ssim",
]


def _as_images(phi: np.ndarray) -> np.ndarray:
    """Explanations as images (B, H, W, C): (B, F) as one row (B, 1, F, 1), (B, H, W)
    with one channel."""
    if phi.ndim == 2:
        return phi[:, None, :, None]
    if phi.ndim == 3:
        return phi[..., None]
    if phi.ndim == 4:
        return phi
    raise ValueError(
        "`explainer` must return explanations (B, F), (B, H, W) or (B, H, W, C) to "
        f"compare them by SSIM, got shape {phi.shape}"
    )


def ssim(
    a: np.ndarray,
    b: np.ndarray,
    *,
    win_size: int = 11,
    filter_sigma: float = 1.5,
    k1: float = 0.01,
    k2: float = 0.03,
) -> np.ndarray:
    """The structural similarity (SSIM) of each pair of explanations, as Xplique
    computes it: ``tf.image.ssim`` with a Gaussian window of ``win_size`` (at most the
    image's height and width, odd), and the data range of the pair (the span of both
    maps together). A pair whose two maps are one and the same constant has no data
    range: its SSIM is 1, as in Xplique.

    Parameters
    ----------
    a, b
        Explanations (B, F), (B, H, W) or (B, H, W, C), of one shape.

    Returns
    -------
    ssim
        float64 array (B,), in [-1, 1].
    """
    images_a = _as_images(np.asarray(a, dtype=np.float64))
    images_b = _as_images(np.asarray(b, dtype=np.float64))
    size = min(win_size, images_a.shape[1], images_a.shape[2])
    size = max(size - 1 if size % 2 == 0 else size, 1)
    low = np.minimum(images_a, images_b).reshape(len(images_a), -1).min(axis=1)
    high = np.maximum(images_a, images_b).reshape(len(images_a), -1).max(axis=1)
    data_range = high - low
    scale = np.where(data_range > 0, data_range, 1.0)[:, None, None, None]
    # SSIM(a, b; L) = SSIM(a / L, b / L; 1): one batched call for every pair's own range
    values = tf.image.ssim(
        tf.constant(images_a / scale, tf.float32),
        tf.constant(images_b / scale, tf.float32),
        max_val=1.0,
        filter_size=size,
        filter_sigma=filter_sigma,
        k1=k1,
        k2=k2,
    )
    return np.where(data_range > 0, np.asarray(values, dtype=np.float64), 1.0)


# ------------------------------------------------------------------ strategies
class ModelRandomizationStrategy(abc.ABC):
    """How :class:`ModelRandomizationMetric` randomises its copy of the model (Xplique's
    interface). A strategy written for Xplique, ``randomize(model)``, works as it is; a
    strategy that takes ``randomize(model, seed)`` receives the metric's seed."""

    @abc.abstractmethod
    def randomize(self, model: Any, seed: Optional[int] = None) -> Any:
        """Randomise ``model``'s parameters in place and return it.

        Parameters
        ----------
        model
            The model to randomise (the metric passes its own clone, never the user's
            model).
        seed
            Seed of the random parameters; None draws fresh ones.
        """


class ProgressiveLayerRandomization(ModelRandomizationStrategy):
    """Cascading randomisation of the layers with weights (Adebayo et al., 2018), from
    the output (``reverse=True``) or from the input, up to ``stop_layer`` excluded, as in
    Xplique: each weight is drawn uniformly in [0, 1) in its own dtype.

    Parameters
    ----------
    stop_layer
        Where the randomisation stops (that layer is not randomised): a layer's name, an
        index in the traversal order of the layers with weights, or a fraction in
        [0, 1] of those layers (``int(n_layers * fraction)`` of them). At least one
        layer must be randomised: :meth:`randomize` raises a ValueError naming
        ``stop_layer`` where it would randomise none (Xplique randomises none and the
        metric returns 1), e.g. the fraction 0.25 of a model with fewer than 4 layers
        with weights.
    reverse
        True traverses from the output to the input (top-down), False from the input.

    Examples
    --------
    >>> import keras
    >>> model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2, name="a"),
    ...                           keras.layers.Dense(2, name="b")])
    >>> before = model.get_layer("a").get_weights()[0].copy()
    >>> _ = ProgressiveLayerRandomization("a").randomize(model, seed=0)  # "b" only
    >>> bool((model.get_layer("a").get_weights()[0] == before).all())
    True
    """

    @validate_params(
        {
            "stop_layer": [
                InstanceOf(str, description="a layer's name"),
                Interval(numbers.Integral, None, None),
                Interval(numbers.Real, 0, 1, closed="both"),
            ],
            "reverse": [InstanceOf(bool, description="a bool")],
        }
    )
    def __init__(self, stop_layer: Union[str, int, float], reverse: bool = True):
        self.stop_layer = stop_layer
        self.reverse = reverse

    def __eq__(self, other: object) -> bool:
        """Two strategies with the same settings randomise alike."""
        if type(other) is not type(self):
            return NotImplemented
        return (self.stop_layer, self.reverse) == (other.stop_layer, other.reverse)

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.stop_layer, self.reverse))

    def __repr__(self) -> str:
        name = type(self).__name__
        return f"{name}(stop_layer={self.stop_layer!r}, reverse={self.reverse!r})"

    def _stop_index(self, names: list) -> int:
        if isinstance(self.stop_layer, str):
            if self.stop_layer not in names:
                raise ValueError(
                    f"`stop_layer` Layer '{self.stop_layer}' not found in model among the "
                    f"layers with weights {names}"
                )
            return names.index(self.stop_layer)
        if isinstance(self.stop_layer, numbers.Integral):
            index = int(self.stop_layer)
        else:
            index = int(len(names) * self.stop_layer)
        return max(0, min(index, len(names)))

    def randomize(self, model: Any, seed: Optional[int] = None) -> Any:
        """Randomise ``model``'s weights in place, up to ``stop_layer`` excluded; return
        the model. ``seed`` seeds a local generator (None: fresh entropy)."""
        layers = [layer for layer in model.layers if layer.get_weights()]
        if self.reverse:
            layers = layers[::-1]
        stop = self._stop_index([layer.name for layer in layers])
        if stop == 0:
            raise ValueError(
                f"`stop_layer` {self.stop_layer!r} randomizes no layer of the model: it has "
                f"{len(layers)} layers with weights, and the randomisation stops at the first "
                "of them (a fraction keeps int(n_layers * fraction) layers); the metric would "
                "compare the explanations of the model with themselves. Give a larger "
                "fraction or index, or a layer further from the start"
            )
        rng = make_rng(seed_to_int(seed))
        for layer in layers[:stop]:
            weights = [rng.uniform(0.0, 1.0, w.shape).astype(w.dtype) for w in layer.get_weights()]
            layer.set_weights(weights)
        return model


def _accepts_seed(strategy: ModelRandomizationStrategy) -> bool:
    try:
        return "seed" in inspect.signature(strategy.randomize).parameters
    except (TypeError, ValueError):
        return False


# ------------------------------------------------------------------ metrics
_NOT_FINITE = "the explainer returned NaN or inf for the input"
_CONSTANT = "a constant explanation has no ranks to correlate"


def _zero_rows(phi: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """``phi`` (N, ...) with the explanations not in ``keep`` (N,) set to zero."""
    keep = keep.reshape((-1,) + (1,) * (phi.ndim - 1))
    return np.where(keep, phi, 0)


class PairScores(NamedTuple):
    """The similarities of one batch's pairs of explanations, and which pairs were
    finite."""

    scores: np.ndarray
    finite: np.ndarray


_TARGETS_REQUIRED = (
    "`targets` is required: the explanations are compared for given classes "
    "(one-hot (N, K) or class ids (N,)), got None"
)


def _carries_targets(inputs: Any) -> bool:
    """Whether ``inputs`` holds its own targets: a ``tf.data.Dataset`` of ``(x, y)``
    pairs."""
    if not runtime.is_dataset(inputs):
        return False
    spec = inputs.element_spec
    return isinstance(spec, (tuple, list)) and len(spec) >= 2


class _RandomizationMetric(ExplainerMetric):
    """What both sanity checks share: targets are required (as in Xplique) unless the
    inputs carry them (a dataset of ``(x, y)`` pairs), and the similarity is
    lower-is-better."""

    higher_is_better = False
    undefined_reason = _NOT_FINITE

    def __init__(self, model, inputs, targets, batch_size, *, activation, seed, strategy):
        if targets is None and not _carries_targets(inputs):
            raise ValueError(_TARGETS_REQUIRED + " for inputs that carry no targets")
        super().__init__(
            model,
            inputs,
            targets,
            batch_size,
            activation=activation,
            seed=seed,
            strategy=strategy,
        )


class RandomLogitMetric(_RandomizationMetric):
    r"""Random logit sanity check (Adebayo et al., 2018): the structural similarity
    between the explanation for the input's class :math:`y` and for a class
    :math:`y' \ne y` drawn uniformly among the others.

    .. math::
        \mathrm{RandomLogit}(x) = \mathrm{SSIM}\big(\phi(x, y), \phi(x, y')\big)

    **Lower is better**: a class-sensitive explainer gives different explanations for
    different classes.

    Parameters
    ----------
    model
        Model the explainer explains (at least two classes).
    inputs
        Inputs (N, ...): an array, a tf.Tensor or a ``tf.data.Dataset``.
    targets
        One per input, one-hot (N, K) or class ids (N,). None (the default) takes the
        targets a dataset of ``(x, y)`` pairs carries; for other inputs they are
        required, as in Xplique (None is a ValueError naming ``targets``).
    batch_size
        Number of inputs explained at once; None explains everything at once.
    activation
        None, 'sigmoid' or 'softmax' (kept for Xplique's signature).
    seed
        Seed of the random classes (Xplique's default, 42). Each input's class is drawn
        from the seed and the input's content, so the scores do not depend on the batch
        size or on the order of the inputs; None draws fresh classes at each evaluation.
    strategy
        ``tf.distribute.Strategy`` of the metric's own model calls (the predicted class,
        for a dataset of inputs without targets); None: the one in scope when the metric
        is built. The explainer runs wherever it runs: the metric does not distribute it.

    Notes
    -----
    :func:`ssim` is Xplique's: a Gaussian window of 11 (at most the map's size), the
    data range of the pair, SSIM = 1 for a pair of identical constant maps. Xplique
    draws the classes from TensorFlow's global generator, which it seeds; here a local
    generator per input does, so the mean agrees with Xplique's within its standard
    error, not draw for draw.

    References
    ----------
    Adebayo, Gilmer, Muelly, Goodfellow, Hardt & Kim, *Sanity Checks for Saliency Maps*,
    NeurIPS 2018. https://arxiv.org/abs/1810.03292

    Examples
    --------
    >>> import numpy as np
    >>> x = np.random.default_rng(0).random((2, 8, 8, 1)).astype(np.float32)
    >>> model = lambda z: np.ones((len(z), 3), np.float32)
    >>> metric = RandomLogitMetric(model, x, [0, 2], seed=0)
    >>> metric.evaluate(lambda inputs, targets: inputs)  # ignores the class
    1.0
    """

    @validate_params(EXPLAINER_PARAMETERS)
    def __init__(
        self,
        model: Callable,
        inputs: Any,
        targets: Any = None,
        batch_size: Optional[int] = 64,
        *,
        activation: Optional[str] = None,
        seed: Optional[int] = 42,
        strategy: Any = None,
    ):
        super().__init__(
            model,
            inputs,
            targets,
            batch_size,
            activation=activation,
            seed=seed,
            strategy=strategy,
        )

    def detailed_evaluate(self, explainer: Any) -> np.ndarray:
        """The SSIM of each input's explanations for its class and a random other class,
        (N,).

        Parameters
        ----------
        explainer
            An explainer with ``explain(inputs, targets)`` (Xplique's) or a callable
            ``explainer(inputs, targets)``.
        """
        seed = seed_to_int(self.seed)  # drawn once: fresh entropy for seed=None
        scores = []
        explained = []
        for _, x, y in self.iter_batches():
            logit = self._random_logit(explainer, x, explainer_targets(x, y), seed)
            scores.append(logit.scores)
            explained.append(logit.finite)
        finite = np.concatenate(explained)
        return self.undefined_where(np.concatenate(scores), {_NOT_FINITE: ~finite})

    def _random_logit(self, explainer: Any, x: np.ndarray, y: np.ndarray, seed: int) -> PairScores:
        n_classes = y.shape[1]
        if n_classes < 2:
            raise ValueError(
                "`model` must have at least two classes for RandomLogitMetric to draw "
                f"another class, got {n_classes} output"
            )
        true_class = y.argmax(axis=1)
        # uniform in {0, ..., K-1} \ {y}: a draw in [0, K-1) shifted past the true class
        draws = np.array([rng.integers(0, n_classes - 1) for rng in input_generators(x, seed)])
        other_class = np.where(draws >= true_class, draws + 1, draws)
        y_other = np.eye(n_classes, dtype=y.dtype)[other_class]
        phi = self.explain(explainer, x, y)
        phi_other = self.explain(explainer, x, y_other)
        finite = ~not_finite(phi) & ~not_finite(phi_other)
        # the pairs with NaN or inf are scored NaN by the caller: zeros compare quietly
        similarity = ssim(_zero_rows(phi, finite), _zero_rows(phi_other, finite))
        return PairScores(scores=similarity, finite=finite)


class ModelRandomizationMetric(_RandomizationMetric):
    r"""Model randomization sanity check (Adebayo et al., 2018): the Spearman rank
    correlation between the explanation under the model and under a copy of it whose
    parameters are randomised.

    .. math::
        \mathrm{ModelRandomization}(x) = \rho_{\mathrm{Spearman}}\big(\phi_f(x, y),
        \phi_{\tilde f}(x, y)\big)

    **Lower is better**: an explainer that depends on what the model learnt gives
    different explanations for a randomised model.

    Parameters
    ----------
    model
        Model the explainer explains.
    inputs
        Inputs (N, ...): an array, a tf.Tensor or a ``tf.data.Dataset``.
    targets
        One per input, one-hot (N, K) or class ids (N,). None (the default) takes the
        targets a dataset of ``(x, y)`` pairs carries; for other inputs they are
        required, as in Xplique (None is a ValueError naming ``targets``).
    randomization_strategy
        How the copy is randomised (a :class:`ModelRandomizationStrategy`); None
        randomises the top 25% of the layers with weights
        (``ProgressiveLayerRandomization(0.25)``), Xplique's default; a model with fewer
        than 4 layers with weights then has no layer to randomise: a ValueError naming
        ``stop_layer`` at evaluation (give a larger fraction). It comes before
        ``batch_size``, as in Xplique's signature.
    batch_size
        Number of inputs explained at once; None explains everything at once.
    activation
        None, 'sigmoid' or 'softmax' (kept for Xplique's signature).
    seed
        Seed of the randomised copy (Xplique's default, 42); None draws a fresh copy at
        each evaluation.
    strategy
        ``tf.distribute.Strategy`` of the metric's own model calls (the predicted class,
        for a dataset of inputs without targets); None: the one in scope when the metric
        is built. The explainer runs wherever it runs, on the model and on the randomised
        copy alike: the metric does not distribute it.

    Notes
    -----
    The metric never modifies the user's model: at each evaluation it clones the
    explainer's model (``keras.models.clone_model``), copies its weights, randomises the
    clone from ``seed``, and sets it as ``explainer.model`` while it explains, restoring
    the explainer's own model afterwards (also on an error). One clone serves every
    batch, so the scores do not depend on the batch size (Xplique draws a new clone per
    batch). Explanations (B, H, W, C) are averaged over the channels and flattened. A
    constant explanation has no ranks to correlate: its score is NaN with a warning,
    where Xplique's correlation returns about 0.

    References
    ----------
    Adebayo, Gilmer, Muelly, Goodfellow, Hardt & Kim, *Sanity Checks for Saliency Maps*,
    NeurIPS 2018. https://arxiv.org/abs/1810.03292
    """

    undefined_reason = f"{_CONSTANT}, or {_NOT_FINITE}"
    _data_params = (*ExplainerMetric._data_params, "randomization_strategy")

    @validate_params(
        {
            **EXPLAINER_PARAMETERS,
            "randomization_strategy": [
                InstanceOf(
                    ModelRandomizationStrategy,
                    description="a ModelRandomizationStrategy",
                ),
                None,
            ],
        }
    )
    def __init__(
        self,
        model: Callable,
        inputs: Any,
        targets: Any = None,
        randomization_strategy: Optional[ModelRandomizationStrategy] = None,
        batch_size: Optional[int] = 64,
        *,
        activation: Optional[str] = None,
        seed: Optional[int] = 42,
        strategy: Any = None,
    ):
        super().__init__(
            model,
            inputs,
            targets,
            batch_size,
            activation=activation,
            seed=seed,
            strategy=strategy,
        )
        if randomization_strategy is None:
            randomization_strategy = ProgressiveLayerRandomization(0.25)
        self.randomization_strategy = randomization_strategy

    def randomized_model(self, model: Any, seed: Optional[int]) -> Any:
        """A randomised clone of ``model`` (``model`` itself is left untouched)."""
        try:
            clone = tf.keras.models.clone_model(model)
        except (TypeError, ValueError, AttributeError) as error:
            raise TypeError(
                "`explainer.model` must be a Keras model that keras.models.clone_model "
                f"can copy, to randomise a copy of it: {error}"
            ) from None
        clone.set_weights(model.get_weights())
        if _accepts_seed(self.randomization_strategy):
            randomized = self.randomization_strategy.randomize(clone, seed=seed)
        else:
            randomized = self.randomization_strategy.randomize(clone)
        return clone if randomized is None else randomized

    def detailed_evaluate(self, explainer: Any) -> np.ndarray:
        """The Spearman correlation of each input's explanations under the model and
        under its randomised copy, (N,).

        Parameters
        ----------
        explainer
            An explainer with a ``model`` attribute (the model it explains, which the
            metric swaps for the randomised copy while it explains, then restores) and
            ``explain(inputs, targets)``, or a callable ``explainer(inputs, targets)``.
        """
        if not hasattr(explainer, "model"):
            raise TypeError(
                "`explainer` must have a `model` attribute (the model it explains) for "
                f"the metric to explain with a randomised copy, got {type(explainer).__name__}"
            )
        original = explainer.model
        randomized = self.randomized_model(original, seed_to_int(self.seed))
        scores = []
        explained = []
        for _, x, y in self.iter_batches():
            y = explainer_targets(x, y)
            phi = self.explain(explainer, x, y)
            explainer.model = randomized
            try:
                phi_randomized = self.explain(explainer, x, y)
            finally:
                explainer.model = original
            finite = ~not_finite(phi) & ~not_finite(phi_randomized)
            scores.append(_spearman(phi, phi_randomized, finite))
            explained.append(finite)
        scores = np.concatenate(scores)
        finite = np.concatenate(explained)
        causes = {_NOT_FINITE: ~finite, _CONSTANT: finite & np.isnan(scores)}
        return self.undefined_where(scores, causes)


def _spearman(phi: np.ndarray, phi_randomized: np.ndarray, finite: np.ndarray) -> np.ndarray:
    """Spearman correlation of each pair of explanations: channels of a 4D map averaged,
    then flattened; NaN for a constant explanation."""
    if phi.shape != phi_randomized.shape:
        raise ValueError(
            f"`explainer` returned explanations of shape {phi_randomized.shape[1:]} under "
            f"the randomised model and {phi.shape[1:]} under the model"
        )
    if phi.ndim == 4:
        phi = phi.mean(axis=-1)
        phi_randomized = phi_randomized.mean(axis=-1)
    rows = phi.reshape(len(phi), -1).astype(np.float64)
    rows_randomized = phi_randomized.reshape(len(phi), -1).astype(np.float64)
    # rows with NaN or inf are scored NaN by the caller: zeros rank without error
    return batched_spearman(_zero_rows(rows, finite), _zero_rows(rows_randomized, finite))
