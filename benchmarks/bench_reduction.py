"""Benchmark: steps 3–4 of the reduction (twisted self-reduction + certificate) at n = 10.

    python benchmarks/bench_reduction.py                 # n = 10, w = 64, k = 256, 5 repeats
    python benchmarks/bench_reduction.py --write         # also write benchmarks/results_reduction.md

Workload (fixed seed): hard instance n = 10 (4^10 = 1,048,576 pairs, m = 40), a random depth-2
ReLU network of width 64 quantised on the §4.2 grid (V = Ñ_q on all pairs), k = 256 random
shifts.  Step 3 = M_k and the exact margin of every prefix length 1..k over all 4^n pairs;
step 4 = the certificate (numerical ranks of V and M_k by SVD, Forster, §4.7).

Baseline: the same step 3 written in numpy the way a researcher would — per shift, gather
V[a ⊕ r, b ⊕ s] with fancy indexing, multiply by the character signs, accumulate, and take
min(H·M_t) — timed A B A B in the same run.  Both must give bit-identical M_k and prefix margins
(the kernel accumulates H·T instead of T; multiplying by ±1 is exact).  Compile time of the
numba kernel is reported on its own line.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402


def numpy_twisted(V: np.ndarray, shifts: np.ndarray):
    """Baseline: (M_k, prefix margins) with numpy (per-shift gather + broadcast)."""
    size = V.shape[0]
    idx = np.arange(size, dtype=np.int64)
    a, b = np.meshgrid(idx, idx, indexing="ij")
    H = 1.0 - 2.0 * (np.bitwise_count((a & b).astype(np.uint64)) & 1)
    acc = np.zeros_like(V)
    prefix = np.empty(shifts.shape[0])
    for j, (r, s) in enumerate(shifts.tolist()):
        chi_s = 1.0 - 2.0 * (np.bitwise_count((idx & s).astype(np.uint64)) & 1)
        chi_r = 1.0 - 2.0 * (np.bitwise_count((idx & r).astype(np.uint64)) & 1)
        sign = 1.0 - 2.0 * (int(r & s).bit_count() & 1)
        acc += (sign * chi_s)[:, None] * chi_r[None, :] * V[np.ix_(idx ^ r, idx ^ s)]
        prefix[j] = (H * acc).min() * (1.0 / (j + 1))
    return acc / shifts.shape[0], prefix


def _lscpu() -> str:
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return platform.processor() or "unknown"
    model = next((line.split(":", 1)[1].strip() for line in out.splitlines()
                  if line.startswith("Model name")), "unknown")
    return f"{model}, {os.cpu_count()} logical CPUs"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=int, default=10)
    p.add_argument("--width", type=int, default=64)
    p.add_argument("--k", type=int, default=256)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--write", action="store_true",
                   help="write benchmarks/results_reduction.md (atomically)")
    args = p.parse_args(argv)
    if args.repeats < 3:
        p.error("--repeats must be >= 3 (median of at least 3)")
    import numba
    import scipy

    from circuits.utils.files import write_bytes_atomic
    from embeddings import HardInstance
    from networks import SigmaNetwork
    from networks import _kernels
    from networks.reduction import certify, quantise, random_shifts, self_reduce

    t0 = time.perf_counter()
    inst = HardInstance(args.n, seed=0)
    net = SigmaNetwork.random([inst.dim, args.width, 1], "relu", seed=0, bias_scale=0.3)
    qn = quantise(net, inst, eta=1e-3)
    V = qn.value_matrix()
    shifts = random_shifts(args.n, args.k, seed=0)
    setup = time.perf_counter() - t0
    # compile (first call) on a tiny input, reported separately
    t0 = time.perf_counter()
    _kernels._twisted_sums(np.zeros((2, 2)), np.zeros((1, 2), dtype=np.int64), 1, 0, 2, 1)
    compile_s = time.perf_counter() - t0

    def step3_numba():
        return self_reduce(V, shifts=shifts)

    def step3_numpy():
        return numpy_twisted(V, shifts)

    def steps34_numba():
        red = self_reduce(V, shifts=shifts)
        return certify(n=args.n, width=args.width, mse=0.2, quantised=qn, reduction=red)

    times = {"step3 numba": [], "step3 numpy": [], "steps3-4 numba": []}
    results = {}
    for _ in range(args.repeats):                       # A B A B ...
        for name, fn in (("step3 numba", step3_numba), ("step3 numpy", step3_numpy)):
            t0 = time.perf_counter()
            results[name] = fn()
            times[name].append(time.perf_counter() - t0)
    for _ in range(3):
        t0 = time.perf_counter()
        cert = steps34_numba()
        times["steps3-4 numba"].append(time.perf_counter() - t0)
    red = results["step3 numba"]
    M_np, pref_np = results["step3 numpy"]
    identical = bool(np.array_equal(red.M, M_np) and np.array_equal(red.prefix_margins, pref_np))
    max_diff = float(max(np.abs(red.M - M_np).max(), np.abs(red.prefix_margins - pref_np).max()))
    med = {k: statistics.median(v) for k, v in times.items()}
    ratio = med["step3 numpy"] / med["step3 numba"]
    cert_only = med["steps3-4 numba"] - med["step3 numba"]
    lines = [
        "# Reduction benchmark (steps 3–4: twisted self-reduction + certificate)",
        "",
        f"command: `python benchmarks/bench_reduction.py --n {args.n} --width {args.width} "
        f"--k {args.k} --repeats {args.repeats}`",
        f"machine: {_lscpu()}; load average at start "
        f"{os.getloadavg()[0]:.1f} (shared machine: absolute times drift, ratios are same-run)",
        f"versions: python {platform.python_version()}, numpy {np.__version__}, numba "
        f"{numba.__version__}, scipy {scipy.__version__}",
        f"workload: n = {args.n} ({4 ** args.n} pairs (a, b)), m = {inst.m}, w = {args.width} "
        f"ReLU, η = 1e-3, k = {args.k} shifts (seed 0); setup {setup:.2f} s",
        "",
        "| what | median [min–max] (s) | ratio |",
        "|---|---|---|",
        f"| step 3, numba kernel `_twisted_sums` (all prefix margins) | {med['step3 numba']:.3f} "
        f"[{min(times['step3 numba']):.3f}–{max(times['step3 numba']):.3f}] | 1 |",
        f"| step 3, numpy baseline (gather + broadcast per shift) | {med['step3 numpy']:.3f} "
        f"[{min(times['step3 numpy']):.3f}–{max(times['step3 numpy']):.3f}] | "
        f"**{ratio:.1f}× slower** |",
        f"| steps 3–4, numba + certificate (2 SVDs of 2^{args.n} × 2^{args.n}, Forster, §4.7) | "
        f"{med['steps3-4 numba']:.3f} [{min(times['steps3-4 numba']):.3f}–"
        f"{max(times['steps3-4 numba']):.3f}] | certificate ≈ {cert_only:.3f} s |",
        "",
        f"compile (first call of the kernel, cached afterwards): {compile_s:.2f} s",
        f"results: M_k and the {args.k} prefix margins bit-identical to the baseline: {identical} "
        f"(max |diff| = {max_diff:.3g}); min H·M_k = {red.min_margin:.6g}; sign errors "
        f"{red.n_sign_errors}; chain ok = {cert.ok} (random network: ρ = {red.rho:.4f}, so the "
        f"sign step is expected to fail here — the workload is for timing)",
    ]
    lines += [
        "",
        "Note on step 4: the certificate's time is three LAPACK SVDs of 2^n x 2^n matrices (ranks "
        "of V and M_k, and the spectral norm inside `circuits.analysis.bounds.forster_sign_rank_bound`). "
        "On a shared, oversubscribed machine multi-threaded OpenBLAS is the bottleneck (one "
        "1024 x 1024 SVD measured in the same minute: 0.56 s with `OPENBLAS_NUM_THREADS=1`, 3.0 s "
        "with the default, 13.9 s with 2 threads); set `OPENBLAS_NUM_THREADS=1` there.",
        "Step 3 is memory-bound: every (a, copy) streams one full row V[a ⊕ r] (2^n doubles), "
        "k·4^n reads in all; the kernel fuses the twist signs, the accumulation and the "
        "prefix-margin minimum into that one pass, while the baseline makes ~5 passes per copy.",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.write:
        out = Path(__file__).resolve().parent / "results_reduction.md"
        write_bytes_atomic(out, text.encode("utf-8"))
        print(f"wrote {out}")
    return 0 if identical else 1


if __name__ == "__main__":
    raise SystemExit(main())
