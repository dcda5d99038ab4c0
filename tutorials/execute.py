"""Execute the tutorials, save their outputs and stamp them; keep their header cells in sync.

Usage (from the repository root, in an environment with ``pip install -e ".[dev]"``)::

    python tutorials/execute.py                   # every tutorial at its full size: outputs
                                                  # saved in place and stamped
    python tutorials/execute.py percy.ipynb       # only some
    python tutorials/execute.py --small --no-save # a quick run at the tests' sizes
    python tutorials/execute.py --sync            # rewrite the "Open in Colab" and install
                                                  # cells from setup.cfg's url, run nothing
    python tutorials/execute.py --check           # exit 1 when a notebook has no outputs or
                                                  # outputs older than its code cells

Header cells. Each notebook starts with a markdown cell holding its "Open in Colab" link and
a code cell installing what the notebook imports: xplique_ext with the extras it needs,
from ``XPLIQUE_EXT_SOURCE``. Both are built from the repository address in setup.cfg
(``[metadata] url``); ``--sync`` rewrites them after a change of address.

Stamp. A saved run records, in the notebook's metadata under ``xplique_ext``, the SHA-256
of its code cells' sources (:func:`code_hash`), the date and the package version. Outputs
are *fresh* when the stamp matches the current code cells: editing a code cell without
executing the notebook again makes them stale, which ``--check`` (and the test
``tests/tutorials/test_notebooks_outputs.py``) reports.
"""

from __future__ import annotations

import argparse
import configparser
import datetime
import hashlib
import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

#: The tutorials, in the order a fresh environment runs them: those that need only the
#: package first, so that each install cell is shown to install what its notebook needs.
NOTEBOOKS = (
    "rule_metrics.ipynb",
    "percy.ipynb",
    "mufidelity.ipynb",
    "ground_truth.ipynb",
    "callbacks.ipynb",
)

#: The extras of xplique_ext each tutorial imports (``xplique``: Xplique's explainers;
#: ``rulelearners``: wittgenstein and imodels; ``images``: scikit-image's photographs).
EXTRAS: Dict[str, Sequence[str]] = {
    "rule_metrics.ipynb": ("rulelearners",),
    "mufidelity.ipynb": ("xplique", "images"),
    "ground_truth.ipynb": ("xplique",),
    "callbacks.ipynb": ("xplique",),
    "percy.ipynb": ("text",),
}

#: The modules an extra provides (what the install cell checks before installing).
EXTRA_MODULES: Dict[str, Sequence[str]] = {
    "xplique": ("xplique",),
    "text": ("keras_hub",),
    "rulelearners": ("wittgenstein", "imodels"),
    "images": ("skimage",),
}

#: Tiny sizes for quick runs (the values of the tests in tests/tutorials/).
SMALL: Dict[str, Dict[str, Any]] = {
    "mufidelity.ipynb": dict(
        WEIGHTS="none", N_TRAIN=200, N_EXPLAIN=4, IMAGE_SIZE=16, EPOCHS=1, NB_SAMPLES=20
    ),
    "ground_truth.ipynb": dict(
        IMAGE_SIZE=64, N_TRAIN=200, N_VAL=64, EPOCHS=1, N_EXPLAIN=4, N_CHECK=12, LIME_SAMPLES=16
    ),
    "percy.ipynb": dict(
        N_TRAIN=240,
        EPOCHS=1,
        N_TEST=8,
        LIME_SAMPLES=40,
        SHAP_PERMUTATIONS=1,
        IG_STEPS=8,
        N_LIPSCHITZ=2,
    ),
    "rule_metrics.ipynb": dict(LEAVES=[3, 4], PSIS=[1, 2, 3]),
    "callbacks.ipynb": dict(N_TRAIN=200, N_PROBE=4, IMAGE_SIZE=16, EPOCHS=3, NB_SAMPLES=20),
}

SOURCE_VARIABLE = "XPLIQUE_EXT_SOURCE"
COLAB_CELL_ID = "colab-link"
INSTALL_CELL_ID = "install"
STAMP_KEY = "xplique_ext"


# ------------------------------------------------------------------------ header cells
def repository_url(setup_cfg: Path = ROOT / "setup.cfg") -> str:
    """The repository address, ``[metadata] url`` of setup.cfg (a GitHub URL)."""
    parser = configparser.ConfigParser()
    parser.read(setup_cfg, encoding="utf-8")
    url = parser.get("metadata", "url", fallback="").strip().rstrip("/")
    if not re.fullmatch(r"https://github\.com/[\w.-]+/[\w.-]+", url):
        raise ValueError(
            f"setup.cfg [metadata] url must be a GitHub repository address "
            f"https://github.com/OWNER/NAME, got {url!r}"
        )
    return url


def default_source(url: Optional[str] = None) -> str:
    """The install cells' default package source: ``git+<repository url>``."""
    return "git+" + (url or repository_url())


