"""A per-example, per-rule loop that follows Algorithms 1, 2 and 3 of the report.

It exists to check :func:`~xplique_ext.rules.evaluate_rules` (the tests compare both on
random data) and as the baseline of ``benchmarks/rules.py``. Do not use it on large data:
it runs the Python interpreter once per example and per rule.

The loop reads the decoded values of each example (strings, floats, and markers for
``?`` and ``!``) and applies each rule with Python comparisons, independently of the
vectorised code's masks and codes. Two places of the pseudo-code are read with the
meaning the report's prose gives them:

- Algorithm 2's ``until r doesn't cover t`` stops, as the text says, at the first rule
  that covers ``t`` (here: covers it for certain, see the T2/T9 discussion);
- Algorithm 3's inner ``else: update info`` cannot be reached as printed; the text says
  that once a rule of block ``i`` covers the example the rules of the following blocks
  are updated (counted as not covering it), which is what this loop does.
"""

from __future__ import annotations

from typing import Any, List, Optional, Sequence, Tuple

import numpy as np
import pandas as pd

from xplique_ext.rules.compile import COMPARISONS, CompiledCondition, CompiledRule
from xplique_ext.rules.dataset import Dataset
from xplique_ext.rules.encoding import label_text
from xplique_ext.rules.evaluation import (
    ContingencyTables,
    RuleEvaluation,
    _blocks,
    _labelled,
    check_label_classes,
    compile_rules,
)
from xplique_ext.rules.pbm import RuleSet

__all__ = ["evaluate_rules_loop"]


class _Unknown:
    def __repr__(self) -> str:
        return "?"


class _NotApplicable:
    def __repr__(self) -> str:
        return "!"


UNKNOWN = _Unknown()
NOT_APPLICABLE = _NotApplicable()


def _rows(data: Dataset, attributes: Sequence[str]) -> List[dict]:
    columns = {}
    for name in attributes:
        column = data.column(name)
        if column.is_coded:
            values = [column.categories[c] if c >= 0 else None for c in column.values.tolist()]
        else:
            values = column.values.tolist()
        unknown = column.unknown.tolist()
        not_applicable = column.not_applicable.tolist()
        columns[name] = [
            UNKNOWN if u else (NOT_APPLICABLE if na else v)
            for v, u, na in zip(values, unknown, not_applicable)
        ]
    return [{name: columns[name][i] for name in attributes} for i in range(data.n_examples)]


def _compare(left: Any, op: str, right: Any) -> bool:
    return bool(COMPARISONS[op](left, right))


def _test(condition: CompiledCondition, example: dict, data: Dataset) -> Tuple[bool, bool]:
    """(possibly true, certainly true) for one example."""
    values = [example[a] for a in condition.attributes]
    if any(v is NOT_APPLICABLE for v in values):
        return False, False
    if any(v is UNKNOWN for v in values):
        return True, False
    if condition.terms:
        total = 0.0
        for k, (coefficient, name) in enumerate(condition.terms):
            term = coefficient * example[name]
            total = term if k == 0 else total + term
        result = _compare(total, condition.operator, condition.value)
        return result, result
    value = values[0]
    attribute = data.names[condition.attributes[0]]
    if condition.operator == "in":
        result = value in condition.value
    elif attribute.type == "enumerated" and condition.operator in ("<", "<=", ">", ">="):
        order = {v: i for i, v in enumerate(attribute.values)}
        result = _compare(order[value], condition.operator, order[condition.value])
    else:
        result = _compare(value, condition.operator, condition.value)
    return result, result


def _apply(rule: CompiledRule, example: dict, data: Dataset) -> Tuple[bool, bool, bool]:
    """apply(r, t): (covers with ? as true, covers for certain, tested attribute unknown)."""
    possible = certain = False
    for conjunction in rule.body:
        all_possible = all_certain = True
        for condition in conjunction:
            p, c = _test(condition, example, data)
            all_possible &= p
            all_certain &= c
        possible |= all_possible
        certain |= all_certain
    has_unknown = any(example[a] is UNKNOWN for a in rule.attributes)
    return possible, certain, has_unknown


