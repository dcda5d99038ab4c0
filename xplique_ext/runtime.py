"""The TensorFlow runtime of the model-based metrics and explainers: the floor between
``commons`` (no TensorFlow) and ``metrics``/``text``/``explainers``.

It holds, in one place:

* **strategies**: :func:`resolve_strategy` (``strategy=None`` is the strategy in scope,
  ``tf.distribute.get_strategy()``) and :func:`is_default_strategy`;
* **compiled functions**: :func:`model_functions` gives a metric its score functions in
  one call: compiled (``tf.function``, with an eager fallback for models that cannot be
  traced), run on every replica by a :class:`ReplicaRunner` under a non-default strategy,
  and shared between every caller with the same model, operator, strategy and
  configuration (:func:`shared_functions`: a weak-reference cache, so models can be
  collected);
* **model outputs**: :func:`single_output`, :func:`check_output_dtype`,
  :func:`check_outputs` (one output per input, the trailing shape, finite values,
  probabilities; the errors name the rows), :func:`assert_batch_graph` and
  :func:`model_output_errors` (the same batch check inside graphs, every batch);
* **targets**: :func:`as_model_targets` (ids, one-hot or regression targets in the
  operator's format, checked against the model's outputs) and :func:`predicted_targets`;
* **datasets**: :func:`is_dataset`, :func:`check_finite_dataset`,
  :func:`dataset_is_batched`, :func:`iterate_dataset`, :func:`split_element`.

Under any non-default strategy (``MirroredStrategy``, ``MultiWorkerMirroredStrategy``,
``OneDeviceStrategy``...), each batch of model inputs goes through a
:class:`ReplicaRunner`:

1. the batch is cut into ``R`` equal shares along its first axis, ``R`` being the number of
   replicas in sync (the last rows repeated when ``R`` does not divide the batch);
2. each replica receives its share on its own device
   (``strategy.experimental_distribute_values_from_function``);
3. one compiled step runs the per-replica function with ``strategy.run``;
4. the results are gathered in replica order (``strategy.gather``: an all-gather across
   the workers of a multi-worker strategy, so every worker gets every result) and the
   padding rows are dropped.

Per-input results therefore come back in input order, and they equal the single-device
results up to float round-off. This module holds no scheduler: placement, transfers and
collectives are TensorFlow's. The outputs are never cast down: they stay in the model's
dtype (or go up to float64). TensorFlow is imported on first use, so that importing a
module that stands on this floor (``xplique_ext.text``) stays light.
"""

from __future__ import annotations

import contextlib
import inspect
import threading
import weakref
from collections import OrderedDict
from typing import Any, Callable, Iterator, Optional, Sequence, Tuple

import numpy as np

from .commons.params import ArrayLike, InstanceOf, check_param
from .commons.warnings import XpliqueExtWarning, warn

__all__ = [
    "resolve_strategy",
    "is_default_strategy",
    "replica_shares",
    "ReplicaRunner",
    "compiled_function",
    "shared_functions",
    "split_across_replicas",
    "model_functions",
    "single_output",
    "check_output_dtype",
    "check_outputs",
    "assert_batch_graph",
    "model_output_errors",
    "is_dataset",
    "check_finite_dataset",
    "dataset_is_batched",
    "iterate_dataset",
    "split_element",
    "as_model_targets",
    "predicted_targets",
]

#: marker of the in-graph batch assertion, to turn TensorFlow's error into a ValueError
BATCH_MARKER = "xplique_ext: model output batch mismatch"


