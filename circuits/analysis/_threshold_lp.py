"""Exact threshold-function decisions behind :mod:`circuits.analysis.threshold_functions`.

The LP / MILP (HiGHS via scipy) only *proposes* weights or a dual solution; the helpers here
turn proposals into integers and check them exactly (Python-int bounds, int64 products, object
arithmetic for certificates).  :func:`_decide` returns ``(is_threshold, w, t, certificate)``.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import NamedTuple

import numpy as np

from circuits.threshold import preactivation_bound
from circuits.utils.errors import InvalidCircuitError
from circuits.utils.errors import DepthsepError

__all__ = ["Summability"]

_DENOMINATORS = (1, 2, 6, 12, 60, 420, 840, 10**4, 10**6, 10**9)


class Summability(NamedTuple):
    """Exact proof that a (partial) function is *not* threshold.

    ``sum_j ones_mult[j] * z[ones[j]] == sum_j zeros_mult[j] * z[zeros[j]]`` and
    ``sum(ones_mult) == sum(zeros_mult) > 0``, where ``ones`` index true points and ``zeros``
    false points (cube indices for a full truth table, row indices for a partial one).
    """

    ones: np.ndarray
    ones_mult: np.ndarray
    zeros: np.ndarray
    zeros_mult: np.ndarray

    @property
    def order(self) -> int:
        """k of "k-summable": the common total multiplicity."""
        return int(self.ones_mult.sum())


# --------------------------------------------------------------------------- exact checks
def _verify_weights(Z: np.ndarray, y: np.ndarray, w: "list[int]", t: int) -> bool:
    """Exactly check ``y == [Z w >= t]`` (bound in Python ints, then int64 products)."""
    try:
        preactivation_bound(w, t)
    except InvalidCircuitError:
        return False
    if Z.shape[1] == 0:
        return bool(np.all(y == (0 >= t)))
    s = Z.astype(np.int64) @ np.asarray(w, dtype=np.int64)
    return bool(np.array_equal((s >= t).astype(np.uint8), y))


def _verify_summable(Z: np.ndarray, y: np.ndarray, cert: Summability) -> bool:
    if cert.ones.size == 0 or cert.zeros.size == 0:
        return False
    if np.any(cert.ones_mult <= 0) or np.any(cert.zeros_mult <= 0):
        return False
    if not (np.all(y[cert.ones] == 1) and np.all(y[cert.zeros] == 0)):
        return False
    a = [int(v) for v in cert.ones_mult]
    b = [int(v) for v in cert.zeros_mult]
    if sum(a) != sum(b):
        return False
    za = Z[cert.ones].astype(object)
    zb = Z[cert.zeros].astype(object)
    lhs = [sum(m * int(r[i]) for m, r in zip(a, za)) for i in range(Z.shape[1])]
    rhs = [sum(m * int(r[i]) for m, r in zip(b, zb)) for i in range(Z.shape[1])]
    return lhs == rhs


def _scale_to_integers(x: np.ndarray):
    """Yield candidate integer vectors proportional to rational approximations of ``x``."""
    seen = []
    for den in _DENOMINATORS:
        fr = [Fraction(float(v)).limit_denominator(den) for v in x]
        lcm = 1
        for f in fr:
            lcm = lcm * f.denominator // math.gcd(lcm, f.denominator)
        ints = [int(f * lcm) for f in fr]
        g = 0
        for v in ints:
            g = math.gcd(g, v)
        if g > 1:
            ints = [v // g for v in ints]
        if ints not in seen:
            seen.append(ints)
            yield ints


# --------------------------------------------------------------------------- LP / MILP
def _lp_matrices(Z: np.ndarray, y: np.ndarray):
    """Margin-1 constraints ``A [w, t] <= b`` (rows: true points then false points)."""
    Zf = Z.astype(np.float64)
    ones = y == 1
    n_pts = Z.shape[0]
    A = np.empty((n_pts, Z.shape[1] + 1))
    A[:, :-1] = np.where(ones[:, None], -Zf, Zf)
    A[:, -1] = np.where(ones, 1.0, -1.0)
    b = np.where(ones, 0.0, -1.0)
    return A, b


def _abs_rows(n: int):
    """Rows encoding ``|w_i| <= u_i`` for variables ``[w (n), t, u (n)]``."""
    eye = np.eye(n)
    top = np.hstack([eye, np.zeros((n, 1)), -eye])
    bot = np.hstack([-eye, np.zeros((n, 1)), -eye])
    return np.vstack([top, bot])


def _lp_weights(Z: np.ndarray, y: np.ndarray):
    """Solve the margin-1 LP minimising sum |w|; returns the float vertex ``[w, t]`` or None."""
    from scipy.optimize import linprog

    n = Z.shape[1]
    A, b = _lp_matrices(Z, y)
    A = np.hstack([A, np.zeros((A.shape[0], n))])
    A = np.vstack([A, _abs_rows(n)])
    b = np.concatenate([b, np.zeros(2 * n)])
    c = np.concatenate([np.zeros(n + 1), np.ones(n)])
    bounds = [(None, None)] * (n + 1) + [(0, None)] * n
    res = linprog(c, A_ub=A, b_ub=b, bounds=bounds, method="highs-ds")
    if res.status == 2:
        return None
    if res.status != 0:
        raise DepthsepError(f"threshold LP failed ({res.message}); please report this table")
    return res.x[: n + 1]


def _milp_weights(Z: np.ndarray, y: np.ndarray, objective: str = "sum"):
    """Exact integer (w, t) minimising sum|w| (or max|w|), then |t|; None if infeasible."""
    from scipy.optimize import Bounds, LinearConstraint, milp

    n = Z.shape[1]
    A, b = _lp_matrices(Z, y)
    n_var = 2 * n + 2          # [w (n), t, u (n), v]: u_i >= |w_i| (sum) / u_0 >= |w_i| (max); v >= |t|
    rows = [np.hstack([A, np.zeros((A.shape[0], n + 1))])]
    lbs = [np.full(A.shape[0], -np.inf)]
    ubs = [b]
    eye = np.eye(n)
    if objective == "sum":
        U = eye
    else:
        U = np.zeros((n, n))
        U[:, 0] = 1.0
    for sgn in (1.0, -1.0):
        rows.append(np.hstack([sgn * eye, np.zeros((n, 1)), -U, np.zeros((n, 1))]))
        lbs.append(np.full(n, -np.inf))
        ubs.append(np.zeros(n))
        tv = np.zeros((1, n_var))
        tv[0, n] = sgn
        tv[0, -1] = -1.0
        rows.append(tv)
        lbs.append(np.array([-np.inf]))
        ubs.append(np.array([0.0]))
    M = np.vstack(rows)
    lb = np.concatenate(lbs)
    ub = np.concatenate(ubs)
    bounds = Bounds(np.r_[np.full(n + 1, -np.inf), np.zeros(n + 1)], np.full(n_var, np.inf))
    c1 = np.zeros(n_var)
    if objective == "sum":
        c1[n + 1: 2 * n + 1] = 1.0
    else:
        c1[n + 1] = 1.0
    opts = {"mip_rel_gap": 0.0}
    integrality = np.ones(n_var)
    cons = LinearConstraint(M, lb, ub)
    # An integer point from the LP vertex bounds the optimum, so one MILP with objective
    # K * (weight objective) + |t| is lexicographic: for a non-constant f the best |t| is at
    # most sum|w| <= n max|w|, hence K = (bound on that) + 2 makes one unit of the weight
    # objective outweigh any change of |t|.
    x_lp = _lp_weights(Z, y)
    if x_lp is None:
        return None
    start = next((v for v in _scale_to_integers(x_lp) if _verify_weights(Z, y, v[:n], v[n])), None)
    if start is not None:
        w0 = [abs(v) for v in start[:n]]
        K = (sum(w0) if objective == "sum" else n * max(w0)) + 2
        c = K * c1
        c[-1] = 1.0
        res = milp(c, constraints=cons, integrality=integrality, bounds=bounds, options=opts)
        if res.status != 0 or res.x is None:
            raise DepthsepError(f"threshold MILP failed ({res.message}); please report this table")
        x = res.x
    else:  # two stages: the weight objective, then |t| with the weight objective fixed
        res = milp(c1, constraints=cons, integrality=integrality, bounds=bounds, options=opts)
        if res.status == 2:
            return None
        if res.status != 0 or res.x is None:
            raise DepthsepError(f"threshold MILP failed ({res.message}); please report this table")
        best = round(float(res.fun))
        fix = LinearConstraint(c1[None, :], -np.inf, best + 0.5)
        c2 = np.zeros(n_var)
        c2[-1] = 1.0
        res2 = milp(c2, constraints=[cons, fix], integrality=integrality, bounds=bounds, options=opts)
        x = res2.x if res2.status == 0 and res2.x is not None else res.x
    return [int(round(v)) for v in x[:n]], int(round(x[n]))


def _summability(Z: np.ndarray, y: np.ndarray) -> "Summability | None":
    """Certificate of non-threshold: a 2-summable pair from non-unateness, else from the dual LP."""
    from scipy.optimize import linprog

    ones = np.flatnonzero(y == 1)
    zeros = np.flatnonzero(y == 0)
    A = np.hstack([Z[ones].T.astype(np.float64), -Z[zeros].T.astype(np.float64)])
    A = np.vstack([A, np.r_[np.ones(ones.size), np.zeros(zeros.size)],
                   np.r_[np.zeros(ones.size), np.ones(zeros.size)]])
    b = np.r_[np.zeros(Z.shape[1]), 1.0, 1.0]
    res = linprog(np.zeros(A.shape[1]), A_eq=A, b_eq=b, bounds=(0, None), method="highs-ds")
    if res.status != 0:
        return None
    x = np.where(res.x > 1e-9, res.x, 0.0)
    for ints in _scale_to_integers(x):
        a = np.asarray(ints[: ones.size], dtype=np.int64)
        bb = np.asarray(ints[ones.size:], dtype=np.int64)
        cert = Summability(ones[a > 0], a[a > 0], zeros[bb > 0], bb[bb > 0])
        if _verify_summable(Z, y, cert):
            return cert
    return None


def _unate_certificate(table: np.ndarray, n: int) -> "Summability | None":
    """2-summable certificate if the full table is not unate in some variable (no LP needed)."""
    idx = np.arange(table.shape[0], dtype=np.int64)
    for i in range(n):
        lo = idx[((idx >> i) & 1) == 0]
        hi = lo | (1 << i)
        up = np.flatnonzero((table[lo] == 0) & (table[hi] == 1))
        down = np.flatnonzero((table[lo] == 1) & (table[hi] == 0))
        if up.size and down.size:
            z, zp = lo[up[0]], lo[down[0]]          # f(z)=0,f(z+e)=1 ; f(z')=1,f(z'+e)=0
            # (z + e) + z' == z + (z' + e)
            return Summability(np.array([z | (1 << i), zp]), np.array([1, 1]),
                               np.array([z, zp | (1 << i)]), np.array([1, 1]))
    return None


def _decide(Z: np.ndarray, y: np.ndarray, *, integer: str = "scale", table_n: "int | None" = None):
    """Core decision on the point set Z with labels y.  Returns (is_threshold, w, t, certificate)."""
    n = Z.shape[1]
    if np.all(y == 1) or np.all(y == 0):
        return True, [0] * n, (0 if y.size and y[0] == 1 else 1), None
    if table_n is not None:
        cert = _unate_certificate(y, table_n)
        if cert is not None:
            return False, None, None, cert
    if integer == "milp":
        sol = _milp_weights(Z, y)
        if sol is not None and _verify_weights(Z, y, *sol):
            return True, sol[0], sol[1], None
        if sol is not None:
            raise DepthsepError("the MILP returned weights that fail the exact check; please report")
    else:
        x = _lp_weights(Z, y)
        if x is not None:
            for ints in _scale_to_integers(x):
                if _verify_weights(Z, y, ints[:n], ints[n]):
                    return True, ints[:n], ints[n], None
            sol = _milp_weights(Z, y)
            if sol is not None and _verify_weights(Z, y, *sol):
                return True, sol[0], sol[1], None
            raise DepthsepError("LP feasible but no integer weights verified; please report this table")
    cert = _summability(Z, y)
    if cert is None:
        raise DepthsepError("the LP says 'not threshold' but no exact summability certificate was "
                            "found; please report this table")
    return False, None, None, cert
