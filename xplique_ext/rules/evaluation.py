"""Contingency tables of a rule set over examples, in the report's three evaluation modes,
and rule-set predictions.

The evaluation is vectorised: each condition is one boolean mask over all examples
(:mod:`~xplique_ext.rules.compile`), rules combine masks, and tables are mask counts.
The examples with unknown values are a small set of indices handled apart. Nothing loops
over examples in Python.

Semantics (section 3 and the worked example of section 5 of the report)
-----------------------------------------------------------------------
- For each rule two tables are counted: over the examples whose attributes tested by the
  rule are all known (the *known* table), and over the examples with an unknown value
  (``?``) in any attribute the rule tests (the *unknown* table, printed after ``?``).
- A test on ``?`` evaluates true; a test on ``!`` (not applicable) evaluates false.
- ``H`` is true when the example's class (or the ``labels`` given) equals the head.
- ``unordered`` (Algorithm 1): every rule sees every example.
- ``ordered`` (Algorithm 2): an example goes down the rules until one covers it for
  certain (without the help of an unknown value); rules after that one count it as not
  covered, in their known table, whatever its unknown values. A rule that covers an
  example only thanks to an unknown value counts it (in its unknown table) and lets it go
  on (the T2 and T9 discussion of section 5).
- ``inter-class`` (Algorithm 3): the rules form blocks of consecutive rules with the same
  head; within a block they are unordered, between blocks ordered: once a rule of a block
  covers an example for certain, the rules of the following blocks count it as not
  covered.
- The DEFAULT rule gives predictions but no table.
"""

from __future__ import annotations

import itertools
import numbers
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Dict, Iterable, List, Optional, Sequence

import numpy as np
import pandas as pd

from ..commons.metric import BaseMetric
from ..commons.parallel import usable_cores
from ..commons.params import STRING, ArrayLike, InstanceOf, Interval, Options, validate_params
from ..commons.warnings import UndefinedScoreWarning, XpliqueExtWarning, warn
from .compile import CompiledRule, MaskCache, compile_rules
from .dataset import Dataset
from .encoding import class_text
from .measures import HIGHER_IS_BETTER, MEASURES, ZERO_DIVISION, rule_measures
from .names import Names
from .pbm import RuleSet

__all__ = [
    "MODES",
    "ContingencyTables",
    "RuleEvaluation",
    "evaluate_rules",
    "predict_rules",
    "covered_mask",
    "RuleMetrics",
    "check_label_classes",
]

#: Evaluation modes (Algorithms 1, 2 and 3 of the report).
MODES = ("unordered", "ordered", "inter-class")

#: The declared constraints shared by the rules' entry points
#: (:func:`~xplique_ext.commons.params.validate_params`).
MODE = [Options(MODES)]
RULES = [InstanceOf(RuleSet, description="a RuleSet")]
NAMES_OR_NONE = [InstanceOf(Names, description="a Names object"), None]
#: One cell of the contingency tables: a count per rule (converted to ``int64``; checked
#: vectorised, an array holds one value per rule).
_COUNTS = [
    ArrayLike(
        kind="integer",
        ndim=1,
        dtype=np.int64,
        batch_hint=False,
        within=Interval(numbers.Integral, 0, None),
    )
]
_CELLS = ("bh", "bhbar", "bbarh", "bbarhbar")


class _Labels(ArrayLike):
    """Class labels given by a user (compared with the heads as text): str, numbers or
    bools; bytes (a ``tf.string`` tensor's values) are refused, as they match no head."""

    def __init__(self):
        super().__init__("any")
        self.description = "an array of class labels: str, numbers or bools (decode bytes)"

    def check(self, value):
        labels = super().check(value)
        if labels.dtype.kind == "S" or pd.api.types.infer_dtype(labels, skipna=True) == "bytes":
            raise self.wrong_kind(value)
        return labels


#: ``labels`` / ``reference``: class labels a user passes.
LABELS = [_Labels(), None]


def known_labels(labels: np.ndarray) -> np.ndarray:
    """Where a label is known: not NaN, None, pandas' NA nor ``"?"`` (the ``.data`` unknown
    marker)."""
    known = ~pd.isna(labels)
    known[known] = labels[known] != "?"  # pd.NA compares as NA: only the others are compared
    return known


