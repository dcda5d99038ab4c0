"""The tutorials' header cells (Colab link, install cell) and the execution stamps of
tutorials/execute.py."""

import ast
import importlib.util
import re
from pathlib import Path

import pytest

from tests.notebooks import load_execute

nbformat = pytest.importorskip("nbformat")

ROOT = Path(__file__).resolve().parents[2]


ex = load_execute()
NAMES = sorted(p.name for p in (ROOT / "tutorials").glob("*.ipynb"))


def _read(name):
    return nbformat.read(ROOT / "tutorials" / name, as_version=4)


def test_every_tutorial_is_listed():
    assert sorted(ex.NOTEBOOKS) == NAMES
    assert set(ex.SMALL) == set(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_header_cells_are_in_sync_with_setup_cfg(name):
    nb = _read(name)
    assert not ex.sync_header(nb, name), "run: python tutorials/execute.py --sync"
    url = ex.repository_url()
    link = nb.cells[0].source
    assert (
        f"colab.research.google.com/github/{url[len('https://github.com/') :]}/blob/main/"
        f"tutorials/{name}" in link
    )
    install = nb.cells[1]
    assert install.cell_type == "code" and f'@ git+{url}"' in install.source
    assert nb.cells[0].cell_type == "markdown" and nb.cells[0].source.startswith("# ")


@pytest.mark.parametrize("name", NAMES)
def test_notebook_opens_with_title_badge_one_sentence_and_one_install_line(name):
    title, badge, sentence = _read(name).cells[0].source.split("\n\n")
    assert title.startswith("# ") and "\n" not in title
    assert ex.COLAB_BADGE.fullmatch(badge)
    assert "\n" not in sentence and sentence.rstrip("*").endswith((".", "?"))
    install = _read(name).cells[1].source
    assert install.startswith("%pip install ") and "\n" not in install


def _imported_modules(nb):
    modules = set()
    for cell in nb.cells[2:]:
        if cell.cell_type != "code":
            continue
        source = "\n".join(
            line for line in cell.source.splitlines() if not line.lstrip().startswith(("%", "!"))
        )
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Import):
                modules |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                modules.add(node.module.split(".")[0])
    return modules


@pytest.mark.parametrize("name", NAMES)
def test_install_cell_installs_the_extras_the_notebook_imports(name):
    imported = _imported_modules(_read(name))
    needed = {extra for extra, modules in ex.EXTRA_MODULES.items() if imported & set(modules)}
    assert set(ex.EXTRAS.get(name, ())) == needed
    assert "xplique_ext" in imported


class _FakeShell:
    """Records the magics; ``%pip`` makes ``installs`` importable (nothing when it fails)."""

    def __init__(self, present, installs):
        self.magics, self.present, self.installs = [], present, installs

    def run_line_magic(self, name, line):
        self.magics.append((name, line))
        self.present |= self.installs


def _run_install_cell(name, monkeypatch, *, source, present, fails=False):
    """Run the install cell as the runner does: from ``source`` (``XPLIQUE_EXT_SOURCE``),
    or, with ``source="saved"``, as saved in the notebook (what a Colab user runs)."""
    from IPython.core.inputtransformer2 import TransformerManager

    nb = _read(name)
    if source != "saved":
        ex.prepare_install_cell(nb, name, source)
    code = TransformerManager().transform_cell(nb.cells[1].source)
    shell = _FakeShell(set(present), set() if fails else set(ex.notebook_modules(name)))
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda module, *a: object() if module in shell.present else None,
    )
    namespace = {"get_ipython": lambda: shell}
    exec(compile(code, name, "exec"), namespace)
    return shell.magics


@pytest.mark.parametrize("name", NAMES)
def test_install_cell_installs_from_the_source_variable(name, monkeypatch, tmp_path):
    wanted = ex.requirement(name)
    extras = ex.EXTRAS.get(name, ())
    assert wanted == "xplique_ext" + (f"[{','.join(extras)}]" if extras else "")
    magics = _run_install_cell(name, monkeypatch, source="saved", present=set())
    url = ex.repository_url()
    assert magics == [("pip", f'install --quiet "{wanted} @ git+{url}"')]
    # a local checkout: its path, turned into a file:// URL pip accepts
    magics = _run_install_cell(name, monkeypatch, source=str(tmp_path), present=set())
    assert magics == [("pip", f'install --quiet "{wanted} @ {tmp_path.resolve().as_uri()}"')]
    # run where everything is there already (pip install -e ".[dev]"), without a source:
    # the runner leaves the install cell out, nothing is installed
    everything = {"xplique_ext"} | {m for e in extras for m in ex.EXTRA_MODULES[e]}
    magics = _run_install_cell(name, monkeypatch, source=None, present=everything)
    assert magics == []
    if ex.EXTRAS.get(name):  # the package without its extra: installed again with it
        magics = _run_install_cell(name, monkeypatch, source="saved", present={"xplique_ext"})
        assert len(magics) == 1


