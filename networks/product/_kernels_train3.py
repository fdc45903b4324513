"""Private numba kernel: one full-batch forward + backward pass of a depth-3 ReLU network in
product form with float32 lanes (THEORY §4.8; wrapper :func:`networks.product.depth3.depth3_pass32`).

z1_i(a, b) = A[a, i] + Bct[i, b] (A = α, Bct = (β + b1)ᵀ, rounded to float32 once);
h1 = relu(z1); z2_j = b2_j + Σ_i W2[j, i] h1_i; N = v0 + Σ_j v_j relu(z2_j); r = N - Y[a, b],
g = 2 r / #pairs.  Backward: d2_j = g v_j [z2_j > 0]; d1_i = [z1_i > 0] Σ_j W2[j, i] d2_j;
Qa[a, i] = Σ_b d1_i, Qb[i, b] = Σ_a d1_i, dW2[j, i] = Σ d2_j h1_i, db2_j = Σ d2_j,
dv_j = Σ g relu(z2_j), dv0 = Σ g.

Work per pair: three products of w1 × w2 (layer 2 forward, W2ᵀ d2, the outer product d2 h1ᵀ), so
the kernel is three small matrix products over a *group* of pairs (``rows`` rows × a tile of
columns, flattened to p = r·nb + t), vectorised along p (16 float32 lanes) and register-blocked
4 × 4 (four neurons of each layer per pass: 8 loads and 4 stores per 16 fused multiply-adds).
The widths are padded to multiples of 4 with zero weights (padded neurons are 0 and carry no
gradient).  The h1 buffer of a group (``GROUP_FLOATS``) stays in L2; W2ᵀ d2 is formed four neurons
at a time and summed into Qa and Qb at once, so it never needs a buffer of its own.

Precision of each step: α, β + b1 in float64 (BLAS, by the wrapper), then rounded to float32;
z1, h1, z2 (fused multiply-adds, neurons of layer 1 in order, 4 per step), N's sum over layer 2
and W2ᵀ d2 in float32; v0 + N, the residual, r², g and their sums over pairs in float64 (per
column, rows in order); g rounded to float32 for the lanes; the masks exact on the float32
values; dW2 in float32 over the pairs of one group (at most max(TILE, GROUP_FLOATS / w1)
pairs), then float64; dv, db2 and Qa in float64; Qb in float32 over the rows of one group, then
float64 per block of rows.

Floating-point flags: ``contract`` in the products (fixed order), ``reassoc`` only in the
reductions over pairs (:func:`_outer`, :func:`_head`, :func:`_qsums`), which split a sum into
vector-lane partials.  The order of every sum is fixed by the compiled code and each block of
rows writes only its own rows of Qa and its own partials, so results repeat bit for bit for a
fixed thread count on one machine.
"""

import numpy as np
from numba import prange

from circuits._jit import njit

#: Columns of one tile (256 measured faster than 128, 512 and 1024 at n = 10 and 12, one thread).
TILE = 256
#: Floats of the h1 buffer of one group of pairs (w1 × pairs; 512 KiB: stays in L2).
GROUP_FLOATS = 1 << 17


@njit(cache=True, nogil=True, fastmath={"contract"})
def _layer2(h1, w2, z2, w1p, w2p, npairs):
    """z2[j, p] += Σ_i w2[j, i] h1[i, p] for p < npairs (z2 holds b2 on entry); 4 × 4 blocks,
    the neurons i added in order."""
    for jb in range(0, w2p, 4):
        za = z2[jb]
        zb = z2[jb + 1]
        zc = z2[jb + 2]
        zd = z2[jb + 3]
        for ib in range(0, w1p, 4):
            a0 = w2[jb, ib]
            a1 = w2[jb, ib + 1]
            a2 = w2[jb, ib + 2]
            a3 = w2[jb, ib + 3]
            b0 = w2[jb + 1, ib]
            b1 = w2[jb + 1, ib + 1]
            b2 = w2[jb + 1, ib + 2]
            b3 = w2[jb + 1, ib + 3]
            c0 = w2[jb + 2, ib]
            c1 = w2[jb + 2, ib + 1]
            c2 = w2[jb + 2, ib + 2]
            c3 = w2[jb + 2, ib + 3]
            d0 = w2[jb + 3, ib]
            d1 = w2[jb + 3, ib + 1]
            d2 = w2[jb + 3, ib + 2]
            d3 = w2[jb + 3, ib + 3]
            h0 = h1[ib]
            hh1 = h1[ib + 1]
            h2 = h1[ib + 2]
            h3 = h1[ib + 3]
            for p in range(npairs):
                x0 = h0[p]
                x1 = hh1[p]
                x2 = h2[p]
                x3 = h3[p]
                za[p] = (((za[p] + a0 * x0) + a1 * x1) + a2 * x2) + a3 * x3
                zb[p] = (((zb[p] + b0 * x0) + b1 * x1) + b2 * x2) + b3 * x3
                zc[p] = (((zc[p] + c0 * x0) + c1 * x1) + c2 * x2) + c3 * x3
                zd[p] = (((zd[p] + d0 * x0) + d1 * x1) + d2 * x2) + d3 * x3


