"""Benchmark: training-step throughput of the sampled mode (issue 22) in pairs per second.

Candidates, timed interleaved in the same run (``_common.interleaved``, median of ``--repeats``):

* ``sampled n=N w=W``: ``--steps`` Adam steps of :func:`networks.separation.sampled.train_sampled`
  on fresh K×K grids (K = ``--grid``; labels MAJ∘AND computed from (a, b); code rows from
  C(a) = aG mod 2), for n = 16, 20, 24 and w = n, n²;
* ``sampled numpy-twin``: the same steps with the numpy path (K²·w temporaries) instead of the
  one-pass numba kernel, at the largest n;
* baseline ``exhaustive n=12 w=W``: one full-batch epoch of
  :func:`networks.train_product.train_product` (the exhaustive product-form trainer) on all 4^12
  pairs, same w rule (w = 12, 144).

Throughput = pairs per second (a sampled step processes K² pairs, an exhaustive epoch 4^12);
the ratio sampled/exhaustive is per pair, so it compares the cost of a pair's contribution to a
gradient, not convergence.  BLAS pinned to 1 thread for all candidates (threadpoolctl).

Second table (``--pin-steps``, 0 to skip): the BLAS pinning that ``depthsep separate-sampled``
applies (``--blas-threads 1``), at the table's largest cell n = 24, w = n²: ``--pin-steps``
training steps and an estimate on 2·10^5 pairs, each with BLAS pinned to 1 thread against the
same call with the library's default thread count, interleaved in the same run.

    python benchmarks/bench_sampled.py                  # 3 repeats, 20 steps, K = 64
    python benchmarks/bench_sampled.py --repeats 5 --out benchmarks/results_sampled
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


from benchmarks._common import interleaved, machine_info, write_results  # noqa: E402


def main(argv=None) -> int:
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--grid", type=int, default=64)
    p.add_argument("--ns", default="16,20,24")
    p.add_argument("--pin-steps", type=int, default=60)
    p.add_argument("--out", default="benchmarks/results_sampled")
    args = p.parse_args(argv)
    from threadpoolctl import threadpool_limits

    from embeddings import CodeEmbedding, HardInstance
    from networks.separation.sampled import estimate, train_sampled
    from networks.separation.targets import target_table
    from networks.sigma import SigmaNetwork
    from networks.train_product import train_product

    ns = [int(x) for x in args.ns.split(",")]
    cands, pairs = {}, {}
    K = args.grid
    for n in ns:
        G = CodeEmbedding(n, seed=0, tries=1).generator
        for rule, w in (("n", n), ("n^2", n * n)):
            name = f"sampled n={n} w={rule}"
            cands[name] = (lambda n=n, w=w, G=G: train_sampled(n, w, "majand", generator=G,
                                                               steps=args.steps, grid=K))
            pairs[name] = args.steps * K * K
            if n == ns[-1]:                          # the numpy twin of the kernel, same step
                name = f"sampled numpy-twin n={n} w={rule}"
                cands[name] = (lambda n=n, w=w, G=G: train_sampled(
                    n, w, "majand", generator=G, steps=args.steps, grid=K, kernel=False))
                pairs[name] = args.steps * K * K
    inst = HardInstance(12, seed=0)
    Y = target_table("majand", 12)
    for rule, w in (("n", 12), ("n^2", 144)):
        net = SigmaNetwork.random([inst.dim, w, 1], "relu", seed=0)
        name = f"exhaustive n=12 w={rule}"
        cands[name] = (lambda net=net: train_product(net, inst, targets=Y, epochs=1, lr=0.01,
                                                     patience=None, blas=1))
        pairs[name] = 4 ** 12
    info = machine_info()
    with threadpool_limits(1):
        res = interleaved(cands, repeats=args.repeats)
    info["load_average_at_end"] = os.getloadavg()
    rows = []
    lines = ["| candidate | time per call (median [min–max]) | pairs/s | ratio vs exhaustive n=12 "
             "same w rule |", "|---|---|---|---|"]
    for name, t in res.items():
        rate = pairs[name] / t.median
        rule = name.split("w=")[1]
        base = res[f"exhaustive n=12 w={rule}"]
        ratio = rate / (4 ** 12 / base.median)
        rows.append({"name": name, "pairs_per_call": pairs[name], "pairs_per_s": rate,
                     "ratio_vs_exhaustive": ratio, **_timing(t)})
        lines.append(f"| {name} | {t.summary()} | {rate:.3g} | {ratio:.2f} |")
    text = "\n".join(lines) + (f"\n\nLoad average start {info['load_average_at_start']}, end "
                               f"{info['load_average_at_end']}; {args.repeats} repeats, "
                               f"{args.steps} steps of {K}² pairs; BLAS 1 thread.\n")
    if args.pin_steps > 0:
        text += _pinning(args, train_sampled, estimate, CodeEmbedding, threadpool_limits, rows)
    print(text)
    write_results(args.out, {"settings": vars(args), "machine": info, "rows": rows}, text)
    return 0


def _timing(t) -> dict:
    """The timing without the last call's result (a trained net: tens of MB of JSON)."""
    return {k: v for k, v in t.to_dict().items() if k != "result"}


def _pinning(args, train_sampled, estimate, CodeEmbedding, threadpool_limits, rows) -> str:
    """BLAS 1 thread vs the default thread count, training and estimation, n = 24, w = n²."""
    n, w = 24, 576
    G = CodeEmbedding(n, seed=0, tries=1).generator
    net = train_sampled(n, w, "majand", generator=G, steps=args.pin_steps, penalty=0.003).net

    def pinned(fn):
        def run():
            with threadpool_limits(1):
                return fn()
        return run

    def train():
        return train_sampled(n, w, "majand", generator=G, steps=args.pin_steps, penalty=0.003)

    def est():
        return estimate(net, "majand", n=n, generator=G, pairs=200_000)

    cands = {"train BLAS default": train, "train BLAS 1": pinned(train),
             "estimate BLAS default": est, "estimate BLAS 1": pinned(est)}
    load0 = os.getloadavg()
    res = interleaved(cands, repeats=args.repeats)
    lines = ["", f"BLAS pinning, n = 24, w = n² (train: {args.pin_steps} steps of {args.grid}² "
             "pairs; estimate: 2·10^5 pairs)", "",
             "| candidate | time per call (median [min–max]) | ratio default/pinned |",
             "|---|---|---|"]
    for name, t in res.items():
        kind = name.split()[0]
        ratio = res[f"{kind} BLAS default"].median / res[f"{kind} BLAS 1"].median
        rows.append({"name": f"pinning: {name}", **_timing(t)})
        lines.append(f"| {name} | {t.summary()} | {ratio:.2f} |" if name.endswith("1")
                     else f"| {name} | {t.summary()} | (baseline) |")
    return "\n".join(lines) + (f"\n\nLoad average start {load0}, end {os.getloadavg()}.\n")


if __name__ == "__main__":
    raise SystemExit(main())
