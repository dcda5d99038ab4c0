from tests.notebooks import run_notebook


def test_mufidelity_tutorial_runs():
    nb = run_notebook(
        "mufidelity.ipynb",
        dict(WEIGHTS="none", N_TRAIN=200, N_EXPLAIN=4, IMAGE_SIZE=16, EPOCHS=1, NB_SAMPLES=20),
    )
    outputs = "".join(str(o) for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert "MuFidelity" in outputs and "image/png" in outputs
    assert "accuracy on the 1597 held-out digits" in outputs  # the real digits, offline
