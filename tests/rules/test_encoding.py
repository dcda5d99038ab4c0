"""The encoding of values (:mod:`xplique_ext.rules.encoding`): :class:`Column`,
and the columns of a DataFrame encoded without a Python object per value."""

import numpy as np
import pytest

from xplique_ext.rules import (
    Attribute,
    Column,
    DataParseError,
    Dataset,
    example_path,
    read_data,
    read_names,
)

# -- Column ----------------------------------------------------------------------------------------
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


# -- DataFrame columns: categoricals and Arrow strings ---------------------------------------------
def test_dataframe_categorical_and_arrow_string_columns():
    """Categoricals and Arrow strings are encoded without one object per value, with the
    same result and the same errors (row named) as object columns."""
    names = read_names(example_path("voyage.names"))
    frame = read_data(example_path("voyage.test")).to_frame()
    plain = Dataset.from_frame(frame, names)
    typed = frame.astype({"outlook": "category", "windy": "category", "voyage": "category"})
    typed = typed.astype({"temperature": "string[pyarrow]", "humidity": "string[pyarrow]"})
    typed.loc[0, "outlook"] = np.nan  # NaN: unknown, as in an object column
    fast = Dataset.from_frame(typed, names)
    for name in names.column_names:
        a, b = plain.column(name), fast.column(name)
        expected_unknown = a.unknown.copy()
        if name == "outlook":
            expected_unknown[0] = True
        np.testing.assert_array_equal(b.unknown, expected_unknown)
        keep = ~expected_unknown
        np.testing.assert_array_equal(a.values[keep], b.values[keep])
    bad = typed.copy()
    bad["outlook"] = bad["outlook"].cat.add_categories(["foggy"])
    bad.loc[3, "outlook"] = "foggy"
    with pytest.raises(DataParseError, match=r"outside the declared domain .*'outlook' \(row 4"):
        Dataset.from_frame(bad, names)
    bad = typed.copy()
    bad.loc[5, "humidity"] = "wet"
    with pytest.raises(DataParseError, match=r"non-numeric value for attribute 'humidity' \(row 6"):
        Dataset.from_frame(bad, names)
