"""Model calls spread over the replicas of a ``tf.distribute`` strategy.

Every model-based metric and explainer of xplique_ext takes ``strategy=`` (default: the
strategy in scope, ``tf.distribute.get_strategy()``). Under the default strategy nothing
changes: the metric's own compiled function runs on one device. Under any other strategy
(``MirroredStrategy`` for several devices of one host, ``MultiWorkerMirroredStrategy`` for
several hosts, ``OneDeviceStrategy``...), each batch of model inputs goes through a
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
results up to float round-off (a model sees smaller batches per replica; the inputs of a
row never mix with another row's).

This module holds no scheduler: placement, transfers and collectives are TensorFlow's.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from typing import Any, Callable, Optional, Sequence

import numpy as np

from .warnings import XpliqueExtWarning, warn

__all__ = [
    "resolve_strategy",
    "is_default_strategy",
    "num_replicas",
    "ReplicaRunner",
    "replicated",
    "replica_shares",
    "compiled_function",
    "shared_functions",
]

_TRACE_ERRORS: tuple = ()


def _trace_errors() -> tuple:
    """Errors raised when a callable cannot be traced into a graph (NumPy models...)."""
    global _TRACE_ERRORS
    if not _TRACE_ERRORS:
        import tensorflow as tf

        _TRACE_ERRORS = (
            TypeError,
            NotImplementedError,
            ValueError,
            tf.errors.OperatorNotAllowedInGraphError,
        )
    return _TRACE_ERRORS


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

    options.setdefault("reduce_retracing", True)
    out = tf.function(fn, **options)
    try:  # private attribute of tf.function's Function (TF 2.x); harmless if it moves
        out._key_for_call_stats = _CallStatsKey()
    except AttributeError:  # pragma: no cover
        pass
    return out


#: at most this many sets of compiled functions are kept (least recently used dropped)
MAX_SHARED_FUNCTIONS = 64
_SHARED: OrderedDict[tuple, tuple] = OrderedDict()
_SHARED_LOCK = threading.RLock()


def _evict(key: tuple, ref: Any) -> None:
    with _SHARED_LOCK:
        entry = _SHARED.get(key)
        if entry is not None and any(r is ref for r in entry[0]):
            del _SHARED[key]


def shared_functions(objects: Sequence[Any], static: tuple, build: Callable) -> Any:
    """Compiled functions shared by every caller with the same ``objects`` (by
    identity: a model, an operator, a strategy...) and the same ``static`` (hashable)
    configuration: ``build(live)`` is called once per key, ``live()`` returning the
    objects (a tuple); what it returns is cached and handed to the next callers.

    The cache holds ``objects`` through weak references only: ``build`` must reach them
    through ``live()`` (never hold them), so that a model can be garbage-collected, and
    its entry goes with it. At most :data:`MAX_SHARED_FUNCTIONS` entries are kept. When
    an object cannot be weakly referenced, or ``static`` is not hashable, nothing is
    shared: ``build`` is called for this caller alone.
    """
    objects = tuple(objects)
    key = tuple(id(o) for o in objects) + (static,)
    try:
        hash(key)
        refs = tuple(None if o is None else weakref.ref(o, lambda r, k=key: _evict(k, r))
                     for o in objects)
    except TypeError:
        return build(lambda: objects)
    with _SHARED_LOCK:
        entry = _SHARED.get(key)
        if entry is not None and all(
            (r is None and o is None) or (r is not None and r() is o)
            for r, o in zip(entry[0], objects)
        ):
            _SHARED.move_to_end(key)
            return entry[1]

    def live() -> tuple:
        return tuple(None if r is None else r() for r in refs)

    value = build(live)
    with _SHARED_LOCK:
        _SHARED[key] = (refs, value)
        _SHARED.move_to_end(key)
        while len(_SHARED) > MAX_SHARED_FUNCTIONS:
            _SHARED.popitem(last=False)
    return value


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

    if strategy is None:
        return tf.distribute.get_strategy()
    if not isinstance(strategy, tf.distribute.Strategy):
        raise TypeError(
            "`strategy` must be a tf.distribute.Strategy (MirroredStrategy, "
            f"MultiWorkerMirroredStrategy, ...) or None, got {type(strategy).__name__}"
        )
    ps = getattr(tf.distribute.experimental, "ParameterServerStrategy", None)
    if ps is not None and isinstance(strategy, ps):
        raise ValueError(
            "`strategy` must run replicas in sync (MirroredStrategy, "
            "MultiWorkerMirroredStrategy, OneDeviceStrategy, TPUStrategy), got a "
            "ParameterServerStrategy, which needs a ClusterCoordinator for every step"
        )
    return strategy


def is_default_strategy(strategy: Any) -> bool:
    """True for TensorFlow's default (no-op, single-device) strategy."""
    try:
        from tensorflow.python.distribute import distribute_lib

        return strategy is distribute_lib._get_default_strategy()
    except (ImportError, AttributeError):  # pragma: no cover - private API moved
        return type(strategy).__name__ == "_DefaultDistributionStrategy"


