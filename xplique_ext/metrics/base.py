"""The base every model-based metric of xplique_ext builds on: :class:`BaseAttributionMetric`,
the model-based subclass of :class:`~xplique_ext.commons.metric.BaseMetric`. One base module
per floor: ``commons/metric.py`` holds the contract of every metric, with or without a
model; this module holds what a model adds, and how a metric reaches it
(:class:`ModelObjects`, :class:`ModelFunctions`, :meth:`BaseAttributionMetric._model_functions`).

It carries Xplique's interface (``model, inputs, targets, batch_size, operator,
activation``) and adds what Xplique's lacks: streamed ``tf.data.Dataset`` inputs, integer
class ids as targets, a single compiled and batched inference function, clear errors, a
``seed``, and NaN-aware aggregation with a warning.
"""

from __future__ import annotations

import abc
import copy
import enum
import functools
import numbers
import types
import weakref
from typing import Any, Callable, Iterator, NamedTuple, Optional, Tuple, Union

import numpy as np
import tensorflow as tf

from .. import runtime
from ..commons.metric import BaseMetric
from ..commons.params import ArrayLike, Callable_, Interval, Options, check_param, validate_params

__all__ = [
    "BaseAttributionMetric",
    "ExplanationMetric",
    "BASE_PARAMETERS",
    "ModelObjects",
    "ModelFunctions",
    "resolve_operator",
    "score_function",
    "checked_operator_scores",
    "explanation_shapes",
    "check_explanations",
    "ExplainedBatch",
]

