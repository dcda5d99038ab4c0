"""Imports point one way: no cycles, each sub-package on its floor, light entry points.

The import graph is read from the source with the standard library's ``ast`` (nothing is
imported): every import statement that runs (at module level or inside a function; not
under ``if TYPE_CHECKING:``), relative imports resolved, ``from package import name``
resolved to the sub-module when ``name`` is one. Importing ``a.b.c`` also runs the
``__init__`` of ``a`` and ``a.b``: those edges count too, except towards the importer's own
enclosing packages (they are being initialised already).
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Dict, List, Optional, Set, Tuple

import pytest

import xplique_ext

PACKAGE = "xplique_ext"
ROOT = Path(xplique_ext.__file__).resolve().parent

# Floors, lowest first: a module may import its own sub-package, the floors below its own,
# and the root package (which holds only ``__version__`` and lazy attributes).
#   commons <- runtime, datasets, models, rules, plots <- explainers, text <- metrics <- cli
# ``commons`` imports no TensorFlow; ``runtime`` is the TensorFlow floor (strategies, compiled
# and replicated functions, model-output and dataset checks).
FLOOR = {
    "commons": 0,
    "runtime": 1,  # the TensorFlow runtime: imported by explainers, text and metrics
    "datasets": 1,
    "models": 1,
    "rules": 1,  # model-free rule metrics: pandas, no TensorFlow
    "plots": 1,
    "explainers": 2,
    "compare": 2,  # paired comparison of explainers: duck-typed metrics, used by metrics
    "text": 2,
    "metrics": 3,
    "cli": 4,
    "callbacks": 4,  # Keras callback: explainers and metrics during training
}

# Known cycles (each the set of modules of one strongly connected component): none left.
KNOWN_CYCLES: List[Set[str]] = []  # none: a new cycle fails the test

# Imports between sub-packages of the same floor, (importer, imported sub-package): allowed
# one way only (the cycle test forbids the way back); the test fails once an entry is stale.
KNOWN_FLOOR_VIOLATIONS: Set[Tuple[str, str]] = {
    # the AIXI function model is the dataset's own F, applied to the dataset's pattern
    # counter: models -> datasets on floor 1 (datasets never imports models)
    ("xplique_ext.models.aixi_function", "xplique_ext.datasets"),
}


# --------------------------------------------------------------------------- the graph
def module_files(root: Path) -> Dict[str, Path]:
    """Dotted module name -> file, for the package in directory ``root``."""
    modules = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _runtime_imports(tree: ast.AST):
    """Import nodes that can run: everything but ``if TYPE_CHECKING:`` bodies."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
            continue
        for child in ast.iter_child_nodes(node):
            if isinstance(node, ast.If) and _is_type_checking(node.test) and child in node.body:
                continue
            stack.append(child)


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> Optional[str]:
    if not node.level:
        return node.module
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def import_graph(modules: Dict[str, Path]) -> Dict[str, Dict[str, int]]:
    """Module -> {imported module of the same package: line of the first import}."""
    package = min(modules, key=len)

    def is_package(module: str) -> bool:
        return modules[module].name == "__init__.py"

    def targets(module: str, node) -> Set[str]:
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            base = _resolve(module, is_package(module), node)
            names = [base] + [
                f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in modules
            ]
        found = {name for name in names if name == package or name.startswith(package + ".")}
        missing = found - set(modules)
        assert not missing, f"{module} imports {missing}, which do not exist"
        return found

    def with_parents(module: str, target: str) -> Set[str]:
        # importing a.b.c runs a/__init__ and a/b/__init__ too, except the importer's own
        # enclosing packages (being initialised already)
        parts = target.split(".")
        own = {".".join(module.split(".")[:i]) for i in range(1, module.count(".") + 1)}
        own |= {module}
        return {".".join(parts[:i]) for i in range(1, len(parts) + 1)} - own

    graph: Dict[str, Dict[str, int]] = {}
    for module, path in modules.items():
        edges = graph.setdefault(module, {})
        for node in _runtime_imports(ast.parse(path.read_text(), str(path))):
            for target in targets(module, node):
                for name in with_parents(module, target):
                    edges.setdefault(name, node.lineno)
    return graph


MODULES = module_files(ROOT)
GRAPH = import_graph(MODULES)


