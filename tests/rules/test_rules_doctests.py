"""The Examples sections of the rule-metrics modules run and give what they show."""

import doctest
import importlib

import pytest

MODULES = [
    "xplique_ext.rules.names",
    "xplique_ext.rules.dataset",
    "xplique_ext.rules.pbm",
    "xplique_ext.rules.evaluation",
    "xplique_ext.rules.measures",
    "xplique_ext.rules.fire",
    "xplique_ext.rules.scoring",
    "xplique_ext.rules.trees",
    "xplique_ext.rules.reference",
    "xplique_ext.rules.examples",
    "xplique_ext.rules.plots",
    "xplique_ext.rules.demo",
]


@pytest.mark.parametrize("name", MODULES)
def test_examples_run(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
    assert result.attempted > 0
