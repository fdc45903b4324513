"""Depth-3 σ-networks in product form (THEORY §4.8): the first layer α(a) + β(b) + b1, the second
layer over tiles of rows of the 2^n × 2^n × w1 activations (float64 reference pass; the fused
float32-lane ReLU pass is :func:`networks.product._pass3.depth3_pass32`)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from circuits.utils.errors import DimensionError, ReductionError
from networks.product.parts import frozen
from networks.product.support import ProductSupport

__all__ = ["Depth3Parts", "depth3_parts", "depth3_pass", "DEPTH3_TILE_ELEMENTS"]


@dataclass(frozen=True, eq=False)
class Depth3Parts:
    """A depth-3 σ-network N(x) = v0 + Σ_j v_j σ(Σ_i W2[j, i] σ(<w_i, x> + b1_i) + b2_j) as plain
    float64 arrays: W1 (w1, d), b1 (w1,), W2 (w2, w1), b2 (w2,), v (w2,), v0, activation."""

    W1: np.ndarray
    b1: np.ndarray
    W2: np.ndarray
    b2: np.ndarray
    v: np.ndarray
    v0: float
    activation: object

    @property
    def widths(self) -> tuple:
        return int(self.W1.shape[0]), int(self.W2.shape[0])


def depth3_parts(network, *, dim: "int | None" = None, name: str = "network") -> Depth3Parts:
    """Read a depth-3 :class:`networks.SigmaNetwork` (dims [d, w1, w2, 1]) into
    :class:`Depth3Parts`; TypeError / ReductionError / DimensionError as :func:`depth2_parts`."""
    layers = getattr(network, "layers", None)
    act = getattr(network, "activation", None)
    if layers is None or act is None or not hasattr(network, "depth"):
        raise TypeError(f"{name} must be a networks.SigmaNetwork, got {type(network).__name__}")
    if network.depth != 3:
        raise ReductionError(f"{name} must have depth 3 (two hidden layers) here, got depth "
                             f"{network.depth} with hidden widths {tuple(network.widths)}")
    l1, l2, out = layers
    parts = Depth3Parts(W1=frozen(l1.weights, np.float64), b1=frozen(l1.bias, np.float64),
                        W2=frozen(l2.weights, np.float64), b2=frozen(l2.bias, np.float64),
                        v=frozen(out.weights[0], np.float64), v0=float(out.bias[0]),
                        activation=act)
    if dim is not None and parts.W1.shape[1] != int(dim):
        raise DimensionError(
            f"{name} has input dimension {parts.W1.shape[1]} but the embedding has dimension d = "
            f"2m = {int(dim)}; build it with dims [{int(dim)}, w1, w2, 1]")
    return parts


#: Elements of the widest (pairs × width) array one depth-3 tile holds (float64: 2 MiB; measured
#: faster than 16 MiB tiles at n = 10, T2: the tile's arrays stay in cache).
DEPTH3_TILE_ELEMENTS = 1 << 18


def _deriv(act, Z):
    """σ'(Z) as a float64 array of Z's shape (derivative functions may return bools/scalars)."""
    D = act.derivative_function(Z)
    return np.broadcast_to(np.asarray(D, dtype=np.float64), Z.shape)


def depth3_pass(A, Bc, W2, b2, v, v0, act, Y, *, grad: bool = True, V=None, rows=None,
                check=None, threads=None):
    """Forward (and backward) of a depth-3 net on all pairs (a, b), tiles of rows of a.

    z1(a, b) = A[a] + Bc[b] (Bc = β + b1, both (2^n, w1)); h1 = σ(z1); z2 = W2 h1 + b2;
    N = v·σ(z2) + v0.  Each tile holds ``rows`` × 2^n pairs (about DEPTH3_TILE_ELEMENTS elements
    of the widest layer), never the 4^n × d input; the second layer is a BLAS matmul over the
    tile.  Everything is float64; the loss rows are compensated sums (math.fsum).

    With ``Y`` (targets, (2^n, 2^n)) and ``grad``: returns ``(loss, Qa, Qb, dW2, db2, dv, dv0)``
    where g = 2(N - Y)/#pairs, Qa[a, i] = Σ_b dL/dz1_i(a, b), Qb[b, i] = Σ_a dL/dz1_i(a, b) (so
    dW1 = [Qaᵀ X_A, Qbᵀ X_B], db1 = Σ_a Qa).  With ``V`` (a (2^n, 2^n) array) the values are
    written there.  ``check(fraction of the rows done)`` is called between tiles (time limits;
    a Ctrl-C lands between tiles in any case).  ``threads`` tiles are computed at once (default
    numba's thread count), BLAS on one thread each; the tiles are combined in order.
    """
    size, w1 = A.shape
    nb = Bc.shape[0]
    w2 = W2.shape[0]
    total = float(size * nb)
    if rows is None:
        rows = max(1, DEPTH3_TILE_ELEMENTS // max(1, nb * max(w1, w2)))
    want = grad and Y is not None
    W2T = np.ascontiguousarray(W2.T)

    def tile(a0, a1):
        Z1 = (A[a0:a1, None, :] + Bc[None, :, :]).reshape(-1, w1)
        H1 = act.function(Z1)
        Z2 = H1 @ W2T
        Z2 += b2
        H2 = act.function(Z2)
        N = H2 @ v + v0
        if V is not None:
            V[a0:a1] = N.reshape(a1 - a0, nb)
        if Y is None:
            return None
        r = N - Y[a0:a1].reshape(-1)
        part = [math.fsum((r * r).tolist())]
        if want:
            g = (2.0 / total) * r
            dZ2 = _deriv(act, Z2) * g[:, None] * v                 # dL/dz2, (pairs, w2)
            dZ1 = ((dZ2 @ W2) * _deriv(act, Z1)).reshape(a1 - a0, nb, w1)   # dL/dz1
            part += [math.fsum(g.tolist()), g @ H2, dZ2.T @ H1, dZ2.sum(axis=0),
                     dZ1.sum(axis=1), dZ1.sum(axis=0)]
        return part

    if want:
        Qa = np.empty((size, w1))
        Qb = np.zeros((nb, w1))
        dW2 = np.zeros((w2, w1))
        db2 = np.zeros(w2)
        dv = np.zeros(w2)
    loss_parts, g_parts = [], []
    bounds = [(a0, min(size, a0 + rows)) for a0 in range(0, size, rows)]
    for (a0, a1), part in zip(bounds, _tiles_in_order(tile, bounds, threads, check, size)):
        if part is None:
            continue
        loss_parts.append(part[0])
        if want:
            g_parts.append(part[1])
            dv += part[2]
            dW2 += part[3]
            db2 += part[4]
            Qa[a0:a1] = part[5]
            Qb += part[6]
    loss = math.fsum(loss_parts) / total if Y is not None else None
    if not want:
        return loss
    return loss, Qa, Qb, dW2, db2, dv, math.fsum(g_parts)


def _depth3_threads() -> int:
    """Tiles in flight: one per core (numba's thread count, which the trainers lower to 1 for
    small epochs), each BLAS call on one thread."""
    import numba

    return max(1, int(numba.get_num_threads()))


def _tiles_in_order(tile, bounds, threads, check, size):
    """Yield tile(a0, a1) for each bound in order, computing up to ``threads`` tiles at once
    (numpy and BLAS release the GIL; BLAS pinned to one thread meanwhile).  Results are combined
    by the caller in tile order, so the sums never depend on scheduling.  Between tiles: the
    ``check`` callback and (in the main thread) Ctrl-C; pending tiles are cancelled on error."""
    threads = _depth3_threads() if threads is None else max(1, int(threads))
    if threads == 1 or len(bounds) == 1:
        for a0, a1 in bounds:
            if check is not None and a0 > 0:
                check(a0 / size)
            yield tile(a0, a1)
        return
    from concurrent.futures import ThreadPoolExecutor

    try:
        from threadpoolctl import threadpool_limits
        limits = threadpool_limits(limits=1, user_api="blas")
    except ImportError:                                 # optional: only a speed matter
        import contextlib
        limits = contextlib.nullcontext()
    pool = ThreadPoolExecutor(max_workers=threads)
    try:
        with limits:
            pending = []
            it = iter(bounds)
            for b in it:
                pending.append((b, pool.submit(tile, *b)))
                if len(pending) > threads:
                    break
            while pending:
                (a0, a1), fut = pending.pop(0)
                res = fut.result()
                if check is not None and a1 < size:
                    check(a1 / size)
                nxt = next(it, None)
                if nxt is not None:
                    pending.append((nxt, pool.submit(tile, *nxt)))
                yield res
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _depth3_tables(parts: Depth3Parts, sup: ProductSupport):
    m = sup.m
    A = np.ascontiguousarray(sup.XA @ parts.W1[:, :m].T)
    Bc = np.ascontiguousarray(sup.XB @ parts.W1[:, m:].T + parts.b1)
    return A, Bc
