"""Benchmark: exact least THR o THR sizes by CP-SAT (``least_depth2``).

Ours: :func:`circuits.analysis.decide_depth2` / :func:`least_depth2` with the complete weight
bounds (per-gate maxima 3 / 5 / 9 for N = 4 / 5 / 6), the default symmetry breaking
(complement + order, plus the separation clauses), 2 CP-SAT workers.  Every case is timed in the
same run as its baseline, interleaved (A B A B ..., median of >= 3), each call capped at
``--cap`` seconds; a capped call counts as ``cap`` seconds and makes the ratio a lower bound.

Part A, against the plain CP-SAT model the issue defines (no symmetry breaking, every weight in
[-9, 9], 2 threads; built literally, see ``_plain``):

* PAR_4, prove least = 4: s = 3 infeasible, then s = 4 feasible;
* PAR_5, prove least = 5: s = 4 infeasible, then s = 5 feasible (the baseline's s = 5 is skipped
  when its s = 4 did not finish: the proof failed);
* IP_3 with 3 hidden gates: infeasible.

Part B, what each symmetry kind contributes (same model, complete bounds, 2 workers): the
default, the default without complement, without order, none, and the default plus f's own
group ("function"), on PAR_4 with 3 gates, and default against default + function on PAR_5 with
4 gates and IP_3 with 3 gates.

Part C, against the exhaustive enumerator :func:`circuits.analysis.min_depth2_size` (its naive
twin): least size of IP_2 and PAR_3.  Single recorded time (not a ratio): S(4, 3) = 30 by
:func:`max_sliced_edges`.

Part D, the second solver and the cube split (same decisions, same run): the bit-blasted CNF
solved by CaDiCaL (:func:`~circuits.analysis.synthesis.second.decide_depth2_sat`, the check of
every refutation) against the CP-SAT model on PAR_4 with 3 gates and PAR_5 with 4 gates, and the
cube split (:func:`~circuits.analysis.synthesis.parallel.decide_by_cubes`, serial, one CP-SAT
worker per cube) against the whole model with one worker on PAR_5 with 4 gates and IP_3 with 3.

Part E, the second solver cube by cube and the slicing decision (same run, interleaved): the
cube split decided by CaDiCaL on bit-blasted cubes
(:func:`~circuits.analysis.synthesis.second_cubes.confirm_by_cubes`, the check of the PAR_6
refutation) against the CP-SAT cube split, serial, on PAR_4 with 3 gates and PAR_5 with 4; and
:func:`~circuits.analysis.synthesis.slicing.decide_slicing` ("3 planes cut 31 of the 32 edges
of Q4", infeasible) by CP-SAT against CaDiCaL.

Part F, a cube refuted on a restriction of f against the whole cube (same run, interleaved):
:func:`~circuits.analysis.synthesis.restrict.solve_cube_restricted` (f's restrictions fixing up
to 2 inputs, fewest inputs first, f's own cube skipped) against
:func:`~circuits.analysis.synthesis.cubes.solve_cube` on IP_4 with 4 gates, for cubes the whole
model refutes (1, 17, 25, 7) and one it leaves open (10), one CP-SAT worker each.

Usage: python benchmarks/bench_least.py [--repeats 3] [--cap 90] [--skip-big]
       [--out benchmarks/results_least.json]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import interleaved, machine_info  # noqa: E402
from circuits.analysis import decide_depth2, least_depth2, min_depth2_size  # noqa: E402
from circuits.analysis.exact_synthesis import DEFAULT_SYMMETRY, max_sliced_edges  # noqa: E402
from circuits.functions import inner_product_mod2, parity  # noqa: E402
from circuits.utils.files import write_json_atomic  # noqa: E402


def _plain(f, s, cap):
    """The issue's plain model, literally: no symmetry breaking, every weight (hidden and top)
    in [-9, 9], 2 CP-SAT workers.  (``decide_depth2(max_weight=9)`` would cap at the smaller
    complete per-gate bounds instead: 5 for 5 inputs, 3 for 4, and so be a stronger baseline.)"""
    import numpy as np
    from ortools.sat.python import cp_model

    from circuits.analysis.synthesis.model import _build

    t = np.asarray(f, dtype=np.uint8)
    n = int(t.size).bit_length() - 1
    model, _ = _build(t, n, s, 9, 9, False, (), False)
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = float(cap)
    solver.parameters.num_workers = 2
    st = solver.Solve(model)
    return {cp_model.OPTIMAL: "feasible", cp_model.FEASIBLE: "feasible",
            cp_model.INFEASIBLE: "infeasible"}.get(st, "unknown")


def _prove(f, least, *, plain, cap, symmetry=True):
    """Decide s = least - 1 (expect infeasible) and s = least (expect feasible); returns the
    statuses (the second is skipped when the first did not finish)."""
    out = []
    for s in ((least - 1, least) if least else ()):
        if s < 1:
            continue
        st = (_plain(f, s, cap) if plain else
              decide_depth2(f, s, time_limit=cap, num_workers=2, symmetry=symmetry)[0].status)
        out.append(st)
        if st == "unknown":
            break
    return tuple(out)


def _decide(f, s, *, plain, cap, symmetry=True):
    if plain:
        return (_plain(f, s, cap),)
    c, _ = decide_depth2(f, s, time_limit=cap, num_workers=2, symmetry=symmetry)
    return (c.status,)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--cap", type=float, default=90.0, help="seconds cap of every solver call")
    p.add_argument("--out", type=Path, default=Path("benchmarks/results_least.json"))
    p.add_argument("--skip-big", action="store_true", help="skip PAR_5 / IP_3 / S(4,3)")
    p.add_argument("--only", default=None,
                   help="comma list of parts to run (A, B, C, D, E, F)")
    args = p.parse_args(argv)
    parts = set((args.only or "A,B,C,D,E,F").upper().split(","))
    cap = args.cap
    rows = []

    def record(name, timings, base, ours="ours", part="A"):
        a, b = timings[ours], timings[base]
        def unknown(res):
            return isinstance(res, tuple) and "unknown" in res
        capped = unknown(b.result) or b.max >= cap
        ours_capped = unknown(a.result)
        ratio = b.median / a.median if a.median > 0 else float("inf")
        load = os.getloadavg()[0]
        rows.append({"part": part, "case": name, "ours": a.to_dict(), base: b.to_dict(),
                     "baseline": base, "ratio": ratio, "baseline_capped": capped,
                     "ours_capped": ours_capped, "load1": load,
                     "ours_result": a.result, "baseline_result": b.result})
        mark = ">= " if capped else ""
        print(f"[{part}] {name:<34} {ours} {a.summary()} {a.result}   {base} {b.summary()} "
              f"{b.result}   ratio {mark}{ratio:.1f}x   load {load:.1f}", flush=True)

    def ok_proof(expect):
        def chk(who, res):
            if who == "plain":      # the baseline may run out of time, never contradict us
                assert all(r in (e, "unknown") for r, e in zip(res, expect)), (who, res)
            else:
                assert res == expect, (who, res)
        return chk

    if "A" in parts:
        cases = [("PAR_4: prove least = 4", parity(4), 4)]
        if not args.skip_big:
            cases += [("PAR_5: prove least = 5", parity(5), 5)]
        for name, f, least in cases:
            t = interleaved({"ours": lambda f=f, k=least: _prove(f, k, plain=False, cap=cap),
                             "plain": lambda f=f, k=least: _prove(f, k, plain=True, cap=cap)},
                            args.repeats, check=ok_proof(("infeasible", "feasible")))
            record(name, t, "plain")
        if not args.skip_big:
            f = inner_product_mod2(3)
            t = interleaved({"ours": lambda: _decide(f, 3, plain=False, cap=cap),
                             "plain": lambda: _decide(f, 3, plain=True, cap=cap)},
                            args.repeats, check=ok_proof(("infeasible",)))
            record("IP_3: no 3 gates", t, "plain")

    if "B" in parts:
        d = DEFAULT_SYMMETRY
        variants = {"default": d, "no complement": tuple(x for x in d if x != "complement"),
                    "no order": tuple(x for x in d if x != "order"), "none": (),
                    "default+function": d + ("function",)}
        f4 = parity(4)
        cands = {k: (lambda s=v: _decide(f4, 3, plain=False, cap=cap, symmetry=s))
                 for k, v in variants.items()}

        def chk_b(who, res):
            assert res in (("infeasible",), ("unknown",)), (who, res)
        t = interleaved(cands, args.repeats, check=chk_b)
        for k in variants:
            if k != "default":
                record(f"PAR_4 s=3: default vs {k}", t, k, ours="default", part="B")
        if not args.skip_big:
            for name, f, s in (("PAR_5 s=4", parity(5), 4), ("IP_3 s=3", inner_product_mod2(3), 3)):
                t = interleaved(
                    {"default": lambda f=f, s=s: _decide(f, s, plain=False, cap=cap),
                     "default+function": lambda f=f, s=s: _decide(
                         f, s, plain=False, cap=cap, symmetry=DEFAULT_SYMMETRY + ("function",))},
                    args.repeats, check=chk_b)
                record(f"{name}: default vs default+function", t, "default+function",
                       ours="default", part="B")

    if "D" in parts:
        from circuits.analysis.synthesis.parallel import decide_by_cubes
        from circuits.analysis.synthesis.second import decide_depth2_sat

        def whole(f, s, workers):
            return (decide_depth2(f, s, time_limit=cap, num_workers=workers)[0].status,)

        def chk_d(who, res):
            assert res in (("infeasible",), ("unknown",)), (who, res)
        cases = [("PAR_4 s=3", parity(4), 3)]
        if not args.skip_big:
            cases.append(("PAR_5 s=4", parity(5), 4))
        for name, f, s in cases:
            t = interleaved({"CP-SAT": lambda f=f, s=s: whole(f, s, 2),
                             "CaDiCaL CNF": lambda f=f, s=s: (
                                 decide_depth2_sat(f, s, time_limit=cap)["status"],)},
                            args.repeats, check=chk_d)
            record(f"{name}: second solver", t, "CaDiCaL CNF", ours="CP-SAT", part="D")
        if not args.skip_big:
            for name, f, s in (("PAR_5 s=4", parity(5), 4), ("IP_3 s=3", inner_product_mod2(3), 3)):
                t = interleaved({"cube split": lambda f=f, s=s: (decide_by_cubes(
                                     f, s, time_limit=cap, progress=False)["status"],),
                                 "whole model": lambda f=f, s=s: whole(f, s, 1)},
                                args.repeats, check=chk_d)
                record(f"{name}: cube split", t, "whole model", ours="cube split", part="D")

    if "E" in parts:
        from circuits.analysis.synthesis.parallel import decide_by_cubes
        from circuits.analysis.synthesis.second_cubes import confirm_by_cubes
        from circuits.analysis.synthesis.slicing import decide_slicing

        def chk_e(who, res):
            assert res in (("infeasible",), ("unknown",)), (who, res)
        cases = [("PAR_4 s=3", parity(4), 3)]
        if not args.skip_big:
            cases.append(("PAR_5 s=4", parity(5), 4))
        for name, f, s in cases:
            t = interleaved({"CP-SAT cubes": lambda f=f, s=s: (decide_by_cubes(
                                 f, s, time_limit=cap, progress=False)["status"],),
                             "CaDiCaL cubes": lambda f=f, s=s: (confirm_by_cubes(
                                 f, s, time_limit=cap, progress=False)["status"],)},
                            args.repeats, check=chk_e)
            record(f"{name}: cubes, second solver", t, "CaDiCaL cubes", ours="CP-SAT cubes",
                   part="E")
        t = interleaved({"CP-SAT": lambda: (decide_slicing(4, 3, time_limit=cap)["status"],),
                         "CaDiCaL CNF": lambda: (decide_slicing(4, 3, time_limit=cap,
                                                                solver="sat")["status"],)},
                        args.repeats, check=chk_e)
        record("Q4, 3 planes cut 31 edges", t, "CaDiCaL CNF", ours="CP-SAT", part="E")

    if "F" in parts and not args.skip_big:
        from circuits.analysis.synthesis.cubes import solve_cube, top_gate_cubes
        from circuits.analysis.synthesis.restrict import solve_cube_restricted

        ip4, gates = inner_product_mod2(4), top_gate_cubes(4)

        def chk_f(who, res):
            assert res in (("infeasible",), ("unknown",)), (who, res)
        for c in (1, 17, 25, 7, 10):
            t = interleaved({"restriction": lambda c=c: (solve_cube_restricted(
                                 ip4, gates[c], 2, time_limit=cap, whole=False)["status"],),
                             "whole cube": lambda c=c: (solve_cube(
                                 ip4, gates[c], time_limit=cap)["status"],)},
                            args.repeats, check=chk_f)
            record(f"IP_4 s=4 cube {c}", t, "whole cube", ours="restriction", part="F")

    singles = []
    if "C" in parts:
        for name, f, ms, expect in (("IP_2 least size", inner_product_mod2(2), 2, 2),
                                    ("PAR_3 least size", parity(3), 3, 3)):
            def chk(who, res, expect=expect):
                assert res == expect, (who, res)
            t = interleaved({"ours": lambda f=f, ms=ms: least_depth2(
                                 f, max_size=ms, num_workers=2, time_limit=cap,
                                 cross_check=False).size,
                             "enumerator": lambda f=f, ms=ms: min_depth2_size(f, ms).size},
                            args.repeats, check=chk)
            record(name, t, "enumerator", part="C")
        if not args.skip_big:
            t0 = time.perf_counter()
            r = max_sliced_edges(4, 3, time_limit=cap)
            singles.append({"case": "S(4,3) max sliced edges", "result": r["max_cut"],
                            "status": r["status"], "seconds": time.perf_counter() - t0,
                            "expected": 30, "load1": os.getloadavg()[0]})
            for srow in singles:
                print(f"[C] {srow['case']:<34} {srow['result']} ({srow['status']}) "
                      f"{srow['seconds']:.1f} s", flush=True)
    write_json_atomic(args.out, {"machine": machine_info(), "rows": rows, "singles": singles,
                                 "cap_s": cap, "argv": sys.argv[1:]})
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
