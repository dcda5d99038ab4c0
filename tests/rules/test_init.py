"""The ``xplique_ext.rules`` package: no import cycle inside it, no TensorFlow or
Dask needed to import and use it, and the tests' oracle not exported."""

import ast
import os
import pathlib
import subprocess
import sys

import pytest

import xplique_ext.rules as xr


def test_rules_import_without_dask():
    import subprocess
    import sys

    code = (
        "import sys; sys.modules['dask'] = None; import xplique_ext.rules as r; "
        "r.evaluate_rules(r.read_rules(r.example_path('voyage.cn2.unordered.pbm')), "
        "r.read_data(r.example_path('voyage.test'), chunksize=4)); print('ok')"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "ok", out.stderr


RULES_DIR = pathlib.Path(xr.__file__).parent


def _internal_imports(path):
    """Modules of xplique_ext.rules imported by ``path``, at any depth (functions too)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                found.add(node.module.split(".")[0])
            else:
                found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.startswith("xplique_ext.rules."):
                found.add(node.module.split(".")[2])
    return found - {"__init__"}


def test_no_import_cycle_inside_rules():
    modules = {p.stem: p for p in RULES_DIR.glob("*.py") if p.stem != "__init__"}
    graph = {name: _internal_imports(path) & set(modules) for name, path in modules.items()}
    state = {}

    def visit(name, stack):
        state[name] = "open"
        for other in sorted(graph[name]):
            if state.get(other) == "open":
                cycle = stack[stack.index(other) :] + [other]
                pytest.fail(f"import cycle in xplique_ext.rules: {' -> '.join(cycle)}")
            if other not in state:
                visit(other, stack + [other])
        state[name] = "done"

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])


def test_import_rules_loads_neither_tensorflow_nor_numba():
    code = (
        "import sys, xplique_ext.rules, xplique_ext.rules.fire\n"
        f"assert xplique_ext.__file__.startswith({str(RULES_DIR.parent)!r}), xplique_ext.__file__\n"
        "heavy = sorted({m.split('.')[0] for m in sys.modules} & "
        "{'tensorflow', 'keras', 'numba', 'torch'})\n"
        "print(heavy)\n"
    )
    root = str(RULES_DIR.parent.parent)  # this checkout's xplique_ext, not an installed one
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    assert out.stdout.strip() == "[]", out.stdout
    loaded = {line.split("|")[-1].strip() for line in out.stderr.splitlines() if "|" in line}
    assert not {"tensorflow", "numba", "keras"} & loaded


def test_test_oracle_is_not_exported():
    assert "evaluate_rules_loop" not in xr.__all__
    assert not hasattr(xr, "evaluate_rules_loop")
    from tests.rules.rules_reference import evaluate_rules_loop

    assert callable(evaluate_rules_loop)
