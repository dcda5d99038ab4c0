"""The data model (:mod:`xplique_ext.rules.dataset`): :class:`Dataset` from
DataFrames and arrays, and its declared parameters."""

import numpy as np
import pandas as pd
import pytest

from tests.rules.sklearn_tables import frame_of
from xplique_ext.commons.params import parameter_constraints
from xplique_ext.rules import (
    Attribute,
    Column,
    ContingencyTables,
    DataParseError,
    Dataset,
    Names,
    RuleEvaluation,
    evaluate_rules,
    example_path,
    read_data,
    read_data_dask,
    read_names,
    read_rules,
)

X = Attribute("x", "real")


def _column(n=3):
    """A Column of ``n`` known real values of the attribute ``X``."""
    return Column(X, np.arange(n, dtype=np.float64), None, np.zeros(n, bool), np.zeros(n, bool))


# -- DataFrames ------------------------------------------------------------------------------------
def test_dataframe_input():
    names = read_names(example_path("voyage.names"))
    voyage = read_data(example_path("voyage.test"))
    frame = voyage.to_frame()
    from_frame = Dataset.from_frame(frame, names)
    rules = read_rules(example_path("voyage.cn2.unordered.pbm"))
    assert evaluate_rules(rules, from_frame).known == evaluate_rules(rules, voyage).known
    # NaN / None as unknown too, numeric dtypes kept
    nan_frame = voyage.to_frame(missing=None)
    assert nan_frame["humidity"].dtype == float
    assert (
        evaluate_rules(rules, Dataset.from_frame(nan_frame, names)).unknown
        == evaluate_rules(rules, voyage).unknown
    )
    # the user's frame is not modified
    before = frame.copy()
    Dataset.from_frame(frame, names)
    pd.testing.assert_frame_equal(frame, before)


def test_dataframe_errors():
    names = read_names(example_path("voyage.names"))
    frame = read_data(example_path("voyage.test")).to_frame()
    bad = frame.copy()
    bad.loc[3, "outlook"] = "foggy"
    with pytest.raises(DataParseError, match=r"outside the declared domain .*'outlook' \(row 4"):
        Dataset.from_frame(bad, names)
    bad = frame.copy()
    bad.loc[0, "temperature"] = "hot"
    with pytest.raises(DataParseError, match="non-numeric value for attribute 'temperature'"):
        Dataset.from_frame(bad, names)
    with pytest.raises(ValueError, match="lacks the declared columns"):
        Dataset.from_frame(frame.drop(columns=["windy"]), names)
    with pytest.raises(ValueError, match="not declared"):
        Dataset.from_frame(frame.assign(extra=1), names)
    with pytest.raises(TypeError, match="`frame`"):
        Dataset.from_frame(frame.to_numpy(), names)


def test_iris_frame_values_unchanged():
    frame = frame_of("iris")
    copy = frame.copy()
    Dataset.from_frame(frame, class_name="class")
    pd.testing.assert_frame_equal(frame, copy)


def test_from_frame_names_repeated_columns():
    frame = pd.DataFrame([[1.0, 2.0, "a"]], columns=["x", "x", "c"])
    for kwargs in ({}, {"class_name": "c"}):
        with pytest.raises(ValueError, match=r"`frame` must have distinct column names.*'x'"):
            Dataset.from_frame(frame, **kwargs)  # was AttributeError: no attribute 'dtype'


# -- arrays ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("features", [np.array([["a", "b"]]), np.array([[1j, 1.0]])])
def test_from_arrays_names_non_real_features(features):
    with pytest.raises(TypeError, match="`features` must hold real numbers"):
        Dataset.from_arrays(features, np.array(["a"]))  # were float() error / imaginary dropped
    data = Dataset.from_arrays(np.array([[1, None]], dtype=object), np.array(["a"]))
    assert np.isnan(data.columns["x1"].values[0])  # None stays an unknown value


# -- declared parameters ---------------------------------------------------------------------------
def test_every_data_model_entry_point_is_declared():
    for entry in (Column, Dataset, ContingencyTables, RuleEvaluation, read_data_dask):
        assert parameter_constraints(entry) is not None, entry


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
