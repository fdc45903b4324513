"""Empirical depth separation on the hard instance (THEORY.md §5, experiment E20).

For each n (bits per party) the support of the hard distribution mu_0 (4^n points x_{a,b} in
the unit ball of R^d, d = 8n, label IP(a, b) = f_d on the support) is fitted by

* depth-2 ReLU networks (one hidden layer of width w) trained with full-batch Adam,
* depth-3 ReLU networks (two hidden layers, both of width w) trained the same way,
* the exact depth-3 construction of THEORY §3.2 (widths n, n + 1; its MSE is recorded as a check),
* the random-feature baseline of E20: ReLU(Xw + b), w ~ N(0, m I), b ~ N(0, 1), output weights
  and bias by least squares, best of 3 draws,

for widths growing geometrically.  Reported: the smallest width whose MSE on the support is
<= the target (default 0.05; the best constant predictor has MSE ~ 1/4), and the MSE at fixed
widths (sweep runs stop once they reach the target; runs at the fixed widths train until
``--epochs`` or ``--patience`` stops them, so their MSE shows how far each depth gets).  Each
trained width is run ``--repeats`` times with independent seeds (derived from
``--seed``); a width "reaches" the target when the best repeat does, and the median is recorded
too.  Expected shape: the depth-2 widths grow exponentially in n (a straight line on the log
axis), the depth-3 widths roughly linearly (an exact depth-3 net of widths n, n + 1 exists,
THEORY §3.2).  Whether Adam actually finds such structured depth-3 solutions, rather than
memorising the 4^n points, is what the trained curves measure.

Outputs in ``--out`` (default results/separation): ``separation.json`` (settings, seeds,
versions, timings, every MSE; written atomically) and ``separation.png`` (width vs n, log axis).

Examples
--------
    python experiments/separation.py                      # n = 2..6, ~1.5 minutes on 2 cores
    python experiments/separation.py --n-max 7 --repeats 5 --out /tmp/sep
    python experiments/separation.py --n-min 2 --n-max 3 --no-progress     # seconds
"""

from __future__ import annotations

import argparse
import math
import platform
import sys
import time
from pathlib import Path

import numpy as np

FORMAT = "depthsep.experiments.separation"
VERSION = 1


