"""The depth-2 ReLU full-batch product-form pass in PyTorch (the optional ``torch`` extra), for
``train_product(..., device="cuda")`` or ``device="cpu-torch"`` (private).

Same loss, gradient and precision rule as the CPU float32 pass
(:mod:`networks.product._kernels_train32`): α = X_A W_Aᵀ, β = X_B W_Bᵀ and the bias in float64
(numpy, on the host), Ac = α + bias and β rounded once to float32 and sent to the device; per
pair z_i(a, b) = Ac[a, i] + β[b, i], N = Σ_i u_i relu(z_i) in float32 (a matrix product over the
neurons), then in float64: N + u0, the residual r = N - Y[a, b], Σ r², g = 2r/#pairs, Σ g, and
Qa[a, i] = Σ_b g [z_i > 0], Qb[b, i] = Σ_a g [z_i > 0] (the mask exact, the products g·1 exact,
the sums float64).  Su[i] = Σ_a Ac[a, i] Qa[a, i] + Σ_b β[b, i] Qb[b, i] (float64, host: the
ReLU identity Σ g [z > 0] z) and the gradient assembly are the CPU trainer's.  The CPU pass sums
g in float32 over a tile before float64, this one in float64 throughout, so the two differ by
float32 rounding only (tests/test_train_torch.py: gradients within 1e-4 relative, max-norm).

The pass runs over tiles of rows of the 2^n × 2^n × w activations (at most ``TILE_ELEMENTS``
per tile; a Ctrl-C lands between tiles); Y is sent to the device once per training run.  Adam,
``final_loss`` and every exact metric stay on the host in float64 (the CPU code), so a row's
metrics mean the same whichever device trained it; ``history["settings"]["device"]`` names the
device.  Matrix products run at full float32 precision (no TF32), and on the CPU at numba's
thread count, pinned for the pass (:func:`cpu_threads`; the device label names it): reductions
run in an order fixed for one device, thread count and shape, so rows are reproducible on the
same device and software, not bit-equal across devices.
"""

from __future__ import annotations

import contextlib
import math
import os

import numpy as np

from circuits.utils.errors import InvalidNetworkError, MissingDependencyError

__all__ = ["DEVICES", "ENV_DEVICE", "resolve_device", "TorchDepth2Pass"]

#: ``device`` values of :func:`networks.train_product`: "cpu" (the numba kernels, default),
#: "cpu-torch" (PyTorch on the CPU), "cuda" or "cuda:<index>" (PyTorch on a GPU).
DEVICES = ("cpu", "cpu-torch", "cuda")
#: Environment variable giving the default ``device`` (so a command's cells, in any worker
#: process, train where the command says).
ENV_DEVICE = "DEPTHSEP_TRAIN_DEVICE"
#: Activations per tile (float32 z, bool mask, float64 mask: about 13 bytes each).
TILE_ELEMENTS = {"cpu": 1 << 22, "cuda": 1 << 26}


def resolve_device(device) -> str:
    """The training device: ``device``, else ``$DEPTHSEP_TRAIN_DEVICE``, else "cpu"; checked
    (a torch device needs PyTorch, "cuda" a visible GPU)."""
    name = device if device is not None else (os.environ.get(ENV_DEVICE) or "cpu")
    if not isinstance(name, str):
        raise InvalidNetworkError(f"device must be a string ('cpu', 'cpu-torch', 'cuda' or "
                                  f"'cuda:<index>'), got {name!r}")
    name = name.strip().lower()
    if name == "cpu":
        return name
    cuda = name == "cuda" or (name.startswith("cuda:") and name[5:].isdigit())
    if name != "cpu-torch" and not cuda:
        src = "device" if device is not None else f"${ENV_DEVICE}"
        raise InvalidNetworkError(f"{src} must be 'cpu', 'cpu-torch', 'cuda' or 'cuda:<index>', "
                                  f"got {name!r}")
    try:
        import torch
    except ImportError as exc:
        raise MissingDependencyError(f"device={name!r} needs PyTorch: pip install "
                                     f"'depthsep[torch]' (or train with device='cpu')") from exc
    if cuda:
        if not torch.cuda.is_available():
            raise InvalidNetworkError(f"device={name!r}: PyTorch sees no CUDA device here; use "
                                      f"device='cpu' (numba) or 'cpu-torch'")
        index = int(name[5:]) if ":" in name else 0
        if index >= torch.cuda.device_count():
            raise InvalidNetworkError(f"device={name!r}: only {torch.cuda.device_count()} CUDA "
                                      f"device(s) visible")
        return f"cuda:{index}"
    return name


def cpu_threads() -> int:
    """Threads of a "cpu-torch" pass: numba's thread count (``NUMBA_NUM_THREADS``, the CPU
    kernels' setting), so both CPU paths use the same cores; pinned for every pass, because the
    order of torch's CPU reductions, and so the float rounding, depends on it."""
    import numba

    return max(1, int(numba.get_num_threads()))


