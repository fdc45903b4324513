"""Private numba kernels.  Wrappers in ``simulate`` / ``functions`` validate; kernels only loop.

Every kernel walks point indices ``k`` and decodes bit i as ``(k >> i) & 1`` (the convention of
``circuits.hypercube``); none builds the 2^N x N bit matrix or the 2^N x w pre-activation matrix.
Parallel loops write only their own output slot, so results never depend on scheduling.
Never ``fastmath``: every decision here is exact integer arithmetic.
"""

import numpy as np
from numba import prange

from circuits._jit import njit

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
    x = x + (x >> np.uint64(8))       # byte sums by shifts, not a wrapping multiply, so the
    x = x + (x >> np.uint64(16))      # pure-Python twin (NUMBA_DISABLE_JIT=1) is warning-free
    x = x + (x >> np.uint64(32))
    return np.int64(x & np.uint64(0x7F))


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


def _table_target(kind, params, table, start, stop):
    """uint8 array of target(k) for start <= k < stop: ranges of 2^16 on threads
    (:func:`circuits.utils._threads.run_ranges`; a serial kernel compiles in a fraction of a
    ``prange`` loop's time, which every first run paid)."""
    from circuits.utils._threads import run_ranges, work_threads

    out = np.empty(stop - start, dtype=np.uint8)
    step = 1 << 16
    bounds = [(lo, min(stop - start, lo + step)) for lo in range(0, stop - start, step)]
    args = (np.int64(kind), params, table, np.int64(start), out)
    run_ranges(lambda lo, hi: _table_target_range(*args, lo, hi), bounds, work_threads(len(bounds)))
    return out


@njit(cache=True, nogil=True)
def _table_target_range(kind, params, table, start, out, lo, hi):
    """out[a] = target(start + a) for lo <= a < hi (serial; :func:`_table_target`)."""
    for a in range(lo, hi):
        out[a] = _target_bit(start + a, kind, params, table)


# ---------------------------------------------------------------------------------------------
# Layered threshold circuits.
#
# Arguments shared by the circuit kernels (built by ``simulate._circuit_kernel_args``):
#   wflat  (sum_l g_l * g_{l-1},)  all weights, layer by layer, row-major, cast to the WORKING
#                                  DTYPE D (int16 / int32 / int64) chosen by the wrapper;
#   tflat  (sum_l g_l,)            all thresholds, dtype D;
#   sizes  (depth + 1,) int64      [N, g_1, ..., g_depth = 1].
# The wrapper picks D so that D holds +-B, where B = max over layers of the exact
# ``ThresholdLayer.preactivation_bound`` (max_j sum_i |w_ji| + |t_j|).  Every value a kernel
# stores in D is of the form (partial sum of one gate's weights) - (0 or its threshold), or minus
# a partial sum, so its magnitude is <= B and nothing can overflow.  Scalar arithmetic is done by
# numba in int64 and only exact, in-range results are stored back into D.
# ---------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def _layer_tile(wflat, woff, tflat, toff, n_out, n_in, zin, zout, acc, n):
    """One threshold layer on a tile of n points: zout[g, a] = [sum_i W[g,i] zin[i,a] >= t[g]].

    zin (n_in, >= n) and zout (n_out, >= n) hold 0/1 bytes; acc is a (>= n,) scratch row of dtype D.
    Zero weights are skipped, so sparse layers cost only their wires.
    """
    for g in range(n_out):
        tg = tflat[toff + g]
        for a in range(n):
            acc[a] = -tg
        base = woff + g * n_in
        for i in range(n_in):
            w = wflat[base + i]
            if w != 0:
                zi = zin[i]
                for a in range(n):
                    if zi[a] != 0:
                        acc[a] += w
        zo = zout[g]
        for a in range(n):
            zo[a] = 1 if acc[a] >= 0 else 0


@njit(cache=True, nogil=True)
def _layers_tile(wflat, tflat, sizes, first, woff, toff, za, zb, acc, n):
    """Layers ``first .. depth`` on a tile of n points whose layer ``first - 1`` outputs are in
    ``za`` (``woff``/``toff``: offsets of layer ``first`` in the flat arrays); returns the output
    row.  za and zb alternate as source and destination."""
    src = za
    dst = zb
    for layer in range(first, sizes.shape[0]):
        n_prev = sizes[layer - 1]
        n_out = sizes[layer]
        _layer_tile(wflat, woff, tflat, toff, n_out, n_prev, src, dst, acc, n)
        woff += n_out * n_prev
        toff += n_out
        src, dst = dst, src
    return src[0]


@njit(cache=True, nogil=True)
def _low_table(wflat, tflat, n_in, g1, L):
    """P[j, a] = sum_{i < L} W1[j, i] * bit_i(a) - t1[j] for every low-block value a (dtype D)."""
    T = 1 << L
    P = np.empty((g1, T), dtype=wflat.dtype)
    for j in range(g1):
        P[j, 0] = -tflat[j]
        top = 0
        for a in range(1, T):
            if a >= (2 << top):
                top += 1
            P[j, a] = P[j, a - (1 << top)] + wflat[j * n_in + top]
    return P


