"""Argument checks shared by every package (one place, one wording)."""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np

from circuits.utils.errors import ArgumentTypeError, DimensionError, InvalidArgumentError

__all__ = ["check_int", "check_real"]


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def check_int(value, *, name: str, minimum: "int | None" = None, maximum: "int | None" = None,
              what: "str | None" = None) -> int:
    """Return ``value`` as a Python int, or raise a message naming ``name`` and the allowed range.

    A non-integer (bools included) raises
    :class:`~circuits.utils.errors.ArgumentTypeError` (a ``TypeError``); an integer outside
    ``[minimum, maximum]`` raises :class:`~circuits.utils.errors.DimensionError` (a ``ValueError``).
    ``what`` says what the number is, e.g. ``"a polynomial degree"``.

    >>> check_int(np.int64(3), name="n", minimum=1)
    3
    >>> check_int(0, name="k", minimum=1, what="the number of copies")
    Traceback (most recent call last):
    ...
    circuits.utils.errors.DimensionError: k must be >= 1 (the number of copies), got 0
    """
    about = f" ({what})" if what else ""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (Integral, np.integer)):
        raise ArgumentTypeError(f"{name} must be an int{about}, got {type(value).__name__} "
                                f"{_short(value)}")
    v = int(value)
    if minimum is not None and maximum is not None and not minimum <= v <= maximum:
        raise DimensionError(f"{name} must be between {minimum} and {maximum}{about}, got {v}")
    if minimum is not None and v < minimum:
        raise DimensionError(f"{name} must be >= {minimum}{about}, got {v}")
    if maximum is not None and v > maximum:
        raise DimensionError(f"{name} must be <= {maximum}{about}, got {v}")
    return v


def _plain(value):
    """A numpy scalar as the Python number it holds, so messages print ``0.5``, not
    ``np.float64(0.5)``; anything else unchanged."""
    return value.item() if isinstance(value, np.generic) else value


def check_real(value, *, name: str, minimum: "float | None" = None, maximum: "float | None" = None,
               strict: bool = True, allow_none: bool = False, allow_inf: bool = False,
               what: "str | None" = None) -> "float | None":
    """Return ``value`` as a float, or raise a message naming ``name`` and the allowed range.

    The one check for real-valued arguments (step sizes, radii, tolerances, margins).  A
    non-number (bools and strings included) raises ``TypeError``; NaN, an infinity (unless
    ``allow_inf``) or a value outside the range raises
    :class:`~circuits.utils.errors.InvalidArgumentError` (a ``ValueError``).  ``minimum`` is
    exclusive when ``strict`` (the default: ``minimum=0`` means "positive"), inclusive otherwise;
    ``maximum`` is inclusive.  ``None`` passes through when ``allow_none``.

    >>> check_real(0.5, name="lr", minimum=0)
    0.5
    >>> check_real(-1, name="lr", minimum=0, what="the Adam step size")
    Traceback (most recent call last):
    ...
    circuits.utils.errors.InvalidArgumentError: lr must be > 0 (the Adam step size), got -1
    >>> check_real(0, name="tol", minimum=0, strict=False)
    0.0
    """
    if value is None and allow_none:
        return None
    about = f" ({what})" if what else ""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (Real, np.integer, np.floating)):
        raise ArgumentTypeError(f"{name} must be a real number{about}, got "
                                f"{type(value).__name__} {_short(value)}")
    v = float(value)
    if math.isnan(v) or (math.isinf(v) and not allow_inf):
        raise InvalidArgumentError(f"{name} must be a finite number{about}, got {_plain(value)!r}")
    if minimum is not None and (v <= minimum if strict else v < minimum):
        op = ">" if strict else ">="
        raise InvalidArgumentError(f"{name} must be {op} {minimum:g}{about}, got {_plain(value)!r}")
    if maximum is not None and v > maximum:
        raise InvalidArgumentError(f"{name} must be <= {maximum:g}{about}, got {_plain(value)!r}")
    return v
