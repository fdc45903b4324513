"""Hypercube slicing: how many edges of Q_n k hyperplanes cut (Paterson's planes, S(n, k))."""

from __future__ import annotations

import time

import numpy as np

from circuits.analysis.synthesis.solver import SOLVER_NAME, _cp_model
from circuits.analysis.synthesis.symmetry import MAX_SYNTH_BITS
from circuits.analysis.synthesis.weights import weight_bound
from circuits.hypercube import check_n_bits, points
from circuits.utils.errors import DepthsepError, InvalidArgumentError

__all__ = ["PATERSON_PLANES", "sliced_edges", "max_sliced_edges", "decide_slicing"]

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


def _cube_maps(n: int, fix_edge: bool) -> "list[np.ndarray]":
    """Point maps of generators of the cube's symmetry group (``fix_edge=False``: every swap of
    two coordinates and every single negation) or of the stabiliser of the edge {0, e_0}
    (swaps of coordinates other than 0 and the negation of coordinate 0, which swaps the edge's
    ends; negating another coordinate would move the edge)."""
    Z = points(n).astype(np.int64)
    weights = 1 << np.arange(n, dtype=np.int64)
    lo = 1 if fix_edge else 0
    maps = []
    for i in range(lo, n):
        for j in range(i + 1, n):
            perm = list(range(n))
            perm[i], perm[j] = j, i
            maps.append(Z[:, perm] @ weights)
    for i in range(1 if fix_edge else n):
        zz = Z.copy()
        zz[:, i] ^= 1
        maps.append(zz @ weights)
    return maps


def decide_slicing(n: int, k: int, *, time_limit: float = 60.0, solver: str = "cp-sat",
                   num_workers: int = 1, symmetry: bool = True,
                   case: "str | None" = None) -> dict:
    """Decide "k hyperplanes cut at least ``n 2^(n-1) - 1`` edges of Q_n" (all but at most one).

    Two cases, each one solver call: (a) every edge is cut; (b) exactly one edge is uncut -- a
    symmetry of the cube (it acts on planes, and transitively on edges) moves it to ``{0, e_0}``,
    so (b) is "every edge but {0, e_0} cut, and {0, e_0} not cut".  The answer is "feasible" if
    either case is, "infeasible" if both are.  The gates are threshold gates of n inputs with
    ``|w| <= weight_bound(n)`` (complete: a plane in general position cuts the edges where its
    threshold function changes), each complemented so that it is 0 at point 0 (cuts do not
    change) and sorted (non-strict lexicographic order of the tables).  With ``symmetry``
    (default) also lex-leader over the group that case keeps -- the whole cube group in (a), the
    edge's stabiliser in (b), by generators (:func:`_cube_maps`): gate 0 is at least the
    normalised image ``h_j o sigma (+) h_j(sigma(0))`` of every gate j.  Sound: the group maps
    solutions to solutions (a normalised image cuts the same edges), and among the sorted
    images of a solution the lexicographically largest has a first gate that dominates every
    image of every gate.  "infeasible" proves ``S(n, k) <= n 2^(n-1) - 2``.

    Parameters
    ----------
    n : int
        Dimension of the cube, 1 <= n <= 8.
    k : int
        Number of planes.
    time_limit : float
        Solver seconds per case.
    solver : {"cp-sat", "sat"}
        OR-Tools CP-SAT on the reified model, or the second solver (bit-blasted CNF, CaDiCaL).
    num_workers : int
        CP-SAT threads.
    symmetry : bool
        Add the lex-leader constraints (the tests check that the answers do not change).
    case : {"all cut", "one uncut"}, optional
        Decide only that case (to give it more time); the status is then that case's.

    Returns
    -------
    dict
        ``status``, ``solver``, ``wall_s``, ``cases`` (status and seconds of (a) and (b)) and
        ``gates`` (weights, threshold) when feasible -- re-counted without the solver.
    """
    n = check_n_bits(n, name="n", minimum=1, maximum=MAX_SYNTH_BITS)
    k = check_n_bits(k, name="k", minimum=1, maximum=16)
    if solver not in ("cp-sat", "sat"):
        raise InvalidArgumentError(f"solver must be 'cp-sat' or 'sat', got {solver!r}")
    wb, _ = weight_bound(n)
    K = 1 << n
    all_edges = [(z, z ^ (1 << i)) for z in range(K) for i in range(n) if z ^ (1 << i) > z]
    if case not in (None, "all cut", "one uncut"):
        raise InvalidArgumentError(f"case must be None, 'all cut' or 'one uncut', got {case!r}")
    cases, gates, name = {}, None, SOLVER_NAME
    todo = [(c, u) for c, u in (("all cut", False), ("all but {0, e_0} cut", True))
            if case is None or (case == "one uncut") == u]
    for label, one_uncut in todo:
        edges = [e for e in all_edges if not (one_uncut and e == (0, 1))]
        maps = _cube_maps(n, one_uncut) if symmetry else []
        t0 = time.perf_counter()
        if solver == "cp-sat":
            st, gates = _slicing_cpsat(n, k, wb, edges, one_uncut, maps, time_limit, num_workers)
        else:
            st, gates, name = _slicing_sat(n, k, wb, edges, one_uncut, maps, time_limit)
        cases[label] = {"status": st, "wall_s": round(time.perf_counter() - t0, 3)}
        if gates is not None:
            Z = points(n).astype(np.int64)
            tables = [(Z @ np.asarray(w, dtype=np.int64) >= t) for w, t in gates]
            uncut = [(a, b) for a, b in edges if all(h[a] == h[b] for h in tables)]
            if uncut:
                raise DepthsepError(f"solver's planes leave edges {uncut[:3]} uncut; rejected")
            break
    sts = [c["status"] for c in cases.values()]
    status = ("feasible" if "feasible" in sts else
              "infeasible" if sts == ["infeasible"] * len(todo) else "unknown")
    return {"n": n, "k": k, "status": status, "solver": name,
            "wall_s": round(sum(c["wall_s"] for c in cases.values()), 3), "cases": cases,
            "weight_bound": wb, "symmetry": bool(symmetry), "gates": gates}


