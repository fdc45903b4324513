"""Private numba kernels.  Wrappers in ``simulate`` / ``functions`` validate; kernels only loop.

Every kernel walks point indices ``k`` and decodes bit i as ``(k >> i) & 1`` (the convention of
``circuits.hypercube``); none builds the 2^N x N bit matrix or the 2^N x w pre-activation matrix.
Parallel loops write only their own output slot, so results never depend on scheduling.
Never ``fastmath``: every decision here is exact integer arithmetic.
"""

import numpy as np
from numba import njit, prange

# target kinds (see circuits.functions, which builds the (kind, params, table) specs)
KIND_TABLE = 0      # table[k]
KIND_IP = 1         # params[0] = n: popcount((k & (2^n - 1)) & (k >> n)) & 1
KIND_PARITY = 2     # popcount(k) & 1
KIND_COUNT = 3      # popcount(k) >= params[0]   (majority, AND, OR)
KIND_LINEAR = 4     # sum_i params[1 + i] * bit_i >= params[0]
KIND_CONST = 5      # params[0]


@njit(cache=True, nogil=True, inline="always")
def _popcount(x):
    x = np.uint64(x)
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return np.int64((x * np.uint64(0x0101010101010101)) >> np.uint64(56))


@njit(cache=True, nogil=True)
def _target_bit(k, kind, params, table):
    if kind == KIND_TABLE:
        return np.int64(table[k])
    if kind == KIND_IP:
        n = params[0]
        mask = (np.int64(1) << n) - 1
        return _popcount((k & mask) & (k >> n)) & 1
    if kind == KIND_PARITY:
        return _popcount(k) & 1
    if kind == KIND_COUNT:
        return np.int64(1) if _popcount(k) >= params[0] else np.int64(0)
    if kind == KIND_LINEAR:
        acc = np.int64(0)
        for i in range(params.shape[0] - 1):
            if (k >> i) & 1:
                acc += params[1 + i]
        return np.int64(1) if acc >= params[0] else np.int64(0)
    return params[0]


@njit(cache=True, nogil=True, parallel=True)
def _table_target(kind, params, table, start, stop):
    out = np.empty(stop - start, dtype=np.uint8)
    for k in prange(start, stop):
        out[k - start] = _target_bit(k, kind, params, table)
    return out


@njit(cache=True, nogil=True)
def _eval_layered(k, wflat, tflat, sizes, cur, nxt):
    """Output bit of the layered circuit at point k; cur/nxt are scratch buffers."""
    n_in = sizes[0]
    # first layer reads the bits of k directly
    g1 = sizes[1]
    for j in range(g1):
        acc = np.int64(0)
        base = j * n_in
        for i in range(n_in):
            if (k >> i) & 1:
                acc += wflat[base + i]
        cur[j] = 1 if acc >= tflat[j] else 0
    woff = g1 * n_in
    toff = g1
    for layer in range(2, sizes.shape[0]):
        a = sizes[layer - 1]
        b = sizes[layer]
        for j in range(b):
            acc = np.int64(0)
            base = woff + j * a
            for i in range(a):
                if cur[i]:
                    acc += wflat[base + i]
            nxt[j] = 1 if acc >= tflat[toff + j] else 0
        for j in range(b):
            cur[j] = nxt[j]
        woff += a * b
        toff += b
    return np.int64(cur[0])


@njit(cache=True, nogil=True, parallel=True)
def _table_layered(wflat, tflat, sizes, start, stop, block):
    out = np.empty(stop - start, dtype=np.uint8)
    nb = (stop - start + block - 1) // block
    width = 1
    for i in range(1, sizes.shape[0]):
        width = max(width, sizes[i])
    for b in prange(nb):
        cur = np.empty(width, dtype=np.uint8)
        nxt = np.empty(width, dtype=np.uint8)
        lo = start + b * block
        hi = min(stop, lo + block)
        for k in range(lo, hi):
            out[k - start] = _eval_layered(k, wflat, tflat, sizes, cur, nxt)
    return out


@njit(cache=True, nogil=True, parallel=True)
def _disagree_layered(wflat, tflat, sizes, start, stop, block, kind, params, table):
    """Per-block (count of k with circuit(k) != target(k), first such k or -1)."""
    nb = (stop - start + block - 1) // block
    counts = np.zeros(nb, dtype=np.int64)
    first = np.full(nb, -1, dtype=np.int64)
    width = 1
    for i in range(1, sizes.shape[0]):
        width = max(width, sizes[i])
    for b in prange(nb):
        cur = np.empty(width, dtype=np.uint8)
        nxt = np.empty(width, dtype=np.uint8)
        lo = start + b * block
        hi = min(stop, lo + block)
        c = 0
        f = -1
        for k in range(lo, hi):
            if _eval_layered(k, wflat, tflat, sizes, cur, nxt) != _target_bit(k, kind, params, table):
                c += 1
                if f < 0:
                    f = k
        counts[b] = c
        first[b] = f
    return counts, first


@njit(cache=True, nogil=True, parallel=True)
def _disagree_tables(kind_a, params_a, table_a, kind_b, params_b, table_b, start, stop, block):
    """Per-block disagreement counts between two target specs."""
    nb = (stop - start + block - 1) // block
    counts = np.zeros(nb, dtype=np.int64)
    first = np.full(nb, -1, dtype=np.int64)
    for b in prange(nb):
        lo = start + b * block
        hi = min(stop, lo + block)
        c = 0
        f = -1
        for k in range(lo, hi):
            if _target_bit(k, kind_a, params_a, table_a) != _target_bit(k, kind_b, params_b, table_b):
                c += 1
                if f < 0:
                    f = k
        counts[b] = c
        first[b] = f
    return counts, first
