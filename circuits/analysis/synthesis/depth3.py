"""Depth 3: decide a layered THR o THR o THR circuit with hidden layers of (s1, s2) gates."""

from __future__ import annotations

import numpy as np

from circuits.analysis.synthesis.model import _PAIR_LIMIT, _on_at_off_at
from circuits.analysis.synthesis.records import SizeClaim
from circuits.analysis.synthesis.solver import (SOLVER_NAME, _check_solver_args, _cp_model, _run,
                                                verify_witness)
from circuits.analysis.synthesis.symmetry import MAX_SYNTH_BITS, _lex_geq
from circuits.analysis.synthesis.weights import MAX_TOTAL_WEIGHT, weight_bound
from circuits.analysis.threshold_functions import _table
from circuits.hypercube import check_n_bits, points
from circuits.threshold import ThresholdCircuit, ThresholdLayer
from circuits.utils.errors import InvalidArgumentError

__all__ = ["decide_depth3"]


def _reified_layer(m, inputs, K: int, fan_in: int, size: int, w_b: int, name: str):
    """``size`` threshold gates over ``inputs`` (a list of fan_in per-point literal lists, or
    the constant 0/1 columns of the cube as Python bools); returns (W, T, G)."""
    W = [[m.NewIntVar(-w_b, w_b, f"{name}w{j}_{i}") for i in range(fan_in)] for j in range(size)]
    tb = fan_in * w_b + 1
    T = [m.NewIntVar(-tb, tb, f"{name}t{j}") for j in range(size)]
    G = [[m.NewBoolVar(f"{name}g{j}_{k}") for k in range(K)] for j in range(size)]
    for j in range(size):
        for k in range(K):
            terms = []
            for i in range(fan_in):
                x = inputs[i][k]
                if isinstance(x, (bool, np.bool_)):
                    if x:
                        terms.append(W[j][i])
                    continue
                p = m.NewIntVar(-w_b, w_b, "")
                m.Add(p == W[j][i]).OnlyEnforceIf(x)
                m.Add(p == 0).OnlyEnforceIf(x.Not())
                terms.append(p)
            m.Add(sum(terms) >= T[j]).OnlyEnforceIf(G[j][k])
            m.Add(sum(terms) <= T[j] - 1).OnlyEnforceIf(G[j][k].Not())
    return W, T, G


def _separation(m, t, H1, H2) -> None:
    """Implied clauses: f is a function of each layer, so for every (one, zero) pair of f some
    first-layer gate differs on the two points; with the top weights >= 0 (``H2`` given) the top
    gate is monotone, so some second-layer gate is 1 on the one and 0 on the zero."""
    ones = np.flatnonzero(t == 1)
    zeros = np.flatnonzero(t == 0)
    if ones.size * zeros.size > _PAIR_LIMIT:
        return
    for a in ones:
        for b in zeros:
            lits = []
            for g in H1:
                d = m.NewBoolVar("")
                m.Add(g[int(a)] != g[int(b)]).OnlyEnforceIf(d)
                lits.append(d)
            m.AddBoolOr(lits)
            if H2 is not None:
                _on_at_off_at(m, H2, int(a), int(b))


