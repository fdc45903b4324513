"""Planes of 4096 lanes: the layout, the layer-1 mask table and its look-up, the target planes
(private numba kernels shared by the interpreted bit-sliced kernel ``circuits._kernels_bitsliced``,
the driver of the compiled kernels ``circuits._kernels_fused`` and the generic depth-2 kernel
``circuits._kernels_generic``).

Layout
------
A point is k = (h << LB) + a with a in [0, 2^LB) the *lane* (LB = 12: 4096 lanes) and h the
*high-block value*.  A *plane* is NW = 2^LB / 64 uint64 words holding one bit per lane (lane a
is bit a % 64 of word a // 64).  For each h a kernel computes the circuit's output plane, the
circuit's value at the 4096 points (h << LB) + a, and compares it with the target's plane.

The exactness of the layer-1 look-up and of the target planes is argued in the
``_kernels_bitsliced`` module docstring, items 1 and 3.  Never ``fastmath``.
"""

import numpy as np

from circuits._jit import njit
from circuits._kernels import KIND_CONST, KIND_IP, KIND_PARITY, _popcount, _target_bit

LB = 12             # lane bits: 4096 points per plane (measured: 12 beats 11 by ~1.5x; 10 does
NW = 64             # not vectorise); NW = 2^LB / 64 words per plane, a compile-time constant
LANES = 1 << LB
ONES = np.uint64(0xFFFFFFFFFFFFFFFF)


@njit(cache=True, nogil=True)
def _layer1_masks(W1, lo, mlen, moff, L1, total, mw):
    """The mask table of layer 1 over lanes a < 64 mw: the mw words at moff[j] + i * mw are
    {a : s_j(a) >= lo_j + i}, s_j(a) = sum_{b < L1} W1[j, b] bit_b(a) (mw = NW for the
    interpreted kernel; the compiled one may use masks of fewer lanes:
    ``_kernels_fused._fused_block``).

    First the plane with index s_j(a) - lo_j gets lane a, then a suffix OR from the top index
    down turns "equal" into "at least" (cost 64 mw + mlen_j * mw per gate).  The last mw words
    of the table stay zero: the all-zero plane that pads the compressors.
    """
    masks = np.zeros(total, dtype=np.uint64)
    g1 = W1.shape[0]
    lanes = 64 * mw
    s = np.empty(lanes, dtype=np.int64)
    for j in range(g1):
        s[0] = 0
        top = 0
        for a in range(1, lanes):          # s[a] = s[a - 2^top] + w_top: one add per lane
            if a >= (2 << top):
                top += 1
            s[a] = s[a - (1 << top)] + (W1[j, top] if top < L1 else 0)
        base = moff[j]
        for a in range(lanes):
            masks[base + (s[a] - lo[j]) * mw + (a >> 6)] |= np.uint64(1) << np.uint64(a & 63)
        for i in range(mlen[j] - 2, -1, -1):
            o = base + i * mw
            for q in range(mw):
                masks[o + q] |= masks[o + mw + q]
    return masks


@njit(cache=True, nogil=True)
def _parity_word(z):
    """The word whose bit r (r < 64) is parity(r & z)."""
    w = np.uint64(0)
    for r in range(64):
        if _popcount(r & z) & 1:
            w |= np.uint64(1) << np.uint64(r)
    return w


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
def _bs_start(l1, WhT, h_lo):
    """Layer-1 look-up state at h = h_lo: (mbase, mtop, idx, moffs) (see ``_kernels_bitsliced._bs_block``)."""
    g1 = WhT.shape[1]
    mbase = np.empty(g1, dtype=np.int64)
    mtop = np.empty(g1, dtype=np.int64)
    idx = np.empty(g1, dtype=np.int64)
    moffs = np.empty(g1 + 1, dtype=np.int64)
    moffs[g1] = l1[g1, 0]                       # the zero plane
    for j in range(g1):
        mbase[j] = l1[j, 0]
        mtop[j] = l1[j, 1] - 1
        idx[j] = l1[j, 2]
    for i in range(WhT.shape[0]):
        if (h_lo >> i) & 1:
            for j in range(g1):
                idx[j] -= WhT[i, j]
    return mbase, mtop, idx, moffs


