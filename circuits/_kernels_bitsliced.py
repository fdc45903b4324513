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

LB = 11             # lane bits: 2048 points per plane
NW = 32             # 64-bit words per plane (2^LB / 64); a compile-time constant: the plane loops
                    # have 32 iterations, enough for LLVM's loop vectoriser (SIMD, AVX-512 here)
LANES = 1 << LB
ONES = np.uint64(0xFFFFFFFFFFFFFFFF)
MAX_K = 62          # bit-sliced sums must stay below 2^62 (the builder refuses larger)

# columns of the int64 tables built by :func:`build`
G_LAYER, G_T0, G_T1, G_K, G_Q0, G_Q1 = range(6)    # groups: layer, terms [t0, t1), K, gates [q0, q1)


@njit(cache=True, nogil=True, inline="always")
def _ctz(x):
    """Number of trailing zero bits of a nonzero uint64."""
    return _popcount((x & (~x + np.uint64(1))) - np.uint64(1))


@njit(cache=True, nogil=True, inline="always")
def _parity_word(z):
    """The word whose bit a (a < 64) is parity(a & z): lane planes of IP and PARITY."""
    w = np.uint64(0)
    for a in range(64):
        if _popcount(a & z) & 1:
            w |= np.uint64(1) << np.uint64(a)
    return w


@njit(cache=True, nogil=True)
def _layer1_masks(W1, lo, mlen, moff, L1, total):
    """The mask table of layer 1: the NW words at moff[j] + i * NW are {a : s_j(a) >= lo_j + i}.

    First the plane {a : s_j(a) = lo_j + i} gets lane a set for i = s_j(a) - lo_j, then a suffix
    OR from the top index down turns "equal" into "at least" (cost 2^LB + mlen_j * NW per gate).
    """
    masks = np.zeros(total, dtype=np.uint64)
    g1 = W1.shape[0]
    s = np.empty(LANES, dtype=np.int64)
    for j in range(g1):
        s[0] = 0
        top = 0
        for a in range(1, LANES):          # s[a] = s[a - 2^top] + w_top: one add per lane
            if a >= (2 << top):
                top += 1
            s[a] = s[a - (1 << top)] + (W1[j, top] if top < L1 else 0)
        base = moff[j]
        for a in range(LANES):
            masks[base + (s[a] - lo[j]) * NW + (a >> 6)] |= np.uint64(1) << np.uint64(a & 63)
        for i in range(mlen[j] - 2, -1, -1):
            o = base + i * NW
            for q in range(NW):
                masks[o + q] |= masks[o + NW + q]
    return masks


@njit(cache=True, nogil=True, inline="always")
def _copy(dst, od, src, os, flip):
    """dst plane at od = src plane at os xor flip (flip: 0 or all ones)."""
    od = np.uint64(od)      # unsigned indices: no negative-index wraparound, so the loop vectorises
    os = np.uint64(os)
    for q in range(NW):
        u = np.uint64(q)
        dst[od + u] = src[os + u] ^ flip


@njit(cache=True, nogil=True, inline="always")
def _half(buf, oa, oc, src, o1, f1):
    """Half adder: (A, carry) <- (A xor x, A and x), x = src plane at o1 xor f1."""
    oa = np.uint64(oa)
    oc = np.uint64(oc)
    o1 = np.uint64(o1)
    for q in range(NW):
        u = np.uint64(q)
        a = buf[oa + u]
        x = src[o1 + u] ^ f1
        buf[oa + u] = a ^ x
        buf[oc + u] = a & x


@njit(cache=True, nogil=True, inline="always")
def _full(buf, oa, oc, src, o1, f1, o2, f2):
    """Full adder: (A, carry) <- (A xor x xor y, majority(A, x, y)) with x, y planes of src."""
    oa = np.uint64(oa)
    oc = np.uint64(oc)
    o1 = np.uint64(o1)
    o2 = np.uint64(o2)
    for q in range(NW):
        v = np.uint64(q)
        a = buf[oa + v]
        x = src[o1 + v] ^ f1
        y = src[o2 + v] ^ f2
        u = a ^ x
        buf[oa + v] = u ^ y
        buf[oc + v] = (a & x) | (u & y)


@njit(cache=True, nogil=True, inline="always")
def _flip(terms, t):
    return ONES if terms[t, 1] else np.uint64(0)


