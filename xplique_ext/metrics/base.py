"""The base every model-based metric of xplique_ext builds on.

It carries Xplique's interface (``model, inputs, targets, batch_size, operator,
activation``) and adds what Xplique's lacks: streamed ``tf.data.Dataset`` inputs, integer
class ids as targets, a single compiled and batched inference function, clear errors, a
``seed``, and NaN-aware aggregation with a warning.
"""

from __future__ import annotations

import abc
from typing import Any, Callable, Iterator, Optional, Tuple

import numpy as np
import tensorflow as tf

from ..commons.aggregation import nan_aware_mean  # re-exported: moved down to commons
from ..commons.data import chunks, dataset_is_batched, is_dataset, iterate_dataset
from ..commons.validation import check_choice, check_int, to_numpy

__all__ = ["BaseAttributionMetric", "default_operator", "nan_aware_mean"]

ACTIVATIONS = (None, "sigmoid", "softmax")


def default_operator(model: Callable, inputs: tf.Tensor, targets: tf.Tensor) -> tf.Tensor:
    """Xplique's standard operator g(f, x, y) = f(x)[y], i.e. ``sum(f(x) * y, -1)``."""
    outputs = model(inputs)
    return tf.reduce_sum(outputs * tf.cast(targets, outputs.dtype), axis=-1)


def _model_input_rank(model: Any) -> Optional[int]:
    try:
        shape = model.inputs[0].shape  # Keras functional / built models
        return len(shape)
    except (AttributeError, IndexError, TypeError, ValueError):
        return None


