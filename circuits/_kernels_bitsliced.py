"""Private bit-sliced numba kernels for layered threshold circuits with small weights.

Wrappers in ``circuits.simulate`` validate and choose the kernel (``simulate.kernel_plan``);
``circuits._bitsliced_plan.build`` turns a circuit into flat integer arrays (all exactness
bookkeeping in Python ints) and the kernels only loop.  Never ``fastmath``: every decision is
exact integer or
bitwise arithmetic.

Layout: ``circuits._kernels_planes`` (a *plane* holds one bit for each of the 4096 *lanes* a
of the points k = (h << LB) + a of one *high-block value* h; NW = 64 words).

Exactness (the argument the kernels rely on)
--------------------------------------------
0. **Normalised gates.**  A threshold t above the largest reachable sum P = sum of the positive
   weights never fires, one at or below the smallest M = sum of the negative weights always
   fires, so the builder replaces t by min(max(t, M), P + 1): the same gate, and every number
   below has magnitude <= sum |w| + 1.  The *complement* of a gate [w . z >= t] is the gate
   [(-w) . z >= 1 - t] (integers: w . z < t iff -w . z >= 1 - t); it is used wherever a
   layer-2 gate reads a layer-1 gate with a negative weight, so adders never negate planes.
1. **Layer 1 by masks.**  Let L1 = min(N, LB) and, for gate j with weights w_j and threshold
   t_j, s_j(a) = sum_{i < L1} w_ji bit_i(a) (the low partial sum) and H_j(h) = sum_{i >= L1}
   w_ji bit_i(k) (the high partial sum; bit i of k for i >= LB is bit i - LB of h; when
   N <= LB there is one h = 0 and H_j = 0).  Then w_j . z(k) = s_j(a) + H_j(h) exactly, so gate j
   fires at k iff s_j(a) >= c with c = t_j - H_j(h).  s_j(a) lies in [lo_j, hi_j] (lo_j = sum of
   the negative low weights, hi_j = sum of the positive ones).  The builder stores, for every
   integer c' = lo_j + i, i = 0 .. hi_j - lo_j + 1, the plane M_j[i] = {a : s_j(a) >= c'}; M_j[0]
   is all lanes and M_j[hi_j - lo_j + 1] is empty.  For any integer c, {a : s_j(a) >= c} equals
   M_j[clamp(c - lo_j, 0, hi_j - lo_j + 1)]: below lo_j every lane fires, above hi_j none does,
   in between it is the stored mask.  So the plane of gate j is one table look-up.  The kernel
   keeps idx_j = (t_j - lo_j) - H_j(h) in int64 and updates it as h advances (only the bits of
   h ^ (h - 1) change); every intermediate value has magnitude <= |t_j| + sum |w_j| <=
   2 sum |w_j| + 1, and the builder refuses the kernel unless that is < 2^62.
2. **Layers >= 2 by bit-sliced adders.**  For a gate with weights v on the previous layer's
   0/1 outputs z and threshold T, put neg = sum_{v_i < 0} |v_i|, tot = sum |v_i| and
   z'_i = z_i if v_i > 0 else 1 - z_i (a complement plane, item 0 or a NOT op).  Then
   S' = sum_i |v_i| z'_i = v . z + neg, so the gate fires iff S' >= T' := T + neg, and
   0 <= S' <= tot < 2^K with K = max(1, bitlen(tot)).  If T' <= 0 the gate is constant 1 (T'
   encoded as 0), if T' >= 2^K it is constant 0 (encoded -1); both are decided in Python ints.
   S' is computed per lane in binary: write each |v_i| in binary, so S' = sum_b 2^b (number of
   planes z'_i with bit b of |v_i| set).  Column b (from 0 up) holds those planes plus the
   carries sent to it by columns b - 3 .. b - 1.  A 7:3 compressor maps its accumulator A and
   six planes x_1..x_6 of weight 2^b to (s, c1, c2) with A + sum x = s + 2 c1 + 4 c2 in every
   lane: three full adders (XOR = sum bit, majority = carry bit) give A + sum x = s + 2 (k1 +
   k2 + k3), and a fourth gives k1 + k2 + k3 = c1 + 2 c2.  s is the column's new accumulator,
   c1 goes to column b + 1, c2 to column b + 2; missing inputs are an all-zero plane.  A 15:4
   compressor does the same for A and fourteen planes with eleven full adders (``_c154``:
   A + sum x = s + 2 c1 + 4 c2 + 8 c3, the sum <= 15 fits), c3 going to column b + 3; it
   is used for groups of at least ``C154_MIN`` planes (fewer loads and stores per plane).  When
   column b has consumed all its planes its accumulator is bit b of S' (no planes: 0), since
   each step preserves the weighted sum and higher columns only receive weight >= 2^(b+1).
   Carries into columns >= K are zero because S' < 2^K, so they are dropped.  Finally S' >= T'
   is decided bitwise from the least significant bit up: r_{-1} = 1, r_b = S'_b | r_{b-1} if
   bit b of T' is 0 and S'_b & r_{b-1} if it is 1, so r_b = [S' mod 2^(b+1) >= T' mod 2^(b+1)]
   and r_{K-1} = [S' >= T'] (a tie gives 1, as the gate rule requires).  Gates of one layer
   with identical weight rows share S'.  The builder emits this as a fixed program (it does not
   depend on h); every scalar in it is a Python int < 2^62 before it becomes int64.
3. **Targets** are planes too: constant, PARITY and IP_n with n >= 6.  Word q of the plane of h
   holds the points k = 64 K6 + r, r < 64, K6 = (h << (LB - 6)) + q.  For IP (x = low n bits,
   y = the next n bits) with n >= 6, r is x's low 6 bits and the rest depends on K6 only:
   y = (K6 >> (n - 6)) mod 2^n, x_hi = K6 mod 2^(n-6), IP = parity(r & y) xor
   parity(x_hi & (y >> 6)); the first term is word y mod 64 of a 64-entry table.  PARITY is
   parity(r) xor parity(K6).  Any other target (and IP with n < 6) is evaluated lane by lane
   with ``_kernels._target_bit``.  Disagreements are popcounts of (output xor target) restricted
   to the lanes in [start, stop); the first one is the lowest set bit of the first nonzero word
   of the first such h, the smallest index because k increases with h and then with the lane.

Performance notes: numba does not run LLVM's SLP vectoriser, so every plane operation is a loop
of NW = 64 iterations over words, which the loop vectoriser turns into SIMD code once it has
checked at run time that the stored plane block does not overlap the loaded planes.  All stores
of one op go to one block of consecutive planes, so that check stays within LLVM's limit; array
indices are unsigned (no negative-index wraparound).  Measured on the AVX-512 benchmark machine
(benchmarks/bench_bitsliced.py): a plane op is bound by its vector ALU work
and loads, not by the mask table's cache misses (pinning every gate to one L1-resident mask
changed W1 / W3 by ~5 %, W2 by ~18 %), nor by per-op overhead (LB = 13 was no faster, LB = 11
slower).  What helped: 15:4 compressors (fewer loads and stores per plane), full adders in a
form LLVM maps to three vector ops without register copies, and a carry instead of the zero
plane as a column's first accumulator.  What did not: NUMBA_SLP_VECTORIZE
(the loops are already vectorised), non-adjacent-form weights (7 = 8 - 1: fewer planes, but the
compressor padding absorbed it), mask/buffer mixed compressors (-4 % .. +2 %), software
prefetch of the next block's masks (slower), and a second thread on the loaded shared box.
What did help, by a different route: compiling each circuit's adder tree into one loop, so the
sums stay in registers (``circuits._bitsliced_codegen``, driven by
``circuits._kernels_fused._fused_block``).
"""

