"""Depth 3: decide_depth3 with the implied separation clauses (``separate=True``, the default)
against the same model without them (the baseline), A B A B, median of >= 3.

    python benchmarks/bench_least3.py --repeats 3 --cap 90

Cases: PAR_4 with layers (3, 3) (infeasible: 3 planes slice at most 30 of Q4's 32 edges) and
(3, 2); IP_3 with (3, 2) (feasible).  Every answer is checked (the baseline may run out of time,
never contradict).  Writes benchmarks/results_least3.json.
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
    from circuits.analysis.exact_synthesis import target_table
    from circuits.analysis.synthesis.depth3 import decide_depth3
    from circuits.functions import parity

    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--cap", type=float, default=90.0, help="seconds cap of every solver call")
    p.add_argument("--out", type=Path, default=Path("benchmarks/results_least3.json"))
    args = p.parse_args(argv)
    ip3, _ = target_table("ip", 3)
    cases = [("PAR_4, layers (3, 3)", parity(4), (3, 3), "infeasible"),
             ("PAR_4, layers (3, 2)", parity(4), (3, 2), "infeasible"),
             ("IP_3, layers (3, 2)", ip3, (3, 2), "feasible")]
    rows = []
    for name, f, sizes, expect in cases:
        def run(sep, f=f, sizes=sizes):
            return decide_depth3(f, sizes, separate=sep, time_limit=args.cap,
                                 num_workers=1)[0].status

        def check(who, res, expect=expect):
            assert res in (expect, "unknown") if who == "baseline" else res == expect, (who, res)
        t = interleaved({"separate": lambda: run(True), "baseline": lambda: run(False)},
                        args.repeats, check=check)
        a, b = t["separate"], t["baseline"]
        capped = b.result == "unknown" or b.max >= args.cap
        load = os.getloadavg()[0]
        ratio = b.median / a.median
        rows.append({"case": name, "ours": a.to_dict(), "baseline": b.to_dict(),
                     "ratio": ratio, "baseline_capped": capped, "load1": load,
                     "result": a.result})
        print(f"{name:<24} separate {a.summary()} {a.result}   without {b.summary()} "
              f"{b.result}   ratio {'>= ' if capped else ''}{ratio:.1f}x   load {load:.1f}",
              flush=True)
    args.out.write_text(json.dumps({"machine": machine_info(), "cap": args.cap,
                                    "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
