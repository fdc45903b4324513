"""Refuting a cube on a restriction of f: fix inputs, keep the top gate.

Take a layered THR o THR circuit with top gate g computing f on N inputs, and fix some inputs to
constants.  Every hidden gate becomes a threshold gate of the remaining inputs (its weights on
them are unchanged, its threshold shifts), and the top gate is still g.  So a circuit with top
gate g for f gives one with top gate g for every restriction f|rho of f: if the cube
(f|rho, g) is infeasible, so is the cube (f, g) (:mod:`~circuits.analysis.synthesis.cubes`).
Inputs that f|rho no longer depends on are fixed to 0 as well (a further restriction), so the
restricted cube is a problem on the essential inputs only, with the complete weight bound of
that many inputs -- 6 inputs and |w| <= 9 instead of 8 inputs and |w| <= 209 for a restriction
of IP_4 to IP_3.  The converse fails: a feasible restricted cube proves nothing about (f, g),
and the whole cube is decided only if no restriction refutes it.

IP_4 with 4 hidden gates is the case this was built for: fixing x_1 = 0 leaves IP_3 (6 inputs),
fixing x_1 = x_2 = 1 leaves IP_2 XOR y_1 XOR y_2 (6 inputs), fixing x_1 = 1 leaves IP_3 XOR y_1
(7 inputs, |w| <= 18); the 16 cubes the whole 8-input model left open for 240 s each fell to
the first two in seconds, for both solvers.
"""

from __future__ import annotations

import itertools

import numpy as np

from circuits.analysis.synthesis.symmetry import MAX_SYNTH_BITS
from circuits.analysis.threshold_functions import _table
from circuits.hypercube import check_n_bits, points
from circuits.utils.errors import InvalidArgumentError

__all__ = ["restriction", "restrictions", "solve_cube_restricted"]


def _essential(t: np.ndarray, n: int) -> "list[int]":
    idx = np.arange(t.size)
    return [i for i in range(n) if np.any(t != t[idx ^ (1 << i)])]


def restriction(truth_table, fixed) -> "tuple[np.ndarray, tuple[int, ...]]":
    """f with the inputs in ``fixed`` set, as a function of the inputs it still depends on.

    Parameters
    ----------
    truth_table : array_like of 0/1, length 2^N
        The function f in cube order (bit i of a point's index is input i).
    fixed : mapping of int to 0/1
        Input index -> value.

    Returns
    -------
    (numpy.ndarray, tuple of int)
        The restricted table (uint8, cube order of the kept inputs, the lowest kept input
        being bit 0) and the kept input indices, in increasing order.  Inputs the restriction
        does not depend on are fixed to 0 and dropped.

    Examples
    --------
    >>> from circuits.functions import inner_product_mod2
    >>> t, kept = restriction(inner_product_mod2(2), {0: 1})
    >>> len(kept)
    3
    """
    t, n = _table(truth_table, max_bits=MAX_SYNTH_BITS, what="restriction")
    try:
        fixed = {int(i): int(b) for i, b in dict(fixed).items()}
    except (TypeError, ValueError):
        raise InvalidArgumentError(f"fixed must map input indices to 0/1, got {fixed!r}; e.g. "
                                   f"{{0: 1}} fixes input 0 to 1") from None
    if any(not 0 <= i < n for i in fixed) or any(b not in (0, 1) for b in fixed.values()):
        raise InvalidArgumentError(f"fixed must map input indices 0..{n - 1} to 0 or 1, got "
                                   f"{fixed!r}")
    free = [i for i in range(n) if i not in fixed]
    base = sum(b << i for i, b in fixed.items())
    Z = points(len(free)).astype(np.int64)
    index = base + Z @ (np.int64(1) << np.asarray(free, dtype=np.int64)) if free else \
        np.array([base], dtype=np.int64)
    r = t[index]
    keep = _essential(r, len(free))
    if len(keep) < len(free):
        Zk = points(len(keep)).astype(np.int64)
        r = r[Zk @ (np.int64(1) << np.asarray(keep, dtype=np.int64))] if keep else r[:1]
    return r.astype(np.uint8), tuple(free[j] for j in keep)