import numba
import numpy as np
from numba.core import types
from numba.core.extending import intrinsic

from circuits._jit import njit
from circuits._kernels import _popcount
from circuits._kernels_planes import (LANES, LB, NW, ONES, _bs_offsets, _bs_scratch, _bs_start,
                                      _bs_target)


@intrinsic
def _ctpop_llvm(typingctx, x):
    """LLVM's ctpop on a uint64 (one VPOPCNTQ lane where the CPU has it)."""
    if x != types.uint64:
        return None

    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])
    return types.uint64(types.uint64), codegen


if numba.config.DISABLE_JIT:    # pure-Python twin run: no LLVM intrinsics
    _ctpop = _popcount
else:
    @njit(cache=True, nogil=True, inline="always")
    def _ctpop(x):
        """Number of set bits of a uint64 (exact; the loops using it vectorise)."""
        return np.int64(_ctpop_llvm(x))

MAX_K = 62          # bit-sliced sums and layer-1 index arithmetic must stay below 2^62

# program op codes (rows of ``ops``: [op, dst, a, s1, ..., s14], offsets in words)
OP_C73_MASK = 0     # block dst..dst+3 planes <- 7:3(buf[a], mask planes of layer-1 gates s1..s6)
OP_C73_BUF = 1      # same with s1..s6 word offsets in buf
OP_CMP = 2          # buf[dst] <- [S' >= T'], T' = a (-1: constant 0), K = s1, S'_b = buf[sidx[s2 + b]]
OP_NOT = 3          # buf[dst] <- not buf[a]
OP_MASK = 4         # buf[dst] <- mask plane of layer-1 gate a (depth-1 circuits)
OP_C154_MASK = 5    # block dst..dst+4 planes <- 15:4(buf[a], mask planes of gates s1..s14)
OP_C154_BUF = 6     # same with s1..s14 word offsets in buf
N_COLS = 17         # columns of ``ops``


