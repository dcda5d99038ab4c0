"""The committed tutorials carry their outputs, and these are not older than their code.

The outputs come from ``python tutorials/execute.py`` (every tutorial at its full size,
stamped with the hash of its code cells). Editing a code cell without executing the
notebook again makes this test fail.
"""

import importlib.util
import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")

ROOT = Path(__file__).resolve().parents[2]
NAMES = sorted(p.name for p in (ROOT / "tutorials").glob("*.ipynb"))


def _load_execute():
    spec = importlib.util.spec_from_file_location("tutorials_execute",
                                                  ROOT / "tutorials" / "execute.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", NAMES)
def test_committed_outputs_are_present_and_fresh(name):
    ex = _load_execute()
    nb = nbformat.read(ROOT / "tutorials" / name, as_version=4)
    problems = ex.output_problems(nb)
    assert not problems, f"{name}: {'; '.join(problems)}"
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert any("image/png" in o.get("data", {}) for o in outputs), f"{name}: no figure"
