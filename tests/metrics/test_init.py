"""``xplique_ext.metrics`` is the one place every metric class imports from."""

import importlib
import inspect

import pytest

from xplique_ext.commons.metric import BaseMetric

PUBLIC_PACKAGES = ("xplique_ext.rules", "xplique_ext.text", "xplique_ext.metrics")


def _exported_metric_classes():
    classes = {}
    for package_name in PUBLIC_PACKAGES:
        package = importlib.import_module(package_name)
        for name in package.__all__:
            obj = getattr(package, name)
            if inspect.isclass(obj) and issubclass(obj, BaseMetric):
                classes[name] = obj
    return classes


def test_the_discovery_finds_the_metrics_of_every_family():
    found = set(_exported_metric_classes())
    expected = {"MuFidelity", "PERCY", "RuleMetrics", "FiRe", "GroundTruthSaliency"}
    assert expected <= found
    assert {"LocalLipschitzEstimate", "TextLocalLipschitzEstimate"} <= found


@pytest.mark.parametrize("name", sorted(_exported_metric_classes()))
def test_every_metric_class_imports_from_metrics(name):
    metrics = importlib.import_module("xplique_ext.metrics")
    assert name in metrics.__all__
    assert getattr(metrics, name) is _exported_metric_classes()[name]
