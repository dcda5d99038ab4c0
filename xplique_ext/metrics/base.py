"""The base every model-based metric of xplique_ext builds on.

It carries Xplique's interface (``model, inputs, targets, batch_size, operator,
activation``) and adds what Xplique's lacks: streamed ``tf.data.Dataset`` inputs, integer
class ids as targets, a single compiled and batched inference function, clear errors, a
``seed``, and NaN-aware aggregation with a warning.
"""

from __future__ import annotations

import abc
import copy
import enum
import numbers
import types
import weakref
from typing import Any, Callable, Iterator, Optional, Tuple, Union

import numpy as np
import tensorflow as tf

from ..commons.data import (
    check_finite_dataset,
    chunks,
    dataset_is_batched,
    is_dataset,
    iterate_dataset,
)
from ..commons.distribute import (
    compiled_function,
    replicated,
    resolve_strategy,
    shared_functions,
)
from ..commons.metric import BaseMetric, nan_aware_mean
from ..commons.outputs import (
    assert_batch_graph,
    check_output_dtype,
    check_outputs,
    model_output_errors,
    single_output,
)
from ..commons.params import (
    NO_VALIDATION,
    ArrayLike,
    Callable_,
    Interval,
    Options,
    check_param,
    validate_params,
)
from ..commons.validation import to_numpy

__all__ = ["BaseAttributionMetric", "BASE_PARAMETERS", "default_operator", "nan_aware_mean", "resolve_operator"]

ACTIVATIONS = (None, "sigmoid", "softmax")

#: The declared constraints of :class:`BaseAttributionMetric`'s parameters, which every
#: model-based metric extends: ``@validate_params({**BASE_PARAMETERS, ...})``.
#: ``inputs`` (an array or a tf.data.Dataset, checked against the model's input rank),
#: ``operator`` (:func:`resolve_operator`) and ``strategy`` are checked further in.
#: ``targets``: numbers, finite (NaN targets are refused as targets, never blamed on the
#: model's scores); also checked batch by batch for (x, y) datasets.
TARGETS = ArrayLike("numeric", ndim=(1, 2), shapes="(N,) or (N, K)", batch_hint=False,
                    finite=True)
BASE_PARAMETERS = {
    "model": [Callable_()],
    "inputs": NO_VALIDATION,
    "targets": [TARGETS, None],
    "batch_size": [Interval(numbers.Integral, 1, None), None],
    "operator": NO_VALIDATION,
    "activation": [Options(ACTIVATIONS)],
    "seed": [Interval(numbers.Integral, 0, None), None],
    "strategy": NO_VALIDATION,
}
# Xplique's task names (``xplique.commons.Tasks.from_string``); classification and
# regression both use the prediction operator f(x)[y] there, as here
OPERATOR_NAMES = (
    "classification",
    "regression",
    "semantic segmentation",
    "object detection",
    "object detection box position",
    "object detection box proba",
    "object detection box class",
)


def default_operator(model: Callable, inputs: tf.Tensor, targets: tf.Tensor) -> tf.Tensor:
    """Xplique's standard operator g(f, x, y) = f(x)[y], i.e. ``sum(f(x) * y, -1)``."""
    outputs = model(inputs)
    return tf.reduce_sum(outputs * tf.cast(targets, outputs.dtype), axis=-1)


def resolve_operator(operator: Any) -> Optional[Callable]:
    """The operator function for ``operator`` given as Xplique accepts it.

    Parameters
    ----------
    operator
        None (the default operator f(x)[y]); one of Xplique's task names
        ('classification', 'regression', 'semantic segmentation', 'object detection',
        'object detection box position', 'object detection box proba',
        'object detection box class'); a member of Xplique's ``Tasks`` enum; or a callable
        ``g(f, x, y)`` returning one score per input.

    Returns
    -------
    operator
        None for the default operator, else a callable ``g(f, x, y)``.
    """
    if operator is None:
        return None
    if isinstance(operator, str):
        name = operator.strip().lower().replace("_", " ")
        if name not in OPERATOR_NAMES:
            raise ValueError(
                f"`operator` must be a callable g(f, x, y), one of Xplique's task names "
                f"{list(OPERATOR_NAMES)} or a member of xplique's Tasks, got {operator!r}"
            )
        if name in ("classification", "regression"):
            return None
        try:
            from xplique.commons import Tasks
        except ImportError:
            raise ValueError(
                f"`operator`={operator!r} uses Xplique's operator for that task: install "
                "the `xplique` extra (pip install xplique-ext[xplique]) or pass a callable"
            ) from None
        return resolve_operator(Tasks.from_string(name))
    if isinstance(operator, enum.Enum):  # a Tasks member, in Xplique versions where it is one
        operator = operator.value
    if not callable(operator):
        raise TypeError(
            "`operator` must be a callable g(f, x, y), one of Xplique's task names or a "
            f"member of xplique's Tasks, or None, got {type(operator).__name__}"
        )
    return operator


