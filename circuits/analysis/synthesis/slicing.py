"""Hypercube slicing: how many edges of Q_n k hyperplanes cut (Paterson's planes, S(n, k))."""

from __future__ import annotations

import time

import numpy as np

from circuits.analysis.synthesis.solver import SOLVER_NAME, _cp_model
from circuits.analysis.synthesis.symmetry import MAX_SYNTH_BITS
from circuits.analysis.synthesis.weights import weight_bound
from circuits.hypercube import check_n_bits, points
from circuits.utils.errors import DepthsepError, InvalidArgumentError

__all__ = ["PATERSON_PLANES", "sliced_edges", "max_sliced_edges"]

#: Paterson's five hyperplanes through the origin that slice all 192 edges of Q6 (±1 coordinates).
PATERSON_PLANES = ((1, 1, 1, -3, -3, -6), (3, 3, 3, 1, 1, -4), (2, 2, 2, -3, -3, 1),
                   (3, 3, 3, 1, 1, 8), (1, 1, 1, 3, 3, -4))


def sliced_edges(planes, n: int) -> int:
    """Number of edges of Q_n cut by at least one hyperplane ``a·x = b`` (±1 coordinates).

    ``planes`` is a sequence of ``a`` (through the origin) or ``(a, b)`` pairs; an edge is cut when
    its endpoints lie strictly on different sides.  Exact integer arithmetic.

    >>> sliced_edges(PATERSON_PLANES, 6)
    192
    """
    Z = 2 * points(n).astype(np.int64) - 1
    cut = np.zeros((Z.shape[0], n), dtype=bool)
    for p in planes:
        a, b = (p, 0) if np.ndim(p[0]) == 0 else p
        v = Z @ np.asarray(a, dtype=np.int64) - int(b)
        for i in range(n):
            nb = np.arange(Z.shape[0]) ^ (1 << i)
            cut[:, i] |= (v > 0) != (v[nb] > 0)
        if np.any(v == 0):
            raise InvalidArgumentError(f"plane {p} passes through a vertex of Q{n}; edges "
                                       f"touching it are not 'sliced' in the strict sense")
    return int(cut.sum()) // 2


def max_sliced_edges(n: int, k: int, *, time_limit: float = 60.0, num_workers: int = 2,
                     symmetry: bool = True) -> dict:
    """Most edges of Q_n that k hyperplanes can slice, by CP-SAT (maximisation, proved optimal
    when ``status == "optimal"``).

    A hyperplane in general position cuts Q_n like a threshold gate: the edge {z, z + e_i} is
    cut iff the gate ``[w . z >= t]`` differs on its ends, so the model is k hidden gates of
    :func:`least_depth2` with weights bounded by :func:`weight_bound` (complete) and one
    "cut" literal per edge.  Published: S(4, 3) = 30, S(5, 4) = 78 (see the theory page).
    """
    cp_model, version = _cp_model()
    n = check_n_bits(n, name="n", minimum=1, maximum=MAX_SYNTH_BITS)
    k = check_n_bits(k, name="k", minimum=1, maximum=16)
    wb, _ = weight_bound(n)
    m = cp_model.CpModel()
    Z = points(n).astype(bool)
    K = Z.shape[0]
    W = [[m.NewIntVar(-wb, wb, "") for _ in range(n)] for _ in range(k)]
    T = [m.NewIntVar(-n * wb - 1, n * wb + 1, "") for _ in range(k)]
    H = [[m.NewBoolVar("") for _ in range(K)] for _ in range(k)]
    for j in range(k):
        for z in range(K):
            e = sum(W[j][i] for i in range(n) if Z[z, i])
            m.Add(e >= T[j]).OnlyEnforceIf(H[j][z])
            m.Add(e <= T[j] - 1).OnlyEnforceIf(H[j][z].Not())
        if symmetry:
            m.Add(H[j][0] == 0)           # complement: a plane has no orientation
    if symmetry:
        for j in range(k - 1):            # planes interchangeable: order by the first weight
            m.Add(W[j][0] * (2 * n * wb + 3) + T[j] >= W[j + 1][0] * (2 * n * wb + 3) + T[j + 1])
    cuts = []
    for z in range(K):
        for i in range(n):
            y = z ^ (1 << i)
            if y < z:
                continue
            c = m.NewBoolVar("")
            diffs = []
            for j in range(k):
                d = m.NewBoolVar("")
                m.AddBoolXOr([H[j][z], H[j][y], d.Not()])     # d == (h(z) != h(y))
                diffs.append(d)
            m.AddBoolOr(diffs).OnlyEnforceIf(c)
            cuts.append(c)
    m.Maximize(sum(cuts))
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = float(time_limit)
    solver.parameters.num_workers = int(num_workers)
    t0 = time.perf_counter()
    st = solver.Solve(m)
    wall = time.perf_counter() - t0
    status = {cp_model.OPTIMAL: "optimal", cp_model.FEASIBLE: "feasible"}.get(st, "unknown")
    best = int(solver.ObjectiveValue()) if status != "unknown" else None
    planes = None
    if best is not None:
        planes = [([solver.Value(x) for x in W[j]], solver.Value(T[j])) for j in range(k)]
        # re-verify: the same gates on the 0/1 cube, counted without the solver
        hid = np.array([[int(np.dot(Z[z].astype(np.int64), w) >= t) for z in range(K)]
                        for w, t in planes])
        idx = np.arange(K)
        got = sum(int(np.any(hid[:, z] != hid[:, z ^ (1 << i)]))
                  for z in idx for i in range(n) if z ^ (1 << i) > z)
        if got != best:
            raise DepthsepError(f"solver reports {best} cut edges but its planes cut {got}")
    return {"n": n, "k": k, "edges": n * (1 << (n - 1)), "max_cut": best, "status": status,
            "bound": float(solver.BestObjectiveBound()), "planes": planes, "solver": SOLVER_NAME,
            "version": version, "wall_s": round(wall, 3), "weight_bound": wb}
