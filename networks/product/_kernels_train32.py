"""Private numba kernel: one full-batch forward + backward pass of a depth-2 ReLU network in
product form with float32 lanes (THEORY §4.8; wrapper :func:`networks.product.train._full_pass`).

z_i(a, b) = Ac[a, i] + Bt[i, b] (Ac = α + bias, Bt = βᵀ, both already rounded to float32).
Per pair: N = u0 + Σ_i u_i relu(z_i), r = N - Y[a, b] (float64), g = 2 r / #pairs (rounded to
float32 for the lanes), Qa[a, i] = Σ_b g [z_i > 0], Qb[i, b] = Σ_a g [z_i > 0].

Structure used:

- relu(a + x) = max(x, -a) + a, so Σ_i u_i relu(Ac[a, i] + x_i) = Σ_i u_i max(x_i, -Ac[a, i])
  + Σ_i u_i Ac[a, i]: the second sum is one number per row (float64, once per row), and each
  (pair, neuron) term costs one max and one fused multiply-add on the lanes.
- Qa and Qb share the mask [z > 0] (tested as x > -Ac, the same predicate in IEEE arithmetic: a
  float sum is never rounded to 0 unless it is 0, and negation is exact): one pass computes the
  mask once per (row, neuron, column) and feeds both sums (a masked add each).

Precision of each step: α, β and the bias in float64 (BLAS, by the wrapper), then Ac = α + c
and β rounded once to float32; Σ_i u_i max(x_i, -Ac) in float32 (fused multiply-adds, neurons
in order, 4 per step); the row term u0 + Σ_i u_i Ac[a, i], the residual r = N - Y, r², g = 2r/#pairs
and the sums Σ r², Σ g in float64 (per column, over the rows of a block, in order; the wrapper
adds the columns with math.fsum); g rounded to float32 for the lanes; [z > 0] exact; Qa in
float32 over the columns of one tile (≤ TILE_FLOATS / w), then float64; Qb in float32 over at
most CHUNK·FLUSH rows, then float64 per block.

Floating-point flags: ``contract`` (fused multiply-adds) in the forward, and ``reassoc`` only in
:func:`_backward`, whose Qa sum over a tile's columns is split into vector-lane partial sums.
The order of every sum is fixed by the compiled code, so results do not depend on thread
scheduling (each block writes only its own rows of Qa and its own Qb[blk], cols[blk]) and
repeat bit for bit on one machine; across CPUs with other vector widths (AVX2 vs AVX-512) the
float32 sums may differ in their last bits, as BLAS results do.  No flag touches a bit that is
decided: the exact metrics (``support_metrics``) are float64 and separate.

Loops: blocks of rows (one per thread) × tiles of columns (the β tile and the float32 Qb partials
stay in L2) × chunks of CHUNK rows × groups of 4 rows (register blocking: one load of β per 4
rows): forward, residual, backward.  Padded rows and columns carry g = 0.
"""

import numpy as np
from circuits._jit import njit

LANES = 16          # float32 lanes of one AVX-512 vector
ROWS = 4            # rows of a per register block
CHUNK = 64          # rows per chunk (Qa's float32 partials are flushed once per tile and chunk)
#: Slices of an epoch hold SLICE_SCALE times the float64 kernel's terms (about as fast per slice).
SLICE_SCALE = 4
#: Floats of one Bt tile (w × TILE_B): the tile and the float32 Qb partials stay in L2.
TILE_FLOATS = 1 << 16
FLUSH = 4           # chunks accumulated in float32 in Qb before a flush to float64


@njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
def _backward(nac, bt, g, qbt, qa, nbp, w):
    """For 4 rows r and each neuron i, over the columns b with bt[i, b] > nac[r, i] (that is,
    z > 0): qbt[i, b] += g[r, b] (rows added in order 0..3) and qa[r, i] += Σ_b g[r, b]
    (float32; ``reassoc`` lets this sum run in vector-lane partials).  One compare per
    (row, neuron, column), two masked adds."""
    g0 = g[0]
    g1 = g[1]
    g2 = g[2]
    g3 = g[3]
    zero = np.float32(0.0)
    for i in range(w):
        n0 = nac[0, i]
        n1 = nac[1, i]
        n2 = nac[2, i]
        n3 = nac[3, i]
        row = bt[i]
        qrow = qbt[i]
        s0 = zero
        s1 = zero
        s2 = zero
        s3 = zero
        for b in range(nbp):
            x = row[b]
            s = qrow[b]
            if x > n0:
                s += g0[b]
                s0 += g0[b]
            if x > n1:
                s += g1[b]
                s1 += g1[b]
            if x > n2:
                s += g2[b]
                s2 += g2[b]
            if x > n3:
                s += g3[b]
                s3 += g3[b]
            qrow[b] = s
        qa[0, i] += s0
        qa[1, i] += s1
        qa[2, i] += s2
        qa[3, i] += s3


@njit(cache=True, nogil=True, fastmath={"contract"})
def _forward(nac, bt, u, val, nbp, w):
    """val[r, b] = Σ_i u_i max(bt[i, b], nac[r, i]) for 4 rows (nac = -Ac), float32: one fused
    multiply-add per term, neurons added in order, 4 neurons per step (one load/store of val
    serves four neurons), then the last w mod 4 one at a time.  The caller adds the row's
    float64 term u0 + Σ_i u_i Ac[r, i]."""
    zero = np.float32(0.0)
    for r in range(ROWS):
        for b in range(nbp):
            val[r, b] = zero
    v0 = val[0]
    v1 = val[1]
    v2 = val[2]
    v3 = val[3]
    w4 = w - w % 4
    for i in range(0, w4, 4):
        ua = u[i]
        ub = u[i + 1]
        uc = u[i + 2]
        ud = u[i + 3]
        m00 = nac[0, i]
        m01 = nac[0, i + 1]
        m02 = nac[0, i + 2]
        m03 = nac[0, i + 3]
        m10 = nac[1, i]
        m11 = nac[1, i + 1]
        m12 = nac[1, i + 2]
        m13 = nac[1, i + 3]
        m20 = nac[2, i]
        m21 = nac[2, i + 1]
        m22 = nac[2, i + 2]
        m23 = nac[2, i + 3]
        m30 = nac[3, i]
        m31 = nac[3, i + 1]
        m32 = nac[3, i + 2]
        m33 = nac[3, i + 3]
        ra = bt[i]
        rb = bt[i + 1]
        rc = bt[i + 2]
        rd = bt[i + 3]
        for b in range(nbp):
            xa = ra[b]
            xb = rb[b]
            xc = rc[b]
            xd = rd[b]
            v0[b] = (((v0[b] + ua * max(xa, m00)) + ub * max(xb, m01))
                     + uc * max(xc, m02)) + ud * max(xd, m03)
            v1[b] = (((v1[b] + ua * max(xa, m10)) + ub * max(xb, m11))
                     + uc * max(xc, m12)) + ud * max(xd, m13)
            v2[b] = (((v2[b] + ua * max(xa, m20)) + ub * max(xb, m21))
                     + uc * max(xc, m22)) + ud * max(xd, m23)
            v3[b] = (((v3[b] + ua * max(xa, m30)) + ub * max(xb, m31))
                     + uc * max(xc, m32)) + ud * max(xd, m33)
    for i in range(w4, w):
        ua = u[i]
        m00 = nac[0, i]
        m10 = nac[1, i]
        m20 = nac[2, i]
        m30 = nac[3, i]
        ra = bt[i]
        for b in range(nbp):
            xa = ra[b]
            v0[b] = v0[b] + ua * max(xa, m00)
            v1[b] = v1[b] + ua * max(xa, m10)
            v2[b] = v2[b] + ua * max(xa, m20)
            v3[b] = v3[b] + ua * max(xa, m30)