def _model_input_rank(model: Any) -> Optional[int]:
    """Rank of the model's input (batch axis included) when the model declares it."""
    try:
        shape = model.inputs[0].shape  # Keras functional / built models
        return len(shape)
    except (AttributeError, IndexError, TypeError, ValueError):
        return None


def _model_n_inputs(model: Any) -> int:
    try:
        return len(model.inputs)
    except (AttributeError, TypeError, ValueError):
        return 1


def _check_not_multi_input(model: Any, inputs: Any) -> None:
    """Multi-input models are not supported: say so rather than fail later."""
    n = _model_n_inputs(model)
    if n > 1:
        raise TypeError(
            f"`model` has {n} inputs; multi-input models are not supported by "
            "xplique_ext's metrics (nor by Xplique's): wrap the model so that it takes a "
            "single array of shape (N, ...)"
        )
    if isinstance(inputs, (list, tuple)) and len(inputs) > 1:
        items = [i for i in inputs if isinstance(i, np.ndarray) or hasattr(i, "numpy")]
        if len(items) == len(inputs):
            shapes = {tuple(np.shape(i)) for i in items}
            if len(shapes) > 1:
                raise TypeError(
                    f"`inputs` must be a single array of shape (N, ...), got a list of "
                    f"{len(inputs)} arrays of shapes {sorted(shapes)}; multi-input "
                    "models are not supported"
                )


def _check_batch_axis(inputs: np.ndarray, rank: Optional[int], name: str = "inputs") -> None:
    """Compare the rank of ``inputs`` (batch axis included) with the model's input rank."""
    if rank is None or inputs.dtype.kind == "O":
        return
    if inputs.ndim == rank - 1:
        raise ValueError(
            f"`{name}` must have a batch axis: the model takes inputs of rank {rank} "
            f"(batch axis included), got a single item of shape {inputs.shape}; pass "
            f"`{name}[None]` (shape {(1,) + inputs.shape}) to evaluate one input"
        )
    if inputs.ndim != rank:
        raise ValueError(
            f"`{name}` must have rank {rank} (batch axis included) to match the model's "
            f"input, got shape {inputs.shape}"
        )


def _check_numeric(x: np.ndarray, name: str) -> None:
    if x.dtype.kind not in "biuf":
        raise TypeError(
            f"`{name}` must hold numbers (bool, integer or float dtype), got dtype {x.dtype}"
        )


def _activated(model: Callable, activation: Optional[str], x: tf.Tensor) -> tf.Tensor:
    """``model(x)`` as (B, K), after ``activation``: the one place where the metrics call
    the model. Every call (every batch, in graphs as eagerly) checks that the model
    returned a single output (not a dict nor a tuple), of real numbers, with one row per
    input; integer outputs go to float64, floating ones keep their dtype."""
    out = single_output(model(x))
    if not tf.is_tensor(out):  # a NumPy callable
        arr = np.asarray(out)
        check_output_dtype(arr.dtype)
        out = tf.convert_to_tensor(arr)
    check_output_dtype(out.dtype)
    if out.dtype.is_integer:
        out = tf.cast(out, tf.float64)
    out = assert_batch_graph(out, x)
    try:
        rank = len(out.shape)
    except (AttributeError, TypeError, ValueError):  # no shape, or an unknown rank
        rank = None
    if rank == 1:
        out = out[:, None]  # (B,) is one output per input: (B, 1), never broadcast
    if activation == "sigmoid":
        out = tf.nn.sigmoid(out)
    elif activation == "softmax":
        out = tf.nn.softmax(out, axis=-1)
    return out


