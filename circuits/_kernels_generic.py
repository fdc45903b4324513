"""One compiled bit-sliced kernel for every depth-2 circuit of small weights (private;
``kernel="generic"``).

The compiled kernel of ``circuits._bitsliced_codegen`` is fast because its carry-save sums stay
in vector registers, but it is straight-line code for one circuit, compiled once per circuit
(about a second; a cache load of 0.3 s in a fresh process).  For a depth-2 circuit (layer-1
gates, then one output gate) the same register-resident sum needs no per-circuit code: the
output gate's sum is one binary counter that walks the weight columns.  The kernel here is
compiled once per machine (numba's cache, a fixed signature) and reads the circuit as data:

* ``inp``: the layer-1 planes (indices into ``moffs``, as in ``_kernels_fused._fused_block``)
  of the output gate's adder inputs, column by column: plane z'_i appears in column b when bit b
  of |v_i| is set (``_bitsliced_plan.netlist``).  Each column is padded with the all-zero plane
  to a multiple of 4 planes; ``cstart[b]`` is where column b starts, ``cstart[K]`` the end.
* ``spec = [T', K, nh]``: the output gate fires iff S' >= T' (``_kernels_bitsliced`` module
  docstring, item 2; 0 < T' < 2^K), K columns, and nh high counter bits (below).

Exactness.  S' = sum_b 2^b C_b with C_b the number of column-b planes set in a lane.  Put
R_0 = C_0 and R_b = floor(R_{b-1} / 2) + C_b; then bit b of S' is R_b mod 2 (induction: S' mod
2^(b+1) = (S' mod 2^b) + 2^b (R_b mod 2), because sum_{b' <= b} 2^b' C_b' = (S' mod 2^b) +
2^b R_b exactly).  The kernel keeps, per lane, R_b in binary in the vector variables ones, twos,
fours, eights, h0 .. h7 (bit 0 .. 11) and adds column b's planes to it with Harley-Seal
carry-save steps: a full adder maps three planes of weight 2^k to a sum of weight 2^k and a
carry of weight 2^(k+1) with x + y + z = s + 2c in every lane; a 16-plane block adds its
sixteen planes to (ones, twos, fours, eights) with fifteen full adders, which leave the counter
binary plus one plane of weight 16, rippled into h0, h1, ... with half adders (x + y = s + 2c);
a 4-plane block likewise with three full adders and half adders from fours up.  After column b
the kernel reads S'_b = ones, updates the comparison, and shifts the counter down one bit
(ones <- twos, ..., h7 <- 0): that is floor(R_b / 2).  Every intermediate count is at most the
final R_b of its column, and the builder (:func:`generic_data`) computes, in Python ints, the
largest R_b any lane can reach (all planes set) and refuses the kernel unless it is < 2^12; nh
is the number of high bits that bound needs, so a carry rippled beyond h_{nh-1} is zero and
dropping it is exact.  Padding planes are the all-zero plane (they add 0).  The comparison is
the interpreted kernel's: r_{-1} = all ones, r_b = S'_b & r_{b-1} if bit b of T' is 1, else
S'_b | r_{b-1}; r_{K-1} = [S' >= T'] (ties fire).  Layer 1, the targets, the lane range and
the first counterexample (bisection over ``rm``) are those of ``_fused_block``.
"""

import threading

import numba
import numpy as np
from numba.core import types

from circuits import _bitsliced_plan as _bplan
from circuits._jit import compiled_once, njit
from circuits._kernels_fused import _RO_I64_1, _RO_I64_2, _RO_U8, _RO_U64
from circuits._kernels_planes import (LB, NW, ONES, _bisect_start, _bisect_step, _bs_scratch,
                                      _bs_suboffsets, _bs_substart, _bs_target)
from circuits._simd import VW, vand, vcarry, vload, vor, vpop, vsplat, vsum3, vxor

__all__ = ["MAX_COUNTER_BITS", "generic_data", "generic_block", "loaded", "padded_inputs"]

