"""Readers and writers of .names, .data and PBM files, and their error messages."""

import numpy as np
import pandas as pd
import pytest
from rules_reference import parse_exact

from xplique_ext.rules import (
    Attribute,
    DataParseError,
    Dataset,
    Names,
    NamesParseError,
    ParseError,
    RuleParseError,
    check_rules,
    evaluate_rules,
    example_path,
    load_voyage,
    parse_data,
    parse_names,
    parse_rules,
    read_data,
    read_names,
    read_rules,
    write_data,
    write_names,
)

# -- .names --------------------------------------------------------------------------------


def test_voyage_names():
    names = read_names(example_path("voyage.names"))
    assert names.class_name == "voyage"
    assert names.column_names == ["outlook", "temperature", "humidity", "windy", "voyage"]
    assert names["outlook"] == Attribute("outlook", "nominal", ("sunny", "overcast", "rain"))
    assert names["temperature"].type == "real" and names["temperature"].is_numeric
    assert names["windy"].values == ("yes", "no")  # the issue: yes/no, not Figure 3's true/false
    assert names.feature_names == ["outlook", "temperature", "humidity", "windy"]


def test_all_types_quotes_comments_and_extensions():
    text = """| comment line
    "the class".   | the class comes first
    a: nominal(x, "y z", "1.5").
    b: enumerated(low, medium, high).
    c: integer.
    d: real : ignore_me.
    e: boolean.
    f: string.
    g: date.
    h: time.
    "válido": continuous.
    j: nominal.
    k: real := 2 x c : derived.
    "the class": 1.5, 2.5, "três".
    """
    names = parse_names(text)
    assert names.class_name == "the class"
    assert names["a"].values == ("x", "y z", "1.5")
    assert names["b"].type == "enumerated" and names["b"].is_ordered
    assert names["c"].type == "integer" and names["d"].extended == ("ignore_me",)
    assert names["e"].values == ("true", "false")
    assert [names[n].type for n in "fgh"] == ["string", "date", "time"]
    assert names["válido"].type == "real"
    assert names["j"].values is None
    assert names["k"].is_derived and "k" not in names.column_names
    assert names["the class"].values == ("1.5", "2.5", "três")
    # round trip
    assert parse_names(names.to_string()) == names


def test_null_class_and_c45_style():
    names = parse_names("null.\na: real.")
    assert names.class_name is None
    c45 = parse_names("go, dont_go.\noutlook: sunny, rain.\ntemp: continuous.")
    assert c45.class_name == "class" and c45.column_names == ["outlook", "temp", "class"]
    assert c45["class"].values == ("go", "dont_go")


@pytest.mark.parametrize(
    "text, match, line",
    [
        ("", "empty names file", None),
        ("c.\na: real", "not terminated", 2),
        ("c.\na real.", "expected 'name: type.'", 2),
        ("c.\na: reel.", "unknown attribute type", 2),
        ("c.\na: x, x.\nc: a, b.", r"listed twice", 2),
        ("c.\na: real.\na: real.\nc: a, b.", "declared twice", 3),
        ("c.\na: real.", "never declared", None),
        ('c.\n"a: real.\n', "unterminated quoted identifier", 2),
        ("c.\na: nominal(x, .\n", r"expected nominal\(v1, v2, ...\)", 2),
        ("c.\n\na: x,.\nc: a, b.", "ends with ','", 3),
    ],
)
def test_names_errors(text, match, line):
    with pytest.raises(NamesParseError, match=match) as info:
        parse_names(text, file="bad.names")
    assert info.value.file == "bad.names"
    if line is not None:
        assert info.value.line == line
    assert isinstance(info.value, ValueError)


# -- .data ---------------------------------------------------------------------------------


