"""The bases of the metrics that score something other than given explanations, as
Xplique's ``metrics/base.py`` splits them:

* :class:`ExplainerMetric`: the metrics that take an explainer and call it themselves
  (``evaluate(explainer)``): :class:`~xplique_ext.metrics.AverageStability`, the
  randomization sanity checks, and in spirit :class:`~xplique_ext.metrics.MeGe`;
* :class:`BaseComplexityMetric`: the metrics that read the explanations only, with no
  model nor inputs (:class:`~xplique_ext.metrics.Complexity`,
  :class:`~xplique_ext.metrics.Sparseness`).

Both subclass the model-free :class:`~xplique_ext.commons.metric.BaseMetric`, so they keep
the package's contract (``detailed_evaluate`` per input, ``evaluate``, ``summary``,
``details``, ``get_config``). An explainer metric reaches its inputs, targets and model
through the engine of :class:`~xplique_ext.metrics.base.BaseAttributionMetric` (streamed
``tf.data`` inputs, targets as class ids, one-hot or None for the predicted class,
batched and compiled model calls, checked outputs), held as :attr:`ExplainerMetric.engine`.
"""

from __future__ import annotations

import abc
import copy
import numbers
from typing import Any, Callable, Dict, Iterator, Optional, Tuple

import numpy as np
import tensorflow as tf

from .. import runtime
from ..commons.metric import BaseMetric
from ..commons.params import ArrayLike, Interval, Options, check_param, validate_params
from ..commons.warnings import UndefinedScoreWarning, warn
from .base import BASE_PARAMETERS, BaseAttributionMetric, explanation_shapes

__all__ = [
    "ExplainerMetric",
    "EXPLAINER_PARAMETERS",
    "BaseComplexityMetric",
    "explain_function",
]

#: The declared constraints of :class:`ExplainerMetric`'s parameters, which every
#: explainer metric extends: ``@validate_params({**EXPLAINER_PARAMETERS, ...})``.
EXPLAINER_PARAMETERS = {
    "model": BASE_PARAMETERS["model"],
    "inputs": "no_validation",  # an array or a tf.data.Dataset: checked by the engine
    "targets": BASE_PARAMETERS["targets"],
    "batch_size": BASE_PARAMETERS["batch_size"],
    "activation": [Options((None, "sigmoid", "softmax"))],
    "seed": [Interval(numbers.Integral, 0, None), None],
    "strategy": BASE_PARAMETERS["strategy"],  # checked by the engine (resolve_strategy)
}


class ModelEngine(BaseAttributionMetric):
    """The engine of the model-based metrics (inputs, targets, streaming, batched and
    compiled model calls) without a score of its own: what an :class:`ExplainerMetric`
    reaches its data and its model through."""

    higher_is_better = True  # not a metric: never scored

    def detailed_evaluate(self, explanations: Any) -> np.ndarray:
        raise TypeError("the engine of an explainer metric scores nothing itself")


def explain_function(explainer: Any) -> Callable:
    """``explain(x, y)`` of an explainer given as Xplique accepts it: an object with an
    ``explain(inputs, targets)`` method (Xplique's explainers), or a callable
    ``explainer(inputs, targets)``. A TypeError names ``explainer`` otherwise."""
    method = getattr(explainer, "explain", None)
    if callable(method):
        return method
    if callable(explainer):
        return explainer
    raise TypeError(
        "`explainer` must be an explainer with an `explain(inputs, targets)` method "
        f"(Xplique's explainers) or a callable explainer(inputs, targets), got "
        f"{type(explainer).__name__}"
    )


