"""Private steps of the product-form trainer (:mod:`networks.product.train`): targets, the
mini-batch and depth-3 passes, Adam, the settings record, the time limit, thread pinning."""

from __future__ import annotations

import contextlib
import math
import time

import numpy as np

from circuits.utils.errors import InvalidNetworkError
from networks.product import _kernels
from networks.product.depth3 import _deriv, depth3_pass
from networks.product.support import _activation_code

#: Precisions of the full-batch product-form pass (see :func:`networks.product.train_product`).
PRECISIONS = ("float32", "float64")


def blas_threads(limit: "int | None"):
    """Context pinning BLAS to ``limit`` threads (threadpoolctl), or nothing when ``limit`` is
    None or threadpoolctl is not installed."""
    if limit is None:
        return contextlib.nullcontext()
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:                        # optional: only a speed matter
        return contextlib.nullcontext()
    return threadpool_limits(limits=int(limit), user_api="blas")


#: Below this many (pair, neuron) terms per epoch one numba thread is faster than two
#: (thread start-up dominates; measured in benchmarks/bench_reduction.py).
SERIAL_BELOW = 1 << 20


@contextlib.contextmanager
def _numba_threads(work: int):
    """One numba thread for small epochs, the configured number otherwise."""
    import numba

    before = numba.get_num_threads()
    if work < SERIAL_BELOW:
        numba.set_num_threads(1)
    try:
        yield
    finally:
        numba.set_num_threads(before)


def _targets(sup, targets) -> np.ndarray:
    if targets is None:
        return np.ascontiguousarray((sup.H < 0).astype(np.float64))         # IP(a, b)
    Y = np.asarray(targets, dtype=np.float64)
    if Y.shape != (sup.size, sup.size):
        raise InvalidNetworkError(f"targets must be a ({sup.size}, {sup.size}) table Y[a, b] "
                                  f"(rows = Alice), got shape {Y.shape}; use "
                                  f"values.reshape({sup.size}, {sup.size}).T for cube order")
    if not np.isfinite(Y).all():
        raise InvalidNetworkError("targets contain NaN or infinity")
    return np.ascontiguousarray(Y)


