"""The gate lemma on IP, exactly: the largest correlation of a threshold gate with H = (−1)^IP
and a proven bound tighter than (n + 1)·2^{−n/2} (THEORY §1.2, used by E21 and E24).

**The quantity.**  A gate on the support of μ₀ is g(a, b) = [α(a) + β(b) ≥ t] with α, β
arbitrary real functions of the two messages (any first-layer unit of a depth-2 net, any level
set of a σ-neuron).  Such g are exactly the *Ferrers* 0/1 matrices: ordering the columns by β,
every row's 1-set is a prefix, so the rows' 1-sets form a chain (and every chain of prefixes is
a gate: α(a) = λ_a, β(b) = −rank(b), t = 0).  With N = 2^n and μ₀ uniform on the 4^n pairs,

    G_n = max_g |E_μ₀[H·g]| = max_g Σ_{g = 1} H / 4^n

(the complement of a gate is a gate and Σ H = 2^n, so the largest |·| is the largest sum).

**Exact values** (:func:`gate_maximum`): over every column order (:func:`gate_maximum_naive`,
n ≤ 3) or by branch and bound with a proven cut and the GL(n, 2) symmetry of H
(:mod:`networks.separation._kernels_gate`), which is exhaustive: its answer is the maximum.
:func:`gate_search` is a local search: the value of the gate it returns is attained, so it is a
lower bound on G_n, never more.

**The proven bound** (:func:`gate_constant`, proof in docs/theory/sampled.rst).  Let
c_k = C(2k, k)/4^k (the coefficients of (1 − x)^{−1/2}), A_p = Σ_{k≤p} c_k² and
Ā_N = (1/N)·Σ_{p<N} A_p.  Then for every gate

    |E_μ₀[H·g]| ≤ Γ_n·2^{−n/2},      Γ_n = √(A_N·Ā_N) ≤ 1 + (1 + n ln 2)/π.

Proof in one line: g = X·Y with X = (row selector)·L, Y = L·(column order), L the lower
triangular Toeplitz matrix of the c_k (L·L = the lower triangular all-ones matrix, because
((1 − x)^{−1/2})² = (1 − x)^{−1}), and ⟨H, XY⟩ ≤ ‖H‖·‖X‖_F·‖Y‖_F with ‖H‖ = 2^{n/2},
‖X‖_F² ≤ N·A_N, ‖Y‖_F² = N·Ā_N.  Γ_n grows like (ln 2/π)·n ≈ 0.22n against n + 1.

Examples
--------
>>> round(gate_constant(4), 4), gate_constant_dyadic(4)
(1.8058, 5.0)
>>> gate_maximum(3)["value"]              # Σ_{g=1} H of the best gate on 8 × 8
22
"""

from __future__ import annotations

import functools
import itertools
import math
import time

import numpy as np

from circuits.utils.errors import InvalidArgumentError
from circuits.utils.validation import check_int

__all__ = ["ip_sign_matrix", "gate_constant", "gate_constant_dyadic", "gate_bound",
           "ferrers_value", "gate_of_order", "gate_maximum_naive", "gate_maximum", "gate_search",
           "gate_table", "EXACT_MAX_N", "NAIVE_MAX_N"]

#: Largest n of the exhaustive branch and bound by default (n = 5: 32 columns, not attempted).
EXACT_MAX_N = 4
#: Largest n of the every-order twin (8! orders at n = 3).
NAIVE_MAX_N = 3
#: Terms of the binomial series summed exactly (integers); beyond, the tail bound 1/(πk).
_EXACT_TERMS = 1 << 10


def ip_sign_matrix(n: int) -> np.ndarray:
    """H[a, b] = (−1)^{a·b} (int64, 2^n × 2^n; a, b as bit vectors).

    >>> ip_sign_matrix(1).tolist()
    [[1, 1], [1, -1]]
    """
    n = check_int(n, name="n", minimum=1, maximum=12, what="bits per party")
    a = np.arange(1 << n, dtype=np.int64)
    x = a[:, None] & a[None, :]
    par = np.zeros_like(x)
    while np.any(x):
        par ^= x & 1
        x >>= 1
    return 1 - 2 * par


@functools.lru_cache(maxsize=None)
def _series() -> tuple:
    """(A_p, Ā-numerators) exactly for p ≤ _EXACT_TERMS as floats rounded up: c_k² = C(2k,k)²/16^k
    summed in integers."""
    from fractions import Fraction

    A, acc = [], Fraction(0)
    for k in range(_EXACT_TERMS + 1):
        acc += Fraction(math.comb(2 * k, k) ** 2, 16 ** k)
        A.append(acc)
    cum, sums = Fraction(0), [Fraction(0)]          # sums[p] = Σ_{j<p} A_j
    for a in A:
        cum += a
        sums.append(cum)
    return (tuple(math.nextafter(float(a), math.inf) for a in A),
            tuple(math.nextafter(float(s), math.inf) for s in sums))


