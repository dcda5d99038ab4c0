"""Benchmark of the rule evaluation .

Times :func:`xplique_ext.rules.evaluate_rules` on 100 random rules over 1,000,000 examples of
mixed nominal and numeric attributes with 1% unknown values, in the three modes, and
compares it with a per-example loop that implements Algorithms 1-3 of the report
(``evaluate_rules_loop`` of ``tests/rules/rules_reference.py``, the tests' oracle), measured
in the same run. The loop is timed on a random subsample and extrapolated linearly to the
full size (it is linear in the number of examples); the output says so. Its counts on the subsample are checked
against the vectorised ones.

Targets: unordered <= 1 s, ordered <= 2 s, and >= 100x faster than the loop.

Files and scaling out, each case in a fresh process that reports its own time and
peak resident memory (``VmHWM``); the files are generated once into ``--workdir`` (default
``/tmp/xplique_ext_rules_bench``), never into the repository:

- ``cli``: ``xplique-ext rules`` end to end (process start, reading, evaluation, printing),
  100 rules x 1,000,000 rows, 1% unknown. Targets <= 2 s (7.5-8.6 s with the row-by-row
  parser) and <= 2x a process that only reads the file with ``pd.read_csv``:
  medians of ``--cli-repeats`` (7) runs of each, in turn, judged on the command's CPU time
  when the load average is above the number of cores (the wall-clock time then counts the
  other jobs' time too).
- ``read``: ``read_data`` on a ``--read-mb`` (200) MB file. Targets <= 15 s and a peak
  below 2x the file size (114 s and 29x before).
- ``chunks``: ``xplique-ext rules -u --chunksize 1000000`` on a ``--big-mb`` (2,000) MB
  file. Targets: peak RSS <= 1 GB and a time per row <= 3x the in-memory rate per row
  (``xplique-ext rules`` on the ``read`` file).
- ``dask``: ``xplique-ext rules -u --dask ADDRESS`` on the same file, with a LocalCluster
  of 2 worker processes started by the benchmark: completes with the same output (counts)
  as ``chunks``; time recorded.

Run: ``python benchmarks/rules.py`` (``--help`` for sizes and ``--cases``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

from xplique_ext.rules import (
    Attribute,
    Column,
    Condition,
    Dataset,
    Names,
    Rule,
    RuleSet,
    evaluate_rules,
)

CLASSES = ("c0", "c1", "c2")


def _reference_loop():
    """The tests' oracle, ``tests/rules/rules_reference.py`` (not part of the package)."""
    import importlib.util

    path = os.path.join(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
        "tests",
        "rules",
        "rules_reference.py",
    )
    spec = importlib.util.spec_from_file_location("rules_reference", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # by path: another installed `tests` package may shadow ours
    return module.evaluate_rules_loop


def make_data(n: int, rng: np.random.Generator, unknown_rate: float) -> Dataset:
    attributes, columns = [], {}
    for k in range(6):
        size = 3 + k
        attribute = Attribute(f"nom{k}", "nominal", tuple(f"v{j}" for j in range(size)))
        codes = rng.integers(0, size, n).astype(np.int8)
        unknown = rng.random(n) < unknown_rate
        codes[unknown] = -1
        attributes.append(attribute)
        columns[attribute.name] = Column(
            attribute, codes, attribute.values, unknown, np.zeros(n, dtype=bool)
        )
    for k in range(6):
        attribute = Attribute(f"num{k}", "real")
        values = rng.normal(0.0, 1.0, n)
        unknown = rng.random(n) < unknown_rate
        values[unknown] = np.nan
        attributes.append(attribute)
        columns[attribute.name] = Column(attribute, values, None, unknown, np.zeros(n, dtype=bool))
    label = Attribute("class", "nominal", CLASSES)
    attributes.append(label)
    columns["class"] = Column(
        label,
        rng.integers(0, len(CLASSES), n).astype(np.int8),
        CLASSES,
        np.zeros(n, dtype=bool),
        np.zeros(n, dtype=bool),
    )
    return Dataset(Names(attributes, "class"), columns, file="<synthetic>")


def make_rules(n_rules: int, rng: np.random.Generator) -> RuleSet:
    rules = []
    for k in range(n_rules):
        conditions = []
        for _ in range(rng.integers(1, 5)):
            if rng.random() < 0.5:
                j = int(rng.integers(0, 6))
                values = [f"v{v}" for v in range(3 + j)]
                kind = rng.random()
                if kind < 0.5:
                    conditions.append(Condition(f"nom{j}", "=", str(rng.choice(values))))
                elif kind < 0.75:
                    conditions.append(Condition(f"nom{j}", "!=", str(rng.choice(values))))
                else:
                    chosen = tuple(rng.choice(values, size=2, replace=False).tolist())
                    conditions.append(Condition(f"nom{j}", "in", chosen))
            else:
                j = int(rng.integers(0, 6))
                op = str(rng.choice(["<", "<=", ">", ">="]))
                conditions.append(Condition(f"num{j}", op, f"{rng.normal(0.0, 0.7):.3f}"))
        rules.append(Rule(f"R{k + 1:04d}", (tuple(conditions),), str(rng.choice(CLASSES))))
    # sort by head so that inter-class blocks are non-trivial
    rules.sort(key=lambda r: r.head)
    rules = [Rule(f"R{k + 1:04d}", r.body, r.head) for k, r in enumerate(rules)]
    rules.append(Rule(f"R{n_rules + 1:04d}", (), CLASSES[0], is_default=True))
    return RuleSet(rules)


def best_time(function, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def evaluate_case(args) -> bool:
    """The vectorised evaluation against the per-example loop."""
    rng = np.random.default_rng(args.seed)
    start = time.perf_counter()
    data = make_data(args.examples, rng, args.unknown_rate)
    rules = make_rules(args.rules, rng)
    built = time.perf_counter() - start
    subsample = np.sort(
        rng.choice(args.examples, size=min(args.loop_examples, args.examples), replace=False)
    )
    small = data.take(subsample)
    scale = args.examples / small.n_examples
    unknown_share = np.mean([c.unknown.mean() for n, c in data.columns.items() if n != "class"])
    print(
        f"rules benchmark: {args.rules} rules x {args.examples:,} examples, 6 nominal + 6 "
        f"numeric attributes, {100 * unknown_share:.2f}% unknown values (data built in "
        f"{built:.1f} s)"
    )
    print(
        f"vectorised: best of {args.repeats} runs after a warm-up; per-example loop "
        f"(Algorithms 1-3): timed on {small.n_examples:,} random examples and extrapolated "
        f"x{scale:,.0f} to {args.examples:,}"
    )
    print(
        f"{'mode':<12} {'vectorised (s)':>15} {'target (s)':>11} {'loop est. (s)':>14} "
        f"{'speed-up':>9}  verdict"
    )
    targets = {"unordered": 1.0, "ordered": 2.0, "inter-class": 2.0}
    ok = True
    evaluate_rules_loop = _reference_loop()
    for mode in ("unordered", "ordered", "inter-class"):
        evaluate_rules(rules, data, mode)  # warm-up
        fast = best_time(lambda mode=mode: evaluate_rules(rules, data, mode), args.repeats)
        start = time.perf_counter()
        loop_result = evaluate_rules_loop(rules, small, mode)
        loop = (time.perf_counter() - start) * scale
        check = evaluate_rules(rules, small, mode)
        if not (check.known == loop_result.known and check.unknown == loop_result.unknown):
            raise SystemExit(f"{mode}: the loop and the vectorised counts differ")
        ratio = loop / fast
        passed = fast <= targets[mode] and ratio >= 100
        ok &= passed
        print(
            f"{mode:<12} {fast:>15.3f} {targets[mode]:>11.1f} {loop:>14.1f} {ratio:>8.0f}x  "
            f"{'ok' if passed else 'MISSED'}"
        )
    print(
        "targets: unordered <= 1 s, ordered <= 2 s (inter-class: same as ordered), "
        ">= 100x the per-example loop; counts of both agree on the subsample"
    )
    return ok


# -- files, chunks and Dask -------------------------------------------------------------
def names_text() -> str:
    lines = ["class.", ""]
    lines += [f"nom{k}: {', '.join(f'v{j}' for j in range(3 + k))}." for k in range(6)]
    lines += [f"num{k}: real." for k in range(6)]
    lines.append(f"class: {', '.join(CLASSES)}.")
    return "\n".join(lines) + "\n"


def random_lines(n: int, rng: np.random.Generator, unknown_rate: float) -> np.ndarray:
    """``n`` random rows of the table of :func:`make_data`, as ``.data`` lines."""
    columns = []
    for k in range(6):
        values = np.array([f"v{j}" for j in range(3 + k)], dtype=object)
        values = values[rng.integers(0, 3 + k, n)]
        values[rng.random(n) < unknown_rate] = "?"
        columns.append(values)
    for _ in range(6):
        values = np.char.mod("%.3f", rng.normal(0.0, 1.0, n)).astype(object)
        values[rng.random(n) < unknown_rate] = "?"
        columns.append(values)
    columns.append(np.array(CLASSES, dtype=object)[rng.integers(0, len(CLASSES), n)])
    lines = columns[0]
    for column in columns[1:]:
        lines = lines + "," + column
    return lines


def data_file(folder: str, name: str, *, rows=None, megabytes=None, seed=0, unknown_rate=0.01):
    """A ``.data`` file (and its ``.names``) of ``rows`` rows or about ``megabytes`` MB,
    generated once and reused: the first 1,000,000 rows are random, the next ones are drawn
    at random from them (with the same distribution, and fast to write)."""
    path = os.path.join(folder, name + ".data")
    tag = f"{rows}-{megabytes}-{seed}-{unknown_rate}"
    marker = path + ".done"
    if not (os.path.exists(marker) and open(marker).read() == tag):
        rng = np.random.default_rng(seed)
        start = time.perf_counter()
        pool = None
        with open(path, "wb") as handle:
            done = 0
            while True:
                if rows is not None:
                    if done >= rows:
                        break
                    n = min(200_000, rows - done)
                else:
                    if handle.tell() >= megabytes * 1e6:
                        break
                    n = 200_000
                if done < 1_000_000:
                    lines = random_lines(n, rng, unknown_rate)
                    pool = lines if pool is None else np.concatenate([pool, lines])
                else:
                    lines = pool[rng.integers(0, len(pool), n)]
                handle.write(("\n".join(lines.tolist()) + "\n").encode())
                done += n
        with open(marker, "w") as handle:
            handle.write(tag)
        print(
            f"  (generated {path}: {os.path.getsize(path) / 1e6:,.0f} MB in "
            f"{time.perf_counter() - start:.0f} s)"
        )
    with open(os.path.join(folder, name + ".names"), "w") as handle:
        handle.write(names_text())
    return path


def count_rows(path: str) -> int:
    with open(path, "rb") as handle:
        return sum(block.count(b"\n") for block in iter(lambda: handle.read(1 << 24), b""))


RUNNER = """
import json, sys, time
start = time.perf_counter()
def peak():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return float("nan")
report = {}
if sys.argv[1] == "cli":
    from xplique_ext.cli import main
    report["code"] = main(sys.argv[3:])
elif sys.argv[1] == "pandas":  # the yardstick: a process that only reads the file
    import pandas as pd
    report["rows"] = len(pd.read_csv(sys.argv[3], header=None))
else:
    import psutil
    from xplique_ext.rules import read_data, read_names, example_path
    read_data(example_path("voyage.test"))
    names = read_names(sys.argv[3])
    with open("/proc/self/clear_refs", "w") as handle:
        handle.write("5")
    report["rss_before"] = psutil.Process().memory_info().rss
    began = time.perf_counter()
    report["rows"] = read_data(sys.argv[4], names).n_examples
    report["read_s"] = time.perf_counter() - began
report["seconds"] = time.perf_counter() - start
report["peak"] = peak()
with open(sys.argv[2], "w") as handle:
    json.dump(report, handle)
"""


def run_child(kind: str, argv) -> dict:
    """Run a case in a fresh Python process; its wall-clock time and its own report."""
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as handle:
        report_path = handle.name
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    before = os.times()
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", RUNNER, kind, report_path, *argv],
        env=env,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - start
    after = os.times()
    cpu = (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )
    if done.returncode != 0:
        raise SystemExit(f"{kind} {argv} failed:\n{done.stderr[-3000:]}")
    with open(report_path) as handle:
        report = json.load(handle)
    os.unlink(report_path)
    report["wall"] = wall
    report["cpu"] = cpu
    if report.get("code", 0) != 0:
        raise SystemExit(f"{kind} {argv} exited with {report['code']}")
    return report


def rules_file(folder: str, n_rules: int, seed: int) -> str:
    path = os.path.join(folder, f"rules{n_rules}.pbm")
    with open(path, "w") as handle:
        handle.write(make_rules(n_rules, np.random.default_rng(seed + 1)).to_string())
    return path


def cli_case(args, folder: str) -> bool:
    data = data_file(folder, "cli", rows=args.cli_rows, seed=args.seed)
    pbm = rules_file(folder, args.rules, args.seed)
    out = os.path.join(folder, "cli.out.pbm")
    load = os.getloadavg()[0]
    # a process of about a second varies by +-20 % from run to run: the command and the
    # yardstick run in turn, --cli-repeats times each, and their medians are compared
    reports, pandas = [], []
    for _ in range(args.cli_repeats):
        reports.append(run_child("cli", ["rules", "-u", "-d", data, "-f", pbm, "-s", out]))
        # target: end to end within 2x a process that only reads the file with pandas
        pandas.append(run_child("pandas", [data]))
    # on a machine busy with other work (load above the cores), the wall-clock time
    # measures the other jobs too: the target is then judged on the command's CPU time
    loaded = max(load, os.getloadavg()[0]) > (os.cpu_count() or 1)
    key = "cpu" if loaded else "wall"
    judged = float(np.median([r[key] for r in reports]))
    baseline = float(np.median([r[key] for r in pandas]))
    ratio = judged / baseline
    ok = judged <= 2.0 and ratio <= 2.0
    walls = ", ".join(f"{r['wall']:.2f}" for r in reports)
    print(
        f"cli         xplique-ext rules -u, {args.rules} rules x {args.cli_rows:,} rows "
        f"({os.path.getsize(data) / 1e6:.0f} MB), median of {args.cli_repeats} runs: "
        f"{np.median([r['wall'] for r in reports]):.2f} s end to end (runs: {walls}; "
        f"{np.median([r['cpu'] for r in reports]):.2f} s CPU; target <= 2 s, judged on the "
        f"{'CPU time: the machine is loaded' if loaded else 'wall-clock time'}; 7.5-8.6 s "
        f"before), peak {max(r['peak'] for r in reports) / 1e6:,.0f} MB; pd.read_csv alone "
        f"in a process: {np.median([r['wall'] for r in pandas]):.2f} s "
        f"({np.median([r['cpu'] for r in pandas]):.2f} s CPU), ratio of the medians "
        f"{ratio:.2f} (target <= 2)  {'ok' if ok else 'MISSED'}"
    )
    return ok


def read_case(args, folder: str):
    data = data_file(folder, "read", megabytes=args.read_mb, seed=args.seed + 2)
    size = os.path.getsize(data)
    report = run_child("read", [data[: -len(".data")] + ".names", data])
    added = report["peak"] - report["rss_before"]
    ok = report["read_s"] <= 15.0 and added <= 2 * size
    print(
        f"read        read_data, {size / 1e6:,.0f} MB, {report['rows']:,} rows: "
        f"{report['read_s']:.1f} s (target <= 15 s; 114 s before), peak added "
        f"{added / 1e6:,.0f} MB = {added / size:.2f}x the file (target <= 2x; 29x before)  "
        f"{'ok' if ok else 'MISSED'}"
    )
    # the in-memory rate per row of the whole command, for the chunked case
    pbm = rules_file(folder, args.rules, args.seed)
    out = os.path.join(folder, "read.out.pbm")
    whole = run_child("cli", ["rules", "-u", "-d", data, "-f", pbm, "-s", out])
    rate = whole["wall"] / report["rows"]
    print(
        f"            xplique-ext rules -u in memory on it: {whole['wall']:.1f} s "
        f"({whole['cpu']:.1f} s CPU), "
        f"{rate * 1e6:.2f} us per row, peak {whole['peak'] / 1e6:,.0f} MB"
    )
    return ok, rate


def big_cases(args, folder: str, rate: float, cases) -> bool:
    data = data_file(folder, "big", megabytes=args.big_mb, seed=args.seed + 3)
    size = os.path.getsize(data)
    rows = count_rows(data)
    pbm = rules_file(folder, args.rules, args.seed)
    ok = True
    chunked = None
    if "chunks" in cases:
        chunked = os.path.join(folder, "big.chunks.pbm")
        report = run_child(
            "cli",
            [
                "rules",
                "-u",
                "-d",
                data,
                "-f",
                pbm,
                "-s",
                chunked,
                "--chunksize",
                str(args.chunksize),
            ],
        )
        per_row = report["wall"] / rows
        ratio = per_row / rate if rate else float("nan")
        passed = report["peak"] <= 1e9 and (not rate or ratio <= 3.0)
        ok &= passed
        print(
            f"chunks      xplique-ext rules -u --chunksize {args.chunksize:,}, "
            f"{size / 1e6:,.0f} MB, {rows:,} rows: {report['wall']:.1f} s "
            f"({report['cpu']:.1f} s CPU), peak RSS "
            f"{report['peak'] / 1e6:,.0f} MB (target <= 1,000 MB), "
            f"{per_row * 1e6:.2f} us per row = {ratio:.2f}x the in-memory rate "
            f"(target <= 3x)  {'ok' if passed else 'MISSED'}"
        )
    if "dask" in cases:
        LocalCluster = _local_cluster_class()

        out = os.path.join(folder, "big.dask.pbm")
        with LocalCluster(
            n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster:
            report = run_child(
                "cli",
                [
                    "rules",
                    "-u",
                    "-d",
                    data,
                    "-f",
                    pbm,
                    "-s",
                    out,
                    "--dask",
                    cluster.scheduler_address,
                ],
            )
        same = None
        if chunked is not None:
            with open(out) as a, open(chunked) as b:
                same = a.read() == b.read()
            ok &= same
        print(
            f"dask        xplique-ext rules -u --dask (LocalCluster, {args.workers} worker "
            f"processes), {size / 1e6:,.0f} MB: {report['wall']:.1f} s "
            f"({rows / report['wall'] / 1e6:.2f} M rows/s), client peak "
            f"{report['peak'] / 1e6:,.0f} MB; same output as --chunksize: {same}"
        )
    return ok


def _local_cluster_class():
    """``distributed.LocalCluster``: the package, not ``benchmarks/distributed.py`` beside
    this script. The script's folder comes first on ``sys.path``: it is taken off for good,
    since the worker processes start with this ``sys.path`` too."""
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    from distributed import LocalCluster

    return LocalCluster


CASES = ("evaluate", "cli", "read", "chunks", "dask")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", default=",".join(CASES), help=f"among {', '.join(CASES)}")
    parser.add_argument("--examples", type=int, default=1_000_000)
    parser.add_argument("--rules", type=int, default=100)
    parser.add_argument("--unknown-rate", type=float, default=0.01)
    parser.add_argument(
        "--loop-examples",
        type=int,
        default=2_000,
        help="subsample on which the per-example loop is timed",
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cli-rows", type=int, default=1_000_000, help="rows of the cli case")
    parser.add_argument(
        "--cli-repeats",
        type=int,
        default=7,
        help="runs of the cli case and of its pandas yardstick (medians)",
    )
    parser.add_argument("--read-mb", type=float, default=200, help="size of the read case")
    parser.add_argument("--big-mb", type=float, default=2000, help="size of chunks/dask")
    parser.add_argument("--chunksize", type=int, default=1_000_000)
    parser.add_argument("--workers", type=int, default=2, help="Dask worker processes")
    parser.add_argument(
        "--workdir",
        default=os.path.join(tempfile.gettempdir(), "xplique_ext_rules_bench"),
        help="where the generated files go (reused between runs)",
    )
    args = parser.parse_args(argv)
    cases = [c.strip() for c in args.cases.split(",") if c.strip()]
    unknown = sorted(set(cases) - set(CASES))
    if unknown:
        parser.error(f"unknown cases {unknown}; choose among {list(CASES)}")
    os.makedirs(args.workdir, exist_ok=True)
    print(
        f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} (times are "
        "wall-clock; the CPU time of the command's process is given beside)"
    )
    ok = True
    if "evaluate" in cases:
        ok &= evaluate_case(args)
    if {"cli", "read", "chunks", "dask"} & set(cases):
        print(f"files and scaling out (generated files in {args.workdir}):")
    if "cli" in cases:
        ok &= cli_case(args, args.workdir)
    rate = 0.0
    if {"read", "chunks"} & set(cases):
        passed, rate = read_case(args, args.workdir)
        ok &= passed
    if {"chunks", "dask"} & set(cases):
        ok &= big_cases(args, args.workdir, rate, cases)
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