def _slicing_cpsat(n, k, wb, edges, one_uncut, maps, time_limit, num_workers):
    from circuits.analysis.synthesis.model import _hidden_gates
    from circuits.analysis.synthesis.solver import _run
    from circuits.analysis.synthesis.symmetry import _lex_geq

    cp_model, _ = _cp_model()
    m = cp_model.CpModel()
    W, T, H = _hidden_gates(m, points(n).astype(bool), k, wb)
    for j in range(k):
        m.Add(H[j][0] == 0)
        if one_uncut:
            m.Add(H[j][1] == 0)
    for j in range(k - 1):
        _lex_geq(m, H[j], H[j + 1])
    for pi in maps:
        for j in range(k):
            img = []
            for z in range(1 << n):
                d = m.NewBoolVar("")
                m.AddBoolXOr([H[j][int(pi[z])], H[j][int(pi[0])], d.Not()])
                img.append(d)
            _lex_geq(m, H[0], img)
    for a, b in edges:
        ds = []
        for j in range(k):
            d = m.NewBoolVar("")
            m.AddBoolXOr([H[j][a], H[j][b], d.Not()])       # d == (h(a) != h(b))
            ds.append(d)
        m.AddBoolOr(ds)
    solver, status, _ = _run(m, time_limit, num_workers, 0)
    gates = None
    if status == "feasible":
        gates = [([solver.Value(x) for x in W[j]], solver.Value(T[j])) for j in range(k)]
    return status, gates


def _slicing_sat(n, k, wb, edges, one_uncut, maps, time_limit):
    from circuits.analysis.synthesis._bitblast import CNF, width_for
    from circuits.analysis.synthesis.second import SECOND_SOLVER, _solve_in_child

    c = CNF()
    K = 1 << n
    tb = n * wb + 1
    B = width_for(2 * tb + 1)
    W = [[c.variable(-wb, wb, B) for _ in range(n)] for _ in range(k)]
    T = [c.variable(-tb, tb, B) for _ in range(k)]
    H = [[0] * K for _ in range(k)]
    for j in range(k):
        sums = [c.constant(0, B)] + [None] * (K - 1)
        for z in range(1, K):
            hi = z.bit_length() - 1
            sums[z] = c.plus(sums[z ^ (1 << hi)], W[j][hi])
        for z in range(K):
            H[j][z] = c.geq(sums[z], T[j])
        c.force(-H[j][0])
        if one_uncut:
            c.force(-H[j][1])
    def lex_geq(xs, ys):
        eq = c.true
        for x, y in zip(xs, ys):
            c.add([-eq, x, -y])
            nxt = c.new()
            c.add([-eq, x, y, nxt])
            c.add([-eq, -x, -y, nxt])
            eq = nxt
    for j in range(k - 1):
        lex_geq(H[j], H[j + 1])
    for pi in maps:
        for j in range(k):
            lex_geq(H[0], [c.xor2(H[j][int(pi[z])], H[j][int(pi[0])]) for z in range(K)])
    for a, b in edges:
        c.add([c.xor2(H[j][a], H[j][b]) for j in range(k)])
    ans, model, used = _solve_in_child(c.clauses, SECOND_SOLVER, float(time_limit))
    status = {True: "feasible", False: "infeasible"}.get(ans, "unknown")
    gates = None
    if status == "feasible":
        gates = [([c.value(w, model) for w in W[j]], c.value(T[j], model)) for j in range(k)]
    return status, gates, f"python-sat {used}"
