"""The path-norm penalty of the sampled mode and its (sub)gradient, shared by the CPU grid step
(:mod:`networks.separation.sampled`) and the torch step (:mod:`networks.separation._torch_sampled`);
it sits below both, so neither imports the other for it."""

from __future__ import annotations

import numpy as np


def _with_penalty(net, penalty: float, mse: float, grads: list):
    """(loss, mse, grads) with ``penalty``·P and its (sub)gradient added to the MSE's; shared
    by the CPU step and the torch step (:mod:`networks.separation._torch_sampled`)."""
    if not penalty:
        return mse, mse, grads
    dWA, dWB, db, du, du0 = grads
    norms = np.sqrt(np.sum(net.WA ** 2, axis=1) + np.sum(net.WB ** 2, axis=1))
    radii = np.abs(net.b) + norms
    loss = mse + penalty * float(np.sum(np.abs(net.u) * radii))
    su = np.abs(net.u) * penalty
    safe = np.where(norms > 0, norms, 1.0)
    return loss, mse, [dWA + (su / safe)[:, None] * net.WA, dWB + (su / safe)[:, None] * net.WB,
                       db + su * np.sign(net.b), du + penalty * np.sign(net.u) * radii, du0]
