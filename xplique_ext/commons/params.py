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
decorator passes that on, so the body never re-converts. A parameter left at its default
goes through the same check and conversion: the body receives the converted default
(``input_shape=(128, 128, 1)`` arrives as an ``np.ndarray``, as a passed tuple would), so
that it is written for one type only. A default that converts to itself or to an
immutable value is checked once per function and reused; one that converts to a new
mutable object (a tuple to an array, a list to a new list) is converted on every call, so
that no call sees what another did to it, and the default itself is never modified.
Constraints: :class:`Interval` (Integral / Real, open or closed bounds, finite reals),
:class:`Options`, :class:`Boolean`, :class:`Callable_`, :class:`InstanceOf`,
:class:`ArrayLike` (dtype kind, rank, finiteness; ndarray, tf.Tensor, list, pandas),
:class:`PairOf`, :class:`Word`, :class:`Strings` (names, vocabularies), and
``None``. A subclass extends its base's dict (``{**BASE_PARAMETERS, "nb_samples": [...]}``
in ``metrics.base``); with other decorators (a cache, a renaming), put ``@validate_params``
innermost, right above the ``def``.

How errors read
---------------
One wording everywhere: ``"`param` must be <expected>, got <received>"``. A value of the
wrong kind raises ``TypeError`` (``"`seed` must be an integer >= 0 or None, got 1.5
(float)"``); a value of the right kind but a bad value raises ``ValueError`` (``"`nb_samples`
must be >= 2, got 1"``, ``"`sign` must be one of ['abs', 'raw'], got 'pos'"``,
``"`x` must be an array of rank 3, got shape (8, 8): is the batch axis missing?"``).
When several constraints are declared, the message lists them all, in the declared order
(``"`n_jobs` must be >= 1 or -1 (all cores), got 0"``). ``bool`` is never accepted where a
number is expected. Plain-function checks outside a signature: :func:`check_param`.

For tests
---------
:func:`parameter_constraints` returns what an entry point declared; ``tests/params_cases.py``
generates, for each declared constraint, a value that violates it (and a valid value for
every other parameter), so that ``tests/test_params_generated.py`` calls every declared
entry point with one bad argument.

