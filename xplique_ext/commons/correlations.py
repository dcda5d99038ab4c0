"""Row-wise correlations for many samples at once (no Python loop per sample)."""

from __future__ import annotations

import numpy as np

from .params import ArrayLike, validate_params

__all__ = ["batched_pearson", "batched_spearman", "unit_rows"]


def unit_rows(a: np.ndarray) -> np.ndarray:
    """Each row of ``a`` (N, M) divided by the power of two just above its largest
    magnitude (exact; rows of zeros unchanged), so that sums and squares neither overflow
    nor underflow, and every correlation is unchanged."""
    peak = np.abs(a).max(axis=1) if a.shape[1] else np.zeros(len(a))
    scalable = (peak > 0) & np.isfinite(peak)
    _, exponent = np.frexp(np.where(scalable, peak, 1.0))
    return np.ldexp(a, -exponent[:, None])


def _centred(a: np.ndarray) -> np.ndarray:
    """Each row of ``a`` minus its mean, brought back to a largest magnitude in [0.5, 1)."""
    return unit_rows(a - a.mean(axis=1, keepdims=True))


#: an (N, M) array of rows
_ROWS_ARRAY = ArrayLike("numeric", ndim=2, shapes="(N, M)", batch_hint=False)
#: two (N, M) arrays of one shape (checked by :func:`_same_shape`)
_ROWS = {"a": [_ROWS_ARRAY], "b": [_ROWS_ARRAY]}


def _same_shape(a: np.ndarray, b: np.ndarray) -> None:
    """Row i of ``a`` goes with row i of ``b``: NumPy would broadcast one row to all."""
    if a.shape != b.shape:
        raise ValueError(
            f"`a` and `b` must have the same shape (N, M), got {a.shape} and {b.shape}"
        )


@validate_params(_ROWS)
def batched_pearson(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pearson correlation of each row of ``a`` with the same row of ``b``.

    Scale-invariant in floating point: each row is brought to a largest magnitude in
    [0.5, 1) by an exact power of two before it is centred, and again after, so rows of
    magnitude 1e-170 or 1e300 (float64) give the correlation of the same rows at
    magnitude 1 instead of NaN (squares underflowing) or 0 (squares overflowing).

    Parameters
    ----------
    a, b
        Arrays of shape (N, M).

    Returns
    -------
    r
        Array of shape (N,); NaN where a row of ``a`` or ``b`` is constant or holds a
        non-finite value.

    Examples
    --------
    >>> import numpy as np
    >>> a = np.array([[1.0, 2.0, 4.0]])
    >>> b = np.array([[2.0, 3.0, 7.0]])
    >>> bool(np.isclose(batched_pearson(a * 1e-170, b * 1e300)[0],
    ...                 batched_pearson(a, b)[0], rtol=1e-14))
    True
    """
    _same_shape(a, b)
    a = a.astype(np.float64, copy=False)
    b = b.astype(np.float64, copy=False)
    finite = np.isfinite(a).all(axis=1) & np.isfinite(b).all(axis=1)
    # a correlation with an exactly constant row is undefined
    undefined = ~finite | (a == a[:, :1]).all(axis=1) | (b == b[:, :1]).all(axis=1)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        a = _centred(unit_rows(a))
        b = _centred(unit_rows(b))
        den = np.sqrt(np.einsum("ij,ij->i", a, a)) * np.sqrt(np.einsum("ij,ij->i", b, b))
        r = np.where(undefined | ~(den > 0), np.nan, np.einsum("ij,ij->i", a, b) / den)
    return np.clip(r, -1.0, 1.0)


@validate_params(_ROWS)
def batched_spearman(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Spearman rank correlation (average ranks for ties) of each row pair, shape (N,)."""
    # imported here: scipy.stats costs 0.6 s of start-up to every command that imports
    # the commons (xplique-ext rules among them) and only rank correlations need it
    from scipy.stats import rankdata

    _same_shape(a, b)
    return batched_pearson(rankdata(a, axis=1), rankdata(b, axis=1))
