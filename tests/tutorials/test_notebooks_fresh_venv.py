"""Every tutorial runs end to end in a fresh virtual environment given only its install
cell: the one-line ``%pip install``, run by ``tutorials/execute.py`` with the repository
checkout (``XPLIQUE_EXT_SOURCE``) for the git URL, then a check that pip installed what the
notebook imports.

The environment starts with what Colab provides around a notebook (a Jupyter kernel:
``ipykernel``, ``nbclient``, ``nbformat``) and nothing of this project; the notebooks run
at the tests' small sizes with ``tutorials/execute.py --small``, the tutorials that need
only the package first, so that each install cell is shown to install what its notebook
imports. Slow (it installs TensorFlow and the rest): ``.ci/run`` runs it.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _run(command, **kwargs):
    done = subprocess.run(command, capture_output=True, text=True, **kwargs)
    assert done.returncode == 0, (
        f"{' '.join(map(str, command))} failed ({done.returncode}):\n"
        f"{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    )
    return done


@pytest.mark.slow
def test_every_notebook_runs_in_a_fresh_venv_from_its_install_cell(tmp_path):
    # Xplique 2 asks for tensorflow[and-cuda] on Linux: the environment takes about 8 GB
    free = shutil.disk_usage(tmp_path).free
    assert free > 9e9, f"needs about 9 GB free in {tmp_path}, has {free / 1e9:.1f} GB"
    venv = tmp_path / "venv"
    try:
        _notebooks_run_from_their_install_cells(tmp_path, venv)
    finally:  # pytest keeps its last three temporary folders: 8 GB each, otherwise
        shutil.rmtree(venv, ignore_errors=True)


def _notebooks_run_from_their_install_cells(tmp_path, venv):
    _run([sys.executable, "-m", "venv", str(venv)], timeout=300)
    python = venv / ("Scripts" if os.name == "nt" else "bin") / "python"
    env = {
        k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")
    }
    env.update(XPLIQUE_EXT_SOURCE=str(ROOT), PIP_DISABLE_PIP_VERSION_CHECK="1")
    # the notebook runner, as Colab provides it; nothing of the project
    _run(
        [str(python), "-m", "pip", "install", "--quiet", "ipykernel", "nbclient", "nbformat"],
        env=env,
        cwd=tmp_path,
        timeout=900,
    )
    missing = _run(
        [
            str(python),
            "-c",
            "import importlib.util as u; print([m for m in "
            "('xplique_ext', 'xplique', 'tensorflow') if u.find_spec(m)])",
        ],
        env=env,
        cwd=tmp_path,
    )
    assert missing.stdout.strip() == "[]"  # really fresh

    done = _run(
        [str(python), str(ROOT / "tutorials" / "execute.py"), "--small"],
        env=env,
        cwd=tmp_path,
        timeout=2400,
    )
    for name in (
        "rule_metrics.ipynb",
        "percy.ipynb",
        "mufidelity.ipynb",
        "ground_truth.ipynb",
        "callbacks.ipynb",
    ):
        assert f"{name}: done" in done.stdout

    # what ran was installed into the fresh environment by the install cells
    where = _run(
        [str(python), "-c", "import xplique, xplique_ext; print(xplique_ext.__file__)"],
        env=env,
        cwd=tmp_path,
    )
    assert str(venv) in where.stdout