@njit(cache=True, nogil=True)
def _cube_tile(wflat, tflat, sizes, P, L, cb, nz, acc, za, zb, o):
    """Circuit outputs o[a] at the 2^L points k = (h << L) + a, a in [0, 2^L), of one tile.

    Layer 1 uses the low/high split: gate j fires iff P[j, a] >= cb[j], where the caller keeps
    cb[j] = -(sum of W1[j, i] over the set high bits i >= L of k) up to date.  Layer 2 is fused with it (each layer-2 gate accumulates its
    weight wherever a layer-1 comparison holds), so a depth-2 circuit never materialises its
    hidden layer.  Layers >= 3 run :func:`_layer_tile` on byte tiles.
    """
    n_in = sizes[0]
    g1 = sizes[1]
    T = 1 << L
    depth = sizes.shape[0] - 1
    if depth == 1:
        c0 = cb[0]
        P0 = P[0]
        for a in range(T):
            o[a] = 1 if P0[a] >= c0 else 0
        return
    g2 = sizes[2]
    woff = g1 * n_in
    toff = g1
    for g in range(g2):
        tg = tflat[toff + g]
        for a in range(T):
            acc[a] = -tg
        base = woff + g * g1
        # the gates with a nonzero weight into g, two at a time: one load and store of acc per
        # two compare-and-adds (the sum after the first add is again a partial sum, so <= B)
        nnz = 0
        for j in range(g1):
            if wflat[base + j] != 0:
                nz[nnz] = j
                nnz += 1
        r = 0
        while r + 2 <= nnz:
            j0 = nz[r]
            j1 = nz[r + 1]
            v0 = wflat[base + j0]
            v1 = wflat[base + j1]
            c0 = cb[j0]
            c1 = cb[j1]
            P0 = P[j0]
            P1 = P[j1]
            for a in range(T):
                x = acc[a]
                if P0[a] >= c0:
                    x += v0
                if P1[a] >= c1:
                    x += v1
                acc[a] = x
            r += 2
        if r < nnz:
            j = nz[r]
            v = wflat[base + j]
            cj = cb[j]
            Pj = P[j]
            for a in range(T):
                if Pj[a] >= cj:
                    acc[a] += v
        if depth == 2:
            for a in range(T):
                o[a] = 1 if acc[a] >= 0 else 0
            return
        zg = za[g]
        for a in range(T):
            zg[a] = 1 if acc[a] >= 0 else 0
    woff += g2 * g1
    toff += g2
    z = _layers_tile(wflat, tflat, sizes, 3, woff, toff, za, zb, acc, T)
    for a in range(T):
        o[a] = z[a]


@njit(cache=True, nogil=True)
def _fill_target(tv, base, lo, hi, kind, params, table):
    """tv[a] = target(base + a) for a in [lo, hi); the hot kinds get their own vectorisable loop."""
    if kind == KIND_CONST:
        c = params[0]
        for a in range(lo, hi):
            tv[a] = c
    elif kind == KIND_IP:
        n = params[0]
        mask = (np.int64(1) << n) - 1
        for a in range(lo, hi):
            k = base + a
            tv[a] = _popcount((k & mask) & (k >> n)) & 1
    elif kind == KIND_TABLE:
        for a in range(lo, hi):
            tv[a] = table[base + a]
    else:
        for a in range(lo, hi):
            tv[a] = _target_bit(base + a, kind, params, table)


@njit(cache=True, nogil=True)
def _high_columns(wflat, n_in, g1, L):
    """WhT[i, j] = W1[j, L + i]: layer-1 weights of the high bits, one contiguous row per bit."""
    WhT = np.empty((n_in - L, g1), dtype=wflat.dtype)
    for j in range(g1):
        for i in range(L, n_in):
            WhT[i - L, j] = wflat[j * n_in + i]
    return WhT