# ---------------------------------------------------------------- strategies
def resolve_strategy(strategy: Any = None) -> Any:
    """The ``tf.distribute.Strategy`` to use: ``strategy`` itself, or the strategy in
    scope (``tf.distribute.get_strategy()``, the default one outside any scope) for None.

    Raises
    ------
    TypeError
        When ``strategy`` is neither None nor a ``tf.distribute.Strategy``.
    ValueError
        For a ``ParameterServerStrategy`` (asynchronous training only).
    """
    import tensorflow as tf

    any_strategy = InstanceOf(
        tf.distribute.Strategy,
        description="a tf.distribute.Strategy (MirroredStrategy, MultiWorkerMirroredStrategy, ...)",
    )
    if check_param(strategy, "strategy", [any_strategy, None]) is None:
        return tf.distribute.get_strategy()
    if isinstance(strategy, tf.distribute.experimental.ParameterServerStrategy):
        raise ValueError(
            "`strategy` must run replicas in sync (MirroredStrategy, "
            "MultiWorkerMirroredStrategy, OneDeviceStrategy, TPUStrategy), got a "
            "ParameterServerStrategy, which needs a ClusterCoordinator for every step"
        )
    return strategy


def is_default_strategy(strategy: Any) -> bool:
    """True for TensorFlow's default (no-op, single-device) strategy."""
    return type(strategy).__name__ == "_DefaultDistributionStrategy"


