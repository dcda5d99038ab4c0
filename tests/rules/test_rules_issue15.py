"""Issue 15's rules and CLI defects, each reached through a general mechanism: the labels'
classes checked against the rule heads, one opener for every text input (a UTF-8
byte-order mark skipped), and a bounded check of a ``--dask`` scheduler address."""

import re
import socket
import threading
import time
import warnings

import numpy as np
import pytest
from rules_cli_helpers import run_cli

from xplique_ext.rules import (
    evaluate_rules,
    example_path,
    load_voyage,
    read_data,
    read_names,
    read_rules,
    score_rules,
)
from xplique_ext.rules.syntax import read_text


# -- labels against the heads' classes --------------------------------------------------
@pytest.fixture(scope="module")
def voyage():
    rules, data = load_voyage("ordered")
    return rules, data, data.labels()


def test_labels_sharing_no_class_with_the_heads_are_refused(voyage):
    rules, data, y = voyage
    binary = np.where(y == "go", 1, 0)
    with pytest.raises(
        ValueError,
        match=r"`labels` share no class with the rule heads: "
        r"expected labels among \['dont_go', 'go'\], got \['0', '1'\]",
    ):
        evaluate_rules(rules, data, labels=binary)
    with pytest.raises(ValueError, match=r"`labels` share no class .* got \['0.5', '1.5'\]"):
        evaluate_rules(rules, data, labels=np.where(y == "go", 1.5, 0.5))
    with pytest.raises(ValueError, match=r"`reference` share no class with the rule heads"):
        score_rules(rules, data, reference=binary)


def test_labels_that_never_hold_a_head_class_warn_naming_it(voyage):
    rules, data, y = voyage
    partial = np.where(y == "go", "go", "stay").astype(object)
    with pytest.warns(UserWarning, match=r"`labels` never hold the class\(es\) \['dont_go'\]"):
        result = evaluate_rules(rules, data, labels=partial)
    assert result.known.bh.sum() > 0  # the 'go' rules still count
    with pytest.warns(UserWarning, match=r"`reference` never hold .*\['dont_go'\]"):
        score_rules(rules, data, reference=partial)


def test_labels_holding_every_head_class_pass_silently(voyage):
    rules, data, y = voyage
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        same = evaluate_rules(rules, data, labels=y)
        score_rules(rules, data, reference=y)
    assert same.known == evaluate_rules(rules, data).known


# -- one opener: a byte-order mark is skipped in every text input ------------------------
def test_files_saved_with_a_byte_order_mark_read_as_without(tmp_path):
    for name in ("voyage.names", "voyage.test", "voyage.cn2.unordered.pbm"):
        raw = open(example_path(name), "rb").read()
        (tmp_path / name).write_bytes(b"\xef\xbb\xbf" + raw)
    names = read_names(tmp_path / "voyage.names")
    assert names == read_names(example_path("voyage.names"))
    data = read_data(tmp_path / "voyage.test", names)
    plain = read_data(example_path("voyage.test"))
    for column in names.column_names:
        np.testing.assert_array_equal(data.column(column).values, plain.column(column).values)
    rules = read_rules(tmp_path / "voyage.cn2.unordered.pbm")
    assert rules.to_string() == read_rules(example_path("voyage.cn2.unordered.pbm")).to_string()
    assert evaluate_rules(rules, data).known == evaluate_rules(rules, plain).known
    # Latin-1 bytes (not UTF-8) are read as Latin-1, in every reader alike
    (tmp_path / "l.names").write_bytes("y.\na: caf\xe9, th\xe9.\ny: p, q.\n".encode("latin-1"))
    (tmp_path / "l.data").write_bytes("caf\xe9, p\nth\xe9, q\n".encode("latin-1"))
    assert read_text(tmp_path / "l.names").startswith("y.\na: caf\xe9")
    latin = read_data(tmp_path / "l.data", read_names(tmp_path / "l.names"))
    assert latin.column("a").decoded().tolist() == ["caf\xe9", "th\xe9"]


# -- --dask ADDRESS: one clear error within seconds -------------------------------------
@pytest.fixture
def cli_files(tmp_path):
    for name in ("voyage.names", "voyage.test", "voyage.cn2.unordered.pbm"):
        (tmp_path / name).write_bytes(open(example_path(name), "rb").read())
    return [
        "rules",
        "-d",
        str(tmp_path / "voyage.test"),
        "-n",
        str(tmp_path / "voyage.names"),
        "-f",
        str(tmp_path / "voyage.cn2.unordered.pbm"),
    ]


@pytest.fixture
def plain_server():
    """A TCP server on 127.0.0.1 that accepts connections and never answers."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    held = []

    def accept():
        while True:
            try:
                held.append(server.accept()[0])
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    yield f"tcp://127.0.0.1:{server.getsockname()[1]}"
    server.close()
    for connection in held:
        connection.close()


def _closed_port():
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    return f"tcp://127.0.0.1:{port}"


@pytest.mark.parametrize(
    "address, message",
    [
        ("plain", r"--dask: no Dask scheduler answered at tcp://127\.0\.0\.1:\d+ within 5 s"),
        ("closed", r"--dask: cannot reach a Dask scheduler at tcp://127\.0\.0\.1:\d+"),
        ("notanaddress", r"--dask: invalid Dask scheduler address 'notanaddress'"),
        ("tcp://127.0.0.1:port", r"--dask: invalid Dask scheduler address"),
        ("foo://127.0.0.1:1", r"--dask: invalid Dask scheduler address .*unknown address scheme"),
    ],
)
def test_cli_dask_address_without_a_scheduler_fails_in_seconds(
    address, message, cli_files, plain_server, capsys
):
    pytest.importorskip("distributed")
    address = {"plain": plain_server, "closed": _closed_port()}.get(address, address)
    began = time.perf_counter()
    assert run_cli(cli_files + ["--dask", address]) == 1
    elapsed = time.perf_counter() - began
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("xplique-ext rules: error: "), err
    assert "Traceback" not in err
    assert re.search(message, lines[0]), lines[0]
    assert elapsed < 15, f"took {elapsed:.1f} s"


def test_warnings_of_declared_entry_points_point_at_the_caller(voyage):
    """The declaration wrapper adds a frame: the warnings still name the caller's line."""
    rules, data, y = voyage
    partial = np.where(y == "go", "go", "stay").astype(object)
    with pytest.warns(UserWarning) as record:
        evaluate_rules(rules, data, labels=partial)
        score_rules(rules, data, reference=partial)
    assert {w.filename for w in record} == {__file__}
    unknown = np.where(y == "go", "go", None).astype(object)
    with pytest.warns(UserWarning) as record:  # examples left out; 'dont_go' never held
        evaluate_rules(rules, data, labels=unknown)
    assert any("left out of the contingency tables" in str(w.message) for w in record)
    assert all(w.filename == __file__ for w in record)
