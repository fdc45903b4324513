"""Slow, obviously correct twins for networks.constructions and networks.legendre.

Plain Python loops and exact arithmetic (fractions, Python ints); no numpy linear algebra and
nothing shared with the library code they check.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction


# ----------------------------------------------------------------------------- Legendre
def moment(d, k):
    """E t^k under mu_d, exact: 0 for odd k, (k-1)!!/prod_{j<k/2}(d + 2j) for even k."""
    if k % 2:
        return Fraction(0)
    out = Fraction(1)
    for j in range(k // 2):
        out *= Fraction(2 * j + 1, d + 2 * j)
    return out


def legendre_gram_schmidt(n_max, d):
    """P_0..P_{n_max} in dimension d as exact coefficient lists (Fractions, increasing powers),
    by Gram-Schmidt of 1, t, t^2, ... under mu_d, normalised by P_n(1) = 1."""
    def inner(p, q):
        return sum(a * b * moment(d, i + j) for i, a in enumerate(p) for j, b in enumerate(q))

    basis = []
    for n in range(n_max + 1):
        p = [Fraction(0)] * n + [Fraction(1)]
        for q in basis:
            c = inner(p, q) / inner(q, q)
            p = [a - c * (q[i] if i < len(q) else 0) for i, a in enumerate(p)]
        p = [a / sum(p) for a in p]                 # P_n(1) = sum of coefficients
        basis.append(p)
    return basis


def eval_poly(coeffs, t):
    return sum(float(c) * t ** i for i, c in enumerate(coeffs))


def harmonic_dimension_by_counting(d, n):
    """#monomials of degree n minus #monomials of degree n - 2 in d variables, by enumeration."""
    def count(deg):
        if deg < 0:
            return 0
        return sum(1 for _ in itertools.combinations_with_replacement(range(d), deg))
    return count(n) - count(n - 2)


# ----------------------------------------------------------------------------- interpolants
def interpolate(xs, ys, t):
    """Piecewise-linear interpolation through (xs, ys) (increasing xs), extended linearly by
    the end slopes on both sides."""
    if t <= xs[0]:
        s = (ys[1] - ys[0]) / (xs[1] - xs[0])
        return ys[0] + s * (t - xs[0])
    for i in range(len(xs) - 1):
        if xs[i] <= t <= xs[i + 1]:
            s = (ys[i + 1] - ys[i]) / (xs[i + 1] - xs[i])
            return ys[i] + s * (t - xs[i])
    s = (ys[-1] - ys[-2]) / (xs[-1] - xs[-2])
    return ys[-1] + s * (t - xs[-1])


def lemma_knots(L, R, eps):
    """Nodes 0, h, 2h, ..., R of the Lipschitz lemma (h = eps/L, J = ceil(RL/eps))."""
    J = max(1, math.ceil(R * L / eps * (1 - 1e-12)))
    h = eps / L
    pos = [min(j * h, R) for j in range(J)] + [R]
    return pos


def lemma_eval(f, L, R, eps, t):
    """The lemma's network value at t: interpolant at -R..R, extended by the end slopes."""
    pos = lemma_knots(L, R, eps)
    xs = [-p for p in reversed(pos[1:])] + pos
    ys = [float(f(x)) for x in xs]
    return interpolate(xs, ys, t)


# ----------------------------------------------------------------------------- §3.2 nets
def relu(v):
    return v if v > 0 else 0.0


def tri_output(S, n):
    """r_0 + sum_{k=1}^n 2(-1)^k r_k with r_k = ReLU(S - k)."""
    return relu(S) + sum(2 * (-1) ** k * relu(S - k) for k in range(1, n + 1))


def ip_depth3_eval(x, n, m):
    s = math.sqrt(m / 2)
    S = sum(relu(s * (x[i] + x[m + i])) for i in range(n))
    return tri_output(S, n)


def ip_depth3_box_eval(x, n, m, tau):
    s = (1 + tau) * math.sqrt(m / 2)
    S = 0.0
    for i in range(n):
        t = s * (x[i] + x[m + i])
        S += (relu(t - tau) - relu(t - 1 + tau)) / (1 - 2 * tau)
    return tri_output(S, n)


def ip_rcube_eval(x, n):
    S = sum(relu(4 * (x[i] + x[n + i]) - 5) - relu(4 * (x[i] + x[n + i]) - 6) for i in range(n))
    return tri_output(S, n)


def ip_of_bits(a, b):
    return sum(ai & bi for ai, bi in zip(a, b)) % 2


# ----------------------------------------------------------------------------- Daniely, SES
def daniely_eval(g, L, d, eps, x, xp):
    inner = 0.5 * sum(lemma_eval(lambda t: t * t, 4.0, 2.0, eps / (L * d), x[j] + xp[j])
                      for j in range(d)) - 1.0
    return lemma_eval(g, L, 1.0, eps / 2, inner)


def squared_norm_eval(x, K):
    xs = [-1 + 2 * j / K for j in range(K + 1)]
    ys = [v * v for v in xs]
    return sum(interpolate(xs, ys, xi) for xi in x)
