"""The driver of the per-circuit compiled kernels (private numba kernel; ``kernel="fused"``).

The compiled kernels of ``circuits._bitsliced_codegen`` are one generated function per circuit,
``plane(masks, moffs, tv, rm)`` = number of lanes where the circuit's output differs from ``tv``,
restricted to ``rm``; each is compiled with the signature ``PLANE_SIG``, so the driver here is
compiled once (it receives the function as a first-class function).  Layout and exactness:
``circuits._kernels_planes`` and the ``_kernels_bitsliced`` module docstring.
"""

import threading

import numpy as np
from numba.core import types

from circuits._jit import compiled_once, njit
from circuits._kernels_planes import (LB, _bisect_start, _bisect_step, _bs_scratch,
                                      _bs_suboffsets, _bs_substart, _bs_target)

_RO_U64 = types.Array(types.uint64, 1, "C", readonly=True)
_RO_I64_1 = types.Array(types.int64, 1, "C", readonly=True)
_RO_I64_2 = types.Array(types.int64, 2, "C", readonly=True)
_RO_U8 = types.Array(types.uint8, 1, "C", readonly=True)
PLANE_SIG = types.int64(_RO_U64, types.int64[::1], types.uint64[::1], types.uint64[::1])
_FUSED_SIG = (types.FunctionType(PLANE_SIG), _RO_U64, _RO_I64_2, _RO_I64_2, _RO_I64_2,
              types.int64[::1], _RO_I64_1, _RO_U8, types.int64, types.int64)


@njit(cache=True, nogil=True)
def _fused_block(plane, masks, l1, WhT, sub, geom, params, table, h_lo, h_hi):
    """``_kernels_bitsliced._bs_block`` (count mode) with the circuit's compiled ``plane``
    function in place of the interpreted program.

    The masks may cover fewer lanes than a plane: with S = ``sub.shape[0]`` (a power of two
    dividing NW) a mask has mw = NW / S words (the low log2(64 mw) lane bits) and a plane is S
    sub-planes of mw words; the lane bits above select sub-plane s, whose weights add
    ``sub[s, j]`` to gate j's high partial sum: the same table look-up (item 1 of the
    ``_kernels_bitsliced`` module docstring) with c = t_j - H_j(h) - sub[s, j].  ``moffs``
    holds one row of offsets per sub-plane.  Smaller masks make a smaller table (W2: 6.4 MiB of 4096-lane masks, 0.6 MiB of
    512-lane ones, which stay in L2; ``circuits.dispatch`` chooses).

    The first lane of a plane with a count is found by bisection on ``rm``: the plane restricted
    to the lanes [lo, mid) (the rest of ``rm`` zeroed; restored afterwards) has a count or not,
    until one lane is left (``_kernels_planes._bisect_start``)."""
    mbase, mtop, idx, moffs, g, mw = _bs_substart(l1, WhT, sub, h_lo)
    pw, pq, tv, rm, keep, st = _bs_scratch()
    c = np.int64(0)
    f = np.int64(-1)
    for h in range(h_lo, h_hi):
        _bs_suboffsets(h, h_lo, WhT, sub, mbase, mtop, idx, moffs, g, mw)
        _bs_target(h, geom, params, table, pw, pq, tv, rm, st)
        d = plane(masks, moffs, tv, rm)
        c += d
        if d > 0 and f < 0:
            lo, hi = _bisect_start(rm, keep)
            while hi - lo > 1:
                lo, hi = _bisect_step(rm, keep, lo, hi, plane(masks, moffs, tv, rm) > 0)
            f = (h << LB) + lo
    return c, f


_FUSED_LOCK = threading.Lock()


def fused_block():
    """:func:`_fused_block`, compiled for ``_FUSED_SIG`` (from numba's cache after the first
    time) and closed to other signatures, so every generated plane function converts to the
    one first-class function type instead of compiling a new driver.  Thread-safe (worker
    threads may ask at the same time)."""
    return compiled_once(_fused_block, _FUSED_SIG, _FUSED_LOCK)
