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
from dataclasses import dataclass
from typing import Any, Callable, Dict, Optional, Tuple

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

    inputs = tf.convert_to_tensor(x, tf.float32)
    targets = tf.convert_to_tensor(y, tf.float32)

    @tf.function
    def grad(batch):
        with tf.GradientTape() as tape:
            tape.watch(batch)
            out = tf.reduce_sum(model(batch, training=False) * targets, axis=-1)
        return tape.gradient(out, batch)

    g = grad(inputs).numpy()
    alphas = (np.arange(ig_steps) + 0.5) / ig_steps  # midpoint Riemann sum
    ig = sum(grad(inputs * float(a)).numpy() for a in alphas) / ig_steps * x
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
    if use_xplique is None:
        use_xplique = available
    if use_xplique:
        import xplique

        maps = _xplique_explanations(model, x, y, batch_size=batch_size)
        origin = f"Xplique {xplique.__version__}: {', '.join(XPLIQUE_EXPLAINERS)}, and a random map"
    else:
        maps = gradient_explanations(model, x, y)
        reason = "use_xplique is False" if available else "Xplique is not installed"
        origin = (
            f"{reason}: explaining with the demo's own gradients (saliency, gradient x input, "
            "Integrated Gradients); install the [xplique] extra for Xplique's explainers"
        )
    maps["Random"] = np.random.default_rng(seed).random(x.shape[:-1]).astype(np.float32)
    return maps, origin


