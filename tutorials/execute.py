"""Execute the tutorials, save their outputs and stamp them; keep their header cells in sync.

Usage (from the repository root, in an environment with ``pip install -e ".[dev]"``)::

    python tutorials/execute.py                   # every tutorial at its full size: outputs
                                                  # saved in place and stamped
    python tutorials/execute.py percy.ipynb       # only some
    python tutorials/execute.py --small --no-save # a quick run at the tests' sizes
    python tutorials/execute.py --sync            # rewrite the "Open in Colab" badges and
                                                  # install cells from setup.cfg's url
    python tutorials/execute.py --check           # exit 1 when a notebook has no outputs or
                                                  # outputs older than its code cells

Header cells. Each notebook opens as Xplique's do: a markdown cell with its title, its "Open
in Colab" badge and one sentence, then a one-line install cell,
``%pip install --quiet "xplique_ext[extras] @ git+<repository>"``, with the extras the
notebook imports. The badge and the install cell are built from the repository address in
setup.cfg (``[metadata] url``); ``--sync`` rewrites them after a change of address.

Installing. Run here, the install cell is left out: the environment has the package
(``pip install -e ".[dev]"``). With ``XPLIQUE_EXT_SOURCE`` set to a pip source or the path
of a local checkout, the install cell runs with that source for the repository, then checks
that pip installed what the notebook imports (the slow test
``tests/tutorials/test_notebooks_fresh_venv.py`` runs every notebook so in a fresh virtual
environment).

Stamp. A saved run records, in the notebook's metadata under ``xplique_ext``, the SHA-256
of its code cells' syntax trees (:func:`code_hash`: layout and comments aside, the install
cell aside), the date and the package version. Outputs are *fresh* when the stamp matches
the current code cells: editing a code cell without executing the notebook again makes
them stale, which ``--check`` (and the test
``tests/tutorials/test_notebooks_outputs.py``) reports.
"""

from __future__ import annotations

import argparse
import ast
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
    "xplique_metrics.ipynb",
)

#: The extras of xplique_ext each tutorial imports (``xplique``: Xplique's explainers;
#: ``rulelearners``: wittgenstein and imodels; ``images``: scikit-image's photographs).
EXTRAS: Dict[str, Sequence[str]] = {
    "rule_metrics.ipynb": ("rulelearners",),
    "mufidelity.ipynb": ("xplique", "images"),
    "ground_truth.ipynb": ("xplique",),
    "callbacks.ipynb": ("xplique",),
    "percy.ipynb": ("text",),
    "xplique_metrics.ipynb": ("xplique",),
}

#: The modules an extra provides (what the runner checks pip installed).
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
    "xplique_metrics.ipynb": dict(
        N_TRAIN=200,
        N_EXPLAIN=8,
        EPOCHS=1,
        NB_SAMPLES=20,
        STEPS=4,
        STABILITY_SAMPLES=2,
        MEGE_INPUTS=48,
        MEGE_EPOCHS=1,
        K_SPLITS=2,
        N_RESAMPLES=200,
    ),
}

SOURCE_VARIABLE = "XPLIQUE_EXT_SOURCE"
TITLE_CELL_ID = "title"
COLAB_BADGE = re.compile(r"\[!\[Open In Colab\]\([^)]*\)\]\([^)]*\)")
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


def colab_link(name: str, url: Optional[str] = None) -> str:
    """The "Open in Colab" badge of ``tutorials/<name>``, a markdown line."""
    link = colab_url(name, url)
    return f"[![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)]({link})"


def install_cell_source(name: str, url: Optional[str] = None) -> str:
    """The install cell: one line installing the package from the repository, with the
    extras the notebook imports."""
    return f'%pip install --quiet "{requirement(name)} @ {default_source(url)}"'


def notebook_modules(name: str) -> List[str]:
    """The modules the install cell of ``name`` provides: the package and its extras'."""
    extras = EXTRAS.get(name, ())
    return ["xplique_ext"] + [module for extra in extras for module in EXTRA_MODULES[extra]]


def install_cell_for_source(name: str, source: str, url: Optional[str] = None) -> str:
    """The install cell as the runner executes it from ``source`` (any pip source, or the
    path of a local checkout): the same command with ``source`` for the repository, then a
    check that pip installed what the notebook imports (``%pip`` prints a failed install's
    reason but raises nothing)."""
    if os.path.isdir(source):  # a local checkout
        source = Path(source).resolve().as_uri()
    command = install_cell_source(name, url).replace(default_source(url), source)
    return "\n".join(
        [
            command,
            "import importlib",
            "import importlib.util",
            "",
            "importlib.invalidate_caches()  # see what pip installed into this running kernel",
            f"missing = [m for m in {notebook_modules(name)!r} if not importlib.util.find_spec(m)]",
            "if missing:",
            '    raise ImportError(f"pip did not install {missing}; its message is above")',
        ]
    )


def prepare_install_cell(nb: Any, name: str, source: Optional[str]) -> None:
    """Set what the install cell of ``nb`` runs: installing from ``source`` (see
    :func:`install_cell_for_source`), or nothing where ``source`` is None, the environment
    having the package already (``pip install -e ".[dev]"``): an empty cell is not run."""
    for cell in nb.cells:
        if cell.get("id") != INSTALL_CELL_ID:
            continue
        cell.source = "" if source is None else install_cell_for_source(name, source)


