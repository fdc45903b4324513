"""Private numba kernels of the product form (THEORY §4.8): value tables and the float64
training passes.  Wrappers validate; kernels loop.

On the hard instance's support every first-layer pre-activation of a depth-2 network is

    z_i(a, b) = scale · (A[a, i] + B[b, i]) + c[i]

(original network: scale = 1, A = X_A W_Aᵀ, B = X_B W_Bᵀ, c = bias; quantised network: A, B the
exact integers α, β, scale = η/√(2m)).  Tables are indexed [a, b] (rows = Alice).  IP(a, b) is read
from a parity table ``par[a & b]``.  Parallel loops write only their own rows / blocks, so results
never depend on scheduling.  Never ``fastmath``.

Activation codes (only the built-in σ of :mod:`networks.activations`; others use numpy blocks):
0 relu, 1 heaviside, 2 sign, 3 sigmoid, 4 tanh, 5 hardtanh, 6 softplus.
"""

import math

import numpy as np

from circuits._jit import njit

from networks._kernels import _parity_table

ACT_CODES = {"relu": 0, "heaviside": 1, "sign": 2, "sigmoid": 3, "tanh": 4, "hardtanh": 5,
             "softplus": 6}


@njit(cache=True, nogil=True)
def _sigma(code, z):
    if code == 0:
        return z if z > 0.0 else 0.0
    if code == 1:
        return 1.0 if z >= 0.0 else 0.0
    if code == 2:
        return 1.0 if z >= 0.0 else -1.0
    if code == 3:
        if z >= 0.0:
            return 1.0 / (1.0 + math.exp(-z))
        e = math.exp(z)
        return e / (1.0 + e)
    if code == 4:
        return math.tanh(z)
    if code == 5:
        return min(max(z, -1.0), 1.0)
    return max(z, 0.0) + math.log1p(math.exp(-abs(z)))


@njit(cache=True, nogil=True)
def _dsigma(code, z):
    if code == 0:
        return 1.0 if z > 0.0 else 0.0
    if code == 1 or code == 2:
        return 0.0
    if code == 3:
        s = _sigma(3, z)
        return s * (1.0 - s)
    if code == 4:
        t = math.tanh(z)
        return 1.0 - t * t
    if code == 5:
        return 1.0 if abs(z) < 1.0 else 0.0
    return _sigma(3, z)


@njit(cache=True, nogil=True)
def _neumaier(s, comp, x):
    t = s + x
    if abs(s) >= abs(x):
        comp += (s - t) + x
    else:
        comp += (x - t) + s
    return t, comp


@njit(cache=True, nogil=True)
def _row_values(Ac, Bt, u, code, scale, val):
    """val[b] = sum_i u_i σ(scale·(Ac[i] + Bt[i, b]) + ...) for one row (Ac already holds the
    row's A[a, i]; the bias is added by the caller through ``Ac`` or ``cb``).  The i-outer /
    b-inner order keeps the inner loop free of reductions (vectorisable without fastmath); each
    val[b] is still summed over i in order."""
    w = Bt.shape[0]
    size_b = Bt.shape[1]
    for b in range(size_b):
        val[b] = 0.0
    for i in range(w):
        ui = u[i]
        ai = Ac[i]
        row = Bt[i]
        if code == 0:
            for b in range(size_b):
                z = ai + row[b]
                val[b] += ui * (z if z > 0.0 else 0.0)
        else:
            for b in range(size_b):
                val[b] += ui * _sigma(code, ai + row[b])