@njit(cache=True, nogil=True)
def _upper_layers(groups, terms, gates, masks, moffs, buf, lay):
    """Layers 2 .. depth (module docstring, point 2); returns the word offset in ``buf`` of the
    output plane.

    ``buf`` is one flat scratch array; ``lay = [A, S, carries, cap, planes, half]`` gives the
    word offsets of the column accumulator A, the K bit planes S of a sum, two carry lists of
    ``cap`` words each, and two areas of ``half`` words for the gate planes of alternate layers.
    Layer-2 inputs are the layer-1 masks at word offsets ``moffs`` in ``masks``; the planes of
    layer l >= 3 come from the area the previous layer wrote.  Inputs of a column are consumed
    two at a time by a full adder into A (one carry into the next column's list), a single one
    by a half adder; the first one is copied into A.
    """
    oA = lay[0]
    oS = lay[1]
    oC = lay[2]
    cap = lay[3]
    oZ = lay[4]
    half = lay[5]
    dst = oZ
    for g in range(groups.shape[0]):
        layer = groups[g, G_LAYER]
        dst = oZ + (layer & 1) * half
        src = oZ + half - (dst - oZ)
        t = groups[g, G_T0]
        t1 = groups[g, G_T1]
        K = groups[g, G_K]
        cur = oC
        cur_end = oC
        for b in range(K):
            nxt0 = oC + cap - (cur - oC)
            nxt = nxt0
            have = False
            # the column's terms
            if t < t1 and terms[t, 2] == b:
                if layer == 2:
                    _copy(buf, oA, masks, moffs[terms[t, 0]], _flip(terms, t))
                else:
                    _copy(buf, oA, buf, src + terms[t, 0] * NW, _flip(terms, t))
                have = True
                t += 1
            while t + 1 < t1 and terms[t + 1, 2] == b:
                if layer == 2:
                    _full(buf, oA, nxt, masks, moffs[terms[t, 0]], _flip(terms, t),
                          moffs[terms[t + 1, 0]], _flip(terms, t + 1))
                else:
                    _full(buf, oA, nxt, buf, src + terms[t, 0] * NW, _flip(terms, t),
                          src + terms[t + 1, 0] * NW, _flip(terms, t + 1))
                nxt += NW
                t += 2
            if t < t1 and terms[t, 2] == b:
                if layer == 2:
                    _half(buf, oA, nxt, masks, moffs[terms[t, 0]], _flip(terms, t))
                else:
                    _half(buf, oA, nxt, buf, src + terms[t, 0] * NW, _flip(terms, t))
                nxt += NW
                t += 1
            # the carries of the column below
            r = cur
            if not have and r < cur_end:
                _copy(buf, oA, buf, r, np.uint64(0))
                have = True
                r += NW
            while r + NW < cur_end:
                _full(buf, oA, nxt, buf, r, np.uint64(0), r + NW, np.uint64(0))
                nxt += NW
                r += 2 * NW
            if r < cur_end:
                _half(buf, oA, nxt, buf, r, np.uint64(0))
                nxt += NW
            if have:
                _copy(buf, oS + b * NW, buf, oA, np.uint64(0))
            else:
                for q in range(NW):
                    buf[np.uint64(oS + b * NW + q)] = 0
            cur = nxt0
            cur_end = nxt
        for e in range(groups[g, G_Q0], groups[g, G_Q1]):
            tp = gates[e, 1]
            o = np.uint64(dst + gates[e, 0] * NW)
            if tp < 0:
                for q in range(NW):
                    buf[o + np.uint64(q)] = 0
                continue
            for q in range(NW):
                buf[o + np.uint64(q)] = ONES
            for b in range(K):
                ob = np.uint64(oS + b * NW)
                if (tp >> b) & 1:
                    for q in range(NW):
                        v = np.uint64(q)
                        buf[o + v] &= buf[ob + v]
                else:
                    for q in range(NW):
                        v = np.uint64(q)
                        buf[o + v] |= buf[ob + v]
    return dst


@njit(cache=True, nogil=True)
def _range_word(w, q, lo, hi):
    """Word q of a plane restricted to the lanes in [lo, hi)."""
    q_lo = q * 64
    if hi <= q_lo or lo >= q_lo + 64:
        return np.uint64(0)
    if lo > q_lo:
        w &= ONES << np.uint64(lo - q_lo)
    if hi < q_lo + 64:
        w &= ONES >> np.uint64(q_lo + 64 - hi)
    return w


