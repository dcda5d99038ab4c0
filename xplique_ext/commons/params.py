"""One declared validation layer for every public parameter (in the style of scikit-learn's
``validate_params``).

How to declare
--------------
Decorate the function, or the ``__init__`` of a class, with the constraints of its
parameters, once::

    from xplique_ext.commons.params import (
        ArrayLike, Boolean, Callable_, Interval, Options, validate_params)

    @validate_params({
        "batch_size": [Interval(numbers.Integral, 1, None), None],  # any of the list
        "sign": [Options(["abs", "positive", "raw"])],
        "explanations": [ArrayLike(kind="real", ndim=(2, 3, 4), finite=True)],
        "model": [Callable_()],
        "progress": [Boolean()],
        "strategy": "no_validation",  # checked further in, by behaviour
    })
    def f(explanations, model, *, batch_size=64, sign="abs", progress=False, strategy=None):
        ...  # batch_size arrives as an int, explanations as an np.ndarray

Each entry is a list of constraints; the value must satisfy one of them (``None`` in the
list allows None). Every parameter of the signature must be declared (``"no_validation"``
for those checked elsewhere, e.g. relations between two arguments). The checker returns
the *converted* value (``int``, ``float``, ``bool``, ``np.ndarray``, ``tuple``) and the
decorator passes that on, so the body never re-converts. Defaults are not checked.
Constraints: :class:`Interval` (Integral / Real, open or closed bounds, finite reals),
:class:`Options`, :class:`Boolean`, :class:`Callable_`, :class:`InstanceOf`,
:class:`ArrayLike` (dtype kind, rank, finiteness; ndarray, tf.Tensor, list, pandas),
:class:`PairOf`, :class:`AnyOf`, :class:`Strings` (names, vocabularies), and ``None``. A subclass extends its base's dict
(``{**BASE_PARAMETERS, "nb_samples": [...]}`` in ``metrics.base``); with other decorators
(a cache, a renaming), put ``@validate_params`` innermost, right above the ``def``.

How errors read
---------------
One wording everywhere: ``"`param` must be <expected>, got <received>"``. A value of the
wrong kind raises ``TypeError`` (``"`seed` must be an integer >= 0 or None, got 1.5
(float)"``); a value of the right kind but a bad value raises ``ValueError`` (``"`nb_samples`
must be >= 2, got 1"``, ``"`sign` must be one of ['abs', 'raw'], got 'pos'"``,
``"`x` must be an array of rank 3, got shape (8, 8): is the batch axis missing?"``).
When several constraints are declared, the message lists them all, in the declared order
(``"`n_jobs` must be >= 1 or -1 (all cores), got 0"``). ``bool`` is never accepted where a
number is expected. Plain-function checks outside a signature: :func:`check_param`
(or the thin helpers of :mod:`.validation`: ``check_int``, ``check_float``, ...).

For tests
---------
:func:`parameter_constraints` returns what an entry point declared;
:func:`generate_invalid_value` gives, for one constraint of a parameter, a value that
violates it and every other constraint of that parameter (with the error type expected),
and :func:`generate_valid_value` a value every declaration accepts, so that a test can
call any declared entry point with one bad argument (``tests/test_params_generated.py``).

This module imports no TensorFlow: tensors are recognised by their ``numpy`` method.
"""

from __future__ import annotations

import functools
import inspect
import math
import numbers
import os
from types import MappingProxyType
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

import numpy as np

__all__ = [
    "Constraint",
    "Interval",
    "Options",
    "InstanceOf",
    "Boolean",
    "Callable_",
    "ArrayLike",
    "PairOf",
    "AnyOf",
    "Word",
    "Strings",
    "STRING",
    "PATH",
    "NO_VALIDATION",
    "check_param",
    "validate_params",
    "parameter_constraints",
    "generate_invalid_value",
    "generate_valid_value",
    "iter_invalid_cases",
    "valid_arguments",
    "describe",
]

NO_VALIDATION = "no_validation"


