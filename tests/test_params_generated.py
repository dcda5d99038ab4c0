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

A second walk (also over ``models``, ``plots`` and ``compare``) calls every public function
and constructor with its required arguments only, taken from small valid fixtures
(``tests/params_cases.py``): every other parameter at its default, which goes through the
declared layer as a passed value does. Each runs, or refuses with a ValueError or
TypeError naming a parameter.
"""

from __future__ import annotations

import importlib
import inspect
import re

import pytest

from tests.params_cases import (
    SmallFixtures,
    iter_invalid_cases,
    required_arguments,
    valid_arguments,
)
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


# -- every public entry point called with its defaults ----------------------------------------
#: The packages whose ``__all__`` the defaults walk covers: those above, and those whose
#: entry points declare nothing (they are called all the same).
DEFAULTS_PACKAGES = PACKAGES + ["xplique_ext.models", "xplique_ext.plots", "xplique_ext.compare"]

#: Entry points that cannot run with their required arguments alone, and why: each must
#: refuse with a ValueError or TypeError naming a parameter.
REFUSED_WITH_DEFAULTS = {
    "xplique_ext.metrics.PERCY": "`targets` may be None only for a dataset of (sentence, label)",
    "xplique_ext.metrics.MeGe": "`targets` is required: MeGe trains its models on them",
}


def _all_entry_points():
    for package in DEFAULTS_PACKAGES:
        module = importlib.import_module(package)
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isclass(obj) and issubclass(obj, BaseException):
                continue
            if callable(obj):
                yield f"{package}.{name}", obj


ALL_ENTRIES = dict(_all_entry_points())


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    return SmallFixtures(tmp_path_factory.mktemp("small"))


@pytest.mark.parametrize("name", sorted(ALL_ENTRIES), ids=lambda n: n.replace("xplique_ext.", ""))
def test_defaults_run_or_refuse_naming_a_parameter(name, small, tmp_path, monkeypatch):
    """Called with its required arguments only (small valid fixtures), every public
    function and constructor runs, or refuses with a ValueError or TypeError that names a
    parameter: never an AttributeError or another raw error from inside the body."""
    entry = ALL_ENTRIES[name]
    if inspect.isclass(entry) and inspect.isabstract(entry):
        with pytest.raises(TypeError, match="abstract"):
            entry(**required_arguments(name, entry, small))
        return
    arguments = required_arguments(name, entry, small)
    monkeypatch.chdir(tmp_path)  # a file written by default lands here
    try:
        if name not in REFUSED_WITH_DEFAULTS:
            entry(**arguments)
            return
        with pytest.raises((ValueError, TypeError)) as refusal:
            entry(**arguments)
        assert re.search(r"`\w+", str(refusal.value)), f"no parameter named: {refusal.value}"
    finally:
        import matplotlib.pyplot as plt

        plt.close("all")


def test_defaults_walk_covers_every_package():
    """The walk cannot pass by calling nothing: each package contributes, and the entry
    points known to have crashed with their defaults are in it."""
    for package in DEFAULTS_PACKAGES:
        assert any(name.startswith(package + ".") for name in ALL_ENTRIES), package
    assert "xplique_ext.models.build_aixi_cnn" in ALL_ENTRIES
    assert len(ALL_ENTRIES) > 120
    assert set(REFUSED_WITH_DEFAULTS) <= set(ALL_ENTRIES)
