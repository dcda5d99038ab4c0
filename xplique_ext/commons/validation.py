"""Parameter checks as plain functions, for code that checks a value outside a declared
signature. Each is a thin use of the one validation layer, :mod:`.params`, and words its
errors the same way: "`name` must be <expected>, got <received>".

Deprecated inside the package (one path per job): declare the parameter with
``@validate_params`` or call :func:`.params.check_param` with the constraint; these go
once no module uses them."""

from __future__ import annotations

import numbers
from typing import Any, Iterable, Optional

import numpy as np

from .params import ArrayLike, Interval, Options, check_param

__all__ = ["check_int", "check_float", "check_choice", "check_finite", "to_numpy"]


def check_int(value: Any, name: str, *, minimum: Optional[int] = None,
              maximum: Optional[int] = None, allow_none: bool = False) -> Optional[int]:
    """``check_param(value, name, [Interval(numbers.Integral, minimum, maximum)])``, with
    ``None`` in the list if ``allow_none``."""
    interval = Interval(numbers.Integral, minimum, maximum)
    return check_param(value, name, [interval, None] if allow_none else [interval])


def check_float(value: Any, name: str, *, low: Optional[float] = None,
                high: Optional[float] = None, low_inclusive: bool = True,
                high_inclusive: bool = True) -> float:
    """``check_param(value, name, [Interval(numbers.Real, low, high, closed)])`` (an
    infinite bound is no bound)."""
    closed = {(True, True): "both", (True, False): "left", (False, True): "right",
              (False, False): "neither"}[low_inclusive, high_inclusive]
    low, high = (None if b is not None and np.isinf(b) else b for b in (low, high))
    return check_param(value, name, [Interval(numbers.Real, low, high, closed)])


def check_choice(value: Any, name: str, choices: Iterable[Any]) -> Any:
    """``check_param(value, name, [Options(choices)])``."""
    return check_param(value, name, [Options(choices)])


def check_finite(array: Any, name: str) -> None:
    """``check_param(np.asarray(array), name, [ArrayLike("any", finite=True)])``."""
    check_param(np.asarray(array), name, [ArrayLike("any", finite=True)])


def to_numpy(x: Any, name: str, dtype: Any = None) -> np.ndarray:
    """``check_param(x, name, [ArrayLike("any", dtype=dtype)])``; a scalar string becomes a
    0-d array (its dtype is refused further in)."""
    if isinstance(x, (str, bytes)):
        return np.asarray(x, dtype=dtype)
    return check_param(x, name, [ArrayLike("any", dtype=dtype)])
