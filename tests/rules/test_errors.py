"""The parse errors of the rules readers (:mod:`xplique_ext.rules.errors`)."""

from xplique_ext.rules import (
    DataParseError,
    NamesParseError,
    ParseError,
    RuleParseError,
)


def test_parse_error_hierarchy():
    for cls in (NamesParseError, DataParseError, RuleParseError):
        assert issubclass(cls, ParseError) and issubclass(cls, ValueError)
    import pickle

    error = RuleParseError("boom", file="f", line=3, text="x")
    again = pickle.loads(pickle.dumps(error))
    assert (again.file, again.line, again.text, str(again)) == ("f", 3, "x", str(error))