class BaseAttributionMetric(abc.ABC):
    """Base class of the model-based metrics: one score per input for given explanations.

    Parameters
    ----------
    model
        Model (Keras model or any callable on a batch of inputs) whose explanations are
        evaluated. Its output has shape (N, K).
    inputs
        Inputs under study: a NumPy array or tf.Tensor of shape (N, ...), or a
        ``tf.data.Dataset`` of ``x`` or ``(x, y)`` elements (batched or not), which is
        streamed batch by batch.
    targets
        One per input: one-hot vectors (N, K), integer class ids (N,), or regression
        targets (N,) / (N, K) such as {+1, -1} for a single-output model. None uses the
        model's predicted class (one-hot of the argmax; 1 for a single-output model).
    batch_size
        Number of inputs (or perturbed inputs) sent to the model at once. None sends
        everything at once.
    operator
        Function ``g(f, x, y)`` returning one scalar per sample. None uses Xplique's
        standard operator ``g(f, x, y) = f(x)[y] = sum(f(x) * y, -1)``.
    activation
        None, 'sigmoid' or 'softmax': applied to the model's output before the operator,
        to measure probabilities from a model that returns logits.
    seed
        Seed of the metric's randomness (if any). The same seed gives the same scores
        whatever the batch size; None draws fresh randomness at each evaluation.

    Attributes
    ----------
    higher_is_better : bool
        Score direction, declared by each metric.
    """

    higher_is_better: bool = True

    def __init__(
        self,
        model: Callable,
        inputs: Any,
        targets: Any = None,
        batch_size: Optional[int] = 64,
        *,
        operator: Optional[Callable] = None,
        activation: Optional[str] = None,
        seed: Optional[int] = None,
    ):
        if not callable(model):
            raise TypeError(f"`model` must be callable, got {type(model).__name__}")
        self.model = model
        self.batch_size = check_int(batch_size, "batch_size", minimum=1, allow_none=True)
        self.activation = check_choice(activation, "activation", ACTIVATIONS)
        if operator is not None and not callable(operator):
            raise TypeError(
                f"`operator` must be a callable g(f, x, y) or None, got {type(operator).__name__}"
            )
        self.operator = operator
        self.seed = check_int(seed, "seed", minimum=0, allow_none=True)

        if is_dataset(inputs):
            self.dataset = inputs
            self.inputs = None
            self._dataset_batched = dataset_is_batched(inputs, _model_input_rank(model))
            cardinality = None
            if not self._dataset_batched:
                card = int(inputs.cardinality())
                cardinality = card if card >= 0 else None
            self.n_inputs = cardinality
        else:
            self.dataset = None
            self.inputs = to_numpy(inputs, "inputs")
            if self.inputs.ndim < 2:
                raise ValueError(
                    "`inputs` must have a batch axis and at least one feature axis, "
                    f"got shape {self.inputs.shape}"
                )
            self.n_inputs = len(self.inputs)

        self.targets = None if targets is None else to_numpy(targets, "targets")
        if self.targets is not None:
            if self.targets.ndim not in (1, 2):
                raise ValueError(
                    "`targets` must have shape (N,) or (N, K), got shape "
                    f"{self.targets.shape}"
                )
            if self.n_inputs is not None and len(self.targets) != self.n_inputs:
                raise ValueError(
                    f"`targets` must hold one target per input: got {len(self.targets)} "
                    f"targets for {self.n_inputs} inputs"
                )

        self._n_outputs: Optional[int] = None
        self._score_fn = self._compile(self._score_graph)
        self._output_fn = self._compile(self._output_graph)

    # ------------------------------------------------------------------ inference
    def _activated_model(self, x: tf.Tensor) -> tf.Tensor:
        out = self.model(x)
        if self.activation == "sigmoid":
            out = tf.nn.sigmoid(out)
        elif self.activation == "softmax":
            out = tf.nn.softmax(out, axis=-1)
        return out

    def _score_graph(self, x: tf.Tensor, y: tf.Tensor) -> tf.Tensor:
        operator = self.operator or default_operator
        return operator(self._activated_model, x, y)

    def _output_graph(self, x: tf.Tensor) -> tf.Tensor:
        return self._activated_model(x)

    @staticmethod
    def _compile(fn: Callable) -> Callable:
        """Compile ``fn`` with tf.function; fall back to eager calls for models that
        cannot be traced (pure NumPy callables, for instance)."""
        compiled = tf.function(fn, reduce_retracing=True)
        state = {"eager": False}

        def call(*args):
            if not state["eager"]:
                try:
                    return compiled(*args)
                except (TypeError, NotImplementedError, ValueError,
                        tf.errors.OperatorNotAllowedInGraphError):
                    state["eager"] = True
            return fn(*args)

        return call

    def model_outputs(self, x: Any) -> np.ndarray:
        """The model's outputs (after ``activation``) for inputs ``x``, batched.

        Parameters
        ----------
        x
            Inputs of shape (B, ...).

        Returns
        -------
        outputs
            NumPy array of shape (B, K).
        """
        x = to_numpy(x, "x")
        parts = [
            np.asarray(self._output_fn(tf.convert_to_tensor(x[s])))
            for s in chunks(len(x), self.batch_size)
        ]
        out = np.concatenate(parts, axis=0) if parts else np.zeros((0,))
        return out.reshape(len(x), -1) if out.ndim == 1 else out

    def scores(self, x: Any, y: Any) -> np.ndarray:
        """The operator's score ``g(f, x, y)`` for each input, batched.

        Parameters
        ----------
        x
            Inputs of shape (B, ...).
        y
            Targets already formatted for the operator (see :meth:`format_targets`).

        Returns
        -------
        scores
            NumPy array of shape (B,).
        """
        x = to_numpy(x, "x")
        y = to_numpy(y, "y")
        parts = [
            np.asarray(self._score_fn(tf.convert_to_tensor(x[s]), tf.convert_to_tensor(y[s])))
            for s in chunks(len(x), self.batch_size)
        ]
        return np.concatenate(parts, axis=0).reshape(len(x)) if parts else np.zeros((0,))

    # ------------------------------------------------------------------ targets
    def n_outputs(self, x_example: np.ndarray) -> int:
        """Number of model outputs K, found once from one example."""
        if self._n_outputs is None:
            out = self.model_outputs(x_example[:1])
            self._n_outputs = int(np.prod(out.shape[1:])) if out.ndim > 1 else 1
        return self._n_outputs

    def format_targets(self, x: np.ndarray, y: Optional[np.ndarray]) -> np.ndarray:
        """Targets of a batch in the operator's format: (B, K) one-hot for class ids,
        (B, 1) for single-output regression, predicted classes when ``y`` is None."""
        k = self.n_outputs(x)
        if y is None:
            out = self.model_outputs(x)
            if k == 1:
                return np.ones((len(x), 1), dtype=np.float32)
            return np.eye(k, dtype=np.float32)[np.argmax(out.reshape(len(x), k), axis=-1)]
        y = np.asarray(y)
        if y.ndim == 2:
            if y.shape[1] != k:
                raise ValueError(
                    f"`targets` of shape (N, K) must have K = {k} columns to match the "
                    f"model's outputs, got {y.shape[1]}"
                )
            return y.astype(np.float32, copy=False)
        if k == 1:
            return y.reshape(-1, 1).astype(np.float32, copy=False)
        ids = y
        if ids.dtype.kind == "f" and np.all(ids == np.round(ids)):
            ids = ids.astype(np.int64)
        if ids.dtype.kind not in "iu":
            raise TypeError(
                "`targets` of shape (N,) must be integer class ids for a model with "
                f"{k} outputs, got dtype {y.dtype}"
            )
        if ids.size and (ids.min() < 0 or ids.max() >= k):
            raise ValueError(
                f"`targets` class ids must be in [0, {k - 1}], got values in "
                f"[{ids.min()}, {ids.max()}]"
            )
        return np.eye(k, dtype=np.float32)[ids]

    # ------------------------------------------------------------------ streaming
    def iter_batches(
        self, batch_size: Optional[int] = None
    ) -> Iterator[Tuple[int, np.ndarray, np.ndarray]]:
        """Stream the inputs with their formatted targets.

        Parameters
        ----------
        batch_size
            Batch size; defaults to the metric's ``batch_size``.

        Yields
        ------
        start, x, y
            Index of the batch's first input, inputs (B, ...) and targets formatted
            for the operator (B, K).
        """
        size = batch_size if batch_size is not None else self.batch_size
        if self.dataset is None:
            for s in chunks(self.n_inputs, size):
                y = None if self.targets is None else self.targets[s]
                yield s.start, self.inputs[s], self.format_targets(self.inputs[s], y)
            return
        start = 0
        for x, y in iterate_dataset(self.dataset, size, self._dataset_batched):
            if y is None and self.targets is not None:
                y = self.targets[start:start + len(x)]
                if len(y) != len(x):
                    raise ValueError(
                        "`targets` must hold one target per input: the dataset has more "
                        f"inputs than the {len(self.targets)} targets given"
                    )
            elif y is not None and self.targets is not None:
                raise ValueError(
                    "`targets` must be None when the `inputs` dataset yields (x, y) pairs"
                )
            yield start, x, self.format_targets(x, y)
            start += len(x)
        if self.targets is not None and start != len(self.targets):
            raise ValueError(
                f"`targets` must hold one target per input: got {len(self.targets)} "
                f"targets for {start} inputs"
            )
        self.n_inputs = start

    # ------------------------------------------------------------------ evaluation
    @abc.abstractmethod
    def detailed_evaluate(self, explanations: Any) -> np.ndarray:
        """One score per input, shape (N,); NaN where the score is undefined."""

    def evaluate(self, explanations: Any) -> float:
        """Aggregate score: the mean of :meth:`detailed_evaluate` over the inputs whose
        score is defined (an :class:`UndefinedScoreWarning` says how many were skipped)."""
        return nan_aware_mean(self.detailed_evaluate(explanations), type(self).__name__)

    def __call__(self, explanations: Any) -> float:
        """Alias of :meth:`evaluate`."""
        return self.evaluate(explanations)

