"""``xplique-ext demo``: the package's main job, end to end on built-in synthetic data.

It generates AIXI-Shape images as the authors' generators draw them, with the paper's
ground truth (the weight w_i of each pattern on its objects; nothing downloaded), trains a
tiny Keras CNN in seconds, explains it with gradient saliency, gradient x input, Integrated
Gradients and a random baseline, and prints one table: MuFidelity (higher is better) next
to the EMD and KL distances to the ground truth (lower is better).
Then a rule-metrics section (a decision tree extracted from the CNN, scored with FiRe)
and a PERCY section (a text CNN's rule consistency).
"""

from __future__ import annotations

import os
import time
import warnings
from typing import Callable, Dict

import numpy as np

__all__ = ["register", "run_demo", "gradient_explanations"]


def register(subparsers) -> None:
    """Add the ``demo`` sub-command."""
    parser = subparsers.add_parser(
        "demo", help="train a tiny CNN on synthetic data and score its explanations",
        description=__doc__.splitlines()[0],
    )
    parser.add_argument("--n-train", type=int, default=3000, help="training images")
    parser.add_argument("--n-explain", type=int, default=32, help="images to explain")
    parser.add_argument("--image-size", type=int, default=64,
                        help="image side in pixels (>= 64: the authors' AIXI-Shape grid)")
    parser.add_argument("--epochs", type=int, default=8, help="training epochs")
    parser.add_argument("--seed", type=int, default=0, help="seed of everything")
    parser.add_argument("--sections", default="fidelity,rules,text",
                        help="comma-separated sections to run (fidelity, rules, text)")
    parser.add_argument("--progress", action="store_true", help="show progress bars")
    parser.set_defaults(func=_run_from_args)


def _run_from_args(args) -> int:
    run_demo(
        n_train=args.n_train, n_explain=args.n_explain, image_size=args.image_size,
        epochs=args.epochs, seed=args.seed, sections=args.sections.split(","),
        progress=args.progress,
    )
    return 0


def gradient_explanations(model, x: np.ndarray, y: np.ndarray, *, ig_steps: int = 32,
                          seed: int = 0) -> Dict[str, np.ndarray]:
    """Saliency |dF/dx|, gradient x input, Integrated Gradients (zero baseline) and a random
    map for the outputs ``F(x) = sum(model(x) * y, -1)``, each of shape (N, H, W)."""
    import tensorflow as tf

    x_t = tf.convert_to_tensor(x, tf.float32)
    y_t = tf.convert_to_tensor(y, tf.float32)

    @tf.function
    def grad(inputs):
        with tf.GradientTape() as tape:
            tape.watch(inputs)
            out = tf.reduce_sum(model(inputs, training=False) * y_t, axis=-1)
        return tape.gradient(out, inputs)

    g = grad(x_t).numpy()
    alphas = (np.arange(ig_steps) + 0.5) / ig_steps  # midpoint Riemann sum
    ig = sum(grad(x_t * float(a)).numpy() for a in alphas) / ig_steps * x
    rng = np.random.default_rng(seed)
    return {
        "Saliency": np.abs(g).max(axis=-1),
        "GradientInput": (g * x).sum(axis=-1),
        "IntegratedGradients": ig.sum(axis=-1),
        "Random": rng.random(x.shape[:-1]).astype(np.float32),
    }


def _tiny_cnn(image_size: int, seed: int):
    import keras

    init = keras.initializers.GlorotUniform(seed=seed)
    return keras.Sequential([
        keras.Input((image_size, image_size, 1)),
        keras.layers.Conv2D(16, 3, activation="relu", padding="same", kernel_initializer=init),
        keras.layers.MaxPooling2D(2),
        keras.layers.Conv2D(32, 3, activation="relu", padding="same", kernel_initializer=init),
        keras.layers.MaxPooling2D(2),
        keras.layers.Flatten(),
        keras.layers.Dense(32, activation="relu", kernel_initializer=init),
        keras.layers.Dense(2, kernel_initializer=init),
    ])