This module imports no TensorFlow: tensors are recognised by their ``numpy`` method.
"""

from __future__ import annotations

import functools
import inspect
import math
import numbers
import os
from collections import Counter
from types import MappingProxyType
from typing import Any, Iterable, List, Mapping, NamedTuple, Optional, Sequence

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
    "Word",
    "Strings",
    "STRING",
    "PATH",
    "NO_VALIDATION",
    "check_param",
    "validate_params",
    "parameter_constraints",
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


def _holds_bool(value: Any) -> bool:
    """Whether a (nested) list or tuple holds a bool, which NumPy would turn into 0/1."""
    if isinstance(value, (list, tuple)):
        return any(_holds_bool(item) for item in value)
    return _is_bool(value)


class Mismatch(Exception):
    """Raised by a constraint: what it expected, what it received, and whether the value
    had the right kind (ValueError) or not (TypeError)."""

    def __init__(self, expected: str, received: str, right_kind: bool):
        super().__init__(expected)
        self.expected = expected
        self.received = received
        self.right_kind = right_kind


class Constraint:
    """A constraint: ``check`` returns the converted value or raises :class:`Mismatch`
    (built by :meth:`wrong_kind` or :meth:`bad_value`); ``description`` words it after
    "must be"."""

    description = "valid"

    def check(self, value: Any) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def wrong_kind(self, value: Any) -> Mismatch:
        """The mismatch of a value of the wrong kind (a TypeError)."""
        return Mismatch(self.description, describe(value), False)

    def bad_value(self, received: str) -> Mismatch:
        """The mismatch of a value of the right kind but a bad value (a ValueError)."""
        return Mismatch(self.description, received, True)

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {self.description}>"


class Interval(Constraint):
    """A number of ``kind`` (``numbers.Integral`` or ``numbers.Real``) between ``low`` and
    ``high`` (None: unbounded), ``closed`` in "both", "left", "right", "neither". Real
    numbers must be finite (NaN and inf are refused). Converts to ``int`` / ``float``;
    ``bool`` is refused. ``bounds`` words the range alone ("in (0, 1]", ">= 1")."""

    def __init__(
        self, kind: type, low: Optional[float], high: Optional[float], closed: str = "both"
    ):
        if kind not in (numbers.Integral, numbers.Real):
            raise TypeError("`kind` must be numbers.Integral or numbers.Real")
        if closed not in ("both", "left", "right", "neither"):
            raise ValueError("`closed` must be one of 'both', 'left', 'right', 'neither'")
        self.kind = kind
        self.low = low
        self.high = high
        self.closed = closed
        self.left = closed in ("both", "left")  # the low bound is allowed
        self.right = closed in ("both", "right")  # the high bound is allowed
        self.bounds = self._bounds_text()
        noun = "an integer" if kind is numbers.Integral else "a real number"
        self.description = f"{noun} {self.bounds}" if self.bounds else noun

    def _bounds_text(self) -> str:
        low = self.low
        high = self.high
        if low is None and high is None:
            return ""
        if self.kind is numbers.Integral and high is None:
            return f">{'=' * self.left} {low}"
        if self.kind is numbers.Integral and low is None:
            return f"<{'=' * self.right} {high}"
        number = str if self.kind is numbers.Integral else "{:g}".format  # 1000000, not 1e+06
        left = "[" if self.left and low is not None else "("
        right = "]" if self.right and high is not None else ")"
        low_text = "-inf" if low is None else number(low)
        high_text = "inf" if high is None else number(high)
        return f"in {left}{low_text}, {high_text}{right}"

    def check(self, value):
        if _is_bool(value) or not isinstance(value, self.kind):
            raise self.wrong_kind(value)
        try:
            value = int(value) if self.kind is numbers.Integral else float(value)
        except OverflowError:  # an int beyond the float range (10**400) where a real is expected
            value = math.inf if value > 0 else -math.inf
        if not math.isfinite(value):
            raise Mismatch(f"finite ({self.description})", repr(value), True)
        if not self.contains(value):
            received = f"{value:g}" if isinstance(value, float) else repr(value)
            raise Mismatch(self.bounds, received, True)
        return value

    def contains(self, values: Any) -> Any:
        """Elementwise: inside the bounds (booleans; NaN is outside)."""
        above = True
        if self.low is not None:
            above = values >= self.low if self.left else values > self.low
        below = True
        if self.high is not None:
            below = values <= self.high if self.right else values < self.high
        return np.logical_and(above, below)


class Options(Constraint):
    """One of ``values`` (compared with ``==``; a value of another type than every option
    is a TypeError). Returns the value unchanged."""

    def __init__(self, values: Iterable[Any], description: Optional[str] = None):
        self.values = list(values)
        self.description = description or self._listed()

    def _listed(self) -> str:
        if len(self.values) > 1:
            return f"one of {self.values}"
        return repr(self.values[0])

    def _right_kind(self, value) -> bool:
        """Whether ``value`` has the type of an option: a bool only where an option is a
        bool; any number where an option is a number (not a bool)."""
        if _is_bool(value):
            return any(_is_bool(option) for option in self.values)
        for option in self.values:
            if isinstance(value, type(option)):
                return True
            both_numbers = isinstance(value, numbers.Number) and isinstance(option, numbers.Number)
            if both_numbers and not _is_bool(option):
                return True
        return False

    def _is_an_option(self, value) -> bool:
        """None by identity, the others by ``==`` (a bool equals only a bool), an array
        never (``np.array(['a']) == 'a'`` and ``np.array(None) == None`` hold)."""
        if isinstance(value, np.ndarray):
            return False
        for option in self.values:
            if option is None:
                if value is None:
                    return True
            elif value == option and _is_bool(value) == _is_bool(option):
                return True
        return False

    def check(self, value):
        try:
            found = self._is_an_option(value)
        except (TypeError, ValueError):  # arrays, incomparable
            found = False
        if found:
            return value
        if self._right_kind(value):
            raise self.bad_value(repr(value))
        raise self.wrong_kind(value)


class _NoneConstraint(Options):
    """``None`` in a declaration's list: the value may be None."""

    def __init__(self):
        super().__init__([None])