MAX_COUNTER_BITS = 12       # ones, twos, fours, eights and h0 .. h7
_PAD = 4                    # columns padded to a multiple of this many planes


def padded_inputs(circuit):
    """Adder inputs the generic kernel runs per word (columns padded), or None if the circuit
    is not of its shape (depth 2, one output gate)."""
    layers = circuit.layers
    if len(layers) != 2 or layers[1].n_gates != 1:
        return None
    row = [int(v) for v in layers[1].weights[0].tolist()]
    tot = sum(abs(v) for v in row)
    K = max(1, tot.bit_length())
    counts = [sum(1 for v in row if (abs(v) >> b) & 1) for b in range(K)]
    return sum(-(-n // _PAD) * _PAD for n in counts)


def generic_data(circuit, g1):
    """``(inp, cstart, spec)`` of a depth-2 circuit for :func:`generic_block`, or the reason
    (a string) it does not apply.  ``g1``: the zero plane's index in ``moffs`` (the number of
    layer-1 planes).  Python ints throughout (module docstring)."""
    layers = circuit.layers
    if len(layers) != 2 or layers[1].n_gates != 1:
        return "not a depth-2 circuit with one output gate"
    _, jobs, _ = _bplan.netlist(circuit)
    (members, K, cols, tps), = jobs[0]
    tp = tps[0]
    if tp <= 0:
        return "the output gate is constant"
    inp, cstart = [], []
    r, top = 0, 0
    for b in range(K):
        cstart.append(len(inp))
        planes = [x[1] for x in cols[b]]
        r = r // 2 + len(planes)            # the largest R_b (every plane set)
        top = max(top, r)
        inp += planes + [g1] * (-len(planes) % _PAD)
    cstart.append(len(inp))
    bits = max(1, top.bit_length())
    if bits > MAX_COUNTER_BITS:
        return (f"the output gate's column counts reach {top} >= 2^{MAX_COUNTER_BITS} "
                f"(too many hidden gates for the generic kernel's counter)")
    spec = np.array([tp, K, max(0, bits - 4)], dtype=np.int64)
    out = []
    for a in (np.array(inp, dtype=np.int64), np.array(cstart, dtype=np.int64), spec):
        a = np.ascontiguousarray(a)
        a.setflags(write=False)
        out.append(a)
    return tuple(out)


@njit(cache=True, nogil=True, inline="always")
def _csa(a, b, c):
    """Full adder on vectors: (sum, carry) with a + b + c = sum + 2 carry in every lane."""
    s = vsum3(a, b, c)
    return s, vcarry(s, b, c)


@njit(cache=True, nogil=True, inline="always")
def _ld(masks, offs, i, row, w):
    """The vector of adder input ``i`` (sub-plane row ``row``, word ``w`` of its mask)."""
    return vload(masks, np.uint64(offs[row + i]) + w)


@njit(cache=True, nogil=True)
def _ripple(c, nh, h0, h1, h2, h3, h4, h5, h6, h7):
    """Add the plane ``c`` (weight 16) to the high counter bits h0 .. h_{nh-1} with half
    adders; a carry out of h_{nh-1} is zero (module docstring) and is dropped."""
    if nh > 0:
        t = vand(h0, c)
        h0 = vxor(h0, c)
        c = t
        if nh > 1:
            t = vand(h1, c)
            h1 = vxor(h1, c)
            c = t
            if nh > 2:
                t = vand(h2, c)
                h2 = vxor(h2, c)
                c = t
                if nh > 3:
                    t = vand(h3, c)
                    h3 = vxor(h3, c)
                    c = t
                    if nh > 4:
                        t = vand(h4, c)
                        h4 = vxor(h4, c)
                        c = t
                        if nh > 5:
                            t = vand(h5, c)
                            h5 = vxor(h5, c)
                            c = t
                            if nh > 6:
                                t = vand(h6, c)
                                h6 = vxor(h6, c)
                                c = t
                                if nh > 7:
                                    h7 = vxor(h7, c)
    return h0, h1, h2, h3, h4, h5, h6, h7


@njit(cache=True, nogil=True)
def _plane(masks, offs, tv, rm, cstart, spec, mw):
    """Lanes of the plane where the circuit's output differs from ``tv``, within ``rm``
    (``offs[s n + i]``: word offset of adder input i's mask on sub-plane s, n = cstart[K])."""
    tp = spec[0]
    K = spec[1]
    nh = spec[2]
    n_in = cstart[K]
    ONE = vsplat(ONES)
    ZERO = vsplat(np.uint64(0))
    d = np.int64(0)
    for q in range(0, NW, VW):
        row = np.uint64((q // mw) * n_in)
        w = np.uint64(q % mw)
        ones = ZERO
        twos = ZERO
        fours = ZERO
        eights = ZERO
        h0 = ZERO
        h1 = ZERO
        h2 = ZERO
        h3 = ZERO
        h4 = ZERO
        h5 = ZERO
        h6 = ZERO
        h7 = ZERO
        r = ONE
        for b in range(K):
            i = np.uint64(cstart[b])
            end = np.uint64(cstart[b + 1])
            while i + np.uint64(16) <= end:
                ones, twa = _csa(ones, _ld(masks, offs, i, row, w),
                                 _ld(masks, offs, i + np.uint64(1), row, w))
                ones, twb = _csa(ones, _ld(masks, offs, i + np.uint64(2), row, w),
                                 _ld(masks, offs, i + np.uint64(3), row, w))
                twos, foa = _csa(twos, twa, twb)
                ones, twa = _csa(ones, _ld(masks, offs, i + np.uint64(4), row, w),
                                 _ld(masks, offs, i + np.uint64(5), row, w))
                ones, twb = _csa(ones, _ld(masks, offs, i + np.uint64(6), row, w),
                                 _ld(masks, offs, i + np.uint64(7), row, w))
                twos, fob = _csa(twos, twa, twb)
                fours, eia = _csa(fours, foa, fob)
                ones, twa = _csa(ones, _ld(masks, offs, i + np.uint64(8), row, w),
                                 _ld(masks, offs, i + np.uint64(9), row, w))
                ones, twb = _csa(ones, _ld(masks, offs, i + np.uint64(10), row, w),
                                 _ld(masks, offs, i + np.uint64(11), row, w))
                twos, foa = _csa(twos, twa, twb)
                ones, twa = _csa(ones, _ld(masks, offs, i + np.uint64(12), row, w),
                                 _ld(masks, offs, i + np.uint64(13), row, w))
                ones, twb = _csa(ones, _ld(masks, offs, i + np.uint64(14), row, w),
                                 _ld(masks, offs, i + np.uint64(15), row, w))
                twos, fob = _csa(twos, twa, twb)
                fours, eib = _csa(fours, foa, fob)
                eights, c = _csa(eights, eia, eib)
                h0, h1, h2, h3, h4, h5, h6, h7 = _ripple(c, nh, h0, h1, h2, h3, h4, h5, h6, h7)
                i += np.uint64(16)
            if i + np.uint64(8) <= end:
                ones, twa = _csa(ones, _ld(masks, offs, i, row, w),
                                 _ld(masks, offs, i + np.uint64(1), row, w))
                ones, twb = _csa(ones, _ld(masks, offs, i + np.uint64(2), row, w),
                                 _ld(masks, offs, i + np.uint64(3), row, w))
                twos, foa = _csa(twos, twa, twb)
                ones, twa = _csa(ones, _ld(masks, offs, i + np.uint64(4), row, w),
                                 _ld(masks, offs, i + np.uint64(5), row, w))
                ones, twb = _csa(ones, _ld(masks, offs, i + np.uint64(6), row, w),
                                 _ld(masks, offs, i + np.uint64(7), row, w))
                twos, fob = _csa(twos, twa, twb)
                fours, c = _csa(fours, foa, fob)
                t = vand(eights, c)
                eights = vxor(eights, c)
                c = t
                h0, h1, h2, h3, h4, h5, h6, h7 = _ripple(c, nh, h0, h1, h2, h3, h4, h5, h6, h7)
                i += np.uint64(8)
            while i < end:
                ones, twa = _csa(ones, _ld(masks, offs, i, row, w),
                                 _ld(masks, offs, i + np.uint64(1), row, w))
                ones, twb = _csa(ones, _ld(masks, offs, i + np.uint64(2), row, w),
                                 _ld(masks, offs, i + np.uint64(3), row, w))
                twos, c = _csa(twos, twa, twb)
                t = vand(fours, c)
                fours = vxor(fours, c)
                c = t
                t = vand(eights, c)
                eights = vxor(eights, c)
                c = t
                h0, h1, h2, h3, h4, h5, h6, h7 = _ripple(c, nh, h0, h1, h2, h3, h4, h5, h6, h7)
                i += np.uint64(4)
            if (tp >> b) & 1:
                r = vand(ones, r)
            else:
                r = vor(ones, r)
            ones = twos
            twos = fours
            fours = eights
            eights = h0
            h0 = h1
            h1 = h2
            h2 = h3
            h3 = h4
            h4 = h5
            h5 = h6
            h6 = h7
            h7 = ZERO
        v = np.uint64(q)
        d += vpop(vand(vxor(r, vload(tv, v)), vload(rm, v)))
    return d


@njit(cache=True, nogil=True)
def _generic_block(masks, l1, WhT, sub, geom, params, table, inp, cstart, spec, h_lo, h_hi):
    """``_kernels_fused._fused_block`` with :func:`_plane` (the circuit as data) in place
    of a per-circuit compiled function: (count, first) over the planes h_lo <= h < h_hi,
    restricted to the indices [geom[0], geom[1])."""
    mbase, mtop, idx, moffs, g, mw = _bs_substart(l1, WhT, sub, h_lo)
    n_sub = sub.shape[0]
    n_in = inp.shape[0]
    offs = np.empty(n_sub * n_in, dtype=np.int64)
    pw, pq, tv, rm, keep, st = _bs_scratch()
    c = np.int64(0)
    f = np.int64(-1)
    for h in range(h_lo, h_hi):
        _bs_suboffsets(h, h_lo, WhT, sub, mbase, mtop, idx, moffs, g, mw)
        for s in range(n_sub):
            row = moffs[s * g:s * g + g]
            out = offs[s * n_in:s * n_in + n_in]
            for i in range(n_in):
                out[i] = row[inp[i]]
        _bs_target(h, geom, params, table, pw, pq, tv, rm, st)
        d = _plane(masks, offs, tv, rm, cstart, spec, mw)
        c += d
        if d > 0 and f < 0:
            lo, hi = _bisect_start(rm, keep)
            while hi - lo > 1:
                lo, hi = _bisect_step(rm, keep, lo, hi, _plane(masks, offs, tv, rm, cstart, spec,
                                                                mw) > 0)
            f = (h << LB) + lo
    return c, f


_SIG = (_RO_U64, _RO_I64_2, _RO_I64_2, _RO_I64_2, types.int64[::1], _RO_I64_1, _RO_U8,
        _RO_I64_1, _RO_I64_1, _RO_I64_1, types.int64, types.int64)
_LOCK = threading.Lock()


def loaded() -> bool:
    """Whether this process has loaded (or compiled) the generic kernel."""
    return bool(not numba.config.DISABLE_JIT and _generic_block.signatures)


def generic_block():
    """:func:`_generic_block`, compiled for one fixed signature (from numba's cache after the
    first time on a machine) and closed to others.  Thread-safe."""
    return compiled_once(_generic_block, _SIG, _LOCK)
