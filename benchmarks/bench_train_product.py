"""Benchmark T1 / T2 (BENCHMARKS.md): one full-batch epoch of product-form training on all 4^n
support pairs of ``HardInstance(n, seed=0)``, ReLU, random init seed 1: forward + MSE gradient +
Adam step, against the trainer of the commit before issue 23's work, in the same run.

Each candidate runs in its own child process (imports from its own source tree), A B A B ...
``--rounds`` times; a child loads / compiles its kernels with one untimed epoch (reported as
``first``), then times ``--epochs`` epochs one by one.  Figures: median [min–max] over all
timed epochs of a candidate, the ratio of medians against the named baseline, and the achieved
fraction of the T1 limit (≈ 0.15 s at (12, 144) on 2 AVX-512 cores, scaled by 4^n·w).

Candidates:
- ``base``: the trainer at ``--baseline`` (default ef82995): depth 2 ``train_product``'s float64
  pass; depth 3 (T2) had no product form there, so ``networks.train`` on the explicit support
  (float64, BLAS) is the baseline.
- ``f32``: this tree, ``precision="float32"`` (the default) for depth 2; depth 3 product form.
- ``f64``: this tree, ``precision="float64"`` (depth 2 only): the reference path, sliced.
- ``prev`` (with ``--previous COMMIT``, depth 2 only): the float32 trainer at that commit, to
  show one step of the work (its ratio is still against ``base``).
- ``old3`` (T2 only): the depth-3 product-form trainer at ``--t2-baseline`` (default c59d344,
  float64 BLAS tiles); T2's ``f32`` (the fused float32-lane depth-3 pass) is also given as a
  ratio against it (``ratio_vs_old3``).  At n = 12 only ``old3`` and ``f32`` run (the explicit
  support does not fit), with ``--epochs-n12`` timed epochs per child.

    python benchmarks/bench_train_product.py                      # T1 and T2, 3 rounds
    python benchmarks/bench_train_product.py --only t1 --rounds 5
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from _common import ROOT, machine_info, run_child, write_results  # noqa: E402

T1 = [(10, 100), (12, 12), (12, 144)]
T2 = [(10, (10, 11)), (10, (100, 10)), (12, (144, 12))]
#: T2 rows whose explicit-support baseline does not fit in memory (4^12 × d float64 inputs).
NO_EXPLICIT_ABOVE = 10
PEAK_S = 0.15                                   # T1 limit at (12, 144), BENCHMARKS.md
PEAK_TERMS = 4 ** 12 * 144

CHILD = r'''
import sys, json, time, statistics, importlib, inspect
sys.path.insert(0, {root!r})
import numpy as np
from embeddings import HardInstance
from networks import SigmaNetwork
n, widths, mode, epochs = {n!r}, {widths!r}, {mode!r}, {epochs!r}
inst = HardInstance(n, seed=0)
net = SigmaNetwork.random([inst.dim, *widths, 1], "relu", seed=1)
if mode == "explicit":                           # networks.train on the support points
    tr = importlib.import_module("networks.train")
    X, _, lab = inst.support()
    y = lab.astype(np.float64)
    opts = tr.TrainOptions(lr=1e-3)
    params = tr._params_of(net)
    adam = tr._Adam(params, opts)
    def epoch():
        loss, grads = tr._forward_backward(adam.params, net.activation, X, y)
        adam(grads)
        return loss
    ctx = __import__("contextlib").nullcontext()
    blas = importlib.import_module("networks.train_product").blas_threads(1)
else:
    tp = importlib.import_module("networks.train_product")
    sup = tp.product_support(inst)
    Y = tp._targets(sup, None)
    L = net.layers
    params = [p for l in L for p in (np.array(l.weights if l is not L[-1] else l.weights[0]),
                                      np.array(l.bias))]
    adam = tp._Adam(params, 1e-3, (0.9, 0.999), 1e-8, None, None)
    if len(widths) == 2:
        kw3 = {{"precision": mode}} if "precision" in inspect.signature(tp._gradient3).parameters else {{}}
        def grad():
            return tp._gradient3(params, sup, net.activation, Y, **kw3)
    else:
        kw = {{"precision": mode}} if "precision" in inspect.signature(tp._gradient).parameters else {{}}
        code, nb = tp._activation_code(net.activation), tp._n_blocks(sup)
        def grad():
            return tp._gradient(params, sup, code, net.activation, Y, nb, **kw)
    def epoch():
        loss, grads = grad()
        adam(grads)
        return loss
    ctx = tp._numba_threads(sup.size ** 2 * widths[0])
    blas = tp.blas_threads(1)
with ctx, blas:
    t0 = time.perf_counter(); first_loss = epoch(); first = time.perf_counter() - t0
    times, losses = [], []
    for _ in range(epochs):
        t0 = time.perf_counter(); losses.append(epoch()); times.append(time.perf_counter() - t0)
print(json.dumps({{"first": first, "times": times, "losses": [first_loss] + losses}}))
'''


def baseline_tree(commit: str, where: "Path | None") -> Path:
    """A plain copy of the project at ``commit`` (git archive; no worktree is registered)."""
    dest = where or Path(tempfile.gettempdir()) / f"depthsep-base-{commit[:10]}"
    if not (dest / "networks").is_dir():
        dest.mkdir(parents=True, exist_ok=True)
        arch = subprocess.run(["git", "archive", commit], cwd=ROOT, check=True,
                              capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(dest)], input=arch, check=True)
    return dest


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(allow_abbrev=False, description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--baseline", default="ef82995", help="commit of the baseline trainer")
    ap.add_argument("--baseline-root", type=Path, default=None,
                    help="where to unpack it (default: a folder under the temp dir)")
    ap.add_argument("--rounds", type=int, default=3, help="A/B rounds (>= 3)")
    ap.add_argument("--epochs", type=int, default=3, help="timed epochs per child")
    ap.add_argument("--only", choices=["t1", "t2", "all"], default="all")
    ap.add_argument("--no-f64", action="store_true", help="skip this tree's float64 path")
    ap.add_argument("--previous", default=None,
                    help="also time the float32 trainer at this commit (candidate 'prev')")
    ap.add_argument("--t2-baseline", default="c59d344",
                    help="commit of the depth-3 trainer T2's f32 is compared with (candidate old3)")
    ap.add_argument("--epochs-n12", type=int, default=1, help="timed epochs per child, T2 at n = 12")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results_train_product.json")
    args = ap.parse_args(argv)
    if args.rounds < 3:
        ap.error("--rounds must be >= 3")
    base = baseline_tree(args.baseline, args.baseline_root)
    prev = baseline_tree(args.previous, None) if args.previous else None
    old3 = baseline_tree(args.t2_baseline, None) if args.only in ("t2", "all") else None
    work = []
    if args.only in ("t1", "all"):
        work += [("T1", n, (w,)) for n, w in T1]
    if args.only in ("t2", "all"):
        work += [("T2", n, w) for n, w in T2]
    results, lines = [], []
    load0 = os.getloadavg()
    for label, n, widths in work:
        cands = {"base": (str(base), "explicit" if len(widths) == 2 else "float64"),
                 "f32": (str(ROOT), "float32")}
        epochs = args.epochs
        if len(widths) == 2:
            cands["old3"] = (str(old3), "float64")
            if n > NO_EXPLICIT_ABOVE:
                del cands["base"]
                epochs = args.epochs_n12
        if len(widths) == 1 and not args.no_f64:
            cands["f64"] = (str(ROOT), "float64")
        if len(widths) == 1 and prev is not None:
            cands["prev"] = (str(prev), "float32")
        runs = {k: [] for k in cands}
        for _ in range(args.rounds):
            for name, (root, mode) in cands.items():
                code = CHILD.format(root=root, n=n, widths=list(widths), mode=mode,
                                    epochs=epochs)
                runs[name].append(run_child(code, env={"OMP_NUM_THREADS": "1"}))
        row = {"workload": label, "n": n, "widths": list(widths), "load_before": os.getloadavg()}
        for name, rs in runs.items():
            times = [t for r in rs for t in r["times"]]
            row[name] = {"median_s": statistics.median(times), "min_s": min(times),
                         "max_s": max(times), "times_s": times,
                         "first_s": statistics.median(r["first"] for r in rs),
                         "loss_after": rs[-1]["losses"][-1],
                         "peak_rss_bytes": max(r["peak_rss_bytes"] for r in rs)}
        for name in cands:
            if name != "base" and "base" in cands:
                row[name]["ratio_vs_base"] = row["base"]["median_s"] / row[name]["median_s"]
        if "old3" in cands:
            row["f32"]["ratio_vs_old3"] = row["old3"]["median_s"] / row["f32"]["median_s"]
        if len(widths) == 1:
            limit = PEAK_S * (4 ** n * widths[0]) / PEAK_TERMS
            row["limit_s"] = limit
            for name in cands:
                row[name]["fraction_of_limit"] = limit / row[name]["median_s"]
        results.append(row)
        parts = [f"{label} n={n} w={tuple(widths)}"]
        for name in cands:
            r = row[name]
            s = (f"{name} {r['median_s']:.4g} s [{r['min_s']:.4g}–{r['max_s']:.4g}] "
                 f"(first {r['first_s']:.3g} s)")
            if "ratio_vs_base" in r:
                s += f" ×{r['ratio_vs_base']:.2f}"
            if "ratio_vs_old3" in r:
                s += f" ×{r['ratio_vs_old3']:.2f} vs old3"
            if "fraction_of_limit" in r:
                s += f" {100 * r['fraction_of_limit']:.0f}% of limit"
            parts.append(s)
        line = " | ".join(parts)
        print(line, flush=True)
        lines.append(line)
    out = {"command": " ".join([sys.executable, *sys.argv]), "baseline": args.baseline,
           "t2_baseline": args.t2_baseline,
           "previous": args.previous,
           "machine": machine_info(), "load_start": load0, "load_end": os.getloadavg(),
           "rounds": args.rounds, "epochs_per_child": args.epochs, "results": results}
    write_results(args.out, out, "\n".join(lines) + "\n")
    print(json.dumps({"load_start": load0, "load_end": out["load_end"]}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
