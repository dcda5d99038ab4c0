"""`xplique-ext demo` end to end at a tiny size, through the command line's main()."""

import numpy as np

from xplique_ext.cli import build_parser, main
from xplique_ext.cli.demo import gradient_explanations, run_demo


def test_demo_command_runs_every_section(capsys):
    code = main(["demo", "--n-train", "300", "--n-explain", "8", "--image-size", "64",
                 "--epochs", "2"])
    assert code == 0
    printed = capsys.readouterr().out
    for expected in ("MuFidelity", "EMD", "KL", "Saliency", "IntegratedGradients", "Random",
                     "FiRe", "PERCY"):
        assert expected in printed


def test_demo_fidelity_table():
    out = []
    results = run_demo(n_train=300, n_explain=8, image_size=64, epochs=2,
                       sections=["fidelity"], out=out.append)
    table = results["fidelity"]
    assert list(table.index) == ["Saliency", "GradientInput", "IntegratedGradients", "Random"]
    assert np.all(np.abs(table.iloc[:, 0]) <= 1)  # correlations
    emd_column = table.iloc[:, 1]
    assert np.all((emd_column >= 0) & (emd_column <= 1))


def test_gradient_explanations_on_a_linear_model():
    import keras

    model = keras.Sequential([keras.Input((4, 4, 1)), keras.layers.Flatten(),
                              keras.layers.Dense(1, use_bias=False, kernel_initializer="ones")])
    x = np.random.default_rng(0).random((2, 4, 4, 1)).astype(np.float32)
    maps = gradient_explanations(model, x, np.ones((2, 1), np.float32))
    np.testing.assert_allclose(maps["Saliency"], 1.0)
    np.testing.assert_allclose(maps["GradientInput"], x[..., 0], rtol=1e-6)
    np.testing.assert_allclose(maps["IntegratedGradients"], x[..., 0], rtol=1e-5)


def test_parser_lists_sub_commands():
    help_text = build_parser().format_help()
    assert "demo" in help_text and "rules" in help_text and "fire" in help_text
