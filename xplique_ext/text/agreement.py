"""Agreement between explanation frameworks on PERCY (section 6.4.2 of the PERCY paper).

* :func:`percy_rank_agreement` -- Kendall's tau between the rankings of several models
  by L-, S- and I-PERCY (Fig. 6), or by any other column such as accuracy (Fig. 4).
* :func:`percy_pearson_agreement` -- Pearson correlation between the per-sentence PERCY
  vectors of two frameworks, concatenated over the models (Eq. 11, Fig. 7).
"""

from __future__ import annotations

import warnings
from typing import Any, Mapping

import numpy as np
import pandas as pd

from ..commons.params import InstanceOf, validate_params
from ..commons.warnings import UndefinedScoreWarning, warn

__all__ = ["percy_rank_agreement", "percy_pearson_agreement"]


def _as_table(scores: Any, name: str):

    if isinstance(scores, pd.DataFrame):
        table = scores.copy()
    else:  # a mapping (declared)
        table = pd.DataFrame({str(k): list(v) for k, v in scores.items()})
    if table.shape[1] < 2:
        raise ValueError(
            f"`{name}` must hold at least two frameworks (columns), got {table.shape[1]}"
        )
    return table


@validate_params({"scores": [InstanceOf(
    pd.DataFrame, Mapping, description="a pandas DataFrame or a mapping framework -> values")]})
def percy_rank_agreement(scores: Any):
    """Kendall's tau (tau-b) between the rankings of models by each pair of columns.

    Parameters
    ----------
    scores
        DataFrame with one row per model and one column per framework (e.g.
        ``'L-PERCY'``, ``'S-PERCY'``, ``'I-PERCY'``, ``'accuracy'``), or a mapping
        column -> sequence of per-model values.

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
    import pandas as pd

    table = _as_table(scores, "scores").astype(float)
    if len(table) < 2:
        raise ValueError(f"`scores` must hold at least two models (rows), got {len(table)}")
    # pandas calls scipy.stats.kendalltau (tau-b) on the rows where both columns are
    # finite; NaN where fewer than two rows remain or a column is constant
    out = table.replace([np.inf, -np.inf], np.nan).corr(method="kendall", min_periods=2)
    values = out.to_numpy(copy=True)
    np.fill_diagonal(values, 1.0)  # a ranking agrees with itself, even with < 2 values
    out = pd.DataFrame(values, index=out.index, columns=out.columns)
    _warn_undefined(out, "Kendall tau is undefined (constant ranking)")
    return out


def _warn_undefined(matrix, what: str) -> None:
    """One UndefinedScoreWarning naming the pairs whose coefficient is NaN."""
    cols = list(matrix.columns)
    values = matrix.to_numpy()
    undefined = [
        f"{a}/{cols[j]}"
        for i, a in enumerate(cols)
        for j in range(i + 1, len(cols))
        if np.isnan(values[i, j])
    ]
    if undefined:
        warn(
            f"{what} for {', '.join(undefined)}; set to NaN.",
            UndefinedScoreWarning,
        )


@validate_params({"per_sentence": [InstanceOf(
    dict, Mapping, description="a mapping framework -> per-sentence scores")]})
def percy_pearson_agreement(per_sentence: Mapping[str, Any]):
    """Pearson correlation between per-sentence PERCY vectors of frameworks (Eq. 11).

    Parameters
    ----------
    per_sentence
        Mapping framework -> per-sentence PERCY scores (1/0, NaN for sentences without
        keyword), either one array or a list of arrays (one per model, concatenated in
        order, as Eq. 11 concatenates the test sets of every classifier). Every
        framework must cover the same sentences.

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
    import pandas as pd

    if len(per_sentence) < 2:
        raise ValueError(
            f"`per_sentence` must hold at least two frameworks, got {len(per_sentence)}"
        )
    vectors = {}
    for name, value in per_sentence.items():
        if isinstance(value, (list, tuple)) and value and np.ndim(value[0]) == 1:
            arr = np.concatenate([np.asarray(v, dtype=np.float64) for v in value])
        else:
            arr = np.asarray(value, dtype=np.float64).reshape(-1)
        vectors[str(name)] = arr
    lengths = {k: len(v) for k, v in vectors.items()}
    if len(set(lengths.values())) != 1:
        raise ValueError(
            f"`per_sentence` vectors must cover the same sentences, got lengths {lengths}"
        )
    from scipy import stats

    stack = np.stack(list(vectors.values()))
    stack = stack[:, np.all(np.isfinite(stack), axis=0)]
    names = list(vectors)
    out = np.eye(len(names))
    i, j = np.triu_indices(len(names), k=1)
    if stack.shape[1] >= 2:
        with warnings.catch_warnings():  # a constant vector: ours below names the pair
            warnings.simplefilter("ignore", stats.ConstantInputWarning)
            r = stats.pearsonr(stack[i], stack[j], axis=1).statistic
    else:
        r = np.full(len(i), np.nan)
    out[i, j] = out[j, i] = r
    out = pd.DataFrame(out, index=names, columns=names)
    _warn_undefined(out, "Pearson r is undefined (constant PERCY vector)")
    return out
