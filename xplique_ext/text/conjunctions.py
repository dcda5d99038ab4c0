"""The conjunctions of PERCY's logic rules (Table 1 / Table 2 of the paper): which
conjunct of an ``A keyword B`` sentence carries its sentiment, for each keyword.

=========  ===============
keyword    rule conjunct
=========  ===============
but        B
yet        B
though     A
while      A
=========  ===============
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Dict, Iterator

from ..commons.params import InstanceOf, validate_params

__all__ = ["DEFAULT_RULES", "RuleTable", "resolve_rules"]

#: Table 1 of the PERCY paper: keyword -> the conjunct ('A' before, 'B' after) that
#: should carry the sentence's sentiment.
DEFAULT_RULES: Dict[str, str] = {"but": "B", "yet": "B", "though": "A", "while": "A"}


#: A rule table: a mapping keyword -> 'A' or 'B' (its keys and values checked below).
_TABLE = InstanceOf(
    dict, Mapping, description="a mapping keyword -> 'A' or 'B' (e.g. {'however': 'B'})"
)


def _check_table(mapping: Any, name: str, allow_none: bool) -> Dict[str, Any]:
    table: Dict[str, Any] = {}
    for key, value in mapping.items():
        if not isinstance(key, str) or len(key.split()) != 1:
            raise ValueError(
                f"`{name}` keys must be non-empty single words without whitespace, got {key!r}"
            )
        if isinstance(value, str) and value.upper() in ("A", "B"):
            value = value.upper()
        elif not (allow_none and value is None):
            allowed = "'A', 'B' or None" if allow_none else "'A' or 'B'"
            raise ValueError(
                f"`{name}[{key!r}]` must be {allowed} (the conjunct the rule "
                f"expects), got {value!r}"
            )
        norm = key.strip().lower()
        if table.get(norm, value) != value:
            raise ValueError(
                f"`{name}` maps {norm!r} to both {table[norm]!r} and {value!r} "
                "(keywords are case-insensitive)"
            )
        table[norm] = value
    return table


class RuleTable(Mapping):
    """A complete rule table keyword -> 'A' / 'B' (keywords lower-cased).

    Passing a ``RuleTable`` as ``rules`` *replaces* the default table; passing a plain
    dict *extends* it (see :func:`resolve_rules`).

    Examples
    --------
    >>> RuleTable({"However": "B"})
    RuleTable({'however': 'B'})
    """

    @validate_params({"mapping": [_TABLE]})
    def __init__(self, mapping: Mapping):
        self._table = _check_table(mapping, "rules", allow_none=False)
        if not self._table:
            raise ValueError("`rules` must hold at least one keyword, got an empty mapping")

    def __getitem__(self, key: str) -> str:
        return self._table[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._table)

    def __len__(self) -> int:
        return len(self._table)

    def __repr__(self) -> str:
        return f"RuleTable({self._table!r})"


@validate_params({"rules": [None, _TABLE]})
def resolve_rules(rules: Any = None) -> RuleTable:
    """The rule table used by PERCY.

    Parameters
    ----------
    rules
        None: :data:`DEFAULT_RULES`. A :class:`RuleTable`: used as is (replaces the
        defaults). A mapping: extends the defaults, overriding keywords it names; a value
        None removes a default keyword, e.g. ``{'however': 'B', 'while': None}``.

    Returns
    -------
    RuleTable

    Examples
    --------
    >>> sorted(resolve_rules({"although": "A", "while": None}).items())
    [('although', 'A'), ('but', 'B'), ('though', 'A'), ('yet', 'B')]
    """
    if isinstance(rules, RuleTable):
        return rules
    table = {**DEFAULT_RULES, **_check_table(rules or {}, "rules", allow_none=True)}
    return RuleTable({key: value for key, value in table.items() if value is not None})
