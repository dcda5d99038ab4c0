from tests.notebooks import load_execute, run_notebook

NAME = "xplique_metrics.ipynb"


def test_xplique_metrics_tutorial_runs():
    nb = run_notebook(NAME, load_execute().SMALL[NAME])  # the sizes of execute.py --small
    outputs = "".join(str(o) for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert "image/png" in outputs
    metrics = (
        "MuFidelity",
        "Deletion",
        "Insertion",
        "AverageDrop",
        "AverageIncrease",
        "AverageGain",
        "Complexity",
        "Sparseness",
        "AverageStability",
        "RandomLogit",
        "ModelRandomization",
        "MeGe",
    )
    for metric in metrics:  # every metric of the suite is in the table
        assert metric in outputs, metric
    assert "the model's weights are unchanged: True" in outputs
