"""The encoding of values (:mod:`xplique_ext.rules.encoding`): :class:`Column`,
and the columns of a DataFrame encoded without a Python object per value."""

import numpy as np
import pandas as pd
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
from xplique_ext.rules.encoding import (
    FALSE_TEXTS,
    NOT_APPLICABLE_CODE,
    TRUE_TEXTS,
    UNKNOWN_CODE,
    EncodingRefused,
    class_text,
    code_dtype,
    encode_distinct,
    encode_numeric_text,
    encode_series,
    encode_values,
    label_text,
    number_rules,
    parse_numbers,
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


# -- the exact encoder -------------------------------------------------------------------------
def test_missing_values_are_coded_apart_and_masked():
    nominal = Attribute("n", "nominal", ("a", "b"))
    column = encode_values(nominal, np.array(["b", " ? ", "!", "a"], dtype=object), np.arange(4))
    assert column.categories == ("a", "b")
    assert column.values.tolist() == [1, UNKNOWN_CODE, NOT_APPLICABLE_CODE, 0]
    assert column.values.dtype == np.int8
    assert column.unknown.tolist() == [False, True, False, False]
    assert column.not_applicable.tolist() == [False, False, True, False]
    assert column.decoded("-").tolist() == ["b", "-", "-", "a"]


def test_numbers_dates_times_and_booleans_are_read_once_for_every_reader():
    texts = {
        "integer": (["3", "-0", "?"], [3.0, 0.0, np.nan]),
        "real": (["1e3", " 2.5 ", "!"], [1000.0, 2.5, np.nan]),
        "date": (["1970/01/02", "2001/06/14", "?"], [1.0, 11487.0, np.nan]),
        "time": (["00:01:30", "21:15:06", "?"], [90.0, 76506.0, np.nan]),
    }
    for kind, (raw, expected) in texts.items():
        column = encode_values(Attribute("v", kind), np.array(raw, dtype=object), np.arange(3))
        np.testing.assert_array_equal(column.values, expected)
        assert not np.signbit(column.values[~np.isnan(column.values)]).any()  # -0 reads as 0
    spelled = np.array(["Yes", "n", "TRUE", "0"], dtype=object)
    column = encode_values(Attribute("b", "boolean"), spelled, np.arange(4))
    assert column.decoded().tolist() == ["true", "false", "true", "false"]
    assert {text.upper() for text in TRUE_TEXTS} & {text.upper() for text in FALSE_TEXTS} == set()


def test_the_first_bad_value_is_named_with_its_line_or_row():
    real = Attribute("x", "real")
    raw = np.array(["1", "2", "warm", "hot"], dtype=object)
    with pytest.raises(DataParseError, match=r"non-numeric value for attribute 'x'") as caught:
        encode_values(real, raw, np.array([10, 11, 12, 13]), file="f.data")
    assert (caught.value.file, caught.value.line, caught.value.text) == ("f.data", 12, "warm")
    with pytest.raises(DataParseError, match=r"'x' \(row 3 of the DataFrame\)") as caught:
        encode_values(real, raw, np.arange(1, 5), where="row")
    assert caught.value.line is None
    whole = Attribute("i", "integer")
    with pytest.raises(DataParseError, match="non-integer value for attribute 'i'"):
        encode_values(whole, np.array(["1.5"], dtype=object), np.array([1]))
    with pytest.raises(DataParseError, match="infinite value for attribute 'x'"):
        encode_values(real, np.array(["inf"], dtype=object), np.array([1]))


def test_number_rules_report_the_first_broken_rule():
    values = np.array([1.0, -0.0, 2.5, np.inf])
    broken = number_rules(Attribute("i", "integer"), values, np.zeros(4, bool))
    assert broken.message == "infinite value" and broken.mask.tolist() == [0, 0, 0, 1]
    assert not np.signbit(values[1])  # changed in place: -0 reads as 0
    broken = number_rules(Attribute("i", "integer"), values[:3], np.zeros(3, bool))
    assert broken.message == "non-integer value" and broken.mask.tolist() == [0, 0, 1]


def test_parse_numbers_gives_nan_and_the_message_for_invalid_texts():
    parsed = parse_numbers("date", pd.Series(["1970/01/03", "14/06/2001"], dtype=object))
    np.testing.assert_array_equal(parsed.values, [2.0, np.nan])
    assert parsed.message == "invalid date (expected yyyy/mm/dd)"


def test_codes_take_the_smallest_integer_type():
    assert [code_dtype(n) for n in (2, 119, 120, 31999, 32000)] == [
        np.int8,
        np.int8,
        np.int16,
        np.int16,
        np.int32,
    ]


def test_class_text_reads_numbers_by_their_value():
    same = ["1.0", 1.0, "1", 1, np.float32(1.0), " 1.00 ", "1e0"]
    assert {class_text(v) for v in same} == {"1"}
    assert [class_text(v) for v in ("2.5", 2.5, "go", "nan", "inf", "1.0x")] == [
        "2.5",
        "2.5",
        "go",
        "nan",
        "inf",
        "1.0x",
    ]
    assert all(class_text(class_text(v)) == class_text(v) for v in [*same, "2.50", "go"])


def test_label_text_drops_the_zero_decimals_of_whole_numbers():
    assert [label_text(v) for v in (1.0, np.float32(2.0), 2.5, 3, "go")] == [
        "1",
        "2",
        "2.5",
        "3",
        "go",
    ]


# -- the fast encoders ---------------------------------------------------------------------------
def test_distinct_values_are_encoded_once_and_spread_by_their_codes():
    nominal = Attribute("n", "nominal", ("a", "b"))
    codes = np.array([0, 1, 2, 1, 0])  # 2 = len(categories): unknown
    fast = encode_distinct(nominal, codes, ["b", " a"])
    exact = encode_values(nominal, np.array(["b", "a", "?", "a", "b"], dtype=object), np.arange(5))
    np.testing.assert_array_equal(fast.values, exact.values)
    np.testing.assert_array_equal(fast.unknown, exact.unknown)
    assert fast.categories == exact.categories
    with pytest.raises(EncodingRefused):
        encode_distinct(
            nominal, codes, ["b", "c"]
        )  # outside the domain: the exact encoder names it
    with pytest.raises(EncodingRefused):
        encode_distinct(nominal, codes, ["b", " "])  # an empty value


def test_numbers_as_text_are_parsed_by_arrow_or_refused():
    pytest.importorskip("pyarrow")
    real = Attribute("x", "real")
    series = pd.Series(["1.5", " ? ", "!", "-0"], dtype="string[pyarrow]")
    column = encode_numeric_text(real, series)
    np.testing.assert_array_equal(column.values, [1.5, np.nan, np.nan, 0.0])
    assert column.unknown.tolist() == [False, True, False, False]
    assert column.not_applicable.tolist() == [False, False, True, False]
    for bad in (["1", "nan"], ["1", "warm"], ["1", "inf"]):
        with pytest.raises(EncodingRefused):
            encode_numeric_text(real, pd.Series(bad, dtype="string[pyarrow]"))
    # a DataFrame column the fast encoder refuses goes to the exact one, which names the row
    with pytest.raises(DataParseError, match=r"'x' \(row 2 of the DataFrame\)"):
        encode_series(real, pd.Series(["1", "warm"], dtype="string[pyarrow]"), np.arange(1, 3))
