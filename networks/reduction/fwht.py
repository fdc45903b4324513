"""The self-reduction's margins for any k by the Walsh–Hadamard transform (THEORY §4.8).

With U = H ⊙ Ñ and the twist identity H(a,b)·T_{r,s}(a,b) = U(a⊕r, b⊕s),

    H ⊙ M_k = (1/k) · (P ⋆ U),

an XOR convolution over F₂^{2n} with the histogram P of the k shifts.  So the whole table
H ⊙ M_k costs two transforms of length 4^n (WHT(U) is computed once), O(n·4^n) for any k, and
:func:`least_working_k` finds the least k with min H·M_k > 0 on a fixed shift sequence by an
exact prefix scan for small k (the direct kernel), then doubling and bisection.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from circuits.analysis import walsh_hadamard_
from circuits.utils.errors import DimensionError
from networks.reduction.product import ip_signs
from networks.reduction.twisted import twisted_sums

__all__ = ["ShiftConvolution", "ShiftSequence", "LeastK", "least_working_k", "DIRECT_BUDGET"]

#: Work (k · 4^n pair updates) allowed for the exact direct prefix scan before FWHT doubling.
DIRECT_BUDGET = 1 << 27

#: After doubling brackets the least k in (k/2, k], the bracket is scanned exactly by the direct
#: kernel when k · 4^n is at most this (else bisection with FWHT evaluations).
EXACT_BUDGET = 1 << 31

#: Shifts per block of a :class:`ShiftSequence` (block b is drawn from the seed (seed, b)).
BLOCK = 1 << 20


class ShiftSequence:
    """A reproducible sequence of i.i.d. uniform shifts (r, s) that is never stored whole.

    Block b of BLOCK rows is drawn from ``numpy.random.default_rng([seed, b])``, so any prefix,
    and any range of rows, is regenerated on demand; the histogram of a prefix (all M_k needs,
    THEORY §4.8) is built by streaming, extending the last one computed at or below k.  Memory is
    one 4^n histogram plus one block, whatever k (10^9 copies cost seconds, not gigabytes).

    >>> seq = ShiftSequence(2, seed=0, length=5)
    >>> seq.rows(0, 5).shape, bool((seq.rows(1, 3) == seq.rows(0, 5)[1:3]).all())
    ((5, 2), True)
    """

    def __init__(self, n: int, *, seed: int = 0, length: int, array=None):
        self.n = int(n)
        self.seed = seed
        self.length = int(length)
        self._array = None if array is None else np.ascontiguousarray(array, dtype=np.int64)
        self._cache = (0, None)                    # (k, histogram of the first k shifts)

    @classmethod
    def of(cls, shifts, n: int) -> "ShiftSequence":
        """Wrap an explicit (k, 2) array of shifts."""
        sh = np.asarray(shifts, dtype=np.int64)
        return cls(n, seed=None, length=sh.shape[0], array=sh)

    def __len__(self) -> int:
        return self.length

    def rows(self, start: int, stop: int) -> np.ndarray:
        """Shifts start..stop-1 as int64 (stop - start, 2)."""
        stop = min(int(stop), self.length)
        if self._array is not None:
            return self._array[start:stop]
        out = []
        for blk in range(start // BLOCK, (stop - 1) // BLOCK + 1 if stop > start else 0):
            rng = np.random.default_rng([int(self.seed), blk])
            rows = rng.integers(0, 1 << self.n, size=(BLOCK, 2), dtype=np.int64)
            lo = max(start - blk * BLOCK, 0)
            hi = min(stop - blk * BLOCK, BLOCK)
            out.append(rows[lo:hi])
        return np.concatenate(out) if out else np.zeros((0, 2), np.int64)

    def histogram(self, k: int) -> np.ndarray:
        """float64 counts P[r·2^n + s] over the first k shifts (streamed from the nearest
        cached prefix below k)."""
        size = 1 << (2 * self.n)
        k0, hist = self._cache
        if hist is None or k0 > k:
            k0, hist = 0, np.zeros(size, dtype=np.float64)
        else:
            hist = hist.copy()
        for start in range(k0, k, BLOCK):
            sh = self.rows(start, min(k, start + BLOCK))
            hist += np.bincount((sh[:, 0] << self.n) | sh[:, 1], minlength=size)
        self._cache = (k, hist)
        return hist.copy()


class ShiftConvolution:
    """H ⊙ M_k for any shift multiset, by FWHT: the transform of U is computed once.

    Parameters
    ----------
    U : float64 (2^n, 2^n)
        U[a, b] = H(a, b)·Ñ(a, b) (pointwise correctness).

    Examples
    --------
    >>> U = np.ones((4, 4))                      # Ñ = H: every copy is exact
    >>> ShiftConvolution(U).min_margin(np.array([[1, 2], [3, 0]]))
    1.0
    """

    def __init__(self, U):
        U = np.asarray(U, dtype=np.float64)
        if U.ndim != 2 or U.shape[0] != U.shape[1] or U.shape[0] & (U.shape[0] - 1):
            raise DimensionError(f"U must be a square (2^n, 2^n) table, got shape {U.shape}")
        self.n = int(U.shape[0]).bit_length() - 1
        self._hat = walsh_hadamard_(np.array(U, dtype=np.float64, order="C").reshape(-1))
        self.evaluations = 0

    def table(self, shifts) -> np.ndarray:
        """H ⊙ M_k as float64 (2^n, 2^n) for the shift rows (r, s) (k = len(shifts))."""
        sh = np.asarray(shifts, dtype=np.int64)
        size = 1 << self.n
        P = np.bincount((sh[:, 0] << self.n) | sh[:, 1], minlength=size * size).astype(np.float64)
        return self.table_of_histogram(P, sh.shape[0])

    def table_of_histogram(self, P: np.ndarray, k: int) -> np.ndarray:
        """H ⊙ M_k from the histogram P of the k shifts (P is overwritten)."""
        size = 1 << self.n
        walsh_hadamard_(P)                          # exact: integer counts <= k < 2^53
        P *= self._hat
        walsh_hadamard_(P)
        P *= 1.0 / (k * float(size * size))
        self.evaluations += 1
        return P.reshape(size, size)

    def min_margin(self, shifts) -> float:
        return float(self.table(shifts).min())


@dataclass(frozen=True)
class LeastK:
    """The least k with min H·M_k > 0 on a fixed shift sequence (prefixes), and how it was found.

    ``method`` is "prefix scan" (every k <= k_direct evaluated exactly: the least k),
    "doubling + prefix scan" (FWHT doubling found a working power-of-two multiple of k_direct,
    then every prefix up to it was scanned exactly: the least k), "doubling + bisection" (no
    working k <= k_direct; margin(k - 1) <= 0 < margin(k); smaller working prefixes are possible
    between k_direct and k, where the margin is not monotone), or "none" (no working prefix up
    to ``k_searched``).
    """

    k: "int | None"
    method: str
    k_direct: int
    k_searched: int
    direct_margins: np.ndarray = field(repr=False)
    evaluated: tuple = ()          # (k, min margin) pairs evaluated by FWHT

    def to_dict(self) -> dict:
        return {"least_k": self.k, "method": self.method, "k_direct": self.k_direct,
                "k_searched": self.k_searched,
                "evaluated": [[int(k), float(m)] for k, m in self.evaluated]}


def least_working_k(V, shifts, *, direct_budget: int = DIRECT_BUDGET,
                    exact_budget: int = EXACT_BUDGET, conv=None, client=None, executor=None,
                    progress: bool = False) -> LeastK:
    """Least prefix length k of ``shifts`` with min_{a,b} H·M_k > 0.

    The first k_direct = budget/4^n prefixes are scanned exactly by the direct kernel (every
    prefix margin in one pass); beyond, k doubles until the margin is positive, then bisection
    on (last failing, first working] with FWHT evaluations.
    """
    V = np.asarray(V, dtype=np.float64)
    n = int(V.shape[0]).bit_length() - 1
    seq = shifts if isinstance(shifts, ShiftSequence) else ShiftSequence.of(shifts, n)
    k_all = len(seq)
    k_direct = int(min(k_all, max(1, direct_budget >> (2 * n))))
    _, prefix = twisted_sums(V, seq.rows(0, k_direct), client=client, executor=executor,
                             progress=progress)
    pos = np.flatnonzero(prefix > 0)
    if pos.size:
        return LeastK(int(pos[0]) + 1, "prefix scan", k_direct, k_direct, prefix)
    if conv is None:
        conv = ShiftConvolution(ip_signs(n) * V)
    evaluated = []

    def margin(k):
        value = float(conv.table_of_histogram(seq.histogram(k), k).min())
        evaluated.append((k, value))
        return value

    lo, hi, k = k_direct, None, k_direct
    while k < k_all:
        k = min(2 * k, k_all)
        if margin(k) > 0:
            hi = k
            break
        lo = k
    if hi is None:
        return LeastK(None, "none", k_direct, k_all, prefix, tuple(evaluated))
    if hi << (2 * n) <= exact_budget:
        _, full = twisted_sums(V, seq.rows(0, hi))
        k = int(np.flatnonzero(full > 0)[0]) + 1
        return LeastK(k, "doubling + prefix scan", k_direct, k_all, full, tuple(evaluated))
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if margin(mid) > 0:
            hi = mid
        else:
            lo = mid
    return LeastK(hi, "doubling + bisection", k_direct, k_all, prefix, tuple(evaluated))


def expected_evaluations(k: int, k_direct: int) -> int:
    """Upper bound on FWHT evaluations of :func:`least_working_k` (doubling + bisection)."""
    if k <= k_direct:
        return 0
    steps = math.ceil(math.log2(k / k_direct))
    return 2 * steps + 1
