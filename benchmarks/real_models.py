"""MuFidelity on real-size image models: keras.applications MobileNetV2 and ResNet50 at
224x224x3, against the Keras ``predict`` floor and Xplique's MuFidelity, cold and warm, and
peak memory against ``batch_size``.

Run: ``python benchmarks/real_models.py`` (defaults: 8 images, nb_samples=50,
batch_size=64, both models, ``--weights auto``). On a shared machine:
``nice -n 10 python benchmarks/real_models.py``.

The images are photographs shipped with scikit-image (``skimage.data``: astronaut, cat,
coffee, rocket, ...) resized to 224x224 and preprocessed as each model expects; the
explanations are random maps (their content does not change the work).

Time (one table, one run). For each model, three timed paths over the *same* forward
passes, ``N`` unperturbed inputs plus ``N * nb_samples`` perturbed ones, all at
``batch_size``:

- **floor**: ``model.predict`` on the ``N * nb_samples`` perturbed inputs (built
  beforehand, not timed) plus ``model.predict`` on the ``N`` inputs;
- **forward**: the same forward passes through ``tf.function(model)`` called batch by
  batch, a stricter floor than Keras' ``predict`` (no data pipeline, no callbacks; Keras
  may also compile ``predict`` with XLA);
- **ours**: ``xplique_ext.metrics.MuFidelity(...).evaluate(phi)`` (builds the perturbed
  inputs itself, and correlates);
- **xplique**: ``xplique.metrics.MuFidelity(...).evaluate(phi)`` with the same settings.

Each path runs in its own fresh process (no path inherits another's traced graphs or
kernel caches). *Cold* is its first call, tracing and compilation included (for the two
metrics, the first call includes building the metric: Xplique's constructor already runs
the model on the unperturbed inputs); *warm* the
best of ``--repeats`` later calls. Each process first warms TensorFlow up on an unrelated
small model, so that no path pays the process's own start-up, and finds the class to
explain (the model's top class) with a twin of the model, so that the timed model has
never run before its cold call. Ratios: ours / floor (targets: warm <= 1.1, cold <= 1.3) and xplique / floor.

Memory. ``python benchmarks/real_models.py`` also runs MuFidelity in a fresh process per
(``batch_size``, number of inputs) pair and reports the peak resident set size (RSS)
during ``detailed_evaluate``, sampled every 2 ms with ``psutil`` from a thread, minus the
RSS just before the call (the model, the inputs and the explanations are already in
memory then). It must grow with ``batch_size`` and stay flat in the number of inputs.

Weights: ``--weights none`` (random initialisation, offline), ``imagenet`` (downloads the
file once into ``~/.keras/models``) or ``auto`` (imagenet when the file is there or can be
downloaded, else none). The weights do not change the time.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import threading
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402

MODELS = {
    "mobilenetv2": ("MobileNetV2", "mobilenet_v2"),
    "resnet50": ("ResNet50", "resnet50"),
}
PHOTOS = (
    "astronaut",
    "chelsea",
    "coffee",
    "rocket",
    "immunohistochemistry",
    "hubble_deep_field",
    "colorwheel",
    "logo",
)


# ------------------------------------------------------------------------ inputs
def photographs(n: int, size: int = 224) -> np.ndarray:
    """``n`` RGB photographs of skimage.data resized to ``size`` x ``size`` (0-255 float32),
    cycling through :data:`PHOTOS` (mirrored on later cycles so that no two are equal)."""
    import skimage.data
    from skimage.transform import resize

    images = []
    for i in range(n):
        img = getattr(skimage.data, PHOTOS[i % len(PHOTOS)])()[..., :3]
        img = resize(img, (size, size), anti_aliasing=True, preserve_range=True)
        if (i // len(PHOTOS)) % 2:
            img = img[:, ::-1]
        images.append(img.astype(np.float32))
    return np.stack(images)


def build(name: str, weights: str):
    """``keras.applications`` model ``name`` (224x224x3, 1000 classes, logits out: with
    random weights the softmax saturates and every score drop is 0) and its
    ``preprocess_input``; ``weights``: 'imagenet' or None."""
    import keras

    cls_name, module = MODELS[name]
    cls = getattr(keras.applications, cls_name)
    preprocess = getattr(keras.applications, module).preprocess_input
    model = cls(weights=weights, input_shape=(224, 224, 3), classifier_activation=None)
    return model, preprocess


def resolve_weights(requested: str, name: str) -> str | None:
    """'imagenet' when asked for (or, for 'auto', when the file can be had), else None."""
    if requested == "none":
        return None
    if requested == "imagenet":
        return "imagenet"
    try:  # auto: a download attempt (quick failure offline)
        build(name, "imagenet")
        return "imagenet"
    except Exception as err:  # noqa: BLE001 - any failure means: no weights here
        print(
            f"  {name}: imagenet weights unavailable ({type(err).__name__}); using weights=None",
            flush=True,
        )
        return None


# ------------------------------------------------------------------------ timing
def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def perturbed_copies(x, nb_samples, grid_size, subset_percent, seed):
    """The perturbed inputs of MuFidelity, built outside the timings (for the floor)."""
    rng = np.random.default_rng(seed)
    n, h, w, _ = x.shape
    rows = np.minimum(np.arange(h) * grid_size // h, grid_size - 1)
    cols = np.minimum(np.arange(w) * grid_size // w, grid_size - 1)
    masks = rng.random((n, nb_samples, grid_size, grid_size)) < subset_percent
    pixel = masks[:, :, rows][:, :, :, cols]  # (n, s, h, w)
    out = np.repeat(x[:, None], nb_samples, axis=1)
    out[pixel] = 0.0
    return out.reshape(-1, h, w, x.shape[-1])


def speed_child(name, weights, path, n, nb_samples, batch_size, repeats, grid_size=9):
    """In a fresh process: cold and warm time of one path (floor, forward, ours or
    xplique)."""
    from xplique.metrics import MuFidelity as XpliqueMuFidelity

    from xplique_ext.metrics import MuFidelity

    warm_up_tensorflow()
    import keras

    keras.utils.set_random_seed(0)  # the same random weights in every path's process
    model, preprocess = build(name, weights)
    x = preprocess(photographs(n))
    # the class explained: the top class of the model (computed with NumPy-side weights
    # copied into a twin model, so that the timed model has never run)
    twin = keras.models.clone_model(model)
    twin.set_weights(model.get_weights())
    logits = np.concatenate([np.asarray(twin(x[i : i + 1], training=False)) for i in range(n)])
    del twin
    y = np.eye(logits.shape[-1], dtype=np.float32)[logits.argmax(-1)]
    phi = np.random.default_rng(0).random((n, 224, 224), dtype=np.float32)
    settings = dict(
        batch_size=batch_size,
        grid_size=grid_size,
        subset_percent=0.2,
        baseline_mode=0.0,
        nb_samples=nb_samples,
    )
    if path == "floor":
        perturbed = perturbed_copies(x, nb_samples, grid_size, 0.2, seed=0)

        def fn():
            model.predict(x, batch_size=batch_size, verbose=0)
            model.predict(perturbed, batch_size=batch_size, verbose=0)
    elif path == "forward":
        import tensorflow as tf

        perturbed = perturbed_copies(x, nb_samples, grid_size, 0.2, seed=0)
        forward = tf.function(lambda b: model(b, training=False), reduce_retracing=True)

        def fn():
            forward(tf.constant(x)).numpy()
            for start in range(0, len(perturbed), batch_size):
                forward(tf.constant(perturbed[start : start + batch_size])).numpy()
    elif path == "ours":
        state = {}

        def fn():  # the first call also builds the metric (construction counts as cold)
            if "metric" not in state:
                state["metric"] = MuFidelity(model, x, y, seed=0, progress=False, **settings)
            return state["metric"].evaluate(phi)
    else:
        state = {}

        def fn():  # Xplique scores the unperturbed inputs in its constructor: cold includes it
            if "metric" not in state:
                state["metric"] = XpliqueMuFidelity(model, x, y, **settings)
            return state["metric"].evaluate(phi)

    cold, score = timed(fn)
    warm = min(timed(fn)[0] for _ in range(repeats))
    print(
        json.dumps({"cold": cold, "warm": warm, "score": None if score is None else float(score)})
    )


def speed(name, weights, n, nb_samples, batch_size, repeats):
    rows = {}
    for path in ("floor", "forward", "ours", "xplique"):
        out = (
            subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--speed-child",
                    name,
                    str(weights),
                    path,
                    "--n",
                    str(n),
                    "--nb-samples",
                    str(nb_samples),
                    "--batch-size",
                    str(batch_size),
                    "--repeats",
                    str(repeats),
                ],
                check=True,
                capture_output=True,
                text=True,
            )
            .stdout.strip()
            .splitlines()[-1]
        )
        rows[path] = json.loads(out)
        print(
            f"  {name:12s} {path:8s} cold {rows[path]['cold']:7.2f} s  "
            f"warm {rows[path]['warm']:7.2f} s",
            flush=True,
        )
    return rows


def warm_up_tensorflow():
    """Pay TensorFlow's process start-up (thread pools, oneDNN, first graph) on a tiny
    unrelated model, so that no timed path pays it."""
    import keras

    tiny = keras.Sequential(
        [
            keras.Input((8, 8, 3)),
            keras.layers.Conv2D(2, 3),
            keras.layers.GlobalAveragePooling2D(),
            keras.layers.Dense(2),
        ]
    )
    tiny.predict(np.zeros((4, 8, 8, 3), np.float32), verbose=0)


# ------------------------------------------------------------------------ memory
class PeakRSS:
    """Peak resident set size of this process while in the ``with`` block, sampled every
    ``interval`` seconds by psutil from a thread (bytes)."""

    def __init__(self, interval: float = 0.002):
        import psutil

        self.process = psutil.Process()
        self.interval = interval
        self.peak = 0
        self.before = 0
        self._stop = threading.Event()

    def _poll(self):
        while not self._stop.is_set():
            self.peak = max(self.peak, self.process.memory_info().rss)
            time.sleep(self.interval)

    def __enter__(self):
        self.before = self.process.memory_info().rss
        self.peak = self.before
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self.process.memory_info().rss)


def memory_child(name, n, nb_samples, batch_size):
    """In a fresh process: working memory of one ``detailed_evaluate``."""
    import keras

    from xplique_ext.metrics import MuFidelity

    keras.utils.set_random_seed(0)
    model, preprocess = build(name, None)
    x = preprocess(photographs(n))
    phi = np.random.default_rng(0).random((n, 224, 224), dtype=np.float32)
    metric = MuFidelity(
        model, x, None, batch_size=batch_size, nb_samples=nb_samples, seed=0, progress=False
    )
    with PeakRSS() as rss:
        metric.detailed_evaluate(phi)
    print(
        json.dumps(
            {
                "n": n,
                "batch_size": batch_size,
                "extra_mib": (rss.peak - rss.before) / 2**20,
                "batch_mib": batch_size * 224 * 224 * 3 * 4 / 2**20,
            }
        )
    )


def memory(name, inputs, batch_sizes, nb_samples):
    if min(inputs) * nb_samples < max(batch_sizes):
        print(
            f"  note: {min(inputs)} inputs x {nb_samples} samples is less than batch_size="
            f"{max(batch_sizes)}: that cell's perturbation batches are smaller than "
            "batch_size",
            flush=True,
        )
    rows = []
    for batch_size in batch_sizes:
        for n in inputs:
            out = (
                subprocess.run(
                    [
                        sys.executable,
                        __file__,
                        "--memory-child",
                        name,
                        str(n),
                        str(batch_size),
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
            row = json.loads(out)
            rows.append(row)
            print(
                f"  memory {name} batch_size={batch_size:4d} inputs={n:4d}: "
                f"+{row['extra_mib']:8.1f} MiB",
                flush=True,
            )
    return rows


# ------------------------------------------------------------------------ report
def report(results, memory_rows, args, weights_used, cases, load_before, load_after):
    print()
    print(
        f"MuFidelity at 224x224x3 on photographs (skimage.data), batch_size="
        f"{args.batch_size}, grid_size=9, images x (nb_samples + 1) forward passes per "
        f"call; cold = first call in a fresh process, warm = best of {args.repeats}"
    )
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
        f"load average before {load_before}, after {load_after}"
    )
    header = (
        "| model (weights) | images x samples | path | cold (s) | warm (s) | "
        "cold / floor | warm / floor | score |"
    )
    print(header)
    print("|---|---|---|---:|---:|---:|---:|---:|")
    verdicts = []
    for name, rows in results.items():
        floor = rows["floor"]
        for label in ("floor", "forward", "ours", "xplique"):
            r = rows[label]
            score = "" if r["score"] is None else f"{r['score']:.3f}"
            n_, s_ = cases[name]
            print(
                f"| {MODELS[name][0]} ({weights_used[name] or 'random'}) | {n_} x {s_} | "
                f"{label} | "
                f"{r['cold']:.2f} | {r['warm']:.2f} | {r['cold'] / floor['cold']:.2f} | "
                f"{r['warm'] / floor['warm']:.2f} | {score} |"
            )
        cold = rows["ours"]["cold"] / floor["cold"]
        warm = rows["ours"]["warm"] / floor["warm"]
        fwd = rows["forward"]
        verdicts.append(
            f"{MODELS[name][0]}: ours/floor warm {warm:.2f} (target <= 1.1: "
            f"{'met' if warm <= 1.1 else 'MISSED'}), cold {cold:.2f} (target <= 1.3: "
            f"{'met' if cold <= 1.3 else 'MISSED'}); against the bare compiled forward: "
            f"warm {rows['ours']['warm'] / fwd['warm']:.2f}, cold "
            f"{rows['ours']['cold'] / fwd['cold']:.2f}"
        )
    print()
    for line in verdicts:
        print(line)
    if memory_rows:
        print()
        print(
            f"Working memory of detailed_evaluate ({args.memory_model}, nb_samples="
            f"{args.memory_nb_samples}): peak RSS during the call (psutil, sampled every "
            "2 ms) minus RSS before it, MiB; one fresh process per cell"
        )
        inputs = sorted({r["n"] for r in memory_rows})
        print(
            "| batch_size | one batch of inputs (MiB) | "
            + " | ".join(f"{k} inputs" for k in inputs)
            + " |"
        )
        print("|---:|---:|" + "---:|" * len(inputs))
        for bs_ in sorted({r["batch_size"] for r in memory_rows}):
            cells = {r["n"]: r["extra_mib"] for r in memory_rows if r["batch_size"] == bs_}
            batch_mib = bs_ * 224 * 224 * 3 * 4 / 2**20
            print(
                f"| {bs_} | {batch_mib:.1f} | "
                + " | ".join(f"{cells[k]:.0f}" for k in inputs)
                + " |"
            )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    parser.add_argument("--weights", choices=("auto", "none", "imagenet"), default="auto")
    parser.add_argument("--n", type=int, default=8, help="images explained (default 8)")
    parser.add_argument("--nb-samples", type=int, default=50)
    parser.add_argument(
        "--case",
        action="append",
        default=[],
        metavar="MODEL:N:SAMPLES",
        help="other sizes for one model, e.g. resnet50:2:20 (repeatable)",
    )
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=2, help="warm calls (best kept)")
    parser.add_argument("--memory-model", default="mobilenetv2", choices=list(MODELS))
    parser.add_argument("--memory-batch-sizes", type=int, nargs="+", default=[16, 64])
    parser.add_argument("--memory-inputs", type=int, nargs="+", default=[8, 32])
    parser.add_argument("--memory-nb-samples", type=int, default=20)
    parser.add_argument("--skip-memory", action="store_true")
    parser.add_argument("--skip-speed", action="store_true")
    parser.add_argument("--memory-child", nargs=3, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--speed-child", nargs=3, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.speed_child is not None:
        name, weights, path = args.speed_child
        speed_child(
            name,
            None if weights == "None" else weights,
            path,
            args.n,
            args.nb_samples,
            args.batch_size,
            args.repeats,
        )
        return 0
    if args.memory_child is not None:
        name, n, bs = args.memory_child
        memory_child(name, int(n), args.nb_samples, int(bs))
        return 0
    cases = {name: (args.n, args.nb_samples) for name in args.models}
    for case in args.case:
        try:
            name, n, samples = case.split(":")
            cases[name] = (int(n), int(samples))
        except ValueError:
            parser.error(f"--case must be MODEL:N:SAMPLES, got {case!r}")
        if name not in MODELS:
            parser.error(f"--case: unknown model {name!r} (one of {', '.join(MODELS)})")
    load_before = ", ".join(f"{v:.2f}" for v in os.getloadavg())
    results, weights_used = {}, {}
    if not args.skip_speed:
        for name in args.models:
            weights_used[name] = resolve_weights(args.weights, name)
            results[name] = speed(
                name, weights_used[name], *cases[name], args.batch_size, args.repeats
            )
    memory_rows = (
        []
        if args.skip_memory
        else memory(
            args.memory_model, args.memory_inputs, args.memory_batch_sizes, args.memory_nb_samples
        )
    )
    load_after = ", ".join(f"{v:.2f}" for v in os.getloadavg())
    report(results, memory_rows, args, weights_used, cases, load_before, load_after)
    return 0


if __name__ == "__main__":
    sys.exit(main())