def describe(value: Any) -> str:
    """How an error shows a received value: its repr (cut at 60 characters) and type;
    arrays by shape and dtype."""
    if isinstance(value, np.ndarray) or _is_tensor(value):
        arr = np.asarray(value.numpy() if _is_tensor(value) else value)
        return f"an array of shape {arr.shape} and dtype {arr.dtype} ({type(value).__name__})"
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{text} ({type(value).__name__})"


def _is_tensor(value: Any) -> bool:
    return hasattr(value, "numpy") and callable(value.numpy) and hasattr(value, "dtype")


def _is_bool(value: Any) -> bool:
    return isinstance(value, (bool, np.bool_))


class Mismatch(Exception):
    """Raised by a constraint: what it expected, what it received, and whether the value
    had the right kind (ValueError) or not (TypeError)."""

    def __init__(self, expected: str, received: str, right_kind: bool):
        super().__init__(expected)
        self.expected, self.received, self.right_kind = expected, received, right_kind


class Constraint:
    """A constraint: ``check`` returns the converted value or raises :class:`Mismatch`;
    ``description`` words it after "must be"; ``invalid_values`` and ``valid_value``
    serve the generated tests."""

    description = "valid"

    def check(self, value: Any) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def is_satisfied_by(self, value: Any) -> bool:
        try:
            self.check(value)
        except Mismatch:
            return False
        return True

    def invalid_values(self) -> List[Any]:
        return [object()]

    def valid_value(self) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {self.description}>"


class _NoneConstraint(Constraint):
    description = "None"

    def check(self, value):
        if value is None:
            return None
        raise Mismatch("None", describe(value), False)

    def invalid_values(self):
        return [object(), 0]

    def valid_value(self):
        return None


class Interval(Constraint):
    """A number of ``kind`` (``numbers.Integral`` or ``numbers.Real``) between ``low`` and
    ``high`` (None: unbounded), ``closed`` in "both", "left", "right", "neither". Real
    numbers must be finite (NaN and inf are refused). Converts to ``int`` / ``float``;
    ``bool`` is refused."""

    def __init__(self, kind: type, low: Optional[float], high: Optional[float],
                 closed: str = "both"):
        if kind not in (numbers.Integral, numbers.Real):
            raise TypeError("`kind` must be numbers.Integral or numbers.Real")
        if closed not in ("both", "left", "right", "neither"):
            raise ValueError("`closed` must be one of 'both', 'left', 'right', 'neither'")
        self.kind, self.low, self.high, self.closed = kind, low, high, closed
        self._noun = "an integer" if kind is numbers.Integral else "a real number"
        self.bounds = self._bounds_text()
        self.description = self._noun + (f" {self.bounds}" if self.bounds else "")

    def _bounds_text(self) -> str:
        left = self.closed in ("both", "left")
        right = self.closed in ("both", "right")
        if self.low is None and self.high is None:
            return ""
        if self.kind is numbers.Integral and (self.low is None or self.high is None):
            if self.high is None:
                return f"{'>=' if left else '>'} {self.low}"
            return f"{'<=' if right else '<'} {self.high}"
        def text(bound):  # integers in full (1000000, not 1e+06)
            return str(bound) if self.kind is numbers.Integral else f"{bound:g}"

        lo = "-inf" if self.low is None else text(self.low)
        hi = "inf" if self.high is None else text(self.high)
        left, right = left and self.low is not None, right and self.high is not None
        return f"in {'[' if left else '('}{lo}, {hi}{']' if right else ')'}"

    def check(self, value):
        if _is_bool(value) or not isinstance(value, self.kind):
            raise Mismatch(self.description, describe(value), False)
        value = int(value) if self.kind is numbers.Integral else float(value)
        if self.kind is numbers.Real and not math.isfinite(value):
            raise Mismatch(f"finite ({self.description})", repr(value), True)
        left = self.closed in ("both", "left")
        right = self.closed in ("both", "right")
        too_low = self.low is not None and (value < self.low if left else value <= self.low)
        too_high = self.high is not None and (value > self.high if right else value >= self.high)
        if too_low or too_high:
            raise Mismatch(self.bounds, f"{value:g}" if isinstance(value, float) else
                           repr(value), True)
        return value

    def contains(self, values: np.ndarray) -> np.ndarray:
        """Elementwise: inside the bounds (a boolean array; NaN is outside)."""
        inside = np.ones(np.shape(values), dtype=bool)
        with np.errstate(invalid="ignore"):
            if self.low is not None:
                inside &= (values >= self.low) if self.closed in ("both", "left") else (
                    values > self.low)
            if self.high is not None:
                inside &= (values <= self.high) if self.closed in ("both", "right") else (
                    values < self.high)
        return inside

    def invalid_values(self):
        out: List[Any] = ["1", True]
        step = 1 if self.kind is numbers.Integral else 0.5
        if self.low is not None:
            out.append(self.low - step if self.closed in ("both", "left") else self.low)
        if self.high is not None:
            out.append(self.high + step if self.closed in ("both", "right") else self.high)
        if self.kind is numbers.Integral:
            out.append(1.5)
        else:
            out += [float("nan"), float("inf")]
        return out

    def valid_value(self):
        lo, hi = self.low, self.high
        if self.kind is numbers.Integral:
            if lo is not None:
                return int(lo) if self.closed in ("both", "left") else int(lo) + 1
            return 1 if hi is None else int(hi) - 1
        if lo is not None and hi is not None:
            return (lo + hi) / 2
        return 1.0 if lo is None and hi is None else (lo + 1.0 if hi is None else hi - 1.0)