def _A(p: int) -> float:
    """An upper bound on A_p = Σ_{k≤p} c_k² (exact up to one rounding up for p ≤ 1024; beyond,
    c_k² ≤ 1/(πk) and Σ_{M<k≤p} 1/k ≤ ln(p/M))."""
    A, _ = _series()
    if p <= _EXACT_TERMS:
        return A[p]
    return A[_EXACT_TERMS] + math.log(p / _EXACT_TERMS) / math.pi * (1 + 1e-12)


def _A_mean(N: int) -> float:
    """An upper bound on Ā_N = (1/N)Σ_{p<N} A_p = Σ_{k<N} c_k²(1 − k/N)."""
    A, sums = _series()
    if N <= _EXACT_TERMS + 1:
        return math.nextafter(sums[N] / N, math.inf)
    # Σ_{k≤M} c_k²(1 − k/N) = A_M − (1/N)Σ_{k≤M} k c_k² = A_M − (1/N)(M·A_M − Σ_{p<M} A_p)
    M = _EXACT_TERMS
    head = A[M] - (M * A[M] - sums[M]) / N
    tail = (math.log((N - 1) / M) - (N - 1 - M) / N) / math.pi
    return (head + tail) * (1 + 1e-12)


def gate_constant(n: int) -> float:
    """Γ_n = √(A_N·Ā_N), N = 2^n (rounded up): |E_μ₀[H·g]| ≤ Γ_n·2^{−n/2} for every threshold
    gate g = [α(a) + β(b) ≥ t], α, β any real functions (module docstring; proof in
    docs/theory/sampled.rst).

    >>> [round(gate_constant(n), 3) for n in (1, 8, 20, 40)]
    [1.251, 2.669, 5.318, 9.731]
    """
    n = check_int(n, name="n", minimum=1, maximum=1000, what="bits per party")
    N = 2 ** n
    return math.nextafter(math.sqrt(_A(N) * _A_mean(N)), math.inf)


def gate_constant_dyadic(n: int) -> float:
    """n + 1: the constant of the dyadic argument (THEORY §1.2), the one E24 used before."""
    return float(check_int(n, name="n", minimum=1, what="bits per party") + 1)


def gate_bound(n: int, *, lemma: str = "toeplitz") -> float:
    """The proven bound on max_g |E_μ₀[H·g]|: Γ_n·2^{−n/2} (``"toeplitz"``) or
    (n + 1)·2^{−n/2} (``"dyadic"``)."""
    if lemma not in ("toeplitz", "dyadic"):
        raise InvalidArgumentError(f"lemma must be 'toeplitz' or 'dyadic', got {lemma!r}; the "
                                   f"first is the tighter one")
    c = gate_constant(n) if lemma == "toeplitz" else gate_constant_dyadic(n)
    return c * 2.0 ** (-n / 2.0)


def ferrers_value(H: np.ndarray, order) -> int:
    """Σ_{g = 1} H of the best gate whose column order is ``order`` (a permutation of the
    columns, or a prefix of one: the other columns are never taken): each row takes its best
    prefix, the empty one included."""
    order = np.asarray(order, dtype=np.int64)
    order = order[order >= 0]
    if order.size == 0:
        return 0
    P = np.cumsum(H[:, order], axis=1)
    return int(np.maximum(P.max(axis=1), 0).sum())


def gate_of_order(H: np.ndarray, order) -> np.ndarray:
    """The gate of :func:`ferrers_value` as a 0/1 matrix, built as [α(a) + β(b) ≥ 0] with
    α(a) = the row's cut-off λ_a and β(b) = −rank(b) (the threshold form of the gate)."""
    order = np.asarray(order, dtype=np.int64)
    order = order[order >= 0]
    N = H.shape[1]
    rank = np.full(N, N + 1, dtype=np.int64)               # columns never taken: rank > N
    rank[order] = np.arange(1, order.size + 1)
    P = np.concatenate([np.zeros((H.shape[0], 1), np.int64),
                        np.cumsum(H[:, order], axis=1)], axis=1)
    lam = np.argmax(P, axis=1)                             # first best prefix length
    return (lam[:, None] - rank[None, :] >= 0).astype(np.int64)


def gate_maximum_naive(n: int) -> dict:
    """The exact G_n over every column order (n ≤ 3: 8! orders) — the twin of
    :func:`gate_maximum`."""
    n = check_int(n, name="n", minimum=1, maximum=NAIVE_MAX_N, what="bits per party")
    H = ip_sign_matrix(n)
    best, arg = -1, None
    for perm in itertools.permutations(range(1 << n)):
        v = ferrers_value(H, perm)
        if v > best:
            best, arg = v, perm
    return _result(n, best, np.array(arg), "every column order", exact=True)