def device_label(name: str) -> str:
    """What the rows record: "cpu (numba)", "cpu-torch (torch X, T threads)" or
    "cuda:0 (<GPU name>, torch X)"."""
    if name == "cpu":
        return "cpu (numba)"
    import torch

    if name.startswith("cuda"):
        return f"{name} ({torch.cuda.get_device_name(int(name[5:]))}, torch {torch.__version__})"
    t = cpu_threads()
    return f"cpu-torch (torch {torch.__version__}, {t} thread{'s' if t > 1 else ''})"


@contextlib.contextmanager
def _pinned(torch, threads: "int | None"):
    """Full float32 matrix products (no TF32), no autograd, and on the CPU ``threads`` intra-op
    threads, for one pass; the process's settings are restored afterwards."""
    before = torch.get_float32_matmul_precision()
    t_before = torch.get_num_threads()
    torch.set_float32_matmul_precision("highest")
    if threads is not None and threads != t_before:
        torch.set_num_threads(threads)
    try:
        with torch.no_grad():
            yield
    finally:
        torch.set_float32_matmul_precision(before)
        if torch.get_num_threads() != t_before:
            torch.set_num_threads(t_before)


class TorchPass:
    """What the torch passes share: the device, its tile budget, the targets sent to the device
    once per run, the pass's settings (:meth:`settings`: full float32 precision, pinned CPU
    threads) and the progress check (:meth:`progress`)."""

    def __init__(self, device: str):
        import torch

        self.torch = torch
        self.name = device
        self.dev = torch.device("cpu" if device == "cpu-torch" else device)
        self.tile = TILE_ELEMENTS["cuda" if device.startswith("cuda") else "cpu"]
        self._y = None                  # (host array, device tensor): Y sent once per run
        self.threads = cpu_threads() if device == "cpu-torch" else None

    def settings(self):
        """Context of one pass: no autograd, no TF32, the CPU threads pinned (restored after)."""
        return _pinned(self.torch, self.threads)

    def progress(self, check, fraction: float) -> None:
        """Call the time limit's ``check(fraction)`` once the work so far is done on the device,
        not just queued (a GPU runs asynchronously)."""
        if check is None:
            return
        if self.dev.type == "cuda":
            self.torch.cuda.synchronize(self.dev)
        check(fraction)

    def _targets(self, Y):
        if self._y is None or self._y[0] is not Y:
            self._y = (Y, self.torch.as_tensor(np.ascontiguousarray(Y, dtype=np.float64),
                                               device=self.dev))
        return self._y[1]


class TorchDepth2Pass(TorchPass):
    """``(Ac, B, u, u0, Y, check) -> (Qa, Qb, Su, loss, Σg)``: the full-batch pass of
    :func:`networks.product.train._full_pass` (ReLU, float32 lanes) on a torch device."""

    def __call__(self, Ac, B, u, u0, Y, check=None):
        torch = self.torch
        size, w = Ac.shape
        size_b = B.shape[0]
        total = float(size * size_b)
        f32 = dict(dtype=torch.float32, device=self.dev)
        A32 = torch.as_tensor(np.ascontiguousarray(Ac, dtype=np.float32), **f32)
        B32 = torch.as_tensor(np.ascontiguousarray(B, dtype=np.float32), **f32)
        u32 = torch.as_tensor(np.ascontiguousarray(u, dtype=np.float32), **f32)
        Yd = self._targets(Y)
        f64 = dict(dtype=torch.float64, device=self.dev)
        Qa = torch.zeros((size, w), **f64)
        Qb = torch.zeros((size_b, w), **f64)
        sq = torch.zeros((), **f64)
        gs = torch.zeros((), **f64)
        rows = max(1, self.tile // max(1, size_b * w))
        with self.settings():
            for r0 in range(0, size, rows):
                r1 = min(size, r0 + rows)
                Z = A32[r0:r1, None, :] + B32[None, :, :]          # (rows, #b, w) float32
                M = Z > 0
                N = torch.matmul(torch.where(M, Z, 0.0), u32)      # Σ_i u_i relu(z_i), float32
                r = N.to(torch.float64) + float(u0) - Yd[r0:r1]
                sq += (r * r).sum()
                g = r * (2.0 / total)
                gs += g.sum()
                Mf = M.to(torch.float64)
                Qa[r0:r1] = torch.einsum("ab,abi->ai", g, Mf)
                Qb += torch.einsum("ab,abi->bi", g, Mf)
                self.progress(check, r1 / size)
        Qa_h = Qa.cpu().numpy()
        Qb_h = Qb.cpu().numpy()
        Su = np.einsum("ai,ai->i", Ac, Qa_h) + np.einsum("bi,bi->i", B, Qb_h)
        loss = float(sq.item()) / total
        g_sum = float(gs.item())
        if not math.isfinite(loss):
            loss = float("nan")
        return Qa_h, Qb_h, Su, loss, g_sum
