"""The validation layer itself: each constraint accepts its valid values (converted) and
rejects invalid ones with the one wording "`name` must be <expected>, got <received>"."""

from __future__ import annotations

import inspect
import numbers
import re

import numpy as np
import pandas as pd
import pytest

from tests.params_cases import (
    generate_invalid_value,
    generate_valid_value,
    iter_invalid_cases,
    valid_arguments,
)
from xplique_ext.commons.params import (
    NO_VALIDATION,
    ArrayLike,
    Boolean,
    Callable_,
    Constraint,
    InstanceOf,
    Interval,
    Options,
    PairOf,
    Strings,
    Word,
    check_param,
    parameter_constraints,
    validate_params,
)

INT_POS = [Interval(numbers.Integral, 1, None)]
UNIT_OPEN = [Interval(numbers.Real, 0.0, 1.0, closed="neither")]


@pytest.mark.parametrize(
    "value, constraints, expected",
    [
        (3, INT_POS, 3),
        (np.int64(3), INT_POS, 3),
        (None, [*INT_POS, None], None),
        (0.5, UNIT_OPEN, 0.5),
        (1, UNIT_OPEN + [Interval(numbers.Real, 1, 2)], 1.0),
        (np.float32(0.25), UNIT_OPEN, 0.25),
        ("a", [Options(["a", "b"])], "a"),
        (None, [Options([None, "a"])], None),
        (np.bool_(True), [Boolean()], True),
        ([2, 3], [PairOf(Interval(numbers.Integral, 1, None))], (2, 3)),
        ({}, [InstanceOf(dict)], {}),
        (1.5, [Interval(numbers.Integral, 0, None), Interval(numbers.Real, 1, 2)], 1.5),
        ("anything", NO_VALIDATION, "anything"),
    ],
)
def test_accepts_and_converts(value, constraints, expected):
    out = check_param(value, "p", constraints)
    assert out == expected and type(out) is type(expected)


def test_conversions_return_python_types():
    assert type(check_param(np.int32(4), "p", INT_POS)) is int
    assert type(check_param(3, "p", [Interval(numbers.Real, None, None)])) is float
    assert type(check_param(np.bool_(False), "p", [Boolean()])) is bool


@pytest.mark.parametrize(
    "value, constraints, error, message",
    [
        # type, bool where a number is expected
        (True, INT_POS, TypeError, "`p` must be an integer >= 1, got True (bool)"),
        (1.5, INT_POS, TypeError, "`p` must be an integer >= 1, got 1.5 (float)"),
        ("3", [*INT_POS, None], TypeError, "`p` must be an integer >= 1 or None, got '3' (str)"),
        (False, UNIT_OPEN, TypeError, "`p` must be a real number in (0, 1), got False (bool)"),
        # range, open and closed, Integral and Real
        (0, INT_POS, ValueError, "`p` must be >= 1, got 0"),
        (0, [*INT_POS, None], ValueError, "`p` must be >= 1 or None, got 0"),
        (5, [Interval(numbers.Integral, None, 4)], ValueError, "`p` must be <= 4, got 5"),
        (5, [Interval(numbers.Integral, 1, 4)], ValueError, "`p` must be in [1, 4], got 5"),
        (1.0, UNIT_OPEN, ValueError, "`p` must be in (0, 1), got 1"),
        (
            0.0,
            [Interval(numbers.Real, 0, 1, closed="right")],
            ValueError,
            "`p` must be in (0, 1], got 0",
        ),
        (
            0,
            [*INT_POS, Options([-1], description="-1 (all cores)")],
            ValueError,
            "`p` must be >= 1 or -1 (all cores), got 0",
        ),
        # finiteness
        (
            float("nan"),
            UNIT_OPEN,
            ValueError,
            "`p` must be finite (a real number in (0, 1)), got nan",
        ),
        (
            float("inf"),
            [Interval(numbers.Real, None, None)],
            ValueError,
            "`p` must be finite (a real number), got inf",
        ),
        # options
        ("c", [Options(["a", "b"])], ValueError, "`p` must be one of ['a', 'b'], got 'c'"),
        (3, [Options(["a", "b"])], TypeError, "`p` must be one of ['a', 'b'], got 3 (int)"),
        (True, [Options([0, 1])], TypeError, "`p` must be one of [0, 1], got True (bool)"),
        # bool, callable, instance
        (1, [Boolean()], TypeError, "`p` must be a bool, got 1 (int)"),
        (3, [Callable_()], TypeError, "`p` must be callable, got 3 (int)"),
        ([], [InstanceOf(dict)], TypeError, "`p` must be an instance of dict, got [] (list)"),
        # pairs
        (
            5,
            [None, PairOf(Interval(numbers.Integral, 1, None))],
            TypeError,
            "`p` must be None or a pair of integers >= 1, got 5 (int)",
        ),
        (
            (0, 4),
            [None, PairOf(Interval(numbers.Integral, 1, None))],
            ValueError,
            "`p` must be None or a pair of integers >= 1, got (0, 4)",
        ),
        # composites: the expectations of every member
        (
            "x",
            [Interval(numbers.Real, None, None), Callable_()],
            TypeError,
            "`p` must be a real number or callable, got 'x' (str)",
        ),
    ],
)
def test_rejects_with_the_one_wording(value, constraints, error, message):
    with pytest.raises(error, match=re.escape(message) + "$"):
        check_param(value, "p", constraints)


