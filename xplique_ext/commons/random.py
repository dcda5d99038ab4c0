"""Reproducible randomness without global state: local generators only.

**One way of drawing per input.** Every random draw made for one input (a sentence, an
image, a point) comes from :func:`input_rng`: a generator seeded by the metric's or the
explainer's seed and by the input's *content*, never by its position. The same input gets
the same random numbers alone, in another order or in another batch, and two copies of an
input get the same ones.
"""

from __future__ import annotations

import hashlib
from typing import Any, List, Optional

import numpy as np

__all__ = [
    "make_rng",
    "seed_to_int",
    "input_sequence",
    "input_rng",
    "input_generators",
    "cell_permutations",
]

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


def _content_bytes(part: Any) -> bytes:
    """The bytes of one part of an input's content: a string's UTF-8, an array's values
    read as float32 (so that a list, float64, float32 or integers holding the same values
    give the same bytes)."""
    if isinstance(part, str):
        return part.encode("utf-8")
    return np.ascontiguousarray(part, dtype=np.float32).tobytes()


def input_sequence(seed: int, *content: Any) -> np.random.SeedSequence:
    """The :class:`numpy.random.SeedSequence` of one input, from ``seed`` and the input's
    content only (never its position among the inputs).

    Parameters
    ----------
    seed
        A concrete non-negative seed (see :func:`seed_to_int`).
    *content
        The input: strings (read as UTF-8) and arrays (their values read as float32),
        hashed in order with BLAKE2b (128 bits), mixed with ``seed``.

    Examples
    --------
    >>> a = input_sequence(0, np.array([1.0, 2.0])).generate_state(1)
    >>> b = input_sequence(0, [1, 2]).generate_state(1)
    >>> bool((a == b).all())
    True
    """
    digest = hashlib.blake2b(digest_size=16)
    for part in content:
        digest.update(_content_bytes(part))
    words = np.frombuffer(digest.digest(), np.uint32)
    return np.random.SeedSequence(int(seed), spawn_key=(_CONTENT_TAG, *words.tolist()))


def input_rng(seed: int, *content: Any) -> np.random.Generator:
    """The generator of one input's random draws: from ``seed`` and the input's content
    only (see :func:`input_sequence`), so that the input gets the same draws alone, in
    any order and in any batch."""
    return np.random.default_rng(input_sequence(seed, *content))


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
    return [input_rng(seed, row) for row in rows]
