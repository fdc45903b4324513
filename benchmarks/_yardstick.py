"""A yardstick-style baseline for W1-W3: a plain numba kernel as a careful researcher would
write it, independent of depthsep's kernels (benchmarks only).

Split the N input bits into the low L = min(N, 12) bits and the high ones.  Precompute each
hidden gate's partial sum over the low bits minus its threshold for all 2^L low values (int16:
the W1-W3 sums are below 2^15; checked).  Then, in parallel over the high values (``prange``), add the
gate's high partial sum and evaluate the output gate point by point with integer arithmetic;
count the points where the output differs from the target (constant 0 or IP_n, given as a
flag).  The gate loop is outermost per high value, so the inner loop over the 4096 low values is
one vectorised int32 add of v_j where P_j + H_j >= 0.  Exact: integers only, ``w . x >= t``.
"""

import numba
import numpy as np
from numba import prange


@numba.njit(cache=False)
def _low_table(W, t, L):
    g = W.shape[0]
    P = np.empty((g, 1 << L), dtype=np.int16)
    for j in range(g):
        for a in range(1 << L):
            s = -t[j]
            for i in range(L):
                if (a >> i) & 1:
                    s += W[j, i]
            P[j, a] = s
    return P


@numba.njit(parallel=True, cache=False)
def _count(P, W, v, T, N, L, ip_n):
    g = W.shape[0]
    lanes = 1 << L
    n_hi = 1 << (N - L)
    counts = np.zeros(n_hi, dtype=np.int64)
    for h in prange(n_hi):
        acc = np.zeros(lanes, dtype=np.int16)
        for j in range(g):
            s = np.int16(0)
            for i in range(N - L):
                if (h >> i) & 1:
                    s += W[j, L + i]
            vj = v[j]
            ns = np.int16(-s)
            zero = np.int16(0)
            row = P[j]
            for a in range(lanes):          # vectorised over the low block
                acc[a] += vj if row[a] >= ns else zero
        c = 0
        for a in range(lanes):
            out = 1 if acc[a] >= T else 0
            tgt = 0
            if ip_n > 0:
                k = (h << L) | a
                x = (k & ((1 << ip_n) - 1)) & (k >> ip_n)
                x ^= x >> 32
                x ^= x >> 16
                x ^= x >> 8
                x ^= x >> 4
                x ^= x >> 2
                x ^= x >> 1
                tgt = x & 1
            c += out != tgt
        counts[h] = c
    return counts.sum()


class Yardstick:
    """``Yardstick(circuit, ip_n)()`` = number of points where the depth-2 ``circuit`` differs
    from the target (IP_ip_n if ip_n > 0, else constant 0)."""

    def __init__(self, circuit, ip_n=0):
        l1, l2 = circuit.layers
        self.W = np.ascontiguousarray(l1.weights, dtype=np.int16)
        t = np.ascontiguousarray(l1.thresholds, dtype=np.int16)
        self.v = np.ascontiguousarray(l2.weights[0], dtype=np.int16)
        self.T = int(l2.thresholds[0])
        bound = max(int(np.abs(l1.weights).sum(axis=1).max() + np.abs(l1.thresholds).max()),
                    int(np.abs(l2.weights).sum()))
        if bound >= 2**15:
            raise ValueError("the yardstick keeps sums in int16: weights too large")
        self.N = circuit.n_inputs
        self.L = min(self.N, 12)
        self.P = _low_table(self.W, t, self.L)
        self.ip_n = ip_n

    def __call__(self):
        return int(_count(self.P, self.W, self.v, self.T, self.N, self.L, self.ip_n))