class ContingencyTables:
    """Counts of the four cells of one contingency table per rule.

    Attributes
    ----------
    bh, bhbar, bbarh, bbarhbar
        ``int64`` arrays ``(n_rules,)``: body and head true; body true, head false; body
        false, head true; both false.
    """

    @validate_params({cell: _COUNTS for cell in _CELLS})
    def __init__(self, bh, bhbar, bbarh, bbarhbar) -> None:
        self.bh = bh
        self.bhbar = bhbar
        self.bbarh = bbarh
        self.bbarhbar = bbarhbar
        if len({a.shape for a in (bh, bhbar, bbarh, bbarhbar)}) > 1:
            raise ValueError(
                "`bh`, `bhbar`, `bbarh` and `bbarhbar` must have one count per rule "
                f"each, got shapes {[a.shape for a in (bh, bhbar, bbarh, bbarhbar)]}"
            )

    @property
    def n(self) -> np.ndarray:
        """Examples per table."""
        return self.bh + self.bhbar + self.bbarh + self.bbarhbar

    def as_array(self) -> np.ndarray:
        """``(n_rules, 4)`` counts in the order of the arguments of the constructor and of
        :func:`~xplique_ext.rules.rule_measures`: bh, bh̄, b̄h, b̄h̄ (so that
        ``rule_measures(*tables.as_array().T)`` gives the measures of the tables)."""
        return np.stack([getattr(self, c) for c in _CELLS], axis=1)

    def frequencies(self) -> np.ndarray:
        """``(n_rules, 5)``: ``f_bh, f_bh̄, f_b̄h̄, f_b̄h, n`` in the report's printed order
        (frequencies 0 when ``n`` is 0, as the report prints them)."""
        n = self.n
        freq = self.as_array()[:, [0, 1, 3, 2]] / np.where(n == 0, 1, n)[:, None]
        return np.concatenate([freq, n[:, None].astype(np.float64)], axis=1)

    def __add__(self, other: ContingencyTables) -> ContingencyTables:
        return ContingencyTables(*(getattr(self, c) + getattr(other, c) for c in _CELLS))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ContingencyTables):
            return NotImplemented
        return bool(np.array_equal(self.as_array(), other.as_array()))

    def __repr__(self) -> str:
        cells = ", ".join(f"{c}={getattr(self, c).tolist()}" for c in _CELLS)
        return f"ContingencyTables({cells})"


class RuleEvaluation:
    """The two contingency tables of every rule of a rule set, and their measures.

    Returned by :func:`evaluate_rules`; print it as an extended PBM file with
    :meth:`to_pbm`, or look at it as a tidy DataFrame with :meth:`to_frame`.

    Attributes
    ----------
    rules
        The evaluated :class:`~xplique_ext.rules.RuleSet`.
    mode
        ``unordered``, ``ordered`` or ``inter-class``.
    known, unknown
        :class:`ContingencyTables` over the examples whose tested attributes are all known,
        and over those with an unknown tested attribute.
    n_classes
        Number of classes (for the Laplace accuracy).
    names_file, data_file
        Written in the ``Names File:``/``Data File:`` line of the PBM output.
    """

    @validate_params(
        {
            "rules": RULES,
            "mode": MODE,
            "n_classes": [Interval(numbers.Integral, 1, None)],
            "known": [InstanceOf(ContingencyTables, description="a ContingencyTables")],
            "unknown": [InstanceOf(ContingencyTables, description="a ContingencyTables")],
            "names_file": [STRING, None],
            "data_file": [STRING, None],
        }
    )
    def __init__(
        self,
        rules: RuleSet,
        mode: str,
        known: ContingencyTables,
        unknown: ContingencyTables,
        n_classes: int = 2,
        names_file: Optional[str] = None,
        data_file: Optional[str] = None,
    ) -> None:
        self.rules = rules
        self.mode = mode
        self.known = known
        self.unknown = unknown
        self.n_classes = n_classes
        self.names_file = names_file
        self.data_file = data_file

    @validate_params({"table": [Options(("known", "unknown", "all"))]})
    def table(self, table: str = "known") -> ContingencyTables:
        """``"known"``, ``"unknown"`` or ``"all"`` (their sum)."""
        return self.known + self.unknown if table == "all" else getattr(self, table)

    def measures(self, table: str = "known", zero_division="warn") -> pd.DataFrame:
        """The rule measures (one row per rule, indexed by rule id)."""
        values = rule_measures(
            *self.table(table).as_array().T, n_classes=self.n_classes, zero_division=zero_division
        )
        return pd.DataFrame(values, index=pd.Index([r.id for r in self.rules], name="rule"))

    def to_frame(self, zero_division="warn", table: str = "known") -> pd.DataFrame:
        """Tidy table: one row per rule with the rule text, head, both contingency tables
        (counts and ``n``) and every measure (of the ``table`` chosen, known by default).

        Columns: ``rule, head, mode, condition, bh, bhbar, bbarhbar, bbarh, n,
        unknown_bh, unknown_bhbar, unknown_bbarhbar, unknown_bbarh, unknown_n`` then the
        measures of :data:`~xplique_ext.rules.MEASURES`.
        """
        rows: Dict[str, Any] = {
            "rule": [r.id for r in self.rules],
            "head": [r.head for r in self.rules],
            "mode": self.mode,
            "condition": [
                " OR ".join(" AND ".join(c.to_string() for c in conj) for conj in r.body)
                for r in self.rules
            ],
        }
        for prefix, t in (("", self.known), ("unknown_", self.unknown)):
            for cell in ("bh", "bhbar", "bbarhbar", "bbarh", "n"):
                rows[prefix + cell] = getattr(t, cell)
        measures = self.measures(table, zero_division).reset_index(drop=True)
        return pd.concat([pd.DataFrame(rows), measures], axis=1)

    def to_pbm(
        self, names_file: Optional[str] = None, data_file: Optional[str] = None, precision: int = 3
    ) -> str:
        """The rules in the extended PBM format of Fig. 8 (as ``std_info.pl`` prints them)."""
        return self.rules.to_string(
            self, names_file=names_file, data_file=data_file, precision=precision
        )

    def __repr__(self) -> str:
        return f"RuleEvaluation(mode={self.mode!r}, rules={len(self.rules)})"