# --------------------------------------------------------------------------- arrays
def test_array_like_converts_lists_tensors_pandas_without_copy():
    x = np.arange(6.0).reshape(2, 3)
    c = [ArrayLike("real", ndim=2)]
    assert check_param(x, "x", c) is x
    np.testing.assert_array_equal(check_param(x.tolist(), "x", c), x)
    pd = pytest.importorskip("pandas")
    np.testing.assert_array_equal(check_param(pd.DataFrame(x), "x", c), x)

    class Tensor:  # what tf.Tensor offers, without importing TensorFlow here
        dtype = "float64"

        def numpy(self):
            return x

    np.testing.assert_array_equal(check_param(Tensor(), "x", c), x)


@pytest.mark.parametrize(
    "value, constraint, error, message",
    [
        (
            np.array(["a", "b"]),
            ArrayLike("numeric"),
            TypeError,
            "`x` must be an array of numbers (bool, integer or float dtype), got dtype <U1",
        ),
        (
            np.array([True]),
            ArrayLike("real"),
            TypeError,
            "`x` must be an array of real numbers (integer or float dtype), got dtype bool",
        ),
        (
            "abc",
            ArrayLike("numeric"),
            TypeError,
            "`x` must be a NumPy array, a tf.Tensor or a list of numbers (bool, integer or float "
            "dtype), got 'abc' (str)",
        ),
        (
            {"a": 1},
            ArrayLike("any"),
            TypeError,
            "`x` must be a NumPy array, a tf.Tensor or a list, got {'a': 1} (dict)",
        ),
        (
            np.zeros((8, 8)),
            ArrayLike("real", ndim=3),
            ValueError,
            "`x` must be an array of rank 3, got shape (8, 8): is the batch axis missing?",
        ),
        (
            np.zeros(8),
            ArrayLike("real", ndim=3),
            ValueError,
            "`x` must be an array of rank 3, got shape (8,)",
        ),
        (
            np.zeros(8),
            ArrayLike("real", ndim=(2, 3), shapes="(H, W) or (N, H, W)", batch_hint=False),
            ValueError,
            "`x` must be an array of shape (H, W) or (N, H, W), got shape (8,)",
        ),
        (
            np.array([1.0, np.nan, np.inf, np.nan]),
            ArrayLike("real", finite=True),
            ValueError,
            "`x` must be an array of finite values only, got 2 NaN and 1 inf",
        ),
        (
            [[1, 2], [3]],
            ArrayLike("real"),
            TypeError,
            "`x` must be a NumPy array, a tf.Tensor or a list of real numbers (integer or float "
            "dtype) (a rectangular one), got [[1, 2], [3]] (list)",
        ),
    ],
)
def test_array_like_rejects(value, constraint, error, message):
    with pytest.raises(error, match=re.escape(message) + "$"):
        check_param(value, "x", [constraint])


