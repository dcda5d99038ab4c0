"""Text shared by the three readers (:mod:`xplique_ext.rules.syntax`): one opener
(a byte-order mark skipped, Latin-1 read as Latin-1) and one set of line ends."""

import numpy as np
import pytest

from xplique_ext.rules import (
    NamesParseError,
    evaluate_rules,
    example_path,
    parse_names,
    read_data,
    read_names,
    read_rules,
)
from xplique_ext.rules.syntax import read_text


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
