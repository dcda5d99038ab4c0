"""The declared constraints of the rule metrics' numeric arguments (FiRe, Qs, rule
measures, plots), on the validation layer :mod:`xplique_ext.commons.params`.

Booleans are never taken for numbers: ``True`` where a loss, a count or a trade-off is
expected is a :class:`TypeError` naming the parameter, as is a string or a complex number.
Arrays that do not broadcast together (a relation between parameters, not a constraint of
one) are a :class:`ValueError` naming every parameter with its shape, not NumPy's
broadcast message.
"""

from __future__ import annotations

import numbers
import os
from typing import Any, Tuple

import numpy as np

from ..commons.params import ArrayLike, InstanceOf, Interval, Mismatch, check_param, describe

__all__ = ["PATH", "PSI", "REAL_ARRAY", "TEXT", "as_real_array", "check_real", "broadcast_shape"]


def _holds_bool(value: Any) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return True
    if isinstance(value, np.ndarray):
        return value.dtype.kind == "O" and any(_holds_bool(v) for v in value.ravel().tolist())
    if isinstance(value, (list, tuple)):
        return any(_holds_bool(v) for v in value)
    return False


class _RealArray(ArrayLike):
    """A real number or an array of real numbers as a float64 array: booleans refused,
    also inside a list or an object array (NumPy would read ``[0.5, True]`` as
    ``[0.5, 1.0]``); an object array of real numbers is converted."""

    def __init__(self) -> None:
        super().__init__(kind="real", dtype=np.float64)
        self.description = "a real number or an array of real numbers (not booleans)"

    def check(self, value):
        if _holds_bool(value):
            raise Mismatch(self.description, describe(value), False)
        if isinstance(value, np.ndarray) and value.dtype.kind == "O":
            try:
                value = value.astype(np.float64)
            except (TypeError, ValueError):
                raise Mismatch(self.description, describe(value), False) from None
        return super().check(value)

    def invalid_values(self):
        return [*super().invalid_values(), [0.5, True]]


#: A real number or an array of real numbers (booleans refused), as a float64 array.
REAL_ARRAY = _RealArray()


class _Psi(Interval):
    """FiRe's trade-off: a finite real number > 0 (Eq. 1)."""

    def __init__(self) -> None:
        super().__init__(numbers.Real, 0, None, closed="neither")
        self.description = self.bounds = "a finite real number > 0 (Eq. 1)"


#: FiRe's trade-off ``psi``.
PSI = _Psi()
#: A file's path.
PATH = InstanceOf(str, os.PathLike, description="a path (str or os.PathLike)")
#: A text (a file's content, or its name in messages).
TEXT = InstanceOf(str, description="a string")


def as_real_array(value: Any, name: str) -> np.ndarray:
    """``value`` as a float64 array, checked by the declared constraint
    :data:`REAL_ARRAY` (:func:`~xplique_ext.commons.params.check_param`): a TypeError
    naming ``name`` for booleans (also inside object arrays), strings, complex numbers
    and objects that are not numbers. An object array of real numbers is converted
    first. The input is never modified.

    Examples
    --------
    >>> as_real_array([1, 2.5], "p")
    array([1. , 2.5])
    >>> as_real_array(True, "p")
    Traceback (most recent call last):
    ...
    TypeError: `p` must be a real number or an array of real numbers (not booleans), got True (bool)
    """
    return check_param(value, name, [REAL_ARRAY])


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
