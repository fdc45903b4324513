"""Bit-sliced block kernel: this checkout against an earlier commit, and one thread against two.

Candidate: ``circuits._kernels_bitsliced._bs_block`` of this checkout.  Baseline: the same module
at ``--rev`` (default 0710a9b, the kernel before the 15:4 compressors), loaded from ``git show``
into a temporary module.  Both run the whole cube of W1, W2, W3 (as in bench_bitsliced.py) on one
thread, interleaved A B A B in one process; plans, mask tables and arguments are built before
timing, so the figure is kernel work only.  Counts and first counterexamples must agree.

``--threads``: the same block kernel over the cube split in two halves on two Python threads
(the kernel releases the GIL) against one thread, to show whether a second vCPU adds throughput.

Usage::

    python benchmarks/bench_bitsliced_ab.py --repeats 11
    python benchmarks/bench_bitsliced_ab.py --rev 0710a9b --workload W1,W3 --threads

Results: ``benchmarks/results_bitsliced_ab.md`` and ``.json`` (written atomically).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import circuits as c  # noqa: E402
from benchmarks import _common  # noqa: E402
from benchmarks.bench_circuits import w1_circuit  # noqa: E402
from circuits import _bitsliced_plan, _kernels_bitsliced as current  # noqa: E402

WORKLOADS = {"W1": (24, 64, 1, False), "W2": (26, 256, 2, False), "W3": (26, 64, 3, True)}


def load_rev(rev: str, tmp: str):
    src = subprocess.run(["git", "show", f"{rev}:circuits/_kernels_bitsliced.py"],
                         cwd=HERE.parent, check=True, capture_output=True, text=True).stdout
    path = Path(tmp) / "_bs_baseline.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location("_bs_baseline", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def block_call(mod, wid):
    N, width, seed, ip = WORKLOADS[wid]
    circ = w1_circuit(N, width, seed=seed)
    kind, params, table = c.as_boolean_function("ip" if ip else c.Constant(N, 0), N)._spec()
    builder = mod if hasattr(mod, "build") else _bitsliced_plan   # builder split out later
    plan = builder.finish(builder.build(circ))
    args = plan.args() + (np.array([0, 1 << N, kind], dtype=np.int64),
                          np.ascontiguousarray(params, dtype=np.int64),
                          np.ascontiguousarray(table, dtype=np.uint8), np.zeros(1, np.uint8))
    H = (1 << N) >> mod.LB

    def one():
        cnt, first = mod._bs_block(*args, 0, H)
        return int(cnt), int(first)

    def two():
        out = [None, None]

        def work(i):
            out[i] = mod._bs_block(*args, i * H // 2, (i + 1) * H // 2)
        ts = [threading.Thread(target=work, args=(i,)) for i in range(2)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        firsts = [int(f) for _, f in out if f >= 0]
        return int(sum(cnt for cnt, _ in out)), (min(firsts) if firsts else -1)
    return one, two


def main(argv=None) -> int:
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rev", default="0710a9b", help="git revision of the baseline kernel")
    p.add_argument("--workload", default="W1,W2,W3")
    p.add_argument("--repeats", type=int, default=11)
    p.add_argument("--threads", action="store_true", help="also time one vs two threads")
    p.add_argument("--out", default=str(HERE / "results_bitsliced_ab"))
    args = p.parse_args(argv)
    todo = [w.strip() for w in args.workload.split(",") if w.strip()]
    if set(todo) - set(WORKLOADS):
        p.error(f"unknown workload(s) {sorted(set(todo) - set(WORKLOADS))}; choose from "
                f"{sorted(WORKLOADS)}")
    res = {"command": "python benchmarks/bench_bitsliced_ab.py " + " ".join(
        argv if argv is not None else sys.argv[1:]), "machine": _common.machine_info(),
        "rev": args.rev, "repeats": args.repeats, "rows": []}
    lines = ["# Bit-sliced block kernel: this checkout vs an earlier commit", "",
             f"Command: `{res['command']}`  ",
             f"Baseline: `circuits/_kernels_bitsliced.py` at `{args.rev}`; candidate: this "
             f"checkout. Whole cube, one thread, kernel only (plans built before timing), "
             f"interleaved, median [min–max] of {args.repeats}; load = 1-min load average.", "",
             "| id | count, first | baseline | this checkout | ratio | 1 thread | 2 threads | "
             "2-thread speed-up | load |", "|---" * 9 + "|"]
    with tempfile.TemporaryDirectory() as tmp:
        base = load_rev(args.rev, tmp)
        for wid in todo:
            b1, _ = block_call(base, wid)
            n1, n2 = block_call(current, wid)
            b1(), n1(), n2()                      # compile (the baseline has no cache) and warm
            load0 = os.getloadavg()[0]
            t = _common.interleaved({"baseline": b1, "current": n1}, args.repeats)
            if t["baseline"].result != t["current"].result:
                raise AssertionError(f"{wid}: {t['baseline'].result} != {t['current'].result}")
            row = {"id": wid, "result": t["current"].result,
                   "baseline": t["baseline"].to_dict(), "current": t["current"].to_dict(),
                   "ratio": t["baseline"].median / t["current"].median}
            if args.threads:
                th = _common.interleaved({"one": n1, "two": n2}, args.repeats)
                if th["one"].result != th["two"].result:
                    raise AssertionError(f"{wid}: threads changed the result")
                row["one_thread"] = th["one"].to_dict()
                row["two_threads"] = th["two"].to_dict()
                row["thread_speedup"] = th["one"].median / th["two"].median
            row["load"] = (load0, os.getloadavg()[0])
            res["rows"].append(row)
            ms = lambda d: (f"{d['median_s'] * 1e3:.3g} [{d['min_s'] * 1e3:.3g}–"  # noqa: E731
                            f"{d['max_s'] * 1e3:.3g}] ms")
            thr = (f"{ms(row['one_thread'])} | {ms(row['two_threads'])} | "
                   f"{row['thread_speedup']:.2f}×") if args.threads else "– | – | –"
            lines.append(f"| {wid} | {row['result'][0]}, {row['result'][1]} | "
                         f"{ms(row['baseline'])} | {ms(row['current'])} | {row['ratio']:.2f}× | "
                         f"{thr} | {load0:.1f}/{row['load'][1]:.1f} |")
            print(lines[-1], file=sys.stderr)
    text = "\n".join(lines) + "\n"
    print(text)
    _common.write_results(args.out, res, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
