"""Private numba kernel: one full-batch forward + backward pass of a depth-2 ReLU network in
product form with float32 lanes (THEORY §4.8; wrapper :func:`networks.train_product._full_pass`).

z_i(a, b) = Ac[a, i] + Bt[i, b] (Ac = α + bias, Bt = βᵀ, both already rounded to float32).
Per pair: N = u0 + Σ_i u_i relu(z_i) (float32 over i in order, u0 added in float64),
r = N - Y[a, b] (float64), g = 2 r / #pairs (rounded to float32 for the lanes),
Qa[a, i] = Σ_b g [z_i > 0], Qb[i, b] = Σ_a g [z_i > 0].

Precision of each step: α, β and the bias in float64 (BLAS, by the wrapper), then Ac = α + c
and β rounded once to float32; z = Ac + β, relu(z) and N's sum over neurons (in pairs, in order) in float32;
u0, the residual r = N - Y, r², g = 2r/#pairs and the sums Σ r², Σ g in float64 (per column,
over the rows of a block, in order; the wrapper adds the columns with math.fsum); g rounded to
float32 for the lanes; [z > 0] exact (tested as β > -Ac, which is the same predicate in IEEE
arithmetic); Qa in float32 over the columns of one tile (≤ TILE_FLOATS / w) then float64; Qb in
float32 over at most CHUNK·FLUSH rows, then float64 per block.  Never ``fastmath``: no loop
carries a floating-point reduction on its lanes (Qb's lanes are columns, Qa's lanes are the rows
of a chunk in a transposed second pass), so every sum has a fixed order and results do not depend
on scheduling (each block writes only its own rows of Qa and its own Qb[blk], cols[blk]).

Structure: blocks of rows (prange) × tiles of columns (the β tile and the float32 Qb partials
stay in L2) × chunks of CHUNK rows: forward for 4 rows at a time (register blocking: one load of
β per 4 rows), residual, then Qb (columns on lanes, 4 rows per step), and per chunk Qa (rows on
lanes, 4 columns per step).  Padded rows and columns carry g = 0.
"""

import numpy as np
from numba import prange

from circuits._jit import njit

LANES = 16          # float32 lanes of one AVX-512 vector
ROWS = 4            # rows of a per register block
CHUNK = 64          # rows per chunk (the transposed pass for Qa runs once per chunk)
#: Slices of an epoch hold SLICE_SCALE times the float64 kernel's terms (about as fast per slice).
SLICE_SCALE = 4
#: Floats of one Bt tile (w × TILE_B): the tile and the float32 Qb partials stay in L2.
TILE_FLOATS = 1 << 16
FLUSH = 4           # chunks accumulated in float32 in Qb before a flush to float64


@njit(cache=True, nogil=True)
def _back_b(ac, bt, g, qbt, nbp, w):
    """qbt[i, b] += g[r, b] for each of 4 rows r with ac[r, i] + bt[i, b] > 0 (b on lanes).

    ac + x > 0 is tested as x > -ac (exact: a float sum is never rounded to 0 unless it is 0,
    and negation is exact), so each (row, neuron, column) costs one compare and one masked add;
    the rows are added in order 0, 1, 2, 3."""
    g0 = g[0]
    g1 = g[1]
    g2 = g[2]
    g3 = g[3]
    for i in range(w):
        n0 = -ac[0, i]
        n1 = -ac[1, i]
        n2 = -ac[2, i]
        n3 = -ac[3, i]
        row = bt[i]
        qrow = qbt[i]
        for b in range(nbp):
            x = row[b]
            s = qrow[b]
            if x > n0:
                s += g0[b]
            if x > n1:
                s += g1[b]
            if x > n2:
                s += g2[b]
            if x > n3:
                s += g3[b]
            qrow[b] = s


@njit(cache=True, nogil=True)
def _back_a(nact, bt, gT, qat, nb, nr, w):
    """qat[i, a] += g[a, b] over the columns b with ac[a, i] + bt[i, b] > 0, the chunk's rows a
    on lanes (``nact`` = -ac transposed): the transposed twin of :func:`_back_b`, 4 columns per
    step, columns added in order."""
    nb4 = nb - nb % 4
    for i in range(w):
        arow = nact[i]
        qrow = qat[i]
        row = bt[i]
        for b in range(0, nb4, 4):
            x0 = row[b]
            x1 = row[b + 1]
            x2 = row[b + 2]
            x3 = row[b + 3]
            h0 = gT[b]
            h1 = gT[b + 1]
            h2 = gT[b + 2]
            h3 = gT[b + 3]
            for a in range(nr):
                na = arow[a]
                s = qrow[a]
                if x0 > na:
                    s += h0[a]
                if x1 > na:
                    s += h1[a]
                if x2 > na:
                    s += h2[a]
                if x3 > na:
                    s += h3[a]
                qrow[a] = s
        for b in range(nb4, nb):
            x0 = row[b]
            h0 = gT[b]
            for a in range(nr):
                if x0 > arow[a]:
                    qrow[a] += h0[a]


