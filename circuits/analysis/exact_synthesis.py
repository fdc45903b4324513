"""Exact synthesis of least layered THR o THR circuits with OR-Tools CP-SAT (issue 21).

:func:`least_depth2` answers, for a truth table f of N inputs, "what is the least number s of
hidden gates of a layered THR o THR circuit computing f on all 2^N points?", by deciding
``exists a circuit with s hidden gates`` for s = lower, lower + 1, ... with CP-SAT.

Model (one decision problem per s)
----------------------------------
* hidden gate j: integer weights ``w_j in [-W_h, W_h]^N``, integer threshold ``t_j``, and one
  Boolean ``h_j(z)`` per cube point, reified: ``h_j(z) <=> w_j . z >= t_j``;
* top gate: integer weights ``v in [-W_t, W_t]^s`` (and ``u`` on the inputs when direct wires are
  allowed), threshold T; ``sum_j v_j h_j(z) (+ u . z) >= T`` on f's ones, ``<= T - 1`` on its
  zeros; the products ``v_j h_j(z)`` are linearised with enforcement literals.

Completeness
------------
Every threshold function of k inputs has an integer representation with ``|w_i| <= M(k)``, where
``M(k)`` is the largest minimal total weight (OEIS A003217: 0, 1, 3, 5, 9, 17, 35, 79, 209 for
k = 0..8; S. Muroga, *Threshold Logic and Its Applications*, 1971, p. 268).  A hidden gate has
fan-in N and the top gate fan-in s (plus N with direct wires), and a top gate that is threshold
on the hidden patterns that occur is the restriction of a total threshold function of its inputs,
so with ``W_h = M(N)`` and ``W_t = M(s)`` an infeasible model proves that *no* integer-weight
circuit with s hidden gates exists.  For k <= 4 the per-weight maxima (0, 1, 1, 2, 3) are also
computed here exactly with the MILP of :func:`~circuits.analysis.threshold_functions.minimal_weights`
(:func:`max_minimal_weight`); the default uses them there and A003217 above.  A user bound
``max_weight=W`` below those values makes the answer "least within |w| <= W" and the result says
so (``complete=False``).

Symmetry breaking (each can be switched off to measure it, see ``symmetry=``)
-----------------------------------------------------------------------------
* ``"complement"``: replacing g_j by 1 - g_j and (v_j, T) by (-v_j, T - v_j) keeps the circuit's
  function, so WLOG ``v_j >= 0``;
* ``"order"``: hidden gates are interchangeable and a repeated gate can be merged into one, so
  WLOG the hidden truth tables are strictly decreasing in lexicographic order (point 0 first).

Every claim records the solver ("OR-Tools CP-SAT"), its version, status and wall time; every
witness is rebuilt as a :class:`~circuits.threshold.ThresholdCircuit` and re-checked on the whole
cube with :func:`circuits.simulate.count_disagreements` before it is returned.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from circuits.analysis.threshold_functions import _table
from circuits.hypercube import check_n_bits, points
from circuits.threshold import ThresholdCircuit, ThresholdLayer
from circuits.utils.errors import DepthsepError, InvalidArgumentError, MissingDependencyError

__all__ = ["LeastDepth2", "SizeClaim", "least_depth2", "decide_depth2", "weight_bound",
           "max_sliced_edges", "sliced_edges", "PATERSON_PLANES",
           "max_minimal_weight", "MAX_TOTAL_WEIGHT", "SOLVER_NAME"]

#: OEIS A003217: the largest minimal total weight of a threshold function of k inputs, k = 0..8
#: (Muroga 1971, p. 268; Muroga, Tsuboi, Baugh 1970).  Bounds every single weight too.
MAX_TOTAL_WEIGHT = (0, 1, 3, 5, 9, 17, 35, 79, 209)
#: Largest minimal max |w_i| for k = 0..4 inputs, computed by :func:`max_minimal_weight` (the
#: tests recompute k <= 3; k = 4 takes 1882 MILPs, run by the slow test).
_MAX_SINGLE_WEIGHT = (0, 1, 1, 2, 3)
#: Largest N :func:`least_depth2` accepts (256-point models).
MAX_SYNTH_BITS = 8
SOLVER_NAME = "OR-Tools CP-SAT"
SYMMETRIES = ("complement", "order")
#: Add the separation clauses for all (one, zero) pairs up to this many, else for edges only.
_PAIR_LIMIT = 4096


def _cp_model():
    try:
        from ortools.sat.python import cp_model
        import ortools
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise MissingDependencyError(
            "least_depth2 needs OR-Tools (CP-SAT); install it with pip install 'depthsep[exact]' "
            "or pip install ortools") from exc
    return cp_model, ortools.__version__


def max_minimal_weight(k: int) -> int:
    """Largest ``min max_i |w_i|`` over all threshold functions of k <= 4 inputs, by exact MILP.

    >>> [max_minimal_weight(k) for k in range(4)]
    [0, 1, 1, 2]
    """
    from circuits.analysis.threshold_functions import minimal_weights
    from circuits.analysis.threshold_search import all_threshold_functions

    k = check_n_bits(k, name="k", maximum=4)
    if k == 0:
        return 0
    best = 0
    for row in all_threshold_functions(k):
        r = minimal_weights(row, objective="max")
        best = max(best, int(np.abs(r.weights).max()) if r.weights.size else 0)
    return best


def weight_bound(k: int) -> "tuple[int, str]":
    """A weight bound that every threshold function of k inputs meets, and its source."""
    k = check_n_bits(k, name="fan-in", maximum=len(MAX_TOTAL_WEIGHT) - 1)
    if k < len(_MAX_SINGLE_WEIGHT):
        return max(1, _MAX_SINGLE_WEIGHT[k]), "max minimal |w_i|, computed by MILP (k <= 4)"
    return MAX_TOTAL_WEIGHT[k], "OEIS A003217 max minimal total weight (Muroga 1971)"


@dataclass(frozen=True)
class SizeClaim:
    """One decision "is there a circuit with ``size`` hidden gates?" and who made it."""

    size: int
    status: str            # "feasible", "infeasible" or "unknown"
    solver: str
    version: str
    wall_s: float
    hidden_weight: int
    top_weight: int
    complete: bool          # the weight bounds cover every threshold function of that fan-in
    #                         (always True for "feasible": a witness needs no bound)
    cross_checked: bool = False   # an infeasibility confirmed by the exhaustive enumerator

    def as_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class LeastDepth2:
    """Result of :func:`least_depth2`.

    ``size`` is the least s proved (None if undecided); otherwise the truth lies in
    ``[lower, upper]`` (``upper`` None when no circuit was found).  ``complete`` says whether
    the claims hold over *all* integer weights or only within the bounds in ``claims``.
    """

    n_inputs: int
    size: "int | None"
    lower: int
    upper: "int | None"
    circuit: "ThresholdCircuit | None"
    complete: bool
    claims: list = field(default_factory=list)
    options: dict = field(default_factory=dict)

    @property
    def status(self) -> str:
        return "optimal" if self.size is not None else "unknown"

    def summary(self) -> str:
        scope = "over all integer weights" if self.complete else "within the weight bounds"
        if self.size is not None:
            return f"least THR o THR size = {self.size} (proved minimal {scope})"
        up = "?" if self.upper is None else str(self.upper)
        return f"unknown: least size between {self.lower} and {up} ({scope})"

    def as_dict(self) -> dict:
        c = self.circuit
        wit = None
        if c is not None:
            wit = {"hidden_weights": c.layers[0].weights.tolist(),
                   "hidden_thresholds": c.layers[0].thresholds.tolist(),
                   "top_weights": c.layers[1].weights[0].tolist(),
                   "top_threshold": int(c.layers[1].thresholds[0])}
        return {"n_inputs": self.n_inputs, "status": self.status, "size": self.size,
                "lower": self.lower, "upper": self.upper, "complete": self.complete,
                "summary": self.summary(), "witness": wit,
                "claims": [cl.as_dict() for cl in self.claims], "options": self.options}


def _check_symmetry(symmetry) -> tuple:
    if symmetry is True:
        return SYMMETRIES
    if symmetry in (False, None):
        return ()
    sym = tuple(symmetry)
    bad = [s for s in sym if s not in SYMMETRIES]
    if bad:
        raise InvalidArgumentError(f"symmetry must be True, False or a subset of {SYMMETRIES}, "
                                   f"got {bad!r}")
    return sym


def _build(t: np.ndarray, n: int, s: int, w_h: int, w_t: int, direct: bool, sym: tuple):
    cp_model, _ = _cp_model()
    m = cp_model.CpModel()
    Z = points(n).astype(bool)
    K = Z.shape[0]
    W = [[m.NewIntVar(-w_h, w_h, f"w{j}_{i}") for i in range(n)] for j in range(s)]
    tb = n * w_h + 1
    T = [m.NewIntVar(-tb, tb, f"t{j}") for j in range(s)]
    H = [[m.NewBoolVar(f"h{j}_{k}") for k in range(K)] for j in range(s)]
    for j in range(s):
        for k in range(K):
            expr = sum(W[j][i] for i in range(n) if Z[k, i])
            m.Add(expr >= T[j]).OnlyEnforceIf(H[j][k])
            m.Add(expr <= T[j] - 1).OnlyEnforceIf(H[j][k].Not())
    vlo = 0 if "complement" in sym else -w_t
    V = [m.NewIntVar(vlo, w_t, f"v{j}") for j in range(s)]
    U = [m.NewIntVar(-w_t, w_t, f"u{i}") for i in range(n)] if direct else []
    top_b = (s + (n if direct else 0)) * w_t + 1
    TT = m.NewIntVar(-top_b, top_b, "T")
    for k in range(K):
        terms = []
        for j in range(s):
            p = m.NewIntVar(min(vlo, 0), w_t, f"p{j}_{k}")
            m.Add(p == V[j]).OnlyEnforceIf(H[j][k])
            m.Add(p == 0).OnlyEnforceIf(H[j][k].Not())
            terms.append(p)
        if direct:
            terms += [U[i] for i in range(n) if Z[k, i]]
        if t[k]:
            m.Add(sum(terms) >= TT)
        else:
            m.Add(sum(terms) <= TT - 1)
    if "complement" in sym and not direct:
        # implied by v >= 0 (monotone top gate): a one of f needs a hidden gate that is 1 on it
        # and 0 on a zero of f, else its top sum would not exceed the zero's
        ones = np.flatnonzero(t == 1)
        zeros = np.flatnonzero(t == 0)
        if ones.size * zeros.size <= _PAIR_LIMIT:
            pairs = [(a, b) for a in ones for b in zeros]
        else:        # neighbours only (every edge across f's boundary)
            pairs = [(a, a ^ (1 << i)) for a in ones for i in range(n) if t[a ^ (1 << i)] == 0]
        for a, b in pairs:
            lits = []
            for j in range(s):
                d = m.NewBoolVar("")
                m.AddImplication(d, H[j][a])
                m.AddImplication(d, H[j][b].Not())
                lits.append(d)
            m.AddBoolOr(lits)
    if "order" in sym:
        for j in range(s - 1):
            a, b = H[j], H[j + 1]
            eq = [m.NewBoolVar(f"eq{j}_{k}") for k in range(K + 1)]
            m.Add(eq[0] == 1)
            for k in range(K):
                # while equal so far, a[k] >= b[k]; equal prefixes propagate
                m.AddBoolOr([eq[k].Not(), a[k], b[k].Not()])
                m.AddBoolOr([eq[k].Not(), a[k], b[k], eq[k + 1]])
                m.AddBoolOr([eq[k].Not(), a[k].Not(), b[k].Not(), eq[k + 1]])
            m.Add(eq[K] == 0)                          # strictly decreasing
    return m, (W, T, V, U, TT)


def _witness(solver, vars_, n: int, direct: bool) -> ThresholdCircuit:
    W, T, V, U, TT = vars_
    hw = np.array([[solver.Value(x) for x in row] for row in W], dtype=np.int64).reshape(len(W), n)
    ht = np.array([solver.Value(x) for x in T], dtype=np.int64)
    v = [solver.Value(x) for x in V]
    if direct:
        # inputs pass through identity gates into a layered circuit: [z_i >= 1]
        eye = np.eye(n, dtype=np.int64)
        hw = np.concatenate([hw, eye]) if hw.size else eye
        ht = np.concatenate([ht, np.ones(n, dtype=np.int64)])
        v = v + [solver.Value(x) for x in U]
    top = np.array(v, dtype=np.int64).reshape(1, -1)
    return ThresholdCircuit((ThresholdLayer(hw, ht),
                             ThresholdLayer(top, np.array([solver.Value(TT)], dtype=np.int64))))


def verify_witness(circuit: ThresholdCircuit, table: np.ndarray) -> None:
    """Raise :class:`DepthsepError` unless ``circuit`` computes ``table`` on the whole cube."""
    from circuits.simulate import count_disagreements

    bad = count_disagreements(circuit, np.asarray(table, dtype=np.uint8)).count
    if bad:
        raise DepthsepError(f"solver witness disagrees with f on {bad} of {table.size} points; "
                            f"the solver's answer is wrong and was rejected")


def decide_depth2(truth_table, size: int, *, max_weight: "int | None" = None,
                  direct: bool = False, symmetry=True, time_limit: float = 60.0,
                  num_workers: int = 2, seed: int = 0,
                  _solve=None) -> "tuple[SizeClaim, ThresholdCircuit | None]":
    """Decide whether a layered THR o THR circuit with ``size`` hidden gates computes f.

    Returns the claim (status "feasible" / "infeasible" / "unknown") and a witness re-verified
    on the whole cube (or None).  ``max_weight`` caps every weight (default: the complete bounds
    of :func:`weight_bound`); ``direct`` allows input-to-top wires (the witness then realises
    them as identity hidden gates ``[z_i >= 1]``, listed after the s real ones).
    """
    t, n = _table(truth_table, max_bits=MAX_SYNTH_BITS, what="least_depth2")
    s = check_n_bits(size, name="size", minimum=1, maximum=64)
    if num_workers < 1 or num_workers > 64:
        raise InvalidArgumentError(f"num_workers must be in 1..64, got {num_workers}")
    if not time_limit > 0:
        raise InvalidArgumentError(f"time_limit must be > 0 seconds, got {time_limit}")
    sym = _check_symmetry(symmetry)
    fan_top = s + (n if direct else 0)
    bh, _ = weight_bound(max(n, 1))
    bt, _ = weight_bound(min(fan_top, len(MAX_TOTAL_WEIGHT) - 1))
    complete = fan_top < len(MAX_TOTAL_WEIGHT)
    if max_weight is not None:
        mw = int(max_weight)
        if mw < 1:
            raise InvalidArgumentError(f"max_weight must be a positive integer, got {max_weight}")
        complete = complete and mw >= bh and mw >= bt
        bh, bt = min(bh, mw), min(bt, mw)
    cp_model, version = _cp_model()
    model, vars_ = _build(t, n, s, bh, bt, direct, sym)
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = float(time_limit)
    solver.parameters.num_workers = int(num_workers)
    solver.parameters.random_seed = int(seed)
    t0 = time.perf_counter()
    st = _solve(solver, model) if _solve is not None else solver.Solve(model)
    wall = time.perf_counter() - t0
    if st in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        status = "feasible"
    elif st == cp_model.INFEASIBLE:
        status = "infeasible"
    else:
        status = "unknown"
    claim = SizeClaim(s, status, SOLVER_NAME, version, round(wall, 4), bh, bt, complete)
    circ = None
    if status == "feasible":
        circ = _witness(solver, vars_, n, direct)
        verify_witness(circ, t)
    return claim, circ


def least_depth2(truth_table, *, lower: int = 1, max_size: int = 8,
                 max_weight: "int | None" = None, direct: bool = False, symmetry=True,
                 time_limit: float = 60.0, num_workers: int = 2, progress: bool = False,
                 cross_check: bool = True, quick_weight: "int | None" = 9,
                 quick_time: float = 60.0, _solve=None) -> LeastDepth2:
    """Least number of hidden gates of a layered THR o THR circuit computing f (N <= 8).

    Decides s = lower, lower + 1, ..., max_size with CP-SAT (:func:`decide_depth2`) and stops at
    the first feasible s.  ``time_limit`` is per decision; an "unknown" decision makes the result
    "unknown between a and b" (the search continues upwards for an upper bound).  Where the
    exhaustive enumerator :func:`~circuits.analysis.threshold_search.min_depth2_size` finishes
    (N <= 3, or s <= 3 at N = 4) and ``cross_check`` is on, every infeasibility claim is checked
    against it; a disagreement raises.

    Parameters
    ----------
    truth_table : array_like of 0/1, length 2^N, 1 <= N <= 8
    lower : int
        A proved lower bound to start from (default 1).
    max_size : int
        Largest s to try.
    max_weight : int, optional
        Cap every weight at W (small-weight circuits); the answer is then complete only if W is
        at least the bound of :func:`weight_bound` for every fan-in.
    direct : bool
        Allow wires from the inputs to the top gate.
    symmetry : bool or iterable of {"complement", "order"}
        Symmetry breaking (default all).
    time_limit : float
        Seconds per decision.
    num_workers : int
        CP-SAT threads (keep <= 2 on the shared machine).
    progress : bool
        Print one progress line per decision to stderr.
    quick_weight, quick_time : int or None, float
        When the complete model has not decided s within ``quick_time`` seconds, look for a
        circuit with the plain model (no symmetry breaking, ``|w| <= quick_weight``) for at most
        ``quick_time`` seconds, then go on with the complete model (None: off).  A found circuit
        settles s (existence needs no weight bound); a "no" there is discarded, never claimed.

    Examples
    --------
    >>> from circuits.functions import parity
    >>> least_depth2(parity(3)).size
    3
    """
    import sys

    t, n = _table(truth_table, max_bits=MAX_SYNTH_BITS, what="least_depth2")
    if n == 0:
        raise InvalidArgumentError("least_depth2 needs N >= 1 inputs (a table of length >= 2)")
    lower = check_n_bits(lower, name="lower", minimum=1, maximum=64)
    max_size = check_n_bits(max_size, name="max_size", minimum=lower, maximum=64)
    res = LeastDepth2(n, None, lower, None, None, True,
                      options={"max_weight": max_weight, "direct": direct,
                               "symmetry": list(_check_symmetry(symmetry)),
                               "time_limit": time_limit, "num_workers": num_workers})
    proved_lower = lower
    decided_so_far = True
    for s in range(lower, max_size + 1):
        # stage 1: the complete model, briefly; stage 2: if undecided, the plain model
        # (no symmetry breaking, |w| <= quick_weight), which finds some circuits much faster
        # (IP_3 with 4 gates) -- its "no" proves nothing and is never claimed; stage 3: the
        # complete model for the rest of the time.
        first = min(time_limit, quick_time) if quick_weight else time_limit
        claim, circ = decide_depth2(t, s, max_weight=max_weight, direct=direct,
                                    symmetry=symmetry, time_limit=first,
                                    num_workers=num_workers, _solve=_solve)
        if claim.status == "unknown" and quick_weight:
            q, qc = decide_depth2(t, s, max_weight=min(quick_weight, max_weight or quick_weight),
                                  direct=direct, symmetry=False,
                                  time_limit=min(time_limit, quick_time),
                                  num_workers=num_workers, _solve=_solve)
            if q.status == "feasible":
                claim, circ = dataclasses.replace(q, complete=True), qc
            elif time_limit > first:
                c2, circ = decide_depth2(t, s, max_weight=max_weight, direct=direct,
                                         symmetry=symmetry, time_limit=time_limit - first,
                                         num_workers=num_workers, _solve=_solve)
                claim = dataclasses.replace(c2, wall_s=round(c2.wall_s + claim.wall_s, 4))
        res.claims.append(claim)
        res.complete = res.complete and claim.complete
        if progress:
            print(f"least_depth2 N={n} s={s}: {claim.status} in {claim.wall_s:.2f} s "
                  f"(|w_hidden| <= {claim.hidden_weight}, |w_top| <= {claim.top_weight})",
                  file=sys.stderr, flush=True)
        if claim.status == "infeasible":
            if cross_check and not direct and max_weight is None and _cross_check(t, n, s,
                                                                                 cross_check):
                res.claims[-1] = dataclasses.replace(claim, cross_checked=True)
            if decided_so_far:
                proved_lower = s + 1
        elif claim.status == "unknown":
            decided_so_far = False
        else:
            res.upper, res.circuit = s, circ
            break
    res.lower = proved_lower
    if res.upper is not None and res.upper == proved_lower:
        res.size = res.upper
    return res


def _cross_check(t: np.ndarray, n: int, s: int, budget) -> bool:
    """Compare an infeasibility claim with the exhaustive enumerator where it finishes.

    ``budget`` True allows up to 10^6 hidden-gate sets (every N <= 3, s <= 2 at N = 4); an
    integer sets the limit (1.4 * 10^8 reaches s = 3 at N = 4, minutes).  Returns whether the
    check ran; raises if the enumerator finds a circuit the solver said does not exist.
    """
    from circuits.analysis.threshold_search import MAX_SEARCH_BITS, min_depth2_size
    from circuits.utils.errors import DimensionError

    if n > MAX_SEARCH_BITS or s > 6:
        return False
    limit = 10**6 if budget is True else int(budget)
    try:
        r = min_depth2_size(t, s, max_candidates=limit)
    except DimensionError:
        return False
    if r.size is not None:
        raise DepthsepError(
            f"CP-SAT claims no THR o THR circuit with {s} hidden gates, but the enumerator "
            f"found one with {r.size}; the solver claim is rejected")
    return True


def target_table(function: str, n: int, *, seed: int = 0, table=None):
    """Truth table and name of a named target (``depthsep least-circuit`` / ``separation-table``):
    ip (N = 2n), parity, majority, random, random-threshold (N = n), or table (a .npy or text
    file of 0/1)."""
    import numpy as np

    from circuits.functions import inner_product_mod2, majority, parity

    if function == "ip":
        if 2 * n > 8:
            raise InvalidArgumentError(f"--n {n}: IP_n has N = 2n inputs, at most 8 here")
        return inner_product_mod2(n), f"IP_{n}"
    if function == "parity":
        return parity(n), f"PAR_{n}"
    if function == "majority":
        return majority(n), f"MAJ_{n}"
    rng = np.random.default_rng(seed)
    if function == "random":
        return rng.integers(0, 2, size=1 << n, dtype=np.uint8), f"RAND_{n}(seed {seed})"
    if function == "random-threshold":
        w = rng.integers(-9, 10, size=n)
        s = (points(n).astype(np.int64) @ w)
        return (s >= int(np.median(s)) + 0).astype(np.uint8), f"RTHR_{n}(seed {seed})"
    if table is None:
        raise InvalidArgumentError("--function table needs --table FILE (a .npy or text file "
                                   "of 0/1 values, length 2^N)")
    path = Path(table)
    arr = np.load(path, allow_pickle=False) if path.suffix == ".npy" else np.loadtxt(path)
    return np.asarray(arr).ravel().astype(np.uint8), path.name


# --------------------------------------------------------------------------- hypercube slicing
#: Paterson's five hyperplanes through the origin that slice all 192 edges of Q6 (±1 coordinates).
PATERSON_PLANES = ((1, 1, 1, -3, -3, -6), (3, 3, 3, 1, 1, -4), (2, 2, 2, -3, -3, 1),
                   (3, 3, 3, 1, 1, 8), (1, 1, 1, 3, 3, -4))


def sliced_edges(planes, n: int) -> int:
    """Number of edges of Q_n cut by at least one hyperplane ``a . x = b`` (±1 coordinates).

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