def test_array_like_never_modifies_its_input():
    x = np.array([1, 2], dtype=np.int32)
    out = check_param(x, "x", [ArrayLike("real", dtype=np.float64)])
    assert out.dtype == np.float64 and x.dtype == np.int32 and out is not x


# --------------------------------------------------------------------------- declaring
@validate_params(
    {"n": INT_POS, "mode": [Options(["a", "b"])], "x": [ArrayLike("real")], "extra": NO_VALIDATION}
)
def _declared(x, n=1, *, mode="a", extra=None):
    return x, n, mode


def test_decorator_checks_and_passes_converted_values():
    x, n, mode = _declared([1, 2], np.int64(2), mode="b")
    assert isinstance(x, np.ndarray) and type(n) is int and mode == "b"
    with pytest.raises(ValueError, match=r"^`n` must be >= 1, got 0$"):
        _declared([1], 0)
    with pytest.raises(TypeError, match=r"^`mode` must be one of \['a', 'b'\], got 1 \(int\)$"):
        _declared([1], mode=1)
    assert parameter_constraints(_declared)["n"] == INT_POS
    assert _declared.__name__ == "_declared"


class _Counting(Constraint):
    """Accepts anything, counting its checks."""

    description = "anything"

    def __init__(self):
        self.checks = 0

    def check(self, value):
        self.checks += 1
        return value


def test_a_default_is_checked_and_converted_as_a_passed_value():
    @validate_params({"shape": [ArrayLike("integer", ndim=1)], "scale": UNIT_OPEN})
    def f(shape=(4, 4, 1), scale=0.5):
        return shape, scale

    shape, scale = f()
    assert isinstance(shape, np.ndarray) and shape.tolist() == [4, 4, 1]
    assert type(scale) is float
    np.testing.assert_array_equal(f()[0], f((4, 4, 1))[0])  # the same as when passed


def test_an_invalid_default_is_refused_naming_the_parameter():
    @validate_params({"n": INT_POS})
    def f(n=0):
        return n

    with pytest.raises(ValueError, match=r"^`n` must be >= 1, got 0$"):
        f()
    assert f(2) == 2


def test_an_immutable_default_is_checked_once():
    counting = _Counting()

    @validate_params({"n": [counting], "name": [counting]})
    def f(n=3, name="a"):
        return n, name

    assert [f(), f(), f()] == [(3, "a")] * 3
    assert counting.checks == 2  # once per default, on the first call
    f(4, "b")
    assert counting.checks == 4  # a passed value, every time


def test_a_converted_mutable_default_is_new_on_every_call():
    default_names = ["a", "b"]

    @validate_params({"shape": [ArrayLike("real", ndim=1)], "names": [Strings()]})
    def f(shape=(1.0, 2.0), names=default_names):
        shape[0] = 99.0  # a body that modifies what it received
        names.append("c")
        return shape.tolist(), list(names)

    assert f() == f() == ([99.0, 2.0], ["a", "b", "c"])
    assert default_names == ["a", "b"]  # the default itself is never modified
    assert inspect.signature(f).parameters["shape"].default == (1.0, 2.0)


def test_defaults_after_an_unchecked_positional_only_parameter():
    @validate_params({"a": NO_VALIDATION, "b": [ArrayLike("real", ndim=1)], "c": INT_POS})
    def f(a=None, b=(1, 2), /, c=1):
        return a, b, c

    a, b, c = f()
    assert a is None and isinstance(b, np.ndarray) and c == 1
    assert f("x", [3], c=2)[2] == 2


def test_decorator_refuses_an_incomplete_declaration():
    with pytest.raises(TypeError, match=r"undeclared parameters \['b'\]"):
        validate_params({"a": INT_POS})(lambda a, b: None)
    with pytest.raises(TypeError, match=r"unknown names \['c'\]"):
        validate_params({"a": INT_POS, "c": INT_POS})(lambda a: None)