def _n_classes(data: Dataset, labels: list) -> int:
    """The size of the declared class domain, else the number of distinct labels."""
    attribute = data.names.class_attribute
    if attribute is not None and attribute.values is not None and data.has_labels:
        return max(len(attribute.values), 1)
    return max(len(set(labels)), 1)


def evaluate_rules_loop(
    rules: RuleSet,
    data: Dataset,
    mode: str = "unordered",
    *,
    labels: Any = None,
    n_classes: Optional[int] = None,
) -> RuleEvaluation:
    """Same result as :func:`~xplique_ext.rules.evaluate_rules`, one example at a time.

    Examples
    --------
    >>> from xplique_ext.rules import load_voyage, evaluate_rules
    >>> rules, data = load_voyage("inter-class")
    >>> evaluate_rules_loop(rules, data, "inter-class").known == evaluate_rules(
    ...     rules, data, "inter-class").known
    True
    """
    compiled, _ = compile_rules(rules, data.names)
    data, y, _ = _labelled(data, labels)
    y = np.asarray(y, dtype=object) if isinstance(y, pd.Categorical) else y
    if labels is not None:
        check_label_classes([rule.head for rule in compiled], y, "labels")
    attributes = list(dict.fromkeys(a for r in compiled for a in r.attributes))
    examples = _rows(data, attributes)
    numeric = y.dtype.kind in "fiub"
    if numeric:
        y_list = y.astype(np.float64).tolist()
    else:
        y_list = list(y)
    heads = []
    for rule in compiled:
        if numeric:
            try:
                heads.append(float(rule.head))
            except (TypeError, ValueError):
                heads.append(None)
        else:
            heads.append(rule.head if isinstance(rule.head, str) else label_text(rule.head))
    block_of = {}
    for b, block in enumerate(_blocks(compiled, mode)):
        for k in block:
            block_of[k] = b
    # counts[table][k] = [bh, bhbar, bbarh, bbarhbar]
    counts = [[[0, 0, 0, 0] for _ in compiled] for _ in range(2)]

    def count_info(k: int, covers: bool, table: int, label: Any) -> None:
        h = label == heads[k]
        cell = (0 if h else 1) if covers else (2 if h else 3)
        counts[table][k][cell] += 1

    def update_info(k: int, label: Any) -> None:
        counts[0][k][2 if label == heads[k] else 3] += 1

    for t, example in enumerate(examples):  # Algorithms 1-3: for all t in T
        label = y_list[t]
        if mode == "unordered":
            for k, rule in enumerate(compiled):
                covers, _, has_unknown = _apply(rule, example, data)
                count_info(k, covers, int(has_unknown), label)
        elif mode == "ordered":
            fired = False
            for k, rule in enumerate(compiled):
                if fired:
                    update_info(k, label)
                    continue
                covers, certain, has_unknown = _apply(rule, example, data)
                count_info(k, covers, int(has_unknown), label)
                fired = certain
        else:
            fired_block = None
            for k, rule in enumerate(compiled):
                if fired_block is not None and block_of[k] > fired_block:
                    update_info(k, label)
                    continue
                covers, certain, has_unknown = _apply(rule, example, data)
                count_info(k, covers, int(has_unknown), label)
                if certain and fired_block is None:
                    fired_block = block_of[k]
    tables = []
    for table in counts:
        array = np.asarray(table, dtype=np.int64).reshape(len(compiled), 4)
        tables.append(ContingencyTables(array[:, 0], array[:, 1], array[:, 2], array[:, 3]))
    return RuleEvaluation(
        rules,
        mode,
        tables[0],
        tables[1],
        n_classes=_n_classes(data, y_list) if n_classes is None else n_classes,
        names_file=data.names.file,
        data_file=data.file,
    )


def parse_exact(text: str, names, file: str = "<string>") -> Dataset:
    """``text`` read by the ``.data`` exact reader alone (the fast reader's reference)."""
    import io

    from xplique_ext.rules import datafile

    handle = io.StringIO(text.lstrip("\ufeff"), newline="")
    bound = datafile._records_bound(len(text.encode(errors="surrogatepass")), names)
    return datafile._concat(datafile._exact_parts(handle, names, file), names, file, bound)
