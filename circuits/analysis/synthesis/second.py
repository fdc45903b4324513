"""The second solver: the same decision as :func:`~circuits.analysis.synthesis.model.decide_depth2`,
encoded differently and solved by a CDCL SAT solver (python-sat, CaDiCaL 1.9.5 by default).

Encoding (nothing shared with the CP-SAT model but the weight bounds of
:func:`~circuits.analysis.synthesis.weights.weight_bound`): every weight and threshold is a
fixed-width two's-complement bit vector; a hidden gate's sum at cube point z is built by one
ripple-carry adder from the sum at z without its highest set bit (a trie over the cube), its
output bit ``h_j(z)`` *is* the negated sign bit of ``sum - t_j``; the top gate's products are
bitwise ANDs of ``v_j`` with ``h_j(z)``, summed by adders and compared with T through the sign of
the difference.  The width leaves room for every intermediate value (no wrap-around).  Symmetry
breaking: ``v_j >= 0`` (complementing a hidden gate) and, optionally, hidden truth tables in
non-strict lexicographic order -- both sound for any circuit, no merging of equal gates.

:func:`second_opinion` compares a CP-SAT claim with this solver: "confirmed", "disagrees"
(with the verified witness that settles it when there is one) or "unknown" (time ran out).
Disagreements are reported, never hidden.
"""

from __future__ import annotations

import multiprocessing
import time

import numpy as np

from circuits.analysis.synthesis._bitblast import CNF, width_for
from circuits.analysis.synthesis.solver import verify_witness
from circuits.analysis.synthesis.symmetry import MAX_SYNTH_BITS
from circuits.analysis.synthesis.weights import MAX_TOTAL_WEIGHT, weight_bound
from circuits.analysis.threshold_functions import _table
from circuits.hypercube import check_n_bits, points
from circuits.threshold import ThresholdCircuit, ThresholdLayer
from circuits.utils.errors import InvalidArgumentError, MissingDependencyError

__all__ = ["SECOND_SOLVER", "decide_depth2_sat", "second_opinion"]

#: The CDCL solver of python-sat used by default (in a child process, ended at the time limit).
SECOND_SOLVER = "cadical195"
#: Used in-process (interruptible) where no child process can be started.
FALLBACK_SOLVER = "glucose4"


def _pysat():
    try:
        import pysat
        from pysat.solvers import Solver
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise MissingDependencyError(
            "the second solver needs python-sat, a dependency of depthsep: reinstall "
            "depthsep (pip install -e . in the checkout) or pip install python-sat") from exc
    return Solver, pysat.__version__


def _child(conn, clauses, name: str) -> None:  # pragma: no cover - runs in the child process
    Solver, _ = _pysat()
    with Solver(name=name, bootstrap_with=clauses) as sat:
        ans = sat.solve()
        conn.send((ans, sat.get_model() if ans else None))
    conn.close()


def _solve_in_child(clauses, name: str, time_limit: float):
    """(True / False / None, set of true literals, solver used): one solve in a forked process,
    ended after ``time_limit`` seconds (CaDiCaL cannot be interrupted in-process).  The clauses
    reach the child through the fork, only the answer comes back through a pipe; where no child
    can be started (a daemonic worker), Glucose 4 in-process, interrupted by a timer."""
    ctx = multiprocessing.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(send, clauses, name), daemon=True)
    try:
        proc.start()
    except (AssertionError, OSError):     # e.g. inside a daemonic worker: no children allowed
        recv.close()
        send.close()
        return (*_solve_interruptible(clauses, time_limit), FALLBACK_SOLVER)
    send.close()
    try:
        if recv.poll(time_limit):
            ans, model = recv.recv()
            return ans, set(model or []), name
        return None, set(), name
    except EOFError:                      # the child died without answering
        return None, set(), name
    finally:
        if proc.is_alive():
            proc.terminate()
        proc.join()
        recv.close()


