"""The certified minimum distance of a binary linear code (THEORY §2.1).

:func:`certified_min_distance` enumerates all 2^n codewords of a generator in Gray-code order (one
generator row XORed per step, numba, parallel over blocks of the Gray sequence), so the distance
is certified, not estimated; :func:`random_code_distance_bound` is the distance a random
systematic code reaches with a given probability (a Gilbert-Varshamov-style union bound).
Codewords are packed into uint64 words (bit j of a codeword is bit ``j & 63`` of word ``j >> 6``).
:class:`embeddings.code.CodeEmbedding` searches and certifies its code with these functions, and
:mod:`embeddings.code` re-exports them.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from circuits.utils.errors import DimensionError
from circuits.hypercube import check_n_bits
from embeddings import _kernels

__all__ = ["certified_min_distance", "random_code_distance_bound", "MAX_CODE_BITS",
           "MAX_CODE_LENGTH"]

#: Largest n: certification enumerates all 2^n codewords (2^32 steps take tens of seconds).
MAX_CODE_BITS = 32
#: Largest code length m (codewords are stored as ceil(m / 64) uint64 words).
MAX_CODE_LENGTH = 4096


def _n_words(m: int) -> int:
    return (m + 63) // 64


def _pack_rows(bits: np.ndarray) -> np.ndarray:
    """Pack uint8 bit rows (..., m) into uint64 words (..., ceil(m/64)): bit j -> word j >> 6."""
    m = bits.shape[-1]
    W = _n_words(m)
    pad = np.zeros(bits.shape[:-1] + (64 * W,), dtype=np.uint8)
    pad[..., :m] = bits
    packed = np.packbits(pad, axis=-1, bitorder="little")
    return np.ascontiguousarray(packed.view("<u8").astype(np.uint64))


def _unpack_words(words: np.ndarray, m: int) -> np.ndarray:
    """Inverse of :func:`_pack_rows`: uint64 words (..., W) -> uint8 bits (..., m)."""
    b = np.ascontiguousarray(words.astype("<u8")).view(np.uint8)
    return np.unpackbits(b, axis=-1, bitorder="little")[..., :m]


def _n_blocks(n: int) -> int:
    # fixed (never the thread count) so that tie-breaking among blocks is reproducible
    return int(max(1, min(256, (1 << n) >> 12)))


def _check_generator(generator) -> np.ndarray:
    g = np.asarray(generator)
    if g.ndim != 2 or g.shape[0] < 1 or g.shape[1] < g.shape[0]:
        raise DimensionError(f"generator must be a 2-D 0/1 array of shape (n, m) with 1 <= n <= m, "
                             f"got shape {g.shape}")
    check_n_bits(g.shape[0], name="generator rows n", minimum=1, maximum=MAX_CODE_BITS)
    if g.shape[1] > MAX_CODE_LENGTH:
        raise DimensionError(f"generator has m = {g.shape[1]} columns; at most MAX_CODE_LENGTH = "
                             f"{MAX_CODE_LENGTH} are supported")
    if g.size and not np.isin(g, (0, 1)).all():
        raise DimensionError("generator must contain only 0 and 1 (entries of F_2)")
    return np.ascontiguousarray(g, dtype=np.uint8)


def _readonly_words(rows: np.ndarray) -> np.ndarray:
    """A read-only C-contiguous uint64 view: every call hands the kernel one array type, so the
    first run compiles one signature (a writable and a read-only stack were two: 0.8 s)."""
    v = np.ascontiguousarray(rows, dtype=np.uint64).view()
    v.setflags(write=False)
    return v


def _gray_min_table(rows: np.ndarray, n: int, n_blocks: int, stop_at: int):
    """``(best, where)``, two (T, n_blocks) int64 tables of :func:`_kernels._gray_min_weight`
    over every (generator, block) job, ranges of jobs on threads
    (:func:`circuits.utils._threads.run_ranges`; the thread count from the free CPUs).  The
    result does not depend on the threads: each job writes only its own cell."""
    from circuits.utils._threads import run_ranges, work_threads
    rows = _readonly_words(rows)
    T = rows.shape[0]
    jobs = T * int(n_blocks)
    best = np.empty((T, int(n_blocks)), dtype=np.int64)
    where = np.empty((T, int(n_blocks)), dtype=np.int64)
    args = (rows, np.int64(n), np.int64(n_blocks), np.int64(stop_at))
    threads = work_threads(jobs) if (jobs > 1 and (1 << n) * T >= _THREADED_MESSAGES) else 1
    if threads == 1:
        _kernels._gray_min_weight(*args, np.int64(0), np.int64(jobs), best, where)
    else:
        per = max(1, jobs // (4 * threads))
        run_ranges(lambda lo, hi: _kernels._gray_min_weight(*args, np.int64(lo), np.int64(hi),
                                                            best, where),
                   [(lo, min(jobs, lo + per)) for lo in range(0, jobs, per)], threads)
    return best, where


#: Below this many messages (2^n times generators) one thread enumerates them (~1 ms).
_THREADED_MESSAGES = 1 << 16


def _gray_min(rows: np.ndarray, n: int, stop_at: int):
    """(min weight, witness message) of one packed generator (n, W)."""
    from circuits.utils.parallel import deferred_sigint
    with deferred_sigint():      # tuple of arrays: see circuits.utils.parallel
        best, where = _gray_min_table(rows[None], n, _n_blocks(n), stop_at)
    blk = int(np.argmin(best[0]))       # first block (in Gray order) attaining the minimum
    return int(best[0, blk]), int(where[0, blk])


def _gray_min_many(rows: np.ndarray, n: int) -> np.ndarray:
    """Exact minimum weights of a stack of packed generators (T, n, W), one parallel call."""
    from circuits.utils.parallel import deferred_sigint
    with deferred_sigint():
        best, _ = _gray_min_table(rows, n, 1, 0)
    return best[:, 0]


def certified_min_distance(generator) -> "tuple[int, int]":
    """Exact minimum weight over the non-zero messages of the code generated by ``generator``.

    Enumerates all 2^n - 1 non-zero codewords in Gray-code order (numba, parallel over blocks of
    the Gray sequence), so the result is certified, not estimated.

    Parameters
    ----------
    generator : array_like of 0/1, shape (n, m)
        Rows are the images of the unit messages (need not be systematic).

    Returns
    -------
    (d, a) : (int, int)
        The minimum weight ``d`` (0 if some non-zero message maps to 0, i.e. the code is not
        injective) and a message index ``a`` (cube order) with ``|C(a)| = d``.

    Examples
    --------
    >>> certified_min_distance([[1, 0, 0, 1, 1, 1, 0], [0, 1, 0, 1, 1, 0, 1],
    ...                         [0, 0, 1, 1, 0, 1, 1]])          # a [7, 3, 4] simplex-like code
    (4, 1)
    """
    g = _check_generator(generator)
    return _gray_min(_pack_rows(g), g.shape[0], 0)


def random_code_distance_bound(n: int, m: int, failure: float = 0.5) -> int:
    """Largest d such that a uniformly random ``[I_n | P]`` code has ``d_C < d`` w.p. <= failure.

    For a fixed message a != 0 of weight w, ``C(a) = (a, aP)`` with aP uniform on F_2^{m-n}, so
    ``P(|C(a)| < d) = sum_{j < d - w} C(m-n, j) / 2^(m-n)``.  By the union bound (Markov on the
    number of light codewords) the probability that a random code has d_C < d is at most
    ``E(d) = sum_{w=1}^{n} C(n, w) sum_{j=0}^{d-1-w} C(m-n, j) / 2^(m-n)``; this returns the
    largest d with ``E(d) <= failure`` (a Gilbert-Varshamov-style bound, computed in exact
    rationals), and at least 1.  The best of T independent tries falls below it with
    probability at most ``failure**T``.

    Examples
    --------
    >>> [random_code_distance_bound(n, 4 * n) for n in (4, 8, 12)]
    [5, 8, 12]
    """
    n = check_n_bits(n, minimum=1, maximum=MAX_CODE_BITS)
    m = int(m)
    if m < n:
        raise DimensionError(f"m must be >= n = {n}, got m = {m}")
    f = Fraction(failure)
    if not 0 < f < 1:
        raise ValueError(f"failure must lie in (0, 1), got {failure!r}")
    r = m - n
    total = 1 << r

    def expected(d):
        s = 0
        for w in range(1, n + 1):
            s += math.comb(n, w) * sum(math.comb(r, j) for j in range(0, max(0, d - w)))
        return Fraction(s, total)

    d = 1
    while d + 1 <= m and expected(d + 1) <= f:
        d += 1
    return d
