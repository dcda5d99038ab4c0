"""Reproducible randomness without global state: local generators only."""

from __future__ import annotations

import hashlib
from typing import List, Optional

import numpy as np

__all__ = ["make_rng", "seed_to_int", "cell_permutations", "input_generators"]

_MASK63 = (1 << 63) - 1
# spawn-key tag that keeps the per-input streams apart from the metric's own stream
_CONTENT_TAG = 0x6D75_4669


def seed_to_int(seed: Optional[int]) -> int:
    """A concrete 63-bit integer seed: ``seed`` itself when it fits in 63 bits, a mix of
    all of its bits through :class:`numpy.random.SeedSequence` when it is larger (so
    that 2**63 and 0 differ), or fresh entropy when None."""
    if seed is not None and 0 <= int(seed) <= _MASK63:
        return int(seed)
    sequence = np.random.SeedSequence(None if seed is None else abs(int(seed)))
    return int(sequence.generate_state(1, dtype=np.uint64)[0] >> 1)


def make_rng(seed: Optional[int]) -> np.random.Generator:
    """A local NumPy generator (never touches the global state); every bit of ``seed``
    counts (NumPy seeds through :class:`numpy.random.SeedSequence`)."""
    return np.random.default_rng(seed)


def cell_permutations(x: np.ndarray, n_cells: int, seed: int) -> np.ndarray:
    """One random permutation of ``range(n_cells)`` per input, drawn from ``seed`` and the
    input's values only, read as float32 (the same input gets the same permutation in any
    batch, at any position, whatever its dtype: a list, float64, float32 or integers).

    Returns
    -------
    perms
        int64 array of shape (len(x), n_cells).
    """
    perms = np.empty((len(x), n_cells), dtype=np.int64)
    for i, rng in enumerate(input_generators(x, seed)):
        perms[i] = rng.permutation(n_cells)
    return perms


def input_generators(x: np.ndarray, seed: int) -> List[np.random.Generator]:
    """One local generator per input, drawn from ``seed`` and the input's values only,
    read as float32: the same input gets the same draws in any batch, at any position,
    whatever its dtype (a list, float64, float32 or integers).

    Returns
    -------
    generators
        ``len(x)`` NumPy generators, in the order of the inputs.
    """
    rows = np.ascontiguousarray(x, dtype=np.float32).reshape(len(x), -1)
    generators = []
    for row in rows:
        # a BLAKE2b digest (128 bits) of the row's bytes, mixed with the seed
        words = np.frombuffer(hashlib.blake2b(row.tobytes(), digest_size=16).digest(), np.uint32)
        sequence = np.random.SeedSequence(int(seed), spawn_key=(_CONTENT_TAG, *words.tolist()))
        generators.append(np.random.default_rng(sequence))
    return generators