def _parse(argv):
    p = argparse.ArgumentParser(prog="separation.py", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n-min", type=int, default=2, help="smallest n (bits per party); default 2")
    p.add_argument("--n-max", type=int, default=6,
                   help="largest n; default 6 (measured: 85 s on 2 idle cores, n = 6 takes 60 s; "
                        "each n costs roughly 4x the previous); the full E20 range is 8")
    p.add_argument("--target", type=float, default=0.05,
                   help="target MSE on the support; default 0.05 (best constant: ~0.25)")
    p.add_argument("--repeats", type=int, default=3,
                   help="independent training runs per (n, depth, width); default 3")
    p.add_argument("--seed", type=int, default=0, help="base seed of every run; default 0")
    p.add_argument("--epochs", type=int, default=2000,
                   help="max full-batch Adam epochs per run; default 2000")
    p.add_argument("--lr", type=float, default=0.01, help="Adam step size; default 0.01")
    p.add_argument("--patience", type=int, default=300,
                   help="stop a run after this many epochs without improvement; default 300")
    p.add_argument("--width-factor", type=float, default=2.0,
                   help="ratio between consecutive widths of the sweep; default 2")
    p.add_argument("--max-width-depth2", type=int, default=2048,
                   help="largest trained depth-2 width; default 2048")
    p.add_argument("--max-width-depth3", type=int, default=256,
                   help="largest trained depth-3 width; default 256")
    p.add_argument("--max-width-rf", type=int, default=4096,
                   help="largest random-feature width (least squares is O(4^n w^2)); default 4096")
    p.add_argument("--rf-draws", type=int, default=3,
                   help="random-feature draws per width (best is kept); default 3")
    p.add_argument("--fixed-widths", type=str, default="8,32",
                   help="comma-separated widths at which the MSE is always reported; default 8,32")
    p.add_argument("--float64", action="store_true",
                   help="train in float64 (default float32; final MSEs are always float64)")
    p.add_argument("--no-baseline", action="store_true", help="skip the random-feature baseline")
    p.add_argument("--out", type=Path, default=Path("results/separation"),
                   help="output directory; default results/separation")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.add_argument("--no-plot", action="store_true", help="skip the PNG")
    args = p.parse_args(argv)
    if not 1 <= args.n_min <= args.n_max:
        p.error(f"need 1 <= --n-min <= --n-max, got {args.n_min}, {args.n_max}")
    if args.n_max > 10:
        p.error(f"--n-max {args.n_max} is too large: 4^n support points times the width must fit in "
                f"memory; use --n-max <= 10")
    if args.repeats < 1 or args.rf_draws < 1 or args.epochs < 1:
        p.error("--repeats, --rf-draws and --epochs must be >= 1")
    if not args.width_factor > 1:
        p.error(f"--width-factor must be > 1, got {args.width_factor}")
    if not 0 < args.target < 1:
        p.error(f"--target must lie in (0, 1), got {args.target}")
    try:
        args.fixed_widths = sorted({int(v) for v in args.fixed_widths.split(",") if v.strip()})
    except ValueError:
        p.error(f"--fixed-widths must be comma-separated ints, got {args.fixed_widths!r}")
    if any(w < 1 for w in args.fixed_widths):
        p.error("--fixed-widths must be positive")
    return args


def width_sweep(factor: float, max_width: int, start: int = 2) -> list:
    """Geometric widths start, start·factor, ... (rounded, distinct) up to max_width.

    >>> width_sweep(2.0, 40)
    [2, 4, 8, 16, 32]
    >>> width_sweep(1.5, 10)
    [2, 3, 4, 7, 10]
    """
    out, w = [], float(start)
    while round(w) <= max_width:
        if not out or round(w) > out[-1]:
            out.append(int(round(w)))
        w *= factor
    return out


def run_seed(base: int, *key) -> int:
    """A 32-bit seed derived from the base seed and a key (n, depth, width, repeat).

    >>> run_seed(0, 3, 2, 8, 0) == run_seed(0, 3, 2, 8, 0) != run_seed(0, 3, 2, 8, 1)
    True
    """
    return int(np.random.SeedSequence([int(base), *map(int, key)]).generate_state(1)[0])


def random_feature_mse(X, y, width: int, *, m: int, seed) -> float:
    """MSE on (X, y) of least squares over ReLU(X w + b) features plus a bias (E20 baseline).

    w ~ N(0, m I) (std sqrt(m) per coordinate), b ~ N(0, 1).

    >>> X = np.eye(4) / 2; y = np.array([0.0, 1.0, 1.0, 0.0])
    >>> random_feature_mse(X, y, 16, m=2, seed=0) < 1e-20     # interpolates 4 points
    True
    """
    from scipy.linalg import lstsq

    rng = np.random.default_rng(seed)
    W = rng.normal(0.0, math.sqrt(m), size=(X.shape[1], width))
    b = rng.normal(0.0, 1.0, size=width)
    F = np.empty((X.shape[0], width + 1))
    np.maximum(X @ W + b, 0.0, out=F[:, :width])
    F[:, width] = 1.0
    coef = lstsq(F, y, lapack_driver="gelsy", check_finite=False)[0]
    r = F @ coef - y
    return float(r @ r) / X.shape[0]


def _smallest(widths, values, target):
    for w, v in zip(widths, values):
        if v is not None and v <= target:
            return w
    return None


def random_feature_curve(X, y, *, m, target, max_width, draws, seed, n, bar) -> dict:
    """Widths 2^j (j >= 1) until the best of ``draws`` draws reaches ``target`` or max_width."""
    widths, best, all_mse, seeds = [], [], [], []
    for width in width_sweep(2.0, max_width):
        s = [run_seed(seed, n, 0, width, r) for r in range(draws)]
        vals = [random_feature_mse(X, y, width, m=m, seed=v) for v in s]
        widths.append(width)
        all_mse.append(vals)
        best.append(min(vals))
        seeds.append(s)
        bar.update(1)
        if best[-1] <= target:
            break
    return {"widths": widths, "best_mse": best, "mse": all_mse, "seeds": seeds,
            "smallest_width": _smallest(widths, best, target), "max_width": max_width}


def train_curve(X, y, *, depth, widths, fixed, target, args, n, bar) -> dict:
    """Train depth-``depth`` ReLU nets over the width sweep (stop at the first success)."""
    from networks import SigmaNetwork, train

    d = X.shape[1]
    todo = list(widths)
    rec = {"widths": [], "best_mse": [], "median_mse": [], "mse": [], "epochs": [], "seeds": [],
           "seconds": []}
    reached = False
    for width in todo + [w for w in fixed if w not in todo]:
        if reached and width not in fixed:
            continue
        vals, epochs, seeds = [], [], []
        t0 = time.perf_counter()
        for r in range(args.repeats):
            s = run_seed(args.seed, n, depth, width, r)
            net = SigmaNetwork.random([d] + [width] * (depth - 1) + [1], "relu", seed=s)
            # sweep runs stop at the target; fixed-width runs train to convergence
            res = train(net, X, y, epochs=args.epochs, lr=args.lr, patience=args.patience,
                        tol=1e-6, target_loss=None if width in fixed else target, dtype="float64" if args.float64 else "float32",
                        progress=False)
            vals.append(res.history["final_loss"])
            epochs.append(res.history["epochs"])
            seeds.append(s)
        rec["widths"].append(width)
        rec["mse"].append(vals)
        rec["best_mse"].append(min(vals))
        rec["median_mse"].append(float(np.median(vals)))
        rec["epochs"].append(epochs)
        rec["seeds"].append(seeds)
        rec["seconds"].append(time.perf_counter() - t0)
        bar.update(1)
        bar.set_postfix(n=n, depth=depth, width=width, mse=f"{min(vals):.3g}")
        if min(vals) <= target:
            reached = True
    order = np.argsort(rec["widths"], kind="stable")
    rec = {k: [v[i] for i in order] for k, v in rec.items()}
    rec["smallest_width"] = _smallest(rec["widths"], rec["best_mse"], target)
    rec["smallest_width_median"] = _smallest(rec["widths"], rec["median_mse"], target)
    rec["max_width"] = widths[-1] if widths else None
    rec["at_fixed_widths"] = {str(w): rec["best_mse"][rec["widths"].index(w)] for w in fixed
                              if w in rec["widths"]}
    return rec


def exact_depth3(inst, X, y) -> dict:
    """The exact depth-3 ReLU net of THEORY §3.2 (widths n, n + 1) and its MSE on the support."""
    from networks.constructions import ip_depth3_relu
    from networks.train import mse

    net = ip_depth3_relu(inst).network
    return {"widths": list(net.widths), "max_width": max(net.widths), "mse": mse(net, X, y),
            "weight_bound": net.weight_bound}


def run(args) -> dict:
    """Run the whole experiment and return the JSON record."""
    from circuits.utils.progress import progress_bar
    from embeddings import HardInstance

    t_start = time.perf_counter()
    w2 = width_sweep(args.width_factor, args.max_width_depth2)
    w3 = width_sweep(args.width_factor, args.max_width_depth3)
    wrf = width_sweep(2.0, args.max_width_rf)
    ns = list(range(args.n_min, args.n_max + 1))
    total = len(ns) * (len(w2) + len(w3) + len(args.fixed_widths) * 2
                       + (0 if args.no_baseline else len(wrf)))
    results = []
    with progress_bar(total, enabled=not args.no_progress, desc="separation", unit="width") as bar:
        for n in ns:
            t0 = time.perf_counter()
            inst = HardInstance(n, seed=args.seed)
            X, _, labels = inst.support()
            y = labels.astype(np.float64)
            entry = {"n": n, "m": inst.m, "d": inst.dim, "n_points": int(X.shape[0]),
                     "min_distance": int(inst.embedding.min_distance),
                     "lipschitz_constant": float(inst.lipschitz_constant),
                     "best_constant_mse": float(np.var(y))}
            entry["depth2"] = train_curve(X, y, depth=2, widths=w2, fixed=args.fixed_widths,
                                          target=args.target, args=args, n=n, bar=bar)
            entry["depth3"] = train_curve(X, y, depth=3, widths=w3, fixed=args.fixed_widths,
                                          target=args.target, args=args, n=n, bar=bar)
            entry["exact_depth3"] = exact_depth3(inst, X, y)
            if not args.no_baseline:
                entry["random_features"] = random_feature_curve(
                    X, y, m=inst.m, target=args.target, max_width=args.max_width_rf,
                    draws=args.rf_draws, seed=args.seed, n=n, bar=bar)
            entry["seconds"] = time.perf_counter() - t0
            results.append(entry)
    import scipy

    settings = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()}
    return {
        "format": FORMAT, "version": VERSION, "experiment": "E20 empirical depth separation",
        "settings": settings,
        "environment": {"python": sys.version.split()[0], "numpy": np.__version__,
                        "scipy": scipy.__version__, "platform": platform.platform()},
        "widths": {"depth2": w2, "depth3": w3, "random_features": wrf},
        "results": results, "seconds": time.perf_counter() - t_start,
    }


