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
import contextlib
import itertools
import os
import re
import sys
from typing import List, NamedTuple, Optional, Sequence, Tuple

__all__ = ["register", "run_rules", "run_fire", "with_wilson_columns", "PROPORTION_MEASURES"]

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


def register(subparsers) -> None:
    """Add the ``rules`` and ``fire`` sub-commands to an argparse ``subparsers`` object."""
    output = argparse.ArgumentParser(add_help=False)  # -s, shared by both commands
    output.add_argument(
        "-s", dest="output", metavar="OUT", help="output file (default: standard output)"
    )
    _register_rules(subparsers, output)
    _register_fire(subparsers, output)


# -- xplique-ext rules: its options, group by group (in the order --help lists them) -------
def _register_rules(subparsers, output: argparse.ArgumentParser) -> None:
    """Add the ``rules`` sub-command, with the output options of ``output``."""
    rules = subparsers.add_parser(
        "rules",
        parents=[output],
        help="evaluate PBM rules on a data set (std_info.pl)",
        description="Evaluate a PBM rule set on the examples of a .data file and print the "
        "rules with their contingency frequencies [f_bh,f_bh',f_b'h',f_b'h,n] ?[... for "
        "examples with unknown values] (extended PBM format).",
        epilog="example: xplique-ext rules --copy-examples . && "
        "xplique-ext rules -o -d voyage.test -f voyage.cn2.ordered.pbm",
    )
    _add_mode_options(rules)
    _add_input_options(rules)
    _add_format_options(rules)
    _add_scale_options(rules)
    rules.set_defaults(func=run_rules, mode="unordered")


def _add_mode_options(rules: argparse.ArgumentParser) -> None:
    """``-u``, ``-o``, ``-i``: how the rules are evaluated (one of them)."""
    modes = rules.add_mutually_exclusive_group()
    for flag, mode, text in (
        ("-u", "unordered", "unordered (default)"),
        ("-o", "ordered", "ordered"),
        ("-i", "inter-class", "ordered between classes"),
    ):
        modes.add_argument(
            flag,
            dest="mode",
            action="store_const",
            const=mode,
            help=f"evaluate the rules as {text}",
        )


def _add_input_options(rules: argparse.ArgumentParser) -> None:
    """The files read: ``-d DATA`` (or ``--copy-examples DIR``), ``-n NAMES``, ``-f RULES``."""
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


def _add_format_options(rules: argparse.ArgumentParser) -> None:
    """What is written: ``--precision``, ``--csv``, ``--ci-level``, ``--format``."""
    rules.add_argument(
        "--precision",
        type=int,
        default=3,
        choices=range(13),
        metavar="DIGITS",
        help="decimals of the frequencies",
    )
    rules.add_argument(
        "--csv",
        metavar="FILE",
        help="also write the tidy table of counts and "
        "measures as CSV, with a Wilson confidence interval (columns "
        "MEASURE_ci_low, MEASURE_ci_high) for each measure that is a proportion: "
        + ", ".join(PROPORTION_MEASURES),
    )
    rules.add_argument(
        "--ci-level",
        type=float,
        default=0.95,
        metavar="LEVEL",
        help="confidence level of the --csv intervals, in (0, 1)",
    )
    rules.add_argument(
        "--format",
        choices=("pbm", "csv", "json"),
        default="pbm",
        help="output format: the extended PBM file, or the tidy table of counts "
        "and measures (one row per rule) as CSV or JSON",
    )


def _add_scale_options(rules: argparse.ArgumentParser) -> None:
    """How a large data set is evaluated: ``--chunksize N`` or ``--dask [ADDRESS]``."""
    scale = rules.add_mutually_exclusive_group()
    scale.add_argument(
        "--chunksize",
        type=int,
        metavar="N",
        help="read and evaluate DATA N "
        "examples at a time: a file of any size in bounded memory, in one process "
        "(same counts as reading it whole)",
    )
    scale.add_argument(
        "--dask",
        nargs="?",
        const="",
        metavar="ADDRESS",
        help="evaluate on a Dask "
        "cluster (the scheduler's ADDRESS, e.g. tcp://host:8786), or on a local "
        "cluster of worker processes when no address is given; DATA is read with "
        "dask.dataframe.read_csv (needs the [distributed] extra)",
    )