def test_voyage_data():
    data = read_data(example_path("voyage.test"))  # names: voyage.names by default
    assert data.n_examples == 15
    assert data.column("humidity").unknown.nonzero()[0].tolist() == [1, 8]
    assert data.column("temperature").unknown.nonzero()[0].tolist() == [4]
    assert data.column("windy").unknown.nonzero()[0].tolist() == [11]
    assert data.labels()[:3].tolist() == ["dont_go", "dont_go", "go"]
    frame = data.to_frame()
    assert frame.loc[1, "humidity"] == "?" and frame.loc[0, "humidity"] == 75.0


def test_not_applicable_and_quotes():
    names = parse_names('y.\na: nominal(p, "q, r").\nb: real.\ns: string.\ny: yes, no.')
    text = 'p, 1.5, "multi\nline", yes\n\n"q, r", !, "say ""hi""", no\n?, -2, plain, ?\n'
    data = parse_data(text, names)
    assert data.n_examples == 3
    assert data.column("b").not_applicable.tolist() == [False, True, False]
    assert data.column("a").decoded().tolist() == ["p", "q, r", None]
    assert data.column("s").decoded().tolist() == ["multi\nline", 'say "hi"', "plain"]
    assert data.column("y").unknown.tolist() == [False, False, True]
    again = parse_data(write_data(data), names)
    for name in names.column_names:
        np.testing.assert_array_equal(again.column(name).values, data.column(name).values)


def test_dates_times_booleans_integers():
    names = parse_names("null.\nd: date.\nt: time.\nb: boolean.\ni: integer.")
    data = parse_data("2001/06/14, 21:15:06, yes, 3\n1970/01/02, 00:00:10, False, -4\n", names)
    assert data.column("d").values.tolist() == [11487.0, 1.0]
    assert data.column("t").values.tolist() == [76506.0, 10.0]
    assert data.column("b").decoded().tolist() == ["true", "false"]
    assert data.column("i").values.tolist() == [3.0, -4.0]
    assert write_data(data).splitlines()[0] == "2001/06/14,21:15:06,true,3"


@pytest.mark.parametrize(
    "row, match",
    [
        ("sunny, 25, 75, yes", r"expected 5 comma-separated values .*got 4"),
        ("sunny, 25, 75, yes, go, extra", "got 6"),
        (
            "foggy, 25, 75, yes, go",
            r"value outside the declared domain \['sunny', 'overcast', 'rain'\] for attribute 'outlook'",
        ),
        ("sunny, 25, 75, true, go", "for attribute 'windy'"),
        ("sunny, hot, 75, yes, go", "non-numeric value for attribute 'temperature'"),
        ("sunny, 25, 75, yes, maybe", "for attribute 'voyage'"),
        ("sunny, , 75, yes, go", "empty value for attribute 'temperature'"),
        ('sunny, 25, "75, yes, go', "unterminated quoted value"),
        ("sunny, 1e999, 75, yes, go", "infinite value"),
    ],
)
def test_data_errors(row, match):
    names = read_names(example_path("voyage.names"))
    text = "sunny, 25, 75, yes, go\n" + row + "\n"
    with pytest.raises(DataParseError, match=match) as info:
        parse_data(text, names, file="bad.data")
    assert info.value.file == "bad.data" and info.value.line == 2
    assert info.value.text is not None and "line 2" in str(info.value)


def test_integer_and_type_errors():
    names = parse_names("null.\ni: integer.\nd: date.\nb: boolean.")
    with pytest.raises(DataParseError, match="non-integer value for attribute 'i'"):
        parse_data("1.5, 2001/01/01, yes", names)
    with pytest.raises(DataParseError, match="invalid date"):
        parse_data("1, 2001-01-01, yes", names)
    with pytest.raises(DataParseError, match="not a boolean"):
        parse_data("1, 2001/01/01, perhaps", names)
    with pytest.raises(TypeError, match="`names`"):
        parse_data("1", "names")


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


def test_names_inference():
    frame = pd.DataFrame(
        {"x": [1.5, 2.0, None], "n": [1, 2, 3], "c": ["a", "?", "b"], "flag": [True, False, True]}
    )
    names = Names.infer(frame, class_name="c")
    assert [a.type for a in names] == ["real", "integer", "nominal", "boolean"]
    assert names["c"].values == ("a", "b")