def _fmt_width(rec):
    if rec is None:
        return "-"
    w = rec["smallest_width"]
    return str(w) if w is not None else f">{rec['max_width']}"


def table(record) -> str:
    """The printed summary table."""
    fixed = record["settings"]["fixed_widths"]
    head = (f"{'n':>2} {'d':>4} {'4^n':>6} {'const':>6} | {'w2*':>6} {'w3*':>6} {'rf*':>6} {'exact3':>6} | "
            + " ".join(f"{'d2@' + str(w):>8} {'d3@' + str(w):>8}" for w in fixed) + f" | {'sec':>6}")
    lines = [f"smallest width with support MSE <= {record['settings']['target']} "
             f"(best of {record['settings']['repeats']} runs; rf = random features, best of "
             f"{record['settings']['rf_draws']} draws; exact3 = width of the exact depth-3 net)",
             head, "-" * len(head)]
    for e in record["results"]:
        cells = []
        for w in fixed:
            for key in ("depth2", "depth3"):
                v = e[key]["at_fixed_widths"].get(str(w))
                cells.append(f"{v:>8.4f}" if v is not None else f"{'-':>8}")
        lines.append(f"{e['n']:>2} {e['d']:>4} {e['n_points']:>6} {e['best_constant_mse']:>6.3f} | "
                     f"{_fmt_width(e['depth2']):>6} {_fmt_width(e['depth3']):>6} "
                     f"{_fmt_width(e.get('random_features')):>6} "
                     f"{e['exact_depth3']['max_width'] if 'exact_depth3' in e else '-':>6} | "
                     + " ".join(cells)
                     + f" | {e['seconds']:>6.1f}")
    return "\n".join(lines)


