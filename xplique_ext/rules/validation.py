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
from typing import Tuple

import numpy as np

from ..commons.params import Interval, PairOf

__all__ = ["POINT", "PSI", "broadcast_shape"]

#: FiRe's trade-off ``psi``: a finite real number > 0 (Eq. 1).
PSI = Interval(numbers.Real, 0, None, closed="neither")
PSI.description = PSI.bounds = "a finite real number > 0 (Eq. 1)"
#: A point ``(p, r)`` of the plots of FiRe: a pair of real numbers.
POINT = PairOf(Interval(numbers.Real, None, None), description="a pair (p, r)")


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
