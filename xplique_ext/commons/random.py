"""Reproducible randomness without global state: local generators only."""

from __future__ import annotations

from typing import Optional

import numpy as np

__all__ = ["make_rng", "seed_to_int"]


def seed_to_int(seed: Optional[int]) -> int:
    """A concrete 63-bit integer seed: ``seed`` itself, or fresh entropy when None."""
    if seed is None:
        return int(np.random.SeedSequence().generate_state(1, dtype=np.uint64)[0] >> 1)
    return int(seed) & 0x7FFFFFFFFFFFFFFF


def make_rng(seed: Optional[int]) -> np.random.Generator:
    """A local NumPy generator (never touches the global state)."""
    return np.random.default_rng(seed)
