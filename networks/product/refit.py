"""The best output layer of a depth-2 network on all 4^n support points (exact least squares
over blocks of rows of the product-form feature table)."""

from __future__ import annotations

import numpy as np

from networks.product._steps import _targets
from networks.product.parts import depth2_parts
from networks.product.support import product_support
from networks.sigma import DenseLayer, SigmaNetwork

__all__ = ["refit_output_layer"]


def refit_output_layer(network, instance, *, activation=None, targets=None) -> SigmaNetwork:
    """The best output layer (exact least squares on all 4^n support points) for the hidden layer
    of ``network`` read with ``activation`` (default its own σ).

    Used to turn a sigmoid surrogate into a Heaviside network with the same (W, b).  The normal
    equations are accumulated over blocks of rows of the product-form feature table, so memory is
    O(rows·2^n·w), never 4^n × d.
    """
    from networks.activations import get_activation

    sup = product_support(instance)
    parts = depth2_parts(network, dim=sup.dim)
    act = parts.activation if activation is None else get_activation(activation)
    Y = _targets(sup, targets)
    m, w = sup.m, parts.width
    A = sup.XA @ parts.W[:, :m].T
    B = sup.XB @ parts.W[:, m:].T + parts.b
    G = np.zeros((w + 1, w + 1))
    h = np.zeros(w + 1)
    rows = max(1, (1 << 20) // max(1, sup.size * w))
    for a0 in range(0, sup.size, rows):
        F = act(A[a0:a0 + rows, None, :] + B[None, :, :]).reshape(-1, w)
        F = np.concatenate([F, np.ones((F.shape[0], 1))], axis=1)
        G += F.T @ F
        h += F.T @ Y[a0:a0 + rows].reshape(-1)
    coef = np.linalg.lstsq(G, h, rcond=None)[0]
    return SigmaNetwork([DenseLayer(parts.W, parts.b), DenseLayer(coef[None, :-1], coef[-1:])],
                        activation=act)
