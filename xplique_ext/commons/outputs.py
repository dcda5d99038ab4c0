"""One check for every model output, on every batch and every row.

Every place of xplique_ext that calls a user's model (the model-metric base and its
compiled graphs, the text classifier wrapper, ObjectLime, the callbacks) sends what the
model returned through these functions:

* :func:`single_output`: the model returned one array, not a dict, a tuple or a list of
  several outputs (TypeError that says which);
* :func:`check_output_dtype`: the outputs are real numbers (integer or floating point);
  a string, boolean, complex or object output is a TypeError;
* :func:`check_outputs`: one output per input (the leading axis equals the batch), the
  expected trailing shape, finite values where they are required, and values in [0, 1]
  where probabilities are expected; the error names the first offending rows;
* :func:`assert_batch_graph` and :func:`model_output_errors`: the batch-size check inside
  compiled graphs (``tf.function``, ``tf.distribute``), raised as the same ValueError.

The outputs are never cast down: they stay in the model's dtype (or go up to float64).
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterator, Optional, Sequence

import numpy as np

__all__ = [
    "single_output",
    "check_output_dtype",
    "check_outputs",
    "assert_batch_graph",
    "model_output_errors",
    "BATCH_MARKER",
]

#: Marker of the in-graph batch assertion, to turn TensorFlow's error into a ValueError.
BATCH_MARKER = "xplique_ext: model output batch mismatch"


def _is_array_like(value: Any) -> bool:
    """An array or tensor with at least one axis (a NumPy scalar is a number)."""
    shape = getattr(value, "shape", None)
    return hasattr(value, "dtype") and shape is not None and len(shape) > 0


def single_output(out: Any, name: str = "model") -> Any:
    """The one array or tensor a model returned.

    Raises
    ------
    TypeError
        For a dict, or a tuple/list whose items are arrays or tensors (several outputs, a
        multi-output Keras model): the error says what was returned and how to wrap it.
        A list or tuple of plain numbers (one value per input) is a single output.
    """
    if isinstance(out, dict) or (hasattr(out, "keys") and hasattr(out, "values")
                                 and not _is_array_like(out)):
        keys = list(out.keys())[:5]
        example = f"[{keys[0]!r}]" if keys else "[...]"
        raise TypeError(
            f"`{name}` must return a single array of outputs (N, K), got a "
            f"{type(out).__name__} with keys {keys}; wrap it so that it returns one "
            f"tensor, e.g. `lambda x: {name}(x){example}`"
        )
    if isinstance(out, (tuple, list)) and any(
        _is_array_like(o) or (isinstance(o, (list, tuple)) and o and _is_array_like(o[0]))
        for o in out
    ):
        shapes = [tuple(getattr(o, "shape", ())) for o in out]
        raise TypeError(
            f"`{name}` must return a single array of outputs (N, K), got a "
            f"{type(out).__name__} of {len(out)} outputs of shapes {shapes} (a multi-output "
            f"model); wrap it so that it returns the one output to explain, e.g. "
            f"`lambda x: {name}(x)[0]`"
        )
    return out


def check_output_dtype(dtype: Any, name: str = "model") -> None:
    """TypeError unless ``dtype`` (NumPy or TensorFlow) is an integer or floating type."""
    kind = None
    try:
        kind = np.dtype(getattr(dtype, "as_numpy_dtype", dtype)).kind
    except TypeError:
        kind = None
    if kind not in ("i", "u", "f"):
        raise TypeError(
            f"`{name}` must return real numbers (integer or floating point), got outputs "
            f"of dtype {getattr(dtype, 'name', dtype)}"
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
    out = single_output(out, name)
    arr = np.asarray(out.numpy() if hasattr(out, "numpy") else out)
    check_output_dtype(arr.dtype, name)
    wrong_batch = arr.ndim == 0 or arr.shape[0] != batch
    if wrong_batch and expected is None:
        raise ValueError(
            f"`{name}` must return one output per input, shape (B, K) or (B,): got shape "
            f"{arr.shape} for a batch of {batch} inputs"
        )
    if wrong_batch or (
        trailing is not None and tuple(arr.shape[1:]) not in [tuple(t) for t in trailing]
    ):
        allowed = expected or "shape " + " or ".join(
            str((batch,) + tuple(t)) for t in trailing
        )
        raise ValueError(
            f"`{name}` must return one output per input of {allowed}, got shape "
            f"{arr.shape} for a batch of {batch} inputs"
        )
    if arr.dtype.kind == "f" and (finite or probabilities):
        bad = ~np.isfinite(arr.reshape(batch, -1)).all(axis=1)
        if bad.any():
            raise ValueError(
                f"`{name}` must return finite outputs, got NaN or inf for "
                f"{_rows(bad, offset)}"
            )
    if probabilities and arr.size:
        tol = 4 * float(np.finfo(arr.dtype).eps) if arr.dtype.kind == "f" else 0.0
        flat = arr.reshape(batch, -1)
        bad = ((flat < -tol) | (flat > 1 + tol)).any(axis=1)
        if bad.any():
            raise ValueError(
                f"`{name}` must return probabilities in [0, 1] (end the model with a "
                f"sigmoid or softmax), got values in [{flat.min():.4g}, {flat.max():.4g}] "
                f"({_rows(bad, offset)} out of range)"
            )
    return arr


def assert_batch_graph(out: Any, x: Any, name: str = "model") -> Any:
    """Inside a graph: assert that ``out`` has one row per row of ``x`` (every batch, not
    only at tracing time). Use :func:`model_output_errors` around the call to turn a
    failure into the ValueError of :func:`check_outputs`."""
    import tensorflow as tf

    static_out, static_x = out.shape[:1], getattr(x, "shape", (None,))[:1]
    if out.shape.rank == 0:
        raise ValueError(
            f"`{name}` must return one output per input, shape (B, K) or (B,): got shape "
            "() (a scalar)"
        )
    if static_out[0] is not None and static_x[0] is not None:
        if static_out[0] != static_x[0]:
            raise ValueError(
                f"`{name}` must return one output per input, shape (B, K) or (B,): got "
                f"shape {tuple(out.shape)} for a batch of {static_x[0]} inputs"
            )
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
        raise ValueError(
            f"`{name}` must return one output per input, shape (B, K) or (B,): the "
            "number of outputs differs from the number of inputs for a batch"
        ) from None
