"""`xplique-ext demo` end to end at a tiny size: as a user runs it (a separate process,
its standard error checked), and in-process."""

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from xplique_ext.cli import build_parser, main
from xplique_ext.cli.demo import (
    XPLIQUE_EXPLAINERS,
    demo_explanations,
    gradient_explanations,
    run_demo,
)

ROOT = Path(__file__).resolve().parents[2]
TINY = ["--n-train", "300", "--n-explain", "8", "--image-size", "64", "--epochs", "2"]
HAS_XPLIQUE = importlib.util.find_spec("xplique") is not None
# a tqdm progress bar, as drawn on a terminal or a pipe: "desc:  40%|####  | 4/10 [...]"
BAR = re.compile(r"^[\w .-]*: *\d+%\|.*\| *\d+/\d+ \[.*\]$")


def test_demo_command_runs_every_section_and_its_stderr_holds_only_progress_bars():
    env = {k: v for k, v in os.environ.items() if not k.startswith("TF_CPP")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, "-m", "xplique_ext.cli", "demo", *TINY],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    printed = done.stdout
    for expected in (
        "MuFidelity",
        "EMD",
        "KL",
        "Saliency",
        "IntegratedGradients",
        "Random",
        "FiRe",
        "PERCY",
    ):
        assert expected in printed
    # a line per stage, with the time elapsed, from the very first second
    stages = re.findall(r"^\[ *(\d+\.\d) s\] (.+)$", printed, flags=re.M)
    assert stages[0] == ("0.0", "xplique-ext demo: loading TensorFlow")
    assert len(stages) >= 8
    assert [float(t) for t, _ in stages] == sorted(float(t) for t, _ in stages)
    assert any("training a tiny CNN" in line for _, line in stages)
    # the standard error: progress bars (training included), nothing else
    fragments = [f.strip() for f in re.split(r"[\r\n]", done.stderr) if f.strip()]
    noise = [f for f in fragments if not BAR.match(f)]
    assert noise == [], noise[:10]
    assert any(f.startswith("training:") for f in fragments)
    for word in ("retracing", "absl", "XLA", "IProgress", "cuInit", "Warning", "WARNING"):
        assert word not in done.stderr


def test_demo_fidelity_table_without_progress_and_nothing_on_stderr(capfd):
    code = main(["demo", *TINY, "--sections", "fidelity", "--no-progress"])
    assert code == 0
    captured = capfd.readouterr()
    assert captured.err == ""
    names = (
        [*XPLIQUE_EXPLAINERS, "Random"]
        if HAS_XPLIQUE
        else ["Saliency", "GradientInput", "IntegratedGradients", "Random"]
    )
    rows = {}
    number = r"(-?\d+\.\d+|nan)"
    interval = rf"{number} \[{number}, {number}\]"
    pattern = re.compile(rf"^(\w+) +{interval} +{interval} +{interval} +(\d+)$")
    for line in captured.out.splitlines():
        found = pattern.match(line)
        if found and found.group(1) in names:
            rows[found.group(1)] = [float(v) for v in found.groups()[1:]]
    assert list(rows) == names
    for mu, mu_lo, mu_hi, emd, emd_lo, emd_hi, kl, kl_lo, kl_hi, undefined in rows.values():
        assert -1 <= mu <= 1 and 0 <= emd <= 1 and kl >= 0 and undefined >= 0
        assert mu_lo <= mu <= mu_hi and emd_lo <= emd <= emd_hi and kl_lo <= kl <= kl_hi
    # the table says which explainers the paired tests cannot tell apart
    assert "explainers that do not differ" in captured.out
    for measure in ("MuFidelity", "EMD", "KL"):
        assert re.search(rf"^  {measure}: ", captured.out, re.M), measure
    assert ("Xplique 2" in captured.out) == HAS_XPLIQUE


def test_demo_falls_back_to_its_own_gradients_and_says_so(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "xplique" else real(name, *a)
    )
    out = []
    results = run_demo(
        n_train=300, n_explain=8, image_size=64, epochs=2, sections=["fidelity"], out=out.append
    )
    table = results["fidelity"]
    assert list(table.index) == ["Saliency", "GradientInput", "IntegratedGradients", "Random"]
    assert (table["EMD CI low"] <= table["EMD to truth (lower better)"]).all()
    comparison = results["comparisons"]["MuFidelity"]
    assert sorted(comparison.explainers.index) == sorted(table.index)
    assert len(comparison.pairs) == 6
    assert any("Xplique is not installed" in line and "own gradients" in line for line in out)
    with pytest.raises(ValueError, match="use_xplique"):
        demo_explanations(None, np.zeros((1, 4, 4, 1)), np.ones((1, 1)), use_xplique=True)


@pytest.mark.skipif(not HAS_XPLIQUE, reason="the [xplique] extra is not installed")
def test_demo_explanations_are_xpliques():
    import keras
    from xplique.attributions import Occlusion, Saliency

    model = keras.Sequential(
        [
            keras.Input((8, 8, 1)),
            keras.layers.Flatten(),
            keras.layers.Dense(2, kernel_initializer="glorot_uniform"),
        ]
    )
    x = np.random.default_rng(0).random((3, 8, 8, 1)).astype(np.float32)
    y = np.eye(2, dtype=np.float32)[[0, 1, 0]]
    maps, origin = demo_explanations(model, x, y)
    assert list(maps) == [*XPLIQUE_EXPLAINERS, "Random"] and "Xplique" in origin
    assert all(m.shape == (3, 8, 8) for m in maps.values())
    np.testing.assert_allclose(
        maps["Saliency"], np.asarray(Saliency(model).explain(x, y))[..., 0], rtol=1e-6
    )
    occlusion = Occlusion(model, patch_size=1, patch_stride=1).explain(x, y)
    np.testing.assert_allclose(
        maps["Occlusion"], np.asarray(occlusion)[..., 0], rtol=1e-5, atol=1e-6
    )


def test_gradient_explanations_on_a_linear_model():
    import keras

    model = keras.Sequential(
        [
            keras.Input((4, 4, 1)),
            keras.layers.Flatten(),
            keras.layers.Dense(1, use_bias=False, kernel_initializer="ones"),
        ]
    )
    x = np.random.default_rng(0).random((2, 4, 4, 1)).astype(np.float32)
    maps = gradient_explanations(model, x, np.ones((2, 1), np.float32))
    np.testing.assert_allclose(maps["Saliency"], 1.0)
    np.testing.assert_allclose(maps["GradientInput"], x[..., 0], rtol=1e-6)
    np.testing.assert_allclose(maps["IntegratedGradients"], x[..., 0], rtol=1e-5)
    # asked for explicitly: said so (it said "Xplique is not installed" even where it is)
    maps, origin = demo_explanations(model, x, np.ones((2, 1), np.float32), use_xplique=False)
    assert list(maps) == ["Saliency", "GradientInput", "IntegratedGradients", "Random"]
    why = "Xplique is not installed" if not HAS_XPLIQUE else "use_xplique is False"
    assert origin.startswith(f"{why}: explaining with the demo's own gradients")


def test_parser_lists_sub_commands():
    help_text = build_parser().format_help()
    assert "demo" in help_text and "rules" in help_text and "fire" in help_text
