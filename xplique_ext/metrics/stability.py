r"""Average stability (sensitivity) of an explainer, as Xplique's
``metrics/stability.py``: close inputs should get close explanations (Bhatt et al.,
2020, definition 2).
"""

from __future__ import annotations

import numbers
from typing import Any, Callable, NamedTuple, Optional, Union

import numpy as np

from ..commons.params import ArrayLike, Callable_, Interval, Options, check_param, validate_params
from ..commons.random import input_generators, seed_to_int
from .base import explanation_shapes
from .explainer_base import EXPLAINER_PARAMETERS, ExplainerMetric, explainer_targets, not_finite

__all__ = ["AverageStability"]

_DISTANCES = ("l1", "l2")
_UNDEFINED = "the distance returned NaN for a neighbour"
_NOT_FINITE = "the explainer returned NaN or inf for the input or a neighbour"


class StabilityScores(NamedTuple):
    """The scores of one batch, and which inputs had finite explanations."""

    scores: np.ndarray
    finite: np.ndarray


def _l1(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.abs(a - b).reshape(len(a), -1).sum(axis=1)


def _l2(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.sqrt(((a - b) ** 2).reshape(len(a), -1).sum(axis=1))


class AverageStability(ExplainerMetric):
    r"""Average stability of an explainer (Bhatt et al., 2020, definition 2).

    For each input :math:`x` with explanation :math:`\phi(x)`, ``nb_samples`` neighbours
    :math:`x + \delta_k`, with :math:`\delta_k` drawn uniformly in :math:`[0, r)` for
    every feature (as Xplique draws it), and their explanations:

    .. math::
        \mathrm{AverageStability}(x) = \frac{1}{K} \sum_{k=1}^{K}
        d\big(\phi(x + \delta_k), \phi(x)\big)

    **Lower is better**: a stable explainer gives close inputs close explanations.

    Parameters
    ----------
    model
        Model the explainer explains (called only for the predicted class when
        ``targets`` is None).
    inputs
        Inputs under study (N, ...): an array, a tf.Tensor or a ``tf.data.Dataset``.
    targets
        One per input (one-hot, class ids or regression targets); None uses the
        model's predicted class.
    batch_size
        Number of inputs (or neighbours) explained at once; None explains everything at
        once.
    radius
        Upper bound :math:`r > 0` of the uniform noise added to every feature.
    distance
        'l1', 'l2' (Euclidean) or a callable ``distance(phi_a, phi_b) -> float`` on two
        explanations (Xplique's choices).
    nb_samples
        Number :math:`K` of neighbours of each input.
    seed
        Seed of the noise. Each input's noise is drawn from the seed and the input's
        content, so a score does not depend on the batch size or on the order of the
        inputs; None draws fresh noise at each evaluation.
    activation
        None, 'sigmoid' or 'softmax' on the model's outputs (for the predicted class).
    strategy
        ``tf.distribute.Strategy`` of the metric's own model calls (the predicted class
        when ``targets`` is None); None: the one in scope when the metric is built. The
        explainer runs wherever it runs: the metric does not distribute it.

    Notes
    -----
    Xplique adds the same ``nb_samples`` noise masks to every input (its
    ``noisy_masks``); here each input gets its own noise, drawn from the seed and its
    content, so the per-input scores are independent draws and :meth:`summary`'s
    interval over the inputs is valid. There is therefore no ``noisy_masks``
    attribute. The mean agrees with Xplique's within its standard error.

    ``evaluate(explainer, base_explanations=None)`` takes the explainer
    (``explainer(inputs, targets)`` or an object with ``explain(inputs, targets)``) and,
    as in Xplique, the explanations of the inputs when they are already computed.

    References
    ----------
    Bhatt, Weller & Moura, *Evaluating and Aggregating Feature-based Model Explanations*,
    IJCAI 2020. https://arxiv.org/abs/2005.00631

    Examples
    --------
    >>> import numpy as np
    >>> x = np.random.default_rng(0).random((3, 4, 4, 1)).astype(np.float32)
    >>> model = lambda z: np.ones((len(z), 2), np.float32)
    >>> metric = AverageStability(model, x, [0, 1, 0], nb_samples=5, seed=0)
    >>> metric.evaluate(lambda inputs, targets: np.ones(np.shape(inputs)))  # constant
    0.0
    """

    higher_is_better = False
    undefined_reason = f"{_NOT_FINITE}, or {_UNDEFINED}"

    @validate_params(
        {
            **EXPLAINER_PARAMETERS,
            "radius": [Interval(numbers.Real, 0, None, closed="neither")],
            "distance": [
                Options(_DISTANCES, "'l1', 'l2' or a callable distance(phi_a, phi_b)"),
                Callable_(),
            ],
            "nb_samples": [Interval(numbers.Integral, 1, None)],
        }
    )
    def __init__(
        self,
        model: Callable,
        inputs: Any,
        targets: Any = None,
        batch_size: Optional[int] = 64,
        *,
        radius: float = 0.1,
        distance: Union[str, Callable] = "l2",
        nb_samples: int = 20,
        seed: Optional[int] = None,
        activation: Optional[str] = None,
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
        self.radius = radius
        self.distance = distance
        self.nb_samples = nb_samples

    def detailed_evaluate(self, explainer: Any, base_explanations: Any = None) -> np.ndarray:
        """The average distance of each input's explanation to its neighbours', (N,).

        Parameters
        ----------
        explainer
            ``explainer(inputs, targets)`` or an object with ``explain(inputs, targets)``.
        base_explanations
            The explanations of the inputs (N, ...), if already computed; None asks
            the explainer.
        """
        if base_explanations is not None:
            base_explanations = check_param(
                base_explanations, "base_explanations", [ArrayLike("real")]
            )
        seed = seed_to_int(self.seed)  # drawn once: fresh entropy for seed=None
        scores = []
        explained = []
        for start, x, y in self.iter_batches():
            y = explainer_targets(x, y)
            if base_explanations is None:
                phi = self.explain(explainer, x, y)
            else:
                phi = base_explanations[start : start + len(x)]
                if len(phi) != len(x):
                    raise ValueError(
                        "`base_explanations` must hold one explanation per input: got "
                        f"{len(base_explanations)} for at least {start + len(x)} inputs"
                    )
                allowed = explanation_shapes(tuple(x.shape[1:]))
                if tuple(phi.shape[1:]) not in allowed:
                    raise ValueError(
                        f"`base_explanations` must have one of the per-input shapes {allowed} "
                        f"of the inputs' explanations, got {tuple(phi.shape[1:])}"
                    )
            stability = self._average_stability(explainer, x, y, phi, seed)
            scores.append(stability.scores)
            explained.append(stability.finite)
        scores = np.concatenate(scores)
        if base_explanations is not None and len(base_explanations) != len(scores):
            raise ValueError(
                "`base_explanations` must hold one explanation per input: got "
                f"{len(base_explanations)} for {len(scores)} inputs"
            )
        finite = np.concatenate(explained)
        causes = {
            _NOT_FINITE: ~finite,
            _UNDEFINED: finite & np.isnan(scores),
        }
        return self.undefined_where(scores, causes)

    def _average_stability(
        self, explainer: Any, x: np.ndarray, y: np.ndarray, phi: np.ndarray, seed: int
    ) -> StabilityScores:
        """The formula of the class Notes for one batch of inputs: each input's
        neighbours, their explanations, and the mean distance to the input's own. The
        inputs go in groups whose neighbours number at most ``batch_size`` (at least one
        input per group), so that at most that many neighbours exist at once."""
        k = self.nb_samples
        group = max(1, (self.batch_size or len(x) * k) // k)
        scores = []
        finite = []
        for start in range(0, len(x), group):
            part = slice(start, start + group)
            distances = self._neighbour_distances(explainer, x[part], y[part], phi[part], seed)
            scores.append(distances.scores)
            finite.append(distances.finite)
        return StabilityScores(scores=np.concatenate(scores), finite=np.concatenate(finite))

    def _neighbour_distances(
        self, explainer: Any, x: np.ndarray, y: np.ndarray, phi: np.ndarray, seed: int
    ) -> StabilityScores:
        """The mean distance of each input's explanation to its neighbours' (Eq. 1)."""
        k = self.nb_samples
        dtype = x.dtype if x.dtype.kind == "f" else np.float32
        # each input's noise from the seed and its content: uniform in [0, radius)
        noise = np.stack(
            [rng.uniform(0.0, self.radius, (k, *x.shape[1:])) for rng in input_generators(x, seed)]
        ).astype(dtype)
        neighbours = (x[:, None].astype(dtype) + noise).reshape(len(x) * k, *x.shape[1:])
        phi_neighbours = self.explain(explainer, neighbours, np.repeat(y, k, axis=0))
        phi_repeated = np.repeat(phi, k, axis=0)
        if phi_neighbours.shape != phi_repeated.shape:
            raise ValueError(
                f"`explainer` returned explanations of shape {phi_neighbours.shape[1:]} for "
                f"the neighbours and {phi_repeated.shape[1:]} for the inputs"
            )
        finite = ~not_finite(phi) & ~not_finite(phi_neighbours).reshape(len(x), k).any(axis=1)
        distances = self._distances(phi_neighbours, phi_repeated).reshape(len(x), k)
        # NaN where the distance returned NaN
        return StabilityScores(scores=distances.mean(axis=1), finite=finite)

    def _distances(self, phi_a: np.ndarray, phi_b: np.ndarray) -> np.ndarray:
        a = phi_a.astype(np.float64)
        b = phi_b.astype(np.float64)
        if self.distance == "l1":
            return _l1(a, b)
        if self.distance == "l2":
            return _l2(a, b)
        return np.array([float(self.distance(u, v)) for u, v in zip(phi_a, phi_b)])
