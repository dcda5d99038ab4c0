"""MkDocs hook: every page of ``docs/metrics/`` is in the navigation, under *Metrics*.

A page listed in ``mkdocs.yml`` keeps its place and title; a page that is not listed (a new
metric's page) is added at the end of the section, titled by its first heading. Adding a
metric therefore needs its page and no edit of ``mkdocs.yml``.
"""

from __future__ import annotations

import re
from pathlib import Path

SECTION = "Metrics"
FOLDER = "metrics"
HEADING = re.compile(r"^#\s+(.+?)\s*$", re.M)


def _listed_pages(entries) -> set[str]:
    pages = set()
    for entry in entries:
        if isinstance(entry, str):
            pages.add(entry)
        elif isinstance(entry, dict):
            for value in entry.values():
                if isinstance(value, str):
                    pages.add(value)
                else:
                    pages |= _listed_pages(value)
    return pages


def _title(path: Path) -> str:
    match = HEADING.search(path.read_text(encoding="utf-8"))
    if match is None:
        return path.stem.replace("_", " ").capitalize()
    return match.group(1)


def on_config(config):
    section = None
    for entry in config["nav"] or []:
        if isinstance(entry, dict) and SECTION in entry:
            section = entry[SECTION]
    if section is None:
        return config
    listed = _listed_pages(section)
    folder = Path(config["docs_dir"]) / FOLDER
    for path in sorted(folder.glob("*.md")):
        page = f"{FOLDER}/{path.name}"
        if page not in listed:
            section.append({_title(path): page})
    return config