@njit(cache=True, nogil=True)
def _bs_block(masks, l1, WhT, groups, terms, gates, sizes, geom, params, table, out, h_lo, h_hi):
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
    for i in range(2, sizes.shape[0]):
        width = max(width, sizes[i])
    cap = 4
    kmax = 1
    for g in range(groups.shape[0]):
        cap = max(cap, groups[g, G_T1] - groups[g, G_T0] + groups[g, G_K] + 4)
        kmax = max(kmax, groups[g, G_K])
    lay = np.empty(6, dtype=np.int64)
    lay[0] = 0                                  # A
    lay[1] = NW                                 # S
    lay[2] = lay[1] + kmax * NW                 # carries
    lay[3] = cap * NW
    lay[4] = lay[2] + 2 * cap * NW              # gate planes of layers >= 2
    lay[5] = width * NW
    buf = np.zeros(lay[4] + 2 * lay[5], dtype=np.uint64)
    tv = np.zeros(NW, dtype=np.uint64)
    mbase = np.empty(g1, dtype=np.int64)
    mtop = np.empty(g1, dtype=np.int64)
    idx = np.empty(g1, dtype=np.int64)
    moffs = np.empty(g1, dtype=np.int64)
    for j in range(g1):
        mbase[j] = l1[j, 0]
        mtop[j] = l1[j, 1] - 1
        idx[j] = l1[j, 2]
    for i in range(H):
        if (h_lo >> i) & 1:
            for j in range(g1):
                idx[j] -= WhT[i, j]
    n_ip = params[0]
    ip_fast = kind == KIND_IP and n_ip >= LB
    ip_sh = n_ip - LB
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
            moffs[j] = mbase[j] + min(max(idx[j], 0), mtop[j]) * NW
        if groups.shape[0] == 0:
            _copy(buf, 0, masks, moffs[0], np.uint64(0))
            oo = 0
        else:
            oo = _upper_layers(groups, terms, gates, masks, moffs, buf, lay)
        base = h << LB
        lo = max(start - base, 0)
        hi = min(stop - base, LANES)
        if kind < 0:
            off = base - start
            for a in range(lo, hi):
                out[off + a] = np.uint8((buf[oo + (a >> 6)] >> np.uint64(a & 63)) & np.uint64(1))
            continue
        if kind == KIND_CONST:
            fill = ONES if params[0] != 0 else np.uint64(0)
            for q in range(NW):
                tv[q] = fill
        elif ip_fast:
            # lane a = (word q, bit r): parity(a & y_low) = parity(r & y_low) ^ parity(q & (y_low >> 6))
            y_low = (h >> ip_sh) & (LANES - 1)
            wlo = _parity_word(y_low & 63)
            hb = _popcount((h & ((np.int64(1) << ip_sh) - 1)) & (h >> n_ip)) & 1
            for q in range(NW):
                tv[q] = wlo ^ (ONES if (_popcount(q & (y_low >> 6)) + hb) & 1 else np.uint64(0))
        elif kind == KIND_PARITY:
            wlo = _parity_word(63)
            hb = _popcount(h) & 1
            for q in range(NW):
                tv[q] = wlo ^ (ONES if (_popcount(q) + hb) & 1 else np.uint64(0))
        else:
            for q in range(NW):
                tv[q] = 0
            for a in range(lo, hi):
                if _target_bit(base + a, kind, params, table):
                    tv[a >> 6] |= np.uint64(1) << np.uint64(a & 63)
        full = lo == 0 and hi == LANES
        d = np.int64(0)
        for q in range(NW):
            w = buf[oo + q] ^ tv[q]
            if not full:
                w = _range_word(w, q, lo, hi)
            d += _popcount(w)
        if d > 0:
            c += d
            if f < 0:
                for q in range(NW):
                    w = buf[oo + q] ^ tv[q]
                    if not full:
                        w = _range_word(w, q, lo, hi)
                    if w != 0:
                        f = base + q * 64 + _ctz(w)
                        break
    return c, f


@njit(cache=True, nogil=True, parallel=True)
def _bs_run(masks, l1, WhT, groups, terms, gates, sizes, geom, params, table, out):
    """Circuit over the cube indices [start, stop) = geom[0:2], 2^LB points per high value h.

    ``geom[2]`` is the target kind (< 0: truth-table mode, outputs written to ``out[k - start]``).
    Blocks are contiguous runs of h; iteration b of the ``prange`` writes only slot b and its
    own range of ``out``, so the result does not depend on scheduling.  Returns per-block
    ``(counts, first)``.  Memory: the mask table and per-block scratch planes; nothing grows
    with 2^N besides ``out``.
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
        cf = _bs_block(masks, l1, WhT, groups, terms, gates, sizes, geom, params, table, out,
                       h0 + b * nh // nb, h0 + (b + 1) * nh // nb)
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
