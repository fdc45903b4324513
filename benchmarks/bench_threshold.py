"""E18 benchmark: counting the threshold functions of N inputs (OEIS A000609).

Ours: ``circuits.analysis.count_threshold_functions(N)`` -- decide the Dedekind-many monotone functions
(each answer certified exactly: verified integer weights or a summability certificate) and close
under input negations; the per-process cache is cleared before every repeat.
Also ours: ``method="exhaustive"`` (all 2^(2^N) tables, non-unate ones by an exact 2-summability
certificate, the rest by LP).
Baseline (named in THEORY.md E18): one margin-1 feasibility LP (scipy HiGHS) for every one of
the 2^(2^N) truth tables, written the way a researcher would, without any exact check.

Timed A B A B ... (interleaved), median of >= 3 repeats; all counts must agree.

Usage: python benchmarks/bench_threshold.py [--n 3 4] [--repeats 3] [--skip-baseline-above 4]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import interleaved, machine_info  # noqa: E402
from circuits.analysis import count_threshold_functions  # noqa: E402
from circuits import points  # noqa: E402
from circuits.utils.files import write_json_atomic  # noqa: E402

A000609 = [2, 4, 14, 104, 1882, 94572]


def baseline_count(n: int) -> int:
    """One scipy LP per truth table (no prefilter, no certificates)."""
    from scipy.optimize import linprog

    Z = points(n).astype(np.float64)
    k = np.arange(1 << n)
    count = 0
    for code in range(1 << (1 << n)):
        y = (code >> k) & 1
        A = np.hstack([np.where(y[:, None] == 1, -Z, Z), np.where(y == 1, 1.0, -1.0)[:, None]])
        b = np.where(y == 1, 0.0, -1.0)
        res = linprog(np.zeros(n + 1), A_ub=A, b_ub=b, bounds=[(None, None)] * (n + 1), method="highs")
        count += res.status == 0
    return count


def ours(n: int, method: str) -> int:
    import circuits.analysis.threshold_functions as tf

    tf._THRESHOLD_CODES.clear()          # no caching between repeats
    return count_threshold_functions(n, method=method)


def main(argv=None):
    ap = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[3, 4])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=str(Path(__file__).with_name("results_threshold.json")))
    args = ap.parse_args(argv)
    record = {"machine": machine_info(), "command": "python benchmarks/bench_threshold.py "
              + " ".join(sys.argv[1:] if argv is None else argv), "rows": []}
    ours(2, "monotone")                   # warm-up: imports scipy, HiGHS
    for n in args.n:
        cands = {"ours (monotone)": lambda n=n: ours(n, "monotone"),
                 "ours (exhaustive)": lambda n=n: ours(n, "exhaustive"),
                 "baseline (LP per table)": lambda n=n: baseline_count(n)}

        def check(name, res, n=n):
            if res != A000609[n]:
                raise AssertionError(f"{name} counted {res} at N={n}, expected {A000609[n]}")

        t0 = time.time()
        res = interleaved(cands, repeats=args.repeats, check=check)
        base = res["baseline (LP per table)"].median
        row = {"n": n, "count": A000609[n], "elapsed_s": time.time() - t0,
               "timings": {k: v.to_dict() for k, v in res.items()},
               "ratios_vs_baseline": {k: base / v.median for k, v in res.items()}}
        record["rows"].append(row)
        for k, v in res.items():
            print(f"N={n} {k:26s} {v.summary()}  ratio {base / v.median:8.1f}x  count {v.result}")
        write_json_atomic(args.out, record)
    return record


if __name__ == "__main__":
    main()
