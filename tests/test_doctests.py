"""Every Examples section of the package runs and gives what it shows."""

import doctest
import importlib
import pkgutil

import pytest

import xplique_ext

MODULES = sorted(info.name for info in pkgutil.walk_packages(xplique_ext.__path__, "xplique_ext."))

# modules whose public classes or functions must carry a runnable example
WITH_EXAMPLES = {
    "xplique_ext.callbacks",
    "xplique_ext.compare",
    "xplique_ext.commons.uncertainty",
    "xplique_ext.metrics.fidelity",
    "xplique_ext.metrics.percy",
    "xplique_ext.metrics.ground_truth",
    "xplique_ext.metrics.ground_truth_measures",
    "xplique_ext.metrics.leaderboard",
    "xplique_ext.datasets.aixi",
    "xplique_ext.explainers.object_lime",
    "xplique_ext.models.aixi_cnn",
    "xplique_ext.models.aixi_function",
    "xplique_ext.text.agreement",
    "xplique_ext.text.data",
    "xplique_ext.text.distillation",
    "xplique_ext.text.embeddings",
    "xplique_ext.text.explainers",
    "xplique_ext.text.hub",
    "xplique_ext.text.lipschitz",
    "xplique_ext.text.loaders",
    "xplique_ext.text.models",
    "xplique_ext.text.plots",
    "xplique_ext.text.conjunctions",
    "xplique_ext.text.tokens",
    "xplique_ext.rules.names",
    "xplique_ext.rules.dataset",
    "xplique_ext.rules.datafile",
    "xplique_ext.rules.pbm",
    "xplique_ext.rules.evaluation",
    "xplique_ext.rules.measures",
    "xplique_ext.rules.fire",
    "xplique_ext.rules.scoring",
    "xplique_ext.rules.trees",
    "xplique_ext.rules.learners",
    "xplique_ext.rules.examples",
    "xplique_ext.rules.plots",
    "xplique_ext.rules.demo",
}


def test_every_module_with_examples_is_found():
    assert WITH_EXAMPLES <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_examples_run(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
    if name in WITH_EXAMPLES:
        assert result.attempted > 0