@njit(cache=True, nogil=True, inline="always")
def _ctz(x):
    """Number of trailing zero bits of a nonzero uint64."""
    return _popcount((x & (~x + np.uint64(1))) - np.uint64(1))


@njit(cache=True, nogil=True, inline="always")
def _fa(x, y, z):
    """Full adder: (x ^ y ^ z, majority) with x + y + z = sum + 2 carry per lane.  The majority
    is written ((x ^ z) & (y ^ z)) ^ z (z where x = z, else y): LLVM then emits three vector
    ops per adder with no register copies (measured 33 vs 44 per 15:4 step)."""
    return x ^ y ^ z, ((x ^ z) & (y ^ z)) ^ z


@njit(cache=True, nogil=True, inline="always")
def _c73(buf, dst, a, src, o1, o2, o3, o4, o5, o6):
    """7:3 compressor: buf planes dst, dst + NW, dst + 2 NW <- (s, c1, c2) with
    A + x1 + ... + x6 = s + 2 c1 + 4 c2 per lane (A = buf plane at a, x_i = src planes at o_i)."""
    dst = np.uint64(dst)    # unsigned indices: no negative-index wraparound, so the loop vectorises
    a = np.uint64(a)
    o1 = np.uint64(o1)
    o2 = np.uint64(o2)
    o3 = np.uint64(o3)
    o4 = np.uint64(o4)
    o5 = np.uint64(o5)
    o6 = np.uint64(o6)
    w1 = np.uint64(NW)
    w2 = np.uint64(2 * NW)
    for q in range(NW):
        v = np.uint64(q)
        x1 = src[o1 + v]
        x2 = src[o2 + v]
        x3 = src[o3 + v]
        x4 = src[o4 + v]
        x5 = src[o5 + v]
        x6 = src[o6 + v]
        s1, k1 = _fa(x1, x2, x3)
        s2, k2 = _fa(x4, x5, x6)
        r0, k3 = _fa(buf[a + v], s1, s2)
        buf[dst + v] = r0
        r1, r2 = _fa(k1, k2, k3)
        buf[dst + w1 + v] = r1
        buf[dst + w2 + v] = r2