@njit(cache=True, nogil=True)
def _value_table(A, Bt, c, scale, u, u0, code, n, store, V, stats, a_lo, a_hi):
    """V[a, b] = u0 + sum_i u_i σ(scale·(A[a, i] + Bt[i, b]) + c[i]) (written only if ``store``)
    and per-row sums.  ``Bt`` is B transposed, (w, #b); with scale != 1 the integers are scaled
    first (z = scale·(α + β) + c, α + β exact).

    stats[a] = (sum_b H·Ñ, sum_b (N - IP)², #{b: [N >= 1/2] = IP}, sum_b Ñ²) with Ñ = 1 - 2N,
    the float sums compensated (Neumaier) along the row.  Serial over the rows
    a_lo <= a < a_hi (each row independent: ``networks.product.tables`` runs ranges of rows
    on threads, :func:`circuits.utils._threads.run_ranges`).
    """
    w = A.shape[1]
    size_b = Bt.shape[1]
    par = _parity_table(n)
    for a in range(a_lo, a_hi):
        val = np.empty(size_b)
        if scale == 1.0:
            Ac = np.empty(w)
            for i in range(w):
                Ac[i] = A[a, i] + c[i]
            _row_values(Ac, Bt, u, code, 1.0, val)
        else:
            for b in range(size_b):
                val[b] = 0.0
            for i in range(w):
                for b in range(size_b):
                    val[b] += u[i] * _sigma(code, scale * (A[a, i] + Bt[i, b]) + c[i])
        s0 = 0.0
        c0 = 0.0
        s1 = 0.0
        c1 = 0.0
        s3 = 0.0
        c3 = 0.0
        correct = 0
        for b in range(size_b):
            v = val[b] + u0
            if store:
                V[a, b] = v
            ip = par[a & b]
            nt = 1.0 - 2.0 * v
            s0, c0 = _neumaier(s0, c0, nt if ip == 0 else -nt)
            d = v - ip
            s1, c1 = _neumaier(s1, c1, d * d)
            s3, c3 = _neumaier(s3, c3, nt * nt)
            if (v >= 0.5) == (ip == 1):
                correct += 1
        stats[a, 0] = s0 + c0
        stats[a, 1] = s1 + c1
        stats[a, 2] = correct
        stats[a, 3] = s3 + c3


@njit(cache=True, nogil=True)
def _loss_rows(A, Bt, c, u, u0, code, Y, rows_loss, a_lo, a_hi):
    """rows_loss[a] = sum_b (N(a, b) - Y[a, b])² (compensated, Neumaier) for a_lo <= a < a_hi:
    the loss of :func:`_train_pass` without the backward pass, the same operations in the same
    order (so the same bits).  The final float64 loss of a float32 training run uses it, so a
    default run compiles no float64 training kernel."""
    w = A.shape[1]
    size_b = Bt.shape[1]
    val = np.empty(size_b)
    Ac = np.empty(w)
    for a in range(a_lo, a_hi):
        for i in range(w):
            Ac[i] = A[a, i] + c[i]
        _row_values(Ac, Bt, u, code, 1.0, val)
        sl = 0.0
        cl = 0.0
        for b in range(size_b):
            r = val[b] + u0 - Y[a, b]
            sl, cl = _neumaier(sl, cl, r * r)
        rows_loss[a] = sl + cl


def _train_pass(A, B, Bt, c, u, u0, code, Y, n_blocks, Qa, Qb, Su, rows_loss, total):
    """One full-batch forward + backward pass of the MSE over all pairs (a, b), product form.

    With z_i(a, b) = A[a, i] + c[i] + B[b, i] (``Bt`` = B transposed, contiguous) and
    g(a, b) = 2 (N(a, b) - Y[a, b]) / total (total = #pairs of the whole epoch; the rows of A, Y
    may be one slice of them):
    Qa[a, i] = sum_b g σ'(z_i), Qb[blk, b, i] = sum_{a in blk} g σ'(z_i),
    Su[blk, i] = sum_{a in blk, b} g σ(z_i), rows_loss[a] = (sum_b (N - Y)² compensated
    (Neumaier), sum_b g).  Qb must be zero on entry.

    Rows are processed in tiles of TILE.  Forward: per row, neurons outer and b inner (the
    b loop has no reduction, so it vectorises without fastmath; each N(a, b) is summed over i
    in order).  Backward: b outer, tile rows, then neurons innermost, so the i loop has no
    reduction either: it updates the rows Qa[a], Qb[blk, b] and su elementwise (σ' as a select,
    vectorised; measured in benchmarks/bench_reduction.py R4).  Blocks write only their own
    rows of Qa and their own Qb[blk], Su[blk]: results never depend on scheduling.  The blocks
    run on Python threads (:func:`circuits.utils._threads.run_ranges`, the serial GIL-free
    kernel :func:`_train_blocks` per block), which compiles faster than a ``prange`` loop.
    """
    from circuits.utils._threads import run_ranges, work_threads

    args = (A, B, Bt, c, u, np.float64(u0), np.int64(code), Y, np.int64(n_blocks), Qa, Qb, Su,
            rows_loss, np.float64(total))
    bounds = [(blk, blk + 1) for blk in range(int(n_blocks))]
    run_ranges(lambda lo, hi: _train_blocks(*args, lo, hi), bounds, work_threads(len(bounds)))


