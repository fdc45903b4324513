"""E23 cell costs: seconds per full-batch epoch of the cells of ``depthsep separate``, and the
full table's cost extrapolated from them.

For each (n, depth, widths) the same training call a cell makes (train_product on all 4^n pairs
of HardInstance(n, seed=0) against MAJ∘AND, ReLU, init seed 1) runs ``--epochs`` epochs; depth 2
is timed with the float32-lane trainer (today's default) and, in the same run and interleaved,
with the float64 reference kernel (``precision="float64"``, the trainer before issue 23), so
each row has a same-run ratio.  Depth 3 has one path (float64, BLAS tiles).  s/epoch is
``history["loop_seconds"]`` / epochs: the epochs alone, without the one float64 reference pass
that computes ``final_loss`` after training (a cell pays it once, not per epoch; ``call_s`` in
the JSON is the whole call).

The full table (``depthsep separate --full``: n = 4..12, 3 targets, 3 seeds, widths n, n², n³,
depth 3 (n, n+1), (n², n) to n = 10, 5000 epochs) is extrapolated from the measured per-epoch
costs, scaled by the work 4^n·w (depth 2) or 4^n·w1·w2 (depth 3) from the nearest measured n,
assuming every cell uses its whole budget (early stopping only shortens it).

    python benchmarks/bench_separate.py                      # n = 8, 10, 12; 3 epochs, 3 repeats
"""

from __future__ import annotations

import argparse
import sys
from statistics import median
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._common import interleaved, machine_info, write_results  # noqa: E402


def _case(n, widths, precision, epochs):
    from embeddings import HardInstance
    from networks.separation.targets import target_table
    from networks.sigma import SigmaNetwork
    from networks.train_product import train_product

    inst = HardInstance(n, seed=0)
    Y = target_table("majand", n)
    net = SigmaNetwork.random([inst.dim, *widths, 1], "relu", seed=1, bias_scale=0.5)
    kw = {} if precision is None else {"precision": precision}

    def run():
        h = train_product(net, inst, targets=Y, epochs=epochs, lr=0.02, patience=None,
                          max_seconds=None, **kw).history
        run.loops.append(h["loop_seconds"])
        return h["final_loss"]
    run.loops = []
    run_small = train_product(net, inst, targets=Y, epochs=1, lr=0.02, patience=None,
                              max_seconds=None, **kw)             # compile outside the timing
    del run_small
    return run


def main(argv=None) -> int:
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", default="8,10,12")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--out", default=str(Path(__file__).with_name("results_separate")))
    args = p.parse_args(argv)
    ns = [int(v) for v in args.n.split(",")]
    import os

    rows = []
    for n in ns:
        d2 = [("n", [n]), ("n^2", [n * n])] + ([("n^3", [n ** 3])] if n <= 10 else [])
        for rule, w in d2:
            cands = {"float32": _case(n, w, "float32", args.epochs),
                     "float64": _case(n, w, "float64", args.epochs)}
            res = interleaved(cands, repeats=args.repeats)
            f32, f64 = cands["float32"].loops, cands["float64"].loops
            rows.append({"n": n, "depth": 2, "rule": rule, "widths": w,
                         "s_per_epoch": median(f32) / args.epochs,
                         "s_per_epoch_min": min(f32) / args.epochs,
                         "s_per_epoch_max": max(f32) / args.epochs,
                         "baseline_float64_s_per_epoch": median(f64) / args.epochs,
                         "ratio": median(f64) / median(f32),
                         "call_s": {k: t.median for k, t in res.items()},
                         "load": os.getloadavg()[0]})
            print(rows[-1], flush=True)
        if n <= 10:
            for rule, w in (("(n, n+1)", [n, n + 1]), ("(n^2, n)", [n * n, n])):
                case = _case(n, w, None, args.epochs)
                res = interleaved({"float64": case}, repeats=args.repeats)
                t = case.loops
                rows.append({"n": n, "depth": 3, "rule": rule, "widths": w,
                             "s_per_epoch": median(t) / args.epochs,
                             "s_per_epoch_min": min(t) / args.epochs,
                             "s_per_epoch_max": max(t) / args.epochs,
                             "call_s": {k: v.median for k, v in res.items()},
                             "baseline_float64_s_per_epoch": None, "ratio": None,
                             "load": os.getloadavg()[0]})
                print(rows[-1], flush=True)
    full = extrapolate(rows)
    lines = ["| n | depth | widths | s/epoch median [min–max] | float64 baseline s/epoch | ratio | load |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        base = "–" if r["ratio"] is None else f"{r['baseline_float64_s_per_epoch']:.3g}"
        ratio = "–" if r["ratio"] is None else f"{r['ratio']:.2f}×"
        lines.append(f"| {r['n']} | {r['depth']} | {r['rule']} = {'x'.join(map(str, r['widths']))} | "
                     f"{r['s_per_epoch']:.3g} [{r['s_per_epoch_min']:.3g}–{r['s_per_epoch_max']:.3g}] | "
                     f"{base} | {ratio} | {r['load']:.1f} |")
    lines.append("")
    lines.append(f"Full table extrapolated (every cell 5000 epochs, one process): "
                 f"{full['hours']:.1f} h; without width n³ at n >= 11: "
                 f"{full['hours_without_n3_large']:.1f} h; slowest cell {full['slowest_cell_hours']:.1f} h "
                 f"({full['slowest_cell']}): the time on a cluster with one cell per worker.")
    text = "\n".join(lines)
    print(text)
    write_results(args.out, {"machine": machine_info(), "args": vars(args), "rows": rows,
                             "full_table": full}, text + "\n")
    return 0


def extrapolate(rows, *, epochs=5000, seeds=3, targets=3) -> dict:
    """Cost of ``depthsep separate --full`` from the measured s/epoch, scaled by the work."""
    def cost(n, depth, widths):
        cand = [r for r in rows if r["depth"] == depth and len(r["widths"]) == len(widths)]
        ref = min(cand, key=lambda r: (abs(r["n"] - n), -r["n"]))
        work = 4 ** n * (widths[0] if depth == 2 else widths[0] * widths[1])
        rwork = 4 ** ref["n"] * (ref["widths"][0] if depth == 2 else
                                 ref["widths"][0] * ref["widths"][1])
        return ref["s_per_epoch"] * work / rwork * epochs

    total = small = 0.0
    slowest = (0.0, "")
    for n in range(4, 13):
        cells = [(2, [n]), (2, [n * n]), (2, [n ** 3])]
        if n <= 10:
            cells += [(3, [n, n + 1]), (3, [n * n, n])]
        for depth, w in cells:
            c = cost(n, depth, w)
            total += c * seeds * targets
            if not (depth == 2 and w[0] == n ** 3 and n >= 11):
                small += c * seeds * targets
            if c > slowest[0]:
                slowest = (c, f"n = {n}, depth {depth}, widths {w}")
    return {"hours": total / 3600, "hours_without_n3_large": small / 3600,
            "slowest_cell_hours": slowest[0] / 3600, "slowest_cell": slowest[1]}


if __name__ == "__main__":
    raise SystemExit(main())
