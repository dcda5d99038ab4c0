"""Benchmark of the rule evaluation (issue 3, acceptance point 5).

Times :func:`xplique_ext.rules.evaluate_rules` on 100 random rules over 1,000,000 examples of
mixed nominal and numeric attributes with 1% unknown values, in the three modes, and
compares it with a per-example loop that implements Algorithms 1-3 of the report
(:func:`xplique_ext.rules.reference.evaluate_rules_loop`), measured in the same run. The loop is
timed on a random subsample and extrapolated linearly to the full size (it is linear in
the number of examples); the output says so. Its counts on the subsample are checked
against the vectorised ones.

Targets: unordered <= 1 s, ordered <= 2 s, and >= 100x faster than the loop.

Run: ``python benchmarks/rules.py`` (``--help`` for sizes).
"""

from __future__ import annotations

import argparse
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
from xplique_ext.rules.reference import evaluate_rules_loop

CLASSES = ("c0", "c1", "c2")


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


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
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
    args = parser.parse_args(argv)

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
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
