"""``xplique-ext rules`` (``std_info.pl``'s command line) and ``xplique-ext fire``.

``xplique-ext rules [-o|-u|-i] -d DATA [-n NAMES] [-f RULES] [-s OUT]`` reads PBM rules
(standard input when ``-f`` is missing), evaluates them on the examples of ``DATA`` (the
``.names`` file defaults to ``DATA`` with its extension replaced by ``.names``) and prints
the extended PBM file of Fig. 8 (standard output when ``-s`` is missing). ``-u``
(unordered) is the default, ``-o`` is ordered and ``-i`` inter-class ordered.
``--chunksize N`` streams ``DATA`` N examples at a time (bounded memory, one process);
``--dask [ADDRESS]`` evaluates it on a Dask cluster (a local one without an address).

``xplique-ext fire [--psi PSI ...] [-f FILE] [-s OUT] [P,R[,COVERAGE] ...]`` scores
(predictive loss, readability loss) pairs with psi-FiRe and, when a coverage is given, Qs.
"""

from __future__ import annotations

import argparse
import io
import os
import re
import sys
from typing import List, Optional, Sequence, Tuple

__all__ = ["register", "run_rules", "run_fire", "with_wilson_columns", "PROPORTION_MEASURES"]


def register(subparsers) -> None:
    """Add the ``rules`` and ``fire`` sub-commands to an argparse ``subparsers`` object."""
    rules = subparsers.add_parser(
        "rules",
        help="evaluate PBM rules on a data set (std_info.pl)",
        description=(
            "Evaluate a PBM rule set on the examples of a .data file and print the rules "
            "with their contingency frequencies [f_bh,f_bh',f_b'h',f_b'h,n] "
            "?[... for examples with unknown values] (extended PBM format)."
        ),
        epilog=(
            "example: xplique-ext rules --copy-examples . && "
            "xplique-ext rules -o -d voyage.test -f voyage.cn2.ordered.pbm"
        ),
    )
    modes = rules.add_mutually_exclusive_group()
    modes.add_argument(
        "-u",
        dest="mode",
        action="store_const",
        const="unordered",
        help="evaluate the rules as unordered (default)",
    )
    modes.add_argument(
        "-o",
        dest="mode",
        action="store_const",
        const="ordered",
        help="evaluate the rules as ordered",
    )
    modes.add_argument(
        "-i",
        dest="mode",
        action="store_const",
        const="inter-class",
        help="evaluate the rules as ordered between classes",
    )
    source = rules.add_mutually_exclusive_group(required=True)
    source.add_argument("-d", dest="data", metavar="DATA", help="data file with the examples")
    source.add_argument(
        "--copy-examples",
        metavar="DIR",
        help="copy the voyage example files (names, data, test, rules) into DIR and exit",
    )
    rules.add_argument(
        "-n",
        dest="names",
        metavar="NAMES",
        help="names file (default: DATA with the extension .names)",
    )
    rules.add_argument(
        "-f", dest="rules", metavar="RULES", help="PBM rule file (default: standard input)"
    )
    rules.add_argument(
        "-s", dest="output", metavar="OUT", help="output file (default: standard output)"
    )
    rules.add_argument(
        "--precision", type=int, default=3, help="decimals of the frequencies (default: 3)"
    )
    rules.add_argument(
        "--csv", metavar="FILE",
        help="also write the tidy table of counts and measures as CSV, with a Wilson "
        "confidence interval (columns MEASURE_ci_low, MEASURE_ci_high) for each measure "
        "that is a proportion: " + ", ".join(PROPORTION_MEASURES),
    )
    rules.add_argument(
        "--ci-level", type=float, default=0.95, metavar="LEVEL",
        help="confidence level of the --csv intervals, in (0, 1) (default: 0.95)",
    )
    scale = rules.add_mutually_exclusive_group()
    scale.add_argument(
        "--chunksize",
        type=int,
        metavar="N",
        help="read and evaluate DATA N examples at a time: a file of any size in bounded "
        "memory, in one process (same counts as reading it whole)",
    )
    scale.add_argument(
        "--dask",
        nargs="?",
        const="",
        metavar="ADDRESS",
        help="evaluate on a Dask cluster (the scheduler's ADDRESS, e.g. tcp://host:8786), or "
        "on a local cluster of worker processes when no address is given; DATA is read with "
        "dask.dataframe.read_csv (needs the [distributed] extra)",
    )
    rules.add_argument(
        "--format",
        choices=("pbm", "csv", "json"),
        default="pbm",
        help="output format: the extended PBM file, or the tidy table of counts and "
        "measures (one row per rule) as CSV or JSON",
    )
    rules.set_defaults(func=run_rules, mode=None)

    fire = subparsers.add_parser(
        "fire",
        help="score (predictive loss, readability loss) pairs with FiRe and Qs",
        description=(
            "Score extracted knowledge with psi-FiRe = p * ceil(r / psi) * r^0.05 and, when "
            "a coverage is given, Qs = p * (2 - coverage) * r. Pairs are given as "
            "arguments P,R[,COVERAGE] (optionally LABEL=P,R[,COVERAGE]) or read one per "
            "line from a file or standard input as 'p r [coverage] [label]' (separated "
            "by commas or white space; # starts a comment)."
        ),
        epilog="example: xplique-ext fire --psi 1,2,3 CART=0.05,3,1.0 GridEx=0.04,3,0.95",
    )
    fire.add_argument(
        "pairs",
        nargs="*",
        metavar="P,R[,COVERAGE]",
        help="predictive loss, readability loss and optional coverage",
    )
    fire.add_argument(
        "--psi",
        action="append",
        metavar="PSI[,PSI...]",
        help="trade-off values psi > 0, comma-separated or repeated (default: 1)",
    )
    fire.add_argument(
        "-f",
        dest="input",
        metavar="FILE",
        help="read the pairs from FILE (default: the arguments, else stdin)",
    )
    fire.add_argument(
        "-s", dest="output", metavar="OUT", help="output file (default: standard output)"
    )
    fire.add_argument("--precision", type=int, default=2, help="decimals printed (default: 2)")
    # a pair that starts with a minus sign (-0.1,3) is a value, not an unknown option, so
    # that FiRe's domain error reaches the user; Python 3.13's argparse does this already
    if hasattr(fire, "_negative_number_matcher"):
        fire._negative_number_matcher = re.compile(r"^-\.?\d")
    fire.set_defaults(func=run_fire)


