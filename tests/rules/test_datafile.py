"""Reading and writing ``.data`` files (:mod:`xplique_ext.rules.datafile`): the
format, its error messages, the fast (Arrow) and exact readers, chunks and peak memory."""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import given

from tests.rules.parser_strategies import (
    DATA_TEXT,
    FUZZ,
    NAMES,
    NAMES_TEXT,
    RULES_TEXT,
    texts,
)
from tests.rules.reader_table import TABLE_NAMES, write_table
from tests.rules.rules_reference import parse_exact
from xplique_ext.rules import (
    DataParseError,
    ParseError,
    example_path,
    parse_data,
    parse_names,
    parse_rules,
    read_data,
    read_names,
    write_data,
    write_names,
)


# -- .data files -----------------------------------------------------------------------------------
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


def test_write_names_and_data_round_trip(tmp_path):
    names = read_names(example_path("voyage.names"))
    data = read_data(example_path("voyage.test"))
    write_names(names, tmp_path / "v.names")
    write_data(data, tmp_path / "v.data")
    again = read_data(tmp_path / "v.data")
    assert again.names == names
    assert (again.to_frame() == data.to_frame()).all().all()


def test_read_data_of_a_missing_file_names_that_file_not_its_names(tmp_path):
    from xplique_ext.rules import read_data

    with pytest.raises(FileNotFoundError) as caught:
        read_data(tmp_path / "absent.data")
    assert caught.value.filename == str(tmp_path / "absent.data")


def test_names_without_a_column_read_from_the_file_is_refused(tmp_path):
    # every attribute derived (:=): no value is read from a line, so every line would be
    # dropped: refused by name, rather than an empty Dataset or a division by zero
    from xplique_ext.rules.datafile import parse_data, read_data
    from xplique_ext.rules.names import parse_names

    names = parse_names("null.\nx: real := 1.\n")
    (tmp_path / "z.data").write_text("a\n")
    for call in (
        lambda: parse_data("a\n", names),
        lambda: read_data(tmp_path / "z.data", names),
        lambda: list(read_data(tmp_path / "z.data", names, chunksize=1)),
    ):
        with pytest.raises(ValueError, match="`names` must declare at least one column"):
            call()


# -- the exact reader: blocks and chunks -----------------------------------------------------------
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


# -- the Arrow reader first, the exact reader behind it --------------------------------------------
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


# -- property tests: any text gives examples or a DataParseError, the same for both readers --------
@FUZZ
@given(texts(DATA_TEXT))
def test_data_parser_raises_only_parse_errors(text):
    try:
        data = parse_data(text, NAMES)
    except DataParseError as error:
        assert error.line is None or error.line >= 1
        return
    assert data.n_examples <= text.count("\n") + 1


def _outcome(read, text):
    try:
        data = read(text, NAMES, "<string>")
    except DataParseError as error:
        return ("error", str(error))
    return (
        "data",
        data.n_examples,
        [
            (
                c.values.dtype.str,
                c.values.tobytes(),
                c.categories,
                c.unknown.tobytes(),
                c.not_applicable.tobytes(),
            )
            for c in data.columns.values()
        ],
    )


@FUZZ
@given(texts(DATA_TEXT))
def test_c_reader_agrees_with_the_exact_tokenizer(text):
    """The C reader (pandas) and the exact tokenizer give the same examples or the same
    error, message included, on any text."""
    assert _outcome(parse_data, text) == _outcome(parse_exact, text)


def test_fuzz_targets_parse_when_intact():
    assert parse_names(NAMES_TEXT) == NAMES
    assert parse_data(DATA_TEXT, NAMES).n_examples == 15
    assert len(parse_rules(RULES_TEXT)) == 6
    with pytest.raises(ParseError):
        parse_rules(RULES_TEXT.replace("THEN", "THAN", 1))


# -- peak memory of reading a large file -----------------------------------------------------------
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


#: The documented bound: peak memory added by ``read_data`` over the file size.
MAX_PEAK_OVER_FILE = 2.0


SCRIPT = textwrap.dedent(
    """
    import json, sys
    import psutil
    from xplique_ext.rules import example_path, read_data, read_names

    def high_water_mark():  # peak resident memory of this process image (not the parent's)
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024

    read_data(example_path("voyage.test"))  # load pandas' reader and friends first
    names = read_names(sys.argv[2])
    with open("/proc/self/clear_refs", "w") as handle:
        handle.write("5")  # reset the high-water mark to the current resident memory
    rss = psutil.Process().memory_info().rss
    data = read_data(sys.argv[1], names)
    peak = high_water_mark()
    import xplique_ext
    print(json.dumps({"rss": rss, "peak": peak, "n": data.n_examples, "at": xplique_ext.__file__}))
    """
)


@pytest.mark.skipif(
    not os.path.exists("/proc/self/clear_refs"), reason="needs Linux's /proc peak-memory reset"
)
def test_peak_memory_of_reading_stays_within_twice_the_file(tmp_path):
    data, names = tmp_path / "big.data", tmp_path / "big.names"
    names.write_text(TABLE_NAMES)
    write_table(data, 20_000, repeat=40)
    size = os.path.getsize(data)
    assert size > 40e6
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, *sys.path]))
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(data), str(names)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    measured = json.loads(out.stdout.strip().splitlines()[-1])
    assert measured["n"] == 800_000, measured
    assert measured["at"].startswith(ROOT), measured  # this checkout, not another install
    # the peak resident memory while reading, over the resident memory before it
    added = measured["peak"] - measured["rss"]
    assert added <= MAX_PEAK_OVER_FILE * size, (
        f"reading a {size / 1e6:.0f} MB file added {added / 1e6:.0f} MB at the peak "
        f"({added / size:.2f}x the file, documented bound {MAX_PEAK_OVER_FILE}x)"
    )