def test_decorated_init_keeps_its_signature():
    import inspect

    class Thing:
        @validate_params({"k": INT_POS})
        def __init__(self, k=3):
            self.k = k

    assert list(inspect.signature(Thing).parameters) == ["k"]
    assert Thing(np.int8(2)).k == 2 and parameter_constraints(Thing) is not None
    with pytest.raises(ValueError, match="`k` must be >= 1"):
        Thing(0)


# --------------------------------------------------------------------------- generation
@pytest.mark.parametrize(
    "constraints",
    [
        INT_POS,
        [*INT_POS, None],
        UNIT_OPEN,
        [Options(["a", "b"])],
        [Boolean()],
        [Callable_()],
        [ArrayLike("real", ndim=(2, 3), finite=True)],
        [None, PairOf(Interval(numbers.Integral, 1, None))],
        [Interval(numbers.Real, None, None), Callable_()],
        [InstanceOf(dict)],
    ],
)
def test_generated_values(constraints):
    check_param(generate_valid_value(constraints), "p", constraints)
    for index, constraint in enumerate(constraints):
        if constraint is None:
            continue
        value, error = generate_invalid_value(constraints, index)
        with pytest.raises(error, match="^`p` must be "):
            check_param(value, "p", constraints)


def test_generation_over_a_declared_function():
    cases = list(iter_invalid_cases(_declared))
    assert {c[0] for c in cases} == {"n", "mode", "x"}
    assert list(valid_arguments(_declared)) == ["x"]  # the required parameters only
    for name, _, value, error in cases:
        with pytest.raises(error, match=f"`{name}` must be"):
            _declared(**{**valid_arguments(_declared), name: value})


def test_generation_says_when_no_invalid_value_exists():
    with pytest.raises(LookupError):  # every value breaking the first satisfies the second
        generate_invalid_value(
            [Interval(numbers.Integral, None, None), InstanceOf(object, bool)], 0
        )


def test_an_uninvertible_constraint_is_reported_not_skipped():
    @validate_params({"x": [Interval(numbers.Integral, None, None), InstanceOf(object, bool)]})
    def shadowed(x):
        return x

    cases = list(iter_invalid_cases(shadowed))
    # anything breaking one of them satisfies the other: both come back, marked
    assert [(c[0], c[1], c[3]) for c in cases] == [("x", 0, None), ("x", 1, None)]
    assert all(isinstance(c[2], LookupError) for c in cases)


# ------------------------------------------- element ranges, bools in lists, pairs, words
POSITIVE_ARRAY = [ArrayLike("real", within=Interval(numbers.Real, 0, None))]


@pytest.mark.parametrize(
    "value, constraints, error, message",
    [
        (
            [-1.0, 2.0, -3.0],
            POSITIVE_ARRAY,
            ValueError,
            "`p` must be numbers in [0, inf), got -1 (2 of 3 values)",
        ),
        (-0.5, POSITIVE_ARRAY, ValueError, "`p` must be numbers in [0, inf), got -0.5"),
        (
            [1.0, np.nan],
            POSITIVE_ARRAY,
            ValueError,
            "`p` must be an array of finite values only, got 1 NaN and 0 inf",
        ),
        (
            [1.0, True],
            POSITIVE_ARRAY,
            TypeError,
            "`p` must be an array of real numbers (integer or float dtype), got a list "
            "holding a bool",
        ),
        ([[1, 2], [3, False]], [ArrayLike("integer")], TypeError, "holding a bool"),
        (
            (True, 4),
            [PairOf(Interval(numbers.Real, None, None))],
            TypeError,
            "`p` must be a pair of real numbers, got (True, 4)",
        ),
        (
            (-1, 4),
            [PairOf(Interval(numbers.Real, 0, None))],
            ValueError,
            "`p` must be a pair of real numbers in [0, inf), got (-1, 4)",
        ),
        (
            "two words",
            [Word()],
            ValueError,
            "`p` must be a non-empty string without whitespace, got 'two words'",
        ),
        ("", [Word()], ValueError, "got ''"),
        (3, [Word()], TypeError, "got 3 (int)"),
        (
            0.0,
            [Interval(numbers.Real, 0, None, closed="neither")],
            ValueError,
            "`p` must be in (0, inf), got 0",
        ),
    ],
)
def test_element_ranges_bools_in_lists_pairs_and_words(value, constraints, error, message):
    with pytest.raises(error) as info:
        check_param(value, "p", constraints)
    assert message in str(info.value)


