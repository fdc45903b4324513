"""The hypercube convention, written down once.

Points of {0,1}^N are the integers ``k = 0 .. 2**N - 1``.  **Bit i of point k is
``(k >> i) & 1``**, so x_0 is the least significant bit; this matches
``np.unpackbits(..., bitorder="little")``.  A truth table is a ``uint8`` array of length 2^N
in increasing ``k``.  Signs are ``1 - 2*bits`` (bit 0 -> +1, bit 1 -> -1).

For functions of two n-bit strings (IP mod 2 and the communication-matrix view) the first
party x (Alice, also called a) is the low n bits and the second party y (Bob, b) the high n
bits: ``x = k & (2**n - 1)``, ``y = k >> n``.  Hence ``table.reshape(2**n, 2**n)`` is indexed
``[y, x]``; :func:`as_matrix` returns the ``[x, y]`` view (rows = Alice).

No other module computes bit positions by hand: they call this one.
"""

from __future__ import annotations

import os

import numpy as np

from circuits.utils.errors import DimensionError, InvalidCircuitError
from circuits.utils.validation import check_int

__all__ = [
    "MAX_EXHAUSTIVE_BITS",
    "MAX_STREAM_BITS",
    "points",
    "as_bit_rows",
    "index_of",
    "bits_of",
    "signs",
    "split_index",
    "join_index",
    "as_matrix",
    "from_matrix",
    "check_exhaustive",
    "check_n_bits",
    "available_memory_bytes",
]

#: Largest N for which routines that *materialise* a 2^N array work without ``allow_large``.
MAX_EXHAUSTIVE_BITS = 24
#: Largest N that the streaming counters accept (indices are int64 and counts must fit).
MAX_STREAM_BITS = 62


def check_n_bits(n: int, *, name: str = "n", minimum: int = 0, maximum: int = MAX_STREAM_BITS) -> int:
    """Validate a bit count and return it as a Python int."""
    return check_int(n, name=name, minimum=minimum, maximum=maximum)


