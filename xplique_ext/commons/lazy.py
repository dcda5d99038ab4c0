"""Lazy public names for package ``__init__`` modules (PEP 562).

A package lists where each public name lives; the module behind a name is imported the
first time the name is used, so that ``from xplique_ext.metrics import FiRe`` does not
load TensorFlow for the model-based metrics. Type checkers and IDEs read the same names
from an ``if TYPE_CHECKING:`` block of explicit imports next to the table (a test checks
that the block, the table and ``__all__`` agree).
"""

from __future__ import annotations

import importlib
import sys
from typing import Any, Callable, Iterable, List, Mapping, Tuple

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, exports: Mapping[str, Iterable[str]], submodules: Iterable[str] = ()
) -> Tuple[Callable[[str], Any], Callable[[], List[str]]]:
    """The ``__getattr__`` and ``__dir__`` of a package whose public names load on demand.

    Parameters
    ----------
    package
        The package's ``__name__``.
    exports
        Relative module name (``".fidelity"``) -> names that module defines and the package
        re-exports.
    submodules
        Sub-packages or modules reachable as attributes (``xplique_ext.metrics`` after
        ``import xplique_ext``), imported when first used.

    Returns
    -------
    __getattr__, __dir__
        To be assigned to the package's module-level ``__getattr__`` and ``__dir__``. A
        resolved name is stored in the package's namespace, so it is looked up only once.

    Examples
    --------
    >>> import types, sys
    >>> pkg = types.ModuleType("demo_pkg")
    >>> sys.modules["demo_pkg"] = pkg
    >>> pkg.__getattr__, pkg.__dir__ = lazy_exports("demo_pkg", {"json": ["dumps"]})
    >>> pkg.dumps([1])
    '[1]'
    >>> "dumps" in dir(pkg)
    True
    >>> pkg.loads
    Traceback (most recent call last):
        ...
    AttributeError: module 'demo_pkg' has no attribute 'loads'
    >>> del sys.modules["demo_pkg"]
    """
    where = {}
    for module, names in exports.items():
        for name in names:
            if name in where:
                raise ValueError(f"`exports` lists {name!r} twice ({where[name]}, {module})")
            where[name] = module
    children = tuple(submodules)
    namespace = sys.modules[package].__dict__

    def __getattr__(name: str) -> Any:
        if name in where:
            value = getattr(importlib.import_module(where[name], package), name)
        elif name in children:
            value = importlib.import_module(f"{package}.{name}")
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        namespace[name] = value
        return value

    def __dir__() -> List[str]:
        return sorted(set(namespace) | set(where) | set(children))

    return __getattr__, __dir__