def _score(model: Callable, operator: Optional[Callable], activation: Optional[str],
           x: tf.Tensor, y: tf.Tensor) -> tf.Tensor:
    """The operator's score ``g(f, x, y)``, ``f`` being the activated model."""
    return (operator or default_operator)(lambda z: _activated(model, activation, z), x, y)


def _compile(fn: Callable) -> Callable:
    """Compile ``fn`` with tf.function; fall back to eager calls for models that cannot be
    traced (pure NumPy callables, for instance)."""
    compiled = compiled_function(fn)
    state = {"eager": False}

    def call(*args):
        if not state["eager"]:
            try:
                return compiled(*args)
            except (TypeError, NotImplementedError, ValueError,
                    tf.errors.OperatorNotAllowedInGraphError):
                # a genuine error (bad shapes...) raises again here and leaves the
                # function compiled for the next calls (it may be shared)
                out = fn(*args)
                state["eager"] = True
                return out
        return fn(*args)

    return call


def score_graph_of(live: Callable, activation: Optional[str]) -> Callable:
    """``score(x, y)``: the operator's score of the activated model, for functions
    shared between metrics; ``live()`` gives ``(model, operator, ...)``."""

    def score(x, y):
        model, operator = live()[:2]
        return _score(model, operator, activation, x, y)

    return score


def _model_functions(live: Callable, activation: Optional[str], strategy: Any) -> tuple:
    """The compiled (score, outputs) functions of a model, operator and activation."""
    score = score_graph_of(live, activation)

    def outputs(x):
        return _activated(live()[0], activation, x)

    return (replicated(score, strategy, _compile(score)),
            replicated(outputs, strategy, _compile(outputs)))


