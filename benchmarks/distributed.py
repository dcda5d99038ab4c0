"""MuFidelity on tf.distribute: one device against several replicas, in one run.

Run: ``python benchmarks/distributed.py`` (``--quick`` for a smaller case).

Case (the MuFidelity speed case of ``benchmarks/mufidelity.py``): a small Keras CNN, 32
images of 64x64x3, nb_samples=200, batch_size=256, on CPU.

(i) one process, the CPU split into 2 logical devices
    (``tf.config.set_logical_device_configuration``): MuFidelity on one device (default
    strategy) against ``MirroredStrategy`` over the 2 logical devices. Printed: the times,
    whether the scores are equal, and the ratio 2 replicas / 1 device (target <= 1.3 on a
    2-core machine: both logical devices share the same cores, so the target is the
    overhead of distributing, not a speed-up).
(ii) ``MultiWorkerMirroredStrategy`` with two worker processes on this machine (TF_CONFIG
    with two localhost ports), each with one CPU device; compared with one process on one
    device. Every process is bounded by a timeout and killed if it overruns. Printed: the
    times, equality of the scores (on both workers) and the ratio.

On a GPU machine (``--gpu``), (i) compares one GPU with MirroredStrategy over every GPU.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TIMEOUT_S = 600


def small_cnn(shape, classes=10):
    """The CNN of benchmarks/mufidelity.py, with seeded initialisers so that every
    process builds the same weights."""
    import keras

    init = keras.initializers.GlorotUniform(seed=0)
    return keras.Sequential(
        [
            keras.Input(shape),
            keras.layers.Conv2D(16, 3, activation="relu", kernel_initializer=init),
            keras.layers.MaxPooling2D(2),
            keras.layers.Conv2D(32, 3, activation="relu", kernel_initializer=init),
            keras.layers.MaxPooling2D(2),
            keras.layers.Flatten(),
            keras.layers.Dense(classes, kernel_initializer=init),
        ]
    )


def case(quick):
    n, size, nb_samples = (8, 64, 100) if quick else (32, 64, 200)
    rng = np.random.default_rng(0)
    x = rng.random((n, size, size, 3), dtype=np.float32)
    y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, n)]
    phi = rng.random((n, size, size), dtype=np.float32)
    return x, y, phi, dict(nb_samples=nb_samples, batch_size=256, seed=0, progress=False)


def best_of(fn, repeats):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def timed_scores(strategy, quick, repeats):
    from xplique_ext.metrics import MuFidelity

    x, y, phi, options = case(quick)
    if strategy is None:
        model = small_cnn(x.shape[1:])
        metric = MuFidelity(model, x, y, **options)
    else:
        with strategy.scope():
            model = small_cnn(x.shape[1:])
            metric = MuFidelity(model, x, y, **options)
    scores = metric.detailed_evaluate(phi)  # warm-up: tracing and XLA compilation
    seconds = best_of(lambda: metric.detailed_evaluate(phi), repeats)
    return scores, seconds, len(x) * options["nb_samples"]


# --------------------------------------------------------------------------- (i)
def mirrored(quick, repeats, gpu):
    import tensorflow as tf

    if gpu:
        devices = [d.name for d in tf.config.list_logical_devices("GPU")]
        if not devices:
            raise SystemExit("--gpu: TensorFlow sees no GPU on this machine")
        label = f"{len(devices)} GPU(s)"
    else:
        cpu = tf.config.list_physical_devices("CPU")[0]
        tf.config.set_logical_device_configuration(
            cpu, [tf.config.LogicalDeviceConfiguration()] * 2
        )
        devices = [d.name for d in tf.config.list_logical_devices("CPU")]
        label = "2 logical CPU devices"
    one, t_one, perts = timed_scores(None, quick, repeats)
    strategy = tf.distribute.MirroredStrategy(devices)
    many, t_many, _ = timed_scores(strategy, quick, repeats)
    equal = np.array_equal(one, many)
    gap = float(np.max(np.abs(one - many)))
    print(
        f"(i) MirroredStrategy over {label} {devices}, {perts} perturbed inputs, best of {repeats}"
    )
    print(f"  1 device (default strategy)  {t_one:8.3f} s   {perts / t_one:9.0f} inputs/s")
    print(
        f"  {strategy.num_replicas_in_sync} replicas (MirroredStrategy) {t_many:8.3f} s   "
        f"{perts / t_many:9.0f} inputs/s"
    )
    print(f"  scores equal: {equal} (max |difference| {gap:.2e})")
    print(
        f"  ratio {strategy.num_replicas_in_sync} replicas / 1 device = "
        f"{t_many / t_one:5.2f}   (target <= 1.3 with 2 logical CPU devices)"
    )
    return t_many / t_one, equal


# --------------------------------------------------------------------------- (ii)
def worker(quick, repeats):
    """One process of the multi-worker case (TF_CONFIG set by the parent)."""
    import tensorflow as tf

    options = tf.distribute.experimental.CommunicationOptions(timeout_seconds=120)
    strategy = tf.distribute.MultiWorkerMirroredStrategy(communication_options=options)
    scores, seconds, perts = timed_scores(strategy, quick, repeats)
    print(
        json.dumps(
            {
                "scores": scores.tolist(),
                "seconds": seconds,
                "perts": perts,
                "replicas": strategy.num_replicas_in_sync,
            }
        )
    )


def single(quick, repeats):
    """One process, one device: the reference of the multi-worker case."""
    scores, seconds, perts = timed_scores(None, quick, repeats)
    print(json.dumps({"scores": scores.tolist(), "seconds": seconds, "perts": perts}))


def free_ports(k):
    socks = [socket.socket() for _ in range(k)]
    for s in socks:
        s.bind(("localhost", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def child_env(extra=None):
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    env["CUDA_VISIBLE_DEVICES"] = (
        "" if "--gpu" not in sys.argv else env.get("CUDA_VISIBLE_DEVICES", "")
    )
    env.update(extra or {})
    return env


def last_json(text):
    return json.loads(text.strip().splitlines()[-1])


def run_bounded(procs, timeout):
    """Wait for every process until ``timeout``; kill them all on overrun."""
    deadline = time.monotonic() + timeout
    outs = []
    try:
        for p in procs:
            out, err = p.communicate(timeout=max(1.0, deadline - time.monotonic()))
            if p.returncode != 0:
                raise RuntimeError(f"worker failed ({p.returncode}):\n{err[-3000:]}")
            outs.append(out)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    return outs


def multi_worker(quick, repeats, timeout):
    args = [sys.executable, os.path.abspath(__file__), "--repeats", str(repeats)]
    if quick:
        args.append("--quick")
    ref = run_bounded(
        [
            subprocess.Popen(
                args + ["--single"],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=child_env(),
            )
        ],
        timeout,
    )[0]
    ref = last_json(ref)
    ports = free_ports(2)
    cluster = {"worker": [f"localhost:{p}" for p in ports]}
    procs = []
    for index in range(2):
        tf_config = json.dumps({"cluster": cluster, "task": {"type": "worker", "index": index}})
        procs.append(
            subprocess.Popen(
                args + ["--worker"],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=child_env({"TF_CONFIG": tf_config}),
            )
        )
    outs = [last_json(o) for o in run_bounded(procs, timeout)]
    expected = np.asarray(ref["scores"])
    equal = all(np.array_equal(np.asarray(o["scores"]), expected) for o in outs)
    gap = max(float(np.max(np.abs(np.asarray(o["scores"]) - expected))) for o in outs)
    t_one, t_many = ref["seconds"], max(o["seconds"] for o in outs)
    perts = ref["perts"]
    print(
        f"(ii) MultiWorkerMirroredStrategy, 2 worker processes on localhost "
        f"(TF_CONFIG cluster {cluster['worker']}), {outs[0]['replicas']} replicas, "
        f"best of {repeats}"
    )
    print(f"  1 process, 1 device          {t_one:8.3f} s   {perts / t_one:9.0f} inputs/s")
    print(f"  2 workers                    {t_many:8.3f} s   {perts / t_many:9.0f} inputs/s")
    print(f"  scores equal on both workers: {equal} (max |difference| {gap:.2e})")
    print(
        f"  ratio 2 workers / 1 process = {t_many / t_one:5.2f}   (2 processes share the 2 "
        "cores here; on 2 hosts the ratio is the speed-up's inverse)"
    )
    return t_many / t_one, equal


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smaller case")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--gpu", action="store_true", help="(i) on the GPUs")
    parser.add_argument("--skip-multi-worker", action="store_true")
    parser.add_argument(
        "--timeout",
        type=float,
        default=TIMEOUT_S,
        help="seconds before the worker processes are killed",
    )
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--single", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.quick, args.repeats)
        return
    if args.single:
        single(args.quick, args.repeats)
        return
    sys.path.insert(0, ROOT)
    if not args.gpu:
        os.environ["CUDA_VISIBLE_DEVICES"] = ""
    mirrored(args.quick, args.repeats, args.gpu)
    if not args.skip_multi_worker:
        multi_worker(args.quick, args.repeats, args.timeout)


if __name__ == "__main__":
    main()
