"""The documentation site: one page per metric, in sync with the package and setup.cfg."""

import configparser
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
yaml = pytest.importorskip("yaml")


def _mkdocs_config():
    class Loader(yaml.SafeLoader):
        pass

    # mkdocs.yml may hold !!python tags (none today); ignore any unknown tag
    Loader.add_multi_constructor("", lambda loader, suffix, node: None)
    return yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=Loader)


def _nav_files(nav):
    for item in nav:
        value = next(iter(item.values())) if isinstance(item, dict) else item
        if isinstance(value, list):
            yield from _nav_files(value)
        else:
            yield value


def _hooked_nav():
    """The navigation as the site builds it: mkdocs.yml's, completed by the metric-pages
    hook (a metric's page needs no line in mkdocs.yml)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "metric_pages", DOCS / "hooks" / "metric_pages.py"
    )
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    config = _mkdocs_config()
    config["docs_dir"] = str(DOCS)
    return hook.on_config(config)["nav"]


def test_the_metric_pages_hook_adds_unlisted_pages_with_their_title(tmp_path):
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "metric_pages", DOCS / "hooks" / "metric_pages.py"
    )
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    (tmp_path / "metrics").mkdir()
    (tmp_path / "metrics" / "listed.md").write_text("# Listed\n")
    (tmp_path / "metrics" / "deletion.md").write_text("# Deletion\n\ntext\n")
    nav = [{"Home": "index.md"}, {"Metrics": [{"Listed here": "metrics/listed.md"}]}]
    config = hook.on_config({"nav": nav, "docs_dir": str(tmp_path)})
    assert config["nav"][1] == {
        "Metrics": [{"Listed here": "metrics/listed.md"}, {"Deletion": "metrics/deletion.md"}]
    }


def test_every_nav_entry_exists_and_every_page_is_in_the_nav():
    files = list(_nav_files(_hooked_nav()))
    for name in files:
        assert (DOCS / name).exists(), name
    pages = {str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md")}
    pages |= {str(p.relative_to(DOCS)) for p in DOCS.rglob("*.ipynb")}
    assert pages == set(files)


def test_every_tutorial_is_rendered():
    tutorials = {p.name for p in (ROOT / "tutorials").glob("*.ipynb")}
    rendered = {p.name for p in (DOCS / "tutorials").glob("*.ipynb")}
    assert rendered == tutorials
    for name in tutorials:  # the page is the notebook itself, not a copy that can drift
        assert (DOCS / "tutorials" / name).resolve() == (ROOT / "tutorials" / name).resolve()


def test_every_exported_metric_has_a_page_with_formula_direction_api_and_reference():
    import xplique_ext.metrics as metrics

    text = {p.name: p.read_text() for p in (DOCS / "metrics").glob("*.md")}
    documented = set()
    for name, page in text.items():
        documented |= set(re.findall(r"^::: xplique_ext\.metrics\.(\w+)", page, re.M))
        if name == "index.md":
            continue
        assert r"\tag{" in page, f"{name}: no numbered formula"
        assert re.search(r"\*\*Direction", page), f"{name}: no score direction"
        assert "## Reference" in page and "## Example" in page and "\n::: " in page, name
    scores = {
        n
        for n in metrics.__all__
        if not n.endswith("Warning")
        and n
        not in ("ground_truth_leaderboard", "fire_equilibrium_alpha", "fire_compensation_alpha")
    }
    assert scores <= documented, sorted(scores - documented)


def test_repository_address_is_the_same_everywhere():
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    url = cfg.get("metadata", "url")
    assert _mkdocs_config()["repo_url"] == url
    assert f"git+{url}" in (DOCS / "index.md").read_text()


README = ROOT / "README.md"
REPOSITORY_FILE = re.compile(r"\]\(https://github\.com/xplique-ext/xplique_ext/blob/main/([^)#]+)")


def test_readme_is_a_page_read_in_five_minutes():
    assert README.stat().st_size <= 20_000


def test_readme_quickstart_is_what_ci_runs():
    quickstart = re.search(r"## Quickstart\n.*?```bash\n(.*?)```", README.read_text(), re.S)
    steps = quickstart.group(1).splitlines()
    ci = (ROOT / ".ci" / "run").read_text()
    assert steps == ['pip install -e ".[dev]" && xplique-ext demo', "pytest"]
    assert 'pip install -e ".[dev]" && xplique-ext demo ||' in ci
    assert "\npytest\n" in ci


def test_readme_links_point_at_files_of_the_repository():
    links = REPOSITORY_FILE.findall(README.read_text())
    assert links
    for path in links:
        assert (ROOT / path).exists(), path


def test_readme_examples_run():
    """The README's Python blocks run in order, in one namespace, as a reader would."""
    pytest.importorskip("xplique", reason="the MuFidelity example uses Xplique's Saliency")
    import warnings

    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    assert len(blocks) == 5
    namespace = {}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an example that warns shows a problem to a reader
        for block in blocks:
            exec(compile(block, "README.md", "exec"), namespace)
    assert namespace["MuFidelity"].higher_is_better
    assert namespace["metric"].evaluate(namespace["data"].ground_truth) == 0.0
    assert namespace["percy"].evaluate(namespace["attributions"]) == 1.0
