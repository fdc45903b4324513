"""Exact depth-3 ReLU nets for IP on the hard points with a smaller path norm than THEORY §3.2.

The path norm is the recursive one of E24 (:func:`networks.separation.sampled_verdict.
depth3_path_norm`): Σ_k |v_k|(|c_k| + Σ_i |U_ki|·(|b_i| + ‖w_i‖₂)), output bias excluded; it is
unchanged by ReLU's positive rescaling between layers, so only the shape of the net matters.
All three nets share layer 1 of §3.2, h_i = ReLU(√(m/2)(x_i + x_{m+i})) = a_i·b_i, whose units
cost ‖w_i‖₂ = √m each (an IP net must read the n systematic coordinates of each side, each
±1/√(2m)); they differ in how layers 2–3 compute the parity of h:

* §3.2 (:func:`networks.constructions.ip_depth3_relu`): r_k = ReLU(S − k), k = 0..n, S = Σ h_i,
  output r_0 + Σ 2(−1)^k r_k.  P₃ = n√m(2n + 1) + n(n + 1); r_n is 0 on the support.
* **balanced** (:func:`ip_depth3_balanced`, widths n, n): D = Σ_{i<⌈n/2⌉} h_i − Σ_{i≥⌈n/2⌉} h_i
  ∈ [−⌊n/2⌋, ⌈n/2⌉] has the parity of S; D mod 2 has slope (−1)^j on [j, j + 1], so
  f(D) = ReLU(D) + ReLU(−D) + Σ_{k≥1} 2(−1)^k ReLU(D − k) + Σ_{k≤−1} 2(−1)^k ReLU(k − D)
  (breakpoints at the interior integers only, no linear unit, output bias 0).
  P₃ = 2(n − 1)·n√m + 2Σ_{k<⌈n/2⌉} k + 2Σ_{k<⌊n/2⌋} k — the least path norm of any exact
  layers 2–3 reading h through ±1 block sums of two blocks (a linear programme over all such
  units agrees at n = 8, 12, 16).
* **Fourier** (:func:`ip_depth3_fourier`, widths n, 2^n): with s = 2h − 1 ∈ {±1}^n and
  χ(s) = Π s_i, substituting ε → ε∘s gives Σ_ε Πε·ReLU(ε·s + c) = χ(s)·C_n(c),
  C_n(c) = Σ_j (−1)^j C(n, j)·ReLU(n − 2j + c), so IP = 1/2 − (−1)^n/(2C)·Σ_ε Πε ReLU(ε·s + c).
  Width 2^n, but P₃ = (2^n·2n√m + Σ_j C(n, j)|c − n + 2j|)/(2|C_n(c)|) grows like
  √(2π)·n^2 (against 4n^{2.5}): what the path norm alone permits, at exponential width.

:func:`depth3_norm` gives each P₃ in closed form; :func:`cube_error` evaluates a net on all 4^n
hard points (numba, product form) — the constructions are verified there, not assumed.

>>> [round(depth3_norm(8, net), 1) for net in NETS]
[841.3, 657.6, 296.6]
"""

from __future__ import annotations

import math

import numpy as np

from circuits.utils.errors import InvalidArgumentError
from embeddings.code import code_rows
from networks.constructions._common import Construction, _int_at_least
from networks.constructions.ip import _ip_args, _ip_layers, ip_of_decoded
from networks.sigma import DenseLayer, SigmaNetwork

__all__ = ["ip_depth3_balanced", "ip_depth3_fourier", "depth3_norm", "fourier_offset", "NETS",
           "cube_error", "composed_error", "FOURIER_MAX_N"]

#: The exact depth-3 IP nets: §3.2, balanced (polynomial width), Fourier (width 2^n).
NETS = ("tri", "balanced", "fourier")
#: Largest n at which :func:`ip_depth3_fourier` builds its 2^n-unit layer.
FOURIER_MAX_N = 16


def _blocks(n: int) -> tuple:
    return (n + 1) // 2, n // 2


def _fourier_C(n: int, c: int) -> int:
    return sum((-1) ** j * math.comb(n, j) * max(n - 2 * j + c, 0) for j in range(n + 1))


