"""Checks of the numeric arguments of the rule metrics (FiRe, Qs, rule measures, plots).

Booleans are never taken for numbers: ``True`` where a loss, a count or a trade-off is
expected is a :class:`TypeError` naming the parameter, as is a string or a complex number.
Arrays that do not broadcast together are a :class:`ValueError` naming every parameter
with its shape, not NumPy's broadcast message.
"""

from __future__ import annotations

from typing import Any, Tuple

import numpy as np

__all__ = ["as_real_array", "check_real", "broadcast_shape"]


def _holds_bool(value: Any) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return True
    if isinstance(value, np.ndarray):
        if value.dtype.kind == "b":
            return True
        return value.dtype.kind == "O" and any(_holds_bool(v) for v in value.ravel().tolist())
    if isinstance(value, (list, tuple)):
        return any(_holds_bool(v) for v in value)
    return False


def _received(value: Any) -> str:
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{text} ({type(value).__name__})"


def as_real_array(value: Any, name: str) -> np.ndarray:
    """``value`` as a float64 array, or a TypeError naming ``name``.

    Accepts real numbers, sequences and arrays of real numbers (integer or floating point,
    NumPy arrays, tensors with ``__array__``); rejects booleans (also inside sequences),
    strings, complex numbers, dates and objects that are not numbers. The input is never
    modified (a float64 array is returned as is, read only by the callers).

    Examples
    --------
    >>> as_real_array([1, 2.5], "p")
    array([1. , 2.5])
    >>> as_real_array(True, "p")
    Traceback (most recent call last):
    ...
    TypeError: `p` must be a real number or an array of real numbers, got True (bool); booleans are not numbers here
    """
    expected = f"`{name}` must be a real number or an array of real numbers"
    if _holds_bool(value):
        raise TypeError(f"{expected}, got {_received(value)}; booleans are not numbers here")
    try:
        raw = np.asarray(value)
    except (TypeError, ValueError):  # ragged sequences
        raise TypeError(f"{expected}, got {_received(value)}") from None
    if raw.dtype.kind not in "iufO":
        raise TypeError(f"{expected}, got {_received(value)} of dtype {raw.dtype}")
    try:
        return np.asarray(raw, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{expected}, got {_received(value)}") from None


def check_real(value: Any, name: str) -> float:
    """A real scalar as a float (booleans, strings and arrays rejected with a TypeError).

    Examples
    --------
    >>> check_real(3, "r")
    3.0
    """
    array = as_real_array(value, name)
    if array.ndim != 0:
        raise TypeError(f"`{name}` must be a real number, got an array of shape {array.shape}")
    return float(array)


def broadcast_shape(**arrays: np.ndarray) -> Tuple[int, ...]:
    """The shape the named arrays broadcast to, or a ValueError naming them with their
    shapes.

    Examples
    --------
    >>> broadcast_shape(p=np.zeros(3), r=np.zeros(()))
    (3,)
    >>> broadcast_shape(p=np.zeros(3), r=np.zeros(4))
    Traceback (most recent call last):
    ...
    ValueError: `p` (shape (3,)) and `r` (shape (4,)) must have the same shape or broadcast together
    """
    try:
        return np.broadcast_shapes(*(np.shape(a) for a in arrays.values()))
    except ValueError:
        described = [f"`{name}` (shape {np.shape(a)})" for name, a in arrays.items()]
        listed = ", ".join(described[:-1]) + f" and {described[-1]}"
        raise ValueError(f"{listed} must have the same shape or broadcast together") from None
