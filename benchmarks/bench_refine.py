"""Refining catalogue rows: how to run the two steps of a row, A B A B, median of >= 3.

    python benchmarks/bench_refine.py --repeats 3 --cap 120

Part 1, the second solver on a refutation: the whole CNF (``decide_depth2_sat``, the baseline)
against the CNF cube by cube (``confirm_by_cubes``, what ``--refine --cubes`` runs), on
symmetric 6-input rows whose refutation both finish.  Part 2, a witness at the least size:
CP-SAT's complete model with its quick stage (``least_depth2`` at that one size, the baseline)
against the search with every |w| <= 1 (``decide_depth2(max_weight=1)``, the refine mode's
default ``--witness-weights 1``).  Every answer is checked (a baseline may run out of time,
never contradict).  Writes benchmarks/results_refine.json.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._common import interleaved, machine_info  # noqa: E402


def main(argv=None) -> int:
    from circuits.analysis.synthesis.catalogue import symmetric_classes
    from circuits.analysis.synthesis.least import least_depth2
    from circuits.analysis.synthesis.model import decide_depth2
    from circuits.analysis.synthesis.second import decide_depth2_sat
    from circuits.analysis.synthesis.second_cubes import confirm_by_cubes

    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--cap", type=float, default=120.0, help="seconds cap of every solver call")
    p.add_argument("--out", type=Path, default=Path("benchmarks/results_refine.json"))
    args = p.parse_args(argv)
    sym6 = dict(symmetric_classes(6))
    cap = args.cap
    cases = []
    for v in ("0100110", "0001010"):               # s = 3 refutations (infeasible)
        t = sym6[v]
        cases.append((f"SYM6[{v}], s = 3, second solver", "infeasible", {
            "cubes": lambda t=t: confirm_by_cubes(t, 3, time_limit=cap, progress=False)["status"],
            "baseline": lambda t=t: decide_depth2_sat(t, 3, time_limit=cap)["status"]}))
    for v in ("0100110", "0010110"):               # 4-gate witnesses (feasible)
        t = sym6[v]
        cases.append((f"SYM6[{v}], s = 4, witness", "feasible", {
            "w1": lambda t=t: decide_depth2(t, 4, max_weight=1, time_limit=cap,
                                            num_workers=1)[0].status,
            "baseline": lambda t=t: least_depth2(t, lower=4, max_size=4, time_limit=cap,
                                                 num_workers=1, confirm=False,
                                                 cross_check=False).claims[-1].status}))
    rows = []
    for name, expect, cands in cases:
        def check(who, res, expect=expect):
            assert res in (expect, "unknown") if who == "baseline" else res == expect, (who, res)
        t = interleaved(cands, args.repeats, check=check)
        ours = next(k for k in cands if k != "baseline")
        a, b = t[ours], t["baseline"]
        load = os.getloadavg()[0]
        ratio = b.median / a.median
        rows.append({"case": name, "ours_name": ours, "ours": a.to_dict(),
                     "baseline": b.to_dict(), "ratio": ratio, "load1": load})
        print(f"{name:<36} {ours} {a.summary()}   baseline {b.summary()}   "
              f"ratio {ratio:.2f}x   load {load:.1f}", flush=True)
    args.out.write_text(json.dumps({"machine": machine_info(), "cap": args.cap,
                                    "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