def _fourier_norm(n: int, c: int, m: int) -> float:
    C = _fourier_C(n, c)
    if C == 0:
        return math.inf
    r = math.sqrt(m)
    return sum(math.comb(n, j) * (2 * n * r + abs(c - n + 2 * j))
               for j in range(n + 1)) / (2 * abs(C))


def fourier_offset(n: int, m: "int | None" = None) -> int:
    """The integer offset c of the Fourier net with the least path norm (C_n(c) ≠ 0)."""
    m = 4 * n if m is None else m
    return min(range(-n, n + 1), key=lambda c: (_fourier_norm(n, c, m), abs(c)))


def depth3_norm(n: int, net: str = "tri", m: "int | None" = None) -> float:
    """P₃(n) of an exact depth-3 IP net in closed form (module docstring), m = 4n by default.

    >>> round(depth3_norm(2, "tri"), 6) == round(2 * math.sqrt(8) * 5 + 6, 6)
    True
    """
    n = _int_at_least(n, name="n", minimum=1, what="bits per party")
    m = 4 * n if m is None else m
    r = math.sqrt(m)
    if net == "tri":
        return n * r * (2 * n + 1) + n * (n + 1)
    if net == "balanced":
        n1, n2 = _blocks(n)
        if n2 == 0:
            return n * r
        return 2 * (n - 1) * n * r + n1 * (n1 - 1) + n2 * (n2 - 1)
    if net == "fourier":
        return _fourier_norm(n, fourier_offset(n, m), m)
    raise InvalidArgumentError(f"net must be one of {NETS}, got {net!r}")


def _construction(n, m, mid, out, name, widths, formula, extra) -> Construction:
    first = _ip_layers(n, m, 0.0)[0]
    net = SigmaNetwork([first, mid, out], activation="relu")
    wmax = max(float(np.abs(layer.weights).max()) for layer in net.layers)
    bmax = max(float(np.abs(layer.bias).max()) for layer in net.layers)
    return Construction(network=net, name=name, target=lambda X: ip_of_decoded(X, n, m),
                        width_formula=widths, formula=formula, weight_formula=max(wmax, bmax),
                        error_bound=0.0, accuracy=0.0,
                        domain="support of mu_0 (the 4^n hard points)",
                        params={"n": n, "m": m, "d": 2 * m, "tau": 0.0,
                                "path_norm_formula": depth3_norm(n, extra, m),
                                "max_abs_weight_no_bias": wmax})


def ip_depth3_balanced(n, m: "int | None" = None) -> Construction:
    """Exact depth-3 ReLU net for IP on the 4^n hard points, widths (n, n), of path norm
    2(n − 1)n√m + ⌈n/2⌉(⌈n/2⌉ − 1) + ⌊n/2⌋(⌊n/2⌋ − 1) (module docstring).

    >>> c = ip_depth3_balanced(4)
    >>> c.widths, round(c.params["path_norm_formula"], 4) == round(2 * 3 * 4 * 4 + 4, 4)
    ((4, 4), True)
    """
    n, m, _ = _ip_args(n, m, None)
    n1, n2 = _blocks(n)
    eps = np.concatenate([np.ones(n1), -np.ones(n2)])
    rows, bias, v = [eps], [0.0], [1.0]                     # ReLU(D)
    if n2 > 0:
        rows.append(-eps)                                   # ReLU(−D)
        bias.append(0.0)
        v.append(1.0)
    for k in range(1, n1):                                  # ReLU(D − k)
        rows.append(eps)
        bias.append(-float(k))
        v.append(2.0 * (-1) ** k)
    for k in range(1, n2):                                  # ReLU(−k − D), breakpoint −k
        rows.append(-eps)
        bias.append(-float(k))
        v.append(2.0 * (-1) ** k)
    mid = DenseLayer(np.array(rows), np.array(bias))
    out = DenseLayer(np.array([v]), [0.0])
    return _construction(n, m, mid, out, "ip_depth3_balanced", (n, len(v)),
                         "n, n; D = (first half of h) − (second half), f(D) = D mod 2",
                         "balanced")


