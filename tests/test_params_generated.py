"""Every public entry point declares its parameters (``commons.params.validate_params``),
and every declared constraint rejects a generated invalid value with a ValueError or
TypeError that names the parameter (scikit-learn's ``generate_invalid_param_val`` idea):
a generated invalid input gets an error, never a wrong number.

It walks ``__all__`` of the six public packages. Names exported there but not yet
declared go in ``NOT_YET_DECLARED``, which may only shrink: the test fails for a new
undeclared entry point and for a stale entry of the set. A declared constraint for which
no invalid value can be generated (every candidate satisfies another constraint of the
same parameter) fails ``test_every_constraint_can_be_violated``: it is reported, never
silently skipped.
"""

from __future__ import annotations

import importlib
import inspect

import pytest

from tests.params_cases import iter_invalid_cases, valid_arguments
from xplique_ext.commons.params import parameter_constraints

PACKAGES = [
    "xplique_ext.metrics",
    "xplique_ext.rules",
    "xplique_ext.text",
    "xplique_ext.datasets",
    "xplique_ext.explainers",
    "xplique_ext.callbacks",
]

#: Exported callables whose parameters are not declared yet.
NOT_YET_DECLARED: set = set()


def _entry_points():
    for package in PACKAGES:
        module = importlib.import_module(package)
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isclass(obj) and issubclass(obj, BaseException):
                continue  # warnings and errors take no parameters of ours
            if callable(obj):
                yield f"{package}.{name}", obj


ENTRIES = dict(_entry_points())


def _has_parameters(entry) -> bool:
    fn = entry.__init__ if inspect.isclass(entry) else entry
    if fn is object.__init__:
        return False
    params = inspect.signature(fn).parameters
    return any(
        n not in ("self", "cls") and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        for n, p in params.items()
    )


def test_every_entry_point_is_declared():
    undeclared = {
        name
        for name, entry in ENTRIES.items()
        if _has_parameters(entry) and parameter_constraints(entry) is None
    }
    new = sorted(undeclared - NOT_YET_DECLARED)
    stale = sorted(NOT_YET_DECLARED - undeclared)
    assert not new, f"public entry points without @validate_params: {new}"
    assert not stale, f"declared now (or gone): delete from NOT_YET_DECLARED: {stale}"


ALL_CASES = [
    (name, param, index, value, error)
    for name, entry in ENTRIES.items()
    for param, index, value, error in iter_invalid_cases(entry)
]

CASES = [
    pytest.param(name, param, value, error, id=f"{name.rsplit('.', 1)[1]}-{param}-{index}")
    for name, param, index, value, error in ALL_CASES
    if error is not None
]


def test_every_constraint_can_be_violated():
    """A declared constraint that no generated value violates is a hole in the walk."""
    holes = [
        f"{name}({param}=...) constraint {index}: {value}"
        for name, param, index, value, error in ALL_CASES
        if error is None
    ]
    assert not holes, "constraints the generator cannot violate:\n" + "\n".join(holes)


def test_cases_were_generated():
    """The walk cannot pass by generating nothing, in any package."""
    assert len(CASES) > 300
    declared = {name for name, *_ in (c.values for c in CASES)}
    for package in PACKAGES:
        assert any(name.startswith(package + ".") for name in declared), package
    assert {"xplique_ext.metrics.MuFidelity", "xplique_ext.metrics.emd"} <= declared


@pytest.mark.parametrize("name, param, value, error", CASES)
def test_invalid_value_names_the_parameter(name, param, value, error):
    entry = ENTRIES[name]
    kwargs = {**valid_arguments(entry), param: value}
    with pytest.raises(error, match=f"`{param}` must be .*, got "):
        if inspect.isclass(entry) and inspect.isabstract(entry):
            entry.__init__(None, **kwargs)  # the declaration is checked before the body
        else:
            entry(**kwargs)
