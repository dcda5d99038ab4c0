"""Parameter checks as plain functions, for code that checks a value outside a declared
signature. Each is a thin use of the one validation layer, :mod:`.params`, and words its
errors the same way: "`name` must be <expected>, got <received>"."""

from __future__ import annotations

import numbers
from typing import Any, Iterable, Optional

import numpy as np

from .params import ArrayLike, Interval, Options, check_param, describe

__all__ = ["check_int", "check_float", "check_choice", "check_finite", "to_numpy"]

_describe = describe  # the former private name


def check_int(
    value: Any,
    name: str,
    *,
    minimum: Optional[int] = None,
    maximum: Optional[int] = None,
    allow_none: bool = False,
) -> Optional[int]:
    """Return ``value`` as an int, or raise a TypeError / ValueError naming ``name``."""
    constraints = [Interval(numbers.Integral, minimum, maximum)]
    return check_param(value, name, constraints + [None] if allow_none else constraints)


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
    low = None if low is not None and low == -np.inf else low
    high = None if high is not None and high == np.inf else high
    closed = {(True, True): "both", (True, False): "left", (False, True): "right",
              (False, False): "neither"}[low_inclusive, high_inclusive]
    return check_param(value, name, [Interval(numbers.Real, low, high, closed)])


def check_choice(value: Any, name: str, choices: Iterable[Any]) -> Any:
    """Return ``value`` if it is one of ``choices``, else raise naming them."""
    return check_param(value, name, [Options(choices)])


def check_finite(array: Any, name: str) -> None:
    """Raise a ValueError if ``array`` holds NaN or infinite values."""
    check_param(np.asarray(array), name, [ArrayLike("any", finite=True)])


def to_numpy(x: Any, name: str, dtype: Any = None) -> np.ndarray:
    """Convert an ndarray, a tf.Tensor, a (nested) list or a pandas object to a NumPy
    array without copying when it can be avoided. Raises a TypeError naming ``name``."""
    if isinstance(x, (str, bytes)):  # a scalar string: its dtype is refused further in
        return np.asarray(x, dtype=dtype)
    return check_param(x, name, [ArrayLike("any", dtype=dtype)])
