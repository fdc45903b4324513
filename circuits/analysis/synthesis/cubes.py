"""Cube split of one depth-2 decision: one independent sub-problem per class of top gate.

Take any layered THR o THR circuit with s hidden gates.  Complementing the hidden gates whose top
weight is negative makes the top gate a *positive* threshold function g of the s hidden outputs;
permuting the hidden gates makes g *regular* (inputs in decreasing order of dominance), and the
regular positive table of a threshold function is unique in its NP class
(:func:`~circuits.analysis.synthesis.weights.threshold_class_representatives`, complete: its
count is checked against OEIS A000619).  So "a circuit with s hidden gates exists" is the
disjunction, over those representatives g (27, 119, 1113 for s = 4, 5, 6), of the cube

    exist s threshold gates h_1..h_s of N inputs with g(h_1(z), ..., h_s(z)) = f(z) for all z.

A cube has no top weights at all: g is fixed, and "g(H(z)) = f(z)" is posted as clauses on the
hidden outputs -- for every maximal false point p of g and every one z of f, some gate j with
``p_j = 0`` is on at z; for every minimal true point q of g and every zero z of f, some gate j
with ``q_j = 1`` is off at z (and, implied, for every one z and zero y of f some gate is on at
z and off at y, as in the whole model).  Inputs of g that are symmetric (swapping them leaves g unchanged)
form consecutive blocks; inside a block the hidden tables are sorted (non-strictly).  The hidden
weights are bounded by :func:`~circuits.analysis.synthesis.weights.weight_bound` (complete), so a
cube's "infeasible" is a proof for that g; every cube infeasible proves the decision infeasible,
one feasible cube gives a witness (re-verified on the whole cube), and one "unknown" cube makes
the whole answer unknown.
"""

from __future__ import annotations

import numpy as np

from circuits.analysis.synthesis.model import _hidden_gates, _on_at_off_at, _one_zero_pairs
from circuits.analysis.synthesis.solver import _cp_model, _run, verify_witness
from circuits.analysis.synthesis.symmetry import _lex_geq
from circuits.analysis.synthesis.weights import (NP_CLASSES, threshold_class_representatives,
                                                 weight_bound)
from circuits.hypercube import check_n_bits, points
from circuits.threshold import ThresholdCircuit, ThresholdLayer

__all__ = ["top_gate_cubes", "solve_cube"]


def top_gate_cubes(s: int) -> "list[np.ndarray]":
    """The cubes of an s-gate decision: the regular positive threshold tables of s inputs.

    Parameters
    ----------
    s : int
        Number of hidden gates, 1 <= s <= 6.

    Returns
    -------
    list of numpy.ndarray
        uint8 tables of length 2^s (one per NP class of threshold functions of s inputs).

    Examples
    --------
    >>> [len(top_gate_cubes(s)) for s in (1, 2, 3, 4)]
    [3, 5, 10, 27]
    """
    s = check_n_bits(s, name="size", minimum=1, maximum=len(NP_CLASSES) - 1)
    return threshold_class_representatives(s)


def _extreme_points(g: np.ndarray, s: int):
    """(maximal false points, minimal true points) of a positive table g, as index lists."""
    idx = np.arange(1 << s)
    max_false = [p for p in idx if not g[p] and all(g[p | (1 << j)] for j in range(s)
                                                       if not (p >> j) & 1)]
    min_true = [q for q in idx if g[q] and all(not g[q & ~(1 << j)] for j in range(s)
                                                  if (q >> j) & 1)]
    return max_false, min_true


def _symmetric_blocks(g: np.ndarray, s: int) -> "list[tuple[int, int]]":
    """Pairs (j, j + 1) of adjacent inputs whose swap leaves g unchanged."""
    idx = np.arange(1 << s)
    out = []
    for j in range(s - 1):
        bi, bj = (idx >> j) & 1, (idx >> (j + 1)) & 1
        swapped = idx ^ ((bi ^ bj) << j) ^ ((bi ^ bj) << (j + 1))
        if np.array_equal(g[swapped], g):
            out.append((j, j + 1))
    return out


def build_cube(t: np.ndarray, n: int, g: np.ndarray, w_h: int):
    """The CP-SAT model of one cube; returns (model, W, T, H)."""
    cp_model, _ = _cp_model()
    s = int(g.size).bit_length() - 1
    m = cp_model.CpModel()
    Z = points(n).astype(bool)
    K = Z.shape[0]
    W, T, H = _hidden_gates(m, Z, s, w_h)
    max_false, min_true = _extreme_points(g, s)
    for k in range(K):
        if t[k]:
            for p in max_false:
                m.AddBoolOr([H[j][k] for j in range(s) if not (p >> j) & 1] or [m.NewConstant(0)])
        else:
            for q in min_true:
                m.AddBoolOr([H[j][k].Not() for j in range(s) if (q >> j) & 1]
                            or [m.NewConstant(0)])
    # implied by a positive g (as in the whole model): a one z of f and a zero y need a gate
    # that is on at z and off at y, else g(H(z)) <= g(H(y)); all pairs up to _PAIR_LIMIT, else
    # the edges across f's boundary
    for a, b in _one_zero_pairs(t, n):
        _on_at_off_at(m, H, a, b)
    for a, b in _symmetric_blocks(g, s):
        _lex_geq(m, H[a], H[b])
    return m, W, T, H


def solve_cube(table, g, *, time_limit: float = 60.0, num_workers: int = 1, seed: int = 0,
               _solve=None) -> dict:
    """Solve one cube (top gate fixed to the table g) with CP-SAT.

    Parameters
    ----------
    table : array_like of 0/1, length 2^N
        The function f.
    g : array_like of 0/1, length 2^s
        A regular positive threshold table (one of :func:`top_gate_cubes`).
    time_limit : float
        Seconds for this cube.
    num_workers : int
        CP-SAT threads.
    seed : int
        CP-SAT random seed.
    _solve : callable, optional
        Test hook replacing the solver call.

    Returns
    -------
    dict
        ``status``, ``wall_s``, and ``witness`` (layers as lists, re-verified on the whole cube)
        when feasible.  Plain data: it crosses process and Dask boundaries.
    """
    t = np.asarray(table, dtype=np.uint8)
    n = int(t.size).bit_length() - 1
    g = np.asarray(g, dtype=np.uint8)
    w_h, _ = weight_bound(max(n, 1))
    model, W, T, _H = build_cube(t, n, g, w_h)
    solver, status, wall = _run(model, time_limit, num_workers, seed, _solve)
    out = {"status": status, "wall_s": round(wall, 4), "witness": None}
    if status == "feasible":
        circ = cube_circuit(np.array([[solver.Value(x) for x in row] for row in W],
                                     dtype=np.int64).reshape(len(W), n),
                            np.array([solver.Value(x) for x in T], dtype=np.int64), g)
        verify_witness(circ, t)
        out["witness"] = [{"weights": layer.weights.tolist(),
                           "thresholds": layer.thresholds.tolist()} for layer in circ.layers]
    return out


def cube_circuit(hidden_w: np.ndarray, hidden_t: np.ndarray, g: np.ndarray) -> ThresholdCircuit:
    """The circuit of a cube's solution: the hidden gates and a threshold gate computing g."""
    from circuits.analysis.threshold_functions import threshold_gate

    top = threshold_gate(g).layers[0]
    return ThresholdCircuit((ThresholdLayer(hidden_w, hidden_t), top))
