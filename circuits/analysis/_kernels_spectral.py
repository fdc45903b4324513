"""Private numba kernels for the Walsh–Hadamard transform and spectral statistics.

Wrappers in :mod:`circuits.analysis.spectral` validate their input, choose the working dtype (after
proving that no intermediate value can overflow) and pick the blocking; these kernels only loop.
Every kernel has a naive pure-Python twin in ``tests/naive_analysis.py``.

Blocking of the in-place transform of a length-2^N array (butterfly passes h = 2^p, p < N):

* ``_fwht_blocks``: the passes p < ``lo`` inside contiguous blocks of 2^lo values (chosen to
  stay resident in L2).
* ``_fwht_strips``: the passes p in [``p0``, ``p0 + k``), for every fixed value of the other
  bits.  The 2^k values that share the other bits lie 2^p0 apart, so strips of ``w`` adjacent
  such groups are copied into a thread-private contiguous buffer of 2^k x w values, transformed
  there with unit-stride inner loops, and written back.

Both take a range of disjoint work items (blocks, strips), are ``nogil``, and are called from
a thread pool by the wrapper, each thread owning a disjoint index range; the result never
depends on the schedule.  (Serial kernels compile several times faster than ``prange`` ones.)
Both use radix-4 steps (two passes per sweep over the data) and a radix-2 step when an odd
number of passes is left.
"""

from __future__ import annotations

import numpy as np

from circuits._jit import njit


@njit(cache=True, nogil=True)
def _passes_strided(v, base, n_bits, stride, width):
    """Passes over the bits of a 2^n_bits x width row-major block starting at ``base``.

    Row r occupies ``v[base + r*stride : base + r*stride + width]``; the transform acts along r.
    Rows are taken as slices so that the unit-stride inner loops vectorise (no negative-index
    wraparound on the loop counter).
    """
    rows = 1 << n_bits
    p = 0
    while p + 1 < n_bits:                      # radix-4: passes p and p + 1 together
        h = 1 << p
        hs = h * stride
        for r0 in range(0, rows, 4 * h):
            for r in range(r0, r0 + h):
                i0 = base + r * stride
                ra = v[i0:i0 + width]
                rb = v[i0 + hs:i0 + hs + width]
                rx = v[i0 + 2 * hs:i0 + 2 * hs + width]
                ry = v[i0 + 3 * hs:i0 + 3 * hs + width]
                for c in range(width):
                    a = ra[c]
                    b = rb[c]
                    x = rx[c]
                    y = ry[c]
                    s0 = a + b
                    d0 = a - b
                    s1 = x + y
                    d1 = x - y
                    ra[c] = s0 + s1
                    rb[c] = d0 + d1
                    rx[c] = s0 - s1
                    ry[c] = d0 - d1
        p += 2
    if p < n_bits:                             # one radix-2 pass left
        h = 1 << p
        hs = h * stride
        for r0 in range(0, rows, 2 * h):
            for r in range(r0, r0 + h):
                i0 = base + r * stride
                ra = v[i0:i0 + width]
                rb = v[i0 + hs:i0 + hs + width]
                for c in range(width):
                    a = ra[c]
                    b = rb[c]
                    ra[c] = a + b
                    rb[c] = a - b


@njit(cache=True, nogil=True)
def _fwht8(v, base):
    """Exact 8-point transform of v[base:base+8] (passes h = 1, 2, 4) in registers."""
    a0 = v[base]
    a1 = v[base + 1]
    a2 = v[base + 2]
    a3 = v[base + 3]
    a4 = v[base + 4]
    a5 = v[base + 5]
    a6 = v[base + 6]
    a7 = v[base + 7]
    b0 = a0 + a1
    b1 = a0 - a1
    b2 = a2 + a3
    b3 = a2 - a3
    b4 = a4 + a5
    b5 = a4 - a5
    b6 = a6 + a7
    b7 = a6 - a7
    c0 = b0 + b2
    c1 = b1 + b3
    c2 = b0 - b2
    c3 = b1 - b3
    c4 = b4 + b6
    c5 = b5 + b7
    c6 = b4 - b6
    c7 = b5 - b7
    v[base] = c0 + c4
    v[base + 1] = c1 + c5
    v[base + 2] = c2 + c6
    v[base + 3] = c3 + c7
    v[base + 4] = c0 - c4
    v[base + 5] = c1 - c5
    v[base + 6] = c2 - c6
    v[base + 7] = c3 - c7