@njit(cache=True, nogil=True, inline="always")
def _c154(buf, dst, a, src, o):
    """15:4 compressor: buf planes dst + i NW (i < 4) <- (s, c1, c2, c3) with
    A + x1 + ... + x14 = s + 2 c1 + 4 c2 + 8 c3 per lane (A = buf plane at a, x_i = src plane at
    o[i - 1]).  Eleven full adders: five on the inputs, two on their sums (bit 0), three on the
    seven carries of weight 2 (bit 1) and one on the three of weight 4 (bits 2 and 3); every
    step preserves the weighted sum, and 15 <= 15 fits four bits."""
    dst = np.uint64(dst)
    a = np.uint64(a)
    o1 = np.uint64(o[0])
    o2 = np.uint64(o[1])
    o3 = np.uint64(o[2])
    o4 = np.uint64(o[3])
    o5 = np.uint64(o[4])
    o6 = np.uint64(o[5])
    o7 = np.uint64(o[6])
    o8 = np.uint64(o[7])
    o9 = np.uint64(o[8])
    o10 = np.uint64(o[9])
    o11 = np.uint64(o[10])
    o12 = np.uint64(o[11])
    o13 = np.uint64(o[12])
    o14 = np.uint64(o[13])
    w1 = np.uint64(NW)
    w2 = np.uint64(2 * NW)
    w3 = np.uint64(3 * NW)
    for q in range(NW):
        v = np.uint64(q)
        s1, c1 = _fa(src[o1 + v], src[o2 + v], src[o3 + v])
        s2, c2 = _fa(src[o4 + v], src[o5 + v], src[o6 + v])
        s3, c3 = _fa(src[o7 + v], src[o8 + v], src[o9 + v])
        s4, c4 = _fa(src[o10 + v], src[o11 + v], src[o12 + v])
        s5, c5 = _fa(src[o13 + v], src[o14 + v], buf[a + v])
        t1, d1 = _fa(s1, s2, s3)
        r0, d2 = _fa(s4, s5, t1)
        e1, f1 = _fa(c1, c2, c3)
        e2, f2 = _fa(c4, c5, d1)
        r1, f3 = _fa(d2, e1, e2)
        r2, r3 = _fa(f1, f2, f3)
        buf[dst + v] = r0
        buf[dst + w1 + v] = r1
        buf[dst + w2 + v] = r2
        buf[dst + w3 + v] = r3


@njit(cache=True, nogil=True)
def _program(ops, sidx, masks, moffs, buf, o14):
    """Run the circuit program (layers >= 2; module docstring, item 2) on the planes of one h
    (``o14``: scratch for the 14 source offsets of a 15:4 compressor)."""
    for p in range(ops.shape[0]):
        op = ops[p, 0]
        dst = ops[p, 1]
        if op == OP_C73_MASK:
            _c73(buf, dst, ops[p, 2], masks, moffs[ops[p, 3]], moffs[ops[p, 4]], moffs[ops[p, 5]],
                 moffs[ops[p, 6]], moffs[ops[p, 7]], moffs[ops[p, 8]])
        elif op == OP_C73_BUF:
            _c73(buf, dst, ops[p, 2], buf, ops[p, 3], ops[p, 4], ops[p, 5], ops[p, 6], ops[p, 7],
                 ops[p, 8])
        elif op == OP_C154_MASK:
            for i in range(14):
                o14[i] = moffs[ops[p, 3 + i]]
            _c154(buf, dst, ops[p, 2], masks, o14)
        elif op == OP_C154_BUF:
            for i in range(14):
                o14[i] = ops[p, 3 + i]
            _c154(buf, dst, ops[p, 2], buf, o14)
        elif op == OP_CMP:
            o = np.uint64(dst)
            tp = ops[p, 2]
            if tp < 0:
                for q in range(NW):
                    buf[o + np.uint64(q)] = 0
                continue
            for q in range(NW):
                buf[o + np.uint64(q)] = ONES
            for b in range(ops[p, 3]):
                ob = np.uint64(sidx[ops[p, 4] + b])
                if (tp >> b) & 1:
                    for q in range(NW):
                        v = np.uint64(q)
                        buf[o + v] &= buf[ob + v]
                else:
                    for q in range(NW):
                        v = np.uint64(q)
                        buf[o + v] |= buf[ob + v]
        elif op == OP_NOT:
            o = np.uint64(dst)
            s = np.uint64(ops[p, 2])
            for q in range(NW):
                v = np.uint64(q)
                buf[o + v] = ~buf[s + v]
        else:   # OP_MASK
            o = np.uint64(dst)
            s = np.uint64(moffs[ops[p, 2]])
            for q in range(NW):
                v = np.uint64(q)
                buf[o + v] = masks[s + v]