def _result(n, value, order, method, *, exact, nodes=None, seconds=None) -> dict:
    N = 1 << n
    e = value / N ** 2
    return {"n": n, "value": int(value), "E_Hg": e, "constant": e * 2.0 ** (n / 2.0),
            "exact": bool(exact), "method": method, "order": [int(b) for b in order if b >= 0],
            "nodes": nodes, "seconds": seconds}


def gate_maximum(n: int, *, incumbent: "int | None" = None) -> dict:
    """The exact G_n by branch and bound (module docstring), n ≤ :data:`EXACT_MAX_N` by default.

    ``incumbent`` (a value some gate attains, e.g. from :func:`gate_search`) only speeds the
    search up; the answer is the maximum either way.  Returns ``value`` = max Σ_{g=1} H,
    ``E_Hg`` = value/4^n, ``constant`` = E_Hg·2^{n/2} (compare :func:`gate_constant`), the
    maximising column ``order`` (its gate: :func:`gate_of_order`), ``nodes`` and ``seconds``.
    """
    from networks.separation._kernels_gate import branch_and_bound

    n = check_int(n, name="n", minimum=1, maximum=EXACT_MAX_N, what="bits per party "
                  "(the exhaustive search is out of reach beyond; use gate_search for a lower "
                  "bound)")
    H = ip_sign_matrix(n)
    start = gate_search(n, starts=4, seed=0) if incumbent is None else None
    inc0 = start["value"] if start is not None else int(incumbent)
    branch_and_bound(ip_sign_matrix(1), 0)                  # compile (or load) apart from the run
    t0 = time.perf_counter()
    value, order, nodes = branch_and_bound(H, inc0 - 1)
    seconds = time.perf_counter() - t0
    if ferrers_value(H, order) != value:                    # the kernel's answer, re-evaluated
        raise AssertionError("branch and bound returned an order whose value differs")
    return _result(n, value, order, "branch and bound (exhaustive)", exact=True, nodes=nodes,
                   seconds=seconds)


def gate_search(n: int, *, starts: int = 8, seed=0, rounds: int = 50) -> dict:
    """A gate of large Σ_{g=1} H by alternating ascent from random column orders: rows take their
    best prefix, then the columns are re-ordered by their best cut-off in the rows' order, and
    so on.  The returned value is attained by the returned gate: a lower bound on the maximum
    (``exact`` False), re-evaluated by :func:`ferrers_value`."""
    from circuits.utils.rng import as_rng

    n = check_int(n, name="n", minimum=1, maximum=10, what="bits per party")
    starts = check_int(starts, name="starts", minimum=1, what="random starts")
    rng = as_rng(seed)
    H = ip_sign_matrix(n)
    N = 1 << n
    best, arg = -1, None
    t0 = time.perf_counter()
    for _ in range(starts):
        order = rng.permutation(N)
        last = -1
        for _ in range(rounds):
            v = ferrers_value(H, order)
            if v <= last:
                break
            last = v
            if v > best:
                best, arg = v, order.copy()
            g = gate_of_order(H, order)
            rows = np.argsort(-g.sum(axis=1), kind="stable")       # rows, largest 1-set first
            P = np.concatenate([np.zeros((1, N), np.int64), np.cumsum(H[rows], axis=0)])
            height = np.argmax(P, axis=0)                           # columns' best cut-off
            order = np.argsort(-height, kind="stable")
    return _result(n, best, arg, f"alternating ascent, {starts} starts (a lower bound)",
                   exact=False, seconds=time.perf_counter() - t0)


def gate_table(ns, *, starts: int = 16, seed=0, exact_max_n: int = EXACT_MAX_N) -> list:
    """Per n: the largest |E[H·g]| (exact for n ≤ ``exact_max_n``, else the best gate found, a
    lower bound), the proven Γ_n·2^{−n/2} and the dyadic (n + 1)·2^{−n/2}, and their ratios."""
    out = []
    for n in ns:
        s = gate_search(n, starts=starts, seed=seed)
        r = gate_maximum(n, incumbent=s["value"]) if n <= exact_max_n else s
        new, old = gate_bound(n), gate_bound(n, lemma="dyadic")
        if r["E_Hg"] > new:
            raise AssertionError(f"n = {n}: a gate exceeds the proven bound (a bug)")
        out.append({**r, "bound": new, "bound_dyadic": old, "gamma": gate_constant(n),
                    "bound_over_max": new / r["E_Hg"], "dyadic_over_max": old / r["E_Hg"]})
    return out
