"""Rules compiled against declarations (:mod:`xplique_ext.rules.compile`)."""

import pytest

from xplique_ext.rules import (
    Attribute,
    Names,
)


def test_typed_head_of_a_head_no_check_read():
    """``typed_head`` is public: a head ``check_rules`` did not check keeps the behaviour of
    0.x (text kept for a boolean class; ``float``'s value or ValueError for a numeric one),
    never None."""
    from xplique_ext.rules.compile import typed_head

    boolean = Names([Attribute("a", "real"), Attribute("b", "boolean")], "b")
    assert [typed_head(boolean, h) for h in ("TRUE", "no", "maybe")] == ["true", "false", "maybe"]
    real = Names([Attribute("a", "real"), Attribute("t", "real")], "t")
    assert typed_head(real, "1e400") == float("inf") and typed_head(real, " 2 ") == 2.0
    with pytest.raises(ValueError, match="could not convert string to float: 'warm'"):
        typed_head(real, "warm")
