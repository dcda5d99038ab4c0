"""The direction of a score, declared once and read everywhere.

Every metric class and every ground-truth measure declares a bool ``higher_is_better``.
Whatever orders scores (a leaderboard's rows, a comparison's ranks, the bars of a plot,
the ``better`` of a pair) reads that declaration through the helpers of this module, so
that no sort decides the direction on its own (always ascending, or from a name).

Examples
--------
>>> order_best_first([0.2, 0.9, float("nan"), 0.5], higher_is_better=True).tolist()
[1, 3, 0, 2]
>>> rank_best_first([0.2, 0.9, 0.2], higher_is_better=False).tolist()
[1.0, 3.0, 1.0]
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["declared_direction", "direction_word", "order_best_first", "rank_best_first"]


def declared_direction(declared: Any) -> bool:
    """The ``higher_is_better`` a metric (class or instance) or a measure declares.

    Parameters
    ----------
    declared
        Anything with a bool attribute ``higher_is_better``.

    Returns
    -------
    bool

    Raises
    ------
    TypeError
        When ``declared`` has no bool ``higher_is_better`` (a direction guessed from a
        name or a default would be a second declaration).
    """
    value = getattr(declared, "higher_is_better", None)
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(
            "a metric or measure must declare a bool `higher_is_better`, got "
            f"{type(declared).__name__} with higher_is_better={value!r}"
        )
    return bool(value)


def direction_word(higher_is_better: bool) -> str:
    """'higher' or 'lower': the word of labels such as '(lower is better)'."""
    if higher_is_better:
        return "higher"
    return "lower"


def _best_first_keys(values: Any, higher_is_better: bool) -> np.ndarray:
    """Float64 keys that sort ascending from the best value to the worst, NaN for values
    that are not finite (they have no place in the order)."""
    keys = np.asarray(values, dtype=np.float64).reshape(-1)
    keys = np.where(np.isfinite(keys), keys, np.nan)
    if higher_is_better:
        return -keys
    return keys


def order_best_first(values: Any, higher_is_better: bool) -> np.ndarray:
    """The positions of ``values`` from the best to the worst in the declared direction.

    Parameters
    ----------
    values
        Scores (N,) (any array-like of numbers).
    higher_is_better
        The declared direction (see :func:`declared_direction`).

    Returns
    -------
    numpy.ndarray
        Integer positions (N,): a stable order (ties keep their order), values that are
        not finite (NaN, inf) last, in their order.
    """
    return np.argsort(_best_first_keys(values, higher_is_better), kind="stable")


def rank_best_first(values: Any, higher_is_better: bool) -> np.ndarray:
    """Ranks of ``values`` in the declared direction: 1 for the best, ties share the
    smaller rank (``method='min'``), NaN for values that are not finite.

    Parameters
    ----------
    values
        Scores (N,).
    higher_is_better
        The declared direction.

    Returns
    -------
    numpy.ndarray
        Float64 ranks (N,).
    """
    keys = _best_first_keys(values, higher_is_better)
    ranks = np.full(keys.shape, np.nan)
    finite = ~np.isnan(keys)
    defined = keys[finite]
    # the rank of a value: 1 + how many values are strictly better
    ranks[finite] = 1.0 + np.searchsorted(np.sort(defined), defined, side="left")
    return ranks