def colab_url(name: str, url: Optional[str] = None, branch: str = "main") -> str:
    """The "Open in Colab" address of ``tutorials/<name>``."""
    path = (url or repository_url()).removeprefix("https://github.com/")
    return f"https://colab.research.google.com/github/{path}/blob/{branch}/tutorials/{name}"


def requirement(name: str) -> str:
    """What the install cell of ``name`` installs: ``xplique_ext[extras]``."""
    extras = EXTRAS.get(name, ())
    return "xplique_ext" + (f"[{','.join(extras)}]" if extras else "")


def colab_cell_source(name: str, url: Optional[str] = None) -> str:
    link = colab_url(name, url)
    return f"[![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)]({link})"


def install_cell_source(name: str, url: Optional[str] = None) -> str:
    extras = EXTRAS.get(name, ())
    modules = ["xplique_ext"] + [m for e in extras for m in EXTRA_MODULES[e]]
    what = "xplique_ext" + (
        " with its " + ", ".join(f"[{e}]" for e in extras) + " extra" if extras else ""
    )
    return "\n".join(
        [
            f"# Install what this notebook imports: {what}.",
            f"# {SOURCE_VARIABLE} names the package source (see the README): this repository",
            "# by default; set it (here, or as an environment variable) to another pip source,",
            "# e.g. the path of a local checkout. Nothing is installed where all is there already.",
            "import importlib.util",
            "import os",
            "import pathlib",
            "",
            f'{SOURCE_VARIABLE} = os.environ.get("{SOURCE_VARIABLE}", "{default_source(url)}")',
            f"if os.path.isdir({SOURCE_VARIABLE}):  # a local checkout",
            f"    {SOURCE_VARIABLE} = pathlib.Path({SOURCE_VARIABLE}).resolve().as_uri()",
            f"MODULES = {json.dumps(modules)}",
            "if not all(importlib.util.find_spec(module) for module in MODULES):",
            f'    %pip install --quiet "{requirement(name)} @ {{{SOURCE_VARIABLE}}}"',
            "    importlib.invalidate_caches()  # see what pip installed into this running kernel",
            "    missing = [module for module in MODULES if not importlib.util.find_spec(module)]",
            "    if missing:  # %pip prints a failed install's reason above but raises nothing",
            '        raise ImportError(f"pip did not install {missing}; its message is above")',
            "",
            "from xplique_ext.commons.console import quiet_tensorflow",
            "",
            "quiet_tensorflow()  # TensorFlow's native log lines and retracing notes stay out of the",
            "#                      outputs; quiet_tensorflow(native=False) shows native errors again",
        ]
    )


def _is_old_install_cell(cell: Any) -> bool:
    return cell.get("cell_type") == "code" and (
        cell.get("id") == INSTALL_CELL_ID
        or (
            "pip" in cell.get("source", "")
            and "install" in cell.get("source", "")
            and ("REPO_URL" in cell.get("source", "") or SOURCE_VARIABLE in cell.get("source", ""))
        )
    )


def sync_header(nb: Any, name: str, url: Optional[str] = None) -> bool:
    """Make the first two cells of ``nb`` the Colab link and the install cell; returns
    whether anything changed. Other cells are left as they are."""
    import nbformat

    colab = colab_cell_source(name, url)
    install = install_cell_source(name, url)
    cells = nb.cells
    if (
        len(cells) >= 2
        and cells[0].get("id") == COLAB_CELL_ID
        and cells[0].source == colab
        and cells[1].get("id") == INSTALL_CELL_ID
        and cells[1].source == install
    ):
        return False
    outputs = []
    kept = []
    for cell in cells:
        if cell.get("id") == COLAB_CELL_ID:
            continue
        if _is_old_install_cell(cell):
            outputs = cell.get("outputs", []) if cell.source == install else []
            continue
        kept.append(cell)
    link_cell = nbformat.v4.new_markdown_cell(colab)
    link_cell["id"] = COLAB_CELL_ID
    install_cell = nbformat.v4.new_code_cell(install)
    install_cell["id"] = INSTALL_CELL_ID
    install_cell["outputs"] = outputs
    nb.cells = [link_cell, install_cell] + kept
    return True


# ------------------------------------------------------------------------ stamps
def code_hash(nb: Any) -> str:
    """SHA-256 of the sources of the code cells, in order (outputs and markdown aside)."""
    sources = [cell.source for cell in nb.cells if cell.cell_type == "code"]
    return hashlib.sha256(json.dumps(sources).encode("utf-8")).hexdigest()


