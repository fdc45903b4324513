"""The single entry point for randomness: every random routine takes ``seed``."""

from __future__ import annotations

import numpy as np

__all__ = ["as_rng"]


def as_rng(seed: "int | np.random.Generator | None" = None) -> np.random.Generator:
    """Return a ``numpy.random.Generator`` for ``seed`` without touching global state.

    Examples
    --------
    >>> g = as_rng(0)
    >>> as_rng(g) is g
    True
    >>> int(as_rng(1).integers(10)) == int(as_rng(1).integers(10))
    True
    """
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is not None and not isinstance(seed, (int, np.integer, np.random.SeedSequence)):
        raise TypeError(f"seed must be an int, a numpy Generator or None, got {type(seed).__name__}")
    return np.random.default_rng(seed)