class InstanceOf(Constraint):
    """An instance of ``types`` (``bool`` excluded unless listed)."""

    def __init__(self, *types: type, description: Optional[str] = None):
        self.types = types
        self.description = description or "an instance of " + " or ".join(t.__name__ for t in types)

    def check(self, value):
        if (_is_bool(value) and bool not in self.types) or not isinstance(value, self.types):
            raise self.wrong_kind(value)
        return value


class Boolean(Constraint):
    """A ``bool`` or ``np.bool_`` (not 0/1); converts to ``bool``."""

    description = "a bool"

    def check(self, value):
        if not _is_bool(value):
            raise self.wrong_kind(value)
        return bool(value)


class Callable_(Constraint):  # noqa: N801 - ``Callable`` is typing's
    """Any callable."""

    description = "callable"

    def check(self, value):
        if not callable(value):
            raise self.wrong_kind(value)
        return value


class Word(Constraint):
    """A non-empty string without whitespace (a token, a mask string)."""

    description = "a non-empty string without whitespace"

    def check(self, value):
        if not isinstance(value, str):
            raise self.wrong_kind(value)
        if value.split() != [value]:
            raise self.bad_value(repr(value))
        return value


class _Kind(NamedTuple):
    """An ``ArrayLike`` kind: the dtype kinds it accepts (``np.dtype.kind`` letters; empty:
    any) and the noun of the error message."""

    dtype_kinds: str
    noun: str


_KINDS = {
    "numeric": _Kind("biuf", "numbers (bool, integer or float dtype)"),
    "real": _Kind("iuf", "real numbers (integer or float dtype)"),
    "float": _Kind("f", "floats"),
    "integer": _Kind("iu", "integers"),
    "bool": _Kind("b", "booleans (bool dtype)"),
    "any": _Kind("", "values"),
}