def strongly_connected(graph: Dict[str, Dict[str, int]]) -> List[Set[str]]:
    """Tarjan's components with more than one module (or a module importing itself)."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on_stack: Set[str] = set()
    found: List[Set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1 or v in graph[v]:
                found.append(component)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def cycle_in(component: Set[str], graph: Dict[str, Dict[str, int]]) -> List[str]:
    """One cycle through a component, as ``module:line`` steps, for the failure message."""
    start = min(component)
    path, seen = [start], {start}
    while True:
        nxt = sorted(w for w in graph[path[-1]] if w in component)
        back = [w for w in nxt if w == start]
        step = back[0] if back else next((w for w in nxt if w not in seen), None)
        if step is None:  # dead end inside the component: search from the last module
            step = nxt[0]
        path.append(step)
        if step in seen:
            break
        seen.add(step)
    first = path.index(path[-1])
    loop = path[first:]
    return [f"{a} (line {graph[a][b]}) -> {b}" for a, b in zip(loop, loop[1:])]


# --------------------------------------------------------------------------- the checker
def test_graph_reader_on_a_small_package(tmp_path):
    """Relative imports, sub-module names, parent packages, imports inside functions and
    TYPE_CHECKING blocks, on a package written for the test."""
    files = {
        "pkg/__init__.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
        "    from .low import x\n__version__ = '1'\n",
        "pkg/low/__init__.py": "from .core import x\n",
        "pkg/low/core.py": "import os\nfrom .. import __version__\nx = 1\n",
        "pkg/high/__init__.py": "",
        "pkg/high/user.py": "from ..low import core\n\ndef f():\n    import pkg.high.lazy\n",
        "pkg/high/lazy.py": "from pkg.low.core import x\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    graph = import_graph(module_files(tmp_path / "pkg"))
    assert graph == {
        "pkg": {},  # TYPE_CHECKING imports do not run
        "pkg.low": {"pkg.low.core": 1},
        "pkg.low.core": {},  # its enclosing packages are initialised already
        "pkg.high": {},
        "pkg.high.user": {"pkg.low": 1, "pkg.low.core": 1, "pkg.high.lazy": 4},
        "pkg.high.lazy": {"pkg.low": 1, "pkg.low.core": 1},
    }


def test_graph_is_read():
    """The graph of the package sees its imports (a blind reader cannot fail)."""
    assert len(MODULES) > 40
    assert {"xplique_ext.commons", "xplique_ext.commons.params"} <= set(
        GRAPH["xplique_ext.metrics.fidelity"]
    )
    assert sum(len(edges) for edges in GRAPH.values()) > 150


def test_cycle_finder_finds_a_cycle():
    graph = {"a": {"b": 1}, "b": {"c": 2}, "c": {"a": 3, "d": 4}, "d": {}, "e": {"e": 5}}
    assert sorted(map(sorted, strongly_connected(graph))) == [["a", "b", "c"], ["e"]]
    assert cycle_in({"a", "b", "c"}, graph) == [
        "a (line 1) -> b",
        "b (line 2) -> c",
        "c (line 3) -> a",
    ]


def test_floor_map_covers_every_sub_package():
    subpackages = {m.split(".")[1] for m in MODULES if m.count(".") == 1}
    assert subpackages == set(FLOOR)


# --------------------------------------------------------------------------- the package
def test_no_import_cycles():
    components = strongly_connected(GRAPH)
    unknown = [c for c in components if c not in KNOWN_CYCLES]
    stale = [c for c in KNOWN_CYCLES if c not in components]
    messages = ["import cycle:\n  " + "\n  ".join(cycle_in(c, GRAPH)) for c in unknown]
    messages += [f"{sorted(c)} is no longer a cycle: delete it from KNOWN_CYCLES" for c in stale]
    assert not messages, "\n".join(messages)


def _floor(module: str) -> Optional[int]:
    parts = module.split(".")
    return FLOOR[parts[1]] if len(parts) > 1 else None


def test_imports_respect_floors():
    violations: Dict[Tuple[str, str], Tuple[str, int]] = {}
    for module, edges in GRAPH.items():
        floor = _floor(module)
        if floor is None:  # the root: lazy attributes only, checked below
            continue
        own = module.split(".")[1]
        for target, line in sorted(edges.items(), key=lambda edge: edge[1]):
            if target == PACKAGE or target.split(".")[1] == own:
                continue
            if _floor(target) >= floor:
                key = (module, ".".join(target.split(".")[:2]))
                violations.setdefault(key, (target, line))
    unknown = sorted(v for v in violations if v not in KNOWN_FLOOR_VIOLATIONS)
    stale = sorted(KNOWN_FLOOR_VIOLATIONS - set(violations))
    messages = [
        f"{m} (line {violations[m, p][1]}) imports {violations[m, p][0]}, which is not on a "
        "lower floor"
        for m, p in unknown
    ]
    messages += [f"{v} no longer happens: delete it from KNOWN_FLOOR_VIOLATIONS" for v in stale]
    assert not messages, "\n".join(messages)


def test_commons_stands_on_nothing_of_ours():
    for module, edges in GRAPH.items():
        if module.startswith(f"{PACKAGE}.commons"):
            assert {t for t in edges if not t.startswith(f"{PACKAGE}.commons")} == set(), module


def test_root_imports_only_commons():
    """``import xplique_ext`` stays instant: sub-packages are attributes loaded on use."""
    assert set(GRAPH[PACKAGE]) <= {f"{PACKAGE}.commons", f"{PACKAGE}.commons.lazy"}


# --------------------------------------------------------------------------- lazy names
LAZY_PACKAGES = [f"{PACKAGE}.metrics", f"{PACKAGE}.commons"]


def _type_checking_names(module: str) -> Dict[str, str]:
    """name -> absolute module, from the ``if TYPE_CHECKING:`` block of a package."""
    tree = ast.parse(MODULES[module].read_text())
    names = {}
    for node in tree.body:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for statement in node.body:
                assert isinstance(statement, ast.ImportFrom), ast.dump(statement)
                base = _resolve(module, True, statement)
                for alias in statement.names:
                    names[alias.asname or alias.name] = base
    return names


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_lazy_names_match_type_checking_imports(package):
    """``__all__``, the lazy table and the imports IDEs read list the same names, and each
    name is the object its module defines."""
    import importlib

    module = importlib.import_module(package)
    declared = _type_checking_names(package)
    assert set(declared) == set(module.__all__)
    assert set(module.__all__) <= set(dir(module))
    for name, source in declared.items():
        assert getattr(module, name) is getattr(importlib.import_module(source), name), name
    with pytest.raises(AttributeError, match="has no attribute 'not_a_name'"):
        module.not_a_name  # noqa: B018


def test_root_exposes_sub_packages_lazily():
    import xplique_ext.rules as rules

    assert xplique_ext.rules is rules
    assert set(FLOOR) <= set(dir(xplique_ext))
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        xplique_ext.nope  # noqa: B018


# --------------------------------------------------------------------------- in a subprocess
HEAVY = (
    "tensorflow",
    "keras",
    "numba",
    "cv2",
    "ot",
    "shap",
    "lime",
    "keras_hub",
    "wittgenstein",
    "imodels",
)


def _loaded_after(code: str) -> Dict[str, object]:
    script = textwrap.dedent(
        f"""
        import json, sys
        {code}
        print(json.dumps({{
            "heavy": [m for m in {HEAVY!r} if m in sys.modules],
            "ours": sorted(m for m in sys.modules if m.startswith("xplique_ext")),
        }}))
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT.parent,
        timeout=120,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(
    "code",
    [
        "import xplique_ext.rules",
        "from xplique_ext.metrics import FiRe, QsScore; FiRe(); QsScore()",
        "import xplique_ext.text",
        "import xplique_ext; xplique_ext.__version__",
    ],
)
def test_model_free_entry_points_load_no_tensorflow(code):
    loaded = _loaded_after(code)
    assert loaded["heavy"] == [], loaded
    # nor the model-based metrics: the text sub-package does not reach up to metrics
    assert not any(m.startswith("xplique_ext.metrics.") for m in loaded["ours"]), loaded["ours"]


def test_commons_loads_no_tensorflow():
    """Every module of ``commons`` imports without TensorFlow (the runtime floor has it)."""
    names = sorted(m for m in MODULES if m.startswith(f"{PACKAGE}.commons"))
    loaded = _loaded_after("; ".join(f"import {m}" for m in names))
    assert loaded["heavy"] == [], loaded
    assert f"{PACKAGE}.commons.metric" in loaded["ours"]


def test_model_based_metric_still_imports():
    """The check above can fail: the same probe sees TensorFlow behind MuFidelity."""
    loaded = _loaded_after("from xplique_ext.metrics import MuFidelity")
    assert "tensorflow" in loaded["heavy"]
    assert "xplique_ext.metrics.fidelity" in loaded["ours"]