def replica_shares(n: int, replicas: int) -> int:
    """Rows per replica when ``n`` rows are cut into ``replicas`` equal shares (the last
    share padded): ``ceil(n / replicas)``, at least 1."""
    return max(1, -(-int(n) // int(replicas)))


def _trace_errors() -> tuple:
    """Errors raised when a callable cannot be traced into a graph (NumPy models...)."""
    import tensorflow as tf

    return TypeError, NotImplementedError, ValueError, tf.errors.OperatorNotAllowedInGraphError


# ---------------------------------------------------------------- compiled functions
class _CallStatsKey:
    """Stands for one compiled function in TensorFlow's frequent-retracing detector."""

    __slots__ = ("__weakref__",)


def compiled_function(fn: Callable, **options: Any) -> Callable:
    """``tf.function(fn, reduce_retracing=True, **options)`` counted on its own by
    TensorFlow's frequent-retracing detector.

    TensorFlow warns ("5 out of the last 5 calls to <function> triggered tf.function
    retracing") when the calls to *any* function built from the same Python code trace
    too often: the first calls of five compiled functions of five different models, each
    traced once as it must be, read as one function retraced five times. Here each
    compiled function has its own count, so the warning still fires when one function
    really keeps retracing, never for distinct functions traced once each.
    """
    import tensorflow as tf

    out = tf.function(fn, **{"reduce_retracing": True, **options})
    # private attribute of tf.function's Function (TF 2.x); harmless if it moves
    out._key_for_call_stats = _CallStatsKey()
    return out


class ReplicaRunner:
    """Run ``fn`` on shares of a batch, one share per replica of ``strategy``.

    Parameters
    ----------
    fn
        Per-replica function ``fn(*split_args, *shared_args)`` returning a tensor or a
        nest (tuple, dict) of tensors whose first axis has one row per row of the split
        arguments. It is traced once into the replicas' graph (``tf.function``).
    strategy
        A ``tf.distribute.Strategy``.
    fallback
        Called as ``fallback(*split_args, *shared_args)`` instead, with a warning, when
        ``fn`` cannot be traced into a graph (a model written in NumPy, for instance):
        the whole batch then runs on one device. None re-raises the error.
    split
        How many leading positional arguments are split across the replicas (None: all);
        the others go to every replica whole, after the ``shared`` ones.

    Notes
    -----
    A call ``runner(*split_args, shared=(...))`` cuts every split argument (arrays or
    tensors with the same first dimension ``n``) into ``R`` shares of
    ``ceil(n / R)`` rows, ``R = strategy.num_replicas_in_sync``, repeating the last row
    to fill the last share; ``shared`` arguments go to every replica whole. The results
    come back as NumPy arrays of ``n`` rows, in input order, on every worker.

    Examples
    --------
    >>> import numpy as np, tensorflow as tf
    >>> runner = ReplicaRunner(lambda x: 2 * x, tf.distribute.OneDeviceStrategy("/cpu:0"))
    >>> runner(np.arange(3.0)).tolist()
    [0.0, 2.0, 4.0]
    """

    def __init__(
        self,
        fn: Callable,
        strategy: Any,
        fallback: Optional[Callable] = None,
        split: Optional[int] = None,
    ):
        self.fn = fn
        self.strategy = strategy
        self.fallback = fallback
        self.split = split
        self.replicas = int(strategy.num_replicas_in_sync)
        self._devices = tuple(getattr(strategy.extended, "worker_devices", None) or ())
        self._all_local = len(self._devices) == self.replicas
        self._eager = False
        self._structure = None  # the outputs' nesting, set while tracing
        self._step = compiled_function(self._run_step)

    def _run_step(self, split, shared):
        import tensorflow as tf

        per_replica = self.strategy.run(self.fn, args=tuple(split) + tuple(shared))
        if self._all_local:
            # every replica is on this host: hand back the parts, concatenated on the host
            self._structure = per_replica  # set while tracing; only its nesting is used
            return [
                tuple(self.strategy.experimental_local_results(v))
                for v in tf.nest.flatten(per_replica)
            ]
        # replicas on other workers: all-gather, so every worker gets every row
        return tf.nest.map_structure(lambda v: self.strategy.gather(v, axis=0), per_replica)

    def _distribute(self, arrays: Sequence[np.ndarray], n: int):
        import tensorflow as tf

        share = replica_shares(n, self.replicas)

        def value_fn(ctx):
            rid = ctx.replica_id_in_sync_group
            # repeat the last row: every replica gets a full share
            rows = np.minimum(np.arange(rid * share, (rid + 1) * share), n - 1)
            # a multi-worker strategy asks each worker for its local replicas only
            devices = self._devices
            placement = contextlib.nullcontext()
            if devices:
                placement = tf.device(devices[rid % len(devices)])
            with placement:
                return tuple(tf.constant(np.take(a, rows, axis=0)) for a in arrays)

        return self.strategy.experimental_distribute_values_from_function(value_fn)

    def __call__(self, *args: Any, shared: Sequence[Any] = ()) -> Any:
        import tensorflow as tf

        split_args = args if self.split is None else args[: self.split]
        shared = tuple(args[len(split_args) :]) + tuple(shared)
        if not split_args:
            raise TypeError("ReplicaRunner needs at least one argument to split")
        arrays = [np.asarray(a) for a in split_args]
        n = len(arrays[0])
        if any(len(a) != n for a in arrays):
            raise ValueError(
                "the arguments split across replicas must have the same first "
                f"dimension, got {[len(b) for b in arrays]}"
            )
        if self._eager or n == 0:
            return self._call_fallback(split_args, shared)
        shared = tuple(tf.convert_to_tensor(s) for s in shared)
        try:
            out = self._step(self._distribute(arrays, n), shared)
        except _trace_errors() as error:
            if self.fallback is None:
                raise
            # a genuine error (bad shapes...) raises again here, without a warning
            result = self._call_fallback(split_args, shared)
            warn(
                f"the model cannot be traced into a graph ({type(error).__name__}: {error});"
                f" it runs on one device, outside the {type(self.strategy).__name__}",
                XpliqueExtWarning,
            )
            self._eager = True
            return result
        if self._all_local:
            flat = [np.concatenate([p.numpy() for p in parts], axis=0)[:n] for parts in out]
            return tf.nest.pack_sequence_as(self._structure, flat)
        return tf.nest.map_structure(lambda v: v.numpy()[:n], out)

    def _call_fallback(self, split_args, shared):
        import tensorflow as tf

        if self.fallback is None:
            raise ValueError("ReplicaRunner got an empty batch and has no fallback")
        return tf.nest.map_structure(np.asarray, self.fallback(*split_args, *shared))


def _with_eager_fallback(fn: Callable) -> Callable:
    """``fn`` compiled; eager calls from the first call that cannot be traced on (pure
    NumPy callables). A genuine error (bad shapes...) raises again from the eager call and
    leaves the function compiled for the next calls (it may be shared)."""
    graph = compiled_function(fn)
    eager = []

    def call(*args):
        if not eager:
            try:
                return graph(*args)
            except _trace_errors():
                out = fn(*args)
                eager.append(True)
                return out
        return fn(*args)

    return call


# The cache of compiled functions.
#
# What a compiled graph bakes in. ``tf.function`` traces a Python function once per input
# signature and keeps the graph: every Python value the function reads while it is traced
# (the model and the operator it closes over, an activation name, a grid's geometry, a
# rank) is frozen into that graph as a constant or as the graph's structure. A cached
# graph is therefore only correct for callers that would have traced the same graph, so
# its key holds:
#
# * the *objects* the functions reach (model, operator or embedding layer, strategy), by
#   identity: two equal-looking models are two graphs. They are held through weak
#   references only (a metric must not keep a model alive), and the functions reach them
#   through ``live()``, never by closing over them;
# * the *static* configuration: every other Python value the traced code reads, hashable
#   (the metric family's name, the activation, a grid's shape and cell indices...). Leave
#   one out and a second metric silently runs the first one's graph, with the first one's
#   setting.
#
# Everything that changes from call to call without changing the graph's structure
# (inputs, targets, baselines, random subsets, their number, a batch size) is an
# *argument* of the compiled function, a tensor, never part of the key: then one graph
# serves every call, and a metric built on the same model with another ``nb_samples``
# retraces nothing.
#
# When the functions are built: :func:`model_functions` is called in a metric's
# constructor. It looks up the key; on a miss it calls ``build(live)``, which only creates
# Python functions and wraps them in ``tf.function``: nothing is traced yet. Each function
# is traced on its first call (the first evaluation), once per new input signature
# (``reduce_retracing`` generalises shapes), and the traced graph serves every later
# metric with the same key.

#: at most this many sets of compiled functions are kept (least recently used dropped)
MAX_SHARED_FUNCTIONS = 64
_SHARED: OrderedDict[tuple, tuple] = OrderedDict()
_SHARED_LOCK = threading.RLock()


def _evict(key: tuple, ref: Any) -> None:
    with _SHARED_LOCK:
        entry = _SHARED.get(key)
        if entry is not None and any(r is ref for r in entry[0]):
            del _SHARED[key]


def _maker(structure: tuple) -> Callable[[Sequence[Any]], tuple]:
    """What builds a tuple of the structure of ``structure`` from its values: the same
    named tuple class (fields by name), or ``tuple``. Holds the class, never ``structure``
    itself (a cache entry must not keep its objects alive)."""
    return getattr(type(structure), "_make", tuple)


def shared_functions(objects: tuple, static: tuple, build: Callable) -> Any:
    """What ``build(live)`` returns, shared by every caller with the same ``objects`` (by
    identity: a model, an operator, a strategy...) and the same ``static`` (hashable)
    configuration (see the comment above: what a compiled graph bakes in).

    ``objects`` is best a named tuple (:class:`~xplique_ext.metrics.base.ModelObjects`):
    ``live()`` returns the same named tuple of the live objects, so that ``build``'s
    functions read ``live().model``, ``live().operator``...

    The cache holds ``objects`` through weak references only: ``build`` must reach them
    through ``live()`` (never hold them), so that a model can be garbage-collected, and
    its entry goes with it. At most :data:`MAX_SHARED_FUNCTIONS` entries are kept. When
    an object cannot be weakly referenced, or ``static`` is not hashable, nothing is
    shared: ``build`` is called for this caller alone.
    """
    if not isinstance(objects, tuple):
        objects = tuple(objects)
    key = tuple(id(o) for o in objects) + (static,)
    try:
        hash(key)
        refs = tuple(
            None if o is None else weakref.ref(o, lambda r, k=key: _evict(k, r)) for o in objects
        )
    except TypeError:
        return build(lambda: objects)
    with _SHARED_LOCK:
        entry = _SHARED.get(key)
        if entry is not None and all(
            (None if r is None else r()) is o for r, o in zip(entry[0], objects)
        ):
            _SHARED.move_to_end(key)
            return entry[1]

    make = _maker(objects)

    def live() -> tuple:
        return make([None if r is None else r() for r in refs])

    value = build(live)
    with _SHARED_LOCK:
        _SHARED[key] = (refs, value)
        _SHARED.move_to_end(key)
        while len(_SHARED) > MAX_SHARED_FUNCTIONS:
            _SHARED.popitem(last=False)
    return value


def split_across_replicas(*names: str) -> Callable[[Callable], Callable]:
    """Declare which arguments of a model function hold one row per input, and are cut
    across the replicas of a strategy (the others go to every replica whole).

    ``names`` must be the function's leading parameters, in order. A function without
    the declaration has every argument cut across the replicas.

    Examples
    --------
    >>> @split_across_replicas("x", "y")
    ... def score(x, y, subsets):
    ...     return x
    >>> score.replica_split
    2
    """

    def declare(fn: Callable) -> Callable:
        leading = tuple(inspect.signature(fn).parameters)[: len(names)]
        if leading != names:
            raise TypeError(
                f"split_across_replicas names the leading parameters of the function, in "
                f"order: {fn.__name__} starts with {leading}, got {names}"
            )
        fn.replica_split = len(names)
        return fn

    return declare


def model_functions(objects: tuple, static: tuple, build: Callable, strategy: Any) -> tuple:
    """The one call that gives a metric its functions, compiled and shared.

    ``build(live)`` returns a named tuple of plain functions (for instance
    :class:`~xplique_ext.metrics.base.ModelFunctions`) that reach the model through
    ``live()`` (the live ``objects``). Each is compiled (``tf.function``; eager calls for
    a model that cannot be traced); under a non-default ``strategy`` it runs on every
    replica through a :class:`ReplicaRunner` that cuts across the replicas the arguments
    declared by :func:`split_across_replicas` (all by default), with the compiled function
    on one device as its fallback: the same call signature either way. The result, the
    same named tuple of compiled functions, is shared through :func:`shared_functions` on
    ``objects`` (model, operator, strategy) and ``static``: a second metric on a model
    reuses the traced graphs of the first (no retracing)."""

    def compiled(fn: Callable) -> Callable:
        single = _with_eager_fallback(fn)
        if is_default_strategy(strategy):
            return single
        split = getattr(fn, "replica_split", None)
        return ReplicaRunner(fn, strategy, fallback=single, split=split)

    def build_compiled(live: Callable) -> tuple:
        functions = build(live)
        return _maker(functions)([compiled(fn) for fn in functions])

    return shared_functions(objects, static, build_compiled)


# ---------------------------------------------------------------- model outputs
def _is_array_like(value: Any) -> bool:
    """An array or tensor with at least one axis (a NumPy scalar is a number)."""
    return hasattr(value, "dtype") and len(getattr(value, "shape", None) or ()) > 0


def single_output(out: Any, name: str = "model") -> Any:
    """The one array or tensor a model returned.

    Raises
    ------
    TypeError
        For a dict, or a tuple/list whose items are arrays or tensors (several outputs, a
        multi-output Keras model): the error says what was returned and how to wrap it.
        A list or tuple of plain numbers (one value per input) is a single output.
    """
    kind = type(out).__name__
    if hasattr(out, "keys") and hasattr(out, "values") and not _is_array_like(out):
        keys = list(out.keys())[:5]
        what = f"with keys {keys}"
        example = f"[{keys[0]!r}]" if keys else "[...]"
    elif isinstance(out, (tuple, list)) and any(
        _is_array_like(o) or (isinstance(o, (list, tuple)) and o and _is_array_like(o[0]))
        for o in out
    ):
        shapes = [tuple(getattr(o, "shape", ())) for o in out]
        what = f"of {len(out)} outputs of shapes {shapes} (a multi-output model)"
        example = "[0]"
    else:
        return out
    raise TypeError(
        f"`{name}` must return a single array of outputs (N, K), got a {kind} {what}; wrap "
        f"it so that it returns the one output to explain, e.g. `lambda x: {name}(x){example}`"
    )


def check_output_dtype(dtype: Any, name: str = "model") -> None:
    """TypeError unless ``dtype`` (NumPy or TensorFlow) is an integer or floating type."""
    try:
        kind = np.dtype(getattr(dtype, "as_numpy_dtype", dtype)).kind
    except TypeError:
        kind = None
    if kind not in ("i", "u", "f"):
        raise TypeError(
            f"`{name}` must return real numbers (integer or floating point), got "
            f"outputs of dtype {getattr(dtype, 'name', dtype)}"
        )


def _rows(mask: np.ndarray, offset: Optional[int] = None) -> str:
    """'inputs i, j' (global indices) or 'rows i, j of a batch of B'."""
    rows = np.flatnonzero(mask) + (offset or 0)
    text = ", ".join(str(int(r)) for r in rows[:5]) + (", ..." if len(rows) > 5 else "")
    return f"inputs {text}" if offset is not None else f"rows {text} of a batch of {len(mask)}"


def check_outputs(
    out: Any,
    batch: int,
    *,
    name: str = "model",
    trailing: Optional[Sequence[Sequence[int]]] = None,
    finite: bool = False,
    probabilities: bool = False,
    offset: Optional[int] = None,
    expected: Optional[str] = None,
) -> np.ndarray:
    """Check the outputs of one batch of ``batch`` inputs, row by row, and return them as
    a NumPy array in the model's own dtype (never cast down).

    Parameters
    ----------
    out
        What the model (or operator) returned for the batch.
    batch
        Number of inputs of the batch.
    name
        Parameter named in the errors ('model', 'operator', ...).
    trailing
        Allowed per-input shapes (e.g. ``[(1,), (2,)]``); None allows any.
    finite
        Require finite values (NaN and inf are a ValueError naming the rows).
    probabilities
        Require values in [0, 1] (a small tolerance of 4 units in the last place of the
        output's dtype covers round-off of a sigmoid or softmax).
    offset
        Index of the batch's first input, so that the errors name the inputs by their
        global index; None names rows of the batch.
    expected
        Wording of the expected shape in the errors (e.g. "shape (N, 1) (sigmoid) or
        (N, 2) (two-class softmax)"); by default derived from ``trailing``.

    Raises
    ------
    TypeError
        Several outputs (dict, tuple) or a non-numeric dtype.
    ValueError
        A wrong shape, non-finite values where finite ones are required, values outside
        [0, 1] where probabilities are expected.
    """
    arr = np.asarray(single_output(out, name))
    check_output_dtype(arr.dtype, name)
    if (
        arr.ndim == 0
        or arr.shape[0] != batch
        or 0 in arr.shape[1:]
        or (trailing is not None and tuple(arr.shape[1:]) not in [tuple(t) for t in trailing])
    ):
        shapes = ["(B, K)", "(B,)"] if trailing is None else [(batch, *t) for t in trailing]
        allowed = expected or "shape " + " or ".join(map(str, shapes))
        raise ValueError(
            f"`{name}` must return one output per input of {allowed}, got shape "
            f"{arr.shape} for a batch of {batch} inputs"
        )
    flat = arr.reshape(batch, -1)
    if arr.dtype.kind == "f" and (finite or probabilities):
        bad = ~np.isfinite(flat).all(axis=1)
        if bad.any():
            raise ValueError(
                f"`{name}` must return finite outputs, got NaN or inf for {_rows(bad, offset)}"
            )
    if probabilities and arr.size:
        tol = 4 * float(np.finfo(arr.dtype).eps) if arr.dtype.kind == "f" else 0.0
        bad = ((flat < -tol) | (flat > 1 + tol)).any(axis=1)
        if bad.any():
            raise ValueError(
                f"`{name}` must return probabilities in [0, 1] (end the model with a "
                f"sigmoid or softmax), got values in [{flat.min():.4g}, "
                f"{flat.max():.4g}] ({_rows(bad, offset)} out of range)"
            )
    return arr


def assert_batch_graph(out: Any, x: Any, name: str = "model") -> Any:
    """Inside a graph: assert that ``out`` has one row per row of ``x`` (every batch, not
    only at tracing time). Use :func:`model_output_errors` around the call to turn a
    failure into the ValueError of :func:`check_outputs`."""
    import tensorflow as tf

    message = f"`{name}` must return one output per input, shape (B, K) or (B,): got shape "
    if out.shape.rank == 0:
        raise ValueError(message + "() (a scalar)")
    n_out = out.shape[0]
    n_x = x.shape[0]
    if n_out is not None and n_x is not None:
        if n_out != n_x:
            raise ValueError(message + f"{tuple(out.shape)} for a batch of {n_x} inputs")
        return out
    check = tf.debugging.assert_equal(
        tf.shape(out)[0], tf.shape(x)[0], message=f"{BATCH_MARKER} ({name})"
    )
    with tf.control_dependencies([check]):
        return tf.identity(out)


@contextlib.contextmanager
def model_output_errors(name: str = "model") -> Iterator[None]:
    """Turn the in-graph batch assertion of :func:`assert_batch_graph` into a ValueError."""
    import tensorflow as tf

    try:
        yield
    except tf.errors.InvalidArgumentError as err:
        if BATCH_MARKER not in str(err):
            raise
        if f"{BATCH_MARKER} (operator)" in str(err):  # the operator's, not the model's
            name = "operator"
        raise ValueError(
            f"`{name}` must return one output per input, shape (B, K) or (B,): the "
            "number of outputs differs from the number of inputs for a batch"
        ) from None


# ---------------------------------------------------------------- targets
def predicted_targets(outputs: np.ndarray) -> np.ndarray:
    """One-hot targets (B, K) of the predicted classes of model ``outputs`` (B, K); a
    column of ones for a single-output model."""
    outputs = outputs.reshape(len(outputs), -1)  # one output: argmax 0, a column of ones
    return np.eye(outputs.shape[1], dtype=np.float32)[np.argmax(outputs, axis=-1)]


def as_model_targets(y: np.ndarray, k: int, name: str = "targets") -> np.ndarray:
    """Targets in the operator's format for a model with ``k`` outputs: (B, K) kept,
    class ids (B,) one-hot, single-output targets a column; floating point (float64 kept,
    never cast down). A ValueError / TypeError names ``name`` for a mismatch."""
    if y.ndim == 2 and y.shape[1] != k:
        raise ValueError(
            f"`{name}` of shape (N, K) must have K = {k} columns to match the "
            f"model's outputs, got {y.shape[1]}"
        )
    if y.ndim == 2 or k == 1:
        y = y.reshape(len(y), -1)
        return y if y.dtype.kind == "f" and y.itemsize >= 4 else y.astype(np.float32)
    ids = y.astype(np.int64) if y.dtype.kind == "f" and np.all(y == np.round(y)) else y
    if ids.dtype.kind not in "iu":
        raise TypeError(
            f"`{name}` of shape (N,) must be integer class ids for a model with "
            f"{k} outputs, got dtype {y.dtype}"
        )
    if ids.size and (ids.min() < 0 or ids.max() >= k):
        raise ValueError(
            f"`{name}` class ids must be in [0, {k - 1}], got values in [{ids.min()}, {ids.max()}]"
        )
    return np.eye(k, dtype=np.float32)[ids]


# ---------------------------------------------------------------- datasets
def is_dataset(x: Any) -> bool:
    """True for a ``tf.data.Dataset`` (without importing TensorFlow for other inputs)."""
    return type(x).__module__.startswith("tensorflow") and hasattr(x, "element_spec")


def check_finite_dataset(dataset: Any, name: str = "inputs") -> None:
    """Raise a ValueError for a ``tf.data.Dataset`` known to be infinite (``.repeat()``).

    A dataset of unknown size (``tf.data.UNKNOWN_CARDINALITY``, e.g. after ``filter``) is
    accepted: it is read once, batch by batch.
    """
    import tensorflow as tf

    if int(dataset.cardinality()) == int(tf.data.INFINITE_CARDINALITY):
        raise ValueError(
            f"`{name}` must be a finite tf.data.Dataset, got an infinite one "
            "(cardinality tf.data.INFINITE_CARDINALITY, e.g. after `.repeat()`); "
            "use `.take(n)` or drop the `.repeat()`"
        )


def _element_shape(spec: Any) -> Any:
    """The shape of the ``x`` of a dataset's element spec (``x``, ``(x,)`` or ``(x, y)``);
    None for a dict, which is refused where the elements are read."""
    x_spec = spec[0] if isinstance(spec, (tuple, list)) and spec else spec
    return getattr(x_spec, "shape", None)


def _batched_by_a_batch_step(dataset: Any) -> bool:
    """Whether the elements of ``dataset`` come from a batching step of its pipeline
    (``batch``, ``padded_batch``, with or without ``drop_remainder``), followed only by
    steps that keep the element's shape (``map`` to the same shape, ``prefetch``,
    ``cache``, ``take``, ``shuffle`` ...).

    The pipeline is walked from the last step down through each step's input dataset,
    while the elements keep the shape of the last step's; a batching step is the step
    that gives each element its leading axis (its input's elements have the shape
    without it). A step that changes the shape otherwise (``unbatch``, a ``map`` that
    reshapes, ``zip``), or a dataset without a Python pipeline (loaded from disk), ends
    the walk: not a batch step.
    """
    shape = _element_shape(dataset.element_spec)
    step = dataset
    while step is not None and _element_shape(step.element_spec) == shape:
        source = getattr(step, "_input_dataset", None)
        if source is None:
            return False
        if hasattr(step, "_batch_size"):  # a batching step (batch, padded_batch)
            source_shape = _element_shape(source.element_spec)
            return source_shape is not None and source_shape == shape[1:]
        step = source
    return False


def dataset_is_batched(dataset: Any, model_input_rank: Optional[int] = None) -> bool:
    """Whether the elements of ``dataset`` are batches (a leading batch axis) or single
    inputs, read from the dataset's element spec and, where the spec cannot tell, from
    how the dataset was built.

    In this order:

    1. a leading dimension of unknown size (``dataset.batch(n)``), or an unknown rank,
       means batches;
    2. when the model's input rank (batch axis included) is known, elements of that
       rank are batches, elements of one less are single inputs;
    3. otherwise (a plain callable model), a leading dimension of static size is a batch
       axis when a batching step of the pipeline gave it
       (``dataset.batch(n, drop_remainder=True)``, ``padded_batch``, possibly followed by
       ``map``, ``prefetch`` ...): see :func:`_batched_by_a_batch_step`. Elements built
       otherwise (``from_tensor_slices`` of an (N, B, ...) array) are single inputs.

    Parameters
    ----------
    dataset
        A ``tf.data.Dataset`` of ``x`` or ``(x, y)`` elements.
    model_input_rank
        The rank of the model's input, batch axis included, when the model declares it.

    Returns
    -------
    batched
        True when each element is a batch of inputs.
    """
    shape = _element_shape(dataset.element_spec)
    if shape is None:  # a dict: refused where the elements are read
        return False
    if shape.rank is None or (shape.rank > 0 and shape[0] is None):
        return True
    if model_input_rank is not None:
        return shape.rank == model_input_rank
    return shape.rank > 0 and _batched_by_a_batch_step(dataset)


def iterate_dataset(
    dataset: Any, batch_size: Optional[int], batched: bool, name: str = "inputs"
) -> Iterator[Tuple[np.ndarray, Optional[np.ndarray]]]:
    """Yield ``(x, y)`` NumPy batches of at most ``batch_size`` elements (all at once when
    None) from a dataset of ``x`` or ``(x, y)`` (the parameter ``name``), re-batching when
    needed."""
    ds = dataset.unbatch() if batched else dataset
    for element in ds.batch(batch_size or 2**31 - 1):
        x, y = split_element(element, name)
        x = check_param(x, name, [ArrayLike("any")])
        if y is not None:
            y = y.numpy()
        yield x, y


def split_element(element: Any, name: str) -> Tuple[Any, Optional[Any]]:
    """``(x, y)`` of a dataset element ``x``, ``(x,)`` or ``(x, y)`` (``y`` None when absent);
    another tuple length raises a ValueError naming the parameter ``name``."""
    if not isinstance(element, (tuple, list)):
        return element, None
    if len(element) not in (1, 2):
        raise ValueError(
            f"`{name}` dataset elements must be `x` or `(x, y)`, got tuples of {len(element)}"
        )
    if len(element) == 1:
        return element[0], None
    return element[0], element[1]