def restrictions(truth_table, max_fixed: int) -> "list[dict]":
    """The distinct non-constant restrictions of f fixing 1 to ``max_fixed`` inputs.

    Parameters
    ----------
    truth_table : array_like of 0/1, length 2^N
        The function f.
    max_fixed : int
        Fix at most this many inputs (1 <= max_fixed < N).

    Returns
    -------
    list of dict
        ``fixed`` ({input: value}), ``inputs`` (essential inputs left) and ``table`` (uint8),
        fewest inputs first.  One restriction is kept per orbit under f's symmetries
        (:func:`~circuits.analysis.synthesis.symmetry.function_symmetries`, those that keep f),
        and restrictions whose table repeats an earlier one, that are constant or that keep all
        N inputs are left out.
    """
    from circuits.analysis.synthesis.symmetry import function_symmetries

    t, n = _table(truth_table, max_bits=MAX_SYNTH_BITS, what="restrictions")
    k = check_n_bits(max_fixed, name="max_fixed", minimum=1, maximum=max(1, n - 1))
    Z = points(n)
    cands = [dict(zip(inputs, values)) for r in range(1, k + 1)
             for inputs in itertools.combinations(range(n), r)
             for values in itertools.product((0, 1), repeat=r)]
    # a restriction is a subcube of points; f's symmetries (those keeping f, not complementing
    # it) map subcubes to subcubes, and restrictions in one orbit are the same problem up to
    # a relabelling of the inputs: keep the first of each orbit (union-find over the images)
    masks = [np.all(Z[:, list(c)] == np.asarray(list(c.values())), axis=1) for c in cands]
    where = {m.tobytes(): i for i, m in enumerate(masks)}
    parent = list(range(len(cands)))

    def root(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i
    for pi, flip in function_symmetries(t):
        if flip:
            continue
        for i, m in enumerate(masks):
            img = np.zeros_like(m)
            img[pi] = m
            j = where.get(img.tobytes())
            if j is not None:
                a, b = root(i), root(j)
                parent[max(a, b)] = min(a, b)
    seen, out = set(), []
    for i, fixed in enumerate(cands):
        if root(i) != i:
            continue
        tab, kept = restriction(t, fixed)
        key = (len(kept), tab.tobytes())
        if tab.min() == tab.max() or len(kept) >= n or key in seen:
            continue
        seen.add(key)
        out.append({"fixed": fixed, "inputs": len(kept), "table": tab})
    out.sort(key=lambda d: d["inputs"])        # stable: fewer fixed inputs first among equals
    return out


def solve_cube_restricted(table, g, max_fixed: int, *, time_limit: float = 60.0,
                          solver: str = "cp-sat", whole: bool = True, num_workers: int = 1,
                          sat_options: "dict | None" = None, first=None) -> dict:
    """Decide one cube, trying f's restrictions before f itself.

    Each restriction of :func:`restrictions` (fewest inputs first) is decided with the top gate
    g; the first infeasible one refutes the cube (module docstring).  If none does and
    ``whole`` is set, the cube of f itself is decided.

    Parameters
    ----------
    table : array_like of 0/1, length 2^N
        The function f.
    g : array_like of 0/1, length 2^s
        The cube's top gate (one of :func:`~circuits.analysis.synthesis.cubes.top_gate_cubes`).
    max_fixed : int
        Try the restrictions fixing up to this many inputs.
    time_limit : float
        Seconds for each attempt (each restriction, then f).
    solver : str
        "cp-sat" (:func:`~circuits.analysis.synthesis.cubes.solve_cube`) or "sat" (the second
        solver, :func:`~circuits.analysis.synthesis.second_cubes.solve_cube_sat`).
    whole : bool
        Decide f's own cube when no restriction refutes it.
    num_workers : int
        CP-SAT threads.
    sat_options : dict, optional
        Keyword arguments of ``solve_cube_sat`` (``solver``, ``function``, ...).
    first : mapping of int to 0/1, optional
        Try this restriction before the others (e.g. the one that refuted the cube for the
        other solver, so that the second solver checks the same restricted statement first).

    Returns
    -------
    dict
        ``status``, ``wall_s`` (all attempts), ``witness`` (from f's own cube only),
        ``attempts`` (one record per attempt: ``fixed``, ``inputs``, ``status``, ``wall_s``)
        and ``by`` (the attempt that decided the cube, or None); with ``solver="sat"`` also
        ``solver`` and ``function``, as in ``solve_cube_sat``'s records.
    """
    from circuits.analysis.synthesis.cubes import solve_cube
    from circuits.analysis.synthesis.second_cubes import solve_cube_sat

    if solver not in ("cp-sat", "sat"):
        raise InvalidArgumentError(f"solver must be 'cp-sat' or 'sat', got {solver!r}")
    t, n = _table(table, max_bits=MAX_SYNTH_BITS, what="solve_cube_restricted")

    def decide(tab):
        if solver == "cp-sat":
            return solve_cube(tab, g, time_limit=time_limit, num_workers=num_workers)
        return solve_cube_sat(tab, g, time_limit=time_limit, **(sat_options or {}))

    attempts: list = []
    out = {"status": "unknown", "witness": None, "by": None}
    todo = restrictions(t, max_fixed) if n > 1 else []
    if first:
        tab, kept = restriction(t, first)
        lead = {"fixed": {int(i): int(b) for i, b in dict(first).items()},
                "inputs": len(kept), "table": tab}
        todo = [lead] + [r for r in todo if not (r["inputs"] == len(kept)
                                                 and np.array_equal(r["table"], tab))]
    for rho in todo:
        r = decide(rho["table"])
        fixed = {str(i): b for i, b in rho["fixed"].items()}
        attempts.append({"fixed": fixed, "inputs": rho["inputs"], "status": r["status"],
                         "wall_s": r["wall_s"]})
        if r["status"] == "infeasible":
            out.update(status="infeasible", by=attempts[-1])
            break
    else:
        if whole:
            r = decide(t)
            attempts.append({"fixed": {}, "inputs": n, "status": r["status"],
                             "wall_s": r["wall_s"]})
            out.update(status=r["status"], witness=r["witness"],
                       by=attempts[-1] if r["status"] != "unknown" else None)
    out["attempts"] = attempts
    out["wall_s"] = round(sum(a["wall_s"] for a in attempts), 4)
    if solver == "sat":           # the same keys as solve_cube_sat's records
        from circuits.analysis.synthesis.second import SECOND_SOLVER

        opts = sat_options or {}
        out["solver"] = f"python-sat {opts.get('solver') or SECOND_SOLVER}"
        out["function"] = bool(opts.get("function", False))
    return out