def _solve_interruptible(clauses, time_limit: float):
    """The in-process fallback: Glucose 4, interrupted by a timer thread at the time limit."""
    import threading

    Solver, _ = _pysat()
    with Solver(name=FALLBACK_SOLVER, bootstrap_with=clauses) as sat:
        timer = threading.Timer(time_limit, sat.interrupt)
        timer.start()
        try:
            ans = sat.solve_limited(expect_interrupt=True)
        finally:
            timer.cancel()
        return ans, set(sat.get_model() or []) if ans else set()


def _hidden_layer(c, n: int, s: int, w_h: int, tb: int, B: int):
    """The hidden layer of the CNF: weights W[j][i] in [-w_h, w_h], thresholds T[j] in [-tb, tb]
    (B-bit two's complement) and the gate outputs H[j][k] = [W[j]·z_k >= T[j]] at every point k
    (each point's sum is the sum at the point without its highest bit plus one weight)."""
    K = 1 << n
    W = [[c.variable(-w_h, w_h, B) for _ in range(n)] for _ in range(s)]
    T = [c.variable(-tb, tb, B) for _ in range(s)]
    H = [[0] * K for _ in range(s)]
    for j in range(s):
        sums = [c.constant(0, B)] + [None] * (K - 1)
        for k in range(1, K):
            hi = k.bit_length() - 1                     # point k = point (k - 2^hi) + e_hi
            sums[k] = c.plus(sums[k ^ (1 << hi)], W[j][hi])
        for k in range(K):
            H[j][k] = c.geq(sums[k], T[j])
    return W, T, H


def _encode(t: np.ndarray, n: int, s: int, w_h: int, w_t: int, order: bool,
            direct: bool = False):
    """The CNF of "s hidden gates compute t" (with direct wires: the top gate also reads the
    inputs with weights U in [-w_t, w_t]); returns (cnf, W, T, V, TT, U) as bit vectors."""
    c = CNF()
    Z = points(n).astype(bool)
    K = Z.shape[0]
    tb = n * w_h + 1
    top_b = (s + (n if direct else 0)) * w_t + 1
    B = width_for(max(2 * tb + 1, 2 * top_b + 1))
    W, T, H = _hidden_layer(c, n, s, w_h, tb, B)
    V = [c.variable(0, w_t, B) for _ in range(s)]
    U = [c.variable(-w_t, w_t, B) for _ in range(n)] if direct else []
    TT = c.variable(-top_b, top_b, B)
    for k in range(K):
        acc = c.constant(0, B)
        for j in range(s):
            acc = c.plus(acc, c.mask(V[j], H[j][k]))
        for i in range(n if direct else 0):
            if Z[k, i]:                                  # the input's weight, where z_i = 1
                acc = c.plus(acc, U[i])
        if t[k]:
            c.force(c.geq(acc, TT))
        else:
            c.force(-c.geq(acc, TT))
    if order:
        for j in range(s - 1):
            eq = c.true
            for a, b in zip(H[j], H[j + 1]):
                c.add([-eq, a, -b])                     # equal so far -> a >= b
                nxt = c.new()
                c.add([-eq, a, b, nxt])
                c.add([-eq, -a, -b, nxt])
                eq = nxt
    return c, W, T, V, TT, U