def _is_old_install_cell(cell: Any) -> bool:
    return cell.get("cell_type") == "code" and (
        cell.get("id") == INSTALL_CELL_ID
        or (
            "pip" in cell.get("source", "")
            and "install" in cell.get("source", "")
            and ("REPO_URL" in cell.get("source", "") or SOURCE_VARIABLE in cell.get("source", ""))
        )
    )


def _is_badge_only(cell: Any) -> bool:
    badge = COLAB_BADGE.fullmatch(cell.source.strip())
    return cell.get("cell_type") == "markdown" and badge is not None


def title_with_colab_link(source: str, name: str, url: Optional[str] = None) -> str:
    """The title cell's markdown with the Colab badge right under the title line (any
    other badge removed)."""
    lines = [line for line in source.split("\n") if not COLAB_BADGE.fullmatch(line.strip())]
    title = lines[0]
    rest = "\n".join(lines[1:]).strip("\n")
    return f"{title}\n\n{colab_link(name, url)}\n\n{rest}".rstrip("\n")


def sync_header(nb: Any, name: str, url: Optional[str] = None) -> bool:
    """Make the notebook open as Xplique's do: the title cell (markdown: the title, the
    Colab badge, one sentence), then the one-line install cell. Rewrites the badge and the
    install cell from setup.cfg's url; returns whether anything changed. Other cells are
    left as they are."""
    import nbformat

    install = install_cell_source(name, url)
    kept = [c for c in nb.cells if not (_is_old_install_cell(c) or _is_badge_only(c))]
    if not kept or kept[0].cell_type != "markdown" or not kept[0].source.startswith("# "):
        raise ValueError(f"{name}: the first cell must be the markdown title ('# ...')")
    title = kept[0]
    old = [c for c in nb.cells if _is_old_install_cell(c)]
    if (
        len(nb.cells) >= 2
        and nb.cells[0] is title
        and title.get("id") == TITLE_CELL_ID
        and title.source == title_with_colab_link(title.source, name, url)
        and nb.cells[1].get("id") == INSTALL_CELL_ID
        and nb.cells[1].source == install
    ):
        return False
    title.source = title_with_colab_link(title.source, name, url)
    title["id"] = TITLE_CELL_ID
    install_cell = nbformat.v4.new_code_cell(install)
    install_cell["id"] = INSTALL_CELL_ID
    if old and old[0].source == install:  # unchanged: keep what it printed
        install_cell["outputs"] = old[0].get("outputs", [])
        install_cell["execution_count"] = old[0].get("execution_count")
    nb.cells = [title, install_cell] + kept[1:]
    return True


# ------------------------------------------------------------------------ stamps
def _stamped_cells(nb: Any) -> List[Any]:
    """The code cells whose outputs are saved: every one but the install cell."""
    return [c for c in nb.cells if c.cell_type == "code" and c.get("id") != INSTALL_CELL_ID]


def _syntax(source: str) -> str:
    """A code cell's syntax tree as text (IPython's magics turned into calls): layout and
    comments aside, so that reformatting a cell (``ruff format``) keeps its outputs fresh.
    The source itself where it does not parse."""
    from IPython.core.inputtransformer2 import TransformerManager

    try:
        return ast.dump(ast.parse(TransformerManager().transform_cell(source)))
    except SyntaxError:
        return source


def code_hash(nb: Any) -> str:
    """SHA-256 of the code cells' syntax trees, in order (outputs, markdown, layout,
    comments and the install cell aside: the install cell is written by ``--sync`` and does
    not make the outputs)."""
    trees = [_syntax(cell.source) for cell in _stamped_cells(nb)]
    return hashlib.sha256(json.dumps(trees).encode("utf-8")).hexdigest()


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
    code = [c for c in _stamped_cells(nb) if c.source.strip()]
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
    source: Optional[str] = None,
) -> Any:
    """Execute ``tutorials/<name>`` in a fresh kernel (working directory: tutorials/) with
    ``params`` overriding its cell tagged ``parameters``; returns the executed notebook.

    ``source``: the install cell installs the package from there (a pip source or the path
    of a local checkout) instead of the repository; None leaves the install cell out, for
    an environment that has the package already. The saved install cell keeps its text."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(HERE / name, as_version=4)
    if params:
        _override_parameters(nb, params, name)
    install = {c.get("id"): c.source for c in nb.cells}.get(INSTALL_CELL_ID)
    prepare_install_cell(nb, name, source)
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
    for cell in nb.cells:
        if cell.get("id") == INSTALL_CELL_ID:
            cell.source = install
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
        help="only rewrite the Colab badges and install cells from setup.cfg",
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
        nb = execute(
            name,
            params=SMALL.get(name) if args.small else None,
            timeout=args.timeout,
            source=os.environ.get(SOURCE_VARIABLE),
        )
        seconds = time.perf_counter() - start
        if save:
            stamp(nb, seconds)
            nbformat.write(nb, HERE / name)
        print(f"{name}: done in {seconds:.0f} s{', outputs saved' if save else ''}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