def test_element_range_accepts_its_bounds_and_converts():
    out = check_param(
        [0, 1e300],
        "p",
        [ArrayLike("real", dtype=np.float64, within=Interval(numbers.Real, 0, None))],
    )
    assert out.dtype == np.float64 and out.tolist() == [0.0, 1e300]
    bools = check_param([True, False], "p", [ArrayLike("numeric")])  # numeric takes bools
    assert bools.dtype == bool


def test_instance_of_a_class_needing_arguments_has_a_valid_value():
    class NeedsArgs:
        def __init__(self, a):
            self.a = a

    value = generate_valid_value([InstanceOf(NeedsArgs)])
    assert isinstance(value, NeedsArgs)


def test_a_value_accepted_by_a_later_constraint_keeps_no_frame_alive():
    """``None`` for ``[STRING, None]`` fails the first constraint: the Mismatch kept must
    not hold a traceback, whose frames would keep the caller's locals (a reader's arrays)
    alive until the garbage collector runs (read_data of a 24 MB file peaked 20 MB higher)."""
    import gc
    import weakref

    @validate_params({"x": [InstanceOf(str), None]})
    def f(x=None):
        return x

    class Big:
        pass

    def caller():
        big = Big()
        f(None)
        return weakref.ref(big)

    enabled = gc.isenabled()
    gc.disable()
    try:
        ref = caller()
        alive = ref() is not None
    finally:
        if enabled:
            gc.enable()
    assert not alive


COUNT_ARRAY = [ArrayLike("real", dtype=np.float64, within=Interval(numbers.Integral, 0, None))]


def test_an_integral_range_on_a_float_array_asks_for_whole_finite_numbers():
    # counts held in floats: 3.0 is a count, 2.5 and inf are not (both passed before)
    out = check_param([3.0, 0, 1e300], "c", COUNT_ARRAY)
    assert out.dtype == np.float64 and out.tolist() == [3.0, 0.0, 1e300]
    for value, error, message in (
        ([3.0, 2.5, 0.5], ValueError, "`c` must be integers >= 0, got 2.5 (2 of 3 values)"),
        (2.5, ValueError, "`c` must be integers >= 0, got 2.5"),
        (-1, ValueError, "`c` must be integers >= 0, got -1"),
        (
            [1.0, np.inf],
            ValueError,
            "`c` must be an array of finite values only, got 0 NaN and 1 inf",
        ),
        (
            [1.0, np.nan],
            ValueError,
            "`c` must be an array of finite values only, got 1 NaN and 0 inf",
        ),
    ):
        with pytest.raises(error) as info:
            check_param(value, "c", COUNT_ARRAY)
        assert message in str(info.value)
    # an integer-dtype array under the same range is unchanged
    assert check_param(
        np.array([2, 0]), "c", [ArrayLike("integer", within=Interval(numbers.Integral, 0, None))]
    ).tolist() == [2, 0]


@pytest.mark.parametrize("value", [np.array(None), np.array([None], dtype=object)])
@pytest.mark.parametrize(
    "constraints, expected",
    [
        ([Interval(numbers.Integral, 0, None), None], "an integer >= 0 or None"),
        ([Options(["a", "b"]), None], "one of ['a', 'b'] or None"),
        (
            [ArrayLike("real", ndim=1), None],
            "an array of real numbers (integer or float dtype) or None",
        ),
        ([Callable_(), None], "callable or None"),
    ],
)
def test_an_array_holding_none_is_not_none(value, constraints, expected):
    # ``None`` in a declaration is None itself: an object array holding None compares equal
    # to None (np.array(None) == None), which once let it through as the value (a later
    # ``seed is None`` or len() then failed far from the argument)
    with pytest.raises(
        TypeError,
        match=re.escape(
            f"`p` must be {expected}, got an array of shape "
            f"{value.shape} and dtype object (ndarray)"
        ),
    ):
        check_param(value, "p", constraints)
    assert check_param(None, "p", constraints) is None


