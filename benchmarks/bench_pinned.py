"""What bit-reproducibility costs: an E23 training cell pinned to one numba and one BLAS thread
(:func:`networks.separation.cells.pinned_threads`, what every cell does now) against the same
call with numba's configured threads (the trainer's own choice, the baseline), interleaved in the
same run.  s/epoch is ``history["loop_seconds"]`` / epochs (compilation outside the timing).

    python benchmarks/bench_pinned.py                 # n = 8, 10; widths n and n^2; depth 3 (n, n+1)
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path
from statistics import median

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._common import interleaved, machine_info, write_results  # noqa: E402


def _case(n, widths, pinned, epochs):
    from embeddings import HardInstance
    from networks.separation.separate import pinned_threads
    from networks.separation.targets import target_table
    from networks.sigma import SigmaNetwork
    from networks.train_product import train_product

    inst = HardInstance(n, seed=0)
    Y = target_table("majand", n)
    net = SigmaNetwork.random([inst.dim, *widths, 1], "relu", seed=1, bias_scale=0.5)

    def call(k):
        with pinned_threads() if pinned else contextlib.nullcontext():
            return train_product(net, inst, targets=Y, epochs=k, lr=0.02, patience=None,
                                 max_seconds=None).history

    def run():
        h = call(epochs)
        run.loops.append(h["loop_seconds"])
        return h["final_loss"]
    run.loops = []
    call(1)                                              # compile outside the timing
    return run


def main(argv=None) -> int:
    import numba

    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", default="8,10")
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--out", default=str(Path(__file__).with_name("results_pinned")))
    args = p.parse_args(argv)
    rows = []
    for n in (int(v) for v in args.n.split(",")):
        for rule, w in (("n", [n]), ("n^2", [n * n]), ("(n, n+1)", [n, n + 1])):
            cands = {"pinned": _case(n, w, True, args.epochs),
                     "threads": _case(n, w, False, args.epochs)}
            interleaved(cands, repeats=args.repeats)
            a, b = cands["pinned"].loops, cands["threads"].loops
            rows.append({"n": n, "widths": w, "rule": rule,
                         "pinned_s_per_epoch": median(a) / args.epochs,
                         "threads_s_per_epoch": median(b) / args.epochs,
                         "slowdown": median(a) / median(b), "pinned_all": a, "threads_all": b})
    text = ["| n | widths | pinned s/epoch | baseline (numba threads) s/epoch | pinned / baseline |",
            "|---|---|---|---|---|"]
    text += [f"| {r['n']} | {r['rule']} {r['widths']} | {r['pinned_s_per_epoch']:.4f} | "
             f"{r['threads_s_per_epoch']:.4f} | {r['slowdown']:.2f} |" for r in rows]
    write_results(args.out, {"machine": machine_info(), "args": vars(args),
                             "numba_threads": numba.get_num_threads(), "rows": rows},
                  "\n".join(text) + "\n")
    print("\n".join(text))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