def _full_pass_numpy(act, A, B, c, u, u0, Y):
    """Fallback for activations without a kernel code (blocks of rows)."""
    size_a, w = A.shape
    total = size_a * B.shape[0]
    Qa = np.zeros((size_a, w))
    Qb = np.zeros((B.shape[0], w))
    Su = np.zeros(w)
    loss_rows, g_sum = [], 0.0
    rows = max(1, (1 << 20) // max(1, B.shape[0] * w))
    for a0 in range(0, size_a, rows):
        Z = A[a0:a0 + rows, None, :] + B[None, :, :] + c
        S = act.function(Z)
        D = np.asarray(act.derivative_function(Z), dtype=np.float64) * np.ones_like(Z)
        r = S @ u + u0 - Y[a0:a0 + rows]
        loss_rows.append(math.fsum((r * r).ravel().tolist()))
        g = 2.0 * r / total
        g_sum += float(g.sum())
        Qa[a0:a0 + rows] = np.einsum("ab,abi->ai", g, D)
        Qb += np.einsum("ab,abi->bi", g, D)
        Su += np.einsum("ab,abi->i", g, S)
    return Qa, Qb, Su, math.fsum(loss_rows) / total, g_sum


def _batch_pass(code, act, A, B, c, u, u0, ia, ib, y):
    size, w = A.shape
    Qa = np.zeros((size, w))
    Qb = np.zeros((B.shape[0], w))
    Su = np.zeros(w)
    if code >= 0:
        out = np.empty(2)
        _kernels._train_pairs(A, B, c, u, float(u0), code, ia, ib, y, Qa, Qb, Su, out)
        return Qa, Qb, Su, out[0] / ia.size, out[1]
    Z = A[ia] + B[ib] + c
    S = act.function(Z)
    D = np.asarray(act.derivative_function(Z), dtype=np.float64) * np.ones_like(Z)
    r = S @ u + u0 - y
    g = 2.0 * r / ia.size
    np.add.at(Qa, ia, g[:, None] * D)
    np.add.at(Qb, ib, g[:, None] * D)
    return Qa, Qb, g @ S, float(r @ r) / ia.size, float(g.sum())


def _gradient3(params, sup, act, Y, batch=None, check=None, precision="float64",
               torch_pass=None):
    """Depth 3: loss and [dW1, db1, dW2, db2, dv, dv0] (first layer in product form).

    ``precision="float32"`` with ReLU and the full batch: the fused float32-lane pass
    (:func:`networks.product._pass3.depth3_pass32`), or ``torch_pass`` (a
    :class:`networks.product._torch3.TorchDepth3Pass`, the same pass on a torch device) when
    given; otherwise the float64 tiles."""
    W1, b1, W2, b2, v, v0 = params
    m = sup.m
    A = np.ascontiguousarray(sup.XA @ W1[:, :m].T)
    Bc = np.ascontiguousarray(sup.XB @ W1[:, m:].T + b1)
    if (batch is None and precision == "float32" and _activation_code(act) == 0
            and torch_pass is not None):
        loss, Qa, Qb, dW2, db2, dv, dv0 = torch_pass(A, Bc, W2, b2, v, v0[0], Y, check=check)
    elif batch is None and precision == "float32" and _activation_code(act) == 0:
        from networks.product._pass3 import depth3_pass32

        loss, Qa, Qb, dW2, db2, dv, dv0 = depth3_pass32(A, Bc, W2, b2, v, v0[0], Y, check=check)
    elif batch is None:
        loss, Qa, Qb, dW2, db2, dv, dv0 = depth3_pass(A, Bc, W2, b2, v, v0[0], act, Y,
                                                      check=check)
    else:
        loss, Qa, Qb, dW2, db2, dv, dv0 = _batch_pass3(act, A, Bc, W2, b2, v, v0[0], *batch)
    dW1 = np.empty_like(W1)
    dW1[:, :m] = Qa.T @ sup.XA
    dW1[:, m:] = Qb.T @ sup.XB
    return loss, [dW1, Qa.sum(axis=0), dW2, db2, dv, np.array([dv0])]


def _loss3(params, sup, act, Y) -> float:
    """Depth 3: the float64 full-batch loss alone (the forward half of the float64 tiles of
    :func:`_gradient3`: the same tiles and sums, so the same bits as its loss)."""
    W1, b1, W2, b2, v, v0 = params
    m = sup.m
    A = np.ascontiguousarray(sup.XA @ W1[:, :m].T)
    Bc = np.ascontiguousarray(sup.XB @ W1[:, m:].T + b1)
    return depth3_pass(A, Bc, W2, b2, v, v0[0], act, Y, grad=False)


def _batch_pass3(act, A, Bc, W2, b2, v, v0, ia, ib, y):
    Z1 = A[ia] + Bc[ib]
    H1 = act.function(Z1)
    Z2 = H1 @ W2.T + b2
    H2 = act.function(Z2)
    r = H2 @ v + v0 - y
    g = 2.0 * r / ia.size
    dZ2 = _deriv(act, Z2) * g[:, None] * v
    dZ1 = (dZ2 @ W2) * _deriv(act, Z1)
    Qa = np.zeros_like(A)
    Qb = np.zeros_like(Bc)
    np.add.at(Qa, ia, dZ1)
    np.add.at(Qb, ib, dZ1)
    return (float(r @ r) / ia.size, Qa, Qb, dZ2.T @ H1, dZ2.sum(axis=0), g @ H2,
            float(g.sum()))


def _check_precision(precision) -> str:
    if precision not in PRECISIONS:
        raise InvalidNetworkError(f"precision must be one of {PRECISIONS} (the working precision "
                                  f"of the full-batch ReLU pass), got {precision!r}")
    return precision


def _params3(p3):
    return [np.array(p3.W1), np.array(p3.b1), np.array(p3.W2), np.array(p3.b2), np.array(p3.v),
            np.array([p3.v0])]


def _n_blocks(sup) -> int:
    import numba

    return int(min(sup.size, 4 * numba.get_num_threads()))


def _check_mask(mask, shape):
    if mask is None:
        return None
    mk = np.asarray(mask)
    if mk.shape != shape or mk.dtype != np.bool_:
        raise InvalidNetworkError(f"mask must be a boolean array of shape {shape} (True = the "
                                  f"neuron reads that coordinate), got {mk.dtype} {mk.shape}")
    return mk


class _Adam:
    """Adam exactly as in :func:`networks.train` (bias-corrected, optional clipping)."""

    def __init__(self, params, lr, betas, eps, weight_bound, mask):
        self.params, self.lr, self.eps, self.bound, self.mask = params, lr, eps, weight_bound, mask
        self.b1, self.b2 = betas
        self.m1 = [np.zeros_like(p) for p in params]
        self.m2 = [np.zeros_like(p) for p in params]
        self.step = 0

    def __call__(self, grads):
        self.step += 1
        c1 = 1.0 - self.b1 ** self.step
        c2 = 1.0 - self.b2 ** self.step
        if self.mask is not None:
            grads[0] = grads[0] * self.mask
        for p, g, a, b in zip(self.params, grads, self.m1, self.m2):
            a *= self.b1
            a += (1.0 - self.b1) * g
            b *= self.b2
            b += (1.0 - self.b2) * (g * g)
            p -= (self.lr / c1) * a / (np.sqrt(b / c2) + self.eps)
            if self.bound is not None:
                np.clip(p, -self.bound, self.bound, out=p)


def _settings(epochs, lr, batch_size, seed, weight_bound, tol, patience, target_loss, betas,
              eps, mask, blas, sup, dims, activation):
    for name, v in (("epochs", epochs), ("patience", patience), ("batch_size", batch_size)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, np.integer))
                              or v < (0 if name == "epochs" else 1)):
            raise InvalidNetworkError(f"{name} must be a {'non-negative' if name == 'epochs' else 'positive'} "
                                      f"int, got {v!r}")
    for name, v in (("lr", lr), ("eps", eps), ("weight_bound", weight_bound)):
        if v is not None and not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
            raise InvalidNetworkError(f"{name} must be a finite number > 0, got {v!r}")
    return {"epochs": epochs, "lr": lr, "batch_size": batch_size,
            "seed": int(seed) if isinstance(seed, (int, np.integer)) else None,
            "weight_bound": weight_bound, "tol": tol, "patience": patience,
            "target_loss": target_loss, "betas": list(betas), "eps": eps,
            "mask_reads": None if mask is None else int(mask.sum()), "blas_threads": blas,
            "n_points": sup.size ** 2, "dims": list(dims), "activation": activation.name,
            "form": "product"}