@njit(cache=True, nogil=True, fastmath={"contract"})
def _back1(d2, w2, h1, gs, ib, w2p, npairs):
    """gs[k, p] = [h1[ib + k, p] > 0] Σ_j w2[j, ib + k] d2[j, p] for k < 4 (the neurons j added
    in order, 4 per step; the first step writes, the last one applies the mask)."""
    zero = np.float32(0.0)
    ga = gs[0]
    gb = gs[1]
    gc = gs[2]
    gd = gs[3]
    for jb in range(0, w2p, 4):
        a0 = w2[jb, ib]
        a1 = w2[jb + 1, ib]
        a2 = w2[jb + 2, ib]
        a3 = w2[jb + 3, ib]
        b0 = w2[jb, ib + 1]
        b1 = w2[jb + 1, ib + 1]
        b2 = w2[jb + 2, ib + 1]
        b3 = w2[jb + 3, ib + 1]
        c0 = w2[jb, ib + 2]
        c1 = w2[jb + 1, ib + 2]
        c2 = w2[jb + 2, ib + 2]
        c3 = w2[jb + 3, ib + 2]
        e0 = w2[jb, ib + 3]
        e1 = w2[jb + 1, ib + 3]
        e2 = w2[jb + 2, ib + 3]
        e3 = w2[jb + 3, ib + 3]
        r0 = d2[jb]
        r1 = d2[jb + 1]
        r2 = d2[jb + 2]
        r3 = d2[jb + 3]
        if jb == 0:
            for p in range(npairs):
                x0 = r0[p]
                x1 = r1[p]
                x2 = r2[p]
                x3 = r3[p]
                ga[p] = ((a0 * x0 + a1 * x1) + a2 * x2) + a3 * x3
                gb[p] = ((b0 * x0 + b1 * x1) + b2 * x2) + b3 * x3
                gc[p] = ((c0 * x0 + c1 * x1) + c2 * x2) + c3 * x3
                gd[p] = ((e0 * x0 + e1 * x1) + e2 * x2) + e3 * x3
        elif jb + 4 < w2p:
            for p in range(npairs):
                x0 = r0[p]
                x1 = r1[p]
                x2 = r2[p]
                x3 = r3[p]
                ga[p] = (((ga[p] + a0 * x0) + a1 * x1) + a2 * x2) + a3 * x3
                gb[p] = (((gb[p] + b0 * x0) + b1 * x1) + b2 * x2) + b3 * x3
                gc[p] = (((gc[p] + c0 * x0) + c1 * x1) + c2 * x2) + c3 * x3
                gd[p] = (((gd[p] + e0 * x0) + e1 * x1) + e2 * x2) + e3 * x3
        else:
            ha = h1[ib]
            hb = h1[ib + 1]
            hc = h1[ib + 2]
            hd = h1[ib + 3]
            for p in range(npairs):
                x0 = r0[p]
                x1 = r1[p]
                x2 = r2[p]
                x3 = r3[p]
                ya = (((ga[p] + a0 * x0) + a1 * x1) + a2 * x2) + a3 * x3
                yb = (((gb[p] + b0 * x0) + b1 * x1) + b2 * x2) + b3 * x3
                yc = (((gc[p] + c0 * x0) + c1 * x1) + c2 * x2) + c3 * x3
                yd = (((gd[p] + e0 * x0) + e1 * x1) + e2 * x2) + e3 * x3
                ga[p] = ya if ha[p] > zero else zero
                gb[p] = yb if hb[p] > zero else zero
                gc[p] = yc if hc[p] > zero else zero
                gd[p] = yd if hd[p] > zero else zero
    if w2p == 4:
        ha = h1[ib]
        hb = h1[ib + 1]
        hc = h1[ib + 2]
        hd = h1[ib + 3]
        for p in range(npairs):
            ga[p] = ga[p] if ha[p] > zero else zero
            gb[p] = gb[p] if hb[p] > zero else zero
            gc[p] = gc[p] if hc[p] > zero else zero
            gd[p] = gd[p] if hd[p] > zero else zero


