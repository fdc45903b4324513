"""The least hidden size: decide s = lower, lower + 1, ... until a circuit is found."""

from __future__ import annotations

import dataclasses

from circuits.analysis.synthesis.model import decide_depth2
from circuits.analysis.synthesis.records import LeastDepth2, SizeClaim
from circuits.analysis.synthesis.symmetry import MAX_SYNTH_BITS, _check_symmetry
from circuits.analysis.synthesis.twin import _cross_check
from circuits.analysis.threshold_functions import _table
from circuits.hypercube import check_n_bits
from circuits.utils.errors import InvalidArgumentError

__all__ = ["least_depth2"]


def least_depth2(truth_table, *, lower: int = 1, max_size: int = 8,
                 max_weight: "int | None" = None, direct: bool = False, symmetry=True,
                 time_limit: float = 60.0, num_workers: int = 2, progress: bool = False,
                 cross_check: bool = True, quick_weight: "int | None" = 9,
                 quick_time: float = 60.0, confirm: "bool | float" = True,
                 cubes: "dict | None" = None,
                 _solve=None, _sat_solve=None) -> LeastDepth2:
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
    symmetry : bool, "all" or iterable of {"complement", "order", "function"}
        Symmetry breaking: True (default) is ``DEFAULT_SYMMETRY`` = complement and order, the
        measured fastest; "all" adds f's own group.  Any subset is sound (module docstring).
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
    cross_check : bool
        Check every infeasibility claim against the exhaustive enumerator where it finishes.
    confirm : bool or float
        Check every infeasibility claim with the second solver
        (:func:`~circuits.analysis.synthesis.second.decide_depth2_sat`, a different encoding
        and a CDCL solver) for ``time_limit`` seconds (a number: that many seconds; False: off);
        with direct wires where the top gate's fan-in s + N is at most 8.
        A disagreement is recorded in ``disagreements`` and named by the summary; when the
        second solver found a circuit (re-verified on the whole cube) it settles s.
    cubes : dict, optional
        Decide each s <= 6 by the cube split instead of the whole model
        (:func:`~circuits.analysis.synthesis.parallel.decide_by_cubes`; the dict holds its
        options: ``processes``, ``client``, ``state`` -- a path with ``{s}`` for the size --,
        ``progress``, ``restrict`` and ``whole``); ``time_limit`` is then per cube (per
        attempt with ``restrict``).
    _solve, _sat_solve : callable, optional
        Test hooks replacing the CP-SAT and the SAT solver calls.

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
        by_cubes = cubes is not None and s <= 6 and not direct and max_weight is None
        if by_cubes:
            claim, circ = _decide_cubes(t, s, time_limit, num_workers, cubes)
        else:
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
        if claim.status == "infeasible" and confirm and claim.size + (n if direct else 0) <= 8:
            claim, sat_circ = _confirm(t, claim, confirm, time_limit, max_weight, _sat_solve,
                                       direct, cubes if by_cubes else None)
            res.claims[-1] = claim
            if progress:
                print(f"least_depth2 N={n} s={s}: second solver ({claim.second['solver']}): "
                      f"{claim.second['status']} in {claim.second['wall_s']:.2f} s, "
                      f"{claim.second['verdict']}", file=sys.stderr, flush=True)
            if claim.second["verdict"] == "disagrees":       # it found a verified circuit
                res.disagreements.append(s)
                res.upper, res.circuit = s, sat_circ
                break
        if claim.status == "infeasible":
            if cross_check and not direct and max_weight is None and _cross_check(t, n, s,
                                                                                 cross_check):
                claim = res.claims[-1] = dataclasses.replace(claim, cross_checked=True)
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


def _confirm(t, claim, confirm, time_limit, max_weight, _sat_solve, direct=False, cubes=None):
    """The claim with the second solver's opinion attached, and its witness (or None)."""
    from circuits.analysis.synthesis.second import second_opinion

    seconds = time_limit if confirm is True else float(confirm)
    if cubes is not None:
        return _confirm_cubes(t, claim, seconds, cubes)
    op = second_opinion(t, claim, time_limit=seconds, max_weight=max_weight, direct=direct,
                        _solve=_sat_solve)
    rec = {k: op[k] for k in ("verdict", "status", "solver", "version", "wall_s", "clauses")}
    return dataclasses.replace(claim, second=rec), op["circuit"]


def _confirm_cubes(t, claim, seconds: float, opts: dict):
    """A cube-split claim checked by the second solver cube by cube, with the same restrictions
    and f's lex-leader (:func:`~circuits.analysis.synthesis.second_cubes.confirm_by_cubes`); its
    state file is the CP-SAT one's with ``_sat`` added, so a rerun resumes it too."""
    from pathlib import Path

    from circuits.analysis.synthesis.records import circuit_from_layers
    from circuits.analysis.synthesis.second import SECOND_SOLVER, _pysat
    from circuits.analysis.synthesis.second_cubes import confirm_by_cubes, restriction_hints

    state, prefer = opts.get("state"), None
    if state is not None:
        p = Path(str(state).format(s=claim.size))
        state = p.with_name(p.stem + "_sat" + p.suffix)
        if p.exists():          # check first the restriction that refuted each cube for CP-SAT
            from circuits.utils.files import read_json

            prefer = restriction_hints(read_json(p).get("cubes", {}))
    r = confirm_by_cubes(t, claim.size, time_limit=seconds, state=state,
                         restrict=opts.get("restrict", 0), whole=opts.get("whole", True),
                         progress=opts.get("progress", True), prefer=prefer, function=True)
    verdict = ("unknown" if r["status"] == "unknown" else
               "confirmed" if r["status"] == claim.status else "disagrees")
    circ = None if r["witness"] is None else circuit_from_layers(r["witness"])
    rec = {"verdict": verdict, "status": r["status"],
           "solver": f"python-sat {SECOND_SOLVER}, cube split ({r['cubes']} top-gate classes)",
           "version": _pysat()[1], "wall_s": r["cube_seconds"], "clauses": None}
    return dataclasses.replace(claim, second=rec), circ


def _decide_cubes(t, s: int, time_limit: float, num_workers: int, opts: dict):
    """One decision by the cube split, as a claim (top weights unbounded: 0) and a witness."""
    from circuits.analysis.synthesis.parallel import decide_by_cubes
    from circuits.analysis.synthesis.records import circuit_from_layers
    from circuits.analysis.synthesis.solver import SOLVER_NAME, _cp_model
    from circuits.analysis.synthesis.weights import weight_bound

    opts = dict(opts)
    if opts.get("state") is not None:
        opts["state"] = str(opts["state"]).format(s=s)
    r = decide_by_cubes(t, s, time_limit=time_limit, num_workers=num_workers, **opts)
    _, version = _cp_model()
    how = f"cube split ({r['cubes']} top-gate classes"
    if opts.get("restrict"):
        how += (f"; restrictions of f fixing up to {opts['restrict']} inputs tried first, each "
                f"with the complete weight bound of the inputs it keeps")
    claim = SizeClaim(s, r["status"], f"{SOLVER_NAME}, {how})",
                      version, r["cube_seconds"], weight_bound(int(t.size).bit_length() - 1)[0],
                      0, True)
    return claim, (None if r["witness"] is None else circuit_from_layers(r["witness"]))