# -- labels -------------------------------------------------------------------------------
def check_label_classes(heads: Sequence[Any], labels: Any, name: str) -> None:
    """Check labels a user passed against the classes the rule heads name (compared by
    :func:`~xplique_ext.rules.encoding.class_text`: numbers by their value, the head
    ``"1.0"`` matching the labels ``1.0``, ``1`` and ``"1"``): labels that share no class
    with the heads (0/1 labels for heads ``go``/``dont_go``) are a ``ValueError`` naming
    ``name``, the classes expected and those received; head classes the labels never hold
    are a warning naming them (their rules count no example with ``H`` true), issued at
    the user's line whatever the call depth."""
    expected = sorted({class_text(head) for head in heads})
    values = np.asarray(labels)
    if not expected or values.size == 0:
        return
    received = sorted(
        {class_text(v) for v in pd.unique(values.ravel()) if v is not None and v == v}
    )
    never = [c for c in expected if c not in set(received)]
    if len(never) == len(expected):
        raise ValueError(
            f"`{name}` share no class with the rule heads: expected labels among "
            f"{_shown(expected)}, got {_shown(received)}"
        )
    if never:
        warn(
            f"`{name}` never hold the class(es) {_shown(never)} that rule heads name (they "
            f"hold {_shown(received)}): those rules count no example with H true",
            XpliqueExtWarning,
        )


def _shown(classes: Sequence[str], most: int = 10) -> str:
    shown = ", ".join(repr(c) for c in classes[:most])
    return f"[{shown}, ... ({len(classes)} in all)]" if len(classes) > most else f"[{shown}]"


def _labelled(data: Dataset, labels: Any = None):
    """The examples with a known class, their classes (a ``pd.Categorical`` for a coded
    class column: no Python object per example, else an array) and how many were left
    out."""
    if labels is None:
        if not data.has_labels:
            raise ValueError(
                "`data` (or a chunk or partition of it) has no class column: pass "
                "`labels` with a Dataset, or give chunks and partitions a class column"
            )
        column = data.column(data.names.class_name)
        known = column.valid
        y = column.values
    else:
        y = np.asarray(labels)
        if y.shape != (data.n_examples,):
            raise ValueError(f"`labels` must have shape ({data.n_examples},), got {y.shape}")
        y = y if y.dtype.kind == "f" else y.astype(object)
        known = known_labels(y)
    if not known.all():
        data = data.take(np.flatnonzero(known))
        y = y[known]
    if labels is None and column.is_coded:
        y = pd.Categorical.from_codes(y, column.categories)
    return data, y, int(known.size - np.count_nonzero(known))


def _head_masks(compiled: Sequence[CompiledRule], y: Any) -> Dict[Any, np.ndarray]:
    """``H`` mask of every distinct head: the label is the head's class (compared as
    numbers for numeric labels, else by :func:`~xplique_ext.rules.encoding.class_text`, as
    :func:`check_label_classes` compares them; each distinct label is read once)."""
    heads = dict.fromkeys(rule.head for rule in compiled)
    if y.dtype.kind in "fiub":  # read as the data reader reads numbers (NaN: no match)
        return {head: y == pd.to_numeric(head, errors="coerce") for head in heads}
    codes, distinct = pd.factorize(y)
    classes = np.array([class_text(label) for label in distinct], dtype=object)
    # code -1 (a missing label, none after _labelled) reads the appended False
    return {head: np.append(classes == class_text(head), False)[codes] for head in heads}


