"""Agreement between explanation frameworks on PERCY (section 6.4.2 of the PERCY paper).

* :func:`percy_rank_agreement` -- Kendall's tau between the rankings of several models
  by L-, S- and I-PERCY (Fig. 6), or by any other column such as accuracy (Fig. 4).
* :func:`percy_pearson_agreement` -- Pearson correlation between the per-sentence PERCY
  vectors of two frameworks, concatenated over the models (Eq. 11, Fig. 7).
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np
import pandas as pd

from ..commons.pandas_inputs import align_by_index
from ..commons.params import ArrayLike, InstanceOf, check_param, validate_params
from ..commons.warnings import UndefinedScoreWarning, warn

__all__ = ["percy_rank_agreement", "percy_pearson_agreement"]

_SCORES = [ArrayLike("real", ndim=(0, 1), shapes="(N,), a list of them or of scores")]


@validate_params(
    {
        "scores": [
            InstanceOf(
                pd.DataFrame,
                Mapping,
                description="a pandas DataFrame or a mapping framework -> values",
            )
        ]
    }
)
def percy_rank_agreement(scores: Any):
    """Kendall's tau (tau-b) between the rankings of models by each pair of columns.

    Parameters
    ----------
    scores
        DataFrame with one row per model and one column per framework (e.g.
        ``'L-PERCY'``, ``'S-PERCY'``, ``'I-PERCY'``, ``'accuracy'``), or a mapping
        column -> sequence of per-model values. pandas Series in a mapping pair by their
        index, as the columns of a DataFrame: Series indexed differently (other models,
        or the same in another order) are refused with a ValueError (see
        :func:`~xplique_ext.commons.pandas_inputs.align_by_index`).

    Returns
    -------
    pandas.DataFrame
        Square matrix of tau in [-1, 1] (1: same ranking); NaN when a column is
        constant (with an :class:`~xplique_ext.commons.warnings.UndefinedScoreWarning`).

    References
    ----------
    Kendall, "A new measure of rank correlation", Biometrika 1938; PERCY paper, Fig. 4
    and 6.

    Examples
    --------
    >>> t = percy_rank_agreement({"L": [0.1, 0.3, 0.2], "S": [0.05, 0.2, 0.1]})
    >>> float(t.loc["L", "S"])
    1.0
    """
    if not isinstance(scores, pd.DataFrame):  # a DataFrame's columns share its index
        scores = align_by_index(scores, "scores")
    table = _table(
        {k: _scores(v, f"scores[{k!r}]") for k, v in scores.items()},
        "scores",
        "model",
        getattr(scores, "index", None),
        rows=2,
    )
    # pandas calls scipy.stats.kendalltau (tau-b) on the rows where both columns are finite
    return _correlation(table, "kendall", "Kendall tau is undefined (constant ranking)")


def _correlation(table: pd.DataFrame, method: str, what: str) -> pd.DataFrame:
    """pandas' correlation matrix of the columns (on the rows where both are finite), 1 on
    the diagonal, NaN where fewer than two rows remain or a column is constant, with one
    UndefinedScoreWarning naming the pairs whose coefficient is NaN."""
    out = table.replace([np.inf, -np.inf], np.nan).corr(method=method, min_periods=2)
    values = out.to_numpy(copy=True)
    np.fill_diagonal(values, 1.0)  # a ranking agrees with itself, even with < 2 values
    cols = list(out.columns)
    i, j = np.triu_indices(len(cols), k=1)
    undefined = [f"{cols[a]}/{cols[b]}" for a, b in zip(i, j) if np.isnan(values[a, b])]
    if undefined:
        warn(f"{what} for {', '.join(undefined)}; set to NaN.", UndefinedScoreWarning)
    return pd.DataFrame(values, index=out.index, columns=out.columns)


@validate_params(
    {
        "per_sentence": [
            InstanceOf(dict, Mapping, description="a mapping framework -> per-sentence scores")
        ]
    }
)
def percy_pearson_agreement(per_sentence: Mapping[str, Any]):
    """Pearson correlation between per-sentence PERCY vectors of frameworks (Eq. 11).

    Parameters
    ----------
    per_sentence
        Mapping framework -> per-sentence PERCY scores (1/0, NaN for sentences without
        keyword), either one array or a list of arrays (one per model, concatenated in
        order, as Eq. 11 concatenates the test sets of every classifier). Every
        framework must cover the same sentences; pandas Series pair by their index
        (Series, or the k-th Series of each list, indexed differently are refused with a
        ValueError, see :func:`~xplique_ext.commons.pandas_inputs.align_by_index`).

    Returns
    -------
    pandas.DataFrame
        Square matrix of Pearson's r over the sentences scored by every framework; NaN
        when a vector is constant (with an UndefinedScoreWarning).

    Examples
    --------
    >>> r = percy_pearson_agreement({"L": [1, 0, 1, 0, np.nan], "I": [1, 0, 1, 1, 0]})
    >>> round(float(r.loc["L", "I"]), 3)
    0.577
    """
    # one array (N,) per framework, or a list of them (one per model) concatenated in order
    pieces = {
        name: list(value) if isinstance(value, (list, tuple)) else [value]
        for name, value in per_sentence.items()
    }
    # the k-th piece of every framework scores the same sentences (one model's test set)
    n_models = min((len(p) for p in pieces.values()), default=0)
    for k in range(n_models):
        align_by_index({name: p[k] for name, p in pieces.items()}, "per_sentence")
    vectors = {
        name: np.concatenate(
            [_scores(piece, f"per_sentence[{name!r}]") for piece in value] + [np.empty(0)]
        )
        for name, value in pieces.items()
    }
    table = _table(vectors, "per_sentence", "sentence").replace([np.inf, -np.inf], np.nan).dropna()
    # on the sentences scored by every framework
    return _correlation(table, "pearson", "Pearson r is undefined (constant PERCY vector)")


def _scores(value: Any, name: str) -> np.ndarray:
    """Scores (N,) as floats (a scalar is one score); strings, booleans, ranks 2+ refused."""
    return np.atleast_1d(check_param(value, name, _SCORES)).astype(np.float64)


def _table(
    columns: Mapping[Any, np.ndarray], name: str, what: str, index: Any = None, rows: int = 0
) -> pd.DataFrame:
    """The columns as a DataFrame (their keys as they are: 1 and '1' stay two columns): at
    least two, of one length (one value per ``what``), at least ``rows``."""
    lengths = {k: len(v) for k, v in columns.items()}
    if len(lengths) < 2 or len(set(lengths.values())) > 1 or min(lengths.values()) < rows:
        raise ValueError(
            f"`{name}` must hold at least two frameworks scored on the same {what}s"
            + (f" (at least {rows})" if rows else "")
            + f", got lengths {lengths}"
        )
    return pd.DataFrame(columns, index=index)