def stamp(nb: Any, seconds: Optional[float] = None) -> None:
    """Record in ``nb``'s metadata that its outputs come from its current code cells."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        package_version = version("xplique_ext")
    except PackageNotFoundError:  # pragma: no cover - run from a bare checkout
        package_version = "unknown"
    nb.metadata[STAMP_KEY] = {
        "code_sha256": code_hash(nb),
        "executed": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "version": package_version,
        "seconds": None if seconds is None else round(seconds, 1),
    }


def output_problems(nb: Any) -> List[str]:
    """Why ``nb``'s saved outputs cannot be trusted: empty when every code cell has run
    and the stamp matches the current code cells."""
    problems = []
    code = [c for c in nb.cells if c.cell_type == "code" and c.source.strip()]
    not_run = [i for i, c in enumerate(code) if c.get("execution_count") is None]
    if code and len(not_run) == len(code):
        problems.append("no outputs: the notebook was saved without being executed")
    elif not_run:
        problems.append(f"{len(not_run)} of {len(code)} code cells were not executed")
    recorded = nb.metadata.get(STAMP_KEY, {}).get("code_sha256")
    if recorded is None:
        problems.append("no execution stamp: run python tutorials/execute.py")
    elif recorded != code_hash(nb):
        problems.append("outputs older than the code cells: run python tutorials/execute.py")
    return problems


# ------------------------------------------------------------------------ execution
def _override_parameters(nb: Any, params: Dict[str, Any], name: str) -> None:
    tagged = [c for c in nb.cells if "parameters" in c.get("metadata", {}).get("tags", [])]
    if not tagged:
        raise ValueError(f"{name} has no cell tagged 'parameters'")
    tagged[0].source += "\n# overrides\n" + "\n".join(f"{k} = {v!r}" for k, v in params.items())


def execute(
    name: str,
    *,
    params: Optional[Dict[str, Any]] = None,
    timeout: int = 3600,
    kernel_name: str = "python3",
) -> Any:
    """Execute ``tutorials/<name>`` in a fresh kernel (working directory: tutorials/) with
    ``params`` overriding its cell tagged ``parameters``; returns the executed notebook."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(HERE / name, as_version=4)
    if params:
        _override_parameters(nb, params, name)
    # figures inline in the saved outputs, whatever backend the calling shell exports
    os.environ["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"
    client = NotebookClient(
        nb, timeout=timeout, kernel_name=kernel_name, resources={"metadata": {"path": str(HERE)}}
    )
    try:
        client.execute()
    except Exception:  # show what the failing cell printed (pip's message, say) with the error
        for cell in nb.cells:
            outputs = cell.get("outputs", [])
            if any(out.get("output_type") == "error" for out in outputs):
                printed = "".join(out.get("text", "") for out in outputs)
                print(f"{name}: the failing cell printed:\n{printed[-4000:]}", file=sys.stderr)
        raise
    return nb


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python tutorials/execute.py",
        description="Execute the tutorials (full size: outputs saved and stamped), or "
        "check or rewrite their header cells.",
    )
    parser.add_argument(
        "notebooks",
        nargs="*",
        metavar="NAME",
        help=f"notebooks of tutorials/ (default: all, {', '.join(NOTEBOOKS)})",
    )
    parser.add_argument(
        "--small", action="store_true", help="run at the tests' tiny sizes (implies --no-save)"
    )
    parser.add_argument("--no-save", action="store_true", help="do not write the outputs")
    parser.add_argument(
        "--sync",
        action="store_true",
        help="only rewrite the Colab link and install cells from setup.cfg",
    )
    parser.add_argument(
        "--check", action="store_true", help="only check that saved outputs exist and are fresh"
    )
    parser.add_argument(
        "--timeout", type=int, default=3600, help="seconds allowed per cell (default: 3600)"
    )
    args = parser.parse_args(argv)
    names = args.notebooks or list(NOTEBOOKS)
    unknown = [n for n in names if not (HERE / n).is_file()]
    if unknown:
        parser.error(f"no such notebook in tutorials/: {', '.join(unknown)}")

    import nbformat

    if args.sync:
        for name in names:
            nb = nbformat.read(HERE / name, as_version=4)
            if sync_header(nb, name):
                nbformat.write(nb, HERE / name)
                print(f"{name}: header cells rewritten")
            else:
                print(f"{name}: up to date")
        return 0
    if args.check:
        failed = False
        for name in names:
            problems = output_problems(nbformat.read(HERE / name, as_version=4))
            failed |= bool(problems)
            print(f"{name}: " + ("; ".join(problems) if problems else "outputs fresh"))
        return 1 if failed else 0

    save = not (args.small or args.no_save)
    for name in names:
        start = time.perf_counter()
        print(f"{name}: executing{' at small size' if args.small else ''} ...", flush=True)
        nb = execute(name, params=SMALL.get(name) if args.small else None, timeout=args.timeout)
        seconds = time.perf_counter() - start
        if save:
            stamp(nb, seconds)
            nbformat.write(nb, HERE / name)
        print(f"{name}: done in {seconds:.0f} s{', outputs saved' if save else ''}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
