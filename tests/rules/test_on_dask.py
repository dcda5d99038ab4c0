"""Rule evaluation on partitioned data (:mod:`xplique_ext.rules.on_dask`): a Dask
cluster of 2 worker processes, and chunks.

Contingency counts add up over row partitions in every mode, so the partitioned results
must equal the in-memory ones exactly: counts, measures and predictions."""

import sys

import numpy as np
import pandas as pd
import pytest

from tests.rules.rules_cli_helpers import run_cli
from xplique_ext.rules import (
    DataParseError,
    RuleParseError,
    evaluate_rules,
    example_path,
    parse_rules,
    predict_rules,
    read_data,
    read_data_dask,
    read_names,
)

dd = pytest.importorskip("dask.dataframe")  # the dev extra installs it


distributed = pytest.importorskip("distributed")


MODES = ("unordered", "ordered", "inter-class")


NAMES_TEXT = """class.
colour: red, green, blue.
size: real.
count: integer.
shape: nominal.
class: c0, c1, c2.
"""


@pytest.fixture(scope="module")
def client():
    """One LocalCluster of 2 worker processes for the whole module."""
    with (
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            memory_limit="1GiB",
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    """A .data file of 3,000 examples with unknown (?) and not-applicable (!) values in
    every column but the class (a few unknown classes too), and 40 rules."""
    rng = np.random.default_rng(7)
    n = 3000
    colour = rng.choice(["red", "green", "blue"], n).astype(object)
    size = np.char.mod("%.2f", rng.normal(0, 1, n)).astype(object)
    count = rng.integers(-3, 4, n).astype(str).astype(object)
    shape = rng.choice(["disc", "square", "star", "ring"], n).astype(object)
    label = rng.choice(["c0", "c1", "c2"], n).astype(object)
    for column in (colour, size, count, shape):
        column[rng.random(n) < 0.05] = "?"
        column[rng.random(n) < 0.03] = "!"
    label[rng.random(n) < 0.01] = "?"
    rows = [",".join(r) for r in zip(colour, size, count, shape, label)]
    folder = tmp_path_factory.mktemp("dask")
    (folder / "t.names").write_text(NAMES_TEXT)
    (folder / "t.data").write_text("\n".join(rows) + "\n")
    lines = []
    for k in range(40):
        conditions = []
        for _ in range(rng.integers(1, 4)):
            kind = rng.integers(0, 4)
            if kind == 0:
                conditions.append(f"colour = {rng.choice(['red', 'green', 'blue'])}")
            elif kind == 1:
                conditions.append(f"size {rng.choice(['<', '>='])} {rng.normal(0, 0.8):.2f}")
            elif kind == 2:
                conditions.append(f"count {rng.choice(['<=', '>'])} {rng.integers(-2, 3)}")
            else:
                conditions.append(f"shape != {rng.choice(['disc', 'square', 'star'])}")
        head = ["c0", "c1", "c2"][k * 3 // 40]  # blocks of heads for inter-class
        lines.append(f"R{k + 1:04d} IF {' AND '.join(conditions)} THEN CLASS = {head}")
    lines.append("R0041 DEFAULT CLASS = c1")
    rules = parse_rules("\n".join(lines) + "\n")
    return folder / "t.data", read_names(folder / "t.names"), rules


def assert_same(result, expected):
    assert result.known == expected.known and result.unknown == expected.unknown
    assert result.n_classes == expected.n_classes
    pd.testing.assert_frame_equal(
        result.to_frame(zero_division="nan"), expected.to_frame(zero_division="nan")
    )
    pd.testing.assert_frame_equal(
        result.measures("unknown", zero_division="nan"),
        expected.measures("unknown", zero_division="nan"),
    )


@pytest.mark.filterwarnings("ignore:.*unknown or not-applicable class")
@pytest.mark.parametrize("mode", MODES)
def test_dask_file_equals_in_memory(client, table, mode):
    path, names, rules = table
    expected = evaluate_rules(rules, read_data(path, names), mode)
    assert expected.unknown.n.sum() > 0 and expected.known.bh.sum() > 0
    frame = read_data_dask(path, names, blocksize=20_000)
    assert frame.npartitions >= 3
    assert_same(evaluate_rules(rules, frame, mode, names=names), expected)
    # predictions: a Dask series, partition by partition
    predicted = predict_rules(rules, frame, mode, names=names)
    assert isinstance(predicted, dd.Series)
    np.testing.assert_array_equal(
        predicted.compute().to_numpy(), predict_rules(rules, read_data(path, names), mode)
    )


@pytest.mark.filterwarnings("ignore:.*unknown or not-applicable class")
@pytest.mark.parametrize("mode", MODES)
def test_chunks_equal_in_memory(table, mode):
    path, names, rules = table
    expected = evaluate_rules(rules, read_data(path, names), mode)
    assert_same(evaluate_rules(rules, read_data(path, names, chunksize=700), mode), expected)
    # pandas DataFrame chunks (with "?"/"!" strings and NaN), given the names
    frame = read_data(path, names).to_frame()
    frame.loc[frame["size"] == "?", "size"] = np.nan
    pieces = (frame.iloc[k : k + 1000] for k in range(0, len(frame), 1000))
    assert_same(evaluate_rules(rules, pieces, mode, names=names), expected)
    chunks = read_data(path, names, chunksize=1100)
    got = np.concatenate(list(predict_rules(rules, chunks, mode)))
    np.testing.assert_array_equal(got, predict_rules(rules, read_data(path, names), mode))


@pytest.mark.filterwarnings("ignore:.*unknown or not-applicable class")
def test_dask_dataframe_from_pandas(client, table):
    """A user's Dask DataFrame (NaN or '?' for unknown, '!' not applicable)."""
    path, names, rules = table
    data = read_data(path, names)
    frame = data.to_frame()
    frame["size"] = pd.to_numeric(frame["size"], errors="coerce").where(
        frame["size"] != "!", np.nan
    )
    frame["size"] = frame["size"].astype(object).where(data.to_frame()["size"] != "!", "!")
    lazy = dd.from_pandas(frame, npartitions=4)
    for mode in MODES:
        assert_same(
            evaluate_rules(rules, lazy, mode, names=names), evaluate_rules(rules, data, mode)
        )


def test_voyage_on_dask_matches_report(client):
    """The report's worked example (Fig. 8 figures) through Dask."""
    names = read_names(example_path("voyage.names"))
    for mode, file in (
        ("unordered", "voyage.cn2.unordered.pbm"),
        ("ordered", "voyage.cn2.ordered.pbm"),
    ):
        from xplique_ext.rules import read_rules

        rules = read_rules(example_path(file))
        frame = read_data_dask(example_path("voyage.test"), names, blocksize=200)
        expected = evaluate_rules(rules, read_data(example_path("voyage.test")), mode)
        assert_same(evaluate_rules(rules, frame, mode, names=names), expected)


def test_dask_errors(client, table, tmp_path):
    path, names, rules = table
    frame = read_data_dask(path, names, blocksize=20_000)
    with pytest.raises(ValueError, match="`names` is required with a Dask DataFrame"):
        evaluate_rules(rules, frame)
    with pytest.raises(ValueError, match="`labels` is only accepted with a Dataset"):
        evaluate_rules(rules, frame, names=names, labels=np.zeros(3))
    # a rule that does not fit the names fails at once, before any task runs
    bad = parse_rules("R0001 IF colour = purple THEN CLASS = c0\n")
    with pytest.raises(RuleParseError, match="value 'purple' is not valid"):
        evaluate_rules(bad, frame, names=names)
    # a bad value in a partition: a ParseError naming the attribute
    text = path.read_text().splitlines()
    text[2000] = "red,hot,1,disc,c0"
    (tmp_path / "t.data").write_text("\n".join(text) + "\n")
    broken = read_data_dask(tmp_path / "t.data", names, blocksize=20_000)
    with pytest.raises(DataParseError, match="non-numeric value for attribute 'size'") as info:
        evaluate_rules(rules, broken, names=names)
    assert "of partition" in str(info.value)
    text[2000] = "red,0.5,1"
    (tmp_path / "t.data").write_text("\n".join(text) + "\n")
    broken = read_data_dask(tmp_path / "t.data", names, blocksize=20_000)
    with pytest.raises(
        DataParseError, match=r"empty value for attribute 'shape'.* or fewer than 5 values"
    ):
        evaluate_rules(rules, broken, names=names)


def test_chunk_errors(table):
    path, names, rules = table
    with pytest.raises(ValueError, match="`names` is required"):
        evaluate_rules(rules, [read_data(path, names).to_frame()])
    with pytest.raises(TypeError, match="each chunk must be a Dataset or a pandas DataFrame"):
        evaluate_rules(rules, [np.zeros((2, 5))], names=names)
    with pytest.raises(TypeError, match="`data` must be a Dataset"):
        evaluate_rules(rules, "t.data")
    with pytest.raises(ValueError, match="no chunk"):
        evaluate_rules(rules, [])
    with pytest.raises(RuleParseError, match="'size2' is not declared"):  # no chunk: still checked
        evaluate_rules(parse_rules("R0001 IF size2 > 1 THEN CLASS = c0\n"), [], names=names)
    with pytest.raises(ValueError, match="the same declarations"):  # a Dataset's own declarations
        evaluate_rules(rules, read_data(example_path("voyage.test")), names=names)
    voyage = read_data(example_path("voyage.test"))
    with pytest.raises(ValueError, match="the same declarations"):
        evaluate_rules(rules, [read_data(path, names), voyage])


def test_missing_dask_names_the_extra(table, monkeypatch):
    path, names, rules = table
    monkeypatch.setitem(sys.modules, "dask", None)
    with pytest.raises(ImportError, match=r"xplique_ext\[distributed\]"):
        read_data_dask(path, names)


# -- the command line ------------------------------------------------------------------------------
@pytest.mark.filterwarnings("ignore:.*unknown or not-applicable class")
@pytest.mark.parametrize("mode", ["-u", "-o", "-i"])
def test_cli_chunksize_and_dask_print_the_same_file(client, table, tmp_path, mode):
    path, names, rules = table
    (tmp_path / "r.pbm").write_text(rules.to_string())
    common = ["rules", mode, "-d", str(path), "-f", str(tmp_path / "r.pbm")]
    assert run_cli(common + ["-s", str(tmp_path / "whole.pbm")]) == 0
    assert run_cli(common + ["--chunksize", "500", "-s", str(tmp_path / "chunks.pbm")]) == 0
    address = client.scheduler.address
    assert run_cli(common + ["--dask", address, "-s", str(tmp_path / "dask.pbm")]) == 0
    whole = (tmp_path / "whole.pbm").read_text()
    assert "?[" in whole
    assert (tmp_path / "chunks.pbm").read_text() == whole
    assert (tmp_path / "dask.pbm").read_text() == whole


def test_cli_scale_options_errors(table, tmp_path, capsys):
    path, names, rules = table
    (tmp_path / "r.pbm").write_text(rules.to_string())
    common = ["rules", "-d", str(path), "-f", str(tmp_path / "r.pbm")]
    assert run_cli(common + ["--chunksize", "0"]) == 2
    assert "--chunksize must be a positive integer, got 0" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # argparse: not both
        run_cli(common + ["--chunksize", "5", "--dask"])
    assert "not allowed with argument" in capsys.readouterr().err
    text = path.read_text().replace("red,", "purple,", 1)
    (tmp_path / "bad.data").write_text(text)
    (tmp_path / "bad.names").write_text(NAMES_TEXT)
    bad = ["rules", "-d", str(tmp_path / "bad.data"), "-f", str(tmp_path / "r.pbm")]
    assert run_cli(bad + ["--chunksize", "100"]) == 1
    err = capsys.readouterr().err
    assert "bad.data, line" in err and "for attribute 'colour'" in err


def test_cli_dask_without_address_starts_a_local_cluster(client, table, tmp_path, monkeypatch):
    """``--dask`` alone: a LocalCluster of worker processes, closed afterwards (the
    module's cluster stands in for it, so that the tests start only one)."""
    import contextlib

    path, names, rules = table
    (tmp_path / "r.pbm").write_text(rules.to_string())
    started = []

    @contextlib.contextmanager
    def local_cluster(**options):
        started.append(options)
        yield client.cluster

    monkeypatch.setattr(distributed, "LocalCluster", local_cluster)
    common = ["rules", "-d", str(path), "-f", str(tmp_path / "r.pbm")]
    with pytest.warns(UserWarning, match="unknown or not-applicable class"):
        assert run_cli(common + ["--dask", "-s", str(tmp_path / "dask.pbm")]) == 0
    assert started == [{"processes": True, "dashboard_address": None}]
    with pytest.warns(UserWarning):
        assert run_cli(common + ["-s", str(tmp_path / "whole.pbm")]) == 0
    assert (tmp_path / "dask.pbm").read_text() == (tmp_path / "whole.pbm").read_text()


# -- declared parameters ---------------------------------------------------------------------------
def test_read_data_dask_checks_its_parameters_before_importing_dask():
    with pytest.raises(ValueError, match="`blocksize` must be >= 1 or a string, got 0"):
        read_data_dask("voyage.data", blocksize=0)
    with pytest.raises(TypeError, match="`path` must be a path"):
        read_data_dask(3)