def _train_pass_relu32(Ac, Bt, u, u0, Y, scale, n_blocks, tile_b, Qa, Qbt, cols):
    """Ac float32 (#a, w), Bt float32 (w, #b), u float32 (w,), u0 float64, Y float64 (#a, #b),
    scale = 2 / #pairs.  Writes Qa float64 (#a, w) and adds into Qbt float64 (n_blocks, w, #b)
    and cols float64 (n_blocks, 2, #b) (both zero on entry): cols[blk, 0, b] = Σ_{a in blk} r²,
    cols[blk, 1, b] = Σ_{a in blk} g (float64, rows in order).

    The ``n_blocks`` blocks of rows run on Python threads (:func:`circuits.utils._threads.run_ranges`,
    the serial GIL-free kernel :func:`_train_blocks_relu32` per block): each block writes only
    its own rows and slots, so the result does not depend on the thread count.  A serial kernel
    compiles in about a third of the time of the ``prange`` loop it replaced, which every first
    run paid."""
    from circuits.utils._threads import run_ranges, work_threads

    args = (Ac, Bt, u, np.float64(u0), Y, np.float64(scale), np.int64(n_blocks),
            np.int64(tile_b), Qa, Qbt, cols)
    bounds = [(blk, blk + 1) for blk in range(int(n_blocks))]
    run_ranges(lambda lo, hi: _train_blocks_relu32(*args, lo, hi), bounds,
               work_threads(len(bounds)))


@njit(cache=True, nogil=True)
def _train_blocks_relu32(Ac, Bt, u, u0, Y, scale, n_blocks, tile_b, Qa, Qbt, cols, blk_lo, blk_hi):
    """The blocks ``blk_lo <= blk < blk_hi`` of :func:`_train_pass_relu32` (serial)."""
    size_a = Ac.shape[0]
    w = Ac.shape[1]
    size_b = Bt.shape[1]
    per_block = (size_a + n_blocks - 1) // n_blocks
    per_block = ((per_block + ROWS - 1) // ROWS) * ROWS
    tbp = ((tile_b + LANES - 1) // LANES) * LANES
    zero = np.float32(0.0)
    for blk in range(blk_lo, blk_hi):
        lo = blk * per_block
        hi = min(size_a, lo + per_block)
        if lo >= hi:
            continue
        bt = np.zeros((w, tbp), dtype=np.float32)
        qbt = np.zeros((w, tbp), dtype=np.float32)
        val = np.empty((ROWS, tbp), dtype=np.float32)
        g = np.zeros((CHUNK, tbp), dtype=np.float32)
        nac = np.empty((CHUNK, w), dtype=np.float32)
        qat = np.empty((CHUNK, w), dtype=np.float32)
        rowterm = np.empty(CHUNK)
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
                    s = u0
                    for i in range(w):
                        nac[t, i] = -Ac[src, i]
                        qat[t, i] = zero
                        s += np.float64(u[i]) * np.float64(Ac[src, i])
                    rowterm[t] = s
                for t0 in range(0, nrp, ROWS):
                    _forward(nac[t0:t0 + ROWS], bt, u, val, nbp, w)
                    for r in range(ROWS):
                        t = t0 + r
                        grow = g[t]
                        if t >= nr:
                            for b in range(nbp):
                                grow[b] = zero
                            continue
                        a = c0 + t
                        vr = val[r]
                        yr = Y[a]
                        rt = rowterm[t]
                        for b in range(nb):
                            res = np.float64(vr[b]) + rt - yr[b0 + b]
                            gg = scale * res
                            lc[b0 + b] += res * res
                            gc[b0 + b] += gg
                            grow[b] = np.float32(gg)
                        for b in range(nb, nbp):
                            grow[b] = zero
                    _backward(nac[t0:t0 + ROWS], bt, g[t0:t0 + ROWS], qbt,
                              qat[t0:t0 + ROWS], nbp, w)
                for t in range(nr):
                    a = c0 + t
                    for i in range(w):
                        Qa[a, i] += qat[t, i]
                if (c0 - lo) // CHUNK % FLUSH == FLUSH - 1 or c0 + CHUNK >= hi:
                    for i in range(w):
                        qrow = qbt[i]
                        q64 = qb64[i]
                        for b in range(nb):
                            q64[b0 + b] += qrow[b]
                            qrow[b] = zero
