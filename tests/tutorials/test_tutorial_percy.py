from tests.notebooks import run_notebook


def test_percy_tutorial_runs():
    nb = run_notebook(
        "percy.ipynb",
        dict(
            N_TRAIN=240,
            EPOCHS=1,
            N_TEST=8,
            LIME_SAMPLES=40,
            SHAP_PERMUTATIONS=1,
            IG_STEPS=8,
            N_LIPSCHITZ=2,
        ),
    )
    outputs = "".join(str(o) for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert "L-PERCY" in outputs and "image/png" in outputs and "text/html" in outputs
    assert "bag-of-words reading B only" in outputs