@njit(cache=True, nogil=True, inline="always")
def _bs_advance(h, h_lo, WhT, idx):
    """Advance ``idx`` from h - 1 to h: only the bits of h ^ (h - 1) change (nothing at h_lo)."""
    g1 = WhT.shape[1]
    if h > h_lo:
        changed = h ^ (h - 1)
        for i in range(WhT.shape[0]):
            if (changed >> i) & 1:
                if (h >> i) & 1:
                    for j in range(g1):
                        idx[j] -= WhT[i, j]
                else:
                    for j in range(g1):
                        idx[j] += WhT[i, j]


@njit(cache=True, nogil=True)
def _bs_offsets(h, h_lo, WhT, mbase, mtop, idx, moffs):
    """Advance ``idx`` to h and set ``moffs[j]`` to the word offset of gate j's plane at h
    (``_kernels_bitsliced`` module docstring, item 1)."""
    _bs_advance(h, h_lo, WhT, idx)
    for j in range(WhT.shape[1]):
        moffs[j] = mbase[j] + min(max(idx[j], 0), mtop[j]) * NW


@njit(cache=True, nogil=True)
def _bs_suboffsets(h, h_lo, WhT, sub, mbase, mtop, idx, moffs, g, mw):
    """:func:`_bs_offsets` for masks of mw words: ``moffs[s g + j]`` is the offset of gate j's
    mask on sub-plane s (words s mw .. (s + 1) mw - 1 of the plane of h), whose index is
    idx_j - sub[s, j] (``sub[s, j]``: gate j's partial sum over the lane bits that select the
    sub-plane).  Unsigned indices and row views, so the loop vectorises."""
    _bs_advance(h, h_lo, WhT, idx)
    g1 = np.uint64(WhT.shape[1])
    for s in range(sub.shape[0]):
        row = sub[s]
        out = moffs[s * g:s * g + g]
        for j in range(g1):
            out[j] = mbase[j] + min(max(idx[j] - row[j], 0), mtop[j]) * mw


@njit(cache=True, nogil=True)
def _bs_substart(l1, WhT, sub, h_lo):
    """:func:`_bs_start` for masks of sub-planes (:func:`_bs_suboffsets`): (mbase, mtop, idx,
    moffs, g, mw), ``moffs`` with one row of g offsets per sub-plane (the zero plane's last in
    every row) and mw = NW / ``sub.shape[0]`` words per mask."""
    mbase, mtop, idx, moffs1 = _bs_start(l1, WhT, h_lo)
    n_sub = sub.shape[0]
    g = moffs1.shape[0]
    moffs = np.empty(n_sub * g, dtype=np.int64)
    for s in range(n_sub):
        moffs[s * g + g - 1] = moffs1[g - 1]        # the zero plane
    return mbase, mtop, idx, moffs, g, NW // n_sub


@njit(cache=True, nogil=True)
def _bs_tables():
    """(pw, pq): pw[z] has bit r set iff parity(r & z); pq[z, q] is all ones iff parity(q & z)."""
    pw = np.empty(64, dtype=np.uint64)
    pq = np.empty((64, NW), dtype=np.uint64)
    for z in range(64):
        pw[z] = _parity_word(z)
        for q in range(NW):
            pq[z, q] = ONES if _popcount(q & z) & 1 else np.uint64(0)
    return pw, pq


