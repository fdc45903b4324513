"""Private bit-sliced numba kernels for layered threshold circuits with small weights.

Wrappers in ``circuits.simulate`` validate and choose the kernel (``simulate.kernel_plan``);
the plan builder :func:`build` turns a circuit into flat integer arrays and the kernels only loop.
Never ``fastmath``: every decision is exact integer or bitwise arithmetic.

Layout
------
A point is k = (h << LB) + a with a in [0, 2^LB) the *lane* (LB = 9: 512 lanes, NW = 8 words of
64 bits) and h the *high-block value*.  A *plane* is NW uint64 words holding one bit per lane
(lane a is bit a % 64 of word a // 64).  For each h the kernel turns the circuit into planes:
the output plane holds the circuit's value at the 512 points (h << LB) + a.

Exactness (the argument the kernels rely on)
--------------------------------------------
1. **Layer 1 by masks.**  Let L1 = min(N, LB) and, for gate j with weights w_j and threshold
   t_j, s_j(a) = sum_{i < L1} w_ji bit_i(a) (the low partial sum) and H_j(h) = sum_{i >= L1}
   w_ji bit_i(k) (the high partial sum; bit i of k for i >= L1 is bit i - LB of h when N > LB,
   and H_j = 0, h = 0 when N <= LB).  Then w_j . z(k) = s_j(a) + H_j(h) exactly, so gate j fires
   at k iff s_j(a) >= c with c = t_j - H_j(h).  s_j(a) lies in [lo_j, hi_j] (lo_j = sum of the
   negative low weights, hi_j = sum of the positive ones).  The builder stores, for every
   integer c' = lo_j + i, i = 0 .. hi_j - lo_j + 1, the plane M_j[i] = {a : s_j(a) >= c'}; M_j[0]
   is all lanes and M_j[hi_j - lo_j + 1] is empty.  For any integer c the set {a : s_j(a) >= c}
   equals M_j[clamp(c - lo_j, 0, hi_j - lo_j + 1)]: below lo_j every lane fires, above hi_j none
   does, in between it is the stored mask.  So the plane of gate j is one table look-up.  The
   kernel keeps idx_j = (t_j - lo_j) - H_j(h) in int64 and updates it as h advances (only the
   bits of h ^ (h - 1) change); |t_j| + |lo_j| + |H_j| <= the gate's preactivation bound B
   <= 2^63 - 1 (enforced when the circuit is built), so no int64 step overflows.
2. **Layers >= 2 by bit-sliced adders.**  For a gate with weights v (on the previous layer's
   0/1 outputs z) and threshold T, put neg = sum_{v_i < 0} |v_i|, tot = sum |v_i| and
   z'_i = z_i if v_i > 0 else 1 - z_i.  Then S' = sum_i |v_i| z'_i = v . z + neg, so the gate
   fires iff S' >= T' := T + neg, and 0 <= S' <= tot < 2^K with K = max(1, bitlen(tot)).
   If T' <= 0 the gate is constant 1 (encoded T' = 0), if T' >= 2^K it is constant 0 (encoded
   -1); both are decided in Python ints by the builder.  S' is computed per lane in binary:
   write each |v_i| in binary, so S' = sum_b 2^b (number of planes z'_i with bit b of |v_i|
   set).  Column b (from 0 up) holds those planes plus the carries of column b - 1; a full
   adder maps three planes of weight 2^b to one of weight 2^b (their XOR) and one of weight
   2^(b+1) (their majority), a half adder two planes to their XOR and AND; each preserves the
   per-lane weighted sum.  When one plane is left it is bit b of S' (none left: bit b is 0).
   Carries out of column K - 1 are zero because S' < 2^K.  Finally S' >= T' is decided
   bitwise from the least significant bit up: r_{-1} = 1, r_b = S'_b | r_{b-1} if bit b of
   T' is 0 and S'_b & r_{b-1} if it is 1, so r_b = [S' mod 2^(b+1) >= T' mod 2^(b+1)] and
   r_{K-1} = [S' >= T'] (a tie gives 1, as the gate rule requires).  Gates of one layer with
   identical weight rows share S' (they differ only in T').  The scalars (T', bits of |v_i|)
   are Python ints turned into int64 only after they are known to be < 2^K <= 2^62.
3. **Targets** are planes too: constant, PARITY (parity(a) xor parity(h)) and IP_n with n >= LB
   (x = low n bits, y = high n bits: x's low LB bits are the lane a, so
   IP = parity(a & y_low) xor parity(x_high & y_high) with y_low = (h >> (n - LB)) & (2^LB - 1),
   x_high = h & (2^(n-LB) - 1), y_high = h >> n, and parity(a & y_low) is a precomputed plane
   per y_low); any other target is evaluated lane by lane with ``_kernels._target_bit``.
   Disagreements are popcounts of (output xor target) restricted to the lanes in [start, stop);
   the first one is the lowest set bit of the first nonzero word of the first such h, the
   smallest index because h and then the lane increase with k.
"""