class Options(Constraint):
    """One of ``values`` (compared with ``==``; a value of another type than every option
    is a TypeError). Returns the value unchanged."""

    def __init__(self, values: Iterable[Any], description: Optional[str] = None):
        self.values = list(values)
        self.description = description or (
            f"one of {self.values}" if len(self.values) > 1 else repr(self.values[0]))

    def _right_kind(self, value):
        if _is_bool(value):
            return any(_is_bool(v) for v in self.values)
        return any(isinstance(value, type(v)) or (
            isinstance(value, numbers.Number) and isinstance(v, numbers.Number)
            and not _is_bool(v)) for v in self.values)

    def check(self, value):
        try:
            ok = any(value == v and _is_bool(value) == _is_bool(v) for v in self.values)
        except (TypeError, ValueError):  # arrays, incomparable
            ok = False
        if not ok:
            raise Mismatch(self.description, repr(value) if self._right_kind(value)
                           else describe(value), self._right_kind(value))
        return value

    def invalid_values(self):
        out: List[Any] = []
        if all(isinstance(v, str) for v in self.values):
            out.append("not-an-option")
        out += [object(), -12345]
        return out

    def valid_value(self):
        return self.values[0]


class InstanceOf(Constraint):
    """An instance of ``types`` (``bool`` excluded unless listed)."""

    def __init__(self, *types: type, description: Optional[str] = None):
        self.types = types
        self.description = description or "an instance of " + " or ".join(
            t.__name__ for t in types)

    def check(self, value):
        if _is_bool(value) and bool not in self.types:
            raise Mismatch(self.description, describe(value), False)
        if not isinstance(value, self.types):
            raise Mismatch(self.description, describe(value), False)
        return value

    def valid_value(self):
        kind = self.types[0]
        try:
            return kind()
        except Exception:  # noqa: BLE001 - a class needing arguments: an uninitialised
            return kind.__new__(kind)  # instance passes the check (tests only)


class Boolean(Constraint):
    """A ``bool`` or ``np.bool_`` (not 0/1); converts to ``bool``."""

    description = "a bool"

    def check(self, value):
        if not _is_bool(value):
            raise Mismatch(self.description, describe(value), False)
        return bool(value)

    def invalid_values(self):
        return ["yes", 1]

    def valid_value(self):
        return False


class Callable_(Constraint):  # noqa: N801 - ``Callable`` is typing's
    """Any callable."""

    description = "callable"

    def check(self, value):
        if not callable(value):
            raise Mismatch(self.description, describe(value), False)
        return value

    def invalid_values(self):
        return [3, "f"]

    def valid_value(self):
        return lambda *args, **kwargs: None


