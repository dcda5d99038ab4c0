"""Row-wise correlations for many samples at once (no Python loop per sample)."""

from __future__ import annotations

import numpy as np

__all__ = ["batched_pearson", "batched_spearman"]


def batched_pearson(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pearson correlation of each row of ``a`` with the same row of ``b``.

    Parameters
    ----------
    a, b
        Arrays of shape (N, M).

    Returns
    -------
    r
        Array of shape (N,); NaN where a row of ``a`` or ``b`` is constant.
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    # a correlation with an exactly constant row is undefined
    undefined = (np.ptp(a, axis=1) == 0) | (np.ptp(b, axis=1) == 0)
    a = a - a.mean(axis=1, keepdims=True)
    b = b - b.mean(axis=1, keepdims=True)
    num = np.einsum("ij,ij->i", a, b)
    den = np.sqrt(np.einsum("ij,ij->i", a, a) * np.einsum("ij,ij->i", b, b))
    undefined |= den == 0
    r = np.full(a.shape[0], np.nan)
    r[~undefined] = num[~undefined] / den[~undefined]
    return np.clip(r, -1.0, 1.0)


def batched_spearman(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Spearman rank correlation (average ranks for ties) of each row pair, shape (N,)."""
    # imported here: scipy.stats costs 0.6 s of start-up to every command that imports
    # the commons (xplique-ext rules among them) and only rank correlations need it
    from scipy.stats import rankdata

    ra = rankdata(np.asarray(a), axis=1)
    rb = rankdata(np.asarray(b), axis=1)
    return batched_pearson(ra, rb)