def test_write_names_and_data_round_trip(tmp_path):
    names = read_names(example_path("voyage.names"))
    data = read_data(example_path("voyage.test"))
    write_names(names, tmp_path / "v.names")
    write_data(data, tmp_path / "v.data")
    again = read_data(tmp_path / "v.data")
    assert again.names == names
    assert (again.to_frame() == data.to_frame()).all().all()


# -- PBM -----------------------------------------------------------------------------------


def test_voyage_rules():
    rules = read_rules(example_path("voyage.cn2.unordered.pbm"))
    assert len(rules) == 6 and rules.default.head == "go" and rules.default.is_default
    assert rules.header.inducer == "cn2"
    assert rules.header.input_file == "voyage.cn2.unordered_output"
    assert rules.header.date == "Thu Jun 14 21:15:06 2001"
    r6 = rules[5]
    assert r6.id == "R0006" and r6.head == "dont_go"
    assert [c.to_string() for c in r6.conditions] == [
        "temperature < 24.00",
        "humidity < 80.50",
        "windy = yes",
    ]
    assert r6.attributes == ("temperature", "humidity", "windy")


def test_operators_or_in_linear_and_quotes():
    text = """
R0001 IF a <= 1 AND b >= 2 AND c < 3 AND d > 4 AND e != 5 AND f = 6
      THEN CLASS = yes
R0002 IF g in {x, "y z", 3} OR 0.5 x a + -2 x b - 1e-3 * c <= 7
      OR "odd name" = "val,ue"
      THEN CLASS = "no way"
R0003 DEFAULT CLASS = yes
"""
    rules = parse_rules(text)
    r1, r2 = rules
    assert [c.operator for c in r1.conditions] == ["<=", ">=", "<", ">", "!=", "="]
    assert len(r2.body) == 3
    assert r2.body[0][0].operator == "in" and r2.body[0][0].value == ("x", "y z", "3")
    linear = r2.body[1][0]
    assert linear.is_linear and linear.terms == (("0.5", "a"), ("-2", "b"), ("-1e-3", "c"))
    assert linear.attributes == ("a", "b", "c")
    assert r2.body[2][0].attribute == "odd name" and r2.head == "no way"
    assert parse_rules(rules.to_string()) == rules


def test_extended_format_round_trip():
    rules, data = load_voyage("ordered")
    result = evaluate_rules(rules, data, "ordered")
    text = result.to_pbm(names_file="voyage.names", data_file="voyage.test")
    again = parse_rules(text)
    assert again == parse_rules(text)  # deterministic
    assert again.header.evaluated_as == "ORDERED"
    assert again.header.names_file == "voyage.names" and again.header.data_file == "voyage.test"
    assert again[0].known == (0.25, 0.083, 0.417, 0.25, 12)
    assert again[0].unknown == (0.333, 0.333, 0.333, 0.0, 3)
    # the rules themselves are unchanged (extension aside)
    assert [r.body for r in again] == [r.body for r in rules]
    # writing again without evaluation keeps the frequencies that were read
    assert parse_rules(again.to_string())[0].known == again[0].known