@njit(cache=True, nogil=True)
def _fwht8_run(v, base, n_groups):
    """8-point transforms of the n_groups consecutive groups of 8 starting at ``base``.

    Written as a loop over groups on a slice (non-negative indices), which LLVM vectorises
    across groups with interleaved loads and permutes for 32-bit integers (about 3x faster
    than :func:`_fwht8` there); for float64 it picks scatters, so the wrapper keeps
    :func:`_fwht8` for floats.
    """
    w = v[base:base + 8 * n_groups]
    for j in range(n_groups):
        i = 8 * j
        a0 = w[i]
        a1 = w[i + 1]
        a2 = w[i + 2]
        a3 = w[i + 3]
        a4 = w[i + 4]
        a5 = w[i + 5]
        a6 = w[i + 6]
        a7 = w[i + 7]
        b0 = a0 + a1
        b1 = a0 - a1
        b2 = a2 + a3
        b3 = a2 - a3
        b4 = a4 + a5
        b5 = a4 - a5
        b6 = a6 + a7
        b7 = a6 - a7
        c0 = b0 + b2
        c1 = b1 + b3
        c2 = b0 - b2
        c3 = b1 - b3
        c4 = b4 + b6
        c5 = b5 + b7
        c6 = b4 - b6
        c7 = b5 - b7
        w[i] = c0 + c4
        w[i + 1] = c1 + c5
        w[i + 2] = c2 + c6
        w[i + 3] = c3 + c7
        w[i + 4] = c0 - c4
        w[i + 5] = c1 - c5
        w[i + 6] = c2 - c6
        w[i + 7] = c3 - c7


@njit(cache=True, nogil=True)
def _block_transform(v, base, lo, grouped):
    """All passes p < lo on the contiguous block v[base : base + 2^lo].

    Passes 0-2 run as exact 8-point transforms (``grouped``: via :func:`_fwht8_run`, else one
    :func:`_fwht8` call per group); passes p >= 3 act on contiguous runs of 2^p values (rows of
    width 2^p, stride 2^p), two passes per sweep.
    """
    size = 1 << lo
    if lo < 3:
        _passes_strided(v, base, lo, 1, 1)
        return
    if grouped:
        _fwht8_run(v, base, size >> 3)
    else:
        for g in range(base, base + size, 8):
            _fwht8(v, g)
    p = 3
    while p + 1 < lo:                          # radix-4 over contiguous runs of h = 2^p
        h = 1 << p
        for j0 in range(base, base + size, 4 * h):
            _passes_strided(v, j0, 2, h, h)
        p += 2
    if p < lo:
        h = 1 << p
        for j0 in range(base, base + size, 2 * h):
            _passes_strided(v, j0, 1, h, h)


@njit(cache=True, nogil=True)
def _fwht_blocks(v, lo, blk_start, blk_stop, grouped):
    """Passes p < lo inside the contiguous blocks blk_start .. blk_stop-1 of 2^lo values.

    Blocks are disjoint, so calls on disjoint block ranges may run in parallel threads.
    """
    for blk in range(blk_start, blk_stop):
        _block_transform(v, blk << lo, lo, grouped)


@njit(cache=True, nogil=True)
def _fwht_strips(v, p0, k, width, task_start, task_stop, buf):
    """Passes p0 .. p0+k-1 for the strips task_start .. task_stop-1, via the buffer ``buf``.

    The array is viewed as (outer, 2^k, 2^p0); a task is one outer index and ``width``
    adjacent columns (``width`` divides 2^p0).  Its 2^k x width values are copied into ``buf``
    (length >= 2^k * width, private to the calling thread), transformed along the 2^k axis with
    unit-stride inner loops, and copied back.  Tasks are disjoint.
    """
    inner = 1 << p0
    rows = 1 << k
    strips = inner // width
    for task in range(task_start, task_stop):
        o = task // strips
        s = task - o * strips
        start = (o << (p0 + k)) + s * width
        for r in range(rows):
            src = v[start + r * inner:start + r * inner + width]
            dst = buf[r * width:(r + 1) * width]
            for c in range(width):
                dst[c] = src[c]
        _passes_strided(buf, 0, k, width, width)
        for r in range(rows):
            dst = v[start + r * inner:start + r * inner + width]
            src = buf[r * width:(r + 1) * width]
            for c in range(width):
                dst[c] = src[c]


@njit(cache=True, nogil=True)
def _popcount64(x):
    """Number of set bits of a non-negative int64 (SWAR bit counting)."""
    x = x - ((x >> 1) & 0x5555555555555555)
    x = (x & 0x3333333333333333) + ((x >> 2) & 0x3333333333333333)
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0F
    return ((x * 0x0101010101010101) >> 56) & 0xFF


@njit(cache=True, nogil=True)
def _spectrum_stats(w, n_bits):
    """Exact per-level sums of w[u]^2, the sum of |w[u]| and the largest |u| with w[u] != 0.

    ``w`` holds integer Walsh values (|w| <= 2^n_bits, so w^2 <= 4^n_bits < 2^63 and the sums
    stay below 2^63 for n_bits <= 31).  Returns ``(levels (n_bits + 1,), l1, degree)``;
    degree is -1 if w is identically zero.
    """
    levels = np.zeros(n_bits + 1, dtype=np.int64)
    l1 = np.int64(0)
    best = -1
    for u in range(w.shape[0]):
        x = np.int64(w[u])
        if x != 0:
            cnt = _popcount64(np.int64(u))
            levels[cnt] += x * x
            l1 += x if x > 0 else -x
            if cnt > best:
                best = cnt
    return levels, l1, best
