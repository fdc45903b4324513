"""The cube split checked by the second solver: each cube of
:mod:`~circuits.analysis.synthesis.cubes` (top gate fixed to one regular positive threshold
table g) encoded as CNF by bit-blasting and solved by CaDiCaL (python-sat).

Nothing is shared with the CP-SAT cube but the statement being decided: the hidden gates are
the bit-vector adders of :mod:`~circuits.analysis.synthesis.second` (a gate's output bit is the
negated sign bit of ``w . z - t``, sums built along a trie over the cube), and ``g(H(z)) = f(z)``
is posted as the clauses of g's extreme points (for every maximal false point p of g and every
one z of f some gate j with ``p_j = 0`` is on at z; for every minimal true point q and every zero
z some gate j with ``q_j = 1`` is off at z).  These clauses say exactly ``g(H(z)) = f(z)``: g is
positive, so ``g(u) = 0`` iff u lies below some maximal false point, and ``g(u) = 1`` iff u lies
above some minimal true point.  Hidden tables of mutually symmetric inputs of g are sorted
(non-strict lexicographic order, sound: swapping two symmetric inputs of g keeps g).  The
hidden weights are bounded by :func:`~circuits.analysis.synthesis.weights.weight_bound`
(complete), so an "infeasible" cube is a proof for its g, and every cube infeasible proves that
no circuit with s hidden gates computes f -- by a different encoding and a different solver from
:func:`~circuits.analysis.synthesis.parallel.decide_by_cubes`.

:func:`confirm_by_cubes` runs the cubes (or one shard of them) and records each in a resumable
state file; :func:`compare_cube_states` puts two state files side by side, cube by cube.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from circuits.analysis.synthesis._bitblast import CNF, width_for
from circuits.analysis.synthesis.cubes import _extreme_points, _symmetric_blocks, top_gate_cubes
from circuits.analysis.synthesis.model import _one_zero_pairs
from circuits.analysis.synthesis.parallel import _seconds, _with_earlier
from circuits.analysis.synthesis.second import _hidden_layer
from circuits.analysis.synthesis.solver import verify_witness
from circuits.analysis.synthesis.symmetry import MAX_SYNTH_BITS
from circuits.analysis.synthesis.weights import weight_bound
from circuits.analysis.threshold_functions import _table
from circuits.hypercube import check_n_bits
from circuits.utils.errors import InvalidArgumentError

__all__ = ["solve_cube_sat", "confirm_by_cubes", "compare_cube_states"]

STATE_FORMAT = "depthsep.synthesis_cubes_sat"


def _encode_cube(t: np.ndarray, n: int, g: np.ndarray, w_h: int, separation: bool = False,
                 function: bool = False, products: int = 0):
    """CNF of "s hidden gates h with g(h(z)) = f(z) for all z"; returns (cnf, W, T)."""
    s = int(g.size).bit_length() - 1
    c = CNF()
    K = 1 << n
    tb = n * w_h + 1
    B = width_for(2 * tb + 1)
    W, T, H = _hidden_layer(c, n, s, w_h, tb, B)
    max_false, min_true = _extreme_points(g, s)
    for k in range(K):
        if t[k]:
            for p in max_false:
                c.add([H[j][k] for j in range(s) if not (p >> j) & 1] or [-c.true])
        else:
            for q in min_true:
                c.add([-H[j][k] for j in range(s) if (q >> j) & 1] or [-c.true])
    if separation:
        # implied (g is positive): a one z and a zero y of f need a gate on at z and off at y,
        # else g(H(z)) <= g(H(y)); every pair up to _PAIR_LIMIT, else the edges across f
        for a, b in _one_zero_pairs(t, n):
            c.add([c.and2(H[j][a], -H[j][b]) for j in range(s)])
    def lex_geq(xs, ys):
        eq = c.true
        for x, y in zip(xs, ys):
            if x == y:
                continue
            c.add([-eq, x, -y])                         # equal so far -> x >= y
            nxt = c.new()
            c.add([-eq, x, y, nxt])
            c.add([-eq, -x, -y, nxt])
            eq = nxt
    for a, b in _symmetric_blocks(g, s):
        lex_geq(H[a], H[b])
    if function:
        # lex-leader over f's symmetries that keep f (not those that complement it: they would
        # change g): a sigma maps a solution of this cube to one, so among the block-sorted
        # images of a solution the lexicographically largest has H_0 >= H_0 o sigma
        from circuits.analysis.synthesis.symmetry import function_symmetries

        keep = [pi for pi, flip in function_symmetries(t) if not flip]
        rng = np.random.default_rng(0)
        for _ in range(products if len(keep) > 1 else 0):   # more group elements: products
            a, b = rng.choice(len(keep), 2, replace=False)
            keep.append(keep[a][keep[b]])
        block0 = [0]
        for a, b in _symmetric_blocks(g, s):
            if a == block0[-1]:
                block0.append(b)
        for pi in keep:
            for j in block0:          # H_0 is the largest of its block, so H_0 >= H_j o sigma
                lex_geq(H[0], [H[j][int(pi[k])] for k in range(K)])
    return c, W, T


def solve_cube_sat(table, g, *, time_limit: float = 60.0, solver: "str | None" = None,
                   separation: bool = False, function: bool = False, products: int = 0) -> dict:
    """Solve one cube (top gate fixed to the table g) with the second solver.

    Parameters
    ----------
    table : array_like of 0/1, length 2^N, 1 <= N <= 8
        The function f.
    g : array_like of 0/1, length 2^s
        A regular positive threshold table (one of
        :func:`~circuits.analysis.synthesis.cubes.top_gate_cubes`).
    time_limit : float
        Seconds before the solver is stopped ("unknown").
    solver : str, optional
        A python-sat solver name (default CaDiCaL 1.9.5, as the second solver).
    separation : bool
        Add the implied separation clauses (a one and a zero of f need a gate on at the one
        and off at the zero; implied because g is positive), as the CP-SAT cube does.
    function : bool
        Lex-leader over f's own symmetries that keep f (``H_0 >= H_j o sigma`` for the gates j
        of gate 0's block of symmetric top inputs; sound with the block order, see the code).
    products : int
        With ``function``, also that many products of two of those symmetries (seeded).

    Returns
    -------
    dict
        ``status``, ``wall_s``, ``solver``, ``clauses`` and ``witness`` (layers as lists,
        re-verified on the whole cube) when feasible.

    Examples
    --------
    >>> from circuits.functions import parity
    >>> from circuits.analysis.synthesis.cubes import top_gate_cubes
    >>> solve_cube_sat(parity(2), top_gate_cubes(1)[1])["status"]
    'infeasible'
    """
    from circuits.analysis.synthesis.cubes import cube_circuit
    from circuits.analysis.synthesis.second import SECOND_SOLVER, _solve_in_child

    t, n = _table(table, max_bits=MAX_SYNTH_BITS, what="solve_cube_sat")
    g = np.asarray(g, dtype=np.uint8).ravel()
    if g.size < 2 or g.size & (g.size - 1):
        raise InvalidArgumentError(f"g must be a truth table of length 2^s (s >= 1), got length "
                                   f"{g.size}; pass one of top_gate_cubes(s)")
    if not time_limit > 0:
        raise InvalidArgumentError(f"time_limit must be > 0 seconds, got {time_limit}")
    w_h, _ = weight_bound(max(n, 1))
    t0 = time.perf_counter()
    cnf, W, T = _encode_cube(t, n, g, w_h, separation, function, products)
    ans, model, used = _solve_in_child(cnf.clauses, solver or SECOND_SOLVER, float(time_limit))
    wall = time.perf_counter() - t0
    status = {True: "feasible", False: "infeasible"}.get(ans, "unknown")
    out = {"status": status, "wall_s": round(wall, 4), "solver": f"python-sat {used}",
           "clauses": len(cnf.clauses), "separation": bool(separation), "function": bool(function),
           "products": int(products) if function else 0, "witness": None}
    if status == "feasible":
        hw = np.array([[cnf.value(w, model) for w in row] for row in W],
                      dtype=np.int64).reshape(len(W), n)
        ht = np.array([cnf.value(x, model) for x in T], dtype=np.int64)
        circ = cube_circuit(hw, ht, g)
        verify_witness(circ, t)
        out["witness"] = [{"weights": layer.weights.tolist(),
                           "thresholds": layer.thresholds.tolist()} for layer in circ.layers]
    return out


def confirm_by_cubes(truth_table, size: int, *, time_limit: float = 60.0, state=None,
                     shard: "tuple[int, int]" = (0, 1), reverse: bool = False,
                     separation: bool = False, function: bool = False, products: int = 0,
                     only=None, solver: "str | None" = None, progress: bool = True,
                     restrict: int = 0, whole: bool = True, prefer=None) -> dict:
    """Decide the cubes of one s-gate decision with the second solver, one after another.

    Parameters
    ----------
    truth_table : array_like of 0/1, length 2^N
        The function f.
    size : int
        Hidden gates s, 1 <= s <= 6.
    time_limit : float
        Solver seconds per cube.
    state : path, optional
        JSON state file (atomic writes after every cube); a rerun skips the decided cubes.
    shard : (int, int)
        ``(i, k)``: only the cubes with index ``= i mod k`` (run k shards as k processes).
    separation, function, products :
        Encode the cubes with the implied separation clauses, with f's lex-leader and that
        many extra group elements (:func:`solve_cube_sat`).
    only : iterable of int, optional
        Decide only these cube indices (of the shard), e.g. the ones another run left open.
    solver : str, optional
        A python-sat solver name (default CaDiCaL 1.9.5); each cube's record names the solver
        that decided it.
    reverse : bool
        Take the shard's cubes last first (a second process on the same shard, with its own
        state file, meets the first in the middle; merge the two files' cubes).
    progress : bool
        Show a progress bar.
    restrict : int
        Try f's restrictions fixing up to this many inputs before each cube's own model, with
        the same encoding (:func:`~circuits.analysis.synthesis.restrict.solve_cube_restricted`):
        an infeasible restriction refutes the cube.
    whole : bool
        With ``restrict``, decide f's own cube when no restriction refutes it.
    prefer : mapping, optional
        With ``restrict``: cube index -> the restriction ({input: value}) to try first, e.g.
        the one that refuted the cube in CP-SAT's record (:func:`restriction_hints`).

    Returns
    -------
    dict
        ``status`` ("infeasible" only when every cube of the shard is), ``cubes`` (in the
        shard), ``infeasible``, ``unknown`` (indices), ``feasible`` (index or None),
        ``witness``, ``cube_seconds``.
    """
    from circuits.utils.files import read_json, write_json_atomic
    from circuits.utils.progress import progress_bar

    t, n = _table(truth_table, max_bits=MAX_SYNTH_BITS, what="confirm_by_cubes")
    s = check_n_bits(size, name="size", minimum=1, maximum=6)
    restrict = check_n_bits(restrict, name="restrict", minimum=0, maximum=max(0, n - 1))
    i0, k = (int(x) for x in shard)
    if not (k >= 1 and 0 <= i0 < k):
        raise InvalidArgumentError(f"shard must be (i, k) with 0 <= i < k, got {shard!r}")
    cubes = top_gate_cubes(s)
    mine = [i for i in range(len(cubes)) if i % k == i0 and (only is None or i in set(only))]
    mine = mine[::-1] if reverse else mine
    key = {"table": "".join(map(str, t.tolist())), "size": s, "shard": [i0, k]}
    path = None if state is None else Path(state)
    loaded: dict = {}
    if path is not None and path.exists():
        rec = read_json(path)
        if rec.get("format") != STATE_FORMAT or rec.get("key") != key:
            raise InvalidArgumentError(f"state file {path} belongs to another decision; pass "
                                       f"another state file or delete it")
        loaded = {int(i): r for i, r in rec["cubes"].items()}
    done = {i: r for i, r in loaded.items() if r["status"] != "unknown"}
    with progress_bar(len(mine), enabled=progress, desc=f"SAT cubes s={s}", unit="cube") as bar:
        bar.update(sum(1 for i in mine if i in done))
        for i in mine:
            if i in done:
                continue
            opts = {"separation": separation, "function": function, "products": products,
                    "solver": solver}
            if restrict:
                from circuits.analysis.synthesis.restrict import solve_cube_restricted

                r = solve_cube_restricted(t, cubes[i], restrict, time_limit=time_limit,
                                          solver="sat", sat_options=opts, whole=whole,
                                          first=(prefer or {}).get(i))
            else:
                r = solve_cube_sat(t, cubes[i], time_limit=time_limit, **opts)
            done[i] = _with_earlier(r, loaded.get(i))
            if path is not None:       # cubes left open and not retried now stay recorded
                keep = {**loaded, **done}
                write_json_atomic(path, {"format": STATE_FORMAT, "key": key,
                                         "cubes": {str(j): r for j, r in sorted(keep.items())}})
            bar.update(1)
            if done[i]["status"] == "feasible":
                break
    feas = [i for i in mine if i in done and done[i]["status"] == "feasible"]
    unknown = [i for i in mine if i not in done or done[i]["status"] == "unknown"]
    status = "feasible" if feas else ("unknown" if unknown else "infeasible")
    return {"status": status, "cubes": len(mine), "infeasible":
            sum(1 for i in mine if i in done and done[i]["status"] == "infeasible"),
            "unknown": [] if feas else unknown, "feasible": feas[0] if feas else None,
            "witness": done[feas[0]]["witness"] if feas else None,
            "cube_seconds": round(sum(_seconds(r) for r in done.values()), 3)}


def restriction_hints(cubes: dict) -> dict:
    """Cube index -> the restriction that refuted the cube, from a cube record's ``cubes``
    (``{index: {"status", "by": {"fixed": ...}}}``); cubes refuted by their own model or not
    refuted are left out."""
    out = {}
    for i, r in cubes.items():
        by = r.get("by") or {}
        if r.get("status") == "infeasible" and by.get("fixed"):
            out[int(i)] = {int(k): int(v) for k, v in by["fixed"].items()}
    return out


def compare_cube_states(first: dict, second: dict) -> dict:
    """Cube-by-cube comparison of two solvers' cube records (``{index: {"status": ...}}``).

    Returns ``agree`` (indices decided the same way by both), ``disagree`` (decided
    differently: reported, never hidden), ``open`` (undecided by at least one).
    """
    agree, disagree, open_ = [], [], []
    for i in sorted(set(first) | set(second), key=int):
        a = first.get(i, {}).get("status", "unknown")
        b = second.get(i, {}).get("status", "unknown")
        if "unknown" in (a, b):
            open_.append(int(i))
        elif a == b:
            agree.append(int(i))
        else:
            disagree.append(int(i))
    return {"agree": agree, "disagree": disagree, "open": open_}
