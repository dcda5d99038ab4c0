"""MuFidelity benchmark: speed against the model-forward floor and against Xplique's
MuFidelity, and working memory bounded by ``batch_size``.

Run: ``python benchmarks/mufidelity.py`` (add ``--quick`` for a smaller case;
``--adaptive --skip-speed --skip-memory`` for the adaptive-sampling case alone).

Speed case: a small Keras CNN, 32 images of 64x64x3,
nb_samples=200, batch_size=256, on CPU. Printed ratios:
  ours / floor     (target <= 1.3), the floor being the same number of forward passes of
                   the bare model, batched at the same batch size, compiled;
  xplique / ours   (target >= 2).
Adaptive case: ``nb_samples='auto'`` (target_se=0.02, max_samples=1000)
against the fixed nb_samples=200, forward passes and wall time, on two models: a
near-linear one explained by gradient x input (scores near 1: 200 subsets are more than
enough; target: >= 2x fewer forward passes, every per-input score within its reported
standard error of the fixed-200 score) and a random CNN explained by gradient x input
(scores far from 1: 200 subsets leave a standard error well above 0.02).
Repeated subsets: on small grids random subsets repeat; each distinct subset is scored
once per input. Printed: the forward passes made, of those the correlations use.
Memory case: 1,000 then 100 inputs of 224x224x3 streamed from a tf.data.Dataset at batch
64, each in a fresh process; peak resident memory less the size of the explanations array
passed in; target: ratio (1,000 / 100) <= 1.25.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import warnings

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402


def small_cnn(shape, classes=10):
    import keras

    return keras.Sequential(
        [
            keras.Input(shape),
            keras.layers.Conv2D(16, 3, activation="relu"),
            keras.layers.MaxPooling2D(2),
            keras.layers.Conv2D(32, 3, activation="relu"),
            keras.layers.MaxPooling2D(2),
            keras.layers.Flatten(),
            keras.layers.Dense(classes),
        ]
    )


def best_of(fn, repeats):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def speed(n=32, size=64, nb_samples=200, batch_size=256, repeats=3):
    import tensorflow as tf
    from xplique.metrics import MuFidelity as XpliqueMuFidelity

    from xplique_ext.metrics import MuFidelity

    rng = np.random.default_rng(0)
    x = rng.random((n, size, size, 3), dtype=np.float32)
    y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, n)]
    phi = rng.random((n, size, size), dtype=np.float32)
    model = small_cnn((size, size, 3))

    forward = tf.function(lambda b: model(b, training=False), reduce_retracing=True)
    batch = tf.constant(np.repeat(x, batch_size // n + 1, axis=0)[:batch_size])
    n_calls = int(np.ceil(n * nb_samples / batch_size))

    def floor():
        for _ in range(n_calls):
            forward(batch).numpy()

    ours = MuFidelity(
        model, x, y, batch_size=batch_size, nb_samples=nb_samples, seed=0, progress=False
    )
    theirs = XpliqueMuFidelity(model, x, y, batch_size=batch_size, nb_samples=nb_samples)
    floor()
    ours.evaluate(phi)
    theirs.evaluate(phi)  # warm-up: tracing
    t_floor = best_of(floor, repeats)
    t_ours = best_of(lambda: ours.evaluate(phi), repeats)
    t_xplique = best_of(lambda: theirs.evaluate(phi), repeats)
    print(
        f"speed case: {n} images {size}x{size}x3, nb_samples={nb_samples}, "
        f"batch_size={batch_size}, {n * nb_samples} perturbed inputs, best of {repeats}"
    )
    print(f"  floor (bare forward passes) {t_floor:8.3f} s")
    print(f"  xplique_ext MuFidelity      {t_ours:8.3f} s")
    print(f"  xplique MuFidelity          {t_xplique:8.3f} s")
    print(f"  ratio ours / floor     = {t_ours / t_floor:5.2f}   (target <= 1.3)")
    print(f"  ratio xplique / ours   = {t_xplique / t_ours:5.2f}   (target >= 2)")
    print(f"  ratio xplique / floor  = {t_xplique / t_floor:5.2f}")
    print_forward_passes(ours)
    return t_ours / t_floor, t_xplique / t_ours


def print_forward_passes(metric):
    """The perturbed inputs the model scored, out of those the correlations use."""
    passes = metric.forward_passes_
    print(
        f"  forward passes: {passes.evaluated} of {passes.perturbations} "
        "(repeated subsets evaluated once)"
    )


def repeated_subsets(n=8, size=32):
    """Forward passes saved on small grids, where random subsets repeat."""
    from xplique_ext.metrics import MuFidelity

    rng = np.random.default_rng(0)
    x = rng.random((n, size, size, 3), dtype=np.float32)
    y = rng.integers(0, 10, n)
    phi = rng.random((n, size, size), dtype=np.float32)
    model = small_cnn((size, size, 3))
    print(f"repeated subsets: {n} images {size}x{size}x3, subset_percent=0.2, seed=0")
    for grid_size, nb_samples in ((2, 30), (3, 30), (3, 200), (4, 200), (9, 200)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a 2x2 grid warns (degenerate setting)
            metric = MuFidelity(model, x, y, grid_size=grid_size, nb_samples=nb_samples, seed=0)
            metric.evaluate(phi)
        print(f"  grid {grid_size}, {nb_samples} subsets:", end="")
        print_forward_passes(metric)


def gradient_x_input(model, x, y):
    """Gradient x input of the class score, summed over channels: (N, H, W)."""
    import tensorflow as tf

    xt = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(xt)
        out = tf.reduce_sum(model(xt, training=False) * y, axis=-1)
    return (tape.gradient(out, xt).numpy() * x).sum(axis=-1)


def near_linear(shape, seed=0):
    """A wide, shallow tanh network in its near-linear regime (small weights)."""
    import keras

    init = keras.initializers.RandomNormal(stddev=0.02, seed=seed)
    return keras.Sequential(
        [
            keras.Input(shape),
            keras.layers.Flatten(),
            keras.layers.Dense(32, activation="tanh", kernel_initializer=init),
            keras.layers.Dense(
                10, kernel_initializer=keras.initializers.RandomNormal(stddev=0.5, seed=seed + 1)
            ),
        ]
    )


def adaptive_case(label, model, x, y, batch_size, target_se=0.02, max_samples=1000):
    from xplique_ext.metrics import MuFidelity

    phi = gradient_x_input(model, x, y)
    fixed = MuFidelity(model, x, y, batch_size=batch_size, nb_samples=200, seed=0)
    auto = MuFidelity(
        model,
        x,
        y,
        batch_size=batch_size,
        nb_samples="auto",
        seed=0,
        target_se=target_se,
        max_samples=max_samples,
    )
    fixed.details(phi)
    auto.details(phi)  # warm-up: tracing
    t0 = time.perf_counter()
    f = fixed.details(phi)
    t_fixed = time.perf_counter() - t0
    t0 = time.perf_counter()
    a = auto.details(phi)
    t_auto = time.perf_counter() - t0
    n = len(x)
    passes_fixed = int(f["n_subsets"].sum()) + n  # + one unperturbed pass per input
    passes_auto = int(a["n_subsets"].sum()) + n
    diff = (a["score"] - f["score"]).abs()
    within = float((diff <= a["std_error"]).mean())
    within2 = float((diff <= 2 * a["std_error"]).mean())
    print(
        f"adaptive case, {label}: {n} images {x.shape[1]}x{x.shape[2]}x{x.shape[3]}, "
        f"batch_size={batch_size}, target_se={target_se}, max_samples={max_samples}"
    )
    print(f"  mean score     fixed-200 {f['score'].mean():7.4f}   auto {a['score'].mean():7.4f}")
    print(
        f"  per-input SE   fixed-200 median {f['std_error'].median():.4f} "
        f"max {f['std_error'].max():.4f}   auto median {a['std_error'].median():.4f} "
        f"max {a['std_error'].max():.4f}"
    )
    print(
        f"  subsets/input  fixed 200   auto median {a['n_subsets'].median():.0f} "
        f"(min {a['n_subsets'].min()}, max {a['n_subsets'].max()})"
    )
    print(
        f"  forward passes fixed {passes_fixed:7d}   auto {passes_auto:7d}   "
        f"ratio fixed / auto = {passes_fixed / passes_auto:5.2f}"
    )
    print(
        f"  wall time      fixed {t_fixed:7.2f} s   auto {t_auto:7.2f} s   "
        f"ratio fixed / auto = {t_fixed / t_auto:5.2f}"
    )
    # auto's subsets are the first of fixed-200's (same pool), so the difference has
    # standard deviation about sqrt(SE_auto^2 - SE_fixed^2) < SE_auto
    print(
        f"  |auto - fixed| <= 1 auto SE for {within:.0%} of the inputs, <= 2 SE for "
        f"{within2:.0%}; max |diff| / SE {(diff / a['std_error']).max():.2f}; mean "
        f"|diff| {diff.mean():.4f}"
    )
    return passes_fixed / passes_auto, within, within2


def adaptive(n=32, size=64, batch_size=256):
    rng = np.random.default_rng(0)
    x = rng.random((n, size, size, 3), dtype=np.float32)
    y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, n)]
    ratio, within, within2 = adaptive_case(
        "near-linear model (200 subsets more than enough)",
        near_linear((size, size, 3)),
        x,
        y,
        batch_size,
    )
    print(
        f"  target: forward-pass ratio >= 2 (got {ratio:.2f}); scores within their SE "
        f"of fixed-200: {within:.0%} within 1 SE, {within2:.0%} within 2 SE"
    )
    adaptive_case(
        "random CNN (200 subsets not enough)", small_cnn((size, size, 3)), x, y, batch_size
    )


def memory_child(n, nb_samples):
    """Run in a fresh process: stream n inputs 224x224x3 and print the peak RSS."""
    import resource

    import tensorflow as tf

    from xplique_ext.metrics import MuFidelity

    def make(i):
        return tf.random.stateless_uniform((224, 224, 3), seed=tf.stack([i, tf.zeros_like(i)]))

    ds = tf.data.Dataset.range(n).map(make)
    model = small_cnn((224, 224, 3))
    phi = np.random.default_rng(0).random((n, 224, 224), dtype=np.float32)
    metric = MuFidelity(
        model, ds, None, batch_size=64, nb_samples=nb_samples, seed=0, progress=False
    )
    metric.detailed_evaluate(phi)
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"n": n, "peak_mib": peak_mib, "explanations_mib": phi.nbytes / 2**20}))


def memory(nb_samples):
    rows = {}
    for n in (100, 1000):
        out = (
            subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--memory-child",
                    str(n),
                    "--nb-samples",
                    str(nb_samples),
                ],
                check=True,
                capture_output=True,
                text=True,
            )
            .stdout.strip()
            .splitlines()[-1]
        )
        rows[n] = json.loads(out)
    net = {n: r["peak_mib"] - r["explanations_mib"] for n, r in rows.items()}
    print(
        f"memory case: inputs 224x224x3 streamed from a tf.data.Dataset, batch_size=64, "
        f"nb_samples={nb_samples}"
    )
    for n, r in rows.items():
        print(
            f"  N={n:5d}: peak RSS {r['peak_mib']:8.1f} MiB, explanations "
            f"{r['explanations_mib']:7.1f} MiB, net {net[n]:8.1f} MiB"
        )
    ratio = net[1000] / net[100]
    print(f"  ratio net(1000) / net(100) = {ratio:5.2f}   (target <= 1.25)")
    return ratio


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller cases")
    parser.add_argument("--memory-child", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--nb-samples", type=int, default=10, help=argparse.SUPPRESS)
    parser.add_argument("--skip-memory", action="store_true")
    parser.add_argument("--skip-speed", action="store_true")
    parser.add_argument("--adaptive", action="store_true", help="run the adaptive-sampling case")
    args = parser.parse_args()
    if args.memory_child is not None:
        memory_child(args.memory_child, args.nb_samples)
        return
    if args.adaptive:
        adaptive(n=8 if args.quick else 32)
    repeated_subsets()
    if args.skip_speed:
        pass
    elif args.quick:
        speed(n=8, nb_samples=100, repeats=1)
    else:
        speed()
    if not args.skip_memory:
        memory(nb_samples=4 if args.quick else 10)


if __name__ == "__main__":
    main()