# -- xplique-ext fire ---------------------------------------------------------------------
def _register_fire(subparsers, output: argparse.ArgumentParser) -> None:
    """Add the ``fire`` sub-command, with the output options of ``output``."""
    fire = subparsers.add_parser(
        "fire",
        parents=[output],
        help="score (predictive loss, readability loss) pairs with FiRe and Qs",
        description="Score extracted knowledge with psi-FiRe = p * ceil(r / psi) * r^0.05 and, "
        "when a coverage is given, Qs = p * (2 - coverage) * r. Pairs are given as arguments "
        "P,R[,COVERAGE] (optionally LABEL=P,R[,COVERAGE]) or read one per line from a file or "
        "standard input as 'p r [coverage] [label]' (separated by commas or white space; # "
        "starts a comment).",
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
        "--precision",
        type=int,
        default=2,
        choices=range(13),
        metavar="DIGITS",
        help="decimals printed",
    )
    # a pair that starts with a minus sign (-0.1,3) is a value, not an unknown option, so
    # that FiRe's domain error reaches the user; Python 3.13's argparse does this already
    if hasattr(fire, "_negative_number_matcher"):
        fire._negative_number_matcher = re.compile(r"^-\.?\d")
    fire.set_defaults(func=run_fire)


def _fail(command: str, message: str, code: int = 1) -> int:
    sys.stderr.write(f"xplique-ext {command}: error: {message}\n")
    return code


def _check_outputs(*paths: Optional[str]) -> None:
    """Fail now, before any work, where an output file cannot be written: the OSError
    writing it would raise (nothing is created)."""
    from ..commons.files import check_writable

    for path in filter(None, paths):
        check_writable(path)


class FileRole(NamedTuple):
    """A file a command opens: its path (None when not given) and how a message names it."""

    path: Optional[str]
    role: str


def _overwritten_input(outputs: Sequence[FileRole], inputs: Sequence[FileRole]) -> Optional[str]:
    """Why an output would be written over one of the command's inputs, or over another
    output, or None: paths compared by the file they name (symbolic and hard links
    included, :func:`~xplique_ext.commons.files.same_file`)."""
    from ..commons.files import same_file

    given = [output for output in outputs if output.path is not None]
    for output in given:
        for source in inputs:
            if same_file(output.path, source.path):
                return (
                    f"{output.role} {output.path!r} is {source.role}: the command does not "
                    "write over its own input; give another output file"
                )
    for first, second in itertools.combinations(given, 2):
        resolved = os.path.realpath(first.path) == os.path.realpath(second.path)
        if resolved or same_file(first.path, second.path):
            return (
                f"{first.role} and {second.role} are the same file {second.path!r}: give two files"
            )
    return None


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
    import warnings

    from ..commons.uncertainty import wilson_interval
    from ..commons.warnings import UndefinedScoreWarning

    out = frame.copy()
    for measure, (numerator, denominator) in PROPORTION_MEASURES.items():
        if measure in frame.columns:
            k = sum(frame[c].to_numpy("int64") for c in numerator)
            m = sum(frame[c].to_numpy("int64") for c in denominator)
            # an empty denominator: the measure is NaN without a warning (zero_division=
            # "nan"), and so is its interval (NaN, which wilson_interval would warn about)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UndefinedScoreWarning)
                out[f"{measure}_ci_low"], out[f"{measure}_ci_high"] = wilson_interval(
                    k, m, confidence
                )
    return out


def run_rules(args: argparse.Namespace) -> int:
    """Run ``xplique-ext rules``; returns the exit code."""
    from ..rules import ParseError, copy_examples, evaluate_rules, parse_rules, read_data
    from ..rules.datafile import default_names_path
    from ..rules.names import read_names
    from ..rules.syntax import read_text, write_text

    if args.copy_examples:
        try:
            write_text(None, "".join(f"{p}\n" for p in copy_examples(args.copy_examples)))
        except OSError as err:
            return _fail("rules", str(err))
        return 0
    if not 0 < args.ci_level < 1:
        return _fail("rules", f"--ci-level must be in (0, 1), got {args.ci_level}", 2)
    if args.chunksize is not None and args.chunksize < 1:
        return _fail("rules", f"--chunksize must be a positive integer, got {args.chunksize}", 2)
    names_path = args.names or default_names_path(args.data)
    names_role = "the names file (-n NAMES)"
    if not args.names:
        names_role = "the names file read beside -d DATA"
    clash = _overwritten_input(
        outputs=[FileRole(args.output, "-s OUT"), FileRole(args.csv, "--csv FILE")],
        inputs=[
            FileRole(args.data, "the data file (-d DATA)"),
            FileRole(names_path, names_role),
            FileRole(args.rules, "the rule file (-f RULES)"),
        ],
    )
    if clash is not None:
        return _fail("rules", clash, 2)
    try:
        _check_outputs(args.output, args.csv)
        names = read_names(names_path)
        if args.dask is None:  # with --chunksize: an iterator of chunks, read as evaluated
            data = read_data(args.data, names, chunksize=args.chunksize)
        rules = parse_rules(read_text(args.rules), file=args.rules or "<stdin>")
        if args.chunksize is not None:  # a progress bar on a terminal (not with --dask)
            from tqdm.auto import tqdm

            data = tqdm(data, desc="chunks", unit=" chunks", disable=None, leave=False)
        evaluation = (
            evaluate_rules(rules, data, args.mode, names=names)
            if args.dask is None
            else _evaluate_on_dask(rules, args.data, names, args.mode, args.dask)
        )
        write_text(args.output, _rules_output(evaluation, args, names_path))
        if args.csv:
            frame = with_wilson_columns(evaluation.to_frame(zero_division="nan"), args.ci_level)
            write_text(args.csv, frame.to_csv(index=False))  # our message if it cannot be written
    except (ParseError, ImportError) as err:
        return _fail("rules", str(err))
    except OSError as err:
        return _fail("rules", _rules_file_error(err, args, names_path))
    except ValueError as err:
        from ..rules.on_dask import SchedulerError

        if args.dask is None or not isinstance(err, SchedulerError):
            raise
        return _fail("rules", f"--dask: {err}")
    return 0