class _TimeLimit:
    """Estimate-and-refuse for a training run (like the exhaustive kernels' ``max_seconds``).

    Calibrates on the run itself once at least ``CALIBRATION_S`` of warm epochs (compilation
    excluded by the warm-up) have passed: within an epoch from its slices
    (``check(fraction done)``), otherwise from whole epochs.  A run whose estimate for all
    ``epochs`` exceeds ``max_seconds`` is refused with RunTooLongError before the bulk starts
    (early stopping may end a run sooner; the estimate is for the cap)."""

    CALIBRATION_S = 0.04

    def __init__(self, max_seconds, epochs, desc):
        self.max_seconds, self.epochs, self.desc = max_seconds, epochs, desc
        self.t0 = time.perf_counter()
        self.epoch_start = self.t0
        self.epochs_done = 0
        self.decided = max_seconds is None

    def start_epoch(self, epoch):
        self.epoch_start = time.perf_counter()
        self.epochs_done = epoch

    def __call__(self, fraction):
        """Called between slices of the current epoch."""
        if self.decided or fraction <= 0:
            return
        now = time.perf_counter()
        if self.epochs_done == 0:
            if now - self.epoch_start >= self.CALIBRATION_S:
                self._decide((now - self.epoch_start) / fraction, now)
        else:
            self._decide((now - self.t0) / (self.epochs_done + fraction), now)

    def end_epoch(self, epoch):
        if not self.decided:
            now = time.perf_counter()
            if now - self.t0 >= self.CALIBRATION_S:
                self._decide((now - self.t0) / (epoch + 1), now)

    def _decide(self, per_epoch, now):
        from circuits.utils.errors import RunTooLongError
        from circuits.utils.slicing import MAX_SECONDS_ENV, format_seconds

        self.decided = True
        total = per_epoch * self.epochs
        if total > self.max_seconds:
            raise RunTooLongError(
                f"{self.desc}: {self.epochs} epochs would take about {format_seconds(total)} here "
                f"(measured {format_seconds(per_epoch)} per epoch), above the limit "
                f"max_seconds={self.max_seconds:g}. Ways forward: fewer epochs, a smaller width "
                f"or n, mini-batches (batch_size=...), a larger max_seconds= (or "
                f"max_seconds=None to run it anyway), or the environment variable "
                f"{MAX_SECONDS_ENV}",
                estimate_seconds=total, max_seconds=self.max_seconds, n_items=self.epochs,
                rate=1.0 / per_epoch)
