"""Issue 15, design point 1, for the rules' data model: ``Column``, ``Dataset``,
``ContingencyTables``, ``RuleEvaluation`` and ``read_data_dask`` declare their parameters
(``tests/test_params_generated.py`` feeds every declared constraint an invalid value).
Here: the relations between arguments that a declaration cannot state, the conversions the
declarations do, and that the arrays of a Column are taken as they are (no copy)."""

import numpy as np
import pandas as pd
import pytest

from xplique_ext.commons.params import parameter_constraints
from xplique_ext.rules import (
    Column,
    ContingencyTables,
    Dataset,
    RuleEvaluation,
    evaluate_rules,
    load_voyage,
    read_data_dask,
)
from xplique_ext.rules.names import Attribute, Names

X = Attribute("x", "real")


def _column(n=3, **changes):
    parts = dict(
        attribute=X,
        values=np.arange(n, dtype=np.float64),
        categories=None,
        unknown=np.zeros(n, dtype=bool),
        not_applicable=np.zeros(n, dtype=bool),
    )
    parts.update(changes)
    return Column(**parts)


def test_every_data_model_entry_point_is_declared():
    for entry in (Column, Dataset, ContingencyTables, RuleEvaluation, read_data_dask):
        assert parameter_constraints(entry) is not None, entry


def test_a_column_keeps_its_arrays_without_copying():
    values, unknown = np.arange(4.0), np.array([False, True, False, False])
    column = _column(4, values=values, unknown=unknown)
    assert column.values is values and column.unknown is unknown
    assert column.has_unknown and column.unknown_index.tolist() == [1]


def test_a_column_refuses_masks_that_are_not_boolean_or_of_another_length():
    with pytest.raises(TypeError, match=r"`unknown` must be .*booleans.*, got dtype float64"):
        _column(unknown=np.zeros(3))
    with pytest.raises(ValueError, match=r"`not_applicable` must be a mask of shape \(3,\)"):
        _column(not_applicable=np.zeros(2, dtype=bool))
    with pytest.raises(TypeError, match="`values` must be .*, got dtype <U1"):
        _column(values=np.array(["a", "b", "c"]))
    with pytest.raises(ValueError, match=r"`values` must be an array of rank 1, got shape"):
        _column(values=np.zeros((3, 1)))


def test_a_dataset_refuses_a_value_that_is_not_a_column():
    names = Names([X], None)
    with pytest.raises(TypeError, match=r"`columns\['x'\]` must be a Column, got \[1.0, 2.0\]"):
        Dataset(names, {"x": [1.0, 2.0]})
    with pytest.raises(TypeError, match="`names` must be a Names object, got"):
        Dataset(["x"], {"x": _column()})
    assert len(Dataset(names, {"x": _column()})) == 3


def test_the_dataset_constructors_declare_their_parameters():
    with pytest.raises(TypeError, match="`frame` must be a pandas DataFrame, got"):
        Dataset.from_frame({"x": [1.0]})
    with pytest.raises(TypeError, match="`names` must be a Names object or None, got"):
        Dataset.from_frame(pd.DataFrame({"x": [1.0]}), names="x.names")
    with pytest.raises(ValueError, match=r"`features` must be an array of shape \(N, F\), got"):
        Dataset.from_arrays(np.zeros(3))
    with pytest.raises(ValueError, match=r"`labels` must have shape \(3,\)"):
        Dataset.from_arrays(np.zeros((3, 2)), np.zeros(2))


def test_contingency_tables_are_counts_of_one_length():
    tables = ContingencyTables([1, 2], np.array([0, 0], dtype=np.int32), [3, 4], [5, 6])
    assert tables.bhbar.dtype == np.int64 and tables.n.tolist() == [9, 12]
    with pytest.raises(ValueError, match=r"`bh` must be integers >= 0, got -1"):
        ContingencyTables([-1, 2], [0, 0], [0, 0], [0, 0])
    with pytest.raises(TypeError, match=r"`bbarh` must be an array of integers, got dtype float"):
        ContingencyTables([1], [1], [0.5], [1])
    with pytest.raises(ValueError, match="must have one count per rule each"):
        ContingencyTables([1, 2], [0], [0, 0], [0, 0])


def test_a_rule_evaluation_declares_its_parts_and_its_table_choice():
    rules, data = load_voyage("ordered")
    evaluation = evaluate_rules(rules, data, mode="ordered")
    again = RuleEvaluation(
        rules, "ordered", evaluation.known, evaluation.unknown, n_classes=np.int64(2)
    )
    assert again.n_classes == 2 and type(again.n_classes) is int
    assert again.table("all") == evaluation.known + evaluation.unknown
    with pytest.raises(ValueError, match=r"`table` must be one of .*, got 'both'"):
        evaluation.table("both")
    with pytest.raises(TypeError, match="`known` must be a ContingencyTables, got"):
        RuleEvaluation(rules, "ordered", evaluation.known.as_array(), evaluation.unknown)


def test_read_data_dask_checks_its_parameters_before_importing_dask():
    with pytest.raises(ValueError, match="`blocksize` must be >= 1 or a string, got 0"):
        read_data_dask("voyage.data", blocksize=0)
    with pytest.raises(TypeError, match="`path` must be a path"):
        read_data_dask(3)


def test_a_rule_set_refuses_an_item_that_is_not_a_rule():
    from xplique_ext.rules import Rule, RuleSet

    rule = Rule("R1", (), "go", is_default=True)
    with pytest.raises(TypeError, match="`rules` must hold Rule objects, got str"):
        RuleSet(["R1", rule])