_KINDS = {
    "numeric": ("biuf", "numbers (bool, integer or float dtype)"),
    "real": ("iuf", "real numbers (integer or float dtype)"),
    "float": ("f", "floats"),
    "integer": ("iu", "integers"),
    "bool": ("b", "booleans (bool dtype)"),
    "any": (None, "values"),
}


class ArrayLike(Constraint):
    """An array: ``np.ndarray``, ``tf.Tensor`` (anything with ``.numpy()``), a (nested)
    list or tuple, a pandas object (anything with ``__array__``). Converts to an
    ``np.ndarray`` without copying when it can (the caller's array is never written to).

    kind : "numeric" (bool, int, float), "real" (int, float), "float", "integer", "bool"
        (masks) or "any":
        the dtype kinds accepted (else TypeError).
    ndim : int or tuple of ints, optional: accepted ranks (else ValueError). When the
        received rank is one less than the smallest accepted, the message asks whether
        the batch axis is missing.
    shapes : str, optional: the layouts named in the message instead of the ranks, e.g.
        "(N, H, W) or (N, H, W, C)".
    batch_hint : say "is the batch axis missing?" for a rank one short (default True).
    finite : refuse NaN and inf (ValueError counting them).
    within : :class:`Interval`, optional: the range every element must lie in (ValueError
        showing the first value outside and how many are); implies ``finite`` for a
        ``numbers.Real`` interval.
    nonempty : refuse an array with no element (ValueError showing its shape).
    """

    def __init__(self, kind: str = "numeric", ndim: Any = None, *, shapes: str = "",
                 finite: bool = False, dtype: Any = None, batch_hint: bool = True,
                 within: Optional[Interval] = None, nonempty: bool = False):
        self.batch_hint, self.within, self.nonempty = batch_hint, within, nonempty
        finite = finite or (within is not None and within.kind is numbers.Real)
        if kind not in _KINDS:
            raise ValueError(f"`kind` must be one of {list(_KINDS)}, got {kind!r}")
        self.kind, self.finite, self.dtype, self.shapes = kind, finite, dtype, shapes
        self.ndim = None if ndim is None else (
            (ndim,) if isinstance(ndim, int) else tuple(ndim))
        of = "" if kind == "any" else f" of {_KINDS[kind][1]}"
        self.description = f"a NumPy array, a tf.Tensor or a list{of}"

    def _rank_text(self) -> str:
        if self.shapes:
            return f"shape {self.shapes}"
        return "rank " + " or ".join(map(str, self.ndim))

    def check(self, value):
        if value is None or isinstance(value, (str, bytes, dict, set)):
            raise Mismatch(self.description, describe(value), False)
        try:
            if isinstance(value, np.ndarray):
                arr = value
            elif _is_tensor(value):
                arr = np.asarray(value.numpy())
            elif isinstance(value, (list, tuple, numbers.Number, np.generic)) or hasattr(
                    value, "__array__"):
                arr = np.asarray(value)
            else:
                raise Mismatch(self.description, describe(value), False)
        except (ValueError, TypeError):  # ragged lists
            raise Mismatch(f"{self.description} (a rectangular one)", describe(value),
                           False) from None
        kinds = _KINDS[self.kind][0]
        if kinds is not None and arr.dtype.kind not in kinds:
            raise Mismatch(f"an array of {_KINDS[self.kind][1]}", f"dtype {arr.dtype}", False)
        if (kinds is not None and "b" not in kinds and isinstance(value, (list, tuple))
                and arr.dtype.kind != "O" and _holds_bool(value)):  # [1.0, True] is float
            raise Mismatch(f"an array of {_KINDS[self.kind][1]}", "a list holding a bool",
                           False)
        if self.ndim is not None and arr.ndim not in self.ndim:
            hint = ": is the batch axis missing?" if (
                self.batch_hint and arr.ndim == min(self.ndim) - 1) else ""
            raise Mismatch(f"an array of {self._rank_text()}", f"shape {arr.shape}{hint}",
                           True)
        if self.nonempty and arr.size == 0:
            raise Mismatch(f"a non-empty array of {self._rank_text()}" if self.ndim
                           else "a non-empty array", f"shape {arr.shape}", True)
        if self.finite and arr.dtype.kind in "fc" and not np.isfinite(arr).all():
            n_nan, n_inf = int(np.isnan(arr).sum()), int(np.isinf(arr).sum())
            raise Mismatch("an array of finite values only", f"{n_nan} NaN and {n_inf} inf",
                           True)
        if self.within is not None and arr.size:
            bad = ~self.within.contains(arr)
            if np.any(bad):
                first = arr[bad].ravel()[0]
                count = f" ({int(np.count_nonzero(bad))} of {arr.size} values)" if arr.ndim else ""
                noun = "integers" if self.within.kind is numbers.Integral else "numbers"
                raise Mismatch(f"{noun} {self.within.bounds}", f"{first:g}{count}", True)
        if self.dtype is not None:
            arr = arr.astype(self.dtype, copy=False)
        return arr

    def invalid_values(self):
        out: List[Any] = ["text", object()]
        if self.kind != "any":
            out.append(np.array([["a"]] * 2))
        if self.ndim is not None:
            if min(self.ndim) >= 1:
                out.append(np.zeros((2,) * (min(self.ndim) - 1)))
            out.append(np.zeros((2,) * (max(self.ndim) + 1)))
        shape = (2,) * (self.ndim[0] if self.ndim else 1)
        if self.nonempty:
            out.append(np.zeros((0,) + shape[1:]))
        if self.finite:
            out.append(np.full(shape, np.nan))
        if self.within is not None:
            out += [np.full(shape, v) for v in self.within.invalid_values()
                    if isinstance(v, numbers.Real) and not _is_bool(v) and math.isfinite(v)]
        return out

    def valid_value(self):
        shape = (2,) * (self.ndim[0] if self.ndim else 1)
        fill = 1 if self.within is None else self.within.valid_value()
        dtype = {"integer": np.int64, "bool": np.bool_}.get(self.kind, np.float64)
        return np.full(shape, fill, dtype=dtype)