def _fail(command: str, message: str, code: int = 1) -> int:
    sys.stderr.write(f"xplique-ext {command}: error: {message}\n")
    return code


def _write(path: Optional[str], text: str) -> None:
    if path is None:
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)


#: the rule measures that are proportions k / m of the known contingency table (Tab. 1
#: of the spec): measure -> (successes, trials) as sums of its cells
PROPORTION_MEASURES = {
    "Acc": (("bh",), ("bh", "bhbar")),
    "Err": (("bhbar",), ("bh", "bhbar")),
    "NegRel": (("bbarhbar",), ("bbarhbar", "bbarh")),
    "Sens": (("bh",), ("bh", "bbarh")),
    "Spec": (("bbarhbar",), ("bbarhbar", "bhbar")),
    "Cov": (("bh", "bhbar"), ("n",)),
    "Sup": (("bh",), ("n",)),
}


def with_wilson_columns(frame, confidence: float = 0.95):
    """The tidy table of ``RuleEvaluation.to_frame()`` with, after its own columns, the
    Wilson interval of each proportion measure (:data:`PROPORTION_MEASURES`):
    ``{measure}_ci_low`` and ``{measure}_ci_high``, NaN where the measure is undefined
    (an empty denominator). The table passed in is not modified.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"bh": [7], "bhbar": [3], "bbarhbar": [5], "bbarh": [5],
    ...                   "n": [20], "Acc": [0.7]})
    >>> out = with_wilson_columns(t)
    >>> round(float(out.loc[0, "Acc_ci_low"]), 4), round(float(out.loc[0, "Acc_ci_high"]), 4)
    (0.3968, 0.8922)
    """
    import numpy as np

    from ..commons.uncertainty import wilson_interval

    out = frame.copy()
    for measure, (numerator, denominator) in PROPORTION_MEASURES.items():
        if measure not in frame.columns:
            continue
        k = sum(frame[c].to_numpy(np.int64) for c in numerator)
        m = sum(frame[c].to_numpy(np.int64) for c in denominator)
        low, high = wilson_interval(np.atleast_1d(k), np.atleast_1d(m), confidence)
        out[f"{measure}_ci_low"] = low
        out[f"{measure}_ci_high"] = high
    return out


