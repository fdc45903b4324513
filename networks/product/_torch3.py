"""The depth-3 ReLU full-batch product-form pass in PyTorch (the optional ``torch`` extra), for
``train_product(..., device="cuda")`` or ``device="cpu-torch"`` on a depth-3 net (private).

Same loss, gradients and precision rule as the CPU float32 pass
(:func:`networks.product._pass3.depth3_pass32`): α = X_A W1_Aᵀ and Bc = X_B W1_Bᵀ + b1 in
float64 (numpy, on the host), rounded once to float32 and sent to the device with W2, b2 and v;
then per pair, in float32: z1 = α[a] + Bc[b], h1 = relu(z1), z2 = h1 W2ᵀ + b2, h2 = relu(z2),
N = h2·v; in float64: the residual r = N + v0 - Y[a, b], Σ r², g = 2r/#pairs, Σ g (dv0),
dv_j = Σ g h2_j and db2_j = Σ d2_j; d2 = g v [z2 > 0] and d1 = [z1 > 0] (d2 W2) in float32
(g rounded to float32, as the CPU kernel does); dW2 = Σ d2 h1ᵀ in float32 over the columns b
of one row a (a batched matrix product), then float64 over the rows; Qa[a, i] = Σ_b d1 and
Qb[b, i] = Σ_a d1 summed in float64.  The host assembles dW1 = [Qaᵀ X_A, Qbᵀ X_B] and
db1 = Σ_a Qa as the CPU trainer does.  The two passes differ by float32 rounding and the order
of the float32 sums only (tests/test_train_torch3.py: every gradient within 1e-4 relative,
max-norm, of the float64 pass).  Float32 matrix products run at full float32 precision
(``torch.set_float32_matmul_precision("highest")`` for the pass: no TF32), and on the CPU at
numba's thread count, pinned for the pass (:func:`networks.product._torch.cpu_threads`).

Memory: the pass runs over tiles of ``rows`` rows a × ``cols`` columns b (Ctrl-C and the time
limit's ``check`` land between tiles), with P = rows × cols pairs and w = max(w1, w2) chosen so
that P × w ≤ ``TILE_ELEMENTS`` (whole rows unless one row alone exceeds it).  A tile holds at
most four float32 P × w arrays (h1, h2, d2, d1; masks a byte each) and two float64 P × w
arrays (the float64 sums' operands, where torch casts before summing): P × w × 32 bytes ≤ 128 MiB on the CPU, 2 GiB on a GPU;
plus the targets (float64, 4^n × 8 bytes) sent to the device once per training run.

Adam, ``final_loss`` and every exact metric stay on the host in float64 (the CPU code), so a
row's metrics mean the same whichever device trained it.  Reductions run in an order fixed by
the library for one device, thread count and shape (the row's device label names the CPU thread
count): rows are reproducible there, not bit-equal across devices.
"""

from __future__ import annotations

import math

import numpy as np

from networks.product._torch import TorchPass

__all__ = ["TorchDepth3Pass", "BYTES_PER_ELEMENT"]

#: Bytes a tile holds per (pair, neuron) element, at most (four float32 and two float64 arrays).
BYTES_PER_ELEMENT = 32


def tile_shape(size_a: int, size_b: int, w: int, budget: int) -> "tuple[int, int]":
    """(rows, cols) of a tile: whole rows while ``cols × w`` fits ``budget`` elements, else one
    row and as many columns as fit (at least one)."""
    w = max(1, int(w))
    if size_b * w <= budget:
        return max(1, min(size_a, budget // (size_b * w))), size_b
    return 1, max(1, budget // w)


class TorchDepth3Pass(TorchPass):
    """``(A, Bc, W2, b2, v, v0, Y, check) -> (loss, Qa, Qb, dW2, db2, dv, dv0)``: the full-batch
    pass of :func:`networks.product._pass3.depth3_pass32` (ReLU, float32) on a torch device."""

    def _f32(self, x):
        return self.torch.as_tensor(np.ascontiguousarray(x, dtype=np.float32),
                                    dtype=self.torch.float32, device=self.dev)

    def __call__(self, A, Bc, W2, b2, v, v0, Y, check=None):
        torch = self.torch
        size_a, w1 = A.shape
        size_b = Bc.shape[0]
        w2 = W2.shape[0]
        total = float(size_a * size_b)
        A32, B32, W232, b232, v32 = (self._f32(x) for x in (A, Bc, W2, b2, v))
        Yd = self._targets(Y)
        f64 = dict(dtype=torch.float64, device=self.dev)
        Qa = torch.zeros((size_a, w1), **f64)
        Qb = torch.zeros((size_b, w1), **f64)
        dW2 = torch.zeros((w2, w1), **f64)
        db2 = torch.zeros(w2, **f64)
        dv = torch.zeros(w2, **f64)
        sq = torch.zeros((), **f64)
        gs = torch.zeros((), **f64)
        rows, cols = tile_shape(size_a, size_b, max(w1, w2), self.tile)
        scale = 2.0 / total
        with self.settings():
            for r0 in range(0, size_a, rows):
                r1 = min(size_a, r0 + rows)
                for c0 in range(0, size_b, cols):
                    c1 = min(size_b, c0 + cols)
                    H1 = (A32[r0:r1, None, :] + B32[None, c0:c1, :]).relu_()    # (r, c, w1)
                    H2 = torch.matmul(H1, W232.T)
                    H2 += b232
                    H2.relu_()                              # (r, c, w2); z2 > 0 iff h2 > 0
                    res = torch.matmul(H2, v32).to(torch.float64) + float(v0) - Yd[r0:r1, c0:c1]
                    sq += (res * res).sum()
                    g = res * scale                                               # float64
                    gs += g.sum()
                    dv += torch.einsum("rc,rcj->j", g, H2.to(torch.float64))
                    D2 = torch.where(H2 > 0, g.to(torch.float32)[:, :, None] * v32, 0.0)
                    del H2
                    db2 += D2.sum(dim=(0, 1), dtype=torch.float64)
                    dW2 += torch.matmul(D2.transpose(1, 2), H1).sum(dim=0, dtype=torch.float64)
                    D1 = torch.matmul(D2, W232)
                    del D2
                    D1.masked_fill_(H1 == 0, 0.0)           # (r, c, w1); h1 = 0 iff z1 <= 0
                    Qa[r0:r1] += D1.sum(dim=1, dtype=torch.float64)
                    Qb[c0:c1] += D1.sum(dim=0, dtype=torch.float64)
                    del D1, H1
                if r1 < size_a:
                    self.progress(check, r1 / size_a)
        loss = float(sq.item()) / total
        if not math.isfinite(loss):
            loss = float("nan")
        host = [t.cpu().numpy() for t in (Qa, Qb, dW2, db2, dv)]
        return (loss, *host, float(gs.item()))