def test_a_seed_or_strategy_holding_none_is_refused_by_name():
    from xplique_ext import runtime
    from xplique_ext.commons.uncertainty import summarize_scores

    with pytest.raises(TypeError, match=r"^`seed` must be an integer >= 0 or None, got an array"):
        summarize_scores([0.1, 0.5, 0.7], seed=np.array(None), n_resamples=100)
    with pytest.raises(TypeError, match=r"^`strategy` must be a tf.distribute.Strategy"):
        runtime.resolve_strategy(np.array([None], dtype=object))


@pytest.mark.parametrize(
    "value",
    [
        np.array(["spearman"]),
        np.array("spearman"),
        np.array([["spearman"]]),
        pd.Series(["spearman"]),
    ],
)
def test_an_array_holding_an_option_is_not_the_option(value):
    # np.array(['a']) == 'a' is array([True]), once read as a match: the array was passed
    # on as the option (a later `correlation == "pearson"` then compared arrays)
    with pytest.raises(TypeError, match=r"^`correlation` must be one of \['spearman', 'pearson'\]"):
        check_param(value, "correlation", [Options(["spearman", "pearson"])])
    assert check_param(np.str_("pearson"), "correlation", [Options(["spearman", "pearson"])])
    assert check_param(np.int64(2), "k", [Options([1, 2])]) == 2
    assert check_param(2.0, "k", [Options([1, 2])]) == 2


# --------------------------------------------------------------------------- check_param
@pytest.mark.parametrize(
    "call, error, match",
    [
        (
            lambda: check_param(1.5, "n", [Interval(numbers.Integral, None, None)]),
            TypeError,
            r"`n` must be an integer, got 1.5",
        ),
        (
            lambda: check_param(True, "n", [Interval(numbers.Integral, None, None)]),
            TypeError,
            "`n` must be an integer",
        ),
        (
            lambda: check_param(1, "n", [Interval(numbers.Integral, 2, None)]),
            ValueError,
            r"`n` must be >= 2, got 1",
        ),
        (
            lambda: check_param(1.5, "p", [Interval(numbers.Real, 0, 1, closed="left")]),
            ValueError,
            r"`p` must be in \[0, 1\), got 1.5",
        ),
        (
            lambda: check_param("a", "p", [Interval(numbers.Real, None, None)]),
            TypeError,
            "`p` must be a real number",
        ),
        (
            lambda: check_param("x", "mode", [Options(["a", "b"])]),
            ValueError,
            r"`mode` must be one of \['a', 'b'\], got 'x'",
        ),
        (
            lambda: check_param(np.array([1.0, np.nan]), "phi", [ArrayLike("any", finite=True)]),
            ValueError,
            "`phi` must be an array of finite values only, got 1 NaN and 0 inf",
        ),
        (
            lambda: check_param(object(), "x", [ArrayLike("any")]),
            TypeError,
            "`x` must be a NumPy array",
        ),
    ],
)
def test_validation_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_array_check_does_not_copy_arrays():
    x = np.zeros(3)
    assert check_param(x, "x", [ArrayLike("any")]) is x


def test_real_interval_names_an_int_beyond_the_float_range():
    with pytest.raises(ValueError, match="`p` must be finite"):
        check_param(10**400, "p", [Interval(numbers.Real, 0, None)])  # not an OverflowError


def test_arraylike_nonempty_names_the_parameter():
    constraint = [ArrayLike("numeric", ndim=1, nonempty=True)]
    with pytest.raises(ValueError, match=r"`s` must be a non-empty array .*got shape \(0,\)"):
        check_param(np.zeros(0), "s", constraint)
    assert check_param([1.0], "s", constraint).shape == (1,)
