"""Slow, obviously correct twins of the reduction's computations (Python ints and plain loops)."""

from __future__ import annotations

import math


def popcount(x: int) -> int:
    return bin(x).count("1")


def ip(a: int, b: int) -> int:
    return popcount(a & b) & 1


def chi(u: int, z: int) -> int:
    return -1 if popcount(u & z) & 1 else 1


def twisted_M(V, shifts):
    """M_k[a][b] = (1/k) sum_j chi_s(a) chi_r(b) (-1)^<r,s> V[a^r][b^s], plain loops."""
    size = len(V)
    k = len(shifts)
    M = [[0.0] * size for _ in range(size)]
    for a in range(size):
        for b in range(size):
            acc = 0.0
            for r, s in shifts:
                acc += chi(s, a) * chi(r, b) * chi(r, s) * V[a ^ r][b ^ s]
            M[a][b] = acc / k
    return M


def prefix_margins(V, shifts):
    """min_{a,b} H(a,b) M_t(a,b) for t = 1..k."""
    size = len(V)
    out = []
    for t in range(1, len(shifts) + 1):
        M = twisted_M(V, shifts[:t])
        out.append(min((1 - 2 * ip(a, b)) * M[a][b] for a in range(size) for b in range(size)))
    return out


def depth2_value(W, b, u, u0, sigma, x):
    """u0 + sum_i u_i sigma(<w_i, x> + b_i) with Python floats."""
    return u0 + sum(ui * sigma(sum(wij * xj for wij, xj in zip(wi, x)) + bi)
                    for wi, bi, ui in zip(W, b, u))


def gate_layer_value(bottom_w, bottom_t, top_w, c):
    """sum_g top_w[g] [<bottom_w[g], c> >= bottom_t[g]] in exact Python ints."""
    total = 0
    for wg, tg, vg in zip(bottom_w, bottom_t, top_w):
        if sum(int(w) * int(ci) for w, ci in zip(wg, c)) >= int(tg):
            total += int(vg)
    return total


def distinct_counts(q_rows, code_rows):
    """K_i = #distinct sum_j q_ij (2 c_j - 1) over the code rows (Python ints)."""
    return [len({sum(int(qj) * (2 * int(cj) - 1) for qj, cj in zip(q, c)) for c in code_rows})
            for q in q_rows]


def hoeffding_k(M, rho, n, delta):
    return math.ceil((32 * M * M / (rho * rho)) * (2 * n * math.log(2) + math.log(2 / delta)))


def bernstein_k(var, M, rho, n, delta, target):
    """(2σ² + 2(M + ρ)t/3)·ln(4^n/δ)/t², t = (1 - target)ρ, rounded up."""
    t = (1 - target) * rho
    return math.ceil((2 * var + 2 * (M + rho) * t / 3) * math.log(4 ** n / delta) / t ** 2)


def value_table(W, b, u, u0, sigma, XA, XB):
    """V[a][b] = N((XA[a], XB[b])) by plain loops over the materialised points."""
    return [[depth2_value(W, b, u, u0, sigma, list(xa) + list(xb)) for xb in XB] for xa in XA]


def untwisted_M(V, shifts):
    """(1/k) sum_j V[a^r][b^s] (no characters): the self-reduction without the twist."""
    size = len(V)
    return [[sum(V[a ^ r][b ^ s] for r, s in shifts) / len(shifts) for b in range(size)]
            for a in range(size)]


def relu_train_pass(Ac, B, u, u0, Y):
    """Twin of the product-form ReLU pass: plain loops over every pair (a, b) and neuron.

    z_i = Ac[a][i] + B[b][i]; N = u0 + sum_i u_i max(z_i, 0); g = 2 (N - Y[a][b]) / #pairs;
    returns (Qa, Qb, Su, loss, sum g) with Qa[a][i] = sum_b g [z_i > 0], Qb[b][i] = sum_a g [z_i > 0],
    Su[i] = sum_{a,b} g max(z_i, 0) (math.fsum throughout)."""
    size_a, size_b, w = len(Ac), len(B), len(u)
    total = size_a * size_b
    qa = [[[] for _ in range(w)] for _ in range(size_a)]
    qb = [[[] for _ in range(w)] for _ in range(size_b)]
    su = [[] for _ in range(w)]
    loss, gs = [], []
    for a in range(size_a):
        for b in range(size_b):
            z = [Ac[a][i] + B[b][i] for i in range(w)]
            val = math.fsum([u0] + [u[i] * max(z[i], 0.0) for i in range(w)])
            r = val - Y[a][b]
            loss.append(r * r)
            g = 2.0 * r / total
            gs.append(g)
            for i in range(w):
                if z[i] > 0:
                    qa[a][i].append(g)
                    qb[b][i].append(g)
                    su[i].append(g * z[i])
    fs = math.fsum
    return ([[fs(x) for x in row] for row in qa], [[fs(x) for x in row] for row in qb],
            [fs(x) for x in su], fs(loss) / total, fs(gs))