import numpy as np
from numba import njit, prange

from circuits._kernels import KIND_CONST, KIND_IP, KIND_PARITY, _popcount, _target_bit

LB = 9              # lane bits: 512 points per plane
NW = 8              # 64-bit words per plane (2^LB / 64); a compile-time constant for the SIMD loops
LANES = 1 << LB
ONES = np.uint64(0xFFFFFFFFFFFFFFFF)
MAX_K = 62          # bit-sliced sums must stay below 2^62 (the builder refuses larger)

# columns of the int64 tables built by :func:`build`
G_LAYER, G_T0, G_T1, G_K, G_Q0, G_Q1 = range(6)    # groups: layer, terms [t0, t1), K, gates [q0, q1)


@njit(cache=True, nogil=True, inline="always")
def _ctz(x):
    """Number of trailing zero bits of a nonzero uint64."""
    return _popcount((x & (~x + np.uint64(1))) - np.uint64(1))


@njit(cache=True, nogil=True)
def _layer1_masks(W1, lo, mlen, moff, L1, total):
    """The mask table of layer 1: plane moff[j] // NW + i is {a : s_j(a) >= lo_j + i}.

    Lane a is set in the masks i = 0 .. s_j(a) - lo_j of gate j (cost sum_j sum_a (s_j(a) - lo_j)).
    """
    masks = np.zeros(total, dtype=np.uint64)
    g1 = W1.shape[0]
    for j in range(g1):
        for a in range(LANES):
            s = np.int64(0)
            for i in range(L1):
                if (a >> i) & 1:
                    s += W1[j, i]
            top = s - lo[j]
            word = a >> 6
            bit = np.uint64(1) << np.uint64(a & 63)
            base = moff[j] + word
            for i in range(top + 1):
                masks[base + i * NW] |= bit
    return masks


@njit(cache=True, nogil=True)
def _lane_planes(kind, n):
    """Target planes that depend only on the lane: IP (row y_low) or PARITY (one row)."""
    if kind == KIND_IP:
        tab = np.zeros((LANES, NW), dtype=np.uint64)
        for y in range(LANES):
            for a in range(LANES):
                if _popcount(a & y) & 1:
                    tab[y, a >> 6] |= np.uint64(1) << np.uint64(a & 63)
        return tab
    tab = np.zeros((1, NW), dtype=np.uint64)
    if kind == KIND_PARITY:
        for a in range(LANES):
            if _popcount(a) & 1:
                tab[0, a >> 6] |= np.uint64(1) << np.uint64(a & 63)
    return tab