def _holds_bool(value: Any) -> bool:
    """Whether a (nested) list or tuple holds a bool, which NumPy would turn into 0/1."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, (list, tuple)):
            stack.extend(item)
        elif _is_bool(item):
            return True
    return False


class PairOf(Constraint):
    """A list or tuple of ``length`` items, each satisfying ``item``; converts to a tuple
    of the converted items."""

    def __init__(self, item: Constraint, length: int = 2, description: Optional[str] = None):
        self.item, self.length = item, length
        self.description = description or (
            f"a {'pair' if length == 2 else f'sequence of {length}'} of "
            f"{item.description.replace('an integer', 'integers').replace('a real number', 'real numbers')}")

    def check(self, value):
        if not isinstance(value, (list, tuple)):
            raise Mismatch(self.description, describe(value), False)
        if len(value) != self.length:
            raise Mismatch(self.description, repr(value), True)
        try:
            return tuple(self.item.check(v) for v in value)
        except Mismatch as mismatch:  # an item of the wrong kind (a bool...) is a TypeError
            raise Mismatch(self.description, repr(value), mismatch.right_kind) from None

    def invalid_values(self):
        bad = [v for v in self.item.invalid_values() if not isinstance(v, str)][:1]
        good = self.item.valid_value()
        return ["ab", (good,) * (self.length + 1)] + [(b,) + (good,) * (self.length - 1)
                                                      for b in bad]

    def valid_value(self):
        return (self.item.valid_value(),) * self.length


class AnyOf(Constraint):
    """Satisfied when one of ``constraints`` is (a composite usable inside a list)."""

    def __init__(self, *constraints: Any):
        self.constraints = [_as_constraint(c) for c in constraints]
        self.description = " or ".join(c.description for c in self.constraints)

    def check(self, value):
        return _check(value, self.constraints)

    def invalid_values(self):
        return [v for c in self.constraints for v in c.invalid_values()]

    def valid_value(self):
        return self.constraints[0].valid_value()


class Word(Constraint):
    """A non-empty string without whitespace (a token, a mask string)."""

    description = "a non-empty string without whitespace"

    def check(self, value):
        if not isinstance(value, str):
            raise Mismatch(self.description, describe(value), False)
        if value.split() != [value]:
            raise Mismatch(self.description, repr(value), True)
        return value

    def invalid_values(self):
        return ["two words", "", 3]

    def valid_value(self):
        return "word"


class Strings(Constraint):
    """A sequence of strings: list, tuple, 1-D array or pandas Index / Series (not one
    str, whose characters would be taken for the items). Returns a list of str.

    distinct : refuse a repeated item (ValueError naming it): names and vocabularies
        map each item to one position.
    nonempty : refuse an empty sequence (ValueError).
    """

    def __init__(self, *, distinct: bool = True, nonempty: bool = True, what: str = "strings"):
        self.distinct, self.nonempty = distinct, nonempty
        qualities = ", ".join(q for q, on in (("non-empty", nonempty),) if on)
        self.description = (f"a {qualities + ' ' if qualities else ''}sequence of "
                            f"{'distinct ' if distinct else ''}{what} (list, tuple, 1-D "
                            "array or pandas Index)")

    def check(self, value):
        if isinstance(value, (str, bytes, dict, set, frozenset)) or value is None:
            raise Mismatch(self.description, describe(value), False)
        if isinstance(value, np.ndarray) or hasattr(value, "to_numpy"):
            arr = np.asarray(value)
            if arr.ndim != 1:
                raise Mismatch(self.description, f"shape {arr.shape}", True)
            items = arr.tolist()
        elif isinstance(value, (list, tuple)):
            items = list(value)
        else:
            raise Mismatch(self.description, describe(value), False)
        for item in items:
            if not isinstance(item, str):
                raise Mismatch(self.description, f"an item {describe(item)}", False)
        if self.nonempty and not items:
            raise Mismatch(self.description, "an empty sequence", True)
        if self.distinct and len(set(items)) != len(items):
            seen: set = set()
            repeated = next(item for item in items if item in seen or seen.add(item))
            raise Mismatch(self.description, f"{repeated!r} more than once", True)
        return [str(item) for item in items]

    def invalid_values(self):
        out: List[Any] = ["abc", [1, 2]]
        if self.distinct:
            out.append(["a", "a"])
        if self.nonempty:
            out.append([])
        return out

    def valid_value(self):
        return ["a", "b"]


#: Ready-made constraints for text and file-system parameters.
STRING = InstanceOf(str, description="a string")
PATH = InstanceOf(str, os.PathLike, description="a path (str or os.PathLike)")


def _as_constraint(c: Any) -> Constraint:
    if c is None:
        return _NoneConstraint()
    if isinstance(c, Constraint):
        return c
    raise TypeError(f"not a constraint: {c!r}")


def _check(value: Any, constraints: Sequence[Constraint]) -> Any:
    """Converted value, or a Mismatch gathering every constraint's expectation."""
    failures: List[Mismatch] = []
    for constraint in constraints:
        try:
            return constraint.check(value)
        except Mismatch as mismatch:
            # without its traceback: a kept traceback is a cycle (this frame -> failures ->
            # mismatch -> traceback -> this frame -> its callers' frames) that holds every
            # caller's locals (a reader's arrays) until the garbage collector runs
            failures.append(mismatch.with_traceback(None))
    if any(m.right_kind for m in failures):  # the right kind, a bad value: say what was
        expected = " or ".join(dict.fromkeys(m.expected for m in failures))  # wrong with it
        raise Mismatch(expected, next(m.received for m in failures if m.right_kind), True)
    expected = " or ".join(dict.fromkeys(m.expected for m in failures))
    raise Mismatch(expected, failures[0].received if len(failures) == 1 else describe(value),
                   False)


