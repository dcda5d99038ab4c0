"""The committed tutorials carry their outputs, and these are not older than their code.

The outputs come from ``python tutorials/execute.py`` (every tutorial at its full size,
stamped with the hash of its code cells). Editing a code cell without executing the
notebook again makes this test fail.
"""

from pathlib import Path

import pytest

from tests.notebooks import load_execute

nbformat = pytest.importorskip("nbformat")

ROOT = Path(__file__).resolve().parents[2]
NAMES = sorted(p.name for p in (ROOT / "tutorials").glob("*.ipynb"))


@pytest.mark.parametrize("name", NAMES)
def test_committed_outputs_are_present_and_fresh(name):
    ex = load_execute()
    nb = nbformat.read(ROOT / "tutorials" / name, as_version=4)
    problems = ex.output_problems(nb)
    assert not problems, f"{name}: {'; '.join(problems)}"
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert any("image/png" in o.get("data", {}) for o in outputs), f"{name}: no figure"