def ip_depth3_fourier(n, m: "int | None" = None) -> Construction:
    """Exact depth-3 ReLU net for IP on the 4^n hard points, widths (n, 2^n), of path norm
    :func:`depth3_norm` (n, "fourier") ~ √(2π)·n² (module docstring); n ≤ :data:`FOURIER_MAX_N`.

    >>> c = ip_depth3_fourier(3)
    >>> c.widths
    (3, 8)
    """
    n, m, _ = _ip_args(n, m, None)
    if n > FOURIER_MAX_N:
        raise InvalidArgumentError(f"n must be <= {FOURIER_MAX_N} for the Fourier net (its second "
                                   f"layer has 2^n units), got {n}; use depth3_norm(n, 'fourier') "
                                   f"for its path norm")
    c = fourier_offset(n, m)
    C = _fourier_C(n, c)
    signs = 1 - 2 * ((np.arange(1 << n)[:, None] >> np.arange(n)) & 1)      # ε ∈ {±1}^n
    prod = np.prod(signs, axis=1).astype(np.float64)
    # ReLU(ε·s + c) with s = 2h − 1: weights 2ε, bias c − Σε
    mid = DenseLayer(2.0 * signs, c - signs.sum(axis=1).astype(np.float64))
    v = -((-1) ** n) * prod / (2.0 * C)
    out = DenseLayer(v.reshape(1, -1), [0.5])
    return _construction(n, m, mid, out, "ip_depth3_fourier", (n, 1 << n),
                         "n, 2^n; IP = 1/2 − (−1)^n/(2C)·Σ_ε Πε ReLU(ε·(2h − 1) + c)", "fourier")


def cube_error(net, generator, n: int) -> float:
    """max |N(x_{a,b}) − IP(a, b)| over all 4^n hard points of a depth-3 net (dims [2m, w1, w2,
    1]) on the code with ``generator``, in product form (numba; never fastmath)."""
    from networks.constructions._kernels_ip import _cube_error

    n = _int_at_least(n, name="n", minimum=1, what="bits per party")
    if n > 14:
        raise InvalidArgumentError(f"n must be <= 14 for the whole cube (4^n points), got {n}")
    L1, L2, L3 = net.layers
    m = np.shape(generator)[1]
    X = code_rows(generator, np.arange(1 << n))
    alpha = X @ L1.weights[:, :m].T
    beta = X @ L1.weights[:, m:].T + L1.bias
    return float(_cube_error(np.ascontiguousarray(alpha), np.ascontiguousarray(beta),
                             np.ascontiguousarray(L2.weights), np.asarray(L2.bias, np.float64),
                             np.asarray(L3.weights[0], np.float64), float(L3.bias[0])))


def composed_error(net, n: int, m: int) -> float:
    """max |N − IP| over all 4^n hard points, through the composition: each layer-1 unit reads
    only coordinates i and m + i (checked), which are ±1/√(2m) by (a_i, b_i), so its four values
    give h_i = a_i·b_i on every pair; layers 2–3 are then evaluated on all 2^n vectors h.  Exact
    for the whole cube at a cost of O(2^n·w₂·n) (the Fourier net at n ≤ 16)."""
    L1, L2, L3 = net.layers
    n = _int_at_least(n, name="n", minimum=1, what="bits per party")
    W = L1.weights
    if W.shape != (n, 2 * m):
        raise InvalidArgumentError(f"layer 1 must have shape ({n}, {2 * m}), got {W.shape}")
    mask = np.zeros_like(W, dtype=bool)
    mask[np.arange(n), np.arange(n)] = mask[np.arange(n), m + np.arange(n)] = True
    if np.any(W[~mask] != 0):
        raise InvalidArgumentError("layer 1 reads coordinates other than i and m + i: use "
                                   "cube_error for a general net")
    s = 1.0 / math.sqrt(2 * m)
    worst = 0.0
    for i in range(n):
        for ai in (0, 1):
            for bi in (0, 1):
                z = W[i, i] * (2 * ai - 1) * s + W[i, m + i] * (2 * bi - 1) * s + L1.bias[i]
                worst = max(worst, abs(max(z, 0.0) - ai * bi))
    H = ((np.arange(1 << n)[:, None] >> np.arange(n)) & 1).astype(np.float64)
    out = np.maximum(H @ L2.weights.T + L2.bias, 0.0) @ L3.weights[0] + L3.bias[0]
    # layer-1 rounding (worst) moves the output by at most Σ|v||U| times it
    amp = float(np.abs(L3.weights[0]) @ np.abs(L2.weights).sum(axis=1))
    return float(np.abs(out - H.sum(axis=1) % 2).max()) + amp * worst
