"""Measured peak: the float32 FMA throughput these cores reach from numba, and the fraction of it
that the product-form training passes reach (BENCHMARKS.md, "Measured peak").

The microbenchmark (:func:`_fma_peak`): 16 independent float32 accumulators per vector lane,
``s_k += x[p] · c_k`` over an L1-resident array (one load per 16 fused multiply-adds), compiled by
numba with ``fastmath={"reassoc", "contract"}`` (so the 16 chains run in vector-lane partials).
It reports fused multiply-adds per second (1 FMA = 2 flops) on one thread and on all numba
threads (one block per thread).

The passes, timed in the same child process, interleaved with the microbenchmark:
- depth 2, ReLU float32 lanes (``networks.product.train._full_pass``), at (n, w): each
  (pair, neuron) term is one forward FMA and two masked backward adds, counted as 3 FMA-slot
  operations;
- depth 3, ReLU float32 lanes (``networks.product._pass3.depth3_pass32``), at (n, (w1, w2)):
  3 · w1 · w2 FMAs per pair (layer 2 forward, W2ᵀ δ, δ h1ᵀ; unpadded widths).
"fraction" = achieved FMA-slot operations per second / the all-thread peak of the same round.

    python benchmarks/bench_peak.py --rounds 5
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from _common import ROOT, machine_info, run_child, write_results  # noqa: E402

CHILD = r'''
import sys, json, time
sys.path.insert(0, {root!r})
import numpy as np, numba
from numba import prange
from embeddings import HardInstance
from networks import SigmaNetwork
import importlib
tr = importlib.import_module("networks.product.train")
from networks.product._pass3 import depth3_pass32
from networks.product.depth3 import depth3_parts

@numba.njit(fastmath={{"reassoc", "contract"}}, nogil=True)
def _fma_block(x, c, reps):
    c0 = c[0]; c1 = c[1]; c2 = c[2]; c3 = c[3]; c4 = c[4]; c5 = c[5]; c6 = c[6]; c7 = c[7]
    d0 = c[8]; d1 = c[9]; d2 = c[10]; d3 = c[11]; d4 = c[12]; d5 = c[13]; d6 = c[14]; d7 = c[15]
    s0 = s1 = s2 = s3 = s4 = s5 = s6 = s7 = np.float32(0.0)
    t0 = t1 = t2 = t3 = t4 = t5 = t6 = t7 = np.float32(0.0)
    n = x.shape[0]
    for _ in range(reps):
        for p in range(n):
            v = x[p]
            s0 += v * c0; s1 += v * c1; s2 += v * c2; s3 += v * c3
            s4 += v * c4; s5 += v * c5; s6 += v * c6; s7 += v * c7
            t0 += v * d0; t1 += v * d1; t2 += v * d2; t3 += v * d3
            t4 += v * d4; t5 += v * d5; t6 += v * d6; t7 += v * d7
    return s0 + s1 + s2 + s3 + s4 + s5 + s6 + s7 + t0 + t1 + t2 + t3 + t4 + t5 + t6 + t7

@numba.njit(parallel=True, nogil=True)
def _fma_par(xs, c, reps, out):
    for k in prange(xs.shape[0]):
        out[k] = _fma_block(xs[k], c, reps)

def fma_peak(threads, reps=20000):
    xs = np.random.default_rng(0).random((threads, 1024)).astype(np.float32)
    c = np.linspace(0.5, 1.0, 16).astype(np.float32)
    out = np.zeros(threads, dtype=np.float32)
    numba.set_num_threads(threads)
    _fma_par(xs, c, 1, out)
    t0 = time.perf_counter(); _fma_par(xs, c, reps, out); dt = time.perf_counter() - t0
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    return threads * 1024 * 16 * reps / dt

def depth2(n, w):
    inst = HardInstance(n, seed=0)
    net = SigmaNetwork.random([inst.dim, w, 1], "relu", seed=1)
    sup = tr.product_support(inst)
    Y = tr._targets(sup, None)
    L = net.layers
    params = [np.array(L[0].weights), np.array(L[0].bias), np.array(L[1].weights[0]),
              np.array(L[1].bias)]
    code, nb = tr._activation_code(net.activation), tr._n_blocks(sup)
    f = lambda: tr._gradient(params, sup, code, net.activation, Y, nb, precision="float32")
    return f, 3.0 * 4 ** n * w

def depth3(n, w1, w2):
    inst = HardInstance(n, seed=0)
    net = SigmaNetwork.random([inst.dim, w1, w2, 1], "relu", seed=1)
    sup = tr.product_support(inst)
    Y = tr._targets(sup, None)
    p = depth3_parts(net)
    A = sup.XA @ p.W1[:, :sup.m].T
    Bc = sup.XB @ p.W1[:, sup.m:].T + p.b1
    f = lambda: depth3_pass32(A, Bc, p.W2, p.b2, p.v, p.v0, Y)
    return f, 3.0 * 4 ** n * w1 * w2

cases = {cases!r}
rounds = {rounds!r}
jobs = {{}}
for name, spec in cases.items():
    f, work = depth2(*spec) if len(spec) == 2 else depth3(*spec)
    f()                                              # compile / load, untimed
    jobs[name] = (f, work)
res = {{"peak1": [], "peakN": []}}
res.update({{k: [] for k in jobs}})
fma_peak(1, 10)
with tr.blas_threads(1):
    for _ in range(rounds):
        res["peak1"].append(fma_peak(1))
        res["peakN"].append(fma_peak(numba.config.NUMBA_NUM_THREADS))
        for name, (f, work) in jobs.items():
            t0 = time.perf_counter(); f(); res[name].append(time.perf_counter() - t0)
print(json.dumps({{"res": res, "work": {{k: w for k, (f, w) in jobs.items()}},
                  "threads": numba.config.NUMBA_NUM_THREADS}}))
'''

CASES = {"T1 (12, 144)": (12, 144), "T1 (10, 100)": (10, 100),
         "T2 (10, (100, 10))": (10, 100, 10), "T2 (12, (144, 12))": (12, 144, 12)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(allow_abbrev=False, description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--root", type=Path, default=ROOT, help="source tree to measure")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results_peak.json")
    args = ap.parse_args(argv)
    load0 = os.getloadavg()
    r = run_child(CHILD.format(root=str(args.root), cases=CASES, rounds=args.rounds),
                  env={"OMP_NUM_THREADS": "1"})
    res, work = r["res"], r["work"]
    peak1 = statistics.median(res["peak1"])
    peakN = statistics.median(res["peakN"])
    lines = [f"FMA peak (float32, numba): 1 thread {peak1 / 1e9:.1f} G FMA/s "
             f"[{min(res['peak1']) / 1e9:.1f}–{max(res['peak1']) / 1e9:.1f}], "
             f"{r['threads']} threads {peakN / 1e9:.1f} G FMA/s "
             f"[{min(res['peakN']) / 1e9:.1f}–{max(res['peakN']) / 1e9:.1f}]"]
    rows = {}
    for name in CASES:
        t = statistics.median(res[name])
        rate = work[name] / t
        fr = [work[name] / tt / pk for tt, pk in zip(res[name], res["peakN"])]
        rows[name] = {"median_s": t, "times_s": res[name], "fma_per_s": rate,
                      "fraction_of_peak": statistics.median(fr)}
        lines.append(f"{name}: {t:.4g} s [{min(res[name]):.4g}–{max(res[name]):.4g}], "
                     f"{rate / 1e9:.1f} G FMA-slot/s, {100 * statistics.median(fr):.0f}% of the "
                     f"{r['threads']}-thread peak (median of per-round ratios)")
    out = {"command": " ".join([sys.executable, *sys.argv]), "machine": machine_info(),
           "load_start": load0, "load_end": os.getloadavg(), "rounds": args.rounds,
           "peak_1thread_fma_per_s": res["peak1"], "peak_all_fma_per_s": res["peakN"],
           "threads": r["threads"], "passes": rows}
    text = "\n".join(lines) + f"\nload {load0} -> {out['load_end']}\n"
    print(text)
    write_results(args.out, out, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