def _rules_output(evaluation, args: argparse.Namespace, names_path: str) -> str:
    """The evaluation in the format of ``--format``."""
    if args.format == "pbm":
        return evaluation.to_pbm(
            names_file=names_path, data_file=args.data, precision=args.precision
        )
    frame = evaluation.to_frame(zero_division="nan")
    if args.format == "csv":
        return frame.to_csv(index=False)
    import json

    # Python numbers, None where a measure is undefined (NaN)
    document = {
        "mode": evaluation.mode,
        "names_file": names_path,
        "data_file": args.data,
        "rules": frame.astype(object).where(frame.notna(), None).to_dict("records"),
    }
    return json.dumps(document, indent=1) + "\n"


_OUTPUT = ("write the output file", "-s OUT")


def _file_error(path: Optional[str], reason: str, *roles: Tuple[Optional[str], str, str]) -> str:
    """A file that cannot be read or written, as a message naming its role and option:
    ``roles`` are (path, what is done with it, option) triples."""
    for role_path, what, option in roles:
        if path is not None and path == role_path:
            return f"cannot {what} {path!r} ({option}): {reason}"
    return reason if path is None else f"{reason}: {path}"


def _rules_file_error(err: OSError, args: argparse.Namespace, names_path: str) -> str:
    """An OSError of ``xplique-ext rules`` as a message naming the file's role and option."""
    reason = err.strerror or str(err)
    path = err.filename
    if path == names_path and not os.path.exists(args.data):
        path = args.data  # the names are read first, but a missing data file is to fix first
    if path == names_path and not args.names:
        return (
            f"cannot read the names file {path!r}, the default for -d {args.data}: "
            f"{reason}; give it with -n NAMES"
        )
    return _file_error(
        path,
        reason,
        (args.data, "read the data file", "-d DATA"),
        (names_path, "read the names file", "-n NAMES"),
        (args.rules, "read the rule file", "-f RULES"),
        (args.output, *_OUTPUT),
        (args.csv, "write the CSV file", "--csv FILE"),
    )


#: Seconds to connect to a Dask scheduler given with ``--dask ADDRESS``.
_DASK_SECONDS = 5


def _evaluate_on_dask(rules, data_path: str, names, mode: str, address: str):
    """Evaluate on a Dask cluster: the one at ``address``, or a local one of worker
    processes (as many as cores) started for this command and closed after it."""
    import pandas as pd

    from ..rules import DataParseError, evaluate_rules, read_data_dask
    from ..rules.on_dask import check_scheduler, import_dask

    dask = import_dask()
    from distributed import Client, LocalCluster

    frame = read_data_dask(data_path, names)
    with contextlib.ExitStack() as stack:
        if address:
            check_scheduler(address, _DASK_SECONDS)  # one clear error within seconds
            with dask.config.set({"distributed.comm.timeouts.connect": f"{_DASK_SECONDS}s"}):
                client = Client(address, timeout=_DASK_SECONDS)
        else:
            client = Client(
                stack.enter_context(LocalCluster(processes=True, dashboard_address=None))
            )
        stack.enter_context(client)
        try:
            return evaluate_rules(rules, frame, mode, names=names)
        except pd.errors.ParserError as err:  # extra fields, found by the CSV reader
            raise DataParseError(str(err).strip(), file=data_path) from None


class Row(NamedTuple):
    """One (p, r) pair to score, with its label (may be empty) and optional coverage."""

    label: str
    p: float
    r: float
    coverage: Optional[float]


def _float(text: str) -> Optional[float]:
    try:
        return float(text)
    except ValueError:
        return None


def _all_numbers(text: str) -> bool:
    """Whether every comma-separated part of ``text`` is a number."""
    return None not in map(_float, text.split(","))


def _is_number(value: Optional[float]) -> bool:
    return value is not None


