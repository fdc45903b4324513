"""Per-cell training rates of the E23 table: seconds per full-batch Adam epoch of every net shape
the full table trains (depth 2 at widths n, n² and the parameter-matched widths, depth 3 at
(n, n+1) and (n², n)), each pinned to one numba and one BLAS thread as the cells run
(:func:`networks.separation.cells.pinned_threads`).  s/epoch is ``history["loop_seconds"]``
/ epochs (compilation outside the timing); the median of ``--repeats`` calls.  The budget of
``depthsep separate --full`` is designed from these rates (docs/experiments.md, E23).

    python benchmarks/bench_cell_rates.py --n 8,10,12 --epochs 3 --repeats 3
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from statistics import median

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._common import machine_info, write_results  # noqa: E402


def shapes(n: int) -> list:
    """(rule, hidden widths) of every trained net of the full table at n."""
    from networks.separation.separate import matched_width

    out = [("n", [n]), ("n^2", [n * n])]
    for r1, r2, w in (("n", "n+1", [n, n + 1]), ("n^2", "n", [n * n, n])):
        out.append((f"({r1}, {r2})", w))
        out.append((f"params({r1}, {r2})", [matched_width(8 * n, w)]))
    return out


def rate(n: int, widths, epochs: int, repeats: int) -> list:
    from embeddings import HardInstance
    from networks.separation.separate import pinned_threads
    from networks.separation.targets import target_table
    from networks.sigma import SigmaNetwork
    from networks.train_product import train_product

    inst = HardInstance(n, seed=0)
    Y = target_table("ip", n)
    net = SigmaNetwork.random([inst.dim, *widths, 1], "relu", seed=1, bias_scale=0.5)
    times = []
    with pinned_threads():
        train_product(net, inst, targets=Y, epochs=1, lr=0.02, patience=None, max_seconds=None)
        for _ in range(repeats):
            h = train_product(net, inst, targets=Y, epochs=epochs, lr=0.02, patience=None,
                              max_seconds=None).history
            times.append(h["loop_seconds"] / epochs)
    return times


def main(argv=None) -> int:
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", default="8,10,12")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--out", default=str(Path(__file__).with_name("results_cell_rates")))
    args = p.parse_args(argv)
    rows = []
    for n in (int(v) for v in args.n.split(",")):
        for rule, w in shapes(n):
            load0 = os.getloadavg()[0]
            t = rate(n, w, args.epochs, args.repeats)
            terms = 4 ** n * int(__import__("math").prod(w))
            rows.append({"n": n, "rule": rule, "widths": w, "s_per_epoch": median(t),
                         "all": t, "terms_per_s": terms / median(t),
                         "load": [load0, os.getloadavg()[0]]})
            r = rows[-1]
            print(f"n={n:>2} {rule:>18} {str(w):>10} {r['s_per_epoch']:.4g} s/epoch "
                  f"({r['terms_per_s']:.3g} terms/s) load {load0:.1f}", flush=True)
    text = ["| n | rule | widths | s/epoch (median) | min-max | 4^n·Πw per s | load |",
            "|---|---|---|---|---|---|---|"]
    text += [f"| {r['n']} | {r['rule']} | {r['widths']} | {r['s_per_epoch']:.4g} | "
             f"{min(r['all']):.4g}-{max(r['all']):.4g} | {r['terms_per_s']:.3g} | "
             f"{r['load'][0]:.1f}-{r['load'][1]:.1f} |" for r in rows]
    write_results(args.out, {"machine": machine_info(), "args": vars(args), "rows": rows},
                  "\n".join(text) + "\n")
    print("\n".join(text))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
