"""Training a depth-2 σ-network on the hard instance's support in product form (THEORY §4.8).

On the support x_{a,b} = (x^A(a), x^B(b)) every pre-activation is α_i(a) + β_i(b) + b_i with
α = X_A W_Aᵀ and β = X_B W_Bᵀ, so the full-batch MSE gradient over all 4^n points is

    dL/dW_A = diag(u) · Qaᵀ X_A,   Qa[a, i] = Σ_b g(a, b) σ'(z_i(a, b)),   g = 2(N - y)/4^n,

likewise dL/dW_B with Qb[b, i] = Σ_a g σ'(z_i): O(2^n·m·w + 4^n·w) per epoch and O(2^n·w) memory,
never the 4^n × d input array.  The same Adam as :func:`networks.train` (bias-corrected moments,
optional clipping to [-B, B]); a mini-batch variant samples pairs (a, b) from a fresh permutation
of the 4^n pairs every epoch.  :func:`networks.train` stays the trainer for general inputs.

Depth 3 (dims [d, w1, w2, 1]): the first layer in the same product form; a full-batch ReLU
epoch is one fused float32-lane numba pass over groups of pairs (the three w1 × w2 products
register-blocked, :mod:`networks.product._kernels_train3`), the float64 reference a BLAS matmul
over tiles of rows of the 2^n × 2^n × w1 activations
(:func:`networks.product.depth3.depth3_pass`).

Precision: a depth-2 ReLU full-batch epoch runs on float32 vector lanes by default
(``precision="float32"``; pre-activations, ReLU and the sum over neurons in float32, the
residual, the loss and every gradient accumulation in float64, see
:mod:`networks.product._kernels_train32`); ``precision="float64"`` is the reference kernel.
A depth-3 ReLU full-batch epoch likewise runs on float32 lanes by default (the residual, the loss
and every gradient sum in float64, :mod:`networks.product._kernels_train3`).  Everything else
(other activations, mini-batches, ``final_loss``, the returned network and every exact metric) is
float64.

Robustness: epochs run in slices of rows (a Ctrl-C lands between slices, about 0.05 s apart),
the time for ``epochs`` epochs is measured and refused above ``max_seconds`` and the memory is
estimated and refused before anything is allocated (:func:`check_training_memory`), and a
diverging run (non-finite loss, or :data:`DIVERGED_FACTOR` times the first) stops with an error.

Examples
--------
>>> from embeddings import HardInstance
>>> from networks import SigmaNetwork
>>> inst = HardInstance(3, seed=0)
>>> net0 = SigmaNetwork.random([inst.dim, 32, 1], "relu", seed=0)
>>> res = train_product(net0, inst, epochs=300, lr=0.03, target_loss=0.2, patience=None)
>>> res.history["reason"], bool(res.history["final_loss"] <= 0.2)
('target_loss', True)
"""

from __future__ import annotations

import math
import time

import numpy as np

from circuits.utils.progress import progress_bar
from circuits.utils.errors import InvalidNetworkError
from circuits.utils.slicing import DEFAULT, resolve_max_seconds
from circuits.utils.rng import as_rng
from networks.product import _kernels
from networks.product._steps import (PRECISIONS, SERIAL_BELOW, _Adam, _batch_pass, _batch_pass3,
                                     _check_mask, _check_precision, _full_pass_numpy, _gradient3,
                                     _loss3, _n_blocks, _numba_threads, _params3, _settings,
                                     _targets, _TimeLimit, blas_threads)
from networks.product.depth3 import depth3_parts
from networks.product.memory import check_training_memory, training_memory_bytes
from networks.product._stopping import _FrozenFirst, _check_stall, _stalled
from networks.product.parts import depth2_parts
from networks.product.refit import refit_output_layer
from networks.product.support import _activation_code, check_table_memory, product_support
from networks.train import DIVERGED_FACTOR, TrainResult, _finite  # one divergence rule
from networks.sigma import DenseLayer, SigmaNetwork

