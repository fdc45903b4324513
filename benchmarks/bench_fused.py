"""Compiled (fused) bit-sliced kernel vs the interpreted bit-sliced and the low/high kernels.

Candidate ``fused``: ``count_disagreements(..., kernel="fused")``, the circuit's adder tree
compiled into one word loop (``circuits._bitsliced_codegen``).  Baselines, interleaved A B C A B
C ... in the same run: ``bitsliced`` (the same planes, adder program interpreted op by op: the
kernel before this change) and ``lowhigh`` (integer partial sums; the kernel the issue-13
targets name "today's kernel").  All three are timed on repeat calls (plan, mask table and
compiled code cached; a fast kernel first runs untimed for ``SETTLE_S``, so no kernel inherits
the previous one's spinning OpenMP threads), once with numba's default two threads and once on
one thread.  numpy
(float32, the researcher's code of bench_circuits.py) runs on a slice and is extrapolated
(said so).  Counts and first counterexamples must agree, or the script fails.

Compile time is measured in child processes with an empty ``DEPTHSEP_CACHE_DIR`` (cold: code
generation, numba typing and LLVM for this circuit; the library's own kernels come from numba's
cache) and again with that directory filled (a later process: load from cache).

Usage::

    python benchmarks/bench_fused.py --repeats 9
    python benchmarks/bench_fused.py --workload W1,W3 --repeats 5 --no-compile

Results: ``benchmarks/results_fused.md`` and ``.json`` (written atomically).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import numba  # noqa: E402

import circuits as c  # noqa: E402
from benchmarks import _common  # noqa: E402
from benchmarks.bench_bitsliced import _load, _ms, _slice  # noqa: E402
from benchmarks.bench_circuits import numpy_count, w1_circuit  # noqa: E402
from circuits.utils.progress import progress_bar  # noqa: E402

KERNELS = ("fused", "bitsliced", "lowhigh")
# Each kernel is timed on repeat calls of itself: before a timed call of a kernel faster than
# this, the kernel runs untimed for this long (``_common.interleaved``).  Without it the fused
# kernel's two-thread W1 run right after a low/high call (numba's OpenMP threads then spin for
# about 10 ms on the second vCPU) took 3.1 ms instead of 1.7 ms (same process, median of 9).
SETTLE_S = 0.03
SPECS = {   # id: (N, width, seed, IP target?, numpy fraction)
    "W1": (24, 64, 1, False, 16),
    "W2": (26, 256, 2, False, 64),
    "W3": (26, 64, 3, True, 16),
}


def _circuit(wid):
    if wid.startswith("IP"):
        n = int(wid[2:])
        return c.ip_depth3(n), "ip"
    N, width, seed, ip, _ = SPECS[wid]
    return w1_circuit(N, width, seed=seed), ("ip" if ip else c.Constant(N, 0))


def _key(res):
    return (res.count, res.index)


def _same(times, what):
    vals = {k: _key(t.result) for k, t in times.items()}
    if len(set(vals.values())) != 1:
        raise AssertionError(f"{what}: kernels disagree: {vals}")
    return next(iter(vals.values()))


def bench(wid, repeats, *, lowhigh_fraction=1):
    """Interleaved timings of the three kernels (two threads, then one) on one workload."""
    circ, target = _circuit(wid)
    N = circ.n_inputs
    runs = {k: (lambda k=k: c.count_disagreements(circ, target, kernel=k)) for k in KERNELS}
    if lowhigh_fraction > 1:             # IP18: low/high on a slice only (said so)
        part = (1 << N) // lowhigh_fraction
        runs["lowhigh"] = lambda: _slice(circ, target, 0, part, "lowhigh")
        runs["fused_slice"] = lambda: _slice(circ, target, 0, part, "fused")
    for fn in runs.values():
        fn()                             # compiled / loaded, masks built, pages touched
    row = {"id": wid, "N": N, "gates": [layer.n_gates for layer in circ.layers],
           "plan": c.kernel_plan(circ).__dict__, "lowhigh_fraction": lowhigh_fraction,
           "load_before": _load()}
    threads = numba.get_num_threads()
    for label, n_threads in (("two_threads", threads), ("one_thread", 1)):
        numba.set_num_threads(n_threads)
        try:
            times = _common.interleaved(runs, repeats, settle=SETTLE_S)
        finally:
            numba.set_num_threads(threads)
        if lowhigh_fraction > 1:
            lh, fs = times.pop("lowhigh"), times.pop("fused_slice")
            if tuple(lh.result) != tuple(fs.result):
                raise AssertionError(f"{wid}: slice counts differ: {lh.result} vs {fs.result}")
            row[label + "_slice"] = {"lowhigh": lh.to_dict(), "fused": fs.to_dict()}
        row["count"], row["first"] = _same(times, wid)
        row[label] = {k: t.to_dict() for k, t in times.items()}
        row[label]["threads"] = n_threads
    if wid in SPECS:
        frac = SPECS[wid][4]
        part = (1 << N) // frac
        ours = _slice(circ, target, 0, part, "fused")[0]
        base = _common.interleaved(
            {"numpy": lambda: numpy_count(circ, 0, part, ip=target == "ip")}, 3)["numpy"]
        if base.result != ours:
            raise AssertionError(f"{wid}: numpy slice count {base.result} != ours {ours}")
        row["numpy"] = base.to_dict()
        row["numpy_fraction"] = frac
        row["numpy_extrapolated_s"] = base.median * frac
    row["load_after"] = _load()
    return row


_COMPILE_CHILD = """
import json, sys, time
sys.path.insert(0, {root!r})
t0 = time.perf_counter()
import circuits as c
from benchmarks.bench_fused import _circuit
circ, target = _circuit({wid!r})
t1 = time.perf_counter()
c.count_disagreements(circ, target, kernel="fused")
t2 = time.perf_counter()
c.count_disagreements(circ, target, kernel="fused")
t3 = time.perf_counter()
print(json.dumps({{"first_call_s": t2 - t1, "second_call_s": t3 - t2, "import_s": t1 - t0}}))
"""


def bench_compile(wid):
    """Cold compile (empty kernel cache) and a later process (filled cache), in children."""
    code = _COMPILE_CHILD.format(root=str(HERE.parent), wid=wid)
    with tempfile.TemporaryDirectory() as cache:
        # the library's own kernels from the usual numba cache (now under the depthsep cache
        # root, circuits._jit), only the circuit's kernel cold
        from circuits._jit import numba_cache_root
        env = {"DEPTHSEP_CACHE_DIR": cache, "NUMBA_CACHE_DIR": str(numba_cache_root())}
        cold = _common.run_child(code, env=env)
        warm = _common.run_child(code, env=env)
    return {"cold": cold, "cached": warm}


def render(res) -> str:
    m = res["machine"]
    lines = ["# Compiled (fused) bit-sliced kernel vs interpreted bit-sliced and low/high", "",
             f"Command: `{res['command']}`  ", f"Machine: {m.get('cpu', m)}  ",
             f"Repeats: {res['repeats']} (interleaved, median [min–max]"
             + (f"; a kernel faster than {res['settle_s'] * 1e3:.0f} ms first runs untimed for "
                f"that long" if res.get("settle_s") else "")
             + "); load = 1-min load average before/after.", "",
             "| id | N | count, first | threads | fused | bitsliced (interpreted) | low/high | "
             "fused vs bitsliced | fused vs low/high | numpy (extrap.) | fused vs numpy | "
             "load |", "|---" * 12 + "|"]
    for r in res["rows"]:
        for label in ("two_threads", "one_thread"):
            t = r[label]
            f, b, lh = t["fused"], t["bitsliced"], t.get("lowhigh")
            frac = r["lowhigh_fraction"]
            if frac > 1:
                sl = r[label + "_slice"]
                lh_txt = f"{_ms(sl['lowhigh'])} on 1/{frac} (fused same slice {_ms(sl['fused'])})"
                ratio_lh = sl["lowhigh"]["median_s"] / sl["fused"]["median_s"]
            else:
                lh_txt = _ms(lh)
                ratio_lh = lh["median_s"] / f["median_s"]
            npy = (f"{r['numpy_extrapolated_s']:.3g} s (×{r['numpy_fraction']})"
                   if label == "two_threads" and "numpy" in r else "–")
            rn = (f"{r['numpy_extrapolated_s'] / f['median_s']:.0f}×"
                  if label == "two_threads" and "numpy" in r else "–")
            lines.append(f"| {r['id']} | {r['N']} | {r['count']}, {r['first']} | {t['threads']} "
                         f"| {_ms(f)} | {_ms(b)} | {lh_txt} | "
                         f"{b['median_s'] / f['median_s']:.2f}× | {ratio_lh:.1f}× | {npy} | {rn} "
                         f"| {r['load_before']:.1f}/{r['load_after']:.1f} |")
    if res.get("compile"):
        lines += ["", "Compile (child processes, empty then filled `DEPTHSEP_CACHE_DIR`; first "
                  "call includes mask table and code generation):", ""]
        for wid, v in res["compile"].items():
            lines.append(f"- {wid}: first call cold {v['cold']['first_call_s']:.2f} s, with the "
                         f"kernel cached {v['cached']['first_call_s']:.2f} s, second call "
                         f"{v['cold']['second_call_s'] * 1e3:.3g} ms")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workload", default="W1,W2,W3,IP16,IP18")
    p.add_argument("--repeats", type=int, default=7, help="repeats per timing (>= 3)")
    p.add_argument("--no-compile", action="store_true", help="skip the compile-time children")
    p.add_argument("--out", default=str(HERE / "results_fused"),
                   help="output path without extension (.md and .json are written)")
    p.add_argument("--no-progress", action="store_true")
    args = p.parse_args(argv)
    todo = [w.strip() for w in args.workload.split(",") if w.strip()]
    known = set(SPECS) | {"IP16", "IP18"}
    if set(todo) - known:
        p.error(f"--workload: unknown {sorted(set(todo) - known)}; choose from {sorted(known)}")
    if args.repeats < 3:
        p.error("--repeats must be >= 3")
    res = {"command": "python benchmarks/bench_fused.py " + " ".join(
        argv if argv is not None else sys.argv[1:]), "machine": _common.machine_info(),
        "repeats": args.repeats, "settle_s": SETTLE_S, "rows": [], "compile": {}}
    with progress_bar(len(todo), enabled=not args.no_progress, desc="workloads") as bar:
        for wid in todo:
            reps = 3 if wid == "IP18" else args.repeats
            res["rows"].append(bench(wid, reps, lowhigh_fraction=256 if wid == "IP18" else 1))
            if not args.no_compile:
                res["compile"][wid] = bench_compile(wid)
            bar.update(1)
            print(f"{wid} done (load {_load():.1f})", file=sys.stderr)
    from circuits.utils.files import write_json_atomic
    write_json_atomic(args.out + ".json", res)          # the numbers first, whatever render does
    text = render(res)
    print(text)
    _common.write_results(args.out, res, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
