"""Refining one least-size row: confirm its lower bound with the second solver, push the bound
up, look for smaller circuits -- with a larger budget, by cubes where they help -- and take a
refutation from an existing pair of cube records instead of recomputing it.

One fact is used throughout: a circuit with fewer than s hidden gates gives one with s (add a
gate whose top weight is 0), so refuting s refutes every smaller size, and a lower bound L
needs only the refutation of s = L - 1, by both solvers.

:func:`refine_row` decides the sizes of one row in order -- CP-SAT first (the whole model with
its quick witness stage, or the cube split), then the second solver on each CP-SAT refutation
(the whole CNF, or with cubes on the CNF cube by cube, resumable from its state file) -- and
returns the bounds both solvers prove, the bound CP-SAT alone proves, the witness it found
(re-verified on the whole cube) and one step record per decision.  An "unknown" (one unknown
cube is enough) never moves a bound.

:func:`cube_reference` validates a refutation kept as cube records: a CP-SAT state file of
:func:`~circuits.analysis.synthesis.parallel.decide_by_cubes` and the second solver's state
files of :func:`~circuits.analysis.synthesis.second_cubes.confirm_by_cubes`, checked on load
(the function, the size, every cube refuted by each solver, no cube decided "feasible" by
either); anything else is refused with a clear error.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from circuits.utils.errors import InvalidArgumentError

__all__ = ["cube_reference", "refine_row"]

CP_FORMAT = "depthsep.synthesis_cubes"
SAT_FORMAT = "depthsep.synthesis_cubes_sat"


def _statuses(path: Path, rec: dict, fmt: str, table: str, size: int) -> dict:
    if not isinstance(rec, dict) or rec.get("format") != fmt:
        raise InvalidArgumentError(f"cube record {path}: expected format {fmt!r}, got "
                                   f"{rec.get('format') if isinstance(rec, dict) else rec!r}; "
                                   f"pass a state file written by the cube driver")
    key = rec.get("key") or {}
    if key.get("table") != table:
        raise InvalidArgumentError(f"cube record {path} decides another function (its table "
                                   f"{str(key.get('table'))[:24]}... is not the row's "
                                   f"{table[:24]}...); pass the record of this row's function")
    if key.get("size") != size:
        raise InvalidArgumentError(f"cube record {path} decides s = {key.get('size')}, the other "
                                   f"record s = {size}; pass records of one decision")
    return {int(i): c for i, c in (rec.get("cubes") or {}).items()}


def cube_reference(table, cp_state, sat_states) -> dict:
    """Validate a refutation kept as cube records, for use in a table.

    Parameters
    ----------
    table : array_like of 0/1, length 2^N
        The function the records must decide.
    cp_state : path
        The CP-SAT state file (format ``depthsep.synthesis_cubes``).
    sat_states : iterable of path
        The second solver's state files (format ``depthsep.synthesis_cubes_sat``; shards and
        reruns of one decision: a cube counts as refuted when one file refutes it).

    Returns
    -------
    dict
        ``size`` (the refuted number of hidden gates), ``cubes``, ``table``, ``cp_sat``
        (file, cube seconds), ``second`` (files, solvers, cube seconds) and ``lower``
        (= size + 1, proved by both solvers).

    Raises
    ------
    InvalidArgumentError
        A file of the wrong format, another function or size, a cube missing or not refuted
        by one solver, or a cube "feasible" for either (the records disagree or do not refute).
    """
    from circuits.analysis.synthesis.cubes import top_gate_cubes
    from circuits.utils.files import read_json

    t = "".join(str(int(x)) for x in np.asarray(table).ravel())
    cp_path = Path(cp_state)
    sat_paths = [Path(p) for p in sat_states]
    if not sat_paths:
        raise InvalidArgumentError("cube_reference needs at least one state file of the second "
                                   "solver (sat_states); pass the confirm_by_cubes records")
    for p in [cp_path, *sat_paths]:
        if not p.is_file():
            raise InvalidArgumentError(f"cube record {p} does not exist; pass an existing file")
    cp_rec = read_json(cp_path)
    size = (cp_rec.get("key") or {}).get("size") if isinstance(cp_rec, dict) else None
    if not isinstance(size, int) or not 1 <= size <= 6:
        raise InvalidArgumentError(f"cube record {cp_path}: no valid size in its key "
                                   f"({size!r}); pass a decide_by_cubes state file")
    total = len(top_gate_cubes(size))
    cp = _statuses(cp_path, cp_rec, CP_FORMAT, t, size)
    sat: "dict[int, list]" = {}
    solvers, sat_seconds = set(), 0.0
    for p in sat_paths:
        for i, c in _statuses(p, read_json(p), SAT_FORMAT, t, size).items():
            sat.setdefault(i, []).append((p, c))
            if c.get("status") == "infeasible":
                solvers.add(str(c.get("solver")))
            sat_seconds += float(c.get("wall_s", 0.0))
    for name, got in (("CP-SAT", {i: [(cp_path, c)] for i, c in cp.items()}), ("second", sat)):
        for i, items in got.items():
            if not 0 <= i < total:
                raise InvalidArgumentError(f"cube record {items[0][0]}: cube {i} is not one of "
                                           f"the {total} cubes of s = {size}")
            for p, c in items:
                if c.get("status") == "feasible":
                    raise InvalidArgumentError(
                        f"cube record {p}: cube {i} is feasible for the {name} solver, so the "
                        f"records do not refute s = {size} (a disagreement if the other solver "
                        f"refuted it); this row cannot take its bound from them")
        open_ = [i for i in range(total)
                 if not any(c.get("status") == "infeasible" for _, c in got.get(i, []))]
        if open_:
            raise InvalidArgumentError(
                f"cube records: the {name} solver has not refuted {len(open_)} of the {total} "
                f"cubes of s = {size} (first: {open_[:8]}); pass every state file of the run")
    return {"table": t, "size": size, "cubes": total, "lower": size + 1,
            "cp_sat": {"file": str(cp_path), "cube_seconds":
                       round(sum(float(c.get("wall_s", 0.0)) for c in cp.values()), 3)},
            "second": {"files": [str(p) for p in sat_paths], "solvers": sorted(solvers),
                       "cube_seconds": round(sat_seconds, 3)}}


def _cp_decide(t, s: int, time_limit: float, num_workers: int, cubes: bool, processes: int,
               state, progress: bool, witness_weights=()):
    """CP-SAT's decision of s (whole model with the quick witness stage, or the cube split),
    after a witness search with every weight in [-W, W] for each W of ``witness_weights``
    (its "no" proves nothing and is discarded): (status, seconds, witness or None, how)."""
    from circuits.analysis.synthesis.least import least_depth2
    from circuits.analysis.synthesis.model import decide_depth2

    spent = 0.0
    for w in witness_weights:
        c, circ = decide_depth2(t, s, max_weight=int(w), time_limit=min(time_limit, 60.0),
                                num_workers=num_workers)
        spent += c.wall_s
        if c.status == "feasible":
            return ("feasible", round(spent, 4), circ,
                    f"{c.solver} {c.version}, witness search with every |w| <= {w} (a witness "
                    f"needs no weight bound)")
    if cubes and s <= 6:
        from circuits.analysis.synthesis.least import _decide_cubes

        claim, circ = _decide_cubes(t, s, time_limit, num_workers,
                                    {"processes": processes, "state": state,
                                     "progress": progress})
        return claim.status, round(claim.wall_s + spent, 4), circ, claim.solver
    r = least_depth2(t, lower=s, max_size=s, time_limit=time_limit, num_workers=num_workers,
                     confirm=False, cross_check=False, quick_time=min(time_limit, 60.0))
    c = r.claims[-1]
    return (c.status, round(c.wall_s + spent, 4), r.circuit,
            f"{c.solver} {c.version}, whole model"
            + (f" (after witness searches with |w| <= {list(witness_weights)})"
               if witness_weights else ""))


def _second_refute(t, s: int, time_limit: float, cubes: bool, state, solver, progress: bool):
    """The second solver on s: the whole CNF, or (cubes on, s <= 6) the CNF cube by cube.
    Returns (status, seconds, witness circuit or None, how)."""
    if not cubes or s > 6:
        from circuits.analysis.synthesis.second import decide_depth2_sat

        r = decide_depth2_sat(t, s, time_limit=time_limit)
        return r["status"], r["wall_s"], r["circuit"], f"{r['solver']} {r['version']}, whole CNF"
    from circuits.analysis.synthesis.second_cubes import confirm_by_cubes

    c = confirm_by_cubes(t, s, time_limit=time_limit, state=state, solver=solver,
                         progress=progress)
    from circuits.analysis.synthesis.records import circuit_from_layers

    circ = None if c["witness"] is None else circuit_from_layers(c["witness"])
    return (c["status"], c["cube_seconds"], circ,
            f"CNF cube split ({c['cubes']} cubes, python-sat {solver or 'cadical195'}; "
            f"seconds summed over every cube, earlier runs included)")


def refine_row(table, *, lower: int, upper: int, lower_confirmed: bool, time_limit: float,
               num_workers: int = 1, cubes: bool = False, processes: int = 1,
               state_dir=None, solver: "str | None" = None, reference: "dict | None" = None,
               max_size: int = 8, push: bool = True, floor: int = 1,
               witness_weights=(1,), progress: bool = False) -> dict:
    """Push one row's bounds with both solvers.

    Parameters
    ----------
    table : array_like of 0/1, length 2^N
    lower : int
        The row's lower bound (CP-SAT refuted every s < lower).
    upper : int or None
        A size known to be feasible (a witness or a construction); None: none known, search
        up to ``max_size``.
    lower_confirmed : bool
        Whether the second solver already refuted s = lower - 1.
    time_limit : float
        Seconds per decision (per cube with ``cubes``).
    num_workers : int
        CP-SAT threads.
    cubes : bool
        CP-SAT by the cube split and the second solver cube by cube (s <= 6; measured: on a
        6-input row whose whole CNF was unknown at 240 s, 24 of its 27 cubes fell in 20 s
        each).
    processes : int
        Local processes for CP-SAT's cubes.
    state_dir : path, optional
        Folder for the cube state files (resumable); names carry the table's hex and s.
    solver : str, optional
        The second solver's python-sat name for the cube split (default CaDiCaL 1.9.5).
    reference : dict, optional
        A validated :func:`cube_reference`: its refutation (both solvers) is taken as is.
    max_size : int
        The largest size tried when ``upper`` is None.
    push : bool
        Also decide the open sizes (False: only confirm the given lower bound).
    floor : int
        A lower bound both solvers already proved (an earlier refine run): the confirmation
        walks down from ``lower - 1`` no further than ``floor``.
    witness_weights : iterable of int
        Before each complete decision, look for a circuit with every weight in [-W, W] for each
        W (at most ``min(time_limit, 60)`` seconds each; only a found circuit counts).  Measured:
        a 6-input row whose complete model was unknown after 300 s has a 5-gate circuit with
        W = 1, found in 4 s.
    progress : bool
        Progress lines and bars.

    Returns
    -------
    dict
        ``lower`` (proved by both solvers), ``lower_cp_sat`` (CP-SAT alone, >= lower),
        ``upper``, ``size`` (when both meet), ``circuit`` (a witness below the given upper,
        re-verified, or None), ``disagreements`` (sizes) and ``steps``.
    """
    import sys

    from circuits.analysis.synthesis.solver import verify_witness

    t = np.asarray(table, dtype=np.uint8)
    code = "".join(map(str, t.tolist()))
    tag = f"{int(code[::-1], 2):0{max(1, len(code) // 4)}x}"

    def state(kind, s):
        if state_dir is None:
            return None
        Path(state_dir).mkdir(parents=True, exist_ok=True)
        return str(Path(state_dir) / f"{kind}_{tag}_s{s}.json")

    steps: list = []
    lo_both = lower if lower_confirmed or lower <= 1 else None
    lo_cp = lower
    circ = None
    disagreements: list = []

    def note(**kw):
        steps.append(kw)
        if progress:
            print("  refine: " + ", ".join(f"{k} {v}" for k, v in kw.items() if k != "source"),
                  file=sys.stderr, flush=True)

    if reference is not None:
        if reference["table"] != code:
            raise InvalidArgumentError("the cube reference decides another function than this "
                                       "row; pass the reference of this row")
        note(size=reference["size"], solver="both (cube records)", status="infeasible",
             source={k: reference[k] for k in ("cp_sat", "second", "cubes")})
        lo_cp = max(lo_cp, reference["lower"])
        lo_both = max(lo_both or 1, reference["lower"])
    for s in range(lower - 1, floor - 1, -1) if lo_both is None else ():
        # confirm the published bound: refute lower - 1 with the second solver; if that runs
        # out of time, the next size down (cheaper), so the bound both prove is as high as can be
        st, secs, w, how = _second_refute(t, s, time_limit, cubes, state("sat", s), solver,
                                          progress)
        note(size=s, solver=how, status=st, seconds=secs, time_limit=time_limit)
        if st == "infeasible":
            lo_both = s + 1
            break
        if st == "feasible":                  # the second solver contradicts CP-SAT
            verify_witness(w, t)
            disagreements.append(s)
            circ, upper = w, s
            break
    for s in range(lo_cp, upper if upper is not None else max_size + 1):
        if disagreements or not push:
            break
        st, secs, w, how = _cp_decide(t, s, time_limit, num_workers, cubes, processes,
                                      state("cp", s), progress, witness_weights)
        note(size=s, solver=how, status=st, seconds=secs, time_limit=time_limit)
        if st == "feasible":
            verify_witness(w, t)
            circ, upper = w, s
            break
        if st == "unknown":
            continue                          # look for a witness one size up
        lo_cp = max(lo_cp, s + 1)             # refuting s refutes every smaller size
        st2, secs2, w2, how2 = _second_refute(t, s, time_limit, cubes, state("sat", s), solver,
                                              progress)
        note(size=s, solver=how2, status=st2, seconds=secs2, time_limit=time_limit)
        if st2 == "infeasible":
            lo_both = max(lo_both or 1, s + 1)
        elif st2 == "feasible":
            verify_witness(w2, t)
            disagreements.append(s)
            circ, upper = w2, s
    if disagreements:                         # a verified witness below a CP-SAT refutation:
        lo_cp = lo_both = 1                   # no CP-SAT bound of this row is trusted
    lo_both = lo_both if lo_both is not None else floor
    if upper is not None and lo_both > upper:
        raise InvalidArgumentError(f"the row's lower bound {lo_both} exceeds its upper bound "
                                   f"{upper}: a refutation contradicts a verified circuit")
    return {"lower": lo_both, "lower_cp_sat": max(lo_cp, lo_both), "upper": upper,
            "size": upper if lo_both == upper else None, "circuit": circ,
            "disagreements": disagreements, "steps": steps}