def plot(record, path) -> Path:
    """Width vs n on a log axis; open markers at the cap mean 'not reached up to the cap'."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from circuits.utils.files import savefig_atomic

    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    series = [("depth2", "depth 2 (trained, Adam)", "C0", "o"),
              ("depth3", "depth 3 (trained, Adam)", "C1", "s"),
              ("random_features", "depth 2 random features + LSQ", "C2", "^")]
    for key, label, color, marker in series:
        pts = [(e["n"], e[key]) for e in record["results"] if key in e]
        if not pts:
            continue
        ok = [(n, r["smallest_width"]) for n, r in pts if r["smallest_width"] is not None]
        capped = [(n, r["max_width"]) for n, r in pts if r["smallest_width"] is None]
        if ok:
            ax.plot(*zip(*ok), marker=marker, color=color, label=label)
        if capped:
            ax.plot(*zip(*capped), marker=marker, color=color, linestyle="none",
                    markerfacecolor="none", label=f"{label}: not reached (cap)")
    ns = [e["n"] for e in record["results"]]
    exact = [(e["n"], e["exact_depth3"]["max_width"]) for e in record["results"]
             if "exact_depth3" in e]
    if exact:
        ax.plot(*zip(*exact), marker="x", color="C3", linestyle="--",
                label="exact depth-3 construction (width n + 1)")
    ax.plot(ns, [4.0 ** n for n in ns], color="gray", linestyle=":", label="4^n (support size)")
    ax.set_yscale("log", base=2)
    ax.set_xlabel("n (bits per party; d = 8n)")
    ax.set_ylabel(f"smallest width with MSE <= {record['settings']['target']}")
    ax.set_xticks(ns)
    ax.set_title("Depth separation on the hard instance (E20)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    try:
        return savefig_atomic(fig, path, dpi=120)
    finally:
        plt.close(fig)


def main(argv=None) -> int:
    args = _parse(argv)
    from circuits.utils.files import write_json_atomic

    record = run(args)
    print(table(record))
    out = Path(args.out)
    json_path = write_json_atomic(out / "separation.json", record)
    print(f"wrote {json_path}")
    if not args.no_plot:
        print(f"wrote {plot(record, out / 'separation.png')}")
    print(f"total {record['seconds']:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