@njit(cache=True, nogil=True)
def _train_blocks(A, B, Bt, c, u, u0, code, Y, n_blocks, Qa, Qb, Su, rows_loss, total,
                  blk_lo, blk_hi):
    """The blocks ``blk_lo <= blk < blk_hi`` of :func:`_train_pass` (serial)."""
    TILE = 16
    size_a = A.shape[0]
    w = A.shape[1]
    size_b = Bt.shape[1]
    per_block = (size_a + n_blocks - 1) // n_blocks
    for blk in range(blk_lo, blk_hi):
        val = np.empty(size_b)
        g = np.empty((TILE, size_b))
        Ac = np.empty((TILE, w))
        su = np.zeros(w)
        qbb = Qb[blk]
        lo = blk * per_block
        hi = min(size_a, lo + per_block)
        for t0 in range(lo, hi, TILE):
            t1 = min(hi, t0 + TILE)
            for a in range(t0, t1):
                t = a - t0
                for i in range(w):
                    Ac[t, i] = A[a, i] + c[i]
                    Qa[a, i] = 0.0
                _row_values(Ac[t], Bt, u, code, 1.0, val)
                sl = 0.0
                cl = 0.0
                sg = 0.0
                for b in range(size_b):
                    r = val[b] + u0 - Y[a, b]
                    sl, cl = _neumaier(sl, cl, r * r)
                    g[t, b] = 2.0 * r / total
                    sg += g[t, b]
                rows_loss[a, 0] = sl + cl
                rows_loss[a, 1] = sg
            for b in range(size_b):
                brow = B[b]
                qb = qbb[b]
                for a in range(t0, t1):
                    gab = g[a - t0, b]
                    at = Ac[a - t0]
                    qa = Qa[a]
                    if code == 0:
                        for i in range(w):
                            z = at[i] + brow[i]
                            q = gab if z > 0.0 else 0.0
                            qa[i] += q
                            qb[i] += q
                            su[i] += q * z
                    else:
                        for i in range(w):
                            z = at[i] + brow[i]
                            q = gab * _dsigma(code, z)
                            qa[i] += q
                            qb[i] += q
                            su[i] += gab * _sigma(code, z)
        for i in range(w):
            Su[blk, i] = su[i]


@njit(cache=True, nogil=True)
def _train_pairs(A, B, c, u, u0, code, ia, ib, y, Qa, Qb, Su, out):
    """Mini-batch pass over the pairs (ia[p], ib[p]) with targets y[p]; same outputs as
    :func:`_train_pass` (no blocks) with g = 2 (N - y) / batch; out = (sum r², sum g)."""
    w = A.shape[1]
    nb = ia.shape[0]
    sl = 0.0
    cl = 0.0
    sg = 0.0
    for p in range(nb):
        a = ia[p]
        b = ib[p]
        val = 0.0
        for i in range(w):
            val += u[i] * _sigma(code, A[a, i] + B[b, i] + c[i])
        val += u0
        r = val - y[p]
        sl, cl = _neumaier(sl, cl, r * r)
        gp = 2.0 * r / nb
        sg += gp
        for i in range(w):
            z = A[a, i] + B[b, i] + c[i]
            q = gp * _dsigma(code, z)
            Qa[a, i] += q
            Qb[b, i] += q
            Su[i] += gp * _sigma(code, z)
    out[0] = sl + cl
    out[1] = sg