def available_memory_bytes() -> int:
    """Physical memory currently available (Linux ``/proc/meminfo``; sysconf elsewhere)."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):  # pragma: no cover - exotic platforms
        return 1 << 34


def check_exhaustive(n: int, *, allow_large: bool = False, bytes_per_point: float = 1.0,
                     what: str = "this routine") -> int:
    """Refuse to materialise 2^n values unless it is small or explicitly allowed and fits.

    Raises
    ------
    DimensionError
        If ``n > MAX_EXHAUSTIVE_BITS`` without ``allow_large=True``, or if the estimated memory
        exceeds what is available; the message gives the estimate and the way out.
    """
    n = check_n_bits(n, name="n_inputs")
    need = (1 << n) * bytes_per_point
    if n > MAX_EXHAUSTIVE_BITS and not allow_large:
        raise DimensionError(
            f"{what} would materialise 2^{n} values (about {need / 2**30:.2f} GiB); "
            f"n > MAX_EXHAUSTIVE_BITS = {MAX_EXHAUSTIVE_BITS}. Pass allow_large=True if you have "
            f"the memory, or use a streaming counter (count_ones, count_disagreements) instead")
    avail = available_memory_bytes()
    if need > 0.8 * avail:
        raise DimensionError(
            f"{what} needs about {need / 2**30:.2f} GiB for 2^{n} values but only "
            f"{avail / 2**30:.2f} GiB is available; use a streaming counter (count_ones, "
            f"count_disagreements) or a Dask client (client=...) instead")
    return n


def points(n: int, start: int = 0, stop: "int | None" = None) -> np.ndarray:
    """Bits of the points ``k`` in ``range(start, stop)`` of {0,1}^n as a ``(stop-start, n)`` uint8 array.

    Parameters
    ----------
    n : int
        Number of bits.
    start : int
        First index k.
    stop : int, optional
        One past the last index (default 2^n).

    Examples
    --------
    >>> points(2).tolist()          # k = 0, 1, 2, 3; column i is bit i = (k >> i) & 1
    [[0, 0], [1, 0], [0, 1], [1, 1]]
    """
    n = check_n_bits(n)
    stop = (1 << n) if stop is None else int(stop)
    if not 0 <= start <= stop <= (1 << n):
        raise DimensionError(f"need 0 <= start <= stop <= 2^{n}, got start={start}, stop={stop}")
    if stop - start > (1 << MAX_EXHAUSTIVE_BITS):
        check_exhaustive(max(n, MAX_EXHAUSTIVE_BITS + 1), bytes_per_point=n, what="points()")
    k = np.arange(start, stop, dtype=np.int64)
    return bits_of(k, n)


def bits_of(k, n: int) -> np.ndarray:
    """Bits of integer point indices ``k`` (any shape) as uint8 with a trailing axis of length n.

    Examples
    --------
    >>> bits_of(6, 4).tolist()
    [0, 1, 1, 0]
    """
    n = check_n_bits(n)
    k = np.asarray(k, dtype=np.int64)
    if np.any(k < 0) or (n < 63 and np.any(k >= (1 << n))):
        raise DimensionError(f"point indices must lie in [0, 2^{n}), got min {k.min()} max {k.max()}")
    return ((k[..., None] >> np.arange(n, dtype=np.int64)) & 1).astype(np.uint8)


def as_bit_rows(bits, n: int, *, name: str = "bits") -> np.ndarray:
    """Validate a batch of points given as bit rows and return it as C-contiguous uint8 (k, n).

    A single row of length n is accepted as a batch of one.  Bool, integer and float arrays are
    accepted when every entry is exactly 0 or 1.

    Raises
    ------
    DimensionError
        If the rows do not have n columns.
    InvalidCircuitError
        If an entry is not 0 or 1, or the dtype is not numeric.

    >>> as_bit_rows([1, 0, 1], 3).tolist()
    [[1, 0, 1]]
    """
    z = np.asarray(bits)
    if z.ndim == 1:
        z = z[None, :]
    if z.ndim != 2 or z.shape[1] != n:
        raise DimensionError(f"{name} must have shape (n_points, {n}), got {np.shape(bits)}; use "
                             f"circuits.hypercube.points({n}) or .reshape(-1, {n})")
    if z.dtype == np.bool_:
        z = z.view(np.uint8)
    elif not (np.issubdtype(z.dtype, np.integer) or np.issubdtype(z.dtype, np.floating)):
        raise InvalidCircuitError(f"{name} must be numeric 0/1 values, got dtype {z.dtype}")
    elif z.size and not ((z == 0) | (z == 1)).all():
        bad = z[(z != 0) & (z != 1)][0].item()
        raise InvalidCircuitError(f"{name} must contain only 0 and 1, found {bad!r}; for +-1 signs "
                                  f"use (1 - s) // 2")
    return np.ascontiguousarray(z, dtype=np.uint8)


def index_of(bits) -> np.ndarray:
    """Inverse of :func:`points`: the index ``k`` of each row of bits (last axis = bit i).

    Parameters
    ----------
    bits : array_like
        0/1 values, last axis = bit i.

    Examples
    --------
    >>> index_of([[1, 0, 1], [0, 1, 0]]).tolist()
    [5, 2]
    """
    b = np.asarray(bits)
    if b.ndim == 0:
        raise DimensionError("bits must have at least one axis (the bit axis), got a scalar")
    n = b.shape[-1]
    check_n_bits(n, name="number of bits", maximum=MAX_STREAM_BITS)
    if b.size and not np.isin(b, (0, 1)).all():
        raise DimensionError("bits must contain only 0 and 1")
    weights = np.left_shift(np.int64(1), np.arange(n, dtype=np.int64))
    return (b.astype(np.int64) * weights).sum(axis=-1)


def signs(bits) -> np.ndarray:
    """The sign map ``1 - 2*b`` as int8 (bit 0 -> +1, bit 1 -> -1).

    Examples
    --------
    >>> signs([0, 1]).tolist()
    [1, -1]
    """
    return (1 - 2 * np.asarray(bits, dtype=np.int8)).astype(np.int8)


def split_index(k, n: int):
    """Split point indices of {0,1}^{2n} into the two parties: ``(x, y) = (k & (2^n-1), k >> n)``.

    Examples
    --------
    >>> [v.tolist() for v in split_index([0b1101], 2)]
    [[1], [3]]
    """
    k = np.asarray(k, dtype=np.int64)
    return k & ((1 << n) - 1), k >> n


def join_index(x, y, n: int) -> np.ndarray:
    """Inverse of :func:`split_index`: ``k = x + 2^n * y``."""
    return np.asarray(x, dtype=np.int64) + (np.asarray(y, dtype=np.int64) << n)


def as_matrix(table, n: int) -> np.ndarray:
    """The ``2^n x 2^n`` matrix ``M[x, y]`` (rows = Alice = low bits) of a table on {0,1}^{2n}.

    Examples
    --------
    >>> as_matrix([0, 0, 0, 1], 1).tolist()    # IP_1: M[x, y] = x*y
    [[0, 0], [0, 1]]
    >>> as_matrix([0, 1, 0, 0], 1).tolist()    # k = 1 is x = 1, y = 0: row 1, column 0
    [[0, 0], [1, 0]]
    """
    t = np.asarray(table)
    if t.ndim != 1 or t.shape[0] != 1 << (2 * n):
        raise DimensionError(f"table must have length 4^{n} = {1 << 2 * n}, got shape {t.shape}")
    return t.reshape(1 << n, 1 << n).T


def from_matrix(matrix) -> np.ndarray:
    """Inverse of :func:`as_matrix`: flatten ``M[x, y]`` back to cube order."""
    m = np.asarray(matrix)
    if m.ndim != 2 or m.shape[0] != m.shape[1] or m.shape[0] & (m.shape[0] - 1):
        raise DimensionError(f"matrix must be square with a power-of-two side, got {m.shape}")
    return np.ascontiguousarray(m.T).reshape(-1)