def _xplique_explanations(
    model, x: np.ndarray, y: np.ndarray, *, batch_size: int
) -> Dict[str, np.ndarray]:
    """The maps of Xplique's explainers, (N, H, W) with the channels summed; Occlusion with
    patches of an eighth of the image side."""
    from xplique import attributions

    patch = max(1, x.shape[1] // 8)
    options = {"Occlusion": dict(patch_size=patch, patch_stride=patch)}
    maps = {}
    for name in XPLIQUE_EXPLAINERS:
        explainer = getattr(attributions, name)(
            model, batch_size=batch_size, **options.get(name, {})
        )
        phi = np.asarray(explainer.explain(x, y), dtype=np.float32)
        maps[name] = phi.reshape(*x.shape[:3], -1).sum(axis=-1)
    return maps


def _training_bar(epochs: int, steps: int, enabled: bool):
    """A Keras callback drawing a tqdm bar over the training batches, with the epoch and
    the loss."""
    import keras

    from ..commons.progress import progress_bar

    bar = progress_bar(total=epochs * steps, desc="training", unit="batch", enabled=enabled)

    def epoch_end(epoch, logs):
        postfix = {"epoch": f"{epoch + 1}/{epochs}"}
        for key in ("loss", "accuracy"):
            postfix[key] = f"{logs.get(key, float('nan')):.3f}"
        bar.set_postfix(postfix)

    return keras.callbacks.LambdaCallback(
        on_train_batch_end=lambda batch, logs: bar.update(1),
        on_epoch_end=epoch_end,
        on_train_end=lambda logs: bar.close(),
    )


def _tiny_cnn(image_size: int, seed: int):
    import keras

    init = keras.initializers.GlorotUniform(seed=seed)
    convolutions = []
    for filters in (16, 32):
        convolutions.append(
            keras.layers.Conv2D(
                filters, 3, activation="relu", padding="same", kernel_initializer=init
            )
        )
        convolutions.append(keras.layers.MaxPooling2D(2))
    return keras.Sequential(
        [
            keras.Input((image_size, image_size, 1)),
            *convolutions,
            keras.layers.Flatten(),
            keras.layers.Dense(32, activation="relu", kernel_initializer=init),
            keras.layers.Dense(2, kernel_initializer=init),
        ]
    )


def _directions(metric) -> Dict[str, bool]:
    """The direction each measure of the table declares: MuFidelity's, the EMD's and the
    KL's (:class:`~xplique_ext.metrics.GroundTruthMeasure`)."""
    from ..commons.direction import declared_direction
    from ..metrics import GroundTruthMeasure

    return {
        "MuFidelity": declared_direction(metric),
        "EMD": declared_direction(GroundTruthMeasure("emd")),
        "KL": declared_direction(GroundTruthMeasure("kl")),
    }


def _fidelity_table(
    scores: Dict[str, Dict[str, np.ndarray]], directions: Dict[str, bool], seed: int
):
    """The demo's table (one row per explainer: each measure's mean and 95% interval,
    and the number of undefined MuFidelity scores) and the paired comparison of the
    explainers for each measure (:func:`xplique_ext.compare.compare_scores`)."""
    import pandas as pd

    from ..compare import compare_scores

    comparisons = {}
    columns = []
    for measure, by_name in scores.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            comparisons[measure] = compare_scores(
                by_name, higher_is_better=directions[measure], seed=seed, name=measure
            )
        columns.append(
            comparisons[measure]
            .explainers[["estimate", "ci_low", "ci_high"]]
            .set_axis([_LABELS[measure], f"{measure} CI low", f"{measure} CI high"], axis=1)
        )
    table = pd.concat(columns, axis=1).loc[list(scores["MuFidelity"])].rename_axis("explainer")
    table["undefined MuFidelity"] = [int(np.isnan(v).sum()) for v in scores["MuFidelity"].values()]
    return table, comparisons


def _with_intervals(means, lows, highs) -> list:
    """``mean [low, high]`` for each row."""
    return [f"{m:.3f} [{lo:.3f}, {hi:.3f}]" for m, lo, hi in zip(means, lows, highs)]


def _report(table, comparisons) -> str:
    """``mean [low, high]`` per measure, one line per explainer; then which explainers the
    paired tests cannot tell apart, per measure."""
    shown = table[["undefined MuFidelity"]].copy()
    for measure, label in reversed(_LABELS.items()):
        cells = _with_intervals(
            table[label], table[f"{measure} CI low"], table[f"{measure} CI high"]
        )
        shown.insert(0, label, cells)
    lines = [
        shown.to_string(),
        "Paired Wilcoxon signed-rank tests over the images, "
        "Holm-corrected, alpha 0.05: explainers that do not differ",
    ]
    for measure, frame in comparisons.items():
        pairs = ", ".join(f"{a} ~ {b}" for a, b in frame.indistinguishable())
        lines.append(f"  {measure}: {pairs or 'none (every pair differs)'}")
    return "\n".join(lines)


class _Stages:
    """Prints a line per stage of the demo, with the seconds elapsed since the start."""

    def __init__(self, out: Callable[[str], None]):
        self.out = out
        self.start = time.perf_counter()

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def __call__(self, message: str) -> None:
        self.out(f"[{self.elapsed():5.1f} s] {message}")
        sys.stdout.flush()


@dataclass(frozen=True)
class _DemoImages:
    """The demo's images: the first ``n_train`` train the CNN; the held-out ones, whose
    ground truth is not all zero, are explained."""

    dataset: Any  # the AIXI-Shape data: images, ground truth, pattern counts
    labels: np.ndarray  # the class of every image (int64)
    held_out: np.ndarray  # the indices of the explained images

    @property
    def test_images(self) -> np.ndarray:
        return self.dataset.images[self.held_out]

    @property
    def test_labels(self) -> np.ndarray:
        return self.labels[self.held_out]


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
    stage = _Stages(out)
    stage("xplique-ext demo: loading TensorFlow")
    _load_tensorflow()
    images = _generate_images(n_train, n_explain, image_size=image_size, seed=seed, stage=stage)
    model = _train_cnn(
        images,
        n_train,
        image_size=image_size,
        epochs=epochs,
        seed=seed,
        progress=progress,
        stage=stage,
    )
    results: Dict[str, object] = {}
    if "fidelity" in sections:
        results.update(_fidelity_section(model, images, seed=seed, progress=progress, stage=stage))
    if "rules" in sections:
        results["rules"] = _rules_section(model, images, seed=seed, stage=stage)
    if "text" in sections:
        results["text"] = _text_section(seed=seed, progress=progress, stage=stage)
    out(f"\ndone in {stage.elapsed():.1f} s")
    return results


def _load_tensorflow() -> None:
    """Import Keras and the metrics: TensorFlow's start-up, in the demo's first stage."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import keras  # noqa: F401

    from ..commons.warnings import UndefinedScoreWarning  # noqa: F401
    from ..datasets import make_aixi_shape  # noqa: F401
    from ..metrics import MuFidelity, emd, kl_divergence  # noqa: F401


def _generate_images(
    n_train: int, n_explain: int, *, image_size: int, seed: int, stage: _Stages
) -> _DemoImages:
    """AIXI-Shape 'class' images with their ground truth: ``n_train`` to train on, then
    twice ``n_explain`` from which the first ``n_explain`` with a ground truth are held out."""
    from ..datasets import make_aixi_shape

    n_images = n_train + 2 * n_explain
    stage(
        f"generating {n_images} AIXI-Shape 'class' images "
        f"{image_size}x{image_size} with their exact ground-truth explanations"
    )
    data = make_aixi_shape(n_images, image_size=image_size, function="class", seed=seed)
    labels = np.asarray(data.targets).astype(np.int64)
    # explain held-out images whose ground truth is not all zero (EMD/KL are defined): the
    # paper's ground truth of 'class' is w1 = 1 on circles and -w2 = -0.5 on squares
    with_truth = np.flatnonzero(np.asarray(data.has_ground_truth)[n_train:])
    held_out = n_train + with_truth[:n_explain]
    return _DemoImages(dataset=data, labels=labels, held_out=held_out)


def _train_cnn(
    images: _DemoImages,
    n_train: int,
    *,
    image_size: int,
    epochs: int,
    seed: int,
    progress: bool,
    stage: _Stages,
):
    """The tiny CNN trained on the first ``n_train`` images; a stage line gives its
    accuracy on the held-out images."""
    import keras

    model = _tiny_cnn(image_size, seed)
    model.compile(
        optimizer=keras.optimizers.Adam(2e-3),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )
    stage(f"training a tiny CNN on {n_train} images, {epochs} epochs")
    batch_size = 64
    steps = -(-n_train // batch_size)  # batches per epoch
    # the generated images come in random order: no global-seed shuffling needed
    model.fit(
        images.dataset.images[:n_train],
        images.labels[:n_train],
        epochs=epochs,
        batch_size=batch_size,
        shuffle=False,
        verbose=0,
        callbacks=[_training_bar(epochs, steps, progress)],
    )
    x_test = images.test_images
    predicted = np.argmax(model.predict(x_test, verbose=0), -1)
    accuracy = float(np.mean(predicted == images.test_labels))
    stage(f"CNN accuracy {accuracy:.3f} on {len(x_test)} held-out images")
    return model


def _fidelity_section(
    model, images: _DemoImages, *, seed: int, progress: bool, stage: _Stages
) -> Dict[str, object]:
    """Explain the held-out images, score the maps (MuFidelity, EMD and KL to the ground
    truth), print the table; returns it ("fidelity") and the comparisons ("comparisons")."""
    from ..commons.warnings import UndefinedScoreWarning
    from ..metrics import MuFidelity

    x_test = images.test_images
    y_test = images.test_labels
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
    truth = images.dataset.ground_truth[images.held_out]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UndefinedScoreWarning)
        scores = _measure_scores(explanations, metric, truth)
    table, comparisons = _fidelity_table(scores, _directions(metric), seed)
    stage.out(
        f"\nExplanation quality on {len(x_test)} held-out images (MuFidelity on the CNN; "
        "EMD and KL against the paper's ground truth, w_i on each object), mean "
        "[95% CI] over the images"
    )
    stage.out(_report(table, comparisons))
    if caught:
        stage.out(
            "(undefined per-image scores, e.g. a constant explanation or constant "
            "predictions, are NaN and left out of the means)"
        )
    return {"fidelity": table, "comparisons": comparisons}


def _measure_scores(
    explanations: Dict[str, np.ndarray], metric, truth: np.ndarray
) -> Dict[str, Dict[str, np.ndarray]]:
    """Per-image scores of each explainer's maps, per measure: MuFidelity on the CNN, EMD
    and KL to the ground truth."""
    from ..metrics import emd, kl_divergence

    measures = {
        "MuFidelity": metric.detailed_evaluate,
        "EMD": lambda phi: emd(phi, truth),
        "KL": lambda phi: kl_divergence(phi, truth),
    }
    scores = {}
    for measure, score in measures.items():
        scores[measure] = {name: score(phi) for name, phi in explanations.items()}
    return scores


def _rules_section(model, images: _DemoImages, *, seed: int, stage: _Stages) -> str:
    """Decision trees mimicking the CNN, scored with FiRe and Qs; prints and returns the
    report."""
    stage("rule metrics: decision trees mimicking the CNN, scored with FiRe and Qs")
    from ..rules.demo import demo_section

    data = images.dataset
    names = [f"n_{p}" for p in getattr(data, "pattern_names", ("circle", "square", "cross"))]
    predicted = np.argmax(model.predict(data.images, verbose=0), -1)
    report = demo_section(np.asarray(data.counts, dtype=float), names, predicted, seed=seed)
    stage.out("\n" + report)
    return report


def _text_section(*, seed: int, progress: bool, stage: _Stages) -> str:
    """PERCY on a text CNN trained on generated 'A but B' sentences; prints and returns
    the report."""
    stage("PERCY: training a text CNN on generated 'A but B' sentences and explaining it")
    from .percy_demo import demo_section

    report = demo_section(seed=seed, progress=progress)
    stage.out("\nPERCY: does a text CNN decide 'A but B' sentences on the right conjunct?")
    stage.out(report)
    return report