def run_rules(args: argparse.Namespace) -> int:
    """Run ``xplique-ext rules``; returns the exit code."""
    from ..rules import ParseError, copy_examples, evaluate_rules, parse_rules, read_data
    from ..rules.datafile import default_names_path
    from ..rules.names import read_names
    from ..rules.syntax import read_text

    if args.copy_examples:
        try:
            paths = copy_examples(args.copy_examples)
        except OSError as err:
            return _fail("rules", str(err))
        _write(None, "".join(f"{p}\n" for p in paths))
        return 0
    if not args.data:
        return _fail("rules", "the data file is required (-d DATA)", 2)
    if args.precision < 0 or args.precision > 12:
        return _fail("rules", f"--precision must be in [0, 12], got {args.precision}", 2)
    if not 0 < args.ci_level < 1:
        return _fail("rules", f"--ci-level must be in (0, 1), got {args.ci_level}", 2)
    if args.chunksize is not None and args.chunksize < 1:
        return _fail("rules", f"--chunksize must be a positive integer, got {args.chunksize}", 2)
    mode = args.mode or "unordered"
    names_path = args.names if args.names else default_names_path(args.data)
    try:
        names = read_names(names_path)
        if args.dask is None:  # with --chunksize: an iterator of chunks, read as evaluated
            data = read_data(args.data, names, chunksize=args.chunksize)
        if args.rules:
            text, source = read_text(args.rules), args.rules
        else:
            text, source = sys.stdin.read(), "<stdin>"
        rules = parse_rules(text, file=source)
        if args.dask is not None:
            evaluation = _evaluate_on_dask(rules, args.data, names, mode, args.dask)
        else:
            if args.chunksize is not None:  # a progress bar on a terminal
                from tqdm.auto import tqdm

                data = tqdm(data, desc="chunks", unit=" chunks", disable=None, leave=False)
            evaluation = evaluate_rules(rules, data, mode, names=names)
        _write(args.output, _rules_output(evaluation, args, names_path))
        if args.csv:
            with_wilson_columns(evaluation.to_frame(zero_division="nan"),
                                args.ci_level).to_csv(args.csv, index=False)
    except ParseError as err:
        return _fail("rules", str(err))
    except ImportError as err:
        return _fail("rules", str(err))
    except OSError as err:
        return _fail("rules", _file_error(err, args, names_path))
    except ValueError as err:
        if args.dask is None:
            raise
        from ..rules.on_dask import SchedulerError

        if not isinstance(err, SchedulerError):
            raise
        return _fail("rules", f"--dask: {err}")
    return 0


def _json_value(value):
    """A JSON-ready value: NumPy scalars as Python numbers, NaN (undefined) as null."""
    value = value.item() if hasattr(value, "item") else value
    return None if isinstance(value, float) and value != value else value


def _rules_output(evaluation, args: argparse.Namespace, names_path: str) -> str:
    """The evaluation in the format of ``--format``."""
    fmt = getattr(args, "format", "pbm")
    if fmt == "pbm":
        return evaluation.to_pbm(
            names_file=names_path, data_file=args.data, precision=args.precision
        )
    frame = evaluation.to_frame(zero_division="nan")
    if fmt == "csv":
        return frame.to_csv(index=False)
    import json

    records = [{key: _json_value(v) for key, v in row.items()}
               for row in frame.to_dict(orient="records")]
    document = {"mode": evaluation.mode, "names_file": names_path, "data_file": args.data,
                "rules": records}
    return json.dumps(document, indent=1) + "\n"


def _file_error(err: OSError, args: argparse.Namespace, names_path: str) -> str:
    """An OSError of ``xplique-ext rules`` as a message naming the file's role and option."""
    reason = err.strerror or str(err)
    path = err.filename
    if path is None:
        return reason
    if path == names_path and not os.path.exists(args.data):
        # the names are read first, but a missing data file is the first thing to fix
        path = args.data
    if path == args.data:
        return f"cannot read the data file {path!r} (-d DATA): {reason}"
    if path == names_path:
        if args.names:
            return f"cannot read the names file {path!r} (-n NAMES): {reason}"
        return (
            f"cannot read the names file {path!r}, the default for -d {args.data}: {reason}; "
            "give it with -n NAMES"
        )
    if path == args.rules:
        return f"cannot read the rule file {path!r} (-f RULES): {reason}"
    if path == args.output:
        return f"cannot write the output file {path!r} (-s OUT): {reason}"
    if path == args.csv:
        return f"cannot write the CSV file {path!r} (--csv FILE): {reason}"
    return f"{reason}: {path}"


#: Seconds to connect to a Dask scheduler given with ``--dask ADDRESS``.
_DASK_SECONDS = 5


def _evaluate_on_dask(rules, data_path: str, names, mode: str, address: str):
    """Evaluate on a Dask cluster: the one at ``address``, or a local one of worker
    processes (as many as cores) started for this command and closed after it."""
    import os

    import pandas as pd

    from ..rules import evaluate_rules, read_data_dask
    from ..rules.on_dask import check_scheduler, import_dask

    dask = import_dask()
    from distributed import Client, LocalCluster

    if not os.path.exists(data_path):
        raise FileNotFoundError(2, "No such file or directory", data_path)
    frame = read_data_dask(data_path, names)
    if address:
        check_scheduler(address, _DASK_SECONDS)  # one clear error within seconds
        with dask.config.set({"distributed.comm.timeouts.connect": f"{_DASK_SECONDS}s"}):
            client = Client(address, timeout=_DASK_SECONDS)
        with client:
            return _compute(evaluate_rules, rules, frame, mode, names, data_path, pd)
    with LocalCluster(processes=True, dashboard_address=None) as cluster, Client(cluster):
        return _compute(evaluate_rules, rules, frame, mode, names, data_path, pd)