def num_replicas(strategy: Any) -> int:
    """Number of replicas in sync (over every worker) of ``strategy``."""
    return int(strategy.num_replicas_in_sync)


def replica_shares(n: int, replicas: int) -> int:
    """Rows per replica when ``n`` rows are cut into ``replicas`` equal shares (the last
    share padded): ``ceil(n / replicas)``, at least 1."""
    return max(1, -(-int(n) // int(replicas)))


def _as_array(value: Any) -> np.ndarray:
    if hasattr(value, "numpy"):
        value = value.numpy()
    return np.asarray(value)


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

    def __init__(self, fn: Callable, strategy: Any, fallback: Optional[Callable] = None):
        self.fn = fn
        self.strategy = strategy
        self.fallback = fallback
        self.replicas = num_replicas(strategy)
        devices = getattr(strategy.extended, "worker_devices", None)
        self._devices: Sequence[str] = tuple(devices) if devices else ()
        self._all_local = len(self._devices) == self.replicas
        self._eager = False
        self._structure: Any = None
        self._step = compiled_function(self._run_step)

    def _run_step(self, split, shared):
        import tensorflow as tf

        per_replica = self.strategy.run(self.fn, args=tuple(split) + tuple(shared))
        if self._all_local:
            # every replica is on this host: hand back the parts, concatenated on the host
            self._structure = per_replica  # set while tracing; only its nesting is used
            return [
                tuple(self.strategy.experimental_local_results(v))
                for v in tf.nest.flatten(per_replica, expand_composites=False)
            ]
        # replicas on other workers: all-gather, so every worker gets every row
        return tf.nest.map_structure(lambda v: self.strategy.gather(v, axis=0), per_replica)

    def _distribute(self, arrays: Sequence[np.ndarray], share: int):
        import tensorflow as tf

        def value_fn(ctx):
            rid = ctx.replica_id_in_sync_group
            lo = rid * share
            parts = tuple(a[lo:lo + share] for a in arrays)
            if not self._devices:
                return tuple(tf.constant(p) for p in parts)
            # a multi-worker strategy asks each worker for its local replicas only
            with tf.device(self._devices[rid % len(self._devices)]):
                return tuple(tf.constant(p) for p in parts)

        return self.strategy.experimental_distribute_values_from_function(value_fn)

    def __call__(self, *split_args: Any, shared: Sequence[Any] = ()) -> Any:
        import tensorflow as tf

        if not split_args:
            raise TypeError("ReplicaRunner needs at least one argument to split")
        arrays = [_as_array(a) for a in split_args]
        n = len(arrays[0])
        for a in arrays[1:]:
            if len(a) != n:
                raise ValueError(
                    "the arguments split across replicas must have the same first "
                    f"dimension, got {[len(b) for b in arrays]}"
                )
        if self._eager or n == 0:
            return self._call_fallback(split_args, shared, n)
        share = replica_shares(n, self.replicas)
        padded = share * self.replicas
        if padded != n:  # repeat the last row: every replica gets a full share
            index = np.minimum(np.arange(padded), n - 1)
            arrays = [np.take(a, index, axis=0) for a in arrays]
        shared = tuple(tf.convert_to_tensor(s) for s in shared)
        try:
            out = self._step(self._distribute(arrays, share), shared)
        except _trace_errors() as error:
            if self.fallback is None:
                raise
            # a genuine error (bad shapes...) raises again here, without a warning
            result = self._call_fallback(split_args, shared, n)
            warn(
                f"the model cannot be traced into a graph ({type(error).__name__}: "
                f"{error}); it runs on one device, outside the {type(self.strategy).__name__}",
                XpliqueExtWarning,
            )
            self._eager = True
            return result
        if self._all_local:
            flat = [np.concatenate([p.numpy() for p in parts], axis=0)[:n] for parts in out]
            return tf.nest.pack_sequence_as(self._structure, flat)
        return tf.nest.map_structure(lambda v: v.numpy()[:n], out)

    def _call_fallback(self, split_args, shared, n):
        import tensorflow as tf

        if self.fallback is None:
            raise ValueError("ReplicaRunner got an empty batch and has no fallback")
        out = self.fallback(*split_args, *shared)
        return tf.nest.map_structure(_as_array, out)


def replicated(fn: Callable, strategy: Any, single: Callable) -> Callable:
    """``single`` under the default strategy; otherwise a :class:`ReplicaRunner` of
    ``fn`` that splits every argument across the replicas (same call signature), with
    ``single`` as its fallback for models that cannot be traced."""
    if is_default_strategy(strategy):
        return single
    return ReplicaRunner(fn, strategy, fallback=single)
