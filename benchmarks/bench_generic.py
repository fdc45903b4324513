"""Kernel-only A/B of the generic depth-2 kernel against the compiled (fused) and the
interpreted bit-sliced kernels, in one process.

``count_disagreements(circuit, target, kernel=K)`` for K in generic, fused, bitsliced, after one
untimed call each (compiled code, mask tables and plans cached), then ``--rounds`` rounds of
``--calls`` calls per kernel, interleaved (A B C A B C ...); per round the CPU time
(``time.process_time``, less sensitive to other processes than wall time) and the wall time per
call.  Medians over rounds.  Counts and first counterexamples must agree.

``--kernels`` may add ``gather``: the generic kernel with each chunk's distinct layer-1 planes
gathered into an L1 buffer first (``benchmarks/_generic_gather.py``; measured slower, not kept).

Usage::

    python benchmarks/bench_generic.py --workload W1,W3 --threads 1
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import numba  # noqa: E402

import circuits as c  # noqa: E402
from benchmarks import _common  # noqa: E402
from benchmarks.bench_bitsliced import _load  # noqa: E402
from benchmarks.bench_fused import _circuit  # noqa: E402

KERNELS = ("generic", "fused", "bitsliced")


def bench(wid, rounds, calls, kernels=KERNELS):
    circ, target = _circuit(wid)
    runs = {}
    for k in kernels:
        if k == "gather":
            from benchmarks import _generic_gather
            runs[k] = _generic_gather.runner(circ, target)
        else:
            runs[k] = (lambda k=k: (lambda r: (r.count, r.index))(
                c.count_disagreements(circ, target, kernel=k)))
    results = {k: run() for k, run in runs.items()}
    if len(set(results.values())) != 1:
        raise AssertionError(f"{wid}: kernels disagree: {results}")
    cpu = {k: [] for k in kernels}
    wall = {k: [] for k in kernels}
    load0 = _load()
    for _ in range(rounds):
        for k in kernels:
            run = runs[k]
            t, w = time.process_time(), time.perf_counter()
            for _ in range(calls):
                run()
            cpu[k].append((time.process_time() - t) / calls)
            wall[k].append((time.perf_counter() - w) / calls)
    return {"id": wid, "load_before": load0, "load_after": _load(), "cpu_s": cpu,
            "wall_s": wall, "count": results[kernels[0]][0]}


def render(res) -> str:
    lines = ["# Generic depth-2 kernel, kernel-only (one process)", "",
             f"Command: `{res['command']}`  ", f"numba threads: {res['threads']}; "
             f"{res['rounds']} rounds of {res['calls']} calls per kernel, interleaved; medians "
             f"[min–max] over rounds.", "",
             "| id | kernel | CPU per call | wall per call | CPU vs fused | load |",
             "|---|---|---|---|---|---|"]
    for r in res["rows"]:
        fused = statistics.median(r["cpu_s"]["fused"])
        for k in r["cpu_s"]:
            v, w = r["cpu_s"][k], r["wall_s"][k]
            lines.append(f"| {r['id']} | {k} | {statistics.median(v) * 1e3:.3g} ms "
                         f"[{min(v) * 1e3:.3g}–{max(v) * 1e3:.3g}] | "
                         f"{statistics.median(w) * 1e3:.3g} ms | "
                         f"{statistics.median(v) / fused:.2f} | "
                         f"{r['load_before']:.1f}/{r['load_after']:.1f} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workload", default="W1,W3")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--calls", type=int, default=5)
    p.add_argument("--kernels", default=",".join(KERNELS),
                   help="kernels to compare (fused, generic, bitsliced; gather: the variant)")
    p.add_argument("--out", default=str(HERE / "results_generic"))
    args = p.parse_args(argv)
    if args.rounds < 3:
        p.error("--rounds must be >= 3")
    numba.set_num_threads(args.threads)
    kernels = tuple(k.strip() for k in args.kernels.split(",") if k.strip())
    if "fused" not in kernels or set(kernels) - set(KERNELS) - {"gather"}:
        p.error("--kernels: a subset of fused, generic, bitsliced, gather that names fused")
    res = {"command": "python benchmarks/bench_generic.py " + " ".join(
        argv if argv is not None else sys.argv[1:]), "machine": _common.machine_info(),
        "threads": args.threads, "rounds": args.rounds, "calls": args.calls, "rows": []}
    for wid in [w.strip() for w in args.workload.split(",") if w.strip()]:
        res["rows"].append(bench(wid, args.rounds, args.calls, kernels))
    text = render(res)
    _common.write_results(args.out, res, text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
