"""Exhaustive threshold-circuit simulation: workloads W1, W2, W3, W5, W6 of shared/BENCHMARKS.md.

Candidate ``depthsep``: ``circuits.count_ones`` / ``circuits.count_disagreements`` (numba,
low/high split of the N bits, exact int16/int32/int64 working dtype), warm JIT cache, numba's
default threads (2 on the reference machine).  Baseline ``numpy``: the float32 code a
researcher would write: enumerate points in chunks of 65,536 with
``(k[:, None] >> arange(N)) & 1``, ``X @ W.T >= t`` in float32 (BLAS), then the output gate.

* W1  N=24, w=64, weights in [-8, 8], thresholds near each gate's median: count of ones.
* W2  as W1 with N=26, w=256.  The baseline runs on the first 1/16 of the cube and is
      extrapolated x16 (said so in the table); both implementations must agree on that slice.
* W3  IP check: N=26 (x, y in {0,1}^13), w=64: count of points where the circuit != IP_13.
      Baseline on the first 1/16 of the cube, extrapolated x16, counts compared on that slice.
* W5  W1 with weights up to 2^20 in magnitude and thresholds w . z (many points exactly on a
      threshold).  Reference: exact int64 numpy on a slice and the naive Python twin on random
      points; the float32 baseline may miscount here (that is the point) and is reported as is.
      Our W5 kernel is timed against our W1 kernel in the same run (target: <= 2x).
* W6  W1-style circuit at N = 24 ... 32 in fresh processes: time per point and peak RSS
      (kernel only, measured before the baseline runs); baseline per point on a 2^20 slice.

Also: compile time (fresh NUMBA_CACHE_DIR, first call minus second call), cache-load time,
and the whole-process time of ``python experiments/ip_demo.py`` with a warm cache.

Usage::

    python benchmarks/bench_circuits.py                       # everything (about 10 minutes)
    python benchmarks/bench_circuits.py --workload W1,W3 --repeats 5
    python benchmarks/bench_circuits.py --quick               # smaller sizes, smoke test

Results: ``benchmarks/results_circuits.md`` and ``.json`` (written atomically).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import circuits as c  # noqa: E402
from benchmarks import _common  # noqa: E402
from circuits import simulate  # noqa: E402
from circuits.utils.progress import progress_bar  # noqa: E402

CHUNK = 1 << 16


# --- instances (fixed seeds) -------------------------------------------------------------------

def w1_circuit(n_inputs: int, width: int = 64, *, seed: int = 0, wmax: int = 8) -> c.ThresholdCircuit:
    """W1/W2/W6 instance: depth-2, integer weights in [-wmax, wmax], thresholds near the median.

    For uniform x, w . x is symmetric about sum(w) / 2, its median; thresholds are that value
    rounded down plus a jitter in {-1, 0, 1}.  The output gate is built the same way.
    """
    rng = np.random.default_rng(seed)
    W = rng.integers(-wmax, wmax + 1, size=(width, n_inputs))
    t = W.sum(axis=1) // 2 + rng.integers(-1, 2, size=width)
    v = rng.integers(-wmax, wmax + 1, size=width)
    s = int(v.sum() // 2)
    return c.ThresholdCircuit.depth2(W, t, v, s)


def w5_circuit(n_inputs: int = 24, width: int = 64, *, seed: int = 5) -> c.ThresholdCircuit:
    """W5 instance: weights c * 2^16 + e with c in [-15, 15], e in [-8, 8] (|w| <= 2^20), and
    every threshold equal to w . z for a random z, so each gate has many exact ties
    (all x with c . x = c . z and e . x = e . z); the output gate likewise."""
    rng = np.random.default_rng(seed)

    def weights(shape):
        return rng.integers(-15, 16, size=shape) * (1 << 16) + rng.integers(-8, 9, size=shape)

    W = weights((width, n_inputs))
    t = (W * rng.integers(0, 2, size=W.shape)).sum(axis=1)
    v = weights((width,))
    s = int((v * rng.integers(0, 2, size=width)).sum())
    circ = c.ThresholdCircuit.depth2(W, t, v, s)
    assert circ.max_abs_weight <= 1 << 20
    return circ


# --- baselines ---------------------------------------------------------------------------------

def numpy_count(circ: c.ThresholdCircuit, start: int, stop: int, *, ip: bool = False,
                dtype=np.float32) -> int:
    """The researcher's numpy code on [start, stop): ones of the circuit, or != IP if ``ip``."""
    hidden, out = circ.layers
    N = circ.n_inputs
    Wt = hidden.weights.T.astype(dtype)
    t = hidden.thresholds.astype(dtype)
    v = out.weights[0].astype(dtype)
    s = dtype(out.thresholds[0]) if dtype is not np.int64 else int(out.thresholds[0])
    shifts = np.arange(N)
    total = 0
    for lo in range(start, stop, CHUNK):
        k = np.arange(lo, min(stop, lo + CHUNK), dtype=np.int64)
        X = ((k[:, None] >> shifts) & 1).astype(dtype)
        H = (X @ Wt >= t).astype(dtype)
        y = H @ v >= s
        if ip:
            n = N // 2
            target = (X[:, :n] * X[:, n:]).sum(axis=1) % 2 == 1
            total += int((y != target).sum())
        else:
            total += int(y.sum())
    return total


