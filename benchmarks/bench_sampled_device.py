"""Benchmark: the sampled mode's training step and estimator on a torch device (a GPU where one
is present) against the CPU path, same run (issue 22, "the same step on it").

Candidates per (n, w, K), interleaved (``_common.interleaved``, median of ``--repeats``):

* baseline ``cpu``: ``--steps`` steps of :func:`networks.separation.sampled.train_sampled` with
  the numba grid kernel (the default path; BLAS pinned to 1 thread);
* ``torch:<device>``: the same steps with ``device=<device>`` (same pairs, labels, Adam; the grid
  forward/gradient in float64 on the device).

Throughput = pairs per second (a step processes K² pairs, labels and code rows included).  Then
the estimator (:func:`networks.separation.sampled.estimate`) on ``--pairs`` fresh pairs for the
trained net of the largest (n, w), both paths, with the largest difference of the estimated
means (the same pairs: it must be float64 rounding).  Every figure names the machine it ran on.

    python benchmarks/bench_sampled_device.py --device cuda --out $OUT/sampled_device
    python benchmarks/bench_sampled_device.py --device cpu --ns 16 --grids 64   # torch on CPU
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._common import interleaved, machine_info, write_results  # noqa: E402


def _device_info(device: str) -> dict:
    import torch

    info = {"torch": torch.__version__, "device": device}
    if device.startswith("cuda"):
        info["gpu"] = torch.cuda.get_device_name(torch.device(device))
    return info


def main(argv=None) -> int:
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", default="cuda", help="torch device of the candidate")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--ns", default="16,20,24")
    p.add_argument("--grids", default="64,512", help="K values (a step uses K² pairs)")
    p.add_argument("--pairs", type=int, default=1 << 20, help="pairs for the estimator figure")
    p.add_argument("--out", default="benchmarks/results_sampled_device")
    args = p.parse_args(argv)
    from threadpoolctl import threadpool_limits

    from embeddings import CodeEmbedding
    from networks.separation import _torch_sampled
    from networks.separation.sampled import estimate, train_sampled

    dev = _torch_sampled.resolve_device(args.device)
    if dev.type == "cpu":                      # like BLAS: one thread (2 spin under load here)
        import torch

        torch.set_num_threads(1)
    ns = [int(x) for x in args.ns.split(",")]
    grids = [int(x) for x in args.grids.split(",")]
    info = machine_info()
    info.update(_device_info(str(dev)))
    rows, lines = [], ["| n | w | K | cpu (numba) per step | torch per step | cpu pairs/s | "
                       "torch pairs/s | ratio torch/cpu |", "|---|---|---|---|---|---|---|---|"]
    last = None
    with threadpool_limits(1):
        for n in ns:
            G = CodeEmbedding(n, seed=0, tries=1).generator
            for w in (n, n * n):
                for K in grids:
                    def run(device, n=n, w=w, K=K, G=G):
                        return train_sampled(n, w, "majand", generator=G, steps=args.steps,
                                             grid=K, device=device)

                    run(None)                              # compile / warm both paths
                    run(args.device)
                    res = interleaved({"cpu": lambda: run(None),
                                       "torch": lambda: run(args.device)}, repeats=args.repeats)
                    per = K * K * args.steps
                    c, t = res["cpu"].median / args.steps, res["torch"].median / args.steps
                    rows.append({"n": n, "w": w, "K": K, "steps": args.steps,
                                 "cpu": res["cpu"].to_dict(), "torch": res["torch"].to_dict(),
                                 "cpu_pairs_per_s": per / res["cpu"].median,
                                 "torch_pairs_per_s": per / res["torch"].median,
                                 "ratio": res["cpu"].median / res["torch"].median})
                    lines.append(f"| {n} | {w} | {K} | {c * 1e3:.3g} ms | {t * 1e3:.3g} ms | "
                                 f"{per / res['cpu'].median:.3g} | "
                                 f"{per / res['torch'].median:.3g} | "
                                 f"{res['cpu'].median / res['torch'].median:.2f} |")
                    print(lines[-1], flush=True)
                    last = (n, w, G)
        n, w, G = last
        st = train_sampled(n, w, "majand", generator=G, steps=args.steps, grid=grids[0])
        ests = {}
        for name, device in (("cpu", None), ("torch", args.device)):
            t0 = time.perf_counter()
            ests[name] = estimate(st.net, "majand", n=n, generator=G, pairs=args.pairs,
                                  device=device)
            ests[name]["wall_s"] = time.perf_counter() - t0
    diff = max(abs(ests["cpu"][k]["mean"] - ests["torch"][k]["mean"])
               for k in ("rho", "rho_h", "mse"))
    est_line = (f"estimator, n = {n}, w = {w}, {args.pairs} pairs: cpu {ests['cpu']['wall_s']:.3g} s, "
                f"torch {ests['torch']['wall_s']:.3g} s (ratio "
                f"{ests['cpu']['wall_s'] / ests['torch']['wall_s']:.2f}); largest difference of "
                f"the estimated means {diff:.2e}")
    info["load_average_at_end"] = os.getloadavg()
    text = ("\n".join(lines) + "\n\n" + est_line + "\n\n"
            f"Machine: {info.get('cpu_model')} ({info.get('cpus')} CPUs), torch {info['torch']} "
            f"on {info.get('gpu', info['device'])}; load start {info['load_average_at_start']}, "
            f"end {info['load_average_at_end']}; {args.repeats} repeats of {args.steps} steps; "
            f"BLAS 1 thread.\n")
    print(text)
    write_results(args.out, {"settings": vars(args), "machine": info, "rows": rows,
                             "estimator": {"n": n, "w": w, "pairs": args.pairs,
                                           "cpu_s": ests["cpu"]["wall_s"],
                                           "torch_s": ests["torch"]["wall_s"],
                                           "max_mean_difference": diff}}, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