def decide_depth3(truth_table, sizes, *, max_weight: "int | None" = None, symmetry: bool = True,
                  separate: bool = True, time_limit: float = 60.0, num_workers: int = 2,
                  seed: int = 0, _solve=None) -> "tuple[SizeClaim, ThresholdCircuit | None]":
    """Decide whether a layered THR o THR o THR circuit with hidden layers of ``sizes = (s1, s2)``
    gates computes f on the whole cube.

    The depth-3 option of :func:`decide_depth2` (same solver, same claim record with
    ``size = s1 + s2``; ``hidden_weight`` is the first layer's bound, ``top_weight`` the largest
    of the second layer's and the top gate's).  Weight bounds are complete when every fan-in
    (N, s1, s2) is at most 8 (:func:`weight_bound`), as in depth 2; a witness is re-verified on
    the whole cube by the simulator.  Symmetry breaking (``symmetry=True``), sound together:
    the second-layer gates are complemented so that the top weights are >= 0, then both hidden
    layers are sorted by their truth tables (non-strict lexicographic order: sorting a layer
    permutes the next layer's weights and never changes the function).

    Parameters
    ----------
    truth_table : array_like of 0/1, length 2^N, 1 <= N <= 8
        The function f in cube order.
    sizes : pair of int
        Gates of the first and the second hidden layer (s1, s2).
    max_weight : int, optional
        Cap every weight at this value (default: the complete bounds of :func:`weight_bound`).
    symmetry : bool
        Break the hidden layers' symmetries (see above).
    separate : bool
        Add implied clauses (default on): f is a function of each layer, so for every one and
        zero of f some first-layer gate differs on the two points; with ``symmetry`` (top
        weights >= 0, a monotone top gate) some second-layer gate is on at the one and off at
        the zero.  Sound for every circuit; measured (``benchmarks/bench_least3.py``): PAR_4
        with layers (3, 3) refuted in about 5 s against unknown after 90 s without them, IP_3
        with (3, 2) found 1.3x slower.
    time_limit : float
        Seconds for the solver.
    num_workers : int
        CP-SAT threads.
    seed : int
        CP-SAT random seed.
    _solve : callable, optional
        Test hook replacing the solver call (a planted wrong answer must be caught).
    """
    t, n = _table(truth_table, max_bits=MAX_SYNTH_BITS, what="decide_depth3")
    try:
        s1, s2 = (int(x) for x in sizes)
    except (TypeError, ValueError):
        raise InvalidArgumentError(f"sizes must be a pair (s1, s2) of hidden-layer sizes, got "
                                   f"{sizes!r}") from None
    s1 = check_n_bits(s1, name="sizes[0]", minimum=1, maximum=len(MAX_TOTAL_WEIGHT) - 1)
    s2 = check_n_bits(s2, name="sizes[1]", minimum=1, maximum=len(MAX_TOTAL_WEIGHT) - 1)
    _check_solver_args(time_limit, num_workers)
    b1, _ = weight_bound(max(n, 1))
    b2, _ = weight_bound(s1)
    b3, _ = weight_bound(s2)
    complete = True
    if max_weight is not None:
        mw = int(max_weight)
        if mw < 1:
            raise InvalidArgumentError(f"max_weight must be a positive integer, got {max_weight}")
        complete = mw >= max(b1, b2, b3)
        b1, b2, b3 = min(b1, mw), min(b2, mw), min(b3, mw)
    cp_model, version = _cp_model()
    m = cp_model.CpModel()
    Z = points(n).astype(bool)
    K = Z.shape[0]
    cube = [[bool(Z[k, i]) for k in range(K)] for i in range(n)]
    W1, T1, H1 = _reified_layer(m, cube, K, n, s1, b1, "a")
    W2, T2, H2 = _reified_layer(m, H1, K, s1, s2, b2, "b")
    vlo = 0 if symmetry else -b3
    V = [m.NewIntVar(vlo, b3, f"v{j}") for j in range(s2)]
    top_b = s2 * b3 + 1
    TT = m.NewIntVar(-top_b, top_b, "T")
    for k in range(K):
        terms = []
        for j in range(s2):
            p = m.NewIntVar(min(vlo, 0), b3, "")
            m.Add(p == V[j]).OnlyEnforceIf(H2[j][k])
            m.Add(p == 0).OnlyEnforceIf(H2[j][k].Not())
            terms.append(p)
        if t[k]:
            m.Add(sum(terms) >= TT)
        else:
            m.Add(sum(terms) <= TT - 1)
    if symmetry:
        for layer in (H1, H2):
            for j in range(len(layer) - 1):
                _lex_geq(m, layer[j], layer[j + 1])
    if separate:
        _separation(m, t, H1, H2 if symmetry else None)
    solver, status, wall = _run(m, time_limit, num_workers, seed, _solve)
    claim = SizeClaim(s1 + s2, status, SOLVER_NAME, version, round(wall, 4), b1, max(b2, b3),
                      complete)
    circ = None
    if status == "feasible":
        def ints(rows):
            return np.array([[solver.Value(x) for x in row] for row in rows], dtype=np.int64)

        circ = ThresholdCircuit((
            ThresholdLayer(ints(W1).reshape(s1, n), np.array([solver.Value(x) for x in T1])),
            ThresholdLayer(ints(W2).reshape(s2, s1), np.array([solver.Value(x) for x in T2])),
            ThresholdLayer(np.array([[solver.Value(x) for x in V]], dtype=np.int64),
                           np.array([solver.Value(TT)], dtype=np.int64))))
        verify_witness(circ, t)
    return claim, circ