class ExplainerMetric(BaseMetric):
    """Base class of the metrics that evaluate an explainer: ``evaluate(explainer)``.

    Parameters
    ----------
    model
        Model the explainer explains (a Keras model or any callable on a batch of
        inputs). The metric calls it only where it needs the model's outputs (the
        predicted class when ``targets`` is None).
    inputs
        Inputs under study: a NumPy array or tf.Tensor (N, ...), or a ``tf.data.Dataset``
        of ``x`` or ``(x, y)`` elements, streamed batch by batch.
    targets
        One per input: one-hot (N, K), integer class ids (N,), or regression targets.
        None uses the model's predicted class. The explainer receives them one-hot (or
        as given for regression), as Xplique's explainers expect.
    batch_size
        Number of inputs (or perturbed inputs) the explainer explains at once; None
        explains everything at once.
    activation
        None, 'sigmoid' or 'softmax', applied to the model's outputs where the metric
        calls the model.
    seed
        Seed of the metric's randomness, if any: each input's draws depend only on the
        seed and on the input's content, so the scores do not depend on the batch size
        or on the order of the inputs. None draws fresh randomness at each evaluation.
    strategy
        ``tf.distribute.Strategy`` on whose replicas the metric's own model calls run
        (the predicted classes, through the engine), as in
        :class:`~xplique_ext.metrics.base.BaseAttributionMetric`; None uses the strategy
        in scope when the metric is built (one device outside any scope). The
        explainer's own calls run wherever the explainer runs: the metric calls the
        explainer as it is and cannot distribute it.

    Attributes
    ----------
    engine
        The :class:`~xplique_ext.metrics.base.BaseAttributionMetric` engine that holds
        the inputs and the targets, streams them (:meth:`iter_batches`) and calls the
        model (:meth:`model_outputs`).
    strategy
        The resolved ``tf.distribute.Strategy`` of the engine's model calls.
    """

    _data_params = ("model", "inputs", "targets", "strategy")

    @validate_params(EXPLAINER_PARAMETERS)
    def __init__(
        self,
        model: Callable,
        inputs: Any,
        targets: Any = None,
        batch_size: Optional[int] = 64,
        *,
        activation: Optional[str] = None,
        seed: Optional[int] = None,
        strategy: Any = None,
    ):
        self.engine = ModelEngine(
            model, inputs, targets, batch_size, activation=activation, seed=seed, strategy=strategy
        )
        self.model = model
        self.inputs = self.engine.inputs  # None for a dataset: stream with iter_batches
        self.dataset = self.engine.dataset
        self.targets = targets
        self.batch_size = batch_size
        self.activation = activation
        self.seed = seed
        self.strategy = self.engine.strategy

    @abc.abstractmethod
    def detailed_evaluate(self, explainer: Any) -> np.ndarray:
        """One score per input, shape (N,); NaN where the score is undefined."""

    def iter_batches(self) -> Iterator[Tuple[int, np.ndarray, np.ndarray]]:
        """Stream the inputs with their targets (one-hot, or as given for regression),
        ``batch_size`` at a time: ``(start, x, y)``, see
        :meth:`~xplique_ext.metrics.base.BaseAttributionMetric.iter_batches`."""
        return self.engine.iter_batches()

    def model_outputs(self, x: Any) -> np.ndarray:
        """The model's outputs (after ``activation``) for inputs ``x``, batched and
        compiled through the engine: a NumPy array (B, K)."""
        return self.engine.model_outputs(x)

    def explain(self, explainer: Any, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """The explainer's explanations of inputs ``x`` for targets ``y``, ``batch_size``
        at a time, each batch checked (real numbers, one explanation per input of a shape
        the input allows, see :func:`check_explainer_output`), as a NumPy array (B, ...) in the explainer's dtype. As in Xplique, an explainer's
        ``explain`` method receives tf.Tensors, a plain function NumPy arrays. NaN or inf are kept: the metric
        makes the input's score NaN and says so (:meth:`undefined_where`)."""
        explain = explain_function(explainer)
        # as Xplique calls them: `explain` methods get tensors, plain functions arrays
        as_tensors = callable(getattr(explainer, "explain", None))
        size = self.batch_size or max(len(x), 1)
        parts = []
        for start in range(0, len(x), size):
            stop = start + size
            x_part = x[start:stop]
            y_part = y[start:stop]
            if as_tensors:
                out = explain(tf.convert_to_tensor(x_part), tf.convert_to_tensor(y_part))
            else:
                out = explain(x_part, y_part)
            parts.append(check_explainer_output(out, x_part, explainer))
        return np.concatenate(parts, axis=0)

    def undefined_where(self, scores: np.ndarray, causes: Dict[str, np.ndarray]) -> np.ndarray:
        """``scores`` with NaN where one of ``causes`` holds (``{reason: mask (N,)}``),
        and one UndefinedScoreWarning saying how many scores are undefined, and why."""
        undefined = np.zeros(len(scores), dtype=bool)
        why = []
        for reason, mask in causes.items():
            new = mask & ~undefined
            if new.any():
                why.append(f"{int(new.sum())} because {reason}")
            undefined |= mask
        if not undefined.any():
            return scores
        name = type(self).__name__
        warn(
            f"{name}: {int(undefined.sum())} of {len(scores)} scores are undefined, set to "
            f"NaN: {'; '.join(why)}.",
            UndefinedScoreWarning,
        )
        return np.where(undefined, np.nan, scores)

    def __deepcopy__(self, memo: dict) -> ExplainerMetric:
        """A copy that gives the same scores: settings, inputs and targets are copied; the
        model, the strategy and a streamed dataset are shared (the engine shares its
        compiled functions), as :class:`~xplique_ext.metrics.base.BaseAttributionMetric`
        does."""
        new = type(self).__new__(type(self))
        memo[id(self)] = new
        memo.setdefault(id(self.model), self.model)
        memo.setdefault(id(self.strategy), self.strategy)
        if self.dataset is not None:
            memo.setdefault(id(self.dataset), self.dataset)
        for name, value in copy.deepcopy(vars(self), memo).items():
            setattr(new, name, value)
        return new

    def __reduce_ex__(self, protocol: Any) -> Any:
        name = type(self).__name__
        raise TypeError(
            f"{name} cannot be pickled: it holds a model and compiled TensorFlow "
            "functions. Save `metric.get_config()` and rebuild it with "
            f"`{name}.from_config(config, model=..., inputs=..., ...)`"
        )


def check_explainer_output(out: Any, x: np.ndarray, explainer: Any) -> np.ndarray:
    """The explanations ``explainer`` returned for the batch of inputs ``x``, as a NumPy
    array in the explainer's dtype, once checked: a single array of real numbers, with
    one explanation per input, each of a per-input shape the inputs allow
    (:func:`~xplique_ext.metrics.base.explanation_shapes`: the input's own shape, and
    for images (H, W, C) also (H, W) and (H, W, 1)). NaN or inf are kept (the metric
    makes the input's score NaN and says so).

    Raises
    ------
    TypeError
        Several outputs (dict, tuple) or a non-numeric dtype.
    ValueError
        A wrong number of explanations or a wrong per-input shape; the message names the
        explainer and the shapes allowed.
    """
    phi = np.asarray(runtime.single_output(out, "explainer"))
    runtime.check_output_dtype(phi.dtype, "explainer")
    allowed = explanation_shapes(tuple(x.shape[1:]))
    batch = len(x)
    if phi.ndim == 0 or phi.shape[0] != batch or tuple(phi.shape[1:]) not in allowed:
        shapes = " or ".join(str((batch, *shape)) for shape in allowed)
        raise ValueError(
            f"`explainer` ({_explainer_name(explainer)}) must return one explanation per "
            f"input, of shape {shapes} for a batch of inputs of shape {x.shape}, got "
            f"shape {phi.shape}"
        )
    return phi


def _explainer_name(explainer: Any) -> str:
    """The explainer's name in the errors: its class, or a function's name."""
    if callable(getattr(explainer, "explain", None)):
        return type(explainer).__name__
    return getattr(explainer, "__name__", type(explainer).__name__)


def not_finite(phi: np.ndarray) -> np.ndarray:
    """Which explanations (N, ...) hold NaN or inf: a mask (N,)."""
    return ~np.isfinite(phi.reshape(len(phi), -1)).all(axis=1)


def explainer_targets(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Targets as an explainer receives them: in the inputs' floating dtype (float32 for
    integer inputs), as Xplique's explainers expect one-hot float targets."""
    dtype = x.dtype if x.dtype.kind == "f" else np.float32
    return np.asarray(y, dtype=dtype)


#: Explanations a model-free metric reads: real, finite numbers, one map per input, at least
#: one map of at least one feature.
EXPLANATIONS = [
    ArrayLike(
        "real",
        ndim=(2, 3, 4),
        shapes="(N, F), (N, H, W) or (N, H, W, C)",
        finite=True,
        nonempty=True,
    )
]


class BaseComplexityMetric(BaseMetric):
    """Base class of the metrics that read the explanations only (Xplique's
    ``BaseComplexityMetric``): no model, no inputs.

    Parameters
    ----------
    batch_size
        Number of explanations scored at once by :meth:`evaluate` (Xplique's default, 32);
        None scores them all at once. The scores do not depend on it.

    Notes
    -----
    A subclass writes :meth:`detailed_evaluate` (one score per explanation, shape (N,)).
    :meth:`evaluate` scores the explanations ``batch_size`` at a time, each batch given
    to :meth:`detailed_evaluate` as a ``tf.Tensor`` (as in Xplique), and averages the
    defined scores; explanations given as a ``tf.data.Dataset`` of batches are streamed
    that way.
    """

    @validate_params({"batch_size": [Interval(numbers.Integral, 1, None), None]})
    def __init__(self, batch_size: Optional[int] = 32):
        self.batch_size = batch_size

    @abc.abstractmethod
    def detailed_evaluate(self, explanations: Any) -> np.ndarray:
        """One score per explanation, shape (N,); NaN where the score is undefined."""

    def _scores_and_reasons(self, explanations: Any):
        """:meth:`detailed_evaluate` batch by batch (``batch_size`` explanations as a
        tf.Tensor), the scores concatenated, with the reasons of every batch."""
        scores = []
        reasons = []
        for batch in self._batches(explanations):
            batch_scores, batch_reasons = super()._scores_and_reasons(batch)
            scores.append(batch_scores.reshape(-1))
            reasons.extend(r for r in batch_reasons if r not in reasons)
        if not scores:
            return np.zeros(0), reasons
        return np.concatenate(scores), reasons

    def _batches(self, explanations: Any) -> Iterator[tf.Tensor]:
        if runtime.is_dataset(explanations):
            empty = True
            for batch in explanations:
                empty = False
                yield tf.convert_to_tensor(batch)
            if empty:
                raise ValueError(
                    "`explanations` must hold at least one explanation, got an empty dataset"
                )
            return
        phi = check_param(explanations, "explanations", EXPLANATIONS)
        size = self.batch_size or max(len(phi), 1)
        for start in range(0, len(phi), size):
            yield tf.convert_to_tensor(phi[start : start + size])