def _normalise(constraints: Any) -> Any:
    if constraints == NO_VALIDATION:
        return NO_VALIDATION
    if isinstance(constraints, (Constraint, type(None))):
        constraints = [constraints]
    return [_as_constraint(c) for c in constraints]


def check_param(value: Any, name: str, constraints: Any) -> Any:
    """Check one value against its constraints (a list: any of them; ``None`` in it allows
    None); return the converted value or raise TypeError / ValueError worded
    "`name` must be <expected>, got <received>"."""
    constraints = _normalise(constraints)
    if constraints == NO_VALIDATION:
        return value
    try:
        return _check(value, constraints)
    except Mismatch as mismatch:
        error = ValueError if mismatch.right_kind else TypeError
        raise error(f"`{name}` must be {mismatch.expected}, got {mismatch.received}") from None


def validate_params(constraints: Mapping[str, Any]):
    """Decorator declaring the constraints of a function's (or ``__init__``'s) parameters,
    checked on every call, converted values passed on. Every parameter but ``self``,
    ``*args`` and ``**kwargs`` must be declared (``"no_validation"`` allowed)."""
    declared = {name: _normalise(c) for name, c in constraints.items()}

    def decorate(fn):
        signature = inspect.signature(fn)
        params = [p for name, p in signature.parameters.items() if name not in ("self", "cls")
                  and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        unknown = set(declared) - set(signature.parameters)
        missing = [p.name for p in params if p.name not in declared]
        if unknown or missing:
            raise TypeError(f"validate_params on {fn.__qualname__}: undeclared parameters "
                            f"{missing}, unknown names {sorted(unknown)}")

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            bound = signature.bind(*args, **kwargs)
            for name, value in bound.arguments.items():
                if name in declared:
                    bound.arguments[name] = check_param(value, name, declared[name])
            return fn(*bound.args, **bound.kwargs)

        wrapper.parameter_constraints = MappingProxyType(declared)
        return wrapper

    return decorate


def parameter_constraints(entry: Any) -> Optional[Mapping[str, Any]]:
    """What a function or a class (its ``__init__``) declared, or None if it declared
    nothing."""
    fn = entry.__init__ if inspect.isclass(entry) else entry
    return getattr(fn, "parameter_constraints", None)


def generate_valid_value(constraints: Any) -> Any:
    """A value the declaration accepts (its first constraint's example)."""
    constraints = _normalise(constraints)
    if constraints == NO_VALIDATION:
        raise ValueError("no value can be generated for a 'no_validation' parameter")
    return constraints[0].valid_value()


def generate_invalid_value(constraints: Any, index: int) -> Tuple[Any, type]:
    """A value that violates constraint ``index`` of a declaration *and all the others*,
    with the error type the checker raises for it. Raises LookupError when every
    candidate is accepted by another constraint (e.g. ``Real`` next to ``Integral``)."""
    constraints = _normalise(constraints)
    for candidate in constraints[index].invalid_values():
        try:
            _check(candidate, constraints)
        except Mismatch as mismatch:
            return candidate, ValueError if mismatch.right_kind else TypeError
    raise LookupError(f"no invalid value for {constraints[index]!r} among {constraints}")


def iter_invalid_cases(entry: Any) -> Iterable[Tuple[str, int, Any, Optional[type]]]:
    """(parameter, constraint index, invalid value, error type) for each declared
    constraint of ``entry`` (``None`` in a list, which only allows None, is not a
    constraint to violate). A constraint that no generated value violates without
    satisfying another one is *reported*, not skipped: it comes with the value
    ``LookupError`` and the error type ``None``, for the test to fail on."""
    for name, constraints in (parameter_constraints(entry) or {}).items():
        if constraints == NO_VALIDATION:
            continue
        for index, constraint in enumerate(constraints):
            if isinstance(constraint, _NoneConstraint):
                continue
            try:
                value, error = generate_invalid_value(constraints, index)
            except LookupError as lookup:
                value, error = lookup, None
            yield name, index, value, error


def valid_arguments(entry: Any) -> Dict[str, Any]:
    """Keyword arguments the declaration accepts, for required parameters only."""
    fn = entry.__init__ if inspect.isclass(entry) else entry
    declared = parameter_constraints(entry) or {}
    out = {}
    for name, param in inspect.signature(fn).parameters.items():
        if name in ("self", "cls") or param.default is not param.empty:
            continue
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        constraints = declared.get(name, NO_VALIDATION)
        out[name] = None if constraints == NO_VALIDATION else generate_valid_value(constraints)
    return out
