"""Argument checks shared by every package (one place, one wording)."""

from __future__ import annotations

from numbers import Integral

import numpy as np

from circuits.errors import DimensionError

__all__ = ["check_int"]


def check_int(value, *, name: str, minimum: "int | None" = None, maximum: "int | None" = None,
              what: "str | None" = None) -> int:
    """Return ``value`` as a Python int, or raise a message naming ``name`` and the allowed range.

    A non-integer (bools included) raises ``TypeError``; an integer outside
    ``[minimum, maximum]`` raises :class:`~circuits.errors.DimensionError` (a ``ValueError``).
    ``what`` says what the number is, e.g. ``"a polynomial degree"``.

    >>> check_int(np.int64(3), name="n", minimum=1)
    3
    >>> check_int(0, name="k", minimum=1, what="the number of copies")
    Traceback (most recent call last):
    ...
    circuits.errors.DimensionError: k must be >= 1 (the number of copies), got 0
    """
    about = f" ({what})" if what else ""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (Integral, np.integer)):
        raise TypeError(f"{name} must be an int{about}, got {type(value).__name__}")
    v = int(value)
    if minimum is not None and maximum is not None and not minimum <= v <= maximum:
        raise DimensionError(f"{name} must be between {minimum} and {maximum}{about}, got {v}")
    if minimum is not None and v < minimum:
        raise DimensionError(f"{name} must be >= {minimum}{about}, got {v}")
    if maximum is not None and v > maximum:
        raise DimensionError(f"{name} must be <= {maximum}{about}, got {v}")
    return v
