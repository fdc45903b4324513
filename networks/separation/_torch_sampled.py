"""Optional PyTorch backend of the sampled mode: the grid step and the estimator's
forward pass on any torch device (a GPU where one is present), float64 throughout.

Only the arithmetic moves: the pairs (numpy generators seeded per step / per chunk), the labels
(:func:`networks.separation.targets.target_values` on the host), the code rows, the Adam update
(float64 on the host) and the estimator's moments and intervals
(:func:`networks.separation.sampled.estimate`) are the ones the CPU path uses.  The step is the
numpy twin of :func:`networks.separation.sampled.grid_loss_and_gradient` written with torch
tensors, in row blocks so that no temporary exceeds ``max_terms`` float64 numbers; the CPU and
the torch paths agree to float64 rounding (tests/test_sampled_torch.py, which skips without
torch).  torch is never required: ``device=None`` (the default) is the numba path.
"""

from __future__ import annotations

import numpy as np

from circuits.utils.errors import InvalidArgumentError

#: Largest (rows × K_b × w) block of float64 temporaries per device kind.
MAX_TERMS = {"cuda": 1 << 27, "cpu": 1 << 23}


def resolve_device(device):
    """``None`` for the default numba path, else a ``torch.device`` (errors name the fix)."""
    if device is None:
        return None
    if not isinstance(device, str) and type(device).__name__ != "device":
        raise InvalidArgumentError(f"device must be None (the CPU kernels) or a torch device "
                                   f"name such as 'cuda', 'cuda:0' or 'cpu', got {device!r}")
    try:
        import torch
    except ImportError:
        raise InvalidArgumentError(f"device={device!r} needs PyTorch: pip install -e "
                                   f"'.[torch]' in the checkout, or leave device unset for "
                                   f"the CPU kernels") from None
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError, ValueError):
        raise InvalidArgumentError(f"device must be a torch device name such as 'cuda', "
                                   f"'cuda:0' or 'cpu', got {device!r}") from None
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise InvalidArgumentError(f"device={device!r}: PyTorch sees no CUDA GPU on this "
                                       f"machine; leave device unset for the CPU kernels")
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            raise InvalidArgumentError(f"device={device!r}: only {torch.cuda.device_count()} "
                                       f"CUDA device(s) present")
    return dev


def _tensor(x, dev):
    import torch

    return torch.as_tensor(np.ascontiguousarray(x, dtype=np.float64), device=dev)


def grid_loss_and_gradient(net, XA, XB, Y, penalty: float, dev, *, max_terms=None):
    """Same contract and formulas as :func:`networks.separation.sampled.grid_loss_and_gradient`
    (numpy twin), computed on ``dev`` in float64; gradients come back as numpy arrays."""
    import torch

    WA, WB, b, u = (_tensor(x, dev) for x in (net.WA, net.WB, net.b, net.u))
    u0 = float(net.u0)
    xa, xb, y = _tensor(XA, dev), _tensor(XB, dev), _tensor(Y, dev)
    alpha = xa @ WA.T                                  # (Ka, w)
    beta = xb @ WB.T + b                               # (Kb, w)
    Ka, w = alpha.shape
    Kb = beta.shape[0]
    count = Ka * Kb
    limit = max_terms or MAX_TERMS.get(dev.type, MAX_TERMS["cpu"])
    rows = max(1, limit // max(1, Kb * w))
    dalpha = torch.empty_like(alpha)
    dbeta = torch.zeros_like(beta)
    du = torch.zeros(w, dtype=torch.float64, device=dev)
    sse = torch.zeros((), dtype=torch.float64, device=dev)
    gsum = torch.zeros((), dtype=torch.float64, device=dev)
    for r0 in range(0, Ka, rows):
        r1 = min(Ka, r0 + rows)
        Z = alpha[r0:r1, None, :] + beta[None, :, :]  # (r, Kb, w)
        act = torch.clamp_min(Z, 0.0)
        err = act @ u + u0 - y[r0:r1]
        sse += (err * err).sum()
        g = (2.0 / count) * err
        du += torch.einsum("abw,ab->w", act, g)
        gsum += g.sum()
        q = (Z > 0).to(torch.float64) * (g[:, :, None] * u)
        dalpha[r0:r1] = q.sum(dim=1)
        dbeta += q.sum(dim=0)
    from networks.separation._sampled_penalty import _with_penalty

    grads = [x.cpu().numpy() for x in (dalpha.T @ xa, dbeta.T @ xb, dbeta.sum(dim=0), du)]
    return _with_penalty(net, penalty, float(sse) / count, grads + [np.array(float(gsum))])


def forward(net, XA, XB, dev) -> np.ndarray:
    """N on the pairs (row i of XA, row i of XB), float64 on ``dev``, as a numpy array."""
    import torch

    WA, WB, b, u = (_tensor(x, dev) for x in (net.WA, net.WB, net.b, net.u))
    Z = _tensor(XA, dev) @ WA.T + _tensor(XB, dev) @ WB.T + b
    out = torch.clamp_min(Z, 0.0) @ u + float(net.u0)
    return out.cpu().numpy()
