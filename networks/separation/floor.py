"""The explicit depth-2 IP_j floor of E23: a depth-2 ReLU net of width j·2^{j−1} computing IP_j
exactly, whose correlation with IP_n is 2^{j−n}; its scale-free measures (cos, best-affine R²)."""

from __future__ import annotations

import math

import numpy as np

from circuits.utils.validation import check_int

__all__ = ["floor_j", "ip_floor", "ip_floor_cos", "ip_floor_r2", "explicit_ip_j", "exact_ip_rho"]


def floor_j(width: int) -> int:
    """The largest j with j·2^{j−1} ≤ width (0 at width 0): the IP_j the explicit depth-2 net of
    that width computes (:func:`explicit_ip_j`)."""
    width = check_int(width, name="width", minimum=0, what="hidden units")
    j = 0
    while (j + 1) * 2 ** j <= width:
        j += 1
    return j


def ip_floor(n: int, width: int) -> float:
    """ρ of the explicit depth-2 IP_j net of at most ``width`` units against IP_n: 2^{j−n},
    j = min(n, j(width)) with j(width) from :func:`floor_j`; 2^{-n} (the constant 0) at width 0."""
    return 2.0 ** (min(n, floor_j(width)) - n)


def ip_floor_cos(n: int, width: int) -> float:
    """cos = ρ/√E[Ñ²] of the explicit IP_j net of at most ``width`` units against IP_n: 2^{j−n}."""
    j = min(n, floor_j(width))
    return 2.0 ** (j - n) if j >= 1 else 0.0


def ip_floor_r2(n: int, width: int) -> float:
    """Best-affine R² (squared Pearson correlation) of the explicit depth-2 IP_j net of at most
    ``width`` units against IP_n, exact: with H_k = (−1)^{IP_k}, E[H_j H_n] = 2^{j−n},
    E[H_j] = 2^{−j}, E[H_n] = 2^{−n}, so corr = (2^{j−n} − 2^{−j−n})/√((1 − 4^{−j})(1 − 4^{−n}))
    (about 4^{j−n}); 0 at width 0.  Scale-free: any affine rescaling of a net keeps its best-affine
    R², so a trained net and the {0, 1}-valued floor net are compared on the same footing."""
    j = min(n, floor_j(width))
    if j < 1:
        return 0.0
    if j == n:
        return 1.0
    c = (2.0 ** (j - n) - 2.0 ** (-j - n)) / math.sqrt((1 - 4.0 ** -j) * (1 - 4.0 ** -n))
    return c * c


def explicit_ip_j(instance, j: int):
    """Depth-2 ReLU net of width j·2^{j−1} computing IP_j(a, b) (parity of the first j ANDs)
    exactly on the support of μ₀ (half the j·2^j of writing each threshold gate of THEORY §1.4's
    MAJ∘MAJ construction as two ReLUs).

    On the support the systematic coordinates give the bits affinely: a_i = (√(2m)·x_i + 1)/2,
    b_i = (√(2m)·x_{m+i} + 1)/2 (i < n).  For every c ∈ {0,1}^j, c ≠ 0, the integer
    z_c = (j+1)(Σ_{c_i=1} a_i − Σ_{c_i=0} a_i) + Σ_{c_i=1} b_i equals (j+1)|c| + s with
    s = |c ∧ b| when a_{<j} = c, and is at most (j+1)|c| − 1 otherwise.  With s = z_c − (j+1)|c|
    the parity is the triangle wave s mod 2 = ReLU(s) + Σ_{k=1}^{|c|−1} 2(−1)^k ReLU(s − k) on
    0 ≤ s ≤ |c|, and every term vanishes for s ≤ −1: |c| units per c, Σ_c |c| = j·2^{j−1} units,
    output weights 1 and ±2, output bias 0.  Its correlation with IP_n is
    E[(−1)^{IP_j + IP_n}] = Π_{i ≥ j} E[(−1)^{a_i b_i}] = 2^{j−n} (each remaining AND is 1 with
    probability 1/4, so E[(−1)^{a_i b_i}] = 1/2).
    """
    from networks.sigma import DenseLayer, SigmaNetwork

    n, m = instance.n, instance.m
    j = check_int(j, name="j", minimum=1, maximum=n, what="ANDs in the parity (IP_j)")
    s = math.sqrt(2 * m)
    rows, biases, outs = [], [], []
    for c in range(1, 1 << j):
        ones = [i for i in range(j) if (c >> i) & 1]
        size = len(ones)
        w = np.zeros(2 * m)
        const = 0.0
        for i in range(j):
            sign = 1.0 if (c >> i) & 1 else -1.0
            w[i] += sign * (j + 1) * s / 2
            const += sign * (j + 1) / 2
        for i in ones:
            w[m + i] += s / 2
            const += 0.5
        for k in range(size):                       # ReLU(s - k), s = z_c - (j+1)|c|
            rows.append(w)
            biases.append(const - (j + 1) * size - k)
            outs.append(1.0 if k == 0 else 2.0 * (-1) ** k)
    W = np.array(rows)
    return SigmaNetwork([DenseLayer(W, np.array(biases)),
                         DenseLayer(np.array(outs)[None, :], np.zeros(1))], activation="relu")


def exact_ip_rho(net, instance) -> float:
    """ρ = E[(−1)^{IP}(1 − 2N)] over all 4^n pairs, exact float64."""
    from networks.separation.ceiling import exact_correlation
    from networks.separation.targets import target_table

    return exact_correlation(net, instance, target_table("ip", instance.n))["rho"]