@njit(cache=True, nogil=True)
def _cube_block(wflat, tflat, sizes, P, WhT, geom, h_lo, h_hi, params, table, out):
    """Tiles h_lo <= h < h_hi of :func:`_cube_run`; returns (count, first) of this block.

    cb[j] = -(high partial sum of gate j) is updated incrementally from h to h + 1: only the
    bits of h ^ (h + 1) change (two on average), and every intermediate value is again minus a
    partial sum, so it stays within the bound B of the working dtype.
    """
    L = geom[0]
    start = geom[1]
    stop = geom[2]
    kind = geom[3]
    g1 = sizes[1]
    H = WhT.shape[0]
    T = 1 << L
    width = 1
    for i in range(2, sizes.shape[0]):
        width = max(width, sizes[i])
    if sizes.shape[0] <= 3:
        width = 1
    cb = np.zeros(g1, dtype=wflat.dtype)
    nz = np.empty(g1, dtype=np.int64)
    acc = np.empty(T, dtype=wflat.dtype)
    o = np.empty(T, dtype=np.uint8)
    tv = np.empty(T, dtype=np.uint8)
    za = np.empty((width, T), dtype=np.uint8)
    zb = np.empty((width, T), dtype=np.uint8)
    for i in range(H):
        if (h_lo >> i) & 1:
            col = WhT[i]
            for j in range(g1):
                cb[j] -= col[j]
    c = 0
    f = -1
    for h in range(h_lo, h_hi):
        if h > h_lo:
            changed = h ^ (h - 1)
            for i in range(H):
                if (changed >> i) & 1:
                    col = WhT[i]
                    if (h >> i) & 1:
                        for j in range(g1):
                            cb[j] -= col[j]
                    else:
                        for j in range(g1):
                            cb[j] += col[j]
        _cube_tile(wflat, tflat, sizes, P, L, cb, nz, acc, za, zb, o)
        base = h << L
        lo = max(start - base, 0)
        hi = min(stop - base, T)
        if kind < 0:
            off = base - start
            for a in range(lo, hi):
                out[off + a] = o[a]
            continue
        d = np.int64(0)          # not a Python int: under NUMBA_DISABLE_JIT, 0 + uint8 stays uint8 (NEP 50) and wraps
        if kind == KIND_CONST:
            for a in range(lo, hi):
                d += o[a]
            if params[0] != 0:
                d = (hi - lo) - d
        else:
            _fill_target(tv, base, lo, hi, kind, params, table)
            for a in range(lo, hi):
                d += o[a] ^ tv[a]
        if d > 0:
            c += d
            if f < 0:
                if kind == KIND_CONST:
                    _fill_target(tv, base, lo, hi, kind, params, table)
                for a in range(lo, hi):
                    if o[a] != tv[a]:
                        f = base + a
                        break
    return c, f


@njit(cache=True, nogil=True, parallel=True)
def _cube_run(wflat, tflat, sizes, geom, params, table, out, counts, first):
    """Circuit over the cube indices [start, stop), tile by tile (2^L points per tile).

    ``geom = [L, start, stop, kind]``.  If ``kind < 0`` the outputs are written to
    ``out[k - start]`` (truth-table mode; ``out`` has length stop - start).  Otherwise each
    point is compared with the target spec ``(kind, params, table)`` and the kernel returns
    per-block ``counts`` and ``first`` (written into the arrays passed, length
    ``min(#tiles, 64)``, returning nothing: see ``parallel._deferred_sigint`` for why no
    tuple of arrays crosses back into Python): the number of disagreements and the smallest
    disagreeing index (-1 if none).  Blocks are contiguous runs of high-block values h (tile h holds the
    points (h << L) + a); iteration b of the ``prange`` writes only slot b and its own range
    of ``out``.  Memory: the (g_1, 2^L) low table P, the (N - L, g_1) high columns and
    per-block tiles; nothing grows with 2^N besides ``out``.
    """
    L = geom[0]
    start = geom[1]
    stop = geom[2]
    n_in = sizes[0]
    g1 = sizes[1]
    P = _low_table(wflat, tflat, n_in, g1, L)
    WhT = _high_columns(wflat, n_in, g1, L)
    h0 = start >> L
    nh = 0
    if stop > start:
        nh = ((stop - 1) >> L) + 1 - h0
    nb = counts.shape[0]
    for b in prange(nb):
        cf = _cube_block(wflat, tflat, sizes, P, WhT, geom, h0 + b * nh // nb,
                         h0 + (b + 1) * nh // nb, params, table, out)
        counts[b] = cf[0]
        first[b] = cf[1]


@njit(cache=True, nogil=True)
def _rows_tile_len(sizes):
    """Points per tile for :func:`_rows_block`: up to 1024, fewer for wide layers (~1 MB)."""
    width = 1
    for i in range(sizes.shape[0]):
        width = max(width, sizes[i])
    tile = 1024
    while tile > 16 and tile * width > (1 << 20):
        tile //= 2
    return tile


@njit(cache=True, nogil=True)
def _rows_block(wflat, tflat, sizes, bits, idx, out, p_lo, p_hi):
    """Circuit outputs for the points p_lo <= p < p_hi (``simulate._rows`` runs ranges on threads), tile by tile.

    Points are rows of ``bits`` (n_points, N) uint8, or, when ``bits`` has no rows, the cube
    indices ``idx`` (int64, decoded as bit i = (k >> i) & 1).  Each layer, the first included,
    runs :func:`_layer_tile` vectorised over the tile.
    """
    n_in = sizes[0]
    width = 1
    for i in range(sizes.shape[0]):
        width = max(width, sizes[i])
    tile = _rows_tile_len(sizes)
    za = np.empty((width, tile), dtype=np.uint8)
    zb = np.empty((width, tile), dtype=np.uint8)
    acc = np.empty(tile, dtype=wflat.dtype)
    from_idx = bits.shape[0] == 0
    for a0 in range(p_lo, p_hi, tile):
        n = min(p_hi, a0 + tile) - a0
        if from_idx:
            for i in range(n_in):
                zi = za[i]
                for a in range(n):
                    zi[a] = (idx[a0 + a] >> i) & 1
        else:
            for a in range(n):
                row = bits[a0 + a]
                for i in range(n_in):
                    za[i, a] = row[i]
        z = _layers_tile(wflat, tflat, sizes, 1, 0, 0, za, zb, acc, n)
        for a in range(n):
            out[a0 + a] = z[a]