#: The declared constraints of :class:`BaseAttributionMetric`'s parameters, which every
#: model-based metric extends: ``@validate_params({**BASE_PARAMETERS, ...})``.
#: ``inputs`` (an array or a tf.data.Dataset, checked against the model's input rank),
#: ``operator`` (:func:`resolve_operator`) and ``strategy`` are checked further in.
#: ``targets``: numbers, finite (NaN targets are refused as targets, never blamed on the
#: model's scores); also checked batch by batch for (x, y) datasets.
INPUTS = [ArrayLike("numeric")]
TARGETS = ArrayLike("numeric", ndim=(1, 2), shapes="(N,) or (N, K)", batch_hint=False, finite=True)
BASE_PARAMETERS = {
    "model": [Callable_()],
    "inputs": "no_validation",
    "targets": [TARGETS, None],
    "batch_size": [Interval(numbers.Integral, 1, None), None],
    "operator": "no_validation",
    "activation": [Options((None, "sigmoid", "softmax"))],
    "seed": [Interval(numbers.Integral, 0, None), None],
    "strategy": "no_validation",
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
    if isinstance(operator, str):
        name = operator.strip().lower().replace("_", " ")
        check_param(
            name if name in OPERATOR_NAMES else operator,
            "operator",
            [
                Options(
                    OPERATOR_NAMES,
                    f"a callable g(f, x, y), one of Xplique's task names "
                    f"{list(OPERATOR_NAMES)} or a member of xplique's Tasks",
                )
            ],
        )
        if name in ("classification", "regression"):
            return None
        try:
            from xplique.commons import Tasks
        except ImportError:
            raise ValueError(
                f"`operator`={operator!r} uses Xplique's operator for that task: "
                "install the `xplique` extra (pip install xplique-ext[xplique]) or "
                "pass a callable"
            ) from None
        operator = Tasks.from_string(name)
    if isinstance(operator, enum.Enum):  # a Tasks member, in Xplique versions where it is one
        operator = operator.value
    if operator is not None and not callable(operator):
        raise TypeError(
            "`operator` must be a callable g(f, x, y), one of Xplique's task names or "
            f"a member of xplique's Tasks, or None, got {type(operator).__name__}"
        )
    return operator


def _model_input_rank(model: Any, inputs: Any) -> Optional[int]:
    """Rank of the model's input (batch axis included) when the model declares it (Keras
    functional or built models). Multi-input models are not supported: say so rather than
    fail later."""
    try:
        ranks = [len(i.shape) for i in model.inputs]
    except (AttributeError, TypeError, ValueError):
        ranks = []
    if len(ranks) > 1:
        raise TypeError(
            f"`model` has {len(ranks)} inputs; multi-input models are not supported "
            "by xplique_ext's metrics (nor by Xplique's): wrap the model so that it "
            "takes a single array of shape (N, ...)"
        )
    if (
        isinstance(inputs, (list, tuple))
        and len(inputs) > 1
        and all(isinstance(i, np.ndarray) or hasattr(i, "numpy") for i in inputs)
    ):
        shapes = {tuple(np.shape(i)) for i in inputs}
        if len(shapes) > 1:
            raise TypeError(
                f"`inputs` must be a single array of shape (N, ...), got a list of "
                f"{len(inputs)} arrays of shapes {sorted(shapes)}; multi-input "
                "models are not supported"
            )
    return ranks[0] if ranks else None


def _model_item_shape(model: Any) -> Optional[tuple]:
    """The shape of one input of the model (no batch axis; None for a free size) when the
    model declares it (Keras functional or built models, a single input)."""
    try:
        return tuple(model.inputs[0].shape[1:])
    except (AttributeError, TypeError, ValueError, IndexError):
        return None


def _is_one_item(inputs: np.ndarray, item_shape: Optional[tuple]) -> bool:
    """Whether ``inputs`` has the shape of one input of the model (its free sizes match
    any size); False when the model does not declare its input shape."""
    if item_shape is None or len(item_shape) != inputs.ndim:
        return False
    return all(want is None or want == got for want, got in zip(item_shape, inputs.shape))


def _check_array_inputs(
    inputs: np.ndarray, rank: Optional[int], item_shape: Optional[tuple] = None
) -> None:
    """A batch axis and at least one feature axis; the model's input rank (batch axis
    included) when the model declares it. Missing the batch axis is named as such only
    when ``inputs`` has the model's per-input shape ``item_shape``; otherwise the error
    gives the rank and the per-input shape the model expects."""
    if rank is not None and inputs.ndim == rank - 1 and _is_one_item(inputs, item_shape):
        raise ValueError(
            f"`inputs` must have a batch axis: the model takes inputs of rank {rank} "
            f"(batch axis included), got a single item of shape {inputs.shape}; pass "
            f"`inputs[None]` (shape {(1,) + inputs.shape}) to evaluate one input"
        )
    if rank is not None and inputs.ndim != rank:
        expected = ""
        if item_shape is not None:
            expected = f" of shape (N, {', '.join(map(str, item_shape))})"
        raise ValueError(
            f"`inputs` must have rank {rank} (batch axis included) to match the "
            f"model's input{expected}, got shape {inputs.shape}"
        )
    if inputs.ndim < 2 or 0 in inputs.shape[1:]:
        raise ValueError(
            "`inputs` must have a batch axis and at least one feature axis, none "
            f"of size 0, got shape {inputs.shape}"
        )


def _dataset_layout(dataset: Any, rank: Optional[int]) -> Tuple[bool, Optional[int]]:
    """Check an ``inputs`` dataset (finite, non-empty, ``x`` or ``(x, y)`` tensors of the
    model's rank); return whether its elements are batches, and its number of inputs
    when known."""
    runtime.check_finite_dataset(dataset, "inputs")
    spec = dataset.element_spec
    x_spec = spec[0] if isinstance(spec, (tuple, list)) else spec
    if isinstance(x_spec, dict):
        what = "dicts" if x_spec is spec else "an `x` that is a dict"
        raise TypeError(
            f"`inputs` dataset elements must be `x` or `(x, y)` tensors, got {what} with keys "
            f"{sorted(x_spec)} (multi-input models are not supported); map the dataset to "
            "tuples of single tensors first, e.g. `ds.map(lambda d: (d['image'], d['label']))`"
        )
    cardinality = int(dataset.cardinality())
    if cardinality == 0:
        raise ValueError("`inputs` must hold at least one input, got an empty dataset")
    element_rank = getattr(getattr(x_spec, "shape", None), "rank", None)
    batched = runtime.dataset_is_batched(dataset, rank)
    if rank is not None and element_rank is not None and element_rank != rank - 1 + batched:
        raise ValueError(
            f"`inputs` dataset elements must have rank {rank} (a batch) or {rank - 1} (one "
            f"input) to match the model's input, got elements of shape {tuple(x_spec.shape)}"
        )
    known_size = not batched and cardinality >= 0
    return batched, cardinality if known_size else None


def _activated(model: Callable, activation: Optional[str], x: tf.Tensor) -> tf.Tensor:
    """``model(x)`` as (B, K), after ``activation``: the one place where the metrics call
    the model. Every call (every batch, in graphs as eagerly) checks that the model
    returned a single output (not a dict nor a tuple), of real numbers, with one row per
    input; integer outputs go to float64, floating ones keep their dtype."""
    out = runtime.single_output(model(x))
    out = out if tf.is_tensor(out) else np.asarray(out)  # a NumPy callable
    runtime.check_output_dtype(out.dtype)
    out = tf.convert_to_tensor(out)
    if out.dtype.is_integer:
        out = tf.cast(out, tf.float64)
    out = runtime.assert_batch_graph(out, x)
    if out.shape.rank == 1:
        out = out[:, None]  # (B,) is one output per input: (B, 1), never broadcast
    if activation == "sigmoid":
        return tf.nn.sigmoid(out)
    return tf.nn.softmax(out, axis=-1) if activation == "softmax" else out


def explanation_shapes(input_shape: tuple, series_maps: bool = False) -> list:
    """The per-input shapes an explanation may have for inputs of per-input shape
    ``input_shape``: the input's own shape; for images (H, W, C) also (H, W) and
    (H, W, 1); with ``series_maps``, for time series (T, F) also (T,)."""
    allowed = [tuple(input_shape)]
    if len(input_shape) == 3:
        allowed += [tuple(input_shape[:2]), tuple(input_shape[:2]) + (1,)]
    if series_maps and len(input_shape) == 2:
        allowed.append(tuple(input_shape[:1]))
    return list(dict.fromkeys(allowed))


def check_explanations(explanations: Any, allowed: list, n_inputs: Optional[int]) -> np.ndarray:
    """``explanations`` as a real, finite array with one explanation per input (when
    ``n_inputs`` is known) of one of the per-input shapes ``allowed``; a ValueError or
    TypeError naming `explanations` otherwise."""
    phi = check_param(
        explanations,
        "explanations",
        [
            ArrayLike(
                "real", ndim=sorted({len(s) + 1 for s in allowed}), finite=True, batch_hint=False
            )
        ],
    )
    if n_inputs is not None and len(phi) != n_inputs:
        raise ValueError(
            "`explanations` must hold one explanation per input: got "
            f"{len(phi)} explanations for {n_inputs} inputs"
        )
    if tuple(phi.shape[1:]) not in allowed:
        raise ValueError(
            f"`explanations` must have one of the per-input shapes {allowed}, "
            f"got {tuple(phi.shape[1:])}"
        )
    return phi


class ExplainedBatch(NamedTuple):
    """One batch of :meth:`BaseAttributionMetric.explained_batches`."""

    #: index of the batch's first input
    start: int
    #: inputs (B, ...)
    x: np.ndarray
    #: targets formatted for the operator (B, K)
    y: np.ndarray
    #: the explanations of these inputs (B, ...)
    phi: np.ndarray


class ModelObjects(NamedTuple):
    """What a metric's compiled functions reach, by identity (the key of the shared
    compiled functions, see :func:`~xplique_ext.runtime.shared_functions`): inside a
    compiled function, ``live()`` returns them, held through weak references."""

    model: Callable
    operator: Optional[Callable]
    strategy: Any


class ModelFunctions(NamedTuple):
    """The compiled functions every model-based metric gets (see
    :meth:`BaseAttributionMetric._model_functions`)."""

    #: ``score(x, y)``: the operator's score of each input (B,)
    score: Callable
    #: ``outputs(x)``: the activated model's outputs (B, K)
    outputs: Callable


#: The per-input shapes an operator's score may have, and their wording in the errors
OPERATOR_TRAILING = [(), (1,)]
OPERATOR_EXPECTED = (
    "shape (B,) or (B, 1) (an operator returning (B, K) must reduce over the outputs, "
    "e.g. tf.reduce_sum(f(x) * y, axis=-1))"
)


def _shape_words(shape: tf.TensorShape) -> str:
    """A tensor's static shape as a tuple, an unknown size written ``None``."""
    return str(tuple(shape.as_list())) if shape.rank is not None else "(unknown)"


def checked_operator_scores(scores: Any, x: tf.Tensor) -> tf.Tensor:
    """``scores``, the operator's output for inputs ``x``, once checked: one score per
    input, of shape (B,) or (B, 1). The one check every score of a model-based metric
    passes through (:func:`score_function`): a shape the operator should not return is
    a ValueError naming `operator` when the graph is traced, a batch size that differs
    from the inputs' one when the batch runs (see
    :func:`~xplique_ext.runtime.model_output_errors`)."""
    scores = tf.convert_to_tensor(scores)
    shape = scores.shape
    wrong = shape.rank == 0 or (
        shape.rank is not None and tuple(shape.as_list()[1:]) not in OPERATOR_TRAILING
    )
    n_scores = shape[0] if shape.rank else None
    n_inputs = x.shape[0]
    if n_scores is not None and n_inputs is not None and n_scores != n_inputs:
        wrong = True
    if wrong:
        batch = "" if n_inputs is None else f" for a batch of {n_inputs} inputs"
        raise ValueError(
            f"`operator` must return one output per input of {OPERATOR_EXPECTED}, got "
            f"shape {_shape_words(shape)}{batch}"
        )
    return runtime.assert_batch_graph(scores, x, name="operator")


def score_function(live: Callable, activation: Optional[str]) -> Callable:
    """``score(x, y)``: the operator's score ``g(f, x, y)`` of the activated model ``f``
    (Xplique's ``f(x)[y] = sum(f(x) * y, -1)`` for no operator); ``live()`` gives the
    :class:`ModelObjects` (see :func:`~xplique_ext.runtime.model_functions`)."""

    def score(x, y):
        objects = live()
        model = objects.model
        operator = objects.operator

        def f(z):
            return _activated(model, activation, z)

        if operator is not None:
            return checked_operator_scores(operator(f, x, y), x)
        out = f(x)  # outputs (B, ...) flattened to (B, K) as the targets are
        out = tf.reshape(out, [tf.shape(out)[0], -1])
        return tf.reduce_sum(out * tf.cast(y, out.dtype), axis=-1)

    return score


def model_score_functions(live: Callable, activation: Optional[str]) -> ModelFunctions:
    """The :class:`ModelFunctions` of a metric: its operator's score and the activated
    model's outputs, both reaching the model through ``live()``."""

    def outputs(x):
        return _activated(live().model, activation, x)

    return ModelFunctions(score=score_function(live, activation), outputs=outputs)


def _operator_inference(model: Callable, inputs: Any, targets: Any, operator: Optional[Callable]):
    """Xplique's ``inference_function(model, inputs, targets)``: the operator's score of
    each input of one batch, ``g(model, inputs, targets)``, or ``sum(model(x) * y, -1)``
    for no operator; the targets in the dtype of the model's outputs."""
    x = tf.convert_to_tensor(inputs)
    if operator is not None:
        return operator(model, x, targets)
    out = tf.convert_to_tensor(runtime.single_output(model(x)))
    out = tf.reshape(out, [tf.shape(out)[0], -1])
    return tf.reduce_sum(out * tf.cast(targets, out.dtype), axis=-1)


def _batch_operator_inference(
    model: Callable,
    inputs: Any,
    targets: Any,
    batch_size: Optional[int],
    operator: Optional[Callable],
):
    """Xplique's ``batch_inference_function(model, inputs, targets, batch_size)``: as
    :func:`_operator_inference`, ``batch_size`` inputs at a time (None: all at once),
    concatenated into one tensor (N,)."""
    n = len(inputs)
    size = batch_size or max(n, 1)
    parts = [
        _operator_inference(model, inputs[s : s + size], targets[s : s + size], operator)
        for s in range(0, n, size)
    ]
    return tf.concat(parts, axis=0)


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
    inference_function : callable
        Xplique's ``inference_function(model, inputs, targets)``: the operator's score of
        one batch, ``g(model, inputs, targets)`` (``sum(model(x) * y, -1)`` for no
        operator). For Xplique code that calls it; the metrics themselves never do.
    batch_inference_function : callable
        Xplique's ``batch_inference_function(model, inputs, targets, batch_size)``: the
        same, ``batch_size`` inputs at a time, as one tensor (N,).

    Notes
    -----
    *Differences from Xplique's base.* ``model`` is the user's model, unchanged:
    Xplique wraps it with the ``activation`` (so its ``metric.model(x)`` is activated),
    here the activation is applied by the compiled functions every model call goes
    through, and ``inference_function`` applies the operator to whatever model it is
    given, without the activation. The targets reach an operator in the dtype of the
    model's outputs (float32 for a float32 model, as Xplique's operators expect;
    float64 for a float64 model), one-hot for class ids. ``inputs`` is None for a
    streamed ``tf.data.Dataset`` (kept in ``dataset``), which Xplique loads whole.

    ``copy.deepcopy(metric)`` gives a metric with the same scores that owns its inputs and
    targets and shares the model, operator, strategy, dataset and compiled functions.
    ``pickle.dumps(metric)`` raises a TypeError: save :meth:`get_config` instead.

    :meth:`get_config` saves ``operator`` as given: None or a task name. A callable
    operator (or a ``Tasks`` member) cannot be saved: ``get_config`` raises a TypeError
    naming it, as for any setting that is not JSON data (a callable ``baseline_mode``),
    rather than leave it out and let :meth:`from_config` build a metric with another
    operator.
    """

    _data_params = ("model", "inputs", "targets", "strategy")

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
        self.seed = seed
        self.activation = activation
        self.operator_setting = operator  # as given: what get_config saves
        self.operator = resolve_operator(operator)
        rank = _model_input_rank(model, inputs)
        if runtime.is_dataset(inputs):
            self.dataset = inputs
            self.inputs = None
            self._dataset_batched, self.n_inputs = _dataset_layout(inputs, rank)
        else:
            self.dataset = None
            self.inputs = check_param(inputs, "inputs", INPUTS)
            _check_array_inputs(self.inputs, rank, _model_item_shape(model))
            self.n_inputs = len(self.inputs)
        self.targets = targets  # an ndarray (N,) or (N, K), or None: declared above
        if targets is not None and self.n_inputs is not None and len(targets) != self.n_inputs:
            raise ValueError(
                f"`targets` must hold one target per input: got {len(targets)} "
                f"targets for {self.n_inputs} inputs"
            )
        self._n_outputs: Optional[int] = None
        self._target_dtype: Optional[np.dtype] = None  # the model's output dtype
        self.inference_function = functools.partial(_operator_inference, operator=self.operator)
        self.batch_inference_function = functools.partial(
            _batch_operator_inference, operator=self.operator
        )
        self.strategy = runtime.resolve_strategy(strategy)
        functions = self._model_functions("model", model_score_functions)
        self._score_fn = functions.score
        self._output_fn = functions.outputs

    def _model_functions(self, name: str, build: Callable, static: tuple = ()) -> tuple:
        """The metric's compiled functions: ``build(live, activation)`` returns a named
        tuple of plain functions that reach the model and the operator through ``live()``
        only (a :class:`ModelObjects`: ``live().model``, ``live().operator``); this
        returns the same named tuple, compiled, run on the replicas of the metric's
        strategy, and shared by every metric with the same model, operator and strategy
        (by identity) and the same static configuration ``(name, activation, *static)``.

        ``static`` must hold every Python value the functions read besides the objects
        (a grid's geometry, a rank...), since the traced graph bakes it in; the values
        that vary from call to call are arguments of the functions. See the comment at
        the cache in :mod:`xplique_ext.runtime` and
        :func:`~xplique_ext.runtime.model_functions`."""
        activation = self.activation
        objects = ModelObjects(model=self.model, operator=self.operator, strategy=self.strategy)

        def build_for_activation(live: Callable) -> tuple:
            return build(live, activation)

        return runtime.model_functions(
            objects, (name, activation, *static), build_for_activation, self.strategy
        )

    def _peek_input_shape(self) -> tuple:
        """The shape of one input (no batch axis), read from the array or from the
        dataset's first element."""
        if self.inputs is not None:
            if len(self.inputs) == 0:
                raise ValueError("`inputs` must hold at least one input, got 0")
            return tuple(self.inputs.shape[1:])
        for x, _ in runtime.iterate_dataset(self.dataset.take(1), 1, self._dataset_batched):
            return tuple(x.shape[1:])
        raise ValueError("`inputs` must hold at least one input, got an empty dataset")

    # ------------------------------------------------------------------ copies
    def __copy__(self) -> BaseAttributionMetric:
        new = type(self).__new__(type(self))
        for name, value in vars(self).items():  # every attribute, shared
            setattr(new, name, value)
        return new

    def __deepcopy__(self, memo: dict) -> BaseAttributionMetric:
        """A copy that gives the same scores: settings, inputs and targets are copied; the
        model, operator, strategy, a streamed dataset and the compiled functions
        (callables, strategies, datasets, TensorFlow modules and weak references) are
        shared, as :func:`copy.deepcopy` shares functions and classes. Bound methods of
        the metric are rebound to the copy."""
        new = type(self).__new__(type(self))
        memo[id(self)] = new
        shared = (tf.distribute.Strategy, tf.Module, weakref.ReferenceType)
        for value in self.__dict__.values():
            if not isinstance(value, types.MethodType) and (
                callable(value) or isinstance(value, shared) or runtime.is_dataset(value)
            ):
                memo.setdefault(id(value), value)
        for name, value in copy.deepcopy(vars(self), memo).items():
            setattr(new, name, value)
        return new

    def __reduce_ex__(self, protocol: Any) -> Any:
        name = type(self).__name__
        raise TypeError(
            f"{name} cannot be pickled: it holds a model, compiled TensorFlow "
            "functions and a tf.distribute strategy, which pickle cannot store. Save "
            "`metric.get_config()` (JSON-friendly settings) and rebuild it with "
            f"`{name}.from_config(config, model=..., inputs=..., ...)`; "
            "`copy.deepcopy(metric)` copies it in memory"
        )

    # ------------------------------------------------------------------ configuration
    def _setting(self, name: str, *default: Any) -> Any:
        """A constructor setting as given: ``operator`` as the user passed it (None or a
        task name, which :meth:`get_config` saves; a callable, which it refuses), not the
        resolved operator function."""
        if name == "operator":
            return self.operator_setting
        return super()._setting(name, *default)

    # ------------------------------------------------------------------ inference
    def _batched(self, fn: Callable, x: Any, *more: np.ndarray, **check: Any) -> np.ndarray:
        """``fn(x[s], *more[s])`` batch by batch (``batch_size`` rows), each batch's outputs
        checked by :func:`~xplique_ext.runtime.check_outputs` (``check``: its options, the
        errors naming the inputs by their index), concatenated."""
        x = check_param(x, "inputs", INPUTS)
        size = self.batch_size or max(len(x), 1)
        parts = []
        for start in range(0, len(x), size):
            s = slice(start, start + size)
            with runtime.model_output_errors():
                out = fn(*(tf.convert_to_tensor(a[s]) for a in (x,) + more))
            parts.append(runtime.check_outputs(out, len(x[s]), offset=start, **check))
        return np.concatenate(parts, axis=0) if parts else np.zeros((0,))

    def model_outputs(self, x: Any) -> np.ndarray:
        """The model's outputs (after ``activation``) for inputs ``x`` (B, ...), batched:
        a NumPy array (B, K)."""
        return self._batched(self._output_fn, x)  # _activated gives (B, K) or more axes

    def scores(self, x: Any, y: Any) -> np.ndarray:
        """The operator's score ``g(f, x, y)`` for each input (B,), batched; ``y``: the
        targets already formatted for the operator (see :meth:`format_targets`); for no
        operator, one-hot targets (B, K) or class ids (B,), checked."""
        y = np.asarray(y)
        if self.operator is None and (y.ndim not in (1, 2) or len(y) != len(x)):
            raise ValueError(
                f"`y` must hold the targets of the {len(x)} inputs, one-hot (B, K) "
                f"or class ids (B,), got shape {y.shape}"
            )
        if self.operator is None:
            y = runtime.as_model_targets(y, self.n_outputs(x), "y")
        return self._batched(
            self._score_fn,
            x,
            y,
            name="operator",
            trailing=OPERATOR_TRAILING,
            expected=OPERATOR_EXPECTED,
        ).reshape(-1)

    # ------------------------------------------------------------------ targets
    def n_outputs(self, x_example: np.ndarray) -> int:
        """Number of model outputs K, found once from one example (with the dtype of the
        outputs, the dtype of the targets: see :meth:`format_targets`)."""
        if self._n_outputs is None:
            outputs = self.model_outputs(x_example[:1])
            self._n_outputs = int(np.prod(outputs.shape[1:]))
            self._target_dtype = outputs.dtype  # floating: _activated casts integers
        return self._n_outputs

    def format_targets(self, x: np.ndarray, y: Optional[np.ndarray]) -> np.ndarray:
        """Targets of a batch in the operator's format: (B, K) one-hot for class ids,
        (B, 1) for single-output regression, predicted classes when ``y`` is None; in
        the dtype of the model's outputs, which Xplique's operators expect (float32
        targets for a float32 model, float64 for a float64 one)."""
        return self._model_targets(x, y).astype(self._target_dtype, copy=False)

    def _model_targets(self, x: np.ndarray, y: Optional[np.ndarray]) -> np.ndarray:
        """:meth:`format_targets` before the cast to the model's output dtype."""
        k = self.n_outputs(x)
        if y is not None:
            return runtime.as_model_targets(check_param(np.asarray(y), "targets", [TARGETS]), k)
        # one output: the target is that output (no model call)
        out = self.model_outputs(x).reshape(len(x), k) if k > 1 else np.zeros((len(x), 1))
        bad = ~np.isfinite(out).all(axis=1)
        if bad.any():
            raise ValueError(
                "`targets` is None, so the target is the model's predicted class, but "
                f"`model` returned NaN or inf for {int(bad.sum())} of the {len(x)} "
                "inputs of a batch: their predicted class is undefined; pass "
                "`targets`"
            )
        return runtime.predicted_targets(out)

    # ------------------------------------------------------------------ streaming
    def iter_batches(self) -> Iterator[Tuple[int, np.ndarray, np.ndarray]]:
        """Stream the inputs with their formatted targets, ``batch_size`` at a time:
        ``(start, x, y)``, the index of the batch's first input, inputs (B, ...) and
        targets formatted for the operator (B, K)."""
        if self.dataset is None:
            step = self.batch_size or max(self.n_inputs, 1)
            pairs = ((self.inputs[s : s + step], None) for s in range(0, self.n_inputs, step))
        else:
            pairs = runtime.iterate_dataset(self.dataset, self.batch_size, self._dataset_batched)
        start = 0
        for x, y in pairs:
            if self.targets is not None:
                if y is not None:
                    raise ValueError(
                        "`targets` must be None when the `inputs` dataset yields (x, y) pairs"
                    )
                y = self.targets[start : start + len(x)]
                if len(y) != len(x):
                    raise ValueError(
                        "`targets` must hold one target per input: the dataset has "
                        f"more inputs than the {len(self.targets)} targets given"
                    )
            yield start, x, self.format_targets(x, y)
            start += len(x)
        if self.targets is not None and start != len(self.targets):
            raise ValueError(
                f"`targets` must hold one target per input: got "
                f"{len(self.targets)} targets for {start} inputs"
            )
        self.n_inputs = start

    def explained_batches(self, explanations: np.ndarray) -> Iterator[ExplainedBatch]:
        """:meth:`iter_batches` with each batch's explanations beside its inputs, as
        :class:`ExplainedBatch` es; a ValueError naming `explanations` when the
        explanations and the inputs differ in number, found as the inputs stream (a
        dataset of unknown size included), before any batch without its explanations is
        scored."""
        seen = 0
        for start, x, y in self.iter_batches():
            seen = start + len(x)
            if seen > len(explanations):
                break
            yield ExplainedBatch(start=start, x=x, y=y, phi=explanations[start:seen])
        if seen != len(explanations):
            raise ValueError(
                "`explanations` must hold one explanation per input: got "
                f"{len(explanations)} explanations for {seen} inputs"
            )

    # ------------------------------------------------------------------ evaluation
    @abc.abstractmethod
    def detailed_evaluate(self, explanations: Any) -> np.ndarray:
        """One score per input, shape (N,); NaN where the score is undefined."""


class ExplanationMetric(BaseAttributionMetric):
    """Base of the metrics that score given explanations (Xplique's name for it):
    ``metric(explanations)``, with :meth:`detailed_evaluate` taking the explanations, one
    per input. Deletion, Insertion, MuFidelity and the Average Drop / Increase / Gain
    metrics subclass it.

    It is :class:`BaseAttributionMetric` under the name Xplique users import
    (``isinstance(metric, ExplanationMetric)`` tells a metric scoring explanations from
    one scoring an explainer), and adds nothing else. See :class:`BaseAttributionMetric`
    for the parameters, and for the attributes that differ from Xplique's.
    """

    @abc.abstractmethod
    def detailed_evaluate(self, explanations: Any) -> np.ndarray:
        """One score per input for ``explanations`` (one per input), shape (N,); NaN
        where the score is undefined."""
