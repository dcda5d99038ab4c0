"""Generated values for the declared parameters of :mod:`xplique_ext.commons.params`
(scikit-learn's ``generate_invalid_param_val`` idea), for the tests only.

:func:`generate_invalid_value` gives, for one constraint of a parameter, a value that
violates it and every other constraint of that parameter (with the error type expected),
and :func:`generate_valid_value` a value every declaration accepts, so that a test can
call any declared entry point with one bad argument (``tests/test_params_generated.py``).
A constraint's candidates come from :func:`invalid_values` and its example from
:func:`valid_value` (by its class; a subclass gets its base's).
"""

from __future__ import annotations

import inspect
import math
import numbers
from typing import Any, Dict, Iterable, List, Optional, Tuple

import numpy as np

from xplique_ext.commons.params import (
    NO_VALIDATION,
    ArrayLike,
    Boolean,
    Callable_,
    InstanceOf,
    Interval,
    Mismatch,
    Options,
    PairOf,
    Strings,
    Word,
    _check,
    _declarable,
    _is_bool,
    _NoneConstraint,
    _normalise,
    parameter_constraints,
)

#: Candidates and example of the constraints that take no settings.
FIXED = {
    _NoneConstraint: ((object(), 0), None),
    Boolean: (("yes", 1), False),
    Callable_: ((3, "f"), lambda *args, **kwargs: None),
    Word: (("two words", "", 3), "word"),
    Strings: (("abc", [1, 2], ["a", "a"], []), ("a", "b")),
}


def _interval_invalid(c: Interval) -> List[Any]:
    out: List[Any] = ["1", True]
    step = 1 if c.kind is numbers.Integral else 0.5
    if c.low is not None:
        out.append(c.low - step if c.left else c.low)
    if c.high is not None:
        out.append(c.high + step if c.right else c.high)
    return out + ([1.5] if c.kind is numbers.Integral else [math.nan, math.inf])


def _interval_valid(c: Interval) -> Any:
    low, high = c.low, c.high
    if c.kind is numbers.Integral:
        if low is not None:
            return int(low) if c.left else int(low) + 1
        return 1 if high is None else int(high) - 1
    if low is not None and high is not None:
        return (low + high) / 2
    return 1.0 if low is None and high is None else (low + 1.0 if high is None else high - 1.0)


def _array_invalid(c: ArrayLike) -> List[Any]:
    out: List[Any] = ["text", object()]
    if c.kind != "any":
        out.append(np.array([["a"]] * 2))
    if c.ndim is not None:
        if min(c.ndim) >= 1:
            out.append(np.zeros((2,) * (min(c.ndim) - 1)))
        out.append(np.zeros((2,) * (max(c.ndim) + 1)))
    shape = (2,) * (c.ndim[0] if c.ndim else 1)
    if c.nonempty:
        out.append(np.zeros((0,) + shape[1:]))
    if c.finite:
        out.append(np.full(shape, np.nan))
    if c.within is not None:
        out += [
            np.full(shape, v)
            for v in _interval_invalid(c.within)
            if isinstance(v, numbers.Real) and not _is_bool(v) and math.isfinite(v)
        ]
    if c.kind in ("real", "float", "integer"):
        out.append([0.5, True])  # NumPy would read the bool as a number
    return out


def _array_valid(c: ArrayLike) -> np.ndarray:
    shape = (2,) * (c.ndim[0] if c.ndim else 1)
    fill = 1 if c.within is None else _interval_valid(c.within)
    dtype = {"integer": np.int64, "bool": np.bool_}.get(c.kind, np.float64)
    return np.full(shape, fill, dtype=dtype)


def _instance_valid(c: InstanceOf) -> Any:
    kind = c.types[0]
    try:
        return kind()
    except Exception:  # noqa: BLE001 - a class needing arguments: an uninitialised
        return kind.__new__(kind)  # instance passes the check


def valid_value(constraint: Any) -> Any:
    """An example the constraint accepts."""
    if isinstance(constraint, PairOf):
        return (valid_value(constraint.item),) * 2
    if isinstance(constraint, Options):
        return constraint.values[0]
    for kind, example in (
        (Interval, _interval_valid),
        (ArrayLike, _array_valid),
        (InstanceOf, _instance_valid),
    ):
        if isinstance(constraint, kind):
            return example(constraint)
    return next((v for k, (_, v) in FIXED.items() if isinstance(constraint, k)), None)


def invalid_values(constraint: Any) -> List[Any]:
    """Candidate values that break the constraint (tried in order)."""
    if isinstance(constraint, Interval):
        return _interval_invalid(constraint)
    if isinstance(constraint, ArrayLike):
        return _array_invalid(constraint)
    if isinstance(constraint, Options):
        words = ["not-an-option"] if all(isinstance(v, str) for v in constraint.values) else []
        return [*words, object(), -12345]
    if isinstance(constraint, PairOf):
        bad = [v for v in invalid_values(constraint.item) if not isinstance(v, str)][:1]
        good = valid_value(constraint.item)
        return ["ab", (good,) * 3] + [(b, good) for b in bad]
    fixed = next((list(v) for k, (v, _) in FIXED.items() if isinstance(constraint, k)), [])
    return fixed or [object()]


def generate_valid_value(constraints: Any) -> Any:
    """A value the declaration accepts (its first constraint's example)."""
    constraints = _normalise(constraints)
    if constraints == NO_VALIDATION:
        raise ValueError("no value can be generated for a 'no_validation' parameter")
    return valid_value(constraints[0])


def generate_invalid_value(constraints: Any, index: int) -> Tuple[Any, type]:
    """A value that violates constraint ``index`` of a declaration *and all the others*,
    with the error type the checker raises for it. Raises LookupError when every
    candidate is accepted by another constraint (e.g. ``Real`` next to ``Integral``)."""
    constraints = _normalise(constraints)
    for candidate in invalid_values(constraints[index]):
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
        for index, constraint in enumerate(() if constraints == NO_VALIDATION else constraints):
            if not isinstance(constraint, _NoneConstraint):
                try:
                    yield (name, index, *generate_invalid_value(constraints, index))
                except LookupError as lookup:
                    yield name, index, lookup, None


def valid_arguments(entry: Any) -> Dict[str, Any]:
    """Keyword arguments the declaration accepts, for required parameters only."""
    declared = parameter_constraints(entry) or {}
    fn = entry.__init__ if inspect.isclass(entry) else entry
    return {
        p.name: None
        if declared.get(p.name, NO_VALIDATION) == NO_VALIDATION
        else generate_valid_value(declared[p.name])
        for p in _declarable(fn)
        if p.default is p.empty
    }
