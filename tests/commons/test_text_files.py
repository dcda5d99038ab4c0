"""``commons.text_files``: the one text decoder (UTF-8 first, Latin-1 for the bytes that are
not UTF-8, UTF-16 and UTF-32 refused)."""

import io

import pytest

from xplique_ext.commons.text_files import WideTextError, decode_text, open_text


def test_utf8_first_latin1_only_where_utf8_fails():
    text = "café’s naïve"
    assert decode_text(text.encode("utf-8")) == text
    assert decode_text("café".encode("latin-1")) == "café"
    assert decode_text(b"\xef\xbb\xbf" + text.encode("utf-8")) == text  # byte-order mark
    mixed = "é".encode() + b" " + "é".encode("latin-1")
    assert decode_text(mixed) == "é é"


def test_open_text_keeps_new_lines_and_refuses_utf16(tmp_path):
    path = tmp_path / "mixed.txt"
    path.write_bytes("a\r\nb\rcafé\n".encode() + "été\n".encode("latin-1"))
    with open_text(path) as handle:
        assert handle.read() == "a\r\nb\rcafé\nété\n"
    with open_text(io.BufferedReader(io.BytesIO("x é".encode("latin-1")))) as handle:
        assert handle.read() == "x é"
    wide = tmp_path / "wide.txt"
    wide.write_bytes("café".encode("utf-16"))
    with pytest.raises(WideTextError, match="not a UTF-8 text file"):
        open_text(wide)
    assert issubclass(WideTextError, ValueError)
