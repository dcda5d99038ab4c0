"""``xplique-ext demo``: the package's main job, end to end on built-in synthetic data.

It generates AIXI-Shape images as the authors' generators draw them, with the paper's
ground truth (the weight w_i of each pattern on its objects; nothing downloaded), trains a
tiny Keras CNN in seconds, explains it with Xplique's Saliency, GradientInput,
IntegratedGradients, SmoothGrad and Occlusion (where Xplique is installed; otherwise with
its own gradients: saliency, gradient x input, Integrated Gradients) and a random
baseline, and prints one table: MuFidelity (higher is better) next to the EMD and KL
distances to the ground truth (lower is better), each mean with its 95% interval over the
images, and which explainers paired tests (Wilcoxon, Holm-corrected) cannot tell apart.
Then a rule-metrics section (a decision tree extracted from the CNN, scored with FiRe) and
a PERCY section (a text CNN's rule consistency). A line per stage, with the time elapsed,
and a progress bar for the training show where it is.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time
import warnings
from typing import Callable, Dict, Optional, Tuple

import numpy as np

from ..commons.console import quiet_console

__all__ = ["register", "run_demo", "gradient_explanations", "demo_explanations", "quiet_console"]

XPLIQUE_EXPLAINERS = ("Saliency", "GradientInput", "IntegratedGradients", "SmoothGrad", "Occlusion")
_LABELS = {
    "MuFidelity": "MuFidelity (higher better)",
    "EMD": "EMD to truth (lower better)",
    "KL": "KL to truth (lower better)",
}


def register(subparsers) -> None:
    """Add the ``demo`` sub-command."""
    parser = subparsers.add_parser(
        "demo",
        help="train a tiny CNN on synthetic data and score its explanations",
        description=__doc__.splitlines()[0],
    )
    parser.add_argument("--n-train", type=int, default=3000, help="training images")
    parser.add_argument("--n-explain", type=int, default=32, help="images to explain")
    parser.add_argument(
        "--image-size",
        type=int,
        default=64,
        help="image side in pixels (>= 64: the authors' AIXI-Shape grid)",
    )
    parser.add_argument("--epochs", type=int, default=8, help="training epochs")
    parser.add_argument("--seed", type=int, default=0, help="seed of everything")
    parser.add_argument(
        "--sections",
        default="fidelity,rules,text",
        help="comma-separated sections to run (fidelity, rules, text)",
    )
    parser.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="show progress bars: training, long computations (default: on)",
    )
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="let TensorFlow's and XLA's log lines through (hidden by default)",
    )
    parser.set_defaults(func=_run_from_args)


def _run_from_args(args) -> None:  # main() exits 0
    with quiet_console(args.verbose):
        run_demo(
            n_train=args.n_train,
            n_explain=args.n_explain,
            image_size=args.image_size,
            epochs=args.epochs,
            seed=args.seed,
            sections=args.sections.split(","),
            progress=args.progress,
        )


def gradient_explanations(
    model, x: np.ndarray, y: np.ndarray, *, ig_steps: int = 32
) -> Dict[str, np.ndarray]:
    """Saliency |dF/dx|, gradient x input and Integrated Gradients (zero baseline) for the
    outputs ``F(x) = sum(model(x) * y, -1)``, each of shape (N, H, W)."""
    import tensorflow as tf

    x_t, y_t = tf.convert_to_tensor(x, tf.float32), tf.convert_to_tensor(y, tf.float32)

    @tf.function
    def grad(inputs):
        with tf.GradientTape() as tape:
            tape.watch(inputs)
            out = tf.reduce_sum(model(inputs, training=False) * y_t, axis=-1)
        return tape.gradient(out, inputs)

    g = grad(x_t).numpy()
    alphas = (np.arange(ig_steps) + 0.5) / ig_steps  # midpoint Riemann sum
    ig = sum(grad(x_t * float(a)).numpy() for a in alphas) / ig_steps * x
    return {
        "Saliency": np.abs(g).max(axis=-1),
        "GradientInput": (g * x).sum(axis=-1),
        "IntegratedGradients": ig.sum(axis=-1),
    }


def demo_explanations(
    model,
    x: np.ndarray,
    y: np.ndarray,
    *,
    seed: int = 0,
    use_xplique: Optional[bool] = None,
    batch_size: int = 256,
) -> Tuple[Dict[str, np.ndarray], str]:
    """The demo's explanations of ``model`` for inputs ``x`` and one-hot targets ``y``,
    each of shape (N, H, W), with a sentence saying where they come from.

    With Xplique (``use_xplique`` None: where it is installed): its Saliency,
    GradientInput, IntegratedGradients, SmoothGrad and Occlusion, with their defaults
    (Occlusion: patches of an eighth of the image side). Without: the demo's own
    gradients (:func:`gradient_explanations`). A random map is added as a baseline.
    """
    available = importlib.util.find_spec("xplique") is not None
    if use_xplique and not available:
        raise ValueError(
            "`use_xplique` is True but Xplique is not installed "
            "(pip install 'xplique_ext[xplique]')"
        )
    if not (available if use_xplique is None else use_xplique):
        maps = gradient_explanations(model, x, y)
        origin = ("Xplique is not installed" if not available else "use_xplique is False") + (
            ": explaining with the demo's own gradients (saliency, gradient x input, Integrated "
            "Gradients); install the [xplique] extra for Xplique's explainers"
        )
    else:
        import xplique
        from xplique import attributions

        patch = max(1, x.shape[1] // 8)
        options, maps = {"Occlusion": dict(patch_size=patch, patch_stride=patch)}, {}
        for name in XPLIQUE_EXPLAINERS:  # (N, H, W) maps, channels summed
            explainer = getattr(attributions, name)(
                model, batch_size=batch_size, **options.get(name, {})
            )
            phi = np.asarray(explainer.explain(x, y), dtype=np.float32)
            maps[name] = phi.reshape(*x.shape[:3], -1).sum(axis=-1)
        origin = f"Xplique {xplique.__version__}: {', '.join(XPLIQUE_EXPLAINERS)}, and a random map"
    maps["Random"] = np.random.default_rng(seed).random(x.shape[:-1]).astype(np.float32)
    return maps, origin


def _training_bar(epochs: int, steps: int, enabled: bool):
    """A Keras callback drawing a tqdm bar over the training batches, with the epoch and
    the loss."""
    import keras

    from ..commons.progress import progress_bar

    bar = progress_bar(total=epochs * steps, desc="training", unit="batch", enabled=enabled)

    def epoch_end(epoch, logs):
        bar.set_postfix(
            {
                "epoch": f"{epoch + 1}/{epochs}",
                **{key: f"{logs.get(key, float('nan')):.3f}" for key in ("loss", "accuracy")},
            }
        )

    return keras.callbacks.LambdaCallback(
        on_train_batch_end=lambda batch, logs: bar.update(1),
        on_epoch_end=epoch_end,
        on_train_end=lambda logs: bar.close(),
    )


def _tiny_cnn(image_size: int, seed: int):
    import keras

    init = keras.initializers.GlorotUniform(seed=seed)
    convolutions = [
        layer
        for filters in (16, 32)
        for layer in (
            keras.layers.Conv2D(
                filters, 3, activation="relu", padding="same", kernel_initializer=init
            ),
            keras.layers.MaxPooling2D(2),
        )
    ]
    return keras.Sequential(
        [
            keras.Input((image_size, image_size, 1)),
            *convolutions,
            keras.layers.Flatten(),
            keras.layers.Dense(32, activation="relu", kernel_initializer=init),
            keras.layers.Dense(2, kernel_initializer=init),
        ]
    )


def _fidelity_table(scores: Dict[str, Dict[str, np.ndarray]], seed: int):
    """The demo's table (one row per explainer: each measure's mean and 95% interval,
    and the number of undefined MuFidelity scores) and the paired comparison of the
    explainers for each measure (:func:`xplique_ext.compare.compare_scores`)."""
    import pandas as pd

    from ..compare import compare_scores

    comparisons, columns = {}, []
    for measure, by_name in scores.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            comparisons[measure] = compare_scores(  # EMD and KL are distances
                by_name, higher_is_better=measure == "MuFidelity", seed=seed, name=measure
            )
        columns.append(
            comparisons[measure]
            .explainers[["estimate", "ci_low", "ci_high"]]
            .set_axis([_LABELS[measure], f"{measure} CI low", f"{measure} CI high"], axis=1)
        )
    table = pd.concat(columns, axis=1).loc[list(scores["MuFidelity"])].rename_axis("explainer")
    table["undefined MuFidelity"] = [int(np.isnan(v).sum()) for v in scores["MuFidelity"].values()]
    return table, comparisons


def _report(table, comparisons) -> str:
    """``mean [low, high]`` per measure, one line per explainer; then which explainers the
    paired tests cannot tell apart, per measure."""
    shown = table[["undefined MuFidelity"]].copy()
    for measure, label in reversed(_LABELS.items()):
        shown.insert(
            0,
            label,
            [
                f"{m:.3f} [{lo:.3f}, {hi:.3f}]"
                for m, lo, hi in zip(
                    table[label], table[f"{measure} CI low"], table[f"{measure} CI high"]
                )
            ],
        )
    lines = [
        shown.to_string(),
        "Paired Wilcoxon signed-rank tests over the images, "
        "Holm-corrected, alpha 0.05: explainers that do not differ",
    ]
    for measure, frame in comparisons.items():
        pairs = ", ".join(f"{a} ~ {b}" for a, b in frame.indistinguishable())
        lines.append(f"  {measure}: {pairs or 'none (every pair differs)'}")
    return "\n".join(lines)


def run_demo(
    n_train: int = 3000,
    n_explain: int = 32,
    image_size: int = 64,
    epochs: int = 8,
    seed: int = 0,
    sections=("fidelity", "rules", "text"),
    progress: bool = False,
    out: Callable[[str], None] = print,
) -> Dict[str, object]:
    """Run the demonstration and print its tables; returns them (pandas DataFrames or
    strings) keyed by section. A line per stage gives the time elapsed since the start."""
    t0 = time.perf_counter()

    def stage(message: str) -> None:
        out(f"[{time.perf_counter() - t0:5.1f} s] {message}")
        sys.stdout.flush()

    stage("xplique-ext demo: loading TensorFlow")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import keras

    from ..commons.warnings import UndefinedScoreWarning
    from ..datasets import make_aixi_shape
    from ..metrics import MuFidelity, emd, kl_divergence

    results: Dict[str, object] = {}
    stage(
        f"generating {n_train + 2 * n_explain} AIXI-Shape 'class' images "
        f"{image_size}x{image_size} with their exact ground-truth explanations"
    )
    data = make_aixi_shape(
        n_train + 2 * n_explain, image_size=image_size, function="class", seed=seed
    )
    x, y = data.images, np.asarray(data.targets).astype(np.int64)
    # explain held-out images whose ground truth is not all zero (EMD/KL are defined): the
    # paper's ground truth of 'class' is w1 = 1 on circles and -w2 = -0.5 on squares
    held_out = n_train + np.flatnonzero(np.asarray(data.has_ground_truth)[n_train:])[:n_explain]
    x_test, y_test = x[held_out], y[held_out]
    model = _tiny_cnn(image_size, seed)
    model.compile(
        optimizer=keras.optimizers.Adam(2e-3),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )
    stage(f"training a tiny CNN on {n_train} images, {epochs} epochs")
    # the generated images come in random order: no global-seed shuffling needed
    model.fit(
        x[:n_train],
        y[:n_train],
        epochs=epochs,
        batch_size=64,
        shuffle=False,
        verbose=0,
        callbacks=[_training_bar(epochs, -(-n_train // 64), progress)],
    )
    accuracy = float(np.mean(np.argmax(model.predict(x_test, verbose=0), -1) == y_test))
    stage(f"CNN accuracy {accuracy:.3f} on {len(x_test)} held-out images")

    if "fidelity" in sections:
        stage(f"explaining the {len(x_test)} held-out images")
        one_hot = np.eye(2, dtype=np.float32)[y_test]
        explanations, origin = demo_explanations(model, x_test, one_hot, seed=seed)
        stage(origin)
        stage("scoring the explanations: MuFidelity, EMD and KL to the ground truth")
        metric = MuFidelity(
            model,
            x_test,
            y_test,
            batch_size=256,
            grid_size=8,
            nb_samples=100,
            activation="softmax",
            seed=seed,
            progress=progress,
        )
        truth = data.ground_truth[held_out]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", UndefinedScoreWarning)
            scores = {
                measure: {name: score(phi) for name, phi in explanations.items()}
                for measure, score in (
                    ("MuFidelity", metric.detailed_evaluate),
                    ("EMD", lambda phi: emd(phi, truth)),
                    ("KL", lambda phi: kl_divergence(phi, truth)),
                )
            }
        results["fidelity"], results["comparisons"] = _fidelity_table(scores, seed)
        out(
            f"\nExplanation quality on {len(x_test)} held-out images (MuFidelity on the CNN; "
            "EMD and KL against the paper's ground truth, w_i on each object), mean "
            "[95% CI] over the images"
        )
        out(_report(results["fidelity"], results["comparisons"]))
        if caught:
            out(
                "(undefined per-image scores, e.g. a constant explanation or constant "
                "predictions, are NaN and left out of the means)"
            )

    if "rules" in sections:
        stage("rule metrics: decision trees mimicking the CNN, scored with FiRe and Qs")
        from ..rules.demo import demo_section as rules_section

        names = [f"n_{p}" for p in getattr(data, "pattern_names", ("circle", "square", "cross"))]
        results["rules"] = rules_section(
            np.asarray(data.counts, dtype=float),
            names,
            np.argmax(model.predict(x, verbose=0), -1),
            seed=seed,
        )
        out("\n" + results["rules"])

    if "text" in sections:
        stage("PERCY: training a text CNN on generated 'A but B' sentences and explaining it")
        from .percy_demo import demo_section as text_section

        results["text"] = text_section(seed=seed, progress=progress)
        out("\nPERCY: does a text CNN decide 'A but B' sentences on the right conjunct?")
        out(results["text"])

    out(f"\ndone in {time.perf_counter() - t0:.1f} s")
    return results
