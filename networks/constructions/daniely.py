"""THEORY §3.4: Daniely's depth-3 ReLU network for g(<x, x'>) on S^{d-1} x S^{d-1}.

The Legendre analysis behind Daniely's depth-2 lower bound is :mod:`networks.legendre`.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from circuits.utils.validation import check_real
from networks.constructions._common import (Construction, _callable, _int_at_least,
                                            lipschitz_profile)
from networks.sigma import DenseLayer, SigmaNetwork

__all__ = ["inner_product_depth3"]


def inner_product_depth3(g: Callable, lipschitz: float, d: int, eps: float) -> Construction:
    """Daniely's depth-3 ReLU network for F(x, x') = g(<x, x'>) on S^{d-1} x S^{d-1} (THEORY §3.4).

    Input (x, x') in R^{2d}.  Layer 1 (width d 2 ceil(8Ld/eps)): for each j the Lipschitz-lemma
    approximant q of t^2 on [-2, 2] (L = 4, accuracy eps/(L d)) applied to x_j + x'_j, so
    N_i = (1/2) sum_j q(x_j + x'_j) - 1 ~ <x, x'> to eps/(2L).  Layer 2 (width 2 ceil(2L/eps)):
    the lemma's approximant N_g of g on [-1, 1] to eps/2 applied to N_i (N_g is L-Lipschitz on R,
    so N_i slightly outside [-1, 1] is harmless).  sup error <= L eps/(2L) + eps/2 = eps; weights
    O(1 + L).

    Parameters
    ----------
    g : callable
        Vectorised, L-Lipschitz on [-1, 1].
    lipschitz : float
        L.
    d : int
        Sphere dimension (x in R^d).
    eps : float
        Target sup error.

    Examples
    --------
    >>> c = inner_product_depth3(lambda t: np.sin(np.pi * t), np.pi, 3, 0.2)
    >>> c.widths, c.width_formula                         # THEORY: 2262 = 16 d^2 L / eps, 64
    ((2262, 64), (2262, 64))
    >>> from circuits.utils.rng import uniform_sphere
    >>> X = np.hstack([uniform_sphere(500, 3, seed=1), uniform_sphere(500, 3, seed=2)])
    >>> bool(c.measured_error(X) <= c.error_bound <= 0.2)
    True
    """
    g = _callable(g, name="g")
    L = check_real(lipschitz, minimum=0, name="lipschitz", what="Lipschitz constant of g on [-1, 1]")
    d = _int_at_least(d, name="d", minimum=1, what="sphere dimension, x in R^d")
    e = check_real(eps, minimum=0, name="eps", what="target sup error")
    q = lipschitz_profile(np.square, 4.0, 2.0, e / (L * d))
    ng = lipschitz_profile(g, L, 1.0, e / 2)
    mq = q.width
    # layer 1: unit (j, i) = ReLU(alpha_i (x_j + x'_j) + beta_i)
    W1 = np.zeros((d * mq, 2 * d))
    rows = np.arange(d * mq)
    j_of = rows // mq
    a_rep = np.tile(q.alpha, d)
    W1[rows, j_of] = a_rep
    W1[rows, d + j_of] = a_rep
    b1 = np.tile(q.beta, d)
    # N_i = u . h + u0
    u = 0.5 * np.tile(q.gamma, d)
    u0 = 0.5 * d * q.const - 1.0
    W2 = np.outer(ng.alpha, u)
    b2 = ng.alpha * u0 + ng.beta
    net = SigmaNetwork([DenseLayer(W1, b1), DenseLayer(W2, b2),
                        DenseLayer(ng.gamma.reshape(1, -1), [ng.const])], activation="relu")
    delta = 0.5 * d * q.error_bound                       # |N_i - <x, x'>|
    bound = ng.lipschitz * delta + ng.error_bound
    J1 = int(math.ceil(8 * L * d / e * (1 - 1e-12)))
    J2 = int(math.ceil(2 * L / e * (1 - 1e-12)))

    def target(X, _d=d):
        X = np.asarray(X, dtype=np.float64)
        return np.asarray(g(np.einsum("ij,ij->i", X[:, :_d], X[:, _d:])), dtype=np.float64)

    return Construction(
        network=net, name="inner_product_depth3", target=target,
        width_formula=(d * 2 * J1, 2 * J2),
        formula="d * 2 ceil(8 L d / eps) (= 16 d^2 L / eps when integral), 2 ceil(2 L / eps)",
        weight_formula=max(4.0, 2.0, 2 * L, abs(ng.const)), error_bound=bound, accuracy=e,
        domain=f"S^{d - 1} x S^{d - 1}",
        params={"d": d, "lipschitz": L, "eps": e, "inner_error_bound": delta,
                "outer_error_bound": ng.error_bound})
