"""Bit-sliced kernel vs the low/high kernel (issue 13): W1, W2, W3, IP_16, IP_18, a grid, compile.

Candidate ``bitsliced``: ``circuits.count_ones`` / ``count_disagreements`` with
``kernel="bitsliced"`` (4096-lane bit planes, layer-1 threshold masks, 7:3 compressors).
Baseline ``lowhigh``: the same calls with ``kernel="lowhigh"`` (today's kernel, integer partial
sums over a low/high split), timed A B A B ... in the same run.  Second baseline ``numpy``:
the float32 researcher's code of bench_circuits.py on a slice of the cube, extrapolated (said so).
Whole public calls are timed (plan and mask table included); the plan build is also reported
on its own, and compile time on its own line (fresh NUMBA_CACHE_DIR in a child process).

* W1  N=24, w=64, weights in [-8, 8]: count of ones.
* W2  N=26, w=256: count of ones.
* W3  N=26, w=64: disagreements with IP_13.
* IP16  count_disagreements(ip_depth3(16), "ip") on 2^32 points; lowhigh on a 1/16 slice.
* IP18  the same for ip_depth3(18) on 2^36 points (bitsliced only; lowhigh extrapolated from
        a 1/256 slice).
* grid  weight range x width x N: both kernels, and which one ``kernel_plan`` picks.

Usage::

    python benchmarks/bench_bitsliced.py                      # everything (several minutes)
    python benchmarks/bench_bitsliced.py --workload W1,W3 --repeats 5
    python benchmarks/bench_bitsliced.py --quick              # smaller sizes, smoke test

Results: ``benchmarks/results_bitsliced.md`` and ``.json`` (written atomically).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import circuits as c  # noqa: E402
from benchmarks import _common  # noqa: E402
from benchmarks.bench_circuits import numpy_count, w1_circuit, w5_circuit  # noqa: E402
from circuits import _kernels_bitsliced as bits, dispatch, simulate  # noqa: E402
from circuits.utils.progress import progress_bar  # noqa: E402


def _key(res):
    return (res.count, res.index) if isinstance(res, c.Disagreements) else res


def _check_same(times):
    vals = {name: _key(t.result) for name, t in times.items()}
    if len(set(vals.values())) != 1:
        raise AssertionError(f"kernels disagree: {vals}")
    return next(iter(vals.values()))


def _load():
    return os.getloadavg()[0]


def _slice(circ, target, start, stop, kernel):
    """One kernel on [start, stop) (the unit of work the public counters sum)."""
    N = circ.n_inputs
    f = c.as_boolean_function(target, N) if isinstance(target, str) else target
    packed = simulate._plan_of(circ, kernel)[1]
    return simulate._disagree_chunk(packed, f._spec(), start, stop)


def bench_workload(wid, N, width, repeats, *, ip=False, numpy_fraction=16):
    circ = w1_circuit(N, width, seed={"W1": 1, "W2": 2, "W3": 3}[wid])
    target = "ip" if ip else c.Constant(N, 0)

    def run(kernel):
        return lambda: c.count_disagreements(circ, target, kernel=kernel)

    def cold():
        dispatch._PLANS.pop(circ, None)            # first call on this circuit: build the masks
        return run("bitsliced")()

    run("bitsliced")()
    run("lowhigh")()                               # warm: JIT from cache, pages touched
    load0 = _load()
    times = _common.interleaved({"bitsliced": run("bitsliced"), "bitsliced_cold": cold,
                                 "lowhigh": run("lowhigh")}, repeats)
    count, first = _check_same(times)
    import numba
    threads = numba.get_num_threads()
    numba.set_num_threads(1)        # the kernel-work ratio, free of thread scheduling on a busy box
    try:
        one = _common.interleaved({"bitsliced": run("bitsliced"), "lowhigh": run("lowhigh")},
                                  3)
    finally:
        numba.set_num_threads(threads)
    _check_same(one)
    part = (1 << N) // numpy_fraction
    ours_part = _slice(circ, target, 0, part, "bitsliced")[0]
    base = _common.interleaved({"numpy": lambda: numpy_count(circ, 0, part, ip=ip)}, 3)["numpy"]
    if base.result != ours_part:
        raise AssertionError(f"{wid}: numpy slice count {base.result} != ours {ours_part}")
    plan = c.kernel_plan(circ)
    dispatch._PLANS.pop(circ, None)
    t0 = time.perf_counter()
    simulate._plan_of(circ)
    build = time.perf_counter() - t0
    b, lh = times["bitsliced"], times["lowhigh"]
    return {"id": wid, "N": N, "w": width, "target": f"IP_{N // 2}" if ip else "count ones",
            "count": count, "first": first, "plan": plan.__dict__, "plan_build_s": build,
            "bitsliced": b.to_dict(), "bitsliced_cold": times["bitsliced_cold"].to_dict(),
            "ratio_lowhigh_cold": lh.median / times["bitsliced_cold"].median,
            "lowhigh": lh.to_dict(), "numpy": base.to_dict(),
            "one_thread": {k: t.to_dict() for k, t in one.items()},
            "ratio_one_thread": one["lowhigh"].median / one["bitsliced"].median,
            "numpy_fraction": numpy_fraction,
            "numpy_extrapolated_s": base.median * numpy_fraction,
            "ratio_lowhigh": lh.median / b.median,
            "ratio_numpy": base.median * numpy_fraction / b.median,
            "load_before": load0, "load_after": _load()}


def bench_ip(n, repeats, *, base_fraction):
    circ = c.ip_depth3(n)
    N = 2 * n
    full = lambda: c.count_disagreements(circ, "ip", kernel="bitsliced")  # noqa: E731
    part = (1 << N) // base_fraction
    full()
    load0 = _load()
    times = _common.interleaved({
        "bitsliced": full,
        "bitsliced_slice": lambda: _slice(circ, "ip", 0, part, "bitsliced"),
        "lowhigh_slice": lambda: _slice(circ, "ip", 0, part, "lowhigh")}, repeats)
    if times["bitsliced_slice"].result != times["lowhigh_slice"].result:
        raise AssertionError("IP slice counts differ between the kernels")
    b = times["bitsliced"]
    lh_ext = times["lowhigh_slice"].median * base_fraction
    return {"id": f"IP{n}", "N": N, "count": b.result.count, "first": b.result.index,
            "bitsliced": b.to_dict(), "bitsliced_slice": times["bitsliced_slice"].to_dict(),
            "lowhigh_slice": times["lowhigh_slice"].to_dict(), "base_fraction": base_fraction,
            "lowhigh_extrapolated_s": lh_ext,
            "ratio_lowhigh_same_slice": (times["lowhigh_slice"].median
                                         / times["bitsliced_slice"].median),
            "load_before": load0, "load_after": _load()}


SETTLE_S = 0.03     # as bench_fused.SETTLE_S: each kernel timed on repeat calls of itself


def bench_grid(repeats, Ns, widths, wmaxes):
    """Every kernel that applies, per cell; ``auto`` is kernel_plan's choice in a process with
    an empty kernel cache (a private DEPTHSEP_CACHE_DIR), before anything was compiled.  Fast
    kernels run untimed for ``SETTLE_S`` before each timed call (``_common.interleaved``)."""
    import time
    os.environ["DEPTHSEP_CACHE_DIR"] = tempfile.mkdtemp(prefix="depthsep-grid-")
    rows = []
    for N in Ns:
        for width in widths:
            for wmax in wmaxes:
                circ = w1_circuit(N, width, seed=11, wmax=wmax)
                plan = c.kernel_plan(circ)
                cands = {"lowhigh": lambda circ=circ: c.count_ones(circ, kernel="lowhigh")}
                compile_s = None
                try:                                 # time them wherever they apply
                    c.kernel_plan(circ, "bitsliced")
                    cands["bitsliced"] = lambda circ=circ: c.count_ones(circ, kernel="bitsliced")
                    cands["fused"] = lambda circ=circ: c.count_ones(circ, kernel="fused")
                    cands["bitsliced"]()
                    t0 = time.perf_counter()
                    cands["fused"]()
                    compile_s = time.perf_counter() - t0
                except c.InvalidCircuitError:
                    pass
                for fn in cands.values():
                    fn()
                times = _common.interleaved(cands, repeats, settle=SETTLE_S)
                _check_same(times)
                row = {"N": N, "w": width, "wmax": wmax, "auto": plan.kernel,
                       "reason": plan.reason, "lowhigh": times["lowhigh"].to_dict()}
                if "bitsliced" in times:
                    row["bitsliced"] = times["bitsliced"].to_dict()
                    row["fused"] = times["fused"].to_dict()
                    row["fused_first_call_s"] = compile_s
                    row["ratio"] = times["lowhigh"].median / times["bitsliced"].median
                    row["ratio_fused"] = times["lowhigh"].median / times["fused"].median
                rows.append(row)
    # W5 (weights up to 2^20): the plan falls back
    circ = w5_circuit(24, 64)
    rows.append({"N": 24, "w": 64, "wmax": 1 << 20, "auto": c.kernel_plan(circ).kernel,
                 "reason": c.kernel_plan(circ).reason})
    return rows


_COMPILE_CHILD = """
import json, time
t0 = time.perf_counter()
import numpy as np, circuits as c
from benchmarks.bench_circuits import w1_circuit
t_import = time.perf_counter() - t0
circ = w1_circuit(16, 64, seed=7)
out = {"import_s": t_import}
for name, fn in [("count_ones (serial block + mask builder)", lambda: c.count_ones(circ, kernel="bitsliced")),
                 ("count_disagreements ip (same kernel)", lambda: c.count_disagreements(circ, "ip", kernel="bitsliced").count),
                 ("truth_table depth 3", lambda: int(c.truth_table(c.ip_depth3(4), kernel="bitsliced").sum())),
                 ("count_ones N=24 (threads; kernel compiled)", lambda: c.count_ones(w1_circuit(24, 64, seed=7), kernel="bitsliced"))]:
    c0 = time.process_time(); t0 = time.perf_counter(); fn(); first = time.perf_counter() - t0
    c1 = time.process_time(); t0 = time.perf_counter(); fn(); second = time.perf_counter() - t0
    c2 = time.process_time()
    out[name] = first - second
    out["cpu: " + name] = (c1 - c0) - (c2 - c1)
