"""The rule-metrics tutorial runs at a small size."""

from tests.notebooks import run_notebook


def test_rule_metrics_tutorial_runs():
    nb = run_notebook("rule_metrics.ipynb", dict(LEAVES=[3, 4], PSIS=[1, 2, 3]))
    outputs = "".join(str(o) for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert "Rules Evaluated as INTER-CLASS ORDERED" in outputs
    assert "[0.182,0.000,0.545,0.273,11] ?[0.250,0.000,0.250,0.500,4]" in outputs
    assert "image/png" in outputs
    assert "humdity" in outputs and "RuleParseError" in outputs