# -- evaluation ---------------------------------------------------------------------------
def _blocks(compiled: Sequence[CompiledRule], mode: str) -> List[List[int]]:
    """The rules' blocks: one (unordered), one per rule (ordered), runs of one head."""
    k = range(len(compiled))
    if mode == "inter-class":

        def head(i: int) -> str:
            return compiled[i].head

        return [list(block) for _, block in itertools.groupby(k, head)]
    return [list(k)] if mode == "unordered" else [[i] for i in k]


@validate_params(
    {  # data (a Dataset, Dask DataFrame or chunks), the length of labels: below
        "rules": RULES,
        "mode": MODE,
        "names": NAMES_OR_NONE,
        "data": "no_validation",
        "labels": LABELS,
        "n_classes": [Interval(numbers.Integral, 1, None), None],
    }
)
def evaluate_rules(
    rules: RuleSet,
    data: Any,
    mode: str = "unordered",
    *,
    labels: Any = None,
    n_classes: Optional[int] = None,
    names: Optional[Names] = None,
) -> RuleEvaluation:
    """Count the contingency tables of every rule over the examples (vectorised).

    Parameters
    ----------
    rules
        The rule set; checked against ``data.names`` first (nothing is evaluated if a rule
        names an undeclared attribute or an invalid value).
    data
        The examples: a :class:`~xplique_ext.rules.Dataset`
        (:func:`~xplique_ext.rules.read_data`,
        :meth:`~xplique_ext.rules.Dataset.from_frame`...); or, for tables larger than
        memory, an iterable of chunks (``read_data(path, chunksize=N)``, or pandas
        DataFrames with ``names``) evaluated one after the other, or a
        ``dask.dataframe.DataFrame`` (with ``names``) whose partitions are evaluated in
        parallel by Dask's current scheduler (a ``distributed`` client when one is
        active).
    mode
        ``"unordered"`` (Algorithm 1, the default as in ``std_info.pl``), ``"ordered"``
        (Algorithm 2) or ``"inter-class"`` (Algorithm 3).
    labels
        Optional ``(N,)`` labels compared with the heads instead of the class column, for
        instance a black box's predictions (rule fidelity): str, numbers or bools (bytes
        are refused: decode them). Labels that share no class with the heads (compared
        as text, ``1.0`` matching ``"1"``) are refused; head classes they never hold are
        named in a warning. NaN, None and ``"?"`` (the unknown marker of ``.data`` files)
        are unknown labels: their examples are left out, as those of an unknown class.
    n_classes
        Classes for the Laplace accuracy (default: the size of the class domain, or the
        number of distinct labels).
    names
        The declarations of pandas DataFrame chunks or Dask partitions (columns named as
        the attributes; ``?``/``!`` strings or NaN for missing values). Not needed for
        :class:`~xplique_ext.rules.Dataset` chunks, which carry theirs.

    Returns
    -------
    RuleEvaluation
        Both tables per rule; ``.to_frame()`` adds the measures, ``.to_pbm()`` prints them.

    Notes
    -----
    See the module documentation for the semantics of unknown and not-applicable values
    and of the three modes. Examples whose class is unknown are left out (with a warning).

    Partitioned data: every mode, the ordered ones included, decides each example on its
    own (whether a rule counts it depends only on the rules before it, never on the other
    examples), so the contingency counts of row partitions add up. Each chunk or partition
    is encoded and counted on its own; the counts are summed and the measures computed
    once, from the sums. The result equals the in-memory one exactly. ``labels`` is only
    accepted with a :class:`~xplique_ext.rules.Dataset`. For the same reason, a data set or
    chunk of 200,000 examples or more is counted in row parts by one thread per core.

    Examples
    --------
    >>> from xplique_ext.rules import example_path, read_data, read_rules
    >>> data = read_data(example_path("voyage.test"))
    >>> rules = read_rules(example_path("voyage.cn2.unordered.pbm"))
    >>> result = evaluate_rules(rules, data, "unordered")
    >>> result.known.frequencies()[0].round(3).tolist()
    [0.25, 0.083, 0.417, 0.25, 12.0]
    >>> chunks = read_data(example_path("voyage.test"), chunksize=4)
    >>> evaluate_rules(rules, chunks, "unordered").known == result.known
    True
    """
    if not isinstance(data, Dataset):
        kind = _partitioned_kind(data)
        if labels is not None:
            raise ValueError(
                f"`labels` is only accepted with a Dataset, got a {kind}: put the "
                "labels to compare with the heads in the class column of the chunks "
                "instead"
            )
        if kind == "Dask DataFrame":
            from .on_dask import dask_counts

            parts, names, file = dask_counts(
                rules, data, mode, _names_required(names), _frame_counts
            )
        else:
            parts, names, file = _chunk_counts(rules, data, mode, names)
        return _summed(rules, mode, parts, n_classes, names, file)
    compiled, _ = compile_rules(rules, _as_dataset(data, names).names)
    part = _partition_counts(compiled, data, mode, labels, threads=True)
    return _summed(rules, mode, [part], n_classes, data.names, data.file, data.has_labels)


