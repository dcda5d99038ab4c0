"""Explainer and complexity metrics: time against Xplique's on the same inputs, in one run.

Run: ``python benchmarks/xplique_explainer_metrics.py`` (``--quick`` for a smaller case).

Case: a small Keras CNN (10 classes), 32 images of 32x32x3, explained by Xplique's
``Saliency``; the complexity metrics read 256 maps of 224x224. Each metric runs with the
same settings in xplique_ext and in Xplique; the time is the best of ``--repeats`` runs.
Printed for each metric: both times, the ratio xplique / ours (above 1: ours is faster),
the floor (the explainer's own calls on the same inputs, which an explainer metric cannot
avoid, or one pass of NumPy over the maps for the complexity metrics), and both scores
with the standard error of ours over the inputs (the random metrics agree within it).
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402


def small_cnn(shape, classes=10, seed=0):
    import keras

    init = keras.initializers.GlorotUniform(seed=seed)
    return keras.Sequential(
        [
            keras.Input(shape),
            keras.layers.Conv2D(8, 3, activation="relu", kernel_initializer=init),
            keras.layers.MaxPooling2D(2),
            keras.layers.Conv2D(16, 3, activation="relu", kernel_initializer=init),
            keras.layers.Flatten(),
            keras.layers.Dense(classes, kernel_initializer=init),
        ]
    )


def best_of(fn, repeats, *args):
    """The best time of ``repeats`` calls ``fn(*args)`` after one untimed call (which
    traces the compiled functions), and the last result."""
    times = []
    result = fn(*args)
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn(*args)
        times.append(time.perf_counter() - start)
    return min(times), result


def _row(name, t_ours, t_xplique, t_floor, ours, theirs, standard_error):
    error = "" if standard_error is None else f" +- {standard_error:.4f}"
    print(
        f"| {name} | {t_ours:.3f} | {t_xplique:.3f} | **{t_xplique / t_ours:.2f}** | "
        f"{t_floor:.3f} | {t_ours / t_floor:.2f} | {ours:.4f}{error} | {theirs:.4f} |"
    )


def _mean_and_error(scores):
    scores = np.asarray(scores, dtype=np.float64)
    defined = scores[~np.isnan(scores)]
    return float(defined.mean()), float(defined.std(ddof=1) / np.sqrt(len(defined)))


def complexity_rows(n_maps, size, repeats):
    import xplique.metrics as xm

    import xplique_ext.metrics as ours

    phi = np.random.default_rng(0).random((n_maps, size, size)).astype(np.float32)
    t_floor, _ = best_of(lambda: np.abs(phi).sum(axis=(1, 2)), repeats)
    for name in ("Complexity", "Sparseness"):
        t_ours, ours_score = best_of(getattr(ours, name)().evaluate, repeats, phi)
        t_xplique, theirs = best_of(getattr(xm, name)().evaluate, repeats, phi)
        _row(name, t_ours, t_xplique, t_floor, ours_score, theirs, None)


def explainer_rows(n_inputs, size, nb_samples, repeats):
    import tensorflow as tf
    import xplique.metrics as xm
    from xplique.attributions import Saliency

    import xplique_ext.metrics as ours

    shape = (size, size, 3)
    model = small_cnn(shape)
    x = np.random.default_rng(0).random((n_inputs, *shape)).astype(np.float32)
    y = np.eye(10, dtype=np.float32)[np.arange(n_inputs) % 10]
    explainer = Saliency(model, batch_size=64)

    def explain_n(count):
        inputs = np.resize(x, (count, *shape))
        targets = np.resize(y, (count, 10))
        return lambda: explainer.explain(tf.constant(inputs), tf.constant(targets))

    # AverageStability: N * (K + 1) explanations
    t_floor, _ = best_of(explain_n(n_inputs * (nb_samples + 1)), repeats)
    metric = ours.AverageStability(model, x, y, nb_samples=nb_samples, seed=0)
    t_ours, scores = best_of(lambda: metric.detailed_evaluate(explainer), repeats)
    theirs_metric = xm.AverageStability(model, x, y, nb_samples=nb_samples)
    t_xplique, theirs = best_of(lambda: theirs_metric.evaluate(explainer), repeats)
    _row("AverageStability", t_ours, t_xplique, t_floor, *_pair(scores, theirs))

    # the sanity checks: 2N explanations
    t_floor, _ = best_of(explain_n(2 * n_inputs), repeats)
    metric = ours.RandomLogitMetric(model, x, y, seed=42)
    t_ours, scores = best_of(lambda: metric.detailed_evaluate(explainer), repeats)
    theirs_metric = xm.RandomLogitMetric(model, x, y, seed=42)
    t_xplique, theirs = best_of(lambda: theirs_metric.evaluate(explainer), repeats)
    _row("RandomLogitMetric", t_ours, t_xplique, t_floor, *_pair(scores, theirs))

    # the top half of the layers with weights (the default quarter is none of these 3)
    strategy = ours.ProgressiveLayerRandomization(0.5)
    metric = ours.ModelRandomizationMetric(model, x, y, strategy, seed=42)
    t_ours, scores = best_of(lambda: metric.detailed_evaluate(explainer), repeats)
    theirs_strategy = xm.ProgressiveLayerRandomization(0.5)
    theirs_metric = xm.ModelRandomizationMetric(model, x, y, theirs_strategy, seed=42)
    t_xplique, theirs = best_of(lambda: theirs_metric.evaluate(explainer), repeats)
    _row("ModelRandomizationMetric", t_ours, t_xplique, t_floor, *_pair(scores, theirs))

    # MeGe: the same 4 models for both (no training timed): 4N explanations. The models
    # are the CNN with its weights moved a little (as if trained on other splits), and the
    # labels are its predictions, so that pairs of models agree on most of them
    rng = np.random.default_rng(1)
    models = []
    for _ in range(4):
        copy = small_cnn(shape)
        copy.set_weights(
            [w + 0.1 * w.std() * rng.normal(size=w.shape) for w in model.get_weights()]
        )
        models.append(copy)
    y = np.eye(10, dtype=np.float32)[np.asarray(model(x)).argmax(axis=1)]
    t_floor = 4 * best_of(explain_n(n_inputs), repeats)[0]

    def algorithm(models_left):
        return lambda x_train, y_train, x_test, y_test: models_left.pop(0)

    mege = ours.MeGe(algorithm(list(models)), x, y, k_splits=4)
    theirs_mege = xm.MeGe(algorithm(list(models)), x, y, k_splits=4)
    t_ours, scores = best_of(lambda: mege.detailed_evaluate(Saliency), repeats)
    t_xplique, theirs = best_of(lambda: theirs_mege.evaluate(Saliency), repeats)
    _row("MeGe", t_ours, t_xplique, t_floor, *_pair(scores, theirs[0]))
    print(f"\nReCo: ours {mege.reco_:.4f}, Xplique's {theirs[1]:.4f}")


def _pair(scores, theirs):
    mean, standard_error = _mean_and_error(scores)
    return mean, float(theirs), standard_error


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smaller case")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    n_inputs, size, nb_samples, n_maps, map_size = (32, 32, 10, 256, 224)
    if args.quick:
        n_inputs, size, nb_samples, n_maps, map_size = (8, 16, 2, 8, 32)
    warnings.simplefilter("ignore")
    import tensorflow as tf

    tf.get_logger().setLevel("ERROR")  # Xplique's explainers retrace for each new shape
    print(
        f"Case: a small CNN, {n_inputs} images {size}x{size}x3, Xplique's Saliency, "
        f"AverageStability nb_samples={nb_samples}; Complexity and Sparseness on {n_maps} "
        f"maps {map_size}x{map_size}. Best of {args.repeats}.\n"
    )
    print(
        "| metric | ours (s) | Xplique (s) | Xplique / ours | floor (s) | ours / floor "
        "| score ours +- s.e. | score Xplique |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    complexity_rows(n_maps, map_size, args.repeats)
    explainer_rows(n_inputs, size, nb_samples, args.repeats)


if __name__ == "__main__":
    main()