@njit(cache=True, nogil=True, fastmath={"reassoc"})
def _qsums(gs, ib, a0, nr, b0, nb, Qa, qb, colsum):
    """For the 4 rows gs[k] (neuron ib + k) of a group: Qa[a0 + r, ib + k] += Σ_t gs[k, r·nb + t]
    (float64, in vector-lane partials) and
    qb[ib + k, b0 + t] += Σ_r gs[k, r·nb + t] (float32 over the group's rows in order, then
    float64)."""
    for k in range(4):
        grow = gs[k]
        i = ib + k
        for r in range(nr):
            seg = grow[r * nb:r * nb + nb]
            s = 0.0
            for t in range(nb):
                s += np.float64(seg[t])
            Qa[a0 + r, i] += s
        cs = colsum[:nb]
        first = grow[:nb]
        for t in range(nb):
            cs[t] = first[t]
        for r in range(1, nr):
            seg = grow[r * nb:r * nb + nb]
            for t in range(nb):
                cs[t] = cs[t] + seg[t]
        qrow = qb[i, b0:b0 + nb]
        for t in range(nb):
            qrow[t] += np.float64(cs[t])


@njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
def _outer(d2, h1, acc, w1p, w2p, npairs):
    """acc[j, i] += Σ_p d2[j, p] h1[i, p] (float32 over the group's pairs in vector-lane
    partials, then float64); 4 × 4 blocks."""
    zero = np.float32(0.0)
    for jb in range(0, w2p, 4):
        da = d2[jb]
        db = d2[jb + 1]
        dc = d2[jb + 2]
        dd = d2[jb + 3]
        for ib in range(0, w1p, 4):
            h0 = h1[ib]
            hh1 = h1[ib + 1]
            h2 = h1[ib + 2]
            h3 = h1[ib + 3]
            s00 = zero
            s01 = zero
            s02 = zero
            s03 = zero
            s10 = zero
            s11 = zero
            s12 = zero
            s13 = zero
            s20 = zero
            s21 = zero
            s22 = zero
            s23 = zero
            s30 = zero
            s31 = zero
            s32 = zero
            s33 = zero
            for p in range(npairs):
                x0 = h0[p]
                x1 = hh1[p]
                x2 = h2[p]
                x3 = h3[p]
                y0 = da[p]
                y1 = db[p]
                y2 = dc[p]
                y3 = dd[p]
                s00 += y0 * x0
                s01 += y0 * x1
                s02 += y0 * x2
                s03 += y0 * x3
                s10 += y1 * x0
                s11 += y1 * x1
                s12 += y1 * x2
                s13 += y1 * x3
                s20 += y2 * x0
                s21 += y2 * x1
                s22 += y2 * x2
                s23 += y2 * x3
                s30 += y3 * x0
                s31 += y3 * x1
                s32 += y3 * x2
                s33 += y3 * x3
            acc[jb, ib] += s00
            acc[jb, ib + 1] += s01
            acc[jb, ib + 2] += s02
            acc[jb, ib + 3] += s03
            acc[jb + 1, ib] += s10
            acc[jb + 1, ib + 1] += s11
            acc[jb + 1, ib + 2] += s12
            acc[jb + 1, ib + 3] += s13
            acc[jb + 2, ib] += s20
            acc[jb + 2, ib + 1] += s21
            acc[jb + 2, ib + 2] += s22
            acc[jb + 2, ib + 3] += s23
            acc[jb + 3, ib] += s30
            acc[jb + 3, ib + 1] += s31
            acc[jb + 3, ib + 2] += s32
            acc[jb + 3, ib + 3] += s33


@njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
def _head(z2, g, v, vec, w2p, npairs):
    """From z2 (pre-activations of layer 2) and g (float32 per pair): vec[0, j] += Σ_p g relu(z2)
    (dv) and vec[1, j] += Σ_p d2 (db2), both float64, and z2 := d2 = g v_j [z2 > 0] in place."""
    zero = np.float32(0.0)
    for j in range(w2p):
        vj = v[j]
        row = z2[j]
        s_v = 0.0
        s_b = 0.0
        for p in range(npairs):
            z = row[p]
            gp = g[p]
            d = gp * vj if z > zero else zero
            s_v += np.float64(gp) * np.float64(max(z, zero))
            s_b += np.float64(d)
            row[p] = d
        vec[0, j] += s_v
        vec[1, j] += s_b


@njit(cache=True, nogil=True)
def _forward_out(z2, v, out, w2p, npairs):
    """out[p] = Σ_j v_j relu(z2[j, p]) (float32, neurons in order)."""
    zero = np.float32(0.0)
    for p in range(npairs):
        out[p] = zero
    for j in range(w2p):
        vj = v[j]
        row = z2[j]
        for p in range(npairs):
            out[p] = out[p] + vj * max(row[p], zero)


@njit(cache=True, nogil=True, parallel=True)
def _train_pass3_relu32(A, Bct, W2, b2, v, v0, Y, scale, n_blocks, tile, rows, Qa, Qb, dW2,
                        vec, cols):
    """A float32 (#a, w1p), Bct float32 (w1p, #b), W2 float32 (w2p, w1p), b2, v float32 (w2p,),
    v0 float64, Y float64 (#a, #b), scale = 2 / #pairs (all pairs of the epoch).  Writes Qa
    float64 (#a, w1p) and adds into the per-block float64 partials Qb (n_blocks, w1p, #b),
    dW2 (n_blocks, w2p, w1p), vec (n_blocks, 2, w2p) (dv, db2) and cols (n_blocks, 2, #b)
    (Σ r², Σ g per column)."""
    size_a = A.shape[0]
    w1p = A.shape[1]
    w2p = W2.shape[0]
    size_b = Bct.shape[1]
    per_block = (size_a + n_blocks - 1) // n_blocks
    zero = np.float32(0.0)
    for blk in prange(n_blocks):
        lo = blk * per_block
        hi = min(size_a, lo + per_block)
        if lo >= hi:
            continue
        pmax = rows * tile
        h1 = np.empty((w1p, pmax), dtype=np.float32)
        z2 = np.empty((w2p, pmax), dtype=np.float32)
        gs = np.empty((4, pmax), dtype=np.float32)
        out = np.empty(pmax, dtype=np.float32)
        g = np.empty(pmax, dtype=np.float32)
        colsum = np.empty(tile, dtype=np.float32)
        qb = Qb[blk]
        dw = dW2[blk]
        vv = vec[blk]
        lc = cols[blk, 0]
        gc = cols[blk, 1]
        for a in range(lo, hi):
            for i in range(w1p):
                Qa[a, i] = 0.0
        for b0 in range(0, size_b, tile):
            nb = min(tile, size_b - b0)
            for a0 in range(lo, hi, rows):
                nr = min(rows, hi - a0)
                npairs = nr * nb
                for i in range(w1p):
                    brow = Bct[i, b0:b0 + nb]
                    for r in range(nr):
                        ac = A[a0 + r, i]
                        hrow = h1[i, r * nb:r * nb + nb]
                        for t in range(nb):
                            x = brow[t] + ac
                            hrow[t] = x if x > zero else zero
                for j in range(w2p):
                    bj = b2[j]
                    zrow = z2[j]
                    for p in range(npairs):
                        zrow[p] = bj
                _layer2(h1, W2, z2, w1p, w2p, npairs)
                _forward_out(z2, v, out, w2p, npairs)
                lcs = lc[b0:b0 + nb]
                gcs = gc[b0:b0 + nb]
                for r in range(nr):
                    yr = Y[a0 + r, b0:b0 + nb]
                    orow = out[r * nb:r * nb + nb]
                    grow = g[r * nb:r * nb + nb]
                    for t in range(nb):
                        res = np.float64(orow[t]) + v0 - yr[t]
                        gg = scale * res
                        lcs[t] += res * res
                        gcs[t] += gg
                        grow[t] = np.float32(gg)
                _head(z2, g, v, vv, w2p, npairs)
                _outer(z2, h1, dw, w1p, w2p, npairs)
                for ib in range(0, w1p, 4):
                    _back1(z2, W2, h1, gs, ib, w2p, npairs)
                    _qsums(gs, ib, a0, nr, b0, nb, Qa, qb, colsum)
