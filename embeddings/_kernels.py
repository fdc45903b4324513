"""Private numba kernels of the embeddings package.  Wrappers validate; kernels only loop.

Codewords are multi-word bit masks: a code of length m is stored as ``W = ceil(m / 64)``
uint64 words per codeword, bit j of the codeword is bit ``j & 63`` of word ``j >> 6`` (for
m <= 64 this is the single uint64 mask of THEORY §2.1).  Messages are indexed in cube order
(bit i of message index a is ``(a >> i) & 1``, see :mod:`circuits.hypercube`).

Parallel loops write only their own output slot, so results never depend on scheduling.
Never ``fastmath``: minimum distances are exact integers and distances are compared exactly.

Kernels
-------
_gray_min_weight   minimum weight of the non-zero codewords by Gray-code enumeration
_sqdist_table      squared distance of each point to each (box around a) codeword of one party
_min_over_label    min over the pairs (a, b) with IP(a, b) == label of u[a] + v[b]
"""

import numpy as np
from numba import prange

from circuits._jit import njit


@njit(cache=True, nogil=True, inline="always")
def _popcount(x):
    # Kernighan's loop: LLVM recognises the idiom and emits the popcnt instruction (as fast as
    # the multiply trick, measured), and with the JIT off it runs without wrapping arithmetic
    x = np.uint64(x)
    c = np.int64(0)
    while x:
        x &= x - np.uint64(1)
        c += 1
    return c


@njit(cache=True, nogil=True)
def _gray_min_weight(rows, n, n_blocks, stop_at, job_lo, job_hi, best, where):
    """Per (generator, block) job in [job_lo, job_hi): minimum weight and a message index
    attaining it, written to ``best[t, blk]`` and ``where[t, blk]`` (job = t * n_blocks + blk).

    ``rows`` is a (T, n, W) uint64 stack of T generators.  The Gray sequence
    g(i) = i ^ (i >> 1), i = 1 .. 2^n - 1, visits every non-zero message once; consecutive
    codewords differ by one generator row (row ctz(i)).  The sequence is split into
    ``n_blocks`` contiguous blocks; each (generator, block) job starts from its first codeword
    computed directly, so jobs are independent (``embeddings.code_distance._gray_min_table`` runs ranges
    of them on threads).  A job stops early as soon as it finds a weight ``<= stop_at`` (pass 0
    to enumerate everything).  ``best`` and ``where`` are (T, n_blocks) int64; an empty block
    reports weight 2^62 and message -1.
    """
    W = rows.shape[2]
    total = np.int64(1) << n
    size = (total + n_blocks - 1) // n_blocks
    for job in range(job_lo, job_hi):
        t = job // n_blocks
        blk = job - t * n_blocks
        lo = max(np.int64(1), blk * size)
        hi = min(total, (blk + 1) * size)
        bw = np.int64(1) << 62
        bi = np.int64(-1)
        if lo < hi:
            cw = np.zeros(W, dtype=np.uint64)
            g = lo ^ (lo >> 1)
            for i in range(n):
                if (g >> i) & 1:
                    for w in range(W):
                        cw[w] ^= rows[t, i, w]
            i = lo
            while True:
                wt = np.int64(0)
                for w in range(W):
                    wt += _popcount(cw[w])
                if wt < bw:
                    bw = wt
                    bi = i ^ (i >> 1)
                    if wt <= stop_at:
                        break
                i += 1
                if i >= hi:
                    break
                # flip the row of the lowest set bit of i
                r = 0
                v = i
                while (v & 1) == 0:
                    v >>= 1
                    r += 1
                for w in range(W):
                    cw[w] ^= rows[t, r, w]
        best[t, blk] = bw
        where[t, blk] = bi


@njit(cache=True, nogil=True, parallel=True)
def _sqdist_table(words, X, centre, half):
    """T[i, a] = sum_j (|X[i, j] - c_j(a)| - half)_+^2 with c_j(a) = +-centre by codeword bit j.

    ``words`` (2^n, W) uint64 holds the codewords; bit 1 gives +centre, bit 0 gives -centre.
    With ``half = 0`` this is the squared distance to the point; otherwise to the box of
    half-width ``half`` around it.  Each (i, a) is computed directly (no cancellation).
    """
    N = X.shape[0]
    m = X.shape[1]
    K = words.shape[0]
    out = np.empty((N, K), dtype=np.float64)
    for i in prange(N):
        for a in range(K):
            acc = 0.0
            for j in range(m):
                bit = (words[a, j >> 6] >> np.uint64(j & 63)) & np.uint64(1)
                c = centre if bit else -centre
                e = abs(X[i, j] - c) - half
                if e > 0.0:
                    acc += e * e
            out[i, a] = acc
    return out


@njit(cache=True, nogil=True, parallel=True)
def _min_over_label(U, V, label):
    """For each row i: min over (a, b) with popcount(a & b) & 1 == label of U[i, a] + V[i, b].

    Returns (values, k) with k = a + 2^n b the minimiser (the first in the scan order below;
    ``inf`` and -1 when no pair has the label, i.e. label 1 and n = 0).  Exact pruning: a is
    scanned by increasing U and b by increasing V, and a scan stops as soon as no remaining
    candidate can beat the best sum found so far, so the result equals the brute-force minimum
    (ties resolved by the scan order).
    """
    N = U.shape[0]
    K = U.shape[1]
    shift = 0
    while (1 << shift) < K:
        shift += 1
    vals = np.empty(N, dtype=np.float64)
    arg = np.empty(N, dtype=np.int64)
    for i in prange(N):
        oa = np.argsort(U[i], kind="mergesort")
        ob = np.argsort(V[i], kind="mergesort")
        vmin = V[i, ob[0]]
        best = np.inf
        bk = np.int64(-1)
        for p in range(K):
            a = oa[p]
            ua = U[i, a]
            if ua + vmin >= best:
                break
            for q in range(K):
                b = ob[q]
                s = ua + V[i, b]
                if s >= best:
                    break
                if (_popcount(np.int64(a) & np.int64(b)) & 1) == label:
                    best = s
                    bk = np.int64(a) + (np.int64(b) << shift)
                    break
        vals[i] = best
        arg[i] = bk
    return vals, arg
