"""Parameter validation shared by every metric: clear errors that name the parameter,
what was expected and what was received."""

from __future__ import annotations

import numbers
from typing import Any, Iterable, Optional

import numpy as np

__all__ = ["check_int", "check_float", "check_choice", "check_finite", "to_numpy"]


def _describe(value: Any) -> str:
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{text} ({type(value).__name__})"


def check_int(
    value: Any,
    name: str,
    *,
    minimum: Optional[int] = None,
    maximum: Optional[int] = None,
    allow_none: bool = False,
) -> Optional[int]:
    """Return ``value`` as an int, or raise a TypeError / ValueError naming ``name``."""
    if value is None:
        if allow_none:
            return None
        raise TypeError(f"`{name}` must be an integer, got None")
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        expected = "an integer or None" if allow_none else "an integer"
        raise TypeError(f"`{name}` must be {expected}, got {_describe(value)}")
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError(f"`{name}` must be >= {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"`{name}` must be <= {maximum}, got {value}")
    return value


def check_float(
    value: Any,
    name: str,
    *,
    low: Optional[float] = None,
    high: Optional[float] = None,
    low_inclusive: bool = True,
    high_inclusive: bool = True,
) -> float:
    """Return ``value`` as a finite float within the given bounds, or raise."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"`{name}` must be a real number, got {_describe(value)}")
    value = float(value)
    if not np.isfinite(value):
        raise ValueError(f"`{name}` must be finite, got {value}")
    too_low = low is not None and (value < low if low_inclusive else value <= low)
    too_high = high is not None and (value > high if high_inclusive else value >= high)
    if too_low or too_high:
        left = "[" if low_inclusive else "("
        right = "]" if high_inclusive else ")"
        lo = "-inf" if low is None else f"{low:g}"
        hi = "inf" if high is None else f"{high:g}"
        raise ValueError(f"`{name}` must be in {left}{lo}, {hi}{right}, got {value:g}")
    return value


def check_choice(value: Any, name: str, choices: Iterable[Any]) -> Any:
    """Return ``value`` if it is one of ``choices``, else raise a ValueError listing them."""
    choices = list(choices)
    try:
        ok = value in choices
    except TypeError:  # unhashable / incomparable
        ok = False
    if not ok:
        raise ValueError(f"`{name}` must be one of {choices}, got {value!r}")
    return value


def check_finite(array: Any, name: str) -> None:
    """Raise a ValueError if ``array`` holds NaN or infinite values."""
    arr = np.asarray(array)
    if arr.dtype.kind in "fc" and not np.isfinite(arr).all():
        n_nan = int(np.isnan(arr).sum())
        n_inf = int(np.isinf(arr).sum())
        raise ValueError(
            f"`{name}` must hold finite values only, got {n_nan} NaN and {n_inf} inf"
        )


def to_numpy(x: Any, name: str, dtype: Any = None) -> np.ndarray:
    """Convert an ndarray, a tf.Tensor or a (nested) list to a NumPy array without copying
    when it can be avoided. Raises a TypeError naming ``name`` otherwise."""
    if isinstance(x, np.ndarray):
        return x if dtype is None else x.astype(dtype, copy=False)
    if hasattr(x, "numpy") and callable(x.numpy):  # tf.Tensor, EagerTensor, Variable
        arr = x.numpy()
        return arr if dtype is None else arr.astype(dtype, copy=False)
    if isinstance(x, (list, tuple)) or np.isscalar(x):
        try:
            return np.asarray(x, dtype=dtype)
        except (ValueError, TypeError) as err:
            raise TypeError(f"`{name}` could not be converted to an array: {err}") from None
    if hasattr(x, "__array__"):
        return np.asarray(x, dtype=dtype)
    raise TypeError(
        f"`{name}` must be a NumPy array, a tf.Tensor or a list, got {type(x).__name__}"
    )