@njit(cache=True, nogil=True)
def _bs_account(h, buf, oo, geom, params, table, out, pw, pq, tv, rm, st, find_first):
    """Use the output plane of h (``buf[oo:oo + NW]``): truth-table mode (geom[2] < 0) writes
    it to ``out``; otherwise returns (number of lanes in [start, stop) where it differs from the
    target, the smallest such index or -1; searched only if ``find_first``, i.e. until the
    block has one).  ``tv``, ``rm``, ``st``: scratch for :func:`_bs_target`."""
    base = h << LB
    if geom[2] < 0:
        start = geom[0]
        lo = max(start - base, 0)
        hi = min(geom[1] - base, LANES)
        off = base - start
        for a in range(lo, hi):
            out[off + a] = np.uint8((buf[oo + (a >> 6)] >> np.uint64(a & 63)) & np.uint64(1))
        return np.int64(0), np.int64(-1)
    _bs_target(h, geom, params, table, pw, pq, tv, rm, st)
    d = np.int64(0)
    for q in range(NW):
        d += _ctpop((buf[oo + q] ^ tv[q]) & rm[q])
    f = np.int64(-1)
    if d > 0 and find_first:
        for q in range(NW):
            w = (buf[oo + q] ^ tv[q]) & rm[q]
            if w != 0:
                f = base + q * 64 + _ctz(w)
                break
    return d, f


@njit(cache=True, nogil=True)
def _bs_block(masks, l1, WhT, ops, sidx, prog, geom, params, table, out, h_lo, h_hi):
    """The circuit on the planes of the high-block values h_lo <= h < h_hi, restricted to the cube
    indices [start, stop) = geom[0:2]; returns (count, first) of this block.

    ``geom[2]`` is the target kind (< 0: truth-table mode, outputs written to ``out[k - start]``,
    each block to its own range).  Otherwise the number of points where the circuit differs from
    the target ``(kind, params, table)`` and the smallest such index (-1 if none).  Callers run
    blocks on threads (the kernel releases the GIL); memory is the mask table plus one small
    scratch buffer per block, nothing grows with 2^N besides ``out``.

    ``l1[j] = [moff_j, mlen_j, t_j - lo_j]`` for the layer-1 gates (complements included) and
    one last row for the zero plane: gate j's masks start at word moff_j, there are mlen_j of
    them, and its plane at h is mask clamp((t_j - lo_j) - H_j(h), 0, mlen_j - 1).
    ``prog = [buffer words, output plane offset]``.  The compiled kernels of
    ``circuits._bitsliced_codegen`` run the same loop with the program replaced by straight-line
    code.
    """
    mbase, mtop, idx, moffs = _bs_start(l1, WhT, h_lo)
    pw, pq, tv, rm, _, st = _bs_scratch()
    buf = np.zeros(prog[0], dtype=np.uint64)
    o14 = np.empty(14, dtype=np.int64)
    c = np.int64(0)
    f = np.int64(-1)
    for h in range(h_lo, h_hi):
        _bs_offsets(h, h_lo, WhT, mbase, mtop, idx, moffs)
        _program(ops, sidx, masks, moffs, buf, o14)
        d, fh = _bs_account(h, buf, prog[1], geom, params, table, out, pw, pq, tv, rm, st,
                            f < 0)
        c += d
        if f < 0:
            f = fh
    return c, f