@pytest.mark.parametrize(
    "text, line, match",
    [
        ("R0001 IF a = 1\n      THEN CLASS yes", 2, "expected '=', got 'yes'"),
        ("R0001 IF a = 1\n   AND\n   THEN CLASS = yes", 3, "expected an attribute, got 'THEN'"),
        ("R0001 IF a 1 THEN CLASS = yes", 1, "expected an operator"),
        ("R0001 IF a = 1 THEN CLASS = yes extra", 1, "unexpected 'extra' after the rule head"),
        ("R0001 IF a = 1 THEN CLASS = yes\nR0001 IF a = 2 THEN CLASS = no", 2, "used twice"),
        ("R0001 DEFAULT CLASS = yes\nR0002 IF a = 2 THEN CLASS = no", 1, "must be the last"),
        ("Inducer: x\nnot a rule\nR0001 IF a = 1 THEN CLASS = yes", 2, "expected a header line"),
        ("R0001 IF a = 1 THEN CLASS = yes [0.1, 0.2]", 1, "expected ','"),
        ("R0001 IF a ! 1 THEN CLASS = yes", 1, "unexpected character '!'"),
        ("R0001 IF 2 x a + b <= 1 THEN CLASS = yes", 1, "expected a numeric coefficient"),
        ("R0001 IF a in {1, 2 THEN CLASS = yes", 1, "expected '}'"),
        ("R0001 IF a = = THEN CLASS = yes", 1, "expected a value, got '='"),  # not a value
        ("R0001 IF a = 1 THEN CLASS = yes [1,0,0,0,1e999]", 1, "non-negative integer"),
    ],
)
def test_malformed_rules(text, line, match):
    with pytest.raises(RuleParseError, match=match) as info:
        parse_rules(text, file="bad.pbm")
    error = info.value
    assert error.file == "bad.pbm" and error.line == line
    assert error.text == text.split("\n")[line - 1]  # the offending line, in full
    assert f"bad.pbm, line {line}" in str(error)


def test_no_rule():
    with pytest.raises(RuleParseError, match="no rule found"):
        parse_rules("Inducer: x\n")


@pytest.mark.parametrize(
    "rule, match",
    [
        (
            "R0003 IF humdity < 3 THEN CLASS = go",
            r"rule R0003: attribute 'humdity' is not declared in .*voyage.names",
        ),
        (
            "R0003 IF 1 x temperature + 2 x wind <= 3 THEN CLASS = go",
            "rule R0003: attribute 'wind' is not declared",
        ),
        (
            "R0003 IF outlook = foggy THEN CLASS = go",
            r"rule R0003: value 'foggy' is not valid for attribute 'outlook' \(expected one of",
        ),
        ("R0003 IF outlook < sunny THEN CLASS = go", "needs an ordered attribute"),
        ("R0003 IF humidity > high THEN CLASS = go", r"value 'high' .* \(expected a number\)"),
        ("R0003 IF 2 x outlook <= 3 THEN CLASS = go", "not integer or real"),
        ("R0003 IF windy = no THEN CLASS = maybe", "head 'maybe' is not a valid class"),
        ("R0003 IF voyage = go THEN CLASS = go", "tests the class attribute"),
        ("R0003 IF windy in {no, true} THEN CLASS = go", "value 'true'"),
    ],
)
def test_rules_checked_against_names_before_evaluation(rule, match):
    names = read_names(example_path("voyage.names"))
    data = read_data(example_path("voyage.test"), names)
    text = "R0001 IF windy = no THEN CLASS = go\n" + rule + "\nR0009 DEFAULT CLASS = go\n"
    rules = parse_rules(text, file="my.pbm")
    with pytest.raises(RuleParseError, match=match) as info:
        evaluate_rules(rules, data)
    assert info.value.file == "my.pbm" and info.value.line == 2
    with pytest.raises(RuleParseError, match=match):
        check_rules(rules, names)


def test_parse_error_hierarchy():
    for cls in (NamesParseError, DataParseError, RuleParseError):
        assert issubclass(cls, ParseError) and issubclass(cls, ValueError)
    import pickle

    error = RuleParseError("boom", file="f", line=3, text="x")
    again = pickle.loads(pickle.dumps(error))
    assert (again.file, again.line, again.text, str(again)) == ("f", 3, "x", str(error))


# -- the C reader: same examples as the exact tokenizer, blocks and chunks ---------------------