def decide_depth2_sat(truth_table, size: int, *, max_weight: "int | None" = None,
                      order: bool = True, time_limit: float = 60.0, solver: str = SECOND_SOLVER,
                      direct: bool = False, _solve=None) -> dict:
    """Decide "a THR o THR circuit with ``size`` hidden gates computes f" with a SAT solver.

    Parameters
    ----------
    truth_table : array_like of 0/1, length 2^N, 1 <= N <= 8
        The function f in cube order.
    size : int
        Number of hidden gates s (1 <= s <= 8, where the top gate's bound is complete).
    max_weight : int, optional
        Cap every weight (default: the complete bounds of
        :func:`~circuits.analysis.synthesis.weights.weight_bound`).
    order : bool
        Sort the hidden truth tables (non-strictly).
    time_limit : float
        Seconds before the solver is interrupted ("unknown").
    solver : str
        A python-sat solver name (default CaDiCaL 1.9.5).
    direct : bool
        Allow input-to-top wires (the top gate has fan-in s + N; its weight bound is complete
        for s + N <= 8).  Complementing a hidden gate keeps ``v_j >= 0`` sound with them.
    _solve : callable, optional
        Test hook ``(sat_solver) -> True / False / None`` replacing the solve call.

    Returns
    -------
    dict
        ``status`` ("feasible", "infeasible", "unknown"), ``solver``, ``version``, ``wall_s``,
        ``clauses``, ``variables``, ``hidden_weight``, ``top_weight``, ``complete`` and
        ``circuit`` (a witness re-verified on the whole cube, or None).
    """
    t, n = _table(truth_table, max_bits=MAX_SYNTH_BITS, what="decide_depth2_sat")
    if n == 0:
        raise InvalidArgumentError("decide_depth2_sat needs N >= 1 inputs")
    s = check_n_bits(size, name="size", minimum=1, maximum=len(MAX_TOTAL_WEIGHT) - 1)
    if not time_limit > 0:
        raise InvalidArgumentError(f"time_limit must be > 0 seconds, got {time_limit}")
    Solver, version = _pysat()
    fan_top = s + (n if direct else 0)
    if fan_top >= len(MAX_TOTAL_WEIGHT):
        raise InvalidArgumentError(f"size {s} with direct wires gives the top gate fan-in "
                                   f"{fan_top}; the complete weight bounds reach fan-in "
                                   f"{len(MAX_TOTAL_WEIGHT) - 1}: pass a smaller size")
    bh, _ = weight_bound(n)
    bt, _ = weight_bound(fan_top)
    complete = True
    if max_weight is not None:
        complete = int(max_weight) >= max(bh, bt)
        bh, bt = min(bh, int(max_weight)), min(bt, int(max_weight))
    t0 = time.perf_counter()
    cnf, W, T, V, TT, U = _encode(t, n, s, bh, bt, order, direct)
    if _solve is not None:
        sat = Solver(name=solver, bootstrap_with=cnf.clauses)
        try:
            ans = _solve(sat)
            model = set(sat.get_model() or []) if ans else set()
        finally:
            sat.delete()
    else:
        ans, model, solver = _solve_in_child(cnf.clauses, solver, float(time_limit))
    wall = time.perf_counter() - t0
    status = {True: "feasible", False: "infeasible"}.get(ans, "unknown")
    circ = None
    if status == "feasible":
        def val(bits):
            return cnf.value(bits, model)

        hw = np.array([[val(w) for w in row] for row in W], dtype=np.int64).reshape(s, n)
        ht = np.array([val(x) for x in T], dtype=np.int64)
        v = [val(x) for x in V]
        if direct:          # inputs pass through identity gates [z_i >= 1] to the top gate
            hw = np.concatenate([hw, np.eye(n, dtype=np.int64)])
            ht = np.concatenate([ht, np.ones(n, dtype=np.int64)])
            v += [val(x) for x in U]
        hidden = ThresholdLayer(hw, ht)
        top = ThresholdLayer(np.array([v], dtype=np.int64), np.array([val(TT)], dtype=np.int64))
        circ = ThresholdCircuit((hidden, top))
        verify_witness(circ, t)
    return {"status": status, "solver": f"python-sat {solver}", "version": version,
            "wall_s": round(wall, 4), "clauses": len(cnf.clauses), "variables": cnf.nv,
            "hidden_weight": bh, "top_weight": bt, "complete": complete, "circuit": circ}


def second_opinion(truth_table, claim, *, time_limit: float = 60.0, max_weight=None,
                   direct: bool = False, _solve=None) -> dict:
    """Check a CP-SAT :class:`~circuits.analysis.synthesis.records.SizeClaim` with the SAT solver.

    Returns ``verdict``: "confirmed" (same status), "disagrees" (the other status; ``circuit``
    holds the verified witness of whichever solver found one) or "unknown" (the SAT solver ran
    out of time), with the SAT run's record.
    """
    r = decide_depth2_sat(truth_table, claim.size, max_weight=max_weight,
                          time_limit=time_limit, direct=direct, _solve=_solve)
    if r["status"] == "unknown" or claim.status == "unknown":
        verdict = "unknown"
    elif r["status"] == claim.status:
        verdict = "confirmed"
    else:
        verdict = "disagrees"
    return {"verdict": verdict, **r}