class BaseAttributionMetric(BaseMetric):
    """Base class of the model-based metrics: one score per input for given explanations.

    Parameters
    ----------
    model
        Model (Keras model or any callable on a batch of inputs) whose explanations are
        evaluated. Its output has shape (N, K), or (N,) for a single output (read as
        (N, 1), never broadcast). Every call (every batch, also inside compiled graphs)
        checks a single output (a dict, a tuple or several outputs are a TypeError), of
        real numbers, with one row per input; scores keep the model's dtype or go to
        float64, never down to float32. Multi-input models are not supported.
    inputs
        Inputs under study, with a batch axis (checked against the model's input rank
        when the model declares it): a NumPy array or tf.Tensor of shape (N, ...), or a
        ``tf.data.Dataset`` of ``x`` or ``(x, y)`` elements (batched or not), which is
        streamed batch by batch.
    targets
        One per input: one-hot vectors (N, K), integer class ids (N,), or regression
        targets (N,) / (N, K) such as {+1, -1} for a single-output model. None uses the
        model's predicted class (one-hot of the argmax; 1 for a single-output model; a
        ValueError where the model's output is NaN/inf). Numbers only, finite: strings or
        NaN are a TypeError / ValueError naming `targets`.
    batch_size
        Number of inputs (or perturbed inputs) sent to the model at once. None sends
        everything at once.
    operator
        Function ``g(f, x, y)`` returning one scalar per sample, shape (B,). None uses
        Xplique's standard operator ``g(f, x, y) = f(x)[y] = sum(f(x) * y, -1)``. As in
        Xplique, also one of Xplique's task names ('classification', 'regression', ...)
        or a member of ``xplique.commons.Tasks``.
    activation
        None, 'sigmoid' or 'softmax': applied to the model's output before the operator,
        to measure probabilities from a model that returns logits.
    seed
        Seed of the metric's randomness (if any). The same seed gives the same scores
        whatever the batch size; None draws fresh randomness at each evaluation.
    strategy
        ``tf.distribute.Strategy`` whose replicas share every batch of model calls
        (``MirroredStrategy``: several devices of one host; ``MultiWorkerMirroredStrategy``:
        several hosts). None uses the strategy in scope when the metric is built
        (``tf.distribute.get_strategy()``): one device outside any scope. Scores come
        back in input order and equal the single-device ones up to float round-off.

    Attributes
    ----------
    higher_is_better : bool
        Score direction, declared by each metric.

    Notes
    -----
    ``copy.deepcopy(metric)`` gives a metric with the same scores that owns its inputs and
    targets and shares the model, operator, strategy, dataset and compiled functions.
    ``pickle.dumps(metric)`` raises a TypeError: save :meth:`get_config` instead.
    """

    _data_params = ("model", "inputs", "targets", "operator", "strategy")

    @validate_params(BASE_PARAMETERS)
    def __init__(
        self,
        model: Callable,
        inputs: Any,
        targets: Any = None,
        batch_size: Optional[int] = 64,
        *,
        operator: Union[None, str, Callable] = None,
        activation: Optional[str] = None,
        seed: Optional[int] = None,
        strategy: Any = None,
    ):
        self.model = model
        self.batch_size = batch_size
        self.activation = activation
        self.operator = resolve_operator(operator)
        self.seed = seed
        _check_not_multi_input(model, inputs)

        if is_dataset(inputs):
            check_finite_dataset(inputs, "inputs")
            self.dataset = inputs
            self.inputs = None
            rank = _model_input_rank(model)
            spec = inputs.element_spec
            if isinstance(spec, dict):
                raise TypeError(
                    "`inputs` dataset elements must be `x` or `(x, y)` tensors, got dicts "
                    f"with keys {sorted(spec)}; map the dataset to tuples first, e.g. "
                    "`ds.map(lambda d: (d['image'], d['label']))`"
                )
            spec = spec[0] if isinstance(spec, (tuple, list)) else spec
            if isinstance(spec, dict):
                raise TypeError(
                    "`inputs` dataset elements must be `x` or `(x, y)` tensors, got an `x` "
                    f"that is a dict with keys {sorted(spec)} (multi-input models are not "
                    "supported); map the dataset to single tensors first"
                )
            if int(inputs.cardinality()) == 0:
                raise ValueError("`inputs` must hold at least one input, got an empty dataset")
            self._dataset_batched = dataset_is_batched(inputs, rank)
            element_rank = getattr(getattr(spec, "shape", None), "rank", None)
            if rank is not None and element_rank is not None and element_rank not in (
                rank, rank - 1
            ):
                raise ValueError(
                    f"`inputs` dataset elements must have rank {rank} (a batch) or "
                    f"{rank - 1} (one input) to match the model's input, got elements of "
                    f"shape {tuple(spec.shape)}"
                )
            cardinality = None
            if not self._dataset_batched:
                card = int(inputs.cardinality())
                cardinality = card if card >= 0 else None
            self.n_inputs = cardinality
        else:
            self.dataset = None
            self.inputs = to_numpy(inputs, "inputs")
            _check_batch_axis(self.inputs, _model_input_rank(model))
            if self.inputs.ndim < 2:
                raise ValueError(
                    "`inputs` must have a batch axis and at least one feature axis, "
                    f"got shape {self.inputs.shape}"
                )
            self.n_inputs = len(self.inputs)

        self.targets = targets  # an ndarray (N,) or (N, K), or None: declared above
        if self.targets is not None:
            if self.n_inputs is not None and len(self.targets) != self.n_inputs:
                raise ValueError(
                    f"`targets` must hold one target per input: got {len(self.targets)} "
                    f"targets for {self.n_inputs} inputs"
                )

        self._n_outputs: Optional[int] = None
        self.strategy = resolve_strategy(strategy)
        self._score_fn, self._output_fn = self._shared("model", (), _model_functions)

    # ------------------------------------------------------------------ copies
    def _is_shared_on_copy(self, value: Any) -> bool:
        """What a copy shares with the original instead of copying: the model, the
        operator, the strategy, a streamed dataset and the compiled functions (callables,
        strategies, datasets, TensorFlow modules and weak references), as
        :func:`copy.deepcopy` shares functions and classes. Bound methods of the metric
        are rebound to the copy."""
        if isinstance(value, types.MethodType):
            return False
        return (
            callable(value)
            or isinstance(value, (tf.distribute.Strategy, tf.Module, weakref.ReferenceType))
            or is_dataset(value)
        )

    def __copy__(self) -> BaseAttributionMetric:
        new = type(self).__new__(type(self))
        new.__dict__.update(self.__dict__)
        return new

    def __deepcopy__(self, memo: dict) -> BaseAttributionMetric:
        """A copy that gives the same scores: settings, inputs and targets are copied; the
        model, operator, strategy, dataset and compiled functions are shared (see
        :meth:`_is_shared_on_copy`)."""
        new = type(self).__new__(type(self))
        memo[id(self)] = new
        for value in self.__dict__.values():
            if self._is_shared_on_copy(value):
                memo.setdefault(id(value), value)
        for name, value in self.__dict__.items():
            new.__dict__[name] = copy.deepcopy(value, memo)
        return new

    def __reduce_ex__(self, protocol: Any) -> Any:
        name = type(self).__name__
        raise TypeError(
            f"{name} cannot be pickled: it holds a model, compiled TensorFlow functions and "
            "a tf.distribute strategy, which pickle cannot store. Save "
            f"`metric.get_config()` (JSON-friendly settings) and rebuild it with "
            f"`{name}.from_config(config, model=..., inputs=..., ...)`; "
            "`copy.deepcopy(metric)` copies it in memory"
        )

    # ------------------------------------------------------------------ inference
    def _shared(self, name: str, static: tuple, build: Callable) -> Any:
        """Compiled functions shared by every metric with the same model, operator,
        strategy and activation, and the same ``static`` configuration: a second metric
        on a model reuses the traced graphs of the first (no retracing).
        ``build(live, activation, strategy)`` makes them; ``live()`` gives
        ``(model, operator, strategy)``, which they must not hold (weak references)."""
        return shared_functions(
            (self.model, self.operator, self.strategy),
            (name, self.activation) + tuple(static),
            lambda live: build(live, self.activation, self.strategy),
        )

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
        _check_numeric(x, "inputs")
        parts = []
        for s in chunks(len(x), self.batch_size):
            with model_output_errors():
                out = self._output_fn(tf.convert_to_tensor(x[s]))
            parts.append(check_outputs(out, s.stop - s.start, offset=s.start))
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
        _check_numeric(x, "inputs")
        y = to_numpy(y, "y")
        parts = []
        for s in chunks(len(x), self.batch_size):
            with model_output_errors():
                out = self._score_fn(tf.convert_to_tensor(x[s]), tf.convert_to_tensor(y[s]))
            out = np.asarray(single_output(out, "operator"))
            check_output_dtype(out.dtype, "operator")
            self.check_operator_output(out, s.stop - s.start)
            parts.append(out.reshape(-1))
        return np.concatenate(parts, axis=0) if parts else np.zeros((0,))

    @staticmethod
    def check_operator_output(out: Any, batch: int) -> None:
        """Raise a ValueError unless the operator returned one score per input: shape
        (B,) or (B, 1)."""
        shape = tuple(np.shape(out))
        if shape not in ((batch,), (batch, 1)):
            raise ValueError(
                f"`operator` must return one score per input, shape ({batch},) for a batch "
                f"of {batch} inputs, got shape {shape}; an operator returning (B, K) must "
                "reduce over the outputs, e.g. tf.reduce_sum(f(x) * y, axis=-1)"
            )

    # ------------------------------------------------------------------ targets
    @staticmethod
    def _check_target_values(y: np.ndarray) -> np.ndarray:
        """A batch of targets (from an (x, y) dataset) against the declared constraint:
        numbers, finite (TypeError / ValueError naming `targets`)."""
        return check_param(y, "targets", [TARGETS])

    @staticmethod
    def _float_targets(y: np.ndarray) -> np.ndarray:
        """Targets in floating point: float64 targets stay float64 (never cast down)."""
        return y if y.dtype.kind == "f" and y.itemsize >= 4 else y.astype(np.float32)

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
            if k == 1:
                return np.ones((len(x), 1), dtype=np.float32)
            out = self.model_outputs(x).reshape(len(x), k)
            bad = ~np.isfinite(out).all(axis=1)
            if bad.any():
                raise ValueError(
                    "`targets` is None, so the target is the model's predicted class, but "
                    f"`model` returned NaN or inf for {int(bad.sum())} of the {len(x)} "
                    "inputs of a batch: their predicted class is undefined; pass `targets`"
                )
            return np.eye(k, dtype=np.float32)[np.argmax(out, axis=-1)]
        y = self._check_target_values(np.asarray(y))
        if y.ndim == 2:
            if y.shape[1] != k:
                raise ValueError(
                    f"`targets` of shape (N, K) must have K = {k} columns to match the "
                    f"model's outputs, got {y.shape[1]}"
                )
            return self._float_targets(y)
        if k == 1:
            return self._float_targets(y.reshape(-1, 1))
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

