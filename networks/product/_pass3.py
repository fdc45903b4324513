"""The float32-lane depth-3 ReLU pass in product form (wrapper of the private kernel
:mod:`networks.product._kernels_train3`; precision of each step documented there).

Stated tolerance against the float64 pass (:func:`networks.product.depth3.depth3_pass`):
every gradient array within :data:`F32_GRAD_RTOL` relative (max-norm), the loss within 1e-5
relative (tests/test_train_product3_f32.py).
"""

from __future__ import annotations

import math

import numpy as np

#: Stated tolerance of a float32 depth-3 gradient against the float64 one (max-norm relative
#: error per parameter array; float32 has 6e-8 unit rounding).
F32_GRAD_RTOL = 1e-4

#: (pair, w1, w2) terms per kernel call: an epoch runs in slices of rows of about this size,
#: so a Ctrl-C (handled between slices) lands within a fraction of a second.
SLICE_TERMS3 = 1 << 30


def _pad4(k: int) -> int:
    return -(-k // 4) * 4


def depth3_pass32(A, Bc, W2, b2, v, v0, Y, *, check=None, threads=None):
    """Forward and backward of a depth-3 ReLU net on all pairs, float32 lanes.

    Same arguments and result as :func:`networks.product.depth3.depth3_pass` with ``grad``:
    ``(loss, Qa, Qb, dW2, db2, dv, dv0)``, all float64 (A: α (2^n, w1), Bc: β + b1 (2^n, w1),
    W2 (w2, w1), b2 and v (w2,), Y (2^n, 2^n)).  ``check(fraction of rows done)`` is called
    between slices of rows.  ``threads``: blocks of rows (default numba's thread count); the
    result is bit-for-bit the same for the same count.
    """
    import numba

    from networks.product import _kernels_train3 as k3

    size_a, w1 = A.shape
    size_b = Bc.shape[0]
    w2 = W2.shape[0]
    w1p, w2p = _pad4(w1), _pad4(w2)
    A32 = np.zeros((size_a, w1p), dtype=np.float32)
    A32[:, :w1] = A
    Bct32 = np.zeros((w1p, size_b), dtype=np.float32)
    Bct32[:w1] = Bc.T
    W2p = np.zeros((w2p, w1p), dtype=np.float32)
    W2p[:w2, :w1] = W2
    b2p = np.zeros(w2p, dtype=np.float32)
    b2p[:w2] = b2
    vp = np.zeros(w2p, dtype=np.float32)
    vp[:w2] = v
    n_blocks = int(numba.get_num_threads() if threads is None else max(1, int(threads)))
    n_blocks = max(1, min(n_blocks, size_a))
    tile = min(size_b, k3.TILE)
    rows = max(1, k3.GROUP_FLOATS // (w1p * tile))
    total = float(size_a * size_b)
    Qa = np.empty((size_a, w1p))
    Qb = np.zeros((n_blocks, w1p, size_b))
    dW2 = np.zeros((n_blocks, w2p, w1p))
    vec = np.zeros((n_blocks, 2, w2p))
    cols = np.zeros((n_blocks, 2, size_b))
    Y = np.ascontiguousarray(Y, dtype=np.float64)
    per_slice = max(n_blocks * rows, SLICE_TERMS3 // max(1, size_b * w1p * w2p))
    for r0 in range(0, size_a, per_slice):
        r1 = min(size_a, r0 + per_slice)
        k3._train_pass3_relu32(A32[r0:r1], Bct32, W2p, b2p, vp, float(v0), Y[r0:r1],
                               2.0 / total, n_blocks, tile, rows, Qa[r0:r1], Qb, dW2, vec, cols)
        if check is not None and r1 < size_a:
            check(r1 / size_a)
    loss = math.fsum(cols[:, 0].ravel().tolist()) / total
    dv0 = math.fsum(cols[:, 1].ravel().tolist())
    vsum = vec.sum(axis=0)
    return (loss, Qa[:, :w1], Qb.sum(axis=0)[:w1].T.copy(), dW2.sum(axis=0)[:w2, :w1],
            vsum[1, :w2].copy(), vsum[0, :w2].copy(), dv0)