def run_demo(n_train: int = 3000, n_explain: int = 32, image_size: int = 64, epochs: int = 8,
             seed: int = 0, sections=("fidelity", "rules", "text"), progress: bool = False,
             out: Callable[[str], None] = print) -> Dict[str, object]:
    """Run the demonstration and print its tables; returns them (pandas DataFrames or
    strings) keyed by section."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import keras
    import pandas as pd

    from ..commons.warnings import UndefinedScoreWarning
    from ..datasets import make_aixi_shape
    from ..metrics import MuFidelity, emd, kl_divergence

    results: Dict[str, object] = {}
    t0 = time.perf_counter()
    data = make_aixi_shape(n_train + 2 * n_explain, image_size=image_size, function="class",
                           seed=seed)
    x = data.images
    y = np.asarray(data.targets).astype(np.int64)
    x_train, y_train = x[:n_train], y[:n_train]
    # explain held-out images whose ground truth is not all zero (EMD/KL are defined): the
    # paper's ground truth of 'class' is w1 = 1 on circles and -w2 = -0.5 on squares
    held_out = np.arange(n_train, len(x))
    held_out = held_out[np.asarray(data.has_ground_truth)[held_out]][:n_explain]
    x_test, y_test = x[held_out], y[held_out]
    model = _tiny_cnn(image_size, seed)
    model.compile(optimizer=keras.optimizers.Adam(2e-3),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    # the generated images come in random order: no global-seed shuffling needed
    model.fit(x_train, y_train, epochs=epochs, batch_size=64, shuffle=False, verbose=0)
    accuracy = float(np.mean(np.argmax(model.predict(x_test, verbose=0), -1) == y_test))
    out(f"xplique-ext demo: AIXI-Shape 'class' images {image_size}x{image_size}, "
        f"{n_train} for training, CNN accuracy {accuracy:.3f} on {len(x_test)} held-out images "
        f"({time.perf_counter() - t0:.1f} s)")

    if "fidelity" in sections:
        one_hot = np.eye(2, dtype=np.float32)[y_test]
        explanations = gradient_explanations(model, x_test, one_hot, seed=seed)
        metric = MuFidelity(model, x_test, y_test, batch_size=256, grid_size=8,
                            nb_samples=100, activation="softmax", seed=seed, progress=progress)
        truth = data.ground_truth[held_out]
        rows = []
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", UndefinedScoreWarning)
            for name, phi in explanations.items():
                mu = metric.detailed_evaluate(phi)
                rows.append({
                    "explainer": name,
                    "MuFidelity (higher better)": float(np.nanmean(mu)),
                    "EMD to truth (lower better)": float(np.nanmean(emd(phi, truth))),
                    "KL to truth (lower better)": float(np.nanmean(kl_divergence(phi, truth))),
                    "undefined MuFidelity": int(np.isnan(mu).sum()),
                })
        table = pd.DataFrame(rows).set_index("explainer")
        results["fidelity"] = table
        out(f"\nExplanation quality on {len(x_test)} held-out images (MuFidelity on the CNN; "
            "EMD and KL against the paper's ground truth, w_i on each object)")
        out(table.to_string(float_format=lambda v: f"{v:.3f}"))
        if caught:
            out("(undefined per-image scores, e.g. a constant explanation or constant "
                "predictions, are NaN and left out of the means)")

    if "rules" in sections:
        from ..rules.demo import demo_section as rules_section

        predictions = np.argmax(model.predict(x, verbose=0), -1)
        names = [f"n_{p}" for p in getattr(data, "pattern_names", ("circle", "square", "cross"))]
        text = rules_section(np.asarray(data.counts, dtype=float), names, predictions, seed=seed)
        results["rules"] = text
        out("")
        out(text)

    if "text" in sections:
        from ..text.demo import demo_section as text_section

        text = text_section(seed=seed, progress=progress)
        results["text"] = text
        out("\nPERCY: does a text CNN decide 'A but B' sentences on the right conjunct?")
        out(text)

    out(f"\ndone in {time.perf_counter() - t0:.1f} s")
    return results
