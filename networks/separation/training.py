"""Full-batch Adam on all 4^n support points of μ₀ in product form (THEORY §4.8).

Every first-layer pre-activation of a depth-2 network on the support is α_i(a) + β_i(b) + c_i with
α = X_A W_Aᵀ and β = X_B W_Bᵀ (2^n × w each), so one epoch costs O(2^n·m·w + 4^n·w) instead of the
O(4^n·d·w) of the generic trainer (:func:`networks.train`), and the 4^n × d input array is never
built.  The gradient with respect to Alice's weights is Σ_a x^A(a)ᵀ Σ_b q(a, b), likewise for
Bob's (q = back-propagated pre-activation signal); the pass itself is the product engine's numba
kernel ``networks.reduction._kernels._train_pass``.

:func:`train_on_support` takes any target table Y[a, b] (rows = Alice), so the IP labels and a
random permutation of them (:func:`networks.separation.ceiling.label_table`) are trained by the same
code.  The loss reported is the exact MSE over the 4^n points (compensated sums); the returned
object is the generic trainer's :class:`networks.train.TrainResult`.

Examples
--------
>>> from embeddings import HardInstance
>>> from networks import SigmaNetwork
>>> inst = HardInstance(3, seed=0)
>>> net = SigmaNetwork.random([inst.dim, 16, 1], "relu", seed=0)
>>> res = train_on_support(net, inst, epochs=300, lr=0.02)
>>> res.history["final_loss"] < res.history["loss"][0]
True
"""

from __future__ import annotations

import math
import os
import time

import numpy as np

from circuits.utils.errors import InvalidNetworkError
from circuits.utils.progress import progress_bar
from circuits.utils.validation import check_int, check_real
from networks.sigma import DenseLayer, SigmaNetwork
from networks.train import TrainResult

__all__ = ["support_loss_and_gradient", "train_on_support"]


def _setup(net, instance, targets):
    from networks.reduction._common import depth2_parts
    from networks.reduction.product import _activation_code, product_support

    sup = product_support(instance)
    parts = depth2_parts(net, dim=sup.dim)
    code = _activation_code(parts.activation)
    if code < 0:
        raise InvalidNetworkError(
            f"product-form training supports the built-in activations (relu, heaviside, sign, "
            f"sigmoid, tanh, hardtanh, softplus), got {parts.activation.name!r}; use "
            f"networks.train on instance.support().points instead")
    size = sup.size
    if targets is None:
        Y = (np.asarray(sup.H) < 0).astype(np.float64)
    else:
        Y = np.ascontiguousarray(targets, dtype=np.float64)
        if Y.shape != (size, size):
            raise InvalidNetworkError(f"targets must be a ({size}, {size}) table Y[a, b] (rows = "
                                      f"Alice), got shape {Y.shape}")
        if not np.isfinite(Y).all():
            raise InvalidNetworkError("targets contain NaN or infinity")
    return sup, parts, code, Y


def _n_blocks(size: int) -> int:
    return max(1, min(size, 2 * (os.cpu_count() or 1)))


class _Pass:
    """Loss and gradient of the MSE over all pairs for parameters (W, b, u, u0)."""

    def __init__(self, sup, code, Y):
        self.sup, self.code, self.Y = sup, code, Y
        self.m = sup.m
        self.blocks = _n_blocks(sup.size)

    def __call__(self, W, b, u, u0):
        from networks.reduction import _kernels

        sup, m = self.sup, self.m
        A = np.ascontiguousarray(sup.XA @ W[:, :m].T)
        B = np.ascontiguousarray(sup.XB @ W[:, m:].T)
        size, w = A.shape
        Qa = np.empty((size, w))
        Qb = np.zeros((self.blocks, size, w))
        Su = np.zeros((self.blocks, w))
        rows = np.zeros((size, 2))
        _kernels._train_pass(A, B, np.ascontiguousarray(b), np.ascontiguousarray(u), float(u0),
                             self.code, self.Y, self.blocks, Qa, Qb, Su, rows)
        loss = math.fsum(rows[:, 0].tolist()) / float(size * size)
        qa = Qa.sum(axis=0)
        gW = np.empty_like(W)
        gW[:, :m] = u[:, None] * (Qa.T @ sup.XA)
        gW[:, m:] = u[:, None] * (Qb.sum(axis=0).T @ sup.XB)
        gb = u * qa
        gu = Su.sum(axis=0)
        gu0 = float(rows[:, 1].sum())
        return loss, gW, gb, gu, gu0


def support_loss_and_gradient(net, instance, targets=None):
    """Exact MSE over the 4^n support points and its gradient, in product form.

    Returns ``(loss, [(dW1, db1), (dW2, db2)])`` shaped like :func:`networks.loss_and_gradient`
    on ``instance.support().points`` with the targets in cube order (the tests compare the two).
    """
    sup, parts, code, Y = _setup(net, instance, targets)
    loss, gW, gb, gu, gu0 = _Pass(sup, code, Y)(np.array(parts.W), np.array(parts.b),
                                               np.array(parts.u), parts.u0)
    return loss, [(gW, gb), (gu[None, :], np.array([gu0]))]