def _is_array_like(value: Any) -> bool:
    """Whether NumPy can read ``value`` as an array we accept: an ndarray, a (nested) list
    or tuple, a number, a tensor or anything with ``__array__``; not None, a string, a
    dict or a set."""
    if value is None or isinstance(value, (str, bytes, dict, set)):
        return False
    if isinstance(value, (np.ndarray, list, tuple, numbers.Number, np.generic)):
        return True
    return _is_tensor(value) or hasattr(value, "__array__")


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
        showing the first value outside and how many are); implies ``finite``. A
        ``numbers.Integral`` interval also asks the elements of a float array to be whole
        numbers (counts held in floats: 3.0 is one, 2.5 is refused).
    nonempty : refuse an array with no element (ValueError showing its shape).
    dtype : the dtype the array is converted to (no copy when it has it).
    """

    def __init__(
        self,
        kind: str = "numeric",
        ndim: Any = None,
        *,
        shapes: str = "",
        finite: bool = False,
        dtype: Any = None,
        batch_hint: bool = True,
        within: Optional[Interval] = None,
        nonempty: bool = False,
    ):
        if kind not in _KINDS:
            raise ValueError(f"`kind` must be one of {list(_KINDS)}, got {kind!r}")
        self.kind = kind
        self.dtype = dtype
        self.batch_hint = batch_hint
        self.within = within
        self.finite = finite or within is not None
        self.nonempty = nonempty
        if ndim is None:
            self.ndim = None
        elif isinstance(ndim, int):
            self.ndim = (ndim,)
        else:
            self.ndim = tuple(ndim)
        if shapes:
            self.ranks = f"shape {shapes}"
        else:
            self.ranks = "rank " + " or ".join(map(str, self.ndim or ()))
        of = "" if kind == "any" else f" of {_KINDS[kind].noun}"
        self.description = f"a NumPy array, a tf.Tensor or a list{of}"

    def _as_array(self, value: Any) -> np.ndarray:
        if not _is_array_like(value):
            raise self.wrong_kind(value)
        try:
            return np.asarray(value.numpy() if _is_tensor(value) else value)
        except (ValueError, TypeError):  # ragged lists
            raise Mismatch(
                f"{self.description} (a rectangular one)", describe(value), False
            ) from None

    def check(self, value):
        arr = self._as_array(value)
        kinds = _KINDS[self.kind].dtype_kinds
        noun = _KINDS[self.kind].noun
        if kinds and arr.dtype.kind not in kinds:
            raise Mismatch(f"an array of {noun}", f"dtype {arr.dtype}", False)
        if kinds and "b" not in kinds and _holds_bool(value):  # NumPy reads [1.0, True] as floats
            raise Mismatch(f"an array of {noun}", "a list holding a bool", False)
        if self.ndim is not None and arr.ndim not in self.ndim:
            received = f"shape {arr.shape}"
            if self.batch_hint and arr.ndim == min(self.ndim) - 1:
                received += ": is the batch axis missing?"
            raise Mismatch(f"an array of {self.ranks}", received, True)
        if self.nonempty and arr.size == 0:
            expected = f"a non-empty array of {self.ranks}" if self.ndim else "a non-empty array"
            raise Mismatch(expected, f"shape {arr.shape}", True)
        if self.finite and arr.dtype.kind in "fc" and not np.isfinite(arr).all():
            n_nan = int(np.isnan(arr).sum())
            n_inf = int(np.isinf(arr).sum())
            raise Mismatch("an array of finite values only", f"{n_nan} NaN and {n_inf} inf", True)
        if self.within is not None:
            self._check_within(arr)
        if self.dtype is None:
            return arr
        return arr.astype(self.dtype, copy=False)

    def _check_within(self, arr: np.ndarray) -> None:
        """Every element in the range of ``within`` (finite: checked before), and whole
        for an integral range."""
        integral = self.within.kind is numbers.Integral
        outside = ~self.within.contains(arr)
        if integral and arr.dtype.kind == "f":
            outside |= arr != np.floor(arr)  # not a whole number
        if not np.any(outside):
            return
        count = ""
        if arr.ndim:
            count = f" ({int(np.count_nonzero(outside))} of {arr.size} values)"
        noun = "integers" if integral else "numbers"
        first = arr[outside].ravel()[0]
        raise Mismatch(f"{noun} {self.within.bounds}", f"{first:g}{count}", True)


class PairOf(Constraint):
    """A list or tuple of two items, each satisfying ``item``; converts to a tuple of the
    converted items."""

    def __init__(self, item: Constraint, description: Optional[str] = None):
        self.item = item
        items = item.description.replace("an integer", "integers")
        items = items.replace("a real number", "real numbers")
        self.description = description or f"a pair of {items}"

    def check(self, value):
        if not isinstance(value, (list, tuple)):
            raise self.wrong_kind(value)
        if len(value) != 2:
            raise self.bad_value(repr(value))
        try:
            return tuple(self.item.check(v) for v in value)
        except Mismatch as mismatch:  # an item of the wrong kind (a bool...) is a TypeError
            raise Mismatch(self.description, repr(value), mismatch.right_kind) from None


class Strings(Constraint):
    """A sequence of strings: list, tuple, 1-D array or pandas Index / Series (not one
    str, whose characters would be taken for the items). Returns a list of str.

    Non-empty, and without a repeated item (ValueError naming it): names and vocabularies
    map each item to one position. ``what``: the items' noun in the message.
    """

    def __init__(self, *, what: str = "strings"):
        self.description = (
            f"a non-empty sequence of distinct {what} (list, tuple, 1-D array or pandas Index)"
        )

    def check(self, value):
        if not (isinstance(value, (np.ndarray, list, tuple)) or hasattr(value, "to_numpy")):
            raise self.wrong_kind(value)
        if not isinstance(value, (list, tuple)) and np.ndim(value) != 1:  # an array, pandas
            raise self.bad_value(f"shape {np.shape(value)}")
        items = list(value) if isinstance(value, (list, tuple)) else np.asarray(value).tolist()
        wrong = [item for item in items if not isinstance(item, str)]
        if wrong:
            raise Mismatch(self.description, f"an item {describe(wrong[0])}", False)
        if not items:
            raise self.bad_value("an empty sequence")
        repeated = [item for item, count in Counter(items).items() if count > 1]
        if repeated:
            raise self.bad_value(f"{repeated[0]!r} more than once")
        return [str(item) for item in items]


#: Ready-made constraints for text and file-system parameters.
STRING = InstanceOf(str, description="a string")
PATH = InstanceOf(str, os.PathLike, description="a path (str or os.PathLike)")


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
    expected = " or ".join(dict.fromkeys(m.expected for m in failures))
    right_kind = [m for m in failures if m.right_kind]
    if right_kind:  # the right kind, a bad value: say what was wrong with it
        raise Mismatch(expected, right_kind[0].received, True)
    if len(failures) == 1:
        raise Mismatch(expected, failures[0].received, False)
    raise Mismatch(expected, describe(value), False)


def _normalise(constraints: Any) -> Any:
    """A declaration as a list of constraints (``None`` becomes the None constraint), or
    :data:`NO_VALIDATION`."""
    if constraints == NO_VALIDATION:
        return NO_VALIDATION
    if isinstance(constraints, (Constraint, type(None))):
        constraints = [constraints]
    for c in constraints:
        if not (c is None or isinstance(c, Constraint)):
            raise TypeError(f"not a constraint: {c!r}")
    return [_NoneConstraint() if c is None else c for c in constraints]


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


def _declarable(fn: Any) -> List[inspect.Parameter]:
    """The parameters a declaration covers: all but ``self``/``cls``, ``*args``, ``**kw``."""
    return [
        p
        for name, p in inspect.signature(fn).parameters.items()
        if name not in ("self", "cls") and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]


_IMMUTABLE = (type(None), bool, np.bool_, numbers.Number, str, bytes, frozenset)


def _shareable(value: Any) -> bool:
    """Whether ``value`` can be handed to every call: an immutable value (a number, a
    string, None, a tuple of such)."""
    if isinstance(value, tuple):
        return all(_shareable(item) for item in value)
    return isinstance(value, _IMMUTABLE)


class _Defaults:
    """The checked and converted defaults of one function's declared parameters.

    A converted default that is the default itself, or immutable, is kept after its first
    check; any other (a new array or list made from the default) is converted again on
    every call, so that a call that modifies it changes nothing for the next one.
    """

    def __init__(self, signature: inspect.Signature, declared: Mapping[str, Any]):
        self.declared = declared
        self.defaults = {
            name: parameter.default
            for name, parameter in signature.parameters.items()
            if name in declared
            and declared[name] != NO_VALIDATION
            and parameter.default is not parameter.empty
        }
        self.kept: dict = {}

    def __contains__(self, name: str) -> bool:
        return name in self.defaults

    def converted(self, name: str) -> Any:
        """The default of ``name``, checked and converted as a passed value would be."""
        if name in self.kept:
            return self.kept[name]
        default = self.defaults[name]
        value = check_param(default, name, self.declared[name])
        if value is default or _shareable(value):
            self.kept[name] = value
        return value


def validate_params(constraints: Mapping[str, Any]):
    """Decorator declaring the constraints of a function's (or ``__init__``'s) parameters,
    checked on every call, converted values passed on; a parameter left at its default is
    checked and converted too. Every parameter but ``self``, ``*args`` and ``**kwargs``
    must be declared (``"no_validation"`` allowed)."""
    declared = {name: _normalise(c) for name, c in constraints.items()}

    def decorate(fn):
        signature = inspect.signature(fn)
        unknown = set(declared) - set(signature.parameters)
        missing = [p.name for p in _declarable(fn) if p.name not in declared]
        if unknown or missing:
            raise TypeError(
                f"validate_params on {fn.__qualname__}: undeclared parameters "
                f"{missing}, unknown names {sorted(unknown)}"
            )
        checked = [name for name in signature.parameters if name in declared]  # in order
        defaults = _Defaults(signature, declared)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            bound = signature.bind(*args, **kwargs)
            passed = set(bound.arguments)
            bound.apply_defaults()
            arguments = bound.arguments
            for name in checked:
                if name in passed:
                    arguments[name] = check_param(arguments[name], name, declared[name])
                elif name in defaults:
                    arguments[name] = defaults.converted(name)
            return fn(*bound.args, **bound.kwargs)

        wrapper.parameter_constraints = MappingProxyType(declared)
        return wrapper

    return decorate


def parameter_constraints(entry: Any) -> Optional[Mapping[str, Any]]:
    """What a function or a class (its ``__init__``) declared, or None if it declared
    nothing."""
    fn = entry.__init__ if inspect.isclass(entry) else entry
    return getattr(fn, "parameter_constraints", None)
