"""Reproducible randomness without global state.

``counter_uniform`` is a counter-based generator: the uniform number drawn for a given
``(seed, i, j, ...)`` depends on nothing else, so results are identical whatever the batch
size or the order in which samples are processed, and it is fully vectorised.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

__all__ = ["counter_uniform", "make_rng", "seed_to_int"]

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31, _S11 = (np.uint64(s) for s in (30, 27, 31, 11))


def _splitmix64(x: np.ndarray) -> np.ndarray:
    z = x + _GOLDEN
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


def seed_to_int(seed: Optional[int]) -> int:
    """A concrete 63-bit integer seed: ``seed`` itself, or fresh entropy when None."""
    if seed is None:
        return int(np.random.SeedSequence().generate_state(1, dtype=np.uint64)[0] >> 1)
    return int(seed) & 0x7FFFFFFFFFFFFFFF


def counter_uniform(seed: int, *indices: np.ndarray) -> np.ndarray:
    """Uniform numbers in [0, 1) indexed by integer counters.

    Parameters
    ----------
    seed
        Integer seed.
    *indices
        Integer arrays broadcast together (for instance sample index, perturbation index
        and cell index). Each must be in [0, 2**32).

    Returns
    -------
    u
        float64 array of the broadcast shape; ``u`` depends only on ``seed`` and the indices.
    """
    with np.errstate(over="ignore"):
        state = _splitmix64(np.full((), seed, dtype=np.uint64))
        for idx in indices:
            idx = np.asarray(idx, dtype=np.uint64)
            state = _splitmix64(state ^ idx)
    return (state >> _S11).astype(np.float64) * (1.0 / 9007199254740992.0)


def make_rng(seed: Optional[int]) -> np.random.Generator:
    """A local NumPy generator (never touches the global state)."""
    return np.random.default_rng(seed)