def ours_slice(circ, start: int, stop: int, *, ip: bool = False) -> int:
    """Our kernel on [start, stop) (the unit of work the public counters sum)."""
    N = circ.n_inputs
    f = c.InnerProductMod2(N // 2) if ip else c.Constant(N, 0)
    return simulate._disagree_chunk(simulate._circuit_kernel_args(circ), f._spec(), start, stop)[0]


def ours_full(circ, *, ip: bool = False) -> int:
    return c.count_disagreements(circ, "ip").count if ip else c.count_ones(circ)


# --- workloads -----------------------------------------------------------------------------------

def _same(expected):
    def check(name, res):
        if name in expected and expected[name] is not None and res != expected[name]:
            raise AssertionError(f"{name}: count {res} != expected {expected[name]}")
    return check


def bench_depth2(wid, N, width, repeats, *, ip=False, fraction=1):
    """W1 / W2 / W3: our full-cube count vs the numpy baseline (on 1/fraction of the cube)."""
    circ = w1_circuit(N, width, seed={"W1": 1, "W2": 2, "W3": 3}[wid])
    n_pts = 1 << N
    part = n_pts // fraction
    ours_full(circ, ip=ip)                      # warm: JIT from cache, pages touched
    agree_slice = ours_slice(circ, 0, part, ip=ip)
    times = _common.interleaved({
        "depthsep": lambda: ours_full(circ, ip=ip),
        "numpy": lambda: numpy_count(circ, 0, part, ip=ip),
    }, repeats)
    if times["numpy"].result != agree_slice:
        raise AssertionError(f"{wid}: numpy slice count {times['numpy'].result} != ours {agree_slice}")
    base_med = times["numpy"].median * fraction
    return {
        "id": wid, "N": N, "w": width, "target": "IP_%d" % (N // 2) if ip else "count ones",
        "count": times["depthsep"].result, "dtype": str(simulate._circuit_kernel_args(circ)[0].dtype),
        "low_bits": simulate._circuit_kernel_args(circ)[3],
        "ours": times["depthsep"].to_dict(), "baseline": times["numpy"].to_dict(),
        "baseline_fraction": 1 / fraction, "baseline_fraction_inv": fraction,
        "baseline_slice_count": times["numpy"].result,
        "ours_slice_count": agree_slice, "baseline_median_full_s": base_med,
        "ratio": base_med / times["depthsep"].median,
        "summary_ours": times["depthsep"].summary(1e3, "ms"),
        "summary_base": (times["numpy"].summary() if fraction == 1 else
                         f"{base_med:.3g} s (x{fraction} of slice: {times['numpy'].summary()})"),
    }


def bench_w5(N, width, repeats):
    """W5: exactness under 2^20 weights with ties; our W5 time vs our W1 time and vs numpy."""
    circ = w5_circuit(N, width)
    w1 = w1_circuit(N, width, seed=1)
    n_pts = 1 << N
    ours_full(circ)
    ours_full(w1)
    # exact references: int64 numpy on a slice, the naive twin on random points
    sl = n_pts // 64
    ref_slice = numpy_count(circ, 0, sl, dtype=np.int64)
    ours_sl = ours_slice(circ, 0, sl)
    if ref_slice != ours_sl:
        raise AssertionError(f"W5: int64 reference {ref_slice} != ours {ours_sl} on the slice")
    from tests import naive
    rng = np.random.default_rng(55)
    ks = rng.integers(0, n_pts, size=300)
    layers = naive.layers_of(circ)
    twin = [naive.circuit_value(layers, [(int(k) >> i) & 1 for i in range(N)]) for k in ks]
    if c.evaluate_indices(circ, ks).tolist() != twin:
        raise AssertionError("W5: evaluate_indices differs from the naive twin")
    # ties: hidden-gate (point, gate) pairs with w . x == t on the slice (exact int64)
    hidden = circ.layers[0]
    k = np.arange(0, sl, dtype=np.int64)
    X = ((k[:, None] >> np.arange(N)) & 1)
    ties = int((X @ hidden.weights.T == hidden.thresholds).sum()) * 64
    times = _common.interleaved({
        "depthsep_W5": lambda: ours_full(circ),
        "depthsep_W1": lambda: ours_full(w1),
        "numpy_float32": lambda: numpy_count(circ, 0, n_pts),
    }, repeats)
    # the same two kernels on one numba thread: the kernel-work ratio, free of thread scheduling
    import numba
    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        one = _common.interleaved({"W5": lambda: ours_full(circ), "W1": lambda: ours_full(w1)},
                                  repeats)
    finally:
        numba.set_num_threads(threads)
    ours = times["depthsep_W5"]
    f32 = times["numpy_float32"].result
    return {
        "id": "W5", "N": N, "w": width, "count": ours.result,
        "dtype": str(simulate._circuit_kernel_args(circ)[0].dtype),
        "max_abs_weight": circ.max_abs_weight, "preactivation_bound": circ.preactivation_bound,
        "int64_reference_slice": {"points": sl, "count": ref_slice, "ours": ours_sl},
        "naive_twin_points": len(ks), "ties_estimated_full_cube": ties,
        "numpy_float32_count": f32, "numpy_float32_error": f32 - ours.result,
        "ours": ours.to_dict(), "ours_W1": times["depthsep_W1"].to_dict(),
        "baseline": times["numpy_float32"].to_dict(),
        "ratio": times["numpy_float32"].median / ours.median,
        "w5_over_w1": ours.median / times["depthsep_W1"].median,
        "w5_over_w1_cpu": ours.cpu_median / times["depthsep_W1"].cpu_median,
        "one_thread": {"W5": one["W5"].to_dict(), "W1": one["W1"].to_dict(),
                       "ratio": one["W5"].median / one["W1"].median},
        "summary_ours": ours.summary(1e3, "ms"), "summary_base": times["numpy_float32"].summary(),
        "summary_w1": times["depthsep_W1"].summary(1e3, "ms"),
    }


_W6_CHILD = """
import json, time, resource
import numpy as np
from benchmarks.bench_circuits import w1_circuit, numpy_count
import circuits as c
N, width, repeats, base_bits = {N}, {width}, {repeats}, {base_bits}
c.count_ones(w1_circuit(16, width, seed=6))          # serial block kernels from the cache
c.count_ones(w1_circuit(22, width, seed=6))          # parallel kernel from the cache
circ = w1_circuit(N, width, seed=6)
count = c.count_ones(circ)
rss_kernel = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
ours, base = [], []
for r in range(repeats):
    t0 = time.perf_counter(); assert c.count_ones(circ) == count; ours.append(time.perf_counter() - t0)
    t0 = time.perf_counter(); numpy_count(circ, 0, 1 << base_bits); base.append(time.perf_counter() - t0)
print(json.dumps({{"count": count, "ours": ours, "base": base, "rss_kernel": rss_kernel}}))
"""


def bench_w6(Ns, width, repeats, base_bits=20):
    rows = []
    for N in Ns:
        out = _common.run_child(_W6_CHILD.format(N=N, width=width, repeats=repeats,
                                                 base_bits=min(base_bits, N)))
        ours = _common.Timing("depthsep", out["ours"], out["count"])
        base = _common.Timing("numpy", out["base"])
        per_pt = ours.median / (1 << N)
        base_pt = base.median / (1 << min(base_bits, N))
        rows.append({"N": N, "count": out["count"], "ours": ours.to_dict(), "baseline": base.to_dict(),
                     "ns_per_point": per_pt * 1e9, "ns_per_point_min": ours.min / (1 << N) * 1e9,
                     "ns_per_point_max": ours.max / (1 << N) * 1e9,
                     "baseline_ns_per_point": base_pt * 1e9, "ratio": base_pt / per_pt,
                     "peak_rss_kernel_bytes": out["rss_kernel"], "summary_ours": ours.summary()})
    return {"id": "W6", "w": width, "rows": rows}


_COMPILE_CHILD = """
import json, time
t0 = time.perf_counter()
import numpy as np, circuits as c
from benchmarks.bench_circuits import w1_circuit
t_import = time.perf_counter() - t0
circ = w1_circuit(16, 64, seed=7)
deep = c.ip_depth3(4)
out = {{"import_s": t_import}}
for name, fn in [("count_ones (cube kernel, int16)", lambda: c.count_ones(circ)),
                 ("count_disagreements ip (same kernel)", lambda: c.count_disagreements(circ, "ip").count),
                 ("truth_table depth 3", lambda: int(c.truth_table(deep).sum())),
                 ("evaluate_indices (rows kernel, int16)", lambda: int(c.evaluate_indices(circ, np.arange(4096)).sum())),
                 ("count_ones N=22 (parallel cube kernel; callees already compiled)",
                  lambda: c.count_ones(w1_circuit(22, 64, seed=7))),
                 ("evaluate_indices 2^16 points (parallel rows kernel)",
                  lambda: int(c.evaluate_indices(circ, np.arange(1 << 16)).sum()))]:
    c0 = time.process_time(); t0 = time.perf_counter(); fn(); first = time.perf_counter() - t0
    c1 = time.process_time(); t0 = time.perf_counter(); fn(); second = time.perf_counter() - t0
    c2 = time.process_time()
    out[name] = first - second
    out["cpu: " + name] = (c1 - c0) - (c2 - c1)
print(json.dumps(out))
"""


def bench_compile():
    """Compile time with an empty cache, then the same calls loading the cache."""
    with tempfile.TemporaryDirectory() as cache:
        cold = _common.run_child(_COMPILE_CHILD.format(), env={"NUMBA_CACHE_DIR": cache})
        warm = _common.run_child(_COMPILE_CHILD.format(), env={"NUMBA_CACHE_DIR": cache})
    return {"cold": cold, "warm": warm}


def bench_demo(repeats):
    argv = ["experiments/ip_demo.py"]
    _common.whole_process_seconds(argv, 1)          # warm the cache
    t = _common.whole_process_seconds(argv, repeats)
    return {"command": "python experiments/ip_demo.py", **t.to_dict(), "summary": t.summary()}


# --- report --------------------------------------------------------------------------------------

def render(results: dict) -> str:
    m = results["machine"]
    lines = [
        "# Circuit kernels: W1, W2, W3, W5, W6",
        "",
        f"Command: `{results['command']}`  ",
        f"Machine: {m['cpu_model']}, {m['cpus']} CPUs (AVX-512: {m['avx512f']}), numba threads "
        f"{m['numba_threads']}; load average at start {tuple(round(x, 1) for x in m['load_average_at_start'])}  ",
        f"Versions: Python {m['python']}, numpy {m['numpy']} (BLAS {m['blas']}, "
        f"OPENBLAS_CORETYPE={m['OPENBLAS_CORETYPE']}), numba {m['numba']}  ",
        f"Repeats: {results['repeats']} (A B A B interleaved; median [min–max]).  "
        "Kernel time = the public call with a warm JIT cache (no import, no compile, instance built "
        "beforehand).  Baseline = numpy float32, chunks of 65,536 points (see BENCHMARKS.md).",
        "",
    ]
    rows = [r for r in results["workloads"] if r["id"] in ("W1", "W2", "W3", "W5")]
    if rows:
        lines += ["| id | N | w | target | dtype | depthsep | numpy baseline | ratio | count |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for r in rows:
            target = r.get("target", "count ones (|w| <= 2^20, ties)")
            lines.append(f"| {r['id']} | {r['N']} | {r['w']} | {target} | {r['dtype']} | "
                         f"{r['summary_ours']} | {r['summary_base']} | {r['ratio']:.0f}x | {r['count']} |")
        lines.append("")
        lines.append("Process CPU seconds (all threads; immune to time-slicing on a shared machine), "
                     "medians: " + "; ".join(
                         f"{r['id']} depthsep {r['ours']['cpu_median_s'] * 1e3:.0f} ms, numpy "
                         f"{r['baseline']['cpu_median_s'] * r.get('baseline_fraction_inv', 1):.2f} s "
                         f"(ratio {r['baseline']['cpu_median_s'] * r.get('baseline_fraction_inv', 1) / r['ours']['cpu_median_s']:.0f}x)"
                         for r in rows) + ".")
        lines.append("")
        for r in rows:
            if r.get("baseline_fraction", 1) != 1:
                lines.append(f"- {r['id']}: the baseline ran on the first {r['baseline_fraction']:.4g} "
                             f"of the cube and its median is extrapolated linearly; on that slice both "
                             f"counts are {r['ours_slice_count']}.")
            if r["id"] == "W5":
                ref = r["int64_reference_slice"]
                lines.append(
                    f"- W5: max |w| = {r['max_abs_weight']}, pre-activation bound "
                    f"{r['preactivation_bound']} (working dtype {r['dtype']}); about "
                    f"{r['ties_estimated_full_cube']:,} (point, hidden gate) pairs sit exactly on a "
                    f"threshold.  Exact int64 numpy on the first {ref['points']:,} points: {ref['count']} "
                    f"(ours {ref['ours']}); naive Python twin on {r['naive_twin_points']} random points "
                    f"agrees.  float32 numpy counts {r['numpy_float32_count']} "
                    f"(error {r['numpy_float32_error']:+d}).  Our W5 time {r['summary_ours']} vs our W1 "
                    f"time {r['summary_w1']} in the same run: {r['w5_over_w1']:.2f}x wall, "
                    f"{r['w5_over_w1_cpu']:.2f}x CPU; on one numba thread (no thread scheduling) "
                    f"W5 {r['one_thread']['W5']['median_s'] * 1e3:.1f} ms vs W1 "
                    f"{r['one_thread']['W1']['median_s'] * 1e3:.1f} ms: {r['one_thread']['ratio']:.2f}x "
                    f"(target <= 2x; W5 needs int32 lanes, W1 int16).")
        lines.append("")
    w6 = [r for r in results["workloads"] if r["id"] == "W6"]
    if w6:
        lines += [f"W6 (w = {w6[0]['w']}, fresh process per N, baseline per point on a 2^20 slice):", "",
                  "| N | depthsep total | ns / point median [min–max] | numpy ns / point | ratio | "
                  "peak RSS (kernel) | count |", "|---|---|---|---|---|---|---|"]
        for r in w6[0]["rows"]:
            lines.append(f"| {r['N']} | {r['summary_ours']} | {r['ns_per_point']:.2f} "
                         f"[{r['ns_per_point_min']:.2f}–{r['ns_per_point_max']:.2f}] | "
                         f"{r['baseline_ns_per_point']:.0f} | {r['ratio']:.0f}x | "
                         f"{_common.fmt_bytes(r['peak_rss_kernel_bytes'])} | {r['count']} |")
        lines.append("")
    if "compile" in results:
        cold, warm = results["compile"]["cold"], results["compile"]["warm"]
        lines += ["Compile time (fresh `NUMBA_CACHE_DIR`; first call minus second call) and cache "
                  "load (same calls in a new process with that cache):", "",
                  "| call | compile s (wall) | compile s (CPU) | cache load s (wall) |", "|---|---|---|---|"]
        for k in cold:
            if k.endswith("_s") or k.startswith("cpu: ") or k in ("peak_rss_bytes", "wall_s"):
                continue
            lines.append(f"| {k} | {cold[k]:.2f} | {cold['cpu: ' + k]:.2f} | {warm[k]:.2f} |")
        lines.append(f"| import circuits | {cold['import_s']:.2f} | | {warm['import_s']:.2f} |")
        lines.append("")
    if "demo" in results:
        d = results["demo"]
        lines += [f"Whole process, warm cache: `{d['command']}`: {d['summary']} (target <= 2 s).", ""]
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workload", default="W1,W2,W3,W5,W6,compile,demo",
                   help="comma-separated subset of W1,W2,W3,W5,W6,compile,demo")
    p.add_argument("--repeats", type=int, default=3, help="repeats per timing (>= 3)")
    p.add_argument("--quick", action="store_true", help="smaller sizes (N - 4; W6 up to 24)")
    p.add_argument("--w6", default=None, help="comma-separated N list for W6 (default 24,26,28,30,32)")
    p.add_argument("--out", default=str(HERE / "results_circuits"),
                   help="output path without extension (.md and .json are written)")
    p.add_argument("--no-progress", action="store_true")
    args = p.parse_args(argv)
    todo = [w.strip() for w in args.workload.split(",") if w.strip()]
    known = {"W1", "W2", "W3", "W5", "W6", "compile", "demo"}
    if set(todo) - known:
        p.error(f"unknown workload(s) {sorted(set(todo) - known)}; choose from {sorted(known)}")
    d = 4 if args.quick else 0
    w6_ns = ([int(x) for x in args.w6.split(",")] if args.w6 else
             ([18, 20, 22, 24] if args.quick else [24, 26, 28, 30, 32]))
    results = {"command": "python benchmarks/bench_circuits.py " + " ".join(argv if argv is not None
                                                                           else sys.argv[1:]),
               "machine": _common.machine_info(), "repeats": args.repeats, "workloads": []}
    with progress_bar(len(todo), enabled=not args.no_progress, desc="workloads") as bar:
        for wid in todo:
            if wid == "W1":
                results["workloads"].append(bench_depth2("W1", 24 - d, 64, args.repeats))
            elif wid == "W2":
                results["workloads"].append(bench_depth2("W2", 26 - d, 256, args.repeats, fraction=16))
            elif wid == "W3":
                results["workloads"].append(bench_depth2("W3", 26 - d, 64, args.repeats, ip=True,
                                                         fraction=16))
            elif wid == "W5":
                results["workloads"].append(bench_w5(24 - d, 64, args.repeats))
            elif wid == "W6":
                results["workloads"].append(bench_w6(w6_ns, 64, args.repeats))
            elif wid == "compile":
                results["compile"] = bench_compile()
            elif wid == "demo":
                results["demo"] = bench_demo(args.repeats)
            bar.update(1)
            print(f"{wid} done", file=sys.stderr)
    text = render(results)
    print(text)
    _common.write_results(args.out, results, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
