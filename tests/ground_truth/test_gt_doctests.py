"""The Examples sections of the ground-truth modules run and give what they show."""

import doctest
import importlib

import pytest

MODULES = [
    "xplique_ext.datasets.aixi",
    "xplique_ext.metrics.ground_truth",
    "xplique_ext.explainers.object_lime",
    "xplique_ext.models.aixi_cnn",
    "xplique_ext.models.aixi_function",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
