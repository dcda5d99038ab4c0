"""Reproducible randomness without global state: local generators only."""

from __future__ import annotations

from typing import Optional

import numpy as np

__all__ = ["make_rng", "seed_to_int", "content_keys", "cell_permutations"]


def seed_to_int(seed: Optional[int]) -> int:
    """A concrete 63-bit integer seed: ``seed`` itself, or fresh entropy when None."""
    if seed is None:
        return int(np.random.SeedSequence().generate_state(1, dtype=np.uint64)[0] >> 1)
    return int(seed) & 0x7FFFFFFFFFFFFFFF


def make_rng(seed: Optional[int]) -> np.random.Generator:
    """A local NumPy generator (never touches the global state)."""
    return np.random.default_rng(seed)


_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


def _splitmix64(z: np.ndarray) -> np.ndarray:
    """SplitMix64 finaliser, vectorised (uint64 arithmetic wraps modulo 2**64)."""
    with np.errstate(over="ignore"):
        z = np.asarray(z, dtype=np.uint64) + _GOLDEN
        z = (z ^ (z >> np.uint64(30))) * _M1
        z = (z ^ (z >> np.uint64(27))) * _M2
        return z ^ (z >> np.uint64(31))


def content_keys(x: np.ndarray, seed: int, rows_per_step: int = 8) -> np.ndarray:
    """A 64-bit key per row of ``x`` (axis 0) that depends only on ``seed`` and the row's
    bytes: a seeded, position-weighted hash computed without a Python loop per row
    (rows are processed ``rows_per_step`` at a time to bound memory).

    Returns
    -------
    keys
        uint64 array of shape (len(x),).
    """
    flat = np.ascontiguousarray(x).reshape(len(x), -1)
    words = flat.view(np.uint32) if flat.dtype.itemsize % 4 == 0 else flat.view(np.uint8)
    base = _splitmix64(np.uint64(seed))
    with np.errstate(over="ignore"):
        weights = _splitmix64(np.arange(words.shape[1], dtype=np.uint64) ^ base) | np.uint64(1)
        keys = np.empty(len(x), dtype=np.uint64)
        for s in range(0, len(x), rows_per_step):
            part = words[s:s + rows_per_step].astype(np.uint64)
            keys[s:s + rows_per_step] = (part * weights).sum(axis=1, dtype=np.uint64)
        return _splitmix64(keys ^ base)


def cell_permutations(x: np.ndarray, n_cells: int, seed: int) -> np.ndarray:
    """One random permutation of ``range(n_cells)`` per input, drawn from ``seed`` and the
    input's content only (the same input gets the same permutation in any batch, at any
    position).

    Returns
    -------
    perms
        int64 array of shape (len(x), n_cells).
    """
    keys = content_keys(x, seed)
    with np.errstate(over="ignore"):
        cells = _splitmix64(np.arange(n_cells, dtype=np.uint64) + np.uint64(seed))
        draws = _splitmix64(keys[:, None] ^ cells[None, :])
    return np.argsort(draws, axis=1, kind="stable")