def _partitioned_kind(data: Any) -> str:
    """``"Dask DataFrame"`` or ``"iterable of chunks"`` (Dask is not imported)."""
    if type(data).__module__.split(".")[0] == "dask" and hasattr(data, "to_delayed"):
        return "Dask DataFrame"
    if hasattr(data, "__iter__") and not isinstance(
        data, (str, bytes, pd.DataFrame, pd.Series, np.ndarray, dict)
    ):
        return "iterable of chunks"
    raise TypeError(
        "`data` must be a Dataset (see read_data, Dataset.from_frame), a Dask "
        "DataFrame or an iterable of chunks (Datasets or pandas DataFrames), got "
        f"{type(data).__name__}"
    )


def _partition_counts(
    compiled, data: Dataset, mode: str, labels: Any = None, threads: bool = False
) -> dict:
    """Counts of one partition, the examples it left out and the labels it met; with
    ``threads``, its rows are counted in parts by one thread per core (NumPy releases the
    GIL; the counts of row parts add up)."""
    data, y, dropped = _labelled(data, labels)
    if labels is not None:
        check_label_classes([rule.head for rule in compiled], y, "labels")
    n_parts = 1
    if threads:
        n_parts = max(min(usable_cores(), data.n_examples // _ROWS_PER_THREAD), 1)
    bounds = np.linspace(0, data.n_examples, n_parts + 1).astype(int)  # one part: all rows (views)

    def count_rows(start: int, stop: int) -> np.ndarray:
        return _count(compiled, data._select(slice(start, stop)), y[start:stop], mode)

    with ThreadPoolExecutor(n_parts) as pool:
        counts = sum(pool.map(count_rows, bounds[:-1], bounds[1:]))
    return {"counts": counts, "dropped": dropped, "labels": set(pd.unique(y))}


#: The fewest examples a thread counts: a partition of 200,000 examples or more is split.
_ROWS_PER_THREAD = 100_000


def _summed(rules, mode, parts, n_classes, names: Names, file, declared=True) -> RuleEvaluation:
    """The evaluation of the summed counts of ``parts``; ``n_classes`` by default the size
    of the declared class domain (when ``declared``), else the number of labels met."""
    if not parts:  # no chunk: check the rules all the same
        compile_rules(rules, names)
    counts = sum((part["counts"] for part in parts), np.zeros((2, 4, len(rules)), np.int64))
    dropped = sum(part["dropped"] for part in parts)
    if dropped:
        warn(
            f"{dropped} example(s) with an unknown or not-applicable class are left out of "
            "the contingency tables",
            XpliqueExtWarning,
        )
    if n_classes is None:
        class_attribute = names.class_attribute
        domain = None if class_attribute is None else class_attribute.values
        if declared and domain is not None:
            n_classes = max(len(domain), 1)
        else:  # the classes met in the labels
            met = set().union(*(part["labels"] for part in parts))
            n_classes = max(len(met), 1)
    return RuleEvaluation(
        rules,
        mode,
        ContingencyTables(*counts[0]),
        ContingencyTables(*counts[1]),
        n_classes=n_classes,
        names_file=names.file,
        data_file=file,
    )


def _count(compiled: Sequence[CompiledRule], data: Dataset, y: Any, mode: str) -> np.ndarray:
    """``(2, 4, n_rules)`` counts: (known, unknown) x (bh, bhbar, bbarh, bbarhbar)."""
    counts = np.zeros((2, 4, len(compiled)), dtype=np.int64)
    n = data.n_examples
    heads = _head_masks(compiled, y)
    head_totals = {k: int(np.count_nonzero(v)) for k, v in heads.items()}
    blocks = _blocks(compiled, mode)
    alive = None if mode == "unordered" else np.ones(n, dtype=bool)
    current = data  # examples still to decide (ordered modes compact it as rules fire)
    cache = MaskCache(compiled, current)
    both = np.empty(n, dtype=bool)  # scratch: body and head
    for b, block in enumerate(blocks):
        if alive is not None and np.count_nonzero(alive) < current.n_examples // 2:
            # Compact: rules below only see the examples no earlier rule covered for certain;
            # the others enter their known tables through the totals n and h only.
            keep = np.flatnonzero(alive)
            remaining = [compiled[k] for blk in blocks[b:] for k in blk]
            current = current._select(
                keep, list(dict.fromkeys(a for r in remaining for a in r.attributes))
            )
            heads = {h: m[keep] for h, m in heads.items()}
            alive = np.ones(keep.size, dtype=bool)
            both = both[: keep.size]
            cache = MaskCache(remaining, current)
        fired = None
        for k in block:
            rule = compiled[k]
            h_mask = heads[rule.head]
            u_rows = cache.unknown_rows(rule.attributes)
            if alive is not None and u_rows.size:
                u_rows = u_rows[alive[u_rows]]
            certain, possible = cache.body(rule, u_rows)
            # covered for certain (and not yet fired, in the ordered modes)
            counted = certain if alive is None else np.logical_and(certain, alive, out=certain)
            b_all = int(np.count_nonzero(counted))
            bh_all = int(np.count_nonzero(np.logical_and(counted, h_mask, out=both)))
            h_u = h_mask[u_rows]
            b_u_certain = counted[u_rows]
            b_k = b_all - int(np.count_nonzero(b_u_certain))
            bh_k = bh_all - int(np.count_nonzero(b_u_certain & h_u))
            h_k = head_totals[rule.head] - int(np.count_nonzero(h_u))
            counts[0, :, k] = (bh_k, b_k - bh_k, h_k - bh_k, n - u_rows.size - b_k - h_k + bh_k)
            b_u = int(np.count_nonzero(possible))
            h_uc = int(np.count_nonzero(h_u))
            bh_u = int(np.count_nonzero(possible & h_u))
            counts[1, :, k] = (bh_u, b_u - bh_u, h_uc - bh_u, u_rows.size - b_u - h_uc + bh_u)
            if alive is not None:  # ordered: blocks of one rule
                fired = counted if fired is None else np.logical_or(fired, counted, out=fired)
            del certain, counted
        if fired is not None:
            np.logical_xor(alive, fired, out=alive)
    return counts


# -- chunks -------------------------------------------------------------------------------
def _as_dataset(chunk: Any, names: Optional[Names]) -> Dataset:
    """A chunk as a Dataset (a DataFrame is encoded against ``names``)."""
    if isinstance(chunk, Dataset):
        if names is not None and chunk.names != names:  # name the first declaration that differs
            got, expected = next(
                (a, b)
                for a, b in itertools.zip_longest(
                    [chunk.names.class_name, *chunk.names.attributes],
                    [names.class_name, *names.attributes],
                )
                if a != b
            )
            raise ValueError(
                "`data` (every chunk of it) must have the same declarations as "
                f"`names` (or the first chunk): {got!r} instead of {expected!r}"
            )
        return chunk
    if not isinstance(chunk, pd.DataFrame):
        raise TypeError(
            f"each chunk must be a Dataset or a pandas DataFrame, got {type(chunk).__name__}"
        )
    return Dataset.from_frame(chunk, _names_required(names))


def _names_required(names: Optional[Names]) -> Names:
    if names is None:
        raise ValueError(
            "`names` is required with a Dask DataFrame or pandas DataFrame chunks "
            "(read it with read_names, or build it with Names.infer on a sample): "
            "the domains must be the same in every chunk or partition"
        )
    return names


def _chunk_counts(rules: RuleSet, chunks: Iterable, mode: str, names: Optional[Names]):
    """Counts of each chunk, in sequence (one chunk in memory at a time)."""
    parts = []
    compiled = None
    file = None
    for chunk in chunks:
        data = _as_dataset(chunk, names)
        if compiled is None:
            names = data.names
            file = data.file
            compiled, _ = compile_rules(rules, names)
        parts.append(_partition_counts(compiled, data, mode, threads=True))
        del data, chunk
    if compiled is None and names is None:  # no chunk: the rules are checked by _summed
        raise ValueError("`data` holds no chunk, and no `names` were given")
    return parts, names, file


def _frame_counts(rules: RuleSet, frame: pd.DataFrame, mode: str, names: Names) -> dict:
    """The counts of a DataFrame partition (a Dask task), encoded against ``names``."""
    return _partition_counts(compile_rules(rules, names)[0], _as_dataset(frame, names), mode)


def _frame_predictions(frame: pd.DataFrame, rules, names, mode, weights, missing) -> pd.Series:
    """The predictions of a DataFrame partition (a Dask task), on its index."""
    values = predict_rules(rules, _as_dataset(frame, names), mode, weights=weights, missing=missing)
    return pd.Series(values, index=frame.index, dtype=values.dtype)


# -- predictions --------------------------------------------------------------------------
def _possible_masks(compiled: Sequence[CompiledRule], data: Dataset) -> List[np.ndarray]:
    """Whether each rule covers each example, a test on an unknown value being true."""
    cache = MaskCache(compiled, data)
    masks = []
    for rule in compiled:
        rows = cache.unknown_rows(rule.attributes)
        covered, possible = cache.body(rule, rows)
        covered[rows] = possible
        masks.append(covered)
    return masks


@validate_params({"rules": RULES, "data": [InstanceOf(Dataset, description="a Dataset")]})
def covered_mask(rules: RuleSet, data: Dataset) -> np.ndarray:
    """``(N,)``: whether at least one rule (DEFAULT excluded) covers each example (a test
    on an unknown value counting as true)."""
    compiled, _ = compile_rules(rules, data.names)
    return np.logical_or.reduce(_possible_masks(compiled, data) + [np.zeros(len(data), bool)])


@validate_params(
    {  # data (a Dataset, Dask DataFrame or chunks): below; missing: any value
        "rules": RULES,
        "mode": MODE,
        "names": NAMES_OR_NONE,
        "data": "no_validation",
        "weights": [
            ArrayLike(
                "real",
                ndim=1,
                dtype=np.float64,
                batch_hint=False,  # one per rule
                within=Interval(numbers.Real, 0, None),
            ),
            None,
        ],
        "missing": "no_validation",
    }
)
def predict_rules(
    rules: RuleSet,
    data: Dataset,
    mode: str = "ordered",
    *,
    weights: Optional[Sequence[float]] = None,
    missing: Any = None,
    names: Optional[Names] = None,
) -> Any:
    """Predictions of a rule set.

    Parameters
    ----------
    rules
        The rule set (heads are class labels, or numbers for a numeric class).
    data
        The examples.
    mode
        ``"ordered"`` and ``"inter-class"``: the first rule that covers the example
        decides (for inter-class sets this is the first block with a covering rule, whose
        rules all share one head). ``"unordered"``: a vote among the covering rules; each
        rule votes for its head with its weight (1 by default, see ``weights``); the head
        with the largest total wins, ties going to the head of the earliest covering rule.
        For numeric heads the prediction is the weighted mean of the covering heads.
    weights
        ``(n_rules,)`` non-negative vote weights for ``"unordered"`` (for instance the
        Laplace accuracy of each rule on training data); a rule of weight 0 does not
        vote. Checked when called, chunks included.
    missing
        Prediction for an example no rule covers when there is no DEFAULT rule (None,
        or NaN for numeric heads).
    names
        The declarations, for a Dask DataFrame or pandas DataFrame chunks (see
        :func:`evaluate_rules`).

    Returns
    -------
    np.ndarray, dask Series or iterator of np.ndarray
        ``(N,)`` predictions: an object array of labels, or floats for numeric heads. For
        a ``dask.dataframe.DataFrame``, a lazy Dask series with the same partitions and
        index; for an iterable of chunks, an iterator of one array per chunk.

    Notes
    -----
    A condition on an unknown value counts as true (the report's convention); on a
    not-applicable value as false. Examples no rule covers get the DEFAULT rule's head.
    """
    if weights is not None and mode != "unordered":
        raise ValueError("`weights` is only used with mode='unordered'")
    if weights is not None and weights.shape != (len(rules.rules),):
        raise ValueError(
            f"`weights` must hold one number per rule ({len(rules.rules)}), got {weights.size}"
        )
    if not isinstance(data, Dataset):
        if _partitioned_kind(data) == "Dask DataFrame":
            from .on_dask import dask_predictions

            return dask_predictions(
                _frame_predictions, data, rules, _names_required(names), mode, weights, missing
            )
        return (
            predict_rules(rules, _as_dataset(chunk, names), mode, weights=weights, missing=missing)
            for chunk in data
        )
    compiled, default = compile_rules(rules, data.names)
    masks = _possible_masks(compiled, data)
    attribute = data.names.class_attribute
    fill = missing if default is None else default
    # numeric heads (typed_head gives floats) predict their mean
    numeric = (
        attribute is not None and attribute.is_numeric and (bool(compiled) or default is not None)
    )
    out = np.empty(len(data), dtype=np.float64 if numeric else object)
    if not numeric:
        out.fill(fill)
    elif fill is None:
        out.fill(float("nan"))
    else:
        out.fill(float(fill))
    if mode == "unordered":
        return _vote(
            compiled, masks, np.ones(len(compiled)) if weights is None else weights, out, numeric
        )
    for rule, mask in zip(compiled[::-1], masks[::-1]):  # the first covering rule, written last
        out[mask] = rule.head
    return out


def _vote(compiled, masks, weights, out: np.ndarray, numeric: bool = False) -> np.ndarray:
    """Unordered predictions written into ``out``: the weighted mean of the covering
    heads (numeric heads), or the class with the largest total weight of covering rules
    (ties to the class of the first such rule). A rule of weight 0 does not vote; the
    weights are divided by the largest, so that no sum overflows."""
    n = len(out)
    keep = np.flatnonzero(weights > 0)
    compiled = [compiled[k] for k in keep]
    masks = [masks[k] for k in keep]
    weights = weights[keep] / weights.max(initial=0.0)
    if numeric:
        total = np.zeros(n)
        weight = np.zeros(n)
        for rule, mask, w in zip(compiled, masks, weights):
            total += mask * (w * rule.head)
            weight += mask * w
        return np.divide(total, weight, out=out, where=weight > 0)
    classes = list(dict.fromkeys(r.head for r in compiled))
    scores = np.zeros((n, len(classes)))
    for rule, mask, w in zip(compiled, masks, weights):
        scores[:, classes.index(rule.head)] += mask * w
    best = scores.max(axis=1, initial=0.0)
    # the first covering rule whose class has the best score wins (it is written last)
    for rule, mask in zip(compiled[::-1], masks[::-1]):
        out[mask & (scores[:, classes.index(rule.head)] == best)] = rule.head
    return out


# -- class interface ----------------------------------------------------------------------
class RuleMetrics(BaseMetric):
    """Contingency tables and measures of a rule set (a model-free metric).

    Parameters
    ----------
    rules
        The rule set (:func:`~xplique_ext.rules.read_rules`, or
        :func:`~xplique_ext.rules.tree_to_rules` for a scikit-learn tree).
    mode
        ``"unordered"``, ``"ordered"`` or ``"inter-class"`` (see :func:`evaluate_rules`).
    zero_division
        Value of an undefined measure: ``"warn"`` (NaN with an ``UndefinedScoreWarning``),
        ``"nan"`` or a number.
    measure
        The measure :meth:`detailed_evaluate` gives per rule and :meth:`evaluate`
        averages over the rules (default ``"WRAcc"``).

    Notes
    -----
    ``detailed_evaluate`` gives ``measure`` for each rule (an ndarray (R,), the DEFAULT
    rule excluded); ``evaluate`` its NaN-aware mean over the rules, with one warning when
    rules are skipped. ``details`` gives the whole table, one row per rule (both
    contingency tables, every measure of :func:`~xplique_ext.rules.rule_measures`, and
    ``score``, the chosen measure). ``higher_is_better`` is the direction
    :data:`~xplique_ext.rules.measures.HIGHER_IS_BETTER` declares for ``measure`` (higher
    is better for every measure but ``Err`` and ``Chi2_p``).

    Examples
    --------
    >>> from xplique_ext.rules import example_path, read_data, read_rules
    >>> data = read_data(example_path("voyage.test"))
    >>> rules = read_rules(example_path("voyage.c45rules.pbm"))
    >>> metric = RuleMetrics(rules, mode="inter-class", measure="Acc")
    >>> metric.detailed_evaluate(data).tolist()
    [1.0, 1.0, 1.0]
    >>> metric.details(data)[["rule", "bh", "bhbar", "Acc"]].head(1)
        rule  bh  bhbar  Acc
    0  R0001   3      0  1.0
    >>> metric
    RuleMetrics(mode='inter-class', measure='Acc')
    """

    higher_is_better = True
    _data_params = ("rules",)

    @validate_params(
        {
            "rules": RULES,
            "mode": MODE,
            "measure": [Options(MEASURES)],
            "zero_division": ZERO_DIVISION,
        }
    )
    def __init__(
        self,
        rules: RuleSet,
        mode: str = "unordered",
        *,
        zero_division="warn",
        measure: str = "WRAcc",
    ) -> None:
        self.rules = rules
        self.mode = mode
        self.measure = measure
        self.zero_division = zero_division
        self.higher_is_better = HIGHER_IS_BETTER[measure]

    def detailed_evaluate(self, data: Dataset, labels: Any = None) -> np.ndarray:
        """``measure`` for each rule, a float ndarray (R,) (NaN where it is undefined and
        ``zero_division`` is ``"warn"`` or ``"nan"``)."""
        evaluation = evaluate_rules(self.rules, data, self.mode, labels=labels)
        policy = "nan" if self.zero_division == "warn" else self.zero_division
        values = evaluation.measures("known", policy)[self.measure].to_numpy(dtype=np.float64)
        undefined = np.isnan(values)
        if self.zero_division == "warn" and undefined.any():
            ids = [r.id for r, bad in zip(evaluation.rules, undefined) if bad]
            warn(
                f"{self.measure} is undefined for {len(ids)} of {len(values)} rules "
                f"{_shown(ids, 5)}: a denominator of the measure is 0 in their known contingency "
                "table",
                UndefinedScoreWarning,
            )
        return values

    def details(self, data: Dataset, labels: Any = None) -> pd.DataFrame:
        """Tidy DataFrame, one row per rule (see :meth:`RuleEvaluation.to_frame`), with a
        ``score`` column: ``measure``."""
        frame = evaluate_rules(self.rules, data, self.mode, labels=labels).to_frame(
            self.zero_division
        )
        return frame.assign(score=frame[self.measure])
