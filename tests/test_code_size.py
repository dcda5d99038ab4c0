"""The lean-core measures of issue 18, counted by ``benchmarks/code_lines.py``.

``xplique_ext/`` holds at most 8,800 code lines (no blank, comment or docstring lines), no
module more than 800, and no function is longer than 100 physical lines, the EMD
network-simplex kernel excepted (one loop of pivots; split, its state would travel through
a dozen arguments).
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import xplique_ext

ROOT = Path(xplique_ext.__file__).resolve().parent
SCRIPT = ROOT.parent / "benchmarks" / "code_lines.py"
FUNCTION_EXCEPTIONS = {"xplique_ext/metrics/_emd_solver.py._simplex"}


def _counter():
    spec = importlib.util.spec_from_file_location("code_lines", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _measures():
    counter = _counter()
    per_module, sizes = {}, {}
    for path in sorted(ROOT.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        name = str(path.relative_to(ROOT.parent))
        per_module[name] = len(counter.code_lines(source))
        sizes.update(counter.functions(ast.parse(source), name))
    return counter, per_module, sizes


def test_counter_counts_code_not_docstrings_or_comments():
    counter = _counter()
    source = (
        'def f(x):\n    """Doc.\n\n    More."""\n    # note\n\n    return (x +\n            1)\n'
    )
    assert sorted(counter.code_lines(source)) == [1, 7, 8]


def test_total_within_the_budget():
    counter, per_module, _ = _measures()
    assert sum(per_module.values()) <= counter.TOTAL_LIMIT == 8800


def test_no_module_over_800_code_lines():
    counter, per_module, _ = _measures()
    assert {n: c for n, c in per_module.items() if c > counter.MODULE_LIMIT} == {}


def test_no_function_over_100_lines():
    counter, _, sizes = _measures()
    long = {q: n for q, n in sizes.items() if n > counter.FUNCTION_LIMIT}
    assert set(long) <= FUNCTION_EXCEPTIONS, long