@njit(cache=True, nogil=True)
def _upper_layers(groups, terms, gates, sizes, za, zb, cur, nxt, S):
    """Layers 2 .. depth on the planes of layer 1 in ``za``; returns the array holding the output
    plane in row 0 (``za`` or ``zb``).  See the module docstring, point 2."""
    src = za
    dst = zb
    layer = 2
    for g in range(groups.shape[0]):
        if groups[g, G_LAYER] != layer:
            src, dst = dst, src
            layer = groups[g, G_LAYER]
        t = groups[g, G_T0]
        t1 = groups[g, G_T1]
        K = groups[g, G_K]
        m = 0
        for b in range(K):
            while t < t1 and terms[t, 2] == b:
                i = terms[t, 0]
                flip = ONES if terms[t, 1] else np.uint64(0)
                for q in range(NW):
                    cur[m, q] = src[i, q] ^ flip
                m += 1
                t += 1
            mn = 0
            while m >= 3:
                for q in range(NW):
                    x = cur[m - 3, q]
                    y = cur[m - 2, q]
                    z = cur[m - 1, q]
                    u = x ^ y
                    cur[m - 3, q] = u ^ z
                    nxt[mn, q] = (x & y) | (u & z)
                m -= 2
                mn += 1
            if m == 2:
                for q in range(NW):
                    x = cur[0, q]
                    y = cur[1, q]
                    cur[0, q] = x ^ y
                    nxt[mn, q] = x & y
                m = 1
                mn += 1
            if m == 1:
                for q in range(NW):
                    S[b, q] = cur[0, q]
            else:
                for q in range(NW):
                    S[b, q] = 0
            cur, nxt = nxt, cur
            m = mn
        for e in range(groups[g, G_Q0], groups[g, G_Q1]):
            gate = gates[e, 0]
            tp = gates[e, 1]
            if tp < 0:
                for q in range(NW):
                    dst[gate, q] = 0
                continue
            for q in range(NW):
                dst[gate, q] = ONES
            for b in range(K):
                if (tp >> b) & 1:
                    for q in range(NW):
                        dst[gate, q] &= S[b, q]
                else:
                    for q in range(NW):
                        dst[gate, q] |= S[b, q]
    if groups.shape[0] == 0:
        return za
    return dst


@njit(cache=True, nogil=True)
def _bs_block(masks, l1, WhT, groups, terms, gates, sizes, geom, params, table, lane_tab, out,
              h_lo, h_hi):
    """High-block values h_lo <= h < h_hi of :func:`_bs_run`; returns (count, first) of the block.

    ``l1[j] = [moff_j, mlen_j, t_j - lo_j]``: gate j's masks start at word moff_j, there are
    mlen_j of them, and its plane at h is mask clamp((t_j - lo_j) - H_j(h), 0, mlen_j - 1).
    """
    start = geom[0]
    stop = geom[1]
    kind = geom[2]
    g1 = sizes[1]
    H = WhT.shape[0]
    width = 1
    for i in range(1, sizes.shape[0]):
        width = max(width, sizes[i])
    cap = 4
    kmax = 1
    for g in range(groups.shape[0]):
        cap = max(cap, groups[g, G_T1] - groups[g, G_T0] + groups[g, G_K] + 4)
        kmax = max(kmax, groups[g, G_K])
    za = np.empty((width, NW), dtype=np.uint64)
    zb = np.empty((width, NW), dtype=np.uint64)
    cur = np.empty((cap, NW), dtype=np.uint64)
    nxt = np.empty((cap, NW), dtype=np.uint64)
    S = np.empty((kmax, NW), dtype=np.uint64)
    tv = np.empty(NW, dtype=np.uint64)
    idx = np.empty(g1, dtype=np.int64)
    for j in range(g1):
        idx[j] = l1[j, 2]
    for i in range(H):
        if (h_lo >> i) & 1:
            for j in range(g1):
                idx[j] -= WhT[i, j]
    ip_fast = kind == KIND_IP and lane_tab.shape[0] == LANES
    n_ip = params[0]
    c = np.int64(0)
    f = np.int64(-1)
    for h in range(h_lo, h_hi):
        if h > h_lo:
            changed = h ^ (h - 1)
            for i in range(H):
                if (changed >> i) & 1:
                    if (h >> i) & 1:
                        for j in range(g1):
                            idx[j] -= WhT[i, j]
                    else:
                        for j in range(g1):
                            idx[j] += WhT[i, j]
        for j in range(g1):
            e = idx[j]
            top = l1[j, 1] - 1
            if e < 0:
                e = 0
            elif e > top:
                e = top
            off = l1[j, 0] + e * NW
            for q in range(NW):
                za[j, q] = masks[off + q]
        o = _upper_layers(groups, terms, gates, sizes, za, zb, cur, nxt, S)
        base = h << LB
        lo = max(start - base, 0)
        hi = min(stop - base, LANES)
        if kind < 0:
            off = base - start
            for a in range(lo, hi):
                out[off + a] = np.uint8((o[0, a >> 6] >> np.uint64(a & 63)) & np.uint64(1))
            continue
        if kind == KIND_CONST:
            fill = ONES if params[0] != 0 else np.uint64(0)
            for q in range(NW):
                tv[q] = fill
        elif ip_fast:
            sh = n_ip - LB
            y_low = (h >> sh) & (LANES - 1)
            hb = _popcount((h & ((np.int64(1) << sh) - 1)) & (h >> n_ip)) & 1
            fill = ONES if hb else np.uint64(0)
            for q in range(NW):
                tv[q] = lane_tab[y_low, q] ^ fill
        elif kind == KIND_PARITY:
            fill = ONES if _popcount(h) & 1 else np.uint64(0)
            for q in range(NW):
                tv[q] = lane_tab[0, q] ^ fill
        else:
            for q in range(NW):
                tv[q] = 0
            for a in range(lo, hi):
                if _target_bit(base + a, kind, params, table):
                    tv[a >> 6] |= np.uint64(1) << np.uint64(a & 63)
        d = np.int64(0)
        for q in range(NW):
            w = o[0, q] ^ tv[q]
            q_lo = q * 64
            if lo > q_lo or hi < q_lo + 64:     # a boundary word: keep lanes in [lo, hi) only
                if hi <= q_lo or lo >= q_lo + 64:
                    w = np.uint64(0)
                else:
                    if lo > q_lo:
                        w &= ONES << np.uint64(lo - q_lo)
                    if hi < q_lo + 64:
                        w &= ONES >> np.uint64(q_lo + 64 - hi)
            if w != 0:
                d += _popcount(w)
                if f < 0:
                    f = base + q_lo + _ctz(w)
        c += d
    return c, f


