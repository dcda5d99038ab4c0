"""Xplique's deterministic model metrics, ours against Xplique's and against the floor.

Run: ``python benchmarks/xplique_metrics.py`` (``--quick`` for a smaller case; ``--help``).

Case: a small Keras CNN on a few images of 224x224x3 (8 by default), random explanations
(224x224), ``batch_size=64``, on CPU. For each metric (Deletion and Insertion with
``steps=10``; Average Drop, Increase and Gain), in one run and on the same inputs:

  ours        best wall time of ``evaluate`` over the repeats, after one warm-up call
              (tracing);
  xplique     the same for Xplique's class of the same name (installed ``xplique``);
  floor       the model's own forward passes on as many inputs as the metric scores
              (``N * (steps + 1)`` for Deletion and Insertion, ``2 N`` for the Average
              metrics), batched at ``batch_size``, compiled;
  xplique/ours (target for Deletion and Insertion: >= 1) and ours/floor;
  |ours - xplique|, the gap between the two scores (target: <= 1e-5).
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402

METRICS = (
    "Deletion",
    "Insertion",
    "AverageDropMetric",
    "AverageIncreaseMetric",
    "AverageGainMetric",
)


def small_cnn(shape, classes=10, seed=0):
    import keras

    init = keras.initializers.GlorotUniform(seed=seed)
    return keras.Sequential(
        [
            keras.Input(shape),
            keras.layers.Conv2D(8, 3, strides=2, activation="relu", kernel_initializer=init),
            keras.layers.MaxPooling2D(2),
            keras.layers.Conv2D(16, 3, strides=2, activation="relu", kernel_initializer=init),
            keras.layers.GlobalAveragePooling2D(),
            keras.layers.Dense(classes, kernel_initializer=init),
        ]
    )


def best_of(fn, repeats):
    """The result of ``fn()`` and its best wall time over ``repeats`` calls, after one
    warm-up call (tracing, caches)."""
    result = fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return result, min(times)


def forward_floor(forward, x, n_inputs, batch_size, repeats):
    """Best wall time of ``n_inputs`` forward passes of the bare model (``forward``:
    compiled), batched at ``batch_size``, inputs cycled from ``x``."""
    import tensorflow as tf

    reps = -(-n_inputs // len(x))
    data = np.concatenate([x] * reps)[:n_inputs]

    def run():
        for start in range(0, n_inputs, batch_size):
            forward(tf.constant(data[start : start + batch_size])).numpy()

    return best_of(run, repeats)[1]


def n_forward(name, n, steps):
    """How many inputs the metric scores."""
    if name in ("Deletion", "Insertion"):
        return n * (steps + 1)
    return 2 * n


def options(name, steps):
    if name in ("Deletion", "Insertion"):
        return {"steps": steps}
    return {"activation": "softmax"}


def run(n_images, size, steps, batch_size, repeats):
    import tensorflow as tf
    import xplique.metrics as theirs

    import xplique_ext.metrics as ours

    rng = np.random.default_rng(0)
    x = rng.random((n_images, size, size, 3), dtype=np.float32)
    y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, n_images)]
    phi = rng.normal(size=(n_images, size, size)).astype(np.float32)
    model = small_cnn((size, size, 3))
    forward = tf.function(model)  # the floor's compiled forward pass, traced once per shape
    print(
        f"{n_images} images {size}x{size}x3, small CNN, batch_size={batch_size}, "
        f"steps={steps}, best of {repeats}"
    )
    header = f"{'metric':<22}{'ours s':>9}{'xplique s':>11}{'floor s':>9}"
    print(header + f"{'xplique/ours':>14}{'ours/floor':>12}{'|ours - xplique|':>18}")
    for name in METRICS:
        kw = options(name, steps)
        metric = getattr(ours, name)(model, x, y, batch_size=batch_size, **kw)
        reference = getattr(theirs, name)(model, x, y, batch_size=batch_size, **kw)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            score, t_ours = best_of(lambda m=metric: m.evaluate(phi), repeats)
            their_score, t_theirs = best_of(lambda m=reference: m.evaluate(phi), repeats)
        t_floor = forward_floor(forward, x, n_forward(name, n_images, steps), batch_size, repeats)
        print(
            f"{name:<22}{t_ours:>9.3f}{t_theirs:>11.3f}{t_floor:>9.3f}"
            f"{t_theirs / t_ours:>14.2f}{t_ours / t_floor:>12.2f}"
            f"{abs(score - float(their_score)):>18.1e}"
        )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="4 images of 96x96, 1 repeat")
    parser.add_argument("--images", type=int, default=8, help="number of images (8)")
    parser.add_argument("--steps", type=int, default=10, help="Deletion/Insertion steps (10)")
    parser.add_argument("--batch-size", type=int, default=64, help="batch size (64)")
    parser.add_argument("--repeats", type=int, default=5, help="timed repeats (5)")
    args = parser.parse_args(argv)
    if args.quick:
        run(n_images=4, size=96, steps=args.steps, batch_size=args.batch_size, repeats=1)
        return
    run(args.images, 224, args.steps, args.batch_size, args.repeats)


if __name__ == "__main__":
    main()