def train_on_support(net, instance, targets=None, *, epochs: int = 1000, lr: float = 1e-2,
                     weight_bound: "float | None" = None, tol: float = 1e-9,
                     patience: "int | None" = 100, target_loss: "float | None" = None,
                     betas=(0.9, 0.999), eps: float = 1e-8, progress: bool = False,
                     desc: str = "train") -> TrainResult:
    """Full-batch Adam on the MSE over all 4^n support points (product form).

    Parameters
    ----------
    net : SigmaNetwork
        Depth 2, input dimension d = 2m of the instance, a built-in activation.  Not modified.
    instance : embeddings.HardInstance (or networks.reduction.ProductSupport)
    targets : array (2^n, 2^n), optional
        Y[a, b] (rows = Alice); default the IP labels.
    epochs, lr, weight_bound, tol, patience, target_loss, betas, eps, progress, desc
        As in :func:`networks.train` (full batch; ``weight_bound`` clips every weight and bias to
        [-B, B] before training and after each step).

    Returns
    -------
    networks.train.TrainResult
        ``history["final_loss"]`` is the exact MSE of the returned network over the support.
    """
    sup, parts, code, Y = _setup(net, instance, targets)
    epochs = check_int(epochs, name="epochs", minimum=0)
    lr = check_real(lr, name="lr", minimum=0, what="the Adam step size")
    weight_bound = check_real(weight_bound, name="weight_bound", minimum=0, allow_none=True)
    tol = check_real(tol, name="tol", minimum=0, strict=False)
    patience = None if patience is None else check_int(patience, name="patience", minimum=1)
    target_loss = check_real(target_loss, name="target_loss", minimum=0, strict=False,
                             allow_none=True)
    beta1, beta2 = (float(v) for v in betas)
    if not (0 <= beta1 < 1 and 0 <= beta2 < 1):
        raise InvalidNetworkError(f"betas must lie in [0, 1), got ({beta1}, {beta2})")
    params = [np.array(parts.W), np.array(parts.b), np.array(parts.u), np.array([parts.u0])]
    if weight_bound is not None:
        for p in params:
            np.clip(p, -weight_bound, weight_bound, out=p)
    m1 = [np.zeros_like(p) for p in params]
    m2 = [np.zeros_like(p) for p in params]
    fn = _Pass(sup, code, Y)
    losses: list = []
    best, since, reason = math.inf, 0, "epochs"
    t0 = time.perf_counter()
    with np.errstate(over="ignore", invalid="ignore"), \
            progress_bar(epochs, enabled=progress, desc=desc, unit="epoch") as bar:
        for epoch in range(epochs):
            loss, gW, gb, gu, gu0 = fn(params[0], params[1], params[2], params[3][0])
            if not math.isfinite(loss):
                raise InvalidNetworkError(f"training diverged at epoch {epoch} (loss {loss}); "
                                          f"lower lr (now {lr}) or set weight_bound")
            losses.append(loss)
            if target_loss is not None and loss <= target_loss:
                reason = "target_loss"
                break
            step = epoch + 1
            c1, c2 = 1.0 - beta1 ** step, 1.0 - beta2 ** step
            for p, g, a, v in zip(params, (gW, gb, gu, np.array([gu0])), m1, m2):
                a *= beta1
                a += (1.0 - beta1) * g
                v *= beta2
                v += (1.0 - beta2) * (g * g)
                p -= (lr / c1) * a / (np.sqrt(v / c2) + eps)
                if weight_bound is not None:
                    np.clip(p, -weight_bound, weight_bound, out=p)
            bar.update(1)
            if loss < best - tol:
                best, since = loss, 0
            else:
                since += 1
                if patience is not None and since >= patience:
                    reason = "patience"
                    break
    W, b, u, u0 = params
    out = SigmaNetwork([DenseLayer(W, b), DenseLayer(u[None, :], u0)],
                       activation=parts.activation)
    final = fn(W, b, u, u0[0])[0]
    history = {"loss": losses, "epochs": len(losses), "stopped_early": reason != "epochs",
               "reason": reason, "final_loss": final, "best_loss": min(losses + [final]),
               "seconds": time.perf_counter() - t0,
               "settings": {"epochs": epochs, "lr": lr, "weight_bound": weight_bound, "tol": tol,
                            "patience": patience, "target_loss": target_loss,
                            "betas": [beta1, beta2], "eps": eps, "n_points": sup.size ** 2,
                            "dims": list(net.dims), "activation": parts.activation.name,
                            "engine": "product form (THEORY §4.8)"}}
    return TrainResult(out, history)