EDGE_NAMES = parse_names(
    "y.\nn: nominal.\nr: real.\ni: integer.\nd: date.\nt: time.\nb: boolean.\ny: yes, no."
)
EDGE_ROWS = [
    "a, 1.5, 3, 2001/06/14, 21:15:06, true, yes",
    "b ,\t-2e3 ,-4,1970/01/02,00:00:10,no,no",
    "? , ?, ?, ?, ?, ?, ?",
    "! , !, !, !, !, !, no",
    "  c,  .5, +7, 2020/02/29, 1:02, 1, yes",
]


@pytest.mark.parametrize(
    "text",
    [
        "\n".join(EDGE_ROWS) + "\n",
        "\r\n".join(EDGE_ROWS),
        "\n\n" + "\n   \n".join(EDGE_ROWS) + "\n\n",
        "\n".join(EDGE_ROWS[:2]),  # no '!' and no '?': the numeric columns stay numbers
        'a, 1, 2, 2001/06/14, 21:15:06, true, "yes"\n"b, c", 2, 3, ?, ?, ?, no\n',
        "\n".join(EDGE_ROWS).replace("1.5", "nan"),
        "\n".join(EDGE_ROWS).replace("+7", "7.5"),
        "\n".join(EDGE_ROWS).replace("-4", ""),
        "\n".join(EDGE_ROWS).replace("b ,", "b ,,"),
        "\n".join(EDGE_ROWS).replace("no,no", "no"),
        "\n".join(EDGE_ROWS).replace("1970/01/02,00", "1970/01/02\r00"),
        "",
    ],
)
def test_c_reader_agrees_with_exact_tokenizer(text):
    def outcome(read):
        try:
            data = read(text, EDGE_NAMES, "e.data")
        except DataParseError as error:
            return str(error)
        return data.n_examples, {
            k: (c.values.tolist(), c.categories, c.unknown.tolist(), c.not_applicable.tolist())
            for k, c in data.columns.items()
        }

    fast, exact = outcome(parse_data), outcome(parse_exact)
    assert repr(fast) == repr(exact)  # repr: NaN compares equal to NaN


def test_blocks_and_chunks(tmp_path, monkeypatch):
    """Small blocks: records cut anywhere, a quoted value over two lines, open domains
    merged across blocks; chunks of exactly ``chunksize`` examples."""
    from xplique_ext.rules import datafile as module

    names = parse_names("y.\ns: string.\nx: real.\ny: yes, no.")
    rows = [f"v{k % 7}, {k}.5, {'yes' if k % 3 else 'no'}" for k in range(200)]
    rows[50] = '"multi\nline, v", ?, no'
    rows[120] = "late, !, yes"
    text = "\n".join(rows) + "\n"
    path = tmp_path / "t.data"
    path.write_text(text)
    whole = read_data(path, names)
    monkeypatch.setattr(module, "_BLOCK_BYTES", 64)
    small = read_data(path, names)
    for name in names.column_names:
        a, b = whole.column(name), small.column(name)
        assert a.categories == b.categories
        np.testing.assert_array_equal(a.values, b.values)
        np.testing.assert_array_equal(a.unknown, b.unknown)
        np.testing.assert_array_equal(a.not_applicable, b.not_applicable)
    assert whole.column("s").decoded()[50] == "multi\nline, v"
    assert "late" in whole.column("s").categories
    chunks = list(read_data(path, names, chunksize=30))
    assert [c.n_examples for c in chunks] == [30] * 6 + [20]
    again = np.concatenate([c.column("s").decoded() for c in chunks])
    np.testing.assert_array_equal(again, whole.column("s").decoded())
    np.testing.assert_array_equal(
        np.concatenate([c.column("x").values for c in chunks]), whole.column("x").values
    )
    # a bad value in a late block: the file and line of the exact reader
    rows[180] = "v1, hot, yes"
    path.write_text("\n".join(rows) + "\n")
    with pytest.raises(DataParseError, match="non-numeric value for attribute 'x'") as info:
        list(read_data(path, names, chunksize=30))
    assert info.value.line == 182 and info.value.file == str(path)