def _row(text: str, where: str) -> Row:
    """``p r [coverage] [label]`` (commas or white space between) as a row; a number ``0,5``
    among the values (before the label) set apart by white space (``0,5 3``) is a decimal comma."""
    words = re.sub(r"\s*,\s*", ",", text.strip()).split()
    numbers = list(itertools.takewhile(_all_numbers, words))
    if len(numbers) > 1 and any(re.fullmatch(r"[+-]?\d+,\d+", t) for t in numbers):
        raise ValueError(
            f"{where}decimal comma in {text!r}: commas separate the values, "
            "write the decimals with a dot (0.5, not 0,5)"
        )
    parts = [p for p in re.split(r"[,\s]+", text.strip()) if p]
    values = list(itertools.takewhile(_is_number, map(_float, parts)))  # the label after them
    if len(values) not in (2, 3):
        raise ValueError(
            f"{where}expected numbers 'p r [coverage] [label]' (or, as an "
            f"argument, P,R[,COVERAGE] or LABEL=P,R[,COVERAGE]), got {text!r}"
        )
    coverage = values[2] if len(values) == 3 else None
    return Row(" ".join(parts[len(values) :]), values[0], values[1], coverage)


def _parse_pair(text: str) -> Row:
    """An argument ``LABEL=P,R[,COVERAGE]`` (the label optional) as a row."""
    label, _, values = text.rpartition("=")
    row = _row(values, "")
    if row.label:
        raise ValueError(f"expected numbers in {text!r}")
    return row._replace(label=label.strip())


def _parse_lines(text: str, source: str) -> List[Row]:
    """Lines ``p r [coverage] [label]`` as rows (``#`` starts a comment; the first line
    with text may be a header: words only, none of them a number)."""
    rows = []
    first = True  # no line with text met yet
    for n, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        header = first and all(_float(word) is None for word in re.split(r"[,\s]+", line))
        if line and not header:
            rows.append(_row(line, f"{source}, line {n}: "))
        first = first and not line
    return rows


def _fire_inputs(args: argparse.Namespace) -> Tuple[List[float], List[Row]]:
    """The trade-offs of ``--psi`` and the (label, p, r, coverage) rows to score."""
    from ..rules.syntax import read_text

    psis = [_float(part) for part in ",".join(args.psi or ["1"]).split(",")]
    if None in psis:
        raise ValueError(f"--psi must be numbers > 0, got {','.join(args.psi)!r}")
    if args.input and args.pairs:
        raise ValueError("give the pairs either as arguments or with -f, not both")
    # the arguments, else a file, else standard input (decoded as the rule files are)
    rows = (
        [_parse_pair(p) for p in args.pairs]
        if args.pairs
        else _parse_lines(read_text(args.input), args.input or "<stdin>")
    )
    if not rows:
        raise ValueError("no (p, r) pair given")
    return psis, rows


def _fire_table(psis: Sequence[float], rows: Sequence[Row], precision: int) -> List[List[str]]:
    """The header and one line per row: label, p, r, [coverage, Qs,] one FiRe per psi."""
    from ..rules.fire import fire_score, qs_score

    with_coverage = any(row.coverage is not None for row in rows)
    table = [
        ["label", "p", "r"]
        + (["coverage", "Qs"] if with_coverage else [])
        + [f"{psi:g}-FiRe" for psi in psis]
    ]
    for k, (label, p, r, coverage) in enumerate(rows):
        line = [label or f"#{k + 1}", f"{p:g}", f"{r:g}"]
        if with_coverage:
            line += (
                ["-", "-"]
                if coverage is None
                else [f"{coverage:g}", f"{qs_score(p, r, coverage):.{precision}f}"]
            )
        table.append(line + [f"{fire_score(psi, p, r):.{precision}f}" for psi in psis])
    return table


def _aligned(table: List[List[str]]) -> str:
    """The table as text: the first column aligned left, the others right."""
    widths = [max(len(row[j]) for row in table) for j in range(len(table[0]))]
    lines = []
    for row in table:
        cells = [row[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(row[1:], widths[1:])]
        lines.append("  ".join(cells).rstrip() + "\n")
    return "".join(lines)


def run_fire(args: argparse.Namespace) -> int:
    """Run ``xplique-ext fire``; returns the exit code."""
    from ..rules.syntax import write_text

    clash = _overwritten_input(
        outputs=[FileRole(args.output, "-s OUT")],
        inputs=[FileRole(args.input, "the pairs file (-f FILE)")],
    )
    if clash is not None:
        return _fail("fire", clash, 2)
    try:
        _check_outputs(args.output)
        psis, rows = _fire_inputs(args)
        table = _fire_table(psis, rows, args.precision)
        write_text(args.output, _aligned(table))
    except ValueError as err:
        return _fail("fire", str(err))
    except OSError as err:
        return _fail(
            "fire",
            _file_error(
                err.filename,
                err.strerror,
                (args.output, *_OUTPUT),
                (args.input, "read the pairs file", "-f FILE"),
            ),
        )
    return 0
