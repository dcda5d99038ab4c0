"""The Keras-callback tutorial runs at a small size and plots the scores against the loss."""

import importlib.util

import pytest

from tests.notebooks import run_notebook


@pytest.mark.skipif(
    importlib.util.find_spec("xplique") is None,
    reason="the tutorial uses Xplique's explainers ([xplique] extra)",
)
def test_callbacks_tutorial_runs():
    nb = run_notebook(
        "callbacks.ipynb", dict(N_TRAIN=200, N_PROBE=4, IMAGE_SIZE=16, EPOCHS=3, NB_SAMPLES=20)
    )
    outputs = "".join(str(o) for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    for key in (
        "Saliency_MuFidelity",
        "SmoothGrad_MuFidelity",
        "IntegratedGradients_MuFidelity",
        "Random_MuFidelity",
        "seconds",
        "image/png",
    ):
        assert key in outputs, key
    assert "Error" not in outputs and "Traceback" not in outputs
    # the notebook quietens the console: no native TensorFlow/XLA line, no tqdm warning
    stderr = "".join(
        o.get("text", "")
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.outputs
        if o.get("name") == "stderr"
    )
    for word in ("absl", "XLA", "cuInit", "IProgress", "retracing"):
        assert word not in stderr, stderr[:2000]
