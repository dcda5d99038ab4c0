"""The Examples sections of the PERCY modules run and give what they show."""

import doctest
import importlib

import pytest

MODULES = [
    "xplique_ext.metrics.percy",
    "xplique_ext.text.agreement",
    "xplique_ext.text.data",
    "xplique_ext.text.explainers",
    "xplique_ext.text.lipschitz",
    "xplique_ext.text.models",
    "xplique_ext.text.plots",
    "xplique_ext.text.rules",
    "xplique_ext.text.tokens",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
