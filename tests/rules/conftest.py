"""Fixtures shared by the rules tests."""

import pytest

from xplique_ext.rules import copy_examples


@pytest.fixture
def voyage_dir(tmp_path, monkeypatch):
    """A temporary working directory holding the report's voyage example files."""
    copy_examples(tmp_path)
    monkeypatch.chdir(tmp_path)
    return tmp_path