@njit(cache=True, nogil=True)
def _forward(ac, bt, u, val, nbp, w):
    """val[r, b] = Σ_i u_i relu(ac[r, i] + bt[i, b]) for 4 rows, float32: neurons in pairs
    (val += (t_i + t_{i+1}), pairs in order, then the last neuron of an odd width), so each
    load/store of val serves two neurons."""
    zero = np.float32(0.0)
    for r in range(ROWS):
        for b in range(nbp):
            val[r, b] = zero
    v0 = val[0]
    v1 = val[1]
    v2 = val[2]
    v3 = val[3]
    w2 = w - w % 2
    for i in range(0, w2, 2):
        ui = u[i]
        uj = u[i + 1]
        a0 = ac[0, i]
        a1 = ac[1, i]
        a2 = ac[2, i]
        a3 = ac[3, i]
        c0 = ac[0, i + 1]
        c1 = ac[1, i + 1]
        c2 = ac[2, i + 1]
        c3 = ac[3, i + 1]
        row = bt[i]
        rowj = bt[i + 1]
        for b in range(nbp):
            x = row[b]
            y = rowj[b]
            v0[b] += ui * max(a0 + x, zero) + uj * max(c0 + y, zero)
            v1[b] += ui * max(a1 + x, zero) + uj * max(c1 + y, zero)
            v2[b] += ui * max(a2 + x, zero) + uj * max(c2 + y, zero)
            v3[b] += ui * max(a3 + x, zero) + uj * max(c3 + y, zero)
    for i in range(w2, w):
        ui = u[i]
        a0 = ac[0, i]
        a1 = ac[1, i]
        a2 = ac[2, i]
        a3 = ac[3, i]
        row = bt[i]
        for b in range(nbp):
            x = row[b]
            v0[b] += ui * max(a0 + x, zero)
            v1[b] += ui * max(a1 + x, zero)
            v2[b] += ui * max(a2 + x, zero)
            v3[b] += ui * max(a3 + x, zero)


@njit(cache=True, nogil=True, parallel=True)
def _train_pass_relu32(Ac, Bt, u, u0, Y, scale, n_blocks, tile_b, Qa, Qbt, cols):
    """Ac float32 (#a, w), Bt float32 (w, #b), u float32 (w,), u0 float64, Y float64 (#a, #b),
    scale = 2 / #pairs.  Writes Qa float64 (#a, w) and adds into Qbt float64 (n_blocks, w, #b)
    and cols float64 (n_blocks, 2, #b) (both zero on entry): cols[blk, 0, b] = Σ_{a in blk} r²,
    cols[blk, 1, b] = Σ_{a in blk} g (float64, rows in order)."""
    size_a = Ac.shape[0]
    w = Ac.shape[1]
    size_b = Bt.shape[1]
    per_block = (size_a + n_blocks - 1) // n_blocks
    per_block = ((per_block + ROWS - 1) // ROWS) * ROWS
    tbp = ((tile_b + LANES - 1) // LANES) * LANES
    zero = np.float32(0.0)
    for blk in prange(n_blocks):
        lo = blk * per_block
        hi = min(size_a, lo + per_block)
        if lo >= hi:
            continue
        bt = np.zeros((w, tbp), dtype=np.float32)
        qbt = np.zeros((w, tbp), dtype=np.float32)
        val = np.empty((ROWS, tbp), dtype=np.float32)
        g = np.zeros((CHUNK, tbp), dtype=np.float32)
        gT = np.zeros((tbp, CHUNK), dtype=np.float32)
        ac = np.empty((CHUNK, w), dtype=np.float32)
        act = np.empty((w, CHUNK), dtype=np.float32)
        qat = np.empty((w, CHUNK), dtype=np.float32)
        lc = cols[blk, 0]
        gc = cols[blk, 1]
        qb64 = Qbt[blk]
        for a in range(lo, hi):
            for i in range(w):
                Qa[a, i] = 0.0
        for b0 in range(0, size_b, tile_b):
            nb = min(tile_b, size_b - b0)
            nbp = ((nb + LANES - 1) // LANES) * LANES
            for i in range(w):
                for b in range(nb):
                    bt[i, b] = Bt[i, b0 + b]
                for b in range(nb, nbp):
                    bt[i, b] = zero
            for c0 in range(lo, hi, CHUNK):
                nr = min(CHUNK, hi - c0)
                nrp = ((nr + ROWS - 1) // ROWS) * ROWS
                for t in range(nrp):
                    src = c0 + (t if t < nr else 0)
                    for i in range(w):
                        ac[t, i] = Ac[src, i]
                        act[i, t] = -Ac[src, i]
                        qat[i, t] = zero
                for t0 in range(0, nrp, ROWS):
                    _forward(ac[t0:t0 + ROWS], bt, u, val, nbp, w)
                    for r in range(ROWS):
                        t = t0 + r
                        grow = g[t]
                        if t >= nr:
                            for b in range(nbp):
                                grow[b] = zero
                                gT[b, t] = zero
                            continue
                        a = c0 + t
                        vr = val[r]
                        yr = Y[a]
                        for b in range(nb):
                            res = np.float64(vr[b]) + u0 - yr[b0 + b]
                            gg = scale * res
                            lc[b0 + b] += res * res
                            gc[b0 + b] += gg
                            grow[b] = np.float32(gg)
                        for b in range(nb, nbp):
                            grow[b] = zero
                        for b in range(nbp):
                            gT[b, t] = grow[b]
                    _back_b(ac[t0:t0 + ROWS], bt, g[t0:t0 + ROWS], qbt, nbp, w)
                _back_a(act, bt, gT, qat, nb, nrp, w)
                for t in range(nr):
                    a = c0 + t
                    for i in range(w):
                        Qa[a, i] += qat[i, t]
                if (c0 - lo) // CHUNK % FLUSH == FLUSH - 1 or c0 + CHUNK >= hi:
                    for i in range(w):
                        qrow = qbt[i]
                        q64 = qb64[i]
                        for b in range(nb):
                            q64[b0 + b] += qrow[b]
                            qrow[b] = zero