def test_chunksize_errors(tmp_path):
    path = example_path("voyage.test")
    with pytest.raises(ValueError, match="`chunksize` must be >= 1 or None, got 0"):
        read_data(path, chunksize=0)
    with pytest.raises(TypeError, match="`chunksize` must be"):
        read_data(path, chunksize=2.5)
    with pytest.raises(FileNotFoundError):
        read_data(tmp_path / "nope.data", read_names(example_path("voyage.names")), chunksize=5)


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


def test_rules_import_without_dask():
    import subprocess
    import sys

    code = (
        "import sys; sys.modules['dask'] = None; import xplique_ext.rules as r; "
        "r.evaluate_rules(r.read_rules(r.example_path('voyage.cn2.unordered.pbm')), "
        "r.read_data(r.example_path('voyage.test'), chunksize=4)); print('ok')"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "ok", out.stderr


def test_table_grows_when_later_blocks_are_denser(tmp_path, monkeypatch):
    """The arrays are sized from the first block: denser blocks later make them grow."""
    from xplique_ext.rules import datafile as module

    names = parse_names("y.\ns: string.\nx: real.\ny: yes, no.")
    rows = [f"a_long_value_{k}, {k}.123456789, yes" for k in range(50)]
    rows += [f"b, {k}, no" for k in range(3000)]
    path = tmp_path / "d.data"
    path.write_text("\n".join(rows) + "\n")
    monkeypatch.setattr(module, "_BLOCK_BYTES", 256)
    data = read_data(path, names)
    assert data.n_examples == 3050
    np.testing.assert_array_equal(data.column("x").values[50:], np.arange(3000.0))
    assert data.column("s").decoded()[0] == "a_long_value_0"
    assert data.column("y").decoded()[-1] == "no"


# -- the Arrow reader (first), the exact reader (behind it) ---------------------------------

ARROW_NAMES = parse_names("y.\nn: nominal.\nr: real.\ni: integer.\ny: yes, no.")
ARROW_ROWS = ["a,1.5,3,yes", "b,-0.25,-4,no", "?,?,?,yes", "c,2e3,0,no"]


@pytest.mark.parametrize(
    "text",
    [
        "\n".join(ARROW_ROWS) + "\n",
        "\r\n".join(ARROW_ROWS) + "\r\n",
        "\n".join(ARROW_ROWS).replace("-4", "-0") + "\n",  # pandas reads integers: 0, not -0
        "\n".join(ARROW_ROWS).replace("-0.25", "-0.000") + "\n",  # a float column: -0.0
        "\n".join(ARROW_ROWS).replace("1.5", "nan") + "\n",
        "\n".join(ARROW_ROWS).replace("1.5", "inf") + "\n",
        "\n".join(ARROW_ROWS).replace("1.5", "1e400") + "\n",
        "\n".join(ARROW_ROWS).replace("1.5", " 1.5 ") + "\n",
        "\n".join(ARROW_ROWS).replace("1.5", "1.") + "\n",
        "\n".join(ARROW_ROWS).replace("-4", "4.5") + "\n",
        "\n".join(ARROW_ROWS).replace("b,", " b ,") + "\n",
        "\n".join(ARROW_ROWS).replace("b,", ",") + "\n",
        "\n".join(ARROW_ROWS).replace("c,", "d,").replace("a,", "é,") + "\n",
        "\n".join(ARROW_ROWS).replace("yes", "maybe", 1) + "\n",
        "\n".join(ARROW_ROWS).replace(",3,", ",3,4,") + "\n",
        "\n".join(ARROW_ROWS).replace(",3,", ",") + "\n",
        "\n".join(ARROW_ROWS).replace("-4", "!") + "\n",
        "\n\n" + "\n\n".join(ARROW_ROWS),
    ],
)
def test_arrow_reader_agrees_with_the_exact_reader(text):
    """Arrow's reader gives the examples, or the error, of the exact reader bit for bit,
    the sign of zeros included (a negative zero reads as 0 in both)."""

    def outcome(read):
        try:
            data = read(text, ARROW_NAMES, "a.data")
        except DataParseError as error:
            return str(error)
        return data.n_examples, {
            k: (c.values.tobytes(), c.values.dtype.str, c.categories, c.unknown.tolist())
            for k, c in data.columns.items()
        }

    arrow = outcome(parse_data)
    assert arrow == outcome(parse_exact)
    if not isinstance(arrow, str):
        for values, dtype, *_ in arrow[1].values():
            if dtype == "<f8":
                values = np.frombuffer(values)
                assert not np.signbit(values[values == 0]).any()


def test_arrow_reader_reads_clean_blocks_alone(monkeypatch):
    """A clean block is read by Arrow without falling back (the fast path is taken), with
    the same result as the exact reader."""
    from xplique_ext.rules import datafile as module

    pytest.importorskip("pyarrow")
    text = "\n".join(ARROW_ROWS * 50) + "\n"
    expected = parse_exact(text, ARROW_NAMES)
    monkeypatch.setattr(module, "_exact_parts", None)  # any fallback would fail
    data = parse_data(text, ARROW_NAMES, "a.data")
    assert data.n_examples == 200
    for name, column in expected.columns.items():
        np.testing.assert_array_equal(data.column(name).values, column.values)
        np.testing.assert_array_equal(data.column(name).unknown, column.unknown)
        assert data.column(name).categories == column.categories


def test_not_applicable_numbers_stay_on_the_fast_reader(monkeypatch):
    """``!`` in a numeric column is read by Arrow (numbers as text for that block), not by
    the exact reader; ``?`` and ``!`` stay apart."""
    from xplique_ext.rules import datafile as module

    pytest.importorskip("pyarrow")
    text = "\n".join(ARROW_ROWS * 20).replace("-4", "!") + "\n"
    expected = parse_exact(text, ARROW_NAMES)
    monkeypatch.setattr(module, "_exact_parts", None)  # any fallback would fail
    data = parse_data(text, ARROW_NAMES, "a.data")
    column = data.column("i")
    assert column.not_applicable.sum() == 20 and column.unknown.sum() == 20
    for name, exact in expected.columns.items():
        np.testing.assert_array_equal(data.column(name).values, exact.values)
        np.testing.assert_array_equal(data.column(name).not_applicable, exact.not_applicable)


def test_read_data_of_a_missing_file_names_that_file_not_its_names(tmp_path):
    from xplique_ext.rules import read_data

    with pytest.raises(FileNotFoundError) as caught:
        read_data(tmp_path / "absent.data")
    assert caught.value.filename == str(tmp_path / "absent.data")


def test_names_infer_reads_numbers_written_as_text():
    frame = pd.DataFrame({"a": ["1", "2", "?"], "b": ["1.5", "2", None], "c": ["x", "y", "!"]})
    inferred = [(a.name, a.type, a.values) for a in Names.infer(frame)]
    assert inferred == [("a", "integer", None), ("b", "real", None), ("c", "nominal", ("x", "y"))]


@pytest.mark.parametrize("end", ["\r", "\r\n"])
def test_names_and_rules_with_other_line_ends_read_the_same(end, tmp_path):
    # a lone CR (old Mac OS files) is a line end, as in .data files: a `|` comment ran to
    # the end of a .names file (attributes after it dropped silently) and PBM rules were
    # read as one line
    for name, read in (("voyage.names", read_names), ("voyage.cn2.unordered.pbm", read_rules)):
        text = open(example_path(name), encoding="utf-8").read()
        path = tmp_path / name
        path.write_bytes(text.replace("\n", end).encode("utf-8"))
        assert read(path) == read(example_path(name))
    with pytest.raises(NamesParseError, match="line 3: statement not terminated") as err:
        parse_names("class: a, b.\r| comment\rx: real\r")
    assert "\r" not in str(err.value)