def _compute(evaluate_rules, rules, frame, mode, names, data_path, pd):
    from ..rules import DataParseError

    try:
        return evaluate_rules(rules, frame, mode, names=names)
    except pd.errors.ParserError as err:  # extra fields, found by the CSV reader
        raise DataParseError(str(err).strip(), file=data_path) from None


_PAIR = re.compile(r"^(?:(?P<label>[^=]+)=)?(?P<values>[^=]+)$")


def _parse_pair(text: str) -> Tuple[str, float, float, Optional[float]]:
    match = _PAIR.match(text.strip())
    if not match:
        raise ValueError(f"expected P,R[,COVERAGE] or LABEL=P,R[,COVERAGE], got {text!r}")
    parts = [p for p in re.split(r"[,\s]+", match.group("values").strip()) if p]
    if len(parts) not in (2, 3):
        raise ValueError(f"expected P,R[,COVERAGE] or LABEL=P,R[,COVERAGE], got {text!r}")
    try:
        values = [float(p) for p in parts]
    except ValueError:
        raise ValueError(f"expected numbers in {text!r}") from None
    label = (match.group("label") or "").strip()
    return label, values[0], values[1], values[2] if len(values) == 3 else None


def _parse_lines(text: str, source: str) -> List[Tuple[str, float, float, Optional[float]]]:
    rows = []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        parts = [p for p in re.split(r"[,\s]+", line) if p]
        numbers: List[float] = []
        for part in parts:
            try:
                numbers.append(float(part))
            except ValueError:
                break
        label = " ".join(parts[len(numbers) :])
        if number == 1 and not numbers and rows == []:
            continue  # a header line
        if len(numbers) not in (2, 3):
            raise ValueError(
                f"{source}, line {number}: expected 'p r [coverage] [label]', got {line!r}"
            )
        rows.append((label, numbers[0], numbers[1], numbers[2] if len(numbers) == 3 else None))
    return rows


def run_fire(args: argparse.Namespace) -> int:
    """Run ``xplique-ext fire``; returns the exit code."""
    from ..rules.fire import fire_score, qs_score

    try:
        psis = []
        for text in args.psi or ["1"]:
            for part in text.split(","):
                try:
                    psis.append(float(part))
                except ValueError:
                    raise ValueError(f"--psi must be numbers > 0, got {part!r}") from None
        if args.input and args.pairs:
            raise ValueError("give the pairs either as arguments or with -f, not both")
        if args.pairs:
            rows = [_parse_pair(p) for p in args.pairs]
        elif args.input:
            with open(args.input, encoding="utf-8") as handle:
                rows = _parse_lines(handle.read(), args.input)
        else:
            rows = _parse_lines(sys.stdin.read(), "<stdin>")
        if not rows:
            raise ValueError("no (p, r) pair given")
        if args.precision < 0 or args.precision > 12:
            raise ValueError(f"--precision must be in [0, 12], got {args.precision}")
        with_coverage = any(r[3] is not None for r in rows)
        header = ["label", "p", "r"] + (["coverage", "Qs"] if with_coverage else [])
        header += [f"{psi:g}-FiRe" for psi in psis]
        table = []
        for k, (label, p, r, coverage) in enumerate(rows):
            line = [label or f"#{k + 1}", f"{p:g}", f"{r:g}"]
            if with_coverage:
                if coverage is None:
                    line += ["-", "-"]
                else:
                    line += [f"{coverage:g}", f"{qs_score(p, r, coverage):.{args.precision}f}"]
            for psi in psis:
                line.append(f"{fire_score(psi, p, r):.{args.precision}f}")
            table.append(line)
    except ValueError as err:
        return _fail("fire", str(err))
    except OSError as err:
        return _fail(
            "fire", f"cannot read the pairs file {err.filename!r} (-f FILE): {err.strerror}"
        )
    widths = [max(len(str(row[j])) for row in [header] + table) for j in range(len(header))]
    out = io.StringIO()
    for row in [header] + table:
        cells = [row[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(row[1:], widths[1:])]
        out.write("  ".join(cells).rstrip() + "\n")
    try:
        _write(args.output, out.getvalue())
    except OSError as err:
        return _fail(
            "fire", f"cannot write the output file {err.filename!r} (-s OUT): {err.strerror}"
        )
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:  # pragma: no cover - manual use
    """Stand-alone entry point (``python -m xplique_ext.cli.rules``)."""
    parser = argparse.ArgumentParser(prog="xplique-ext")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