@pytest.mark.parametrize("name", NAMES)
def test_install_cell_raises_when_pip_did_not_install(name, monkeypatch):
    # %pip prints a failed install's message but raises nothing: run from a source, the
    # cell raises, naming what is missing, instead of an ImportError cells later
    modules = ["xplique_ext"] + [m for e in ex.EXTRAS.get(name, ()) for m in ex.EXTRA_MODULES[e]]
    with pytest.raises(ImportError, match=re.escape(f"pip did not install {modules}")):
        _run_install_cell(name, monkeypatch, source=str(ROOT), present=set(), fails=True)


def _quiet_prefix(nb):
    """The first code cell calling ``quiet_tensorflow()``: its index and its lines up to
    that call."""
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "code" and "\nquiet_tensorflow(" in cell.source:
            lines = cell.source.splitlines()
            end = next(i for i, line in enumerate(lines) if line.startswith("quiet_tensorflow("))
            return index, "\n".join(lines[: end + 1])
    raise AssertionError("no cell calls quiet_tensorflow()")


@pytest.mark.parametrize("name", NAMES)
def test_notebook_quietens_tensorflow_before_importing_it(name, monkeypatch):
    from IPython.core.inputtransformer2 import TransformerManager

    nb = _read(name)
    index, prefix = _quiet_prefix(nb)
    before = nbformat.v4.new_notebook()
    before.cells = nb.cells[:index] + [nbformat.v4.new_code_cell(prefix)]
    assert not _imported_modules(before) & {"tensorflow", "keras", "xplique"}
    import xplique_ext.commons.console as console

    quieted = []
    monkeypatch.setattr(console, "quiet_tensorflow", lambda *a, **k: quieted.append(a))
    code = TransformerManager().transform_cell(prefix)
    exec(compile(code, name, "exec"), {"get_ipython": lambda: _FakeShell(set(), set())})
    assert quieted == [()]  # the notebook's console is quietened once the package is there


def _tiny_notebook():
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# title"),
        nbformat.v4.new_code_cell("x = 1"),
        nbformat.v4.new_code_cell("print(x)"),
    ]
    return nb


def test_output_problems_and_stamps():
    nb = _tiny_notebook()
    problems = ex.output_problems(nb)
    assert any("no outputs" in p for p in problems) and any("stamp" in p for p in problems)
    for i, cell in enumerate(nb.cells[1:], start=1):
        cell.execution_count = i
    ex.stamp(nb, 1.0)
    assert ex.output_problems(nb) == []
    nb.cells[0].source = "# another title"  # markdown: the outputs stay fresh
    assert ex.output_problems(nb) == []
    nb.cells[1].source = "x = 2"  # code: the outputs are now older than the code
    assert any("older than the code" in p for p in ex.output_problems(nb))
    ex.stamp(nb)
    nb.cells[2].execution_count = None
    assert ex.output_problems(nb) == ["1 of 2 code cells were not executed"]


def test_sync_header_inserts_link_and_install_cells_once():
    nb = _tiny_notebook()
    nb.cells.insert(
        0,
        nbformat.v4.new_code_cell(
            'REPO_URL = "https://example.org"\n%pip install -q git+{REPO_URL}'
        ),
    )
    assert ex.sync_header(nb, "mufidelity.ipynb")
    assert [c.get("id") for c in nb.cells[:2]] == [ex.TITLE_CELL_ID, ex.INSTALL_CELL_ID]
    assert nb.cells[0].source == "# title\n\n" + ex.colab_link("mufidelity.ipynb")
    assert [c.source for c in nb.cells[2:]] == ["x = 1", "print(x)"]
    assert not ex.sync_header(nb, "mufidelity.ipynb")


def test_sync_header_needs_a_title_first():
    nb = _tiny_notebook()
    nb.cells.pop(0)
    with pytest.raises(ValueError, match="title"):
        ex.sync_header(nb, "mufidelity.ipynb")


def test_repository_url_is_validated(tmp_path):
    cfg = tmp_path / "setup.cfg"
    cfg.write_text("[metadata]\nurl = https://example.org/x\n")
    with pytest.raises(ValueError, match="url"):
        ex.repository_url(cfg)
