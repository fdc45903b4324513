"""Benchmark T2 on PyTorch's CPU: one full-batch depth-3 product-form epoch (forward + MSE
gradient + Adam step) on all 4^n support pairs of ``HardInstance(n, seed=0)``, ReLU, random init
seed 1, with ``device="cpu-torch"`` (:mod:`networks.product._torch3`) against the fused float32
numba pass (``device="cpu"``, the default and the named baseline), in the same run.

Each candidate runs in its own child process, A B A B ... ``--rounds`` times, on ``--threads``
threads (numba's and torch's intra-op threads alike); a child runs one untimed epoch (compile
or load, device start-up: reported as ``first``), then times ``--epochs`` epochs one by one.
Figures: median [min–max] over all timed epochs of a candidate and the ratio of medians
(torch / numba: how many times slower the torch pass is on this CPU).  No GPU rows: this script
times the CPU only.

    nice -n 10 python benchmarks/bench_torch3.py                 # (10, (100, 10)), 3 rounds
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
import numba
import numpy as np
import torch
numba.set_num_threads({threads!r})
torch.set_num_threads({threads!r})
from embeddings import HardInstance
from networks import SigmaNetwork
import importlib
tp = importlib.import_module("networks.train_product")
from networks.product.train import _Depth3Grad
from networks.product._torch import resolve_device
n, widths, device, epochs = {n!r}, {widths!r}, {device!r}, {epochs!r}
inst = HardInstance(n, seed=0)
net = SigmaNetwork.random([inst.dim, *widths, 1], "relu", seed=1)
sup = tp.product_support(inst)
Y = tp._targets(sup, None)
L = net.layers
params = [p for l in L for p in (np.array(l.weights if l is not L[-1] else l.weights[0]),
                                  np.array(l.bias))]
adam = tp._Adam(params, 1e-3, (0.9, 0.999), 1e-8, None, None)
grad = _Depth3Grad(sup, net.activation, "float32")
if device != "cpu":
    grad.set_device(resolve_device(device))
def epoch():
    loss, grads = grad(params, Y)
    adam(grads)
    return loss
with tp.blas_threads(1):
    t0 = time.perf_counter(); first_loss = epoch(); first = time.perf_counter() - t0
    times, losses = [], []
    for _ in range(epochs):
        t0 = time.perf_counter(); losses.append(epoch()); times.append(time.perf_counter() - t0)
print(json.dumps({{"first": first, "times": times, "losses": [first_loss] + losses,
                   "torch": torch.__version__}}))
'''


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(allow_abbrev=False, description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=10)
    ap.add_argument("--widths", type=str, default="100,10", help="w1,w2")
    ap.add_argument("--rounds", type=int, default=3, help="A/B rounds (>= 3)")
    ap.add_argument("--epochs", type=int, default=3, help="timed epochs per child")
    ap.add_argument("--threads", type=int, default=2, help="numba and torch threads")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results_torch3.json")
    args = ap.parse_args(argv)
    if args.rounds < 3:
        ap.error("--rounds must be >= 3")
    widths = [int(w) for w in args.widths.split(",")]
    if len(widths) != 2:
        ap.error("--widths must be w1,w2 (a depth-3 net)")
    load0 = os.getloadavg()
    cands = ("cpu", "cpu-torch")
    runs: dict = {c: [] for c in cands}
    for _ in range(args.rounds):
        for dev in cands:
            code = CHILD.format(root=str(ROOT), n=args.n, widths=widths, device=dev,
                                epochs=args.epochs, threads=args.threads)
            runs[dev].append(run_child(code, env={"OMP_NUM_THREADS": str(args.threads)}))
    row: dict = {"workload": "T2", "n": args.n, "widths": widths, "threads": args.threads}
    for dev, rs in runs.items():
        times = [t for r in rs for t in r["times"]]
        row[dev] = {"median_s": statistics.median(times), "min_s": min(times),
                    "max_s": max(times), "times_s": times,
                    "first_s": statistics.median(r["first"] for r in rs),
                    "losses": rs[-1]["losses"], "peak_rss_bytes": max(r["peak_rss_bytes"]
                                                                      for r in rs)}
    ratio = row["cpu-torch"]["median_s"] / row["cpu"]["median_s"]
    row["torch_over_numba"] = ratio
    load1 = os.getloadavg()
    lines = [f"T2 n={args.n} w={tuple(widths)} threads={args.threads} "
             f"(torch {runs['cpu-torch'][0]['torch']}); load {load0[0]:.1f} -> {load1[0]:.1f}"]
    for dev in cands:
        r = row[dev]
        lines.append(f"  {dev:9s} {r['median_s']:.4g} s [{r['min_s']:.4g}–{r['max_s']:.4g}] "
                     f"(first {r['first_s']:.3g} s)")
    lines.append(f"  cpu-torch / cpu (numba): {ratio:.2f}x")
    text = "\n".join(lines) + "\n"
    print(text, end="")
    write_results(args.out, {"command": " ".join([sys.executable, *sys.argv]),
                             "machine": machine_info(), "load_start": load0, "load_end": load1,
                             "rounds": args.rounds, "epochs": args.epochs, "row": row}, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
