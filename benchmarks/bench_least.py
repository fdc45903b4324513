"""Issue 21 benchmark: exact least THR o THR sizes by CP-SAT (``least_depth2``).

Ours: :func:`circuits.analysis.least_depth2` (complete weight bounds, complement + order
symmetry breaking, separation clauses, small-weight look-ahead), 2 CP-SAT workers.
Baselines, same run, interleaved (A B A B ..., median of >= 3):

* the exhaustive enumerator :func:`circuits.analysis.min_depth2_size` (N <= 4) for IP_2 and PAR_3;
* the plain CP-SAT model the issue names: no symmetry breaking, every weight in [-9, 9],
  2 threads (``decide_depth2(..., symmetry=False, max_weight=9)`` per size), for the
  infeasibility proofs PAR_4 with 3 gates and PAR_5 with 4 gates (capped at ``--cap`` seconds:
  a capped run is reported as ">= cap, undecided").

Single recorded times (not ratios): S(4, 3) = 30 by :func:`max_sliced_edges`, IP_3 with 3 gates.

Usage: python benchmarks/bench_least.py [--repeats 3] [--cap 60] [--out benchmarks/results_least.json]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import interleaved, machine_info  # noqa: E402
from circuits.analysis import decide_depth2, least_depth2, min_depth2_size  # noqa: E402
from circuits.analysis.exact_synthesis import max_sliced_edges  # noqa: E402
from circuits.functions import inner_product_mod2, parity  # noqa: E402
from circuits.utils.files import write_json_atomic  # noqa: E402


def _ours(f, max_size):
    return least_depth2(f, max_size=max_size, num_workers=2, time_limit=600, cross_check=False).size


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--cap", type=float, default=60.0, help="seconds cap of the plain baseline")
    p.add_argument("--out", type=Path, default=Path("benchmarks/results_least.json"))
    p.add_argument("--skip-big", action="store_true", help="skip PAR_5 / IP_3 / S(4,3)")
    args = p.parse_args(argv)
    rows = []

    def record(name, timings, base, expect):
        a, b = timings["ours"], timings[base]
        ratio = b.median / a.median if a.median > 0 else float("inf")
        rows.append({"case": name, "ours": a.to_dict(), base: b.to_dict(), "ratio": ratio,
                     "expected": expect, "ours_result": a.result, "baseline_result": b.result})
        print(f"{name:<28} ours {a.summary()}   {base} {b.summary()}   ratio {ratio:.1f}x",
              flush=True)

    cases = [("IP_2 least size", inner_product_mod2(2), 2, 2),
             ("PAR_3 least size", parity(3), 3, 3)]
    for name, f, ms, expect in cases:
        def chk(who, res, expect=expect):
            assert res == expect, (who, res)
        t = interleaved({"ours": lambda f=f, ms=ms: _ours(f, ms),
                         "enumerator": lambda f=f, ms=ms: min_depth2_size(f, ms).size},
                        args.repeats, check=chk)
        record(name, t, "enumerator", expect)

    def proof(f, s, plain):
        if plain:
            c, _ = decide_depth2(f, s, symmetry=False, max_weight=9, time_limit=args.cap,
                                 num_workers=2)
        else:
            c, _ = decide_depth2(f, s, num_workers=2, time_limit=600)
        return c.status

    proofs = [("PAR_4: no 3 gates", parity(4), 3)]
    if not args.skip_big:
        proofs.append(("PAR_5: no 4 gates", parity(5), 4))
    for name, f, s in proofs:
        def chk(who, res):
            assert res in ("infeasible", "unknown") and (who == "plain" or res == "infeasible")
        t = interleaved({"ours": lambda f=f, s=s: proof(f, s, False),
                         "plain": lambda f=f, s=s: proof(f, s, True)}, args.repeats, check=chk)
        record(name, t, "plain", "infeasible")

    singles = []
    if not args.skip_big:
        t0 = time.perf_counter()
        r = max_sliced_edges(4, 3, time_limit=300)
        singles.append({"case": "S(4,3) max sliced edges", "result": r["max_cut"],
                        "status": r["status"], "seconds": time.perf_counter() - t0,
                        "expected": 30})
        t0 = time.perf_counter()
        c, _ = decide_depth2(inner_product_mod2(3), 3, time_limit=300)
        singles.append({"case": "IP_3: no 3 gates (complete bounds)", "result": c.status,
                        "seconds": time.perf_counter() - t0})
        for srow in singles:
            print(f"{srow['case']:<36} {srow['result']} ({srow.get('status', '')}) "
                  f"{srow['seconds']:.1f} s", flush=True)
    write_json_atomic(args.out, {"machine": machine_info(), "rows": rows, "singles": singles,
                                 "cap_s": args.cap})
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