@njit(cache=True, nogil=True, parallel=True)
def _bs_run(masks, l1, WhT, groups, terms, gates, sizes, geom, params, table, lane_tab, out):
    """Circuit over the cube indices [start, stop) = geom[0:2], 512 points per high value h.

    ``geom[2]`` is the target kind (< 0: truth-table mode, outputs written to ``out[k - start]``).
    Blocks are contiguous runs of h; iteration b of the ``prange`` writes only slot b and its
    own range of ``out``, so the result does not depend on scheduling.  Returns per-block
    ``(counts, first)``.  Memory: the mask table and per-block planes; nothing grows with 2^N
    besides ``out``.
    """
    start = geom[0]
    stop = geom[1]
    h0 = start >> LB
    nh = 0
    if stop > start:
        nh = ((stop - 1) >> LB) + 1 - h0
    nb = min(nh, 64)
    counts = np.zeros(nb, dtype=np.int64)
    first = np.full(nb, -1, dtype=np.int64)
    for b in prange(nb):
        cf = _bs_block(masks, l1, WhT, groups, terms, gates, sizes, geom, params, table, lane_tab,
                       out, h0 + b * nh // nb, h0 + (b + 1) * nh // nb)
        counts[b] = cf[0]
        first[b] = cf[1]
    return counts, first


# ---------------------------------------------------------------------------------------------
# Plan builder (plain Python / numpy; the exactness bookkeeping is done in Python ints).
# ---------------------------------------------------------------------------------------------

class Plan:
    """Flat arrays for :func:`_bs_run` / :func:`_bs_block` (picklable, no numba objects)."""

    __slots__ = ("masks", "l1", "WhT", "groups", "terms", "gates", "sizes", "n_inputs",
                 "mask_bytes", "n_terms", "kmax")

    def __getstate__(self):
        return {k: getattr(self, k) for k in self.__slots__}

    def __setstate__(self, state):
        for k, v in state.items():
            setattr(self, k, v)


def _readonly(a):
    a = np.ascontiguousarray(a)
    a.setflags(write=False)
    return a


def layer1_shape(circuit):
    """(lo, hi) int64 arrays: the range of each layer-1 gate's low partial sum (Python-int exact)."""
    W1 = circuit.layers[0].weights
    L1 = min(circuit.n_inputs, LB)
    low = W1[:, :L1]
    # |entries| <= the layer's preactivation bound <= 2^63 - 1, and so are these sums
    lo = np.array([sum(int(v) for v in row if v < 0) for row in low.tolist()], dtype=np.int64)
    hi = np.array([sum(int(v) for v in row if v > 0) for row in low.tolist()], dtype=np.int64)
    return lo, hi


def upper_program(circuit):
    """(groups, terms, gates, n_terms, kmax) for layers >= 2 (module docstring, point 2).

    Raises ValueError if some gate's sum of |weights| reaches 2^MAX_K.
    """
    groups, terms, gates = [], [], []
    kmax = 1
    for li in range(1, len(circuit.layers)):
        layer = circuit.layers[li]
        rows = layer.weights.tolist()
        thr = layer.thresholds.tolist()
        by_row = {}
        for g, row in enumerate(rows):
            by_row.setdefault(tuple(int(v) for v in row), []).append(g)
        for row, members in by_row.items():
            tot = sum(abs(v) for v in row)
            neg = sum(-v for v in row if v < 0)
            K = max(1, tot.bit_length())
            if K > MAX_K:
                raise ValueError(f"layer {li + 1} has a gate with sum |w| = {tot} >= 2^{MAX_K}")
            kmax = max(kmax, K)
            t0 = len(terms)
            row_terms = []
            for i, v in enumerate(row):
                m = abs(v)
                b = 0
                while m:
                    if m & 1:
                        row_terms.append((b, i, 1 if v < 0 else 0))
                    m >>= 1
                    b += 1
            row_terms.sort()
            terms.extend((i, comp, b) for b, i, comp in row_terms)
            q0 = len(gates)
            for g in members:
                tp = int(thr[g]) + neg
                if tp <= 0:
                    tp = 0              # constant 1
                elif tp >= (1 << K):
                    tp = -1             # constant 0 (S' <= tot < 2^K)
                gates.append((g, tp))
            groups.append((li + 1, t0, len(terms), K, q0, len(gates)))
    g_arr = np.array(groups, dtype=np.int64).reshape(-1, 6)
    t_arr = np.array(terms, dtype=np.int64).reshape(-1, 3)
    q_arr = np.array(gates, dtype=np.int64).reshape(-1, 2)
    return g_arr, t_arr, q_arr, len(terms), kmax


def mask_count(circuit):
    """Number of layer-1 mask planes the plan needs (sum_j hi_j - lo_j + 2), a Python int."""
    lo, hi = layer1_shape(circuit)
    return int(sum(int(b) - int(a) + 2 for a, b in zip(lo.tolist(), hi.tolist())))


def build(circuit):
    """The :class:`Plan` of a layered circuit (the caller has checked it fits the budgets)."""
    N = circuit.n_inputs
    L1 = min(N, LB)
    first = circuit.layers[0]
    W1 = np.ascontiguousarray(first.weights, dtype=np.int64)
    g1 = W1.shape[0]
    lo, hi = layer1_shape(circuit)
    mlen = (hi - lo + 2).astype(np.int64)
    moff = np.zeros(g1, dtype=np.int64)
    if g1 > 1:
        moff[1:] = np.cumsum(mlen[:-1] * NW)
    total = int(mlen.sum()) * NW
    masks = _layer1_masks(W1, lo, mlen, moff, L1, total)
    # t_j - lo_j: |t_j| + |lo_j| <= the gate's preactivation bound <= 2^63 - 1
    cbase = np.array([int(t) - int(a) for t, a in zip(first.thresholds.tolist(), lo.tolist())],
                     dtype=np.int64)
    l1 = np.stack([moff, mlen, cbase], axis=1)
    WhT = np.ascontiguousarray(W1[:, L1:].T) if N > LB else np.zeros((0, g1), dtype=np.int64)
    groups, terms, gates, n_terms, kmax = upper_program(circuit)
    plan = Plan()
    plan.masks = _readonly(masks)
    plan.l1 = _readonly(l1)
    plan.WhT = _readonly(WhT)
    plan.groups = _readonly(groups)
    plan.terms = _readonly(terms)
    plan.gates = _readonly(gates)
    plan.sizes = _readonly(np.array([N] + [layer.n_gates for layer in circuit.layers],
                                    dtype=np.int64))
    plan.n_inputs = N
    plan.mask_bytes = total * 8
    plan.n_terms = n_terms
    plan.kmax = kmax
    return plan


_LANE_TABLES = {}


def lane_table(kind, n_ip):
    """Read-only lane planes of a target kind (cached): IP rows when n >= LB, else parity/none."""
    key = KIND_IP if (kind == KIND_IP and n_ip >= LB) else (KIND_PARITY if kind == KIND_PARITY
                                                             else -1)
    tab = _LANE_TABLES.get(key)
    if tab is None:
        tab = _readonly(_lane_planes(key, 0))
        _LANE_TABLES[key] = tab
    return tab
