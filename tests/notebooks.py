"""Execute a tutorial notebook at a small size: the cell tagged ``parameters`` is
replaced by the given values, then every cell but the install cell runs in a fresh kernel."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from typing import Any, Dict

ROOT = Path(__file__).resolve().parents[1]


def run_notebook(name: str, params: Dict[str, Any], timeout: int = 600):
    """Run ``tutorials/<name>`` with ``params`` overriding its parameters cell; returns the
    executed notebook (raises ``nbclient.exceptions.CellExecutionError`` on failure)."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(ROOT / "tutorials" / name, as_version=4)
    # the tests' environment has the package: the install cell is left out, as
    # tutorials/execute.py does without XPLIQUE_EXT_SOURCE
    load_execute().prepare_install_cell(nb, name, None)
    tagged = [c for c in nb.cells if "parameters" in c.get("metadata", {}).get("tags", [])]
    if not tagged:
        raise ValueError(f"{name} has no cell tagged 'parameters'")
    source = (
        tagged[0].source
        + "\n# test overrides\n"
        + "\n".join(f"{key} = {value!r}" for key, value in params.items())
    )
    tagged[0].source = source
    os.environ.setdefault("MPLBACKEND", "Agg")
    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name="python3",
        resources={"metadata": {"path": str(ROOT / "tutorials")}},
    )
    client.execute()
    return nb


def load_execute():
    """``tutorials/execute.py`` (the notebooks' runner and stamp) as a module."""
    root = Path(__file__).resolve().parents[1]
    spec = importlib.util.spec_from_file_location(
        "tutorials_execute", root / "tutorials" / "execute.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