@njit(cache=True, nogil=True)
def _bs_target(h, geom, params, table, pw, pq, tv, rm, st):
    """Fill ``tv`` with the target's plane at h and ``rm`` with the lanes in [start, stop)
    (geom[0:2]; all ones for a plane inside the range).  ``pw``, ``pq``: :func:`_bs_tables`.
    ``st`` (two int64, zero at the start of a block) records that ``rm`` is all ones and that
    ``tv`` holds the constant target, so those planes are not rewritten for every h."""
    start = geom[0]
    stop = geom[1]
    kind = geom[2]
    base = h << LB
    lo = max(start - base, 0)
    hi = min(stop - base, LANES)
    if lo > 0 or hi < LANES:
        for q in range(NW):
            rm[q] = _range_word(ONES, q, lo, hi)
        st[0] = 0
    elif st[0] == 0:
        for q in range(NW):
            rm[q] = ONES
        st[0] = 1
    n_ip = params[0]
    if kind == KIND_CONST:
        if st[1] == 0:
            fill = ONES if params[0] != 0 else np.uint64(0)
            for q in range(NW):
                tv[q] = fill
            st[1] = 1
    elif kind == KIND_IP and n_ip >= LB:
        # here y = h >> (n - LB) for every word and x_hi = ((h mod 2^(n-LB)) << 6) | q, so
        # word q = pw[y mod 64] ^ parity((h mod 2^(n-LB)) & (y >> 12)) ^ parity(q & (y >> 6))
        y = (h >> (n_ip - LB)) & ((np.int64(1) << n_ip) - 1)
        hb = _popcount((h & ((np.int64(1) << (n_ip - LB)) - 1)) & (y >> LB)) & 1
        wc = pw[y & 63] ^ (ONES if hb else np.uint64(0))
        row = pq[(y >> 6) & 63]
        for q in range(NW):
            tv[q] = wc ^ row[q]
    elif kind == KIND_IP and n_ip >= 6:
        # word q holds k = 64 K6 + r, r < 64, K6 = (h << (LB - 6)) + q; with n >= 6 the
        # lane bits r are x's low 6 bits, so IP = parity(r & y_6) ^ parity(x_hi & (y >> 6))
        ip_mask = (np.int64(1) << n_ip) - 1
        ip_xmask = (np.int64(1) << (n_ip - 6)) - 1
        for q in range(NW):
            k6 = (h << (LB - 6)) + q
            y = (k6 >> (n_ip - 6)) & ip_mask
            x_hi = k6 & ip_xmask
            tv[q] = pw[y & 63] ^ (ONES if _popcount(x_hi & (y >> 6)) & 1 else np.uint64(0))
    elif kind == KIND_PARITY:
        for q in range(NW):
            k6 = (h << (LB - 6)) + q
            tv[q] = pw[63] ^ (ONES if _popcount(k6) & 1 else np.uint64(0))
    else:
        for q in range(NW):
            tv[q] = 0
        for a in range(lo, hi):
            if _target_bit(base + a, kind, params, table):
                tv[a >> 6] |= np.uint64(1) << np.uint64(a & 63)


@njit(cache=True, nogil=True)
def _bs_scratch():
    """Scratch of a block: (pw, pq, tv, rm, keep, st) (:func:`_bs_tables`; the target plane, the
    lane mask and a copy of it, and the state of :func:`_bs_target`)."""
    pw, pq = _bs_tables()
    tv = np.zeros(NW, dtype=np.uint64)
    rm = np.zeros(NW, dtype=np.uint64)
    keep = np.zeros(NW, dtype=np.uint64)
    st = np.zeros(2, dtype=np.int64)
    return pw, pq, tv, rm, keep, st


@njit(cache=True, nogil=True, inline="always")
def _bisect_start(rm, keep):
    """Start the search for the first lane of a plane with a count, by bisection on the lane
    mask ``rm``: ``rm`` is kept in ``keep`` and restricted to the lower half of the lanes;
    returns (lo, hi) = (0, LANES).  While hi - lo > 1 the caller counts with ``rm`` and passes
    whether the count is nonzero to :func:`_bisect_step`; then ``lo`` is the first lane (12
    counts; exact: the count restricted to a set of lanes is the number of its lanes that
    differ) and ``rm`` is restored."""
    for q in range(NW):         # loops, not keep[:] = rm: a slice assignment compiles
        keep[q] = rm[q]         # numba's shape-mismatch message (~2 s of string code)
    return _bisect_narrow(rm, keep, 0, LANES)


@njit(cache=True, nogil=True, inline="always")
def _bisect_step(rm, keep, lo, hi, found):
    """One step of :func:`_bisect_start`'s search: the first lane is in [lo, mid) if ``found``
    (a count on those lanes), else in [mid, hi)."""
    mid = (lo + hi) // 2
    if found:
        hi = mid
    else:
        lo = mid
    return _bisect_narrow(rm, keep, lo, hi)


@njit(cache=True, nogil=True, inline="always")
def _bisect_narrow(rm, keep, lo, hi):
    """``rm`` <- ``keep`` restricted to [lo, (lo + hi) // 2) while hi - lo > 1, else ``keep``
    (restored); returns (lo, hi)."""
    if hi - lo > 1:
        mid = (lo + hi) // 2
        for q in range(NW):
            rm[q] = _range_word(keep[q], q, lo, mid)
    else:
        for q in range(NW):
            rm[q] = keep[q]
    return lo, hi