__all__ = ["train_product", "product_loss_and_gradient", "refit_output_layer",
           "training_memory_bytes", "check_training_memory", "PRECISIONS", "DIVERGED_FACTOR"]

# re-exported for the trainer's callers and tests (one namespace, as before the split)
_REEXPORTED = (SERIAL_BELOW, _batch_pass3, _full_pass_numpy, blas_threads, _numba_threads,
               _check_mask, _Adam, _settings, _TimeLimit, _params3)


#: Pair-neuron terms per kernel call: an epoch is processed in slices of rows of about this
#: size, so Ctrl-C (handled between slices) lands within a fraction of a second at any width.
SLICE_TERMS = 1 << 27

def _slices(size_a, size_b, w, align=4, scale=1):
    rows = max(align, (scale * SLICE_TERMS // max(1, size_b * w)) // align * align)
    return [(r0, min(size_a, r0 + rows)) for r0 in range(0, size_a, rows)]


def _full_pass(code, act, A, B, c, u, u0, Y, n_blocks, precision="float64", check=None):
    """(Qa, Qb, Su, loss, Σg) of the full-batch MSE over all pairs.

    ``precision="float32"`` with ReLU: :mod:`networks.product._kernels_train32` (float32
    lanes; the loss, Σ g, Qa and Qb accumulated in float64 as documented there) and
    Su[i] = Σ_a (α+c)[a, i] Qa[a, i] + Σ_b β[b, i] Qb[b, i] in float64 (an identity for ReLU:
    Σ g·[z > 0]·z with z = (α + c) + β).  Otherwise the float64 kernel ``_train_pass``.
    Both run over slices of rows (:data:`SLICE_TERMS`), so a KeyboardInterrupt lands between
    slices."""
    if code < 0:
        return _full_pass_numpy(act, A, B, c, u, u0, Y)
    size, w = A.shape
    size_b = B.shape[0]
    total = float(size * size_b)
    Qa = np.empty((size, w))
    if precision == "float32" and code == 0:
        from networks.product import _kernels_train32 as k32

        Ac = A + c
        Ac32 = np.ascontiguousarray(Ac, dtype=np.float32)
        Bt32 = np.ascontiguousarray(B.T, dtype=np.float32)
        u32 = np.ascontiguousarray(u, dtype=np.float32)
        import numba

        n_blocks = int(numba.get_num_threads())      # one block per thread: rows stay long
        Qbt = np.zeros((n_blocks, w, size_b))
        cols = np.zeros((n_blocks, 2, size_b))
        tile = max(k32.LANES, min(size_b, k32.TILE_FLOATS // max(1, w)))
        for r0, r1 in _slices(size, size_b, w, scale=k32.SLICE_SCALE):
            k32._train_pass_relu32(Ac32[r0:r1], Bt32, u32, float(u0), Y[r0:r1], 2.0 / total,
                                   n_blocks, tile, Qa[r0:r1], Qbt, cols)
            if check is not None:
                check(r1 / size)
        Qb = Qbt.sum(axis=0).T
        Su = np.einsum("ai,ai->i", Ac, Qa) + np.einsum("bi,bi->i", B, Qb)
        return (Qa, Qb, Su, math.fsum(cols[:, 0].ravel().tolist()) / total,
                math.fsum(cols[:, 1].ravel().tolist()))
    Qb = np.zeros((n_blocks, size_b, w))
    Su = np.zeros(w)
    rows = np.empty((size, 2))
    Bt = np.ascontiguousarray(B.T)
    su = np.empty((n_blocks, w))
    for r0, r1 in _slices(size, size_b, w):
        _kernels._train_pass(A[r0:r1], B, Bt, c, u, float(u0), code, Y[r0:r1], n_blocks,
                             Qa[r0:r1], Qb, su, rows[r0:r1], total)
        Su += su.sum(axis=0)
        if check is not None:
            check(r1 / size)
    return (Qa, Qb.sum(axis=0), Su, math.fsum(rows[:, 0].tolist()) / total,
            math.fsum(rows[:, 1].tolist()))


def _gradient(params, sup, code, act, Y, n_blocks, batch=None, precision="float64", check=None,
              torch_pass=None):
    """Loss and [dW, db, du, du0] from the product-form passes (``torch_pass``: a
    :class:`networks.product._torch.TorchDepth2Pass` for a float32 ReLU full-batch pass)."""
    W, b, u, u0 = params
    m = sup.m
    A = np.ascontiguousarray(sup.XA @ W[:, :m].T)
    B = np.ascontiguousarray(sup.XB @ W[:, m:].T)
    if batch is None and torch_pass is not None and precision == "float32" and code == 0:
        Qa, Qb, Su, loss, g_sum = torch_pass(A + b, B, u, u0[0], Y, check)
    elif batch is None:
        Qa, Qb, Su, loss, g_sum = _full_pass(code, act, A, B, b, u, u0[0], Y, n_blocks,
                                             precision, check)
    else:
        Qa, Qb, Su, loss, g_sum = _batch_pass(code, act, A, B, b, u, u0[0], *batch)
    dW = np.empty_like(W)
    dW[:, :m] = u[:, None] * (Qa.T @ sup.XA)
    dW[:, m:] = u[:, None] * (Qb.T @ sup.XB)
    return loss, [dW, u * Qa.sum(axis=0), Su, np.array([g_sum])]


def product_loss_and_gradient(network, instance, *, targets=None, precision="float64"):
    """MSE over all 4^n support points and its exact gradient, in product form.

    Returns ``(loss, [(dW, db), (du, du0)])`` shaped like :func:`networks.loss_and_gradient`
    (which gives the same numbers on ``instance.support()`` up to float rounding).
    """
    sup = product_support(instance)
    Y = _targets(sup, targets)
    if getattr(network, "depth", None) == 3:
        p3 = depth3_parts(network, dim=sup.dim)
        params = _params3(p3)
        loss, g = _gradient3(params, sup, p3.activation, Y,
                             precision=_check_precision(precision))
        return loss, [(g[0], g[1]), (g[2], g[3]), (g[4][None, :], g[5])]
    parts = depth2_parts(network, dim=sup.dim)
    params = [np.array(parts.W), np.array(parts.b), np.array(parts.u), np.array([parts.u0])]
    loss, g = _gradient(params, sup, _activation_code(parts.activation), parts.activation, Y,
                        _n_blocks(sup), precision=_check_precision(precision))
    return loss, [(g[0], g[1]), (g[2][None, :], g[3])]


def train_product(network, instance, *, targets=None, epochs: int = 1000, lr: float = 1e-3,
                  batch_size: "int | None" = None, seed=0, weight_bound: "float | None" = None,
                  target_loss: "float | None" = None, tol: float = 1e-9,
                  patience: "int | None" = 100, betas=(0.9, 0.999), eps: float = 1e-8,
                  mask=None, blas: "int | None" = 1, progress: bool = False,
                  desc: str = "train (product form)", precision: str = "float32",
                  max_seconds=DEFAULT, stall_window: "int | None" = None,
                  stall_tol: float = 1e-3, freeze_first: bool = False,
                  device: "str | None" = None) -> TrainResult:
    """Adam on the MSE over all 4^n support points of a hard instance, in product form.

    Parameters
    ----------
    network : networks.SigmaNetwork
        Depth 2 or 3, input dimension d = 2m of the instance; not modified.  Depth 3 (dims
        [d, w1, w2, 1]): the first layer in product form (α(a) + β(b) + b1); a ReLU full-batch
        epoch is one fused float32-lane pass (``precision="float32"``), otherwise the second
        layer is a float64 BLAS matmul over tiles of rows of the 2^n × 2^n × w1 activations
        (:func:`networks.product.depth3.depth3_pass`); never the 4^n × d input.
    instance : embeddings.HardInstance (or ProductSupport)
    targets : float64 (2^n, 2^n), optional
        Y[a, b] (rows = Alice); default IP(a, b) (f_d on the support).
    epochs, lr, tol, patience, target_loss, betas, eps, weight_bound, seed
        As in :func:`networks.train` (full batch: one step per epoch; ``seed`` only orders the
        mini-batches).
    batch_size : int, optional
        Mini-batches of this many pairs (a, b) from a fresh permutation each epoch.
    mask : bool (w, d), optional
        Coordinates each neuron may read (sparse-neuron regime, THEORY §4.8): other first-layer
        weights are set to 0 and stay 0.
    blas : int or None
        Pin BLAS to this many threads during training (threadpoolctl; default 1, measured to
        help on a shared machine, see BENCHMARKS.md); None leaves BLAS alone.
    progress : bool
        Progress bar over epochs.
    precision : "float32" (default) or "float64"
        Working precision of the full-batch pass of a ReLU net, depth 2 or 3 (other
        activations and mini-batches always run in float64).  Depth 3: layer-1 and layer-2
        pre-activations, the masks and W2ᵀ·δ in float32 lanes, the residual, loss and every
        gradient sum in float64 (:mod:`networks.product._kernels_train3`); gradient within
        1e-4 relative (max-norm) of the float64 pass, about 1e-8 when both see the same
        float32-rounded inputs (tests/test_train_product3_f32.py).  "float32": pre-activations, ReLU
        and the sum over neurons in float32 vector lanes, the residual, loss and every gradient
        accumulation in float64 (float32 partial sums over at most a few hundred terms first;
        :mod:`networks.product._kernels_train32`); measured 3.9-6.1x faster per epoch than
        the float64 trainer at n = 10-12 (BENCHMARKS.md, T1 runs C, D, same run),
        gradient within 1e-4 relative (max-norm)
        of the float64 one (tests/test_train_product32.py).  Default because training is where
        E21-E23 and the reduction spend their time and a float32 gradient is as good a descent
        direction; the trajectory differs from "float64" by rounding only.  "float64" is the
        exact-arithmetic reference (equal to :func:`networks.train` to ~1e-12).  The returned
        network, ``final_loss`` and every exact metric (:func:`networks.support_metrics`) are
        float64 either way.

    stall_window, stall_tol : int or None, float
        Convergence-based stopping: stop (``reason="stalled"``) at the first epoch t ≥
        ``stall_window`` where the best loss so far fell by less than ``stall_tol`` (relative)
        over the last ``stall_window`` epochs, ``best[t − window] − best[t] < stall_tol ·
        best[t − window]`` (the running best, so one noisy Adam step neither stops nor extends a
        run).  None (default): no such rule (``patience``/``tol`` and the epoch budget only).
    freeze_first : bool
        Keep the first hidden layer (its weights and biases) fixed: its gradients are replaced
        by zeros before the Adam step, so its moments stay 0 and its update is exactly 0.
    max_seconds : float or None
        Refuse a run whose estimated time for ``epochs`` epochs exceeds this (RunTooLongError,
        raised after about 0.04 s of measured epochs, compilation excluded); default
        ``$DEPTHSEP_MAX_SECONDS``, else 600 s; None: no limit.  The memory a run needs is
        estimated before anything is allocated and a run beyond 80% of the available memory is
        refused (DimensionError, with the estimate).

    device : {"cpu", "cpu-torch", "cuda", "cuda:<index>"}, optional
        Where a full-batch float32 epoch of a depth-2 or depth-3 ReLU net runs: "cpu" (the
        numba kernels, the default), or PyTorch (the optional ``torch`` extra) on the CPU or a
        GPU: the same loss and gradient (float32 pass, float64 sums;
        :mod:`networks.product._torch`, :mod:`networks.product._torch3`).  Adam,
        ``final_loss`` and the exact metrics stay on the host in float64.  Default
        ``$DEPTHSEP_TRAIN_DEVICE``, else "cpu".  Other activations, mini-batches and
        ``precision="float64"`` run on "cpu" only (refused elsewhere).
        ``history["settings"]["device"]`` names the device that trained.

    Epochs are processed in slices of rows of about 0.05 s: a Ctrl-C (KeyboardInterrupt)
    lands between slices, not after a whole epoch.  A non-finite loss, or a loss above
    :data:`DIVERGED_FACTOR` times the first, stops the run with InvalidNetworkError.

    Returns
    -------
    networks.TrainResult
        ``history`` as :func:`networks.train`'s, with ``reached_target`` (bool, when a
        ``target_loss`` was given) and ``settings["form"] = "product"``.
    """
    from networks.product import _torch

    sup = product_support(instance)
    device = _torch.resolve_device(device)
    if getattr(network, "depth", None) == 3:
        p3 = depth3_parts(network, dim=sup.dim)
        act, dims, params = p3.activation, [sup.dim, *p3.widths, 1], _params3(p3)
        grad_fn = _Depth3Grad(sup, act, _check_precision(precision))
    else:
        parts = depth2_parts(network, dim=sup.dim)
        act, dims = parts.activation, [sup.dim, parts.width, 1]
        params = [np.array(parts.W), np.array(parts.b), np.array(parts.u), np.array([parts.u0])]
        grad_fn = _Depth2Grad(sup, act, _check_precision(precision))
    if device != "cpu":
        if not (grad_fn.full_batch_precision == "float32" and batch_size is None):
            raise InvalidNetworkError(
                f"device={device!r} trains depth-2 and depth-3 ReLU networks full batch with "
                f"precision='float32' only (got depth {len(dims) - 1}, {act.name}, "
                f"batch_size={batch_size}, precision={precision!r}); use device='cpu'")
        grad_fn.set_device(device)
    Y = _targets(sup, targets)
    mask = _check_mask(mask, params[0].shape)
    settings = _settings(epochs, lr, batch_size, seed, weight_bound, tol, patience, target_loss,
                         betas, eps, mask, blas, sup, dims, act)
    settings["precision"] = grad_fn.full_batch_precision
    stall = _check_stall(stall_window, stall_tol)
    settings["stall_window"], settings["stall_tol"] = stall
    settings["device"] = _torch.device_label(device)
    if batch_size is None:
        check_table_memory(sup.n, what="target table")
    check_training_memory(sup, dims, batch_size)
    limit = resolve_max_seconds(max_seconds)
    if mask is not None:
        params[0] *= mask
    if weight_bound is not None:
        for p in params:
            np.clip(p, -weight_bound, weight_bound, out=p)
    adam = _Adam(params, float(lr), tuple(float(x) for x in betas), float(eps), weight_bound, mask)
    settings["freeze_first"] = bool(freeze_first)
    if freeze_first:
        adam = _FrozenFirst(adam)
    t0 = time.perf_counter()
    with blas_threads(blas), _numba_threads(sup.size ** 2 * params[0].shape[0]):
        losses, reason = _loop(params, adam, sup, grad_fn, Y, epochs, batch_size,
                               as_rng(seed), target_loss, tol, patience, progress, desc,
                               _TimeLimit(limit, epochs, desc), stall)
        t_loop = time.perf_counter() - t0
        final = _final_loss(grad_fn, params, Y)
    layers = [DenseLayer(params[k], params[k + 1]) for k in range(0, len(params) - 2, 2)]
    net = SigmaNetwork(layers + [DenseLayer(params[-2][None, :], params[-1])], activation=act)
    history = {"loss": losses, "epochs": len(losses), "stopped_early": reason != "epochs",
               "reason": reason, "final_loss": final, "best_loss": min(losses + [final]),
               "seconds": time.perf_counter() - t0, "loop_seconds": t_loop,
               "settings": settings}
    if target_loss is not None:
        history["reached_target"] = bool(final <= target_loss)
    return TrainResult(net, history)


class _Depth2Grad:
    """(params, Y, batch=None) -> (loss, grads) of a depth-2 net in product form."""

    def __init__(self, sup, act, precision="float64"):
        self.sup, self.act, self.code, self.n_blocks = sup, act, _activation_code(act), _n_blocks(sup)
        self.precision = precision
        self.torch_pass = None          # a TorchDepth2Pass: full-batch epochs on a torch device

    def set_device(self, device: str) -> None:
        """Run full-batch epochs on the torch ``device``."""
        from networks.product._torch import TorchDepth2Pass

        self.torch_pass = TorchDepth2Pass(device)

    @property
    def full_batch_precision(self) -> str:
        """The working precision of a full-batch epoch (float32 only for ReLU)."""
        return "float32" if self.code == 0 and self.precision == "float32" else "float64"

    def __call__(self, params, Y, batch=None, precision=None, check=None):
        return _gradient(params, self.sup, self.code, self.act, Y,
                         0 if batch is not None else self.n_blocks, batch=batch,
                         precision=precision or self.precision, check=check,
                         torch_pass=self.torch_pass)

    def warm_up(self, batch: bool) -> None:
        """Compile (or load from the cache) the kernels the epochs use, on a 4 × 4 problem, so
        that the first epoch (and the progress bar's rate) does not include compilation."""
        if self.code < 0:
            return
        z = np.zeros((4, 1))
        if self.torch_pass is not None and not batch:      # device start-up, not a compile
            self.torch_pass(z, z, np.zeros(1), 0.0, np.zeros((4, 4)))
            return
        if batch:
            idx = np.zeros(1, dtype=np.int64)
            _batch_pass(self.code, self.act, z, z, np.zeros(1), np.zeros(1), 0.0, idx, idx,
                        np.zeros(1))
        else:
            _full_pass(self.code, self.act, z, z, np.zeros(1), np.zeros(1), 0.0,
                       np.zeros((4, 4)), 1, self.precision)


def _final_loss(grad_fn, params, Y) -> float:
    """``final_loss`` always in float64: for depth 2 the reference pass's loss, computed by its
    forward half alone (``_kernels._loss_rows``, the same bits, so a float32 run compiles no
    float64 training kernel), on threads over ranges of rows; for depth 3 the float64 tiles'
    forward half (:func:`_loss3`, the same bits as their loss); otherwise the reference pass."""
    if isinstance(grad_fn, _Depth2Grad) and grad_fn.code >= 0:
        from circuits.utils._threads import run_ranges, work_threads

        W, b, u, u0 = params
        sup, m = grad_fn.sup, grad_fn.sup.m
        A = np.ascontiguousarray(sup.XA @ W[:, :m].T)
        Bt = np.ascontiguousarray((sup.XB @ W[:, m:].T).T)
        rows = np.empty(A.shape[0])
        step = max(1, A.shape[0] // 16)
        bounds = [(a, min(A.shape[0], a + step)) for a in range(0, A.shape[0], step)]
        args = (A, Bt, np.ascontiguousarray(b, dtype=np.float64),
                np.ascontiguousarray(u, dtype=np.float64), float(u0[0]), grad_fn.code, Y, rows)
        run_ranges(lambda lo, hi: _kernels._loss_rows(*args, lo, hi), bounds,
                   work_threads(len(bounds)))
        return math.fsum(rows.tolist()) / float(A.shape[0] * Bt.shape[1])
    if isinstance(grad_fn, _Depth3Grad):
        return _loss3(params, grad_fn.sup, grad_fn.act, Y)         # forward only, same bits
    return grad_fn(params, Y, precision="float64")[0]


class _Depth3Grad:
    """(params, Y, batch=None) -> (loss, grads) of a depth-3 net (first layer in product form)."""

    def __init__(self, sup, act, precision="float64"):
        self.sup, self.act, self.precision = sup, act, precision
        self.torch_pass = None          # a TorchDepth3Pass: full-batch epochs on a torch device

    def set_device(self, device: str) -> None:
        """Run full-batch epochs on the torch ``device``."""
        from networks.product._torch3 import TorchDepth3Pass

        self.torch_pass = TorchDepth3Pass(device)

    @property
    def full_batch_precision(self) -> str:
        """The working precision of a full-batch epoch (float32 only for ReLU)."""
        return ("float32" if _activation_code(self.act) == 0 and self.precision == "float32"
                else "float64")

    def __call__(self, params, Y, batch=None, precision=None, check=None):
        return _gradient3(params, self.sup, self.act, Y, batch=batch, check=check,
                          precision=precision or self.precision, torch_pass=self.torch_pass)

    def warm_up(self, batch: bool) -> None:
        """Compile (or load from the cache) the float32 kernel on a 4 × 4 problem (the float64
        path and mini-batches are numpy: nothing to compile); a torch device: start it."""
        if batch or self.full_batch_precision != "float32":
            return
        from networks.product._pass3 import depth3_pass32

        z = np.zeros((4, 1))
        if self.torch_pass is not None:
            self.torch_pass(z, z, np.zeros((1, 1)), np.zeros(1), np.zeros(1), 0.0,
                            np.zeros((4, 4)))
            return
        depth3_pass32(z, z, np.zeros((1, 1)), np.zeros(1), np.zeros(1), 0.0, np.zeros((4, 4)))


def _loop(params, adam, sup, grad_fn, Y, epochs, batch_size, rng, target_loss, tol, patience,
          progress, desc, limit, stall=(None, None)):
    losses, best, since, reason = [], math.inf, 0, "epochs"
    bests: list = []
    total = sup.size * sup.size
    full = batch_size is None or batch_size >= total
    grad_fn.warm_up(batch=not full)          # compile before the clock and the progress bar
    limit.t0 = time.perf_counter()
    first = []
    with np.errstate(over="ignore", invalid="ignore"), \
            progress_bar(epochs, enabled=progress, desc=desc, unit="epoch") as bar:
        for epoch in range(epochs):
            limit.start_epoch(epoch)
            if full:
                loss, grads = grad_fn(params, Y, check=limit)
                _finite(loss, epoch, adam.lr, first)
                losses.append(loss)
                if target_loss is not None and loss <= target_loss:
                    reason = "target_loss"
                    break
                adam(grads)
            else:
                loss = _minibatch_epoch(params, adam, sup, grad_fn, Y, batch_size, rng, epoch,
                                        first)
                losses.append(loss)
                if target_loss is not None and loss <= target_loss:
                    reason = "target_loss"
                    break
            limit.end_epoch(epoch)
            bar.update(1)
            bests.append(min(loss, bests[-1]) if bests else loss)
            if _stalled(bests, stall):
                reason = "stalled"
                break
            if loss < best - tol:
                best, since = loss, 0
            else:
                since += 1
                if patience is not None and since >= patience:
                    reason = "patience"
                    break
    return losses, reason


def _minibatch_epoch(params, adam, sup, grad_fn, Y, batch_size, rng, epoch, first) -> float:
    n = sup.n
    order = rng.permutation(sup.size * sup.size).astype(np.int64)
    acc = 0.0
    for start in range(0, order.size, batch_size):
        k = order[start:start + batch_size]
        ia, ib = k >> n, k & (sup.size - 1)              # pair index a·2^n + b
        y = np.ascontiguousarray(Y[ia, ib])
        loss_b, grads = grad_fn(params, Y, batch=(ia, ib, y))
        _finite(loss_b, epoch, adam.lr, first)
        acc += loss_b * k.size
        adam(grads)
    return acc / order.size
