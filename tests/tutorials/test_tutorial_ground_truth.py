from tests.notebooks import run_notebook


def test_ground_truth_tutorial_runs():
    nb = run_notebook(
        "ground_truth.ipynb",
        dict(
            IMAGE_SIZE=64, N_TRAIN=200, N_VAL=64, EPOCHS=1, N_EXPLAIN=4, N_CHECK=12, LIME_SAMPLES=16
        ),
    )
    outputs = "".join(str(o) for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    for expected in (
        "EMD",
        "KL",
        "IntegratedGradients",
        "GradCAM",
        "ObjectLime",
        "pointing game",
        "image/png",
    ):
        assert expected in outputs, expected