print(json.dumps(out))
"""


def bench_compile():
    with tempfile.TemporaryDirectory() as cache:
        cold = _common.run_child(_COMPILE_CHILD, env={"NUMBA_CACHE_DIR": cache})
        warm = _common.run_child(_COMPILE_CHILD, env={"NUMBA_CACHE_DIR": cache})
    return {"cold": cold, "warm": warm}


def _ms(t):
    return f"{t['median_s'] * 1e3:.3g} [{t['min_s'] * 1e3:.3g}–{t['max_s'] * 1e3:.3g}] ms"


def render(res) -> str:
    m = res["machine"]
    lines = ["# Bit-sliced kernel vs low/high kernel (issue 13)", "",
             f"Command: `{res['command']}`  ", f"Machine: {m.get('cpu', m)}  ",
             f"Repeats: {res['repeats']} (A B A B …, median [min–max]); load = 1-min load "
             f"average before/after (2 cores shared with other jobs).", ""]
    if res.get("workloads"):
        lines += ["`bitsliced` = repeat call (mask table cached on the circuit object); "
                  "`first call` = the same call after dropping that cache (plan build included).",
                  "", "| id | N | w | target | count | bitsliced | first call | lowhigh | ratio "
                  "(repeat / first) | numpy (extrap.) | ratio | plan build | load |",
                  "|---" * 13 + "|"]
        for r in res["workloads"]:
            lines.append(f"| {r['id']} | {r['N']} | {r['w']} | {r['target']} | {r['count']} | "
                         f"{_ms(r['bitsliced'])} | {_ms(r['bitsliced_cold'])} | "
                         f"{_ms(r['lowhigh'])} | {r['ratio_lowhigh']:.1f}× / "
                         f"{r['ratio_lowhigh_cold']:.1f}× | {r['numpy_extrapolated_s']:.3g} s "
                         f"(×{r['numpy_fraction']} of a slice) | {r['ratio_numpy']:.0f}× | "
                         f"{r['plan_build_s'] * 1e3:.2g} ms | {r['load_before']:.1f}/"
                         f"{r['load_after']:.1f} |")
        lines.append("")
        lines.append("On one numba thread (same run, repeat calls): " + "; ".join(
            f"{r['id']} bitsliced {_ms(r['one_thread']['bitsliced'])} vs lowhigh "
            f"{_ms(r['one_thread']['lowhigh'])} = {r['ratio_one_thread']:.1f}×"
            for r in res["workloads"]))
        lines.append("")
    for r in res.get("ip", []):
        b = r["bitsliced"]
        lines.append(f"- **{r['id']}** (`count_disagreements(ip_depth3({r['N'] // 2}), 'ip')`, "
                     f"2^{r['N']} points): bitsliced {b['median_s']:.3g} s "
                     f"[{b['min_s']:.3g}–{b['max_s']:.3g}], count {r['count']}; on the first "
                     f"1/{r['base_fraction']} of the cube bitsliced "
                     f"{_ms(r['bitsliced_slice'])} vs lowhigh {_ms(r['lowhigh_slice'])} "
                     f"(same-run ratio {r['ratio_lowhigh_same_slice']:.1f}×; lowhigh full cube "
                     f"extrapolated {r['lowhigh_extrapolated_s']:.3g} s); load "
                     f"{r['load_before']:.1f}/{r['load_after']:.1f}")
    if res.get("grid"):
        lines += ["", "## Grid: weight range × width × N (count of ones, W1-style circuits)", "",
                  "Every kernel timed wherever the bit-sliced ones apply (repeat calls: mask "
                  "table and compiled code cached; the fused kernel's first call, with its "
                  "compile, in brackets); `auto picks` is `kernel_plan`'s choice with an empty "
                  "kernel cache (its cost model counts the mask build and the compile of a "
                  "first call); n/a = masks over 8 MiB.", "",
                  "| N | w | weights | auto picks (cold cache) | bitsliced | fused (first call) "
                  "| lowhigh | lowhigh / bitsliced | lowhigh / fused |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for r in res["grid"]:
            b = _ms(r["bitsliced"]) if "bitsliced" in r else "n/a"
            fu = (f"{_ms(r['fused'])} ({r['fused_first_call_s']:.2g} s)" if "fused" in r
                  else "n/a")
            lh = _ms(r["lowhigh"]) if "lowhigh" in r else "(not timed)"
            ratio = f"{r['ratio']:.1f}×" if "ratio" in r else "–"
            rf = f"{r['ratio_fused']:.1f}×" if "ratio_fused" in r else "–"
            lines.append(f"| {r['N']} | {r['w']} | ±{r['wmax']} | {r['auto']} | {b} | {fu} | "
                         f"{lh} | {ratio} | {rf} |")
    if res.get("compile"):
        cold, warm = res["compile"]["cold"], res["compile"]["warm"]
        lines += ["", "## Compile time (fresh NUMBA_CACHE_DIR; first call minus second call)", ""]
        for k, v in cold.items():
            if k.startswith("cpu: ") or k in ("peak_rss_bytes", "wall_s"):
                continue
            lines.append(f"- {k}: cold {v:.2f} s, from cache {warm.get(k, float('nan')):.2f} s")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workload", default="W1,W2,W3,IP16,IP18,grid,compile")
    p.add_argument("--repeats", type=int, default=5, help="repeats per timing (>= 3)")
    p.add_argument("--quick", action="store_true", help="smaller sizes (N - 4, IP14 for IP16/18)")
    p.add_argument("--out", default=str(HERE / "results_bitsliced"),
                   help="output path without extension (.md and .json are written)")
    p.add_argument("--no-progress", action="store_true")
    args = p.parse_args(argv)
    todo = [w.strip() for w in args.workload.split(",") if w.strip()]
    known = {"W1", "W2", "W3", "IP16", "IP18", "grid", "compile"}
    if set(todo) - known:
        p.error(f"unknown workload(s) {sorted(set(todo) - known)}; choose from {sorted(known)}")
    d = 4 if args.quick else 0
    res = {"command": "python benchmarks/bench_bitsliced.py " + " ".join(
        argv if argv is not None else sys.argv[1:]), "machine": _common.machine_info(),
        "repeats": args.repeats, "lanes": bits.LANES, "workloads": [], "ip": []}
    with progress_bar(len(todo), enabled=not args.no_progress, desc="workloads") as bar:
        for wid in todo:
            if wid == "W1":
                res["workloads"].append(bench_workload("W1", 24 - d, 64, args.repeats))
            elif wid == "W2":
                res["workloads"].append(bench_workload("W2", 26 - d, 256, args.repeats,
                                                       numpy_fraction=64))
            elif wid == "W3":
                res["workloads"].append(bench_workload("W3", 26 - d, 64, args.repeats, ip=True))
            elif wid == "IP16":
                res["ip"].append(bench_ip(16 - d // 2, args.repeats, base_fraction=16))
            elif wid == "IP18":
                res["ip"].append(bench_ip(18 - d, 3, base_fraction=256))
            elif wid == "grid":
                res["grid"] = bench_grid(3, [20 - d, 24 - d], [16, 64, 256], [1, 8, 64, 512])
            elif wid == "compile":
                res["compile"] = bench_compile()
            bar.update(1)
            print(f"{wid} done (load {_load():.1f})", file=sys.stderr)
    text = render(res)
    print(text)
    _common.write_results(args.out, res, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
