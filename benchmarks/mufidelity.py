"""MuFidelity benchmark: speed against the model-forward floor and against Xplique's
MuFidelity, and working memory bounded by ``batch_size``.

Run: ``python benchmarks/mufidelity.py`` (add ``--quick`` for a smaller case).

Speed case (acceptance of issue 2): a small Keras CNN, 32 images of 64x64x3,
nb_samples=200, batch_size=256, on CPU. Printed ratios:
  ours / floor     (target <= 1.3), the floor being the same number of forward passes of
                   the bare model, batched at the same batch size, compiled;
  xplique / ours   (target >= 2).
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

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402


def small_cnn(shape, classes=10):
    import keras

    return keras.Sequential([
        keras.Input(shape),
        keras.layers.Conv2D(16, 3, activation="relu"),
        keras.layers.MaxPooling2D(2),
        keras.layers.Conv2D(32, 3, activation="relu"),
        keras.layers.MaxPooling2D(2),
        keras.layers.Flatten(),
        keras.layers.Dense(classes),
    ])


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

    ours = MuFidelity(model, x, y, batch_size=batch_size, nb_samples=nb_samples, seed=0,
                      progress=False)
    theirs = XpliqueMuFidelity(model, x, y, batch_size=batch_size, nb_samples=nb_samples)
    floor()
    ours.evaluate(phi)
    theirs.evaluate(phi)  # warm-up: tracing
    t_floor = best_of(floor, repeats)
    t_ours = best_of(lambda: ours.evaluate(phi), repeats)
    t_xplique = best_of(lambda: theirs.evaluate(phi), repeats)
    print(f"speed case: {n} images {size}x{size}x3, nb_samples={nb_samples}, "
          f"batch_size={batch_size}, {n * nb_samples} perturbed inputs, best of {repeats}")
    print(f"  floor (bare forward passes) {t_floor:8.3f} s")
    print(f"  xplique_ext MuFidelity      {t_ours:8.3f} s")
    print(f"  xplique MuFidelity          {t_xplique:8.3f} s")
    print(f"  ratio ours / floor     = {t_ours / t_floor:5.2f}   (target <= 1.3)")
    print(f"  ratio xplique / ours   = {t_xplique / t_ours:5.2f}   (target >= 2)")
    print(f"  ratio xplique / floor  = {t_xplique / t_floor:5.2f}")
    return t_ours / t_floor, t_xplique / t_ours


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
    metric = MuFidelity(model, ds, None, batch_size=64, nb_samples=nb_samples, seed=0,
                        progress=False)
    metric.detailed_evaluate(phi)
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"n": n, "peak_mib": peak_mib, "explanations_mib": phi.nbytes / 2**20}))


def memory(nb_samples):
    rows = {}
    for n in (100, 1000):
        out = subprocess.run(
            [sys.executable, __file__, "--memory-child", str(n), "--nb-samples", str(nb_samples)],
            check=True, capture_output=True, text=True,
        ).stdout.strip().splitlines()[-1]
        rows[n] = json.loads(out)
    net = {n: r["peak_mib"] - r["explanations_mib"] for n, r in rows.items()}
    print(f"memory case: inputs 224x224x3 streamed from a tf.data.Dataset, batch_size=64, "
          f"nb_samples={nb_samples}")
    for n, r in rows.items():
        print(f"  N={n:5d}: peak RSS {r['peak_mib']:8.1f} MiB, explanations "
              f"{r['explanations_mib']:7.1f} MiB, net {net[n]:8.1f} MiB")
    ratio = net[1000] / net[100]
    print(f"  ratio net(1000) / net(100) = {ratio:5.2f}   (target <= 1.25)")
    return ratio


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller cases")
    parser.add_argument("--memory-child", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--nb-samples", type=int, default=10, help=argparse.SUPPRESS)
    parser.add_argument("--skip-memory", action="store_true")
    args = parser.parse_args()
    if args.memory_child is not None:
        memory_child(args.memory_child, args.nb_samples)
        return
    if args.quick:
        speed(n=8, nb_samples=100, repeats=1)
    else:
        speed()
    if not args.skip_memory:
        memory(nb_samples=4 if args.quick else 10)


if __name__ == "__main__":
    main()
