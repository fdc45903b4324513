"""E21: the correlation ceiling of depth-2 networks on the hard instance (THEORY §4.7, §5 row E21).

For each n (bits per party; d = 8n) and width w, depth-2 networks are trained by full-batch Adam
on all 4^n support points of μ₀ (product form, THEORY §4.8), once against the IP labels and once,
as a control, against a fixed random permutation of the same labels (same counts).  The best
ρ = E_μ₀[(1 - 2y)(1 - 2N)] over ``--seeds`` runs is kept; ρ is exact (the product-form value table
on all 4^n points).  Next to every IP row: the §4.7 ceiling
|ρ| ≤ 2^{-n} + 2(B2^{-n} + wB(S_σ2^{-n} + TV_R(σ)(n+1)2^{-n/2})) with the network's own B, S_σ, TV_R
(R = max_i |b_i| + ‖w_i‖), its neuron-wise form, and whether either is below the trivial
Cauchy–Schwarz bound √E[Ñ²] (null for the random labels: the bound is proven for IP only).  Every
row also has the error on fresh points of μ_τ (boxes around the support, ``--tau``), so
memorisation and generalisation are told apart.  Depth 3: the exact construction of THEORY §3.2
(widths n, n + 1), ρ = 1.

What this experiment cannot show (read before the numbers): the §4.7 ceiling is **vacuous at
every size run** (above 1 for n <= 12, so above every measured ρ), and the random-label control
**cannot separate**: random labels are at least as hard as IP for every depth, so "IP = random
for depth 2" is the expected outcome and says nothing about depth.  The experiment that can
separate depth 2 from depth 3 is E23, ``depthsep separate`` (IP against MAJ∘AND, a target with
the same AND layer, plus the exact depth-3 net and an explicit depth-2 floor).  Widths are the
polynomial rules n, n², n³ (n³ for n <= 8): the old n·4^k rule reached 64n and memorised the
4^n support points at n <= 5.

Outputs in ``--out`` (default results/ceiling): ``ceiling.json`` (rows, settings, seeds, versions;
written atomically) and ``ceiling.png`` (ρ against n).

Examples
--------
    python experiments/ceiling.py                          # n = 4,5,6: 10 s (warm cache, 2 cores)
    python experiments/ceiling.py --n 4,6,8 --seeds 2 --out /tmp/ceil
    python experiments/ceiling.py --n 10,12 --allow-large --widths 16,64
    python experiments/ceiling.py --activation sigmoid --weight-bound 0.5
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

if __package__ in (None, ""):                      # `python experiments/ceiling.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from circuits.utils.cli import int_in_range, int_list

FORMAT = "depthsep.experiments.ceiling"
VERSION = 1
DEFAULT_N = (4, 5, 6)
MAX_N = 12
LARGE_N = 8           # n above this needs --allow-large (4^n·w work per epoch)


def build_parser() -> argparse.ArgumentParser:
    from networks.activations import activation_names

    p = argparse.ArgumentParser(allow_abbrev=False, prog="depthsep ceiling", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=str, default=",".join(map(str, DEFAULT_N)),
                   help=f"comma-separated n (bits per party), default {','.join(map(str, DEFAULT_N))} "
                        f"(10 s on 2 cores, warm cache); n > {LARGE_N} needs --allow-large, max {MAX_N}")
    p.add_argument("--allow-large", action="store_true",
                   help=f"allow n up to {MAX_N} (each epoch costs about 4^n·w operations)")
    p.add_argument("--widths", type=str, default=None,
                   help="comma-separated widths for every n; default n, n^2, n^3 (n^3 for n <= 8)")
    p.add_argument("--activation", type=str, default="relu",
                   help=f"σ of the depth-2 nets: {', '.join(activation_names(aliases=True))}; "
                        f"default relu (heaviside/threshold: only the output layer learns)")
    p.add_argument("--seeds", type=int, default=1,
                   help="training runs per (n, width, labels); the best ρ is kept; default 1")
    p.add_argument("--seed", type=int_in_range(0, 2**32 - 1, what="a numpy seed"), default=0,
                   help="base seed (code, labels, inits), 0..2^32-1; default 0")
    p.add_argument("--labels", type=str, default="ip,random",
                   help="label sets: ip, random or both (default ip,random)")
    p.add_argument("--epochs", type=int, default=300, help="max full-batch Adam epochs; default 300")
    p.add_argument("--lr", type=float, default=0.02, help="Adam step size; default 0.02")
    p.add_argument("--weight-bound", type=float, default=None,
                   help="clip every weight and bias to [-B, B] during training (the ceiling "
                        "shrinks with B); default none")
    p.add_argument("--tau", type=float, default=0.1,
                   help="box radius of the held-out distribution μ_τ, in (0, 0.15]; default 0.1")
    p.add_argument("--heldout-points", type=int, default=4096,
                   help="fresh μ_τ points per network; default 4096")
    p.add_argument("--out", default="results/ceiling",
                   help="output directory; default results/ceiling")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--no-plot", action="store_true", help="skip the PNG")
    return p


def parse_args(argv=None):
    from networks.activations import get_activation

    p = build_parser()
    args = p.parse_args(argv)
    args.n = int_list(args.n, "--n", p)
    if min(args.n) < 1 or max(args.n) > MAX_N:
        p.error(f"--n values must lie in 1..{MAX_N}, got {args.n}")
    if max(args.n) > LARGE_N and not args.allow_large:
        p.error(f"--n {max(args.n)} > {LARGE_N} costs about 4^n·w per epoch (n = 12: 1.7e7·w); "
                f"pass --allow-large to run it, or use --n <= {LARGE_N}")
    if args.widths is not None:
        args.widths = int_list(args.widths, "--widths", p)
        if min(args.widths) < 1:
            p.error(f"--widths must be positive, got {args.widths}")
    try:
        args.activation = get_activation(args.activation).name
    except Exception as exc:  # noqa: BLE001 -- registry error names the choices
        p.error(f"--activation: {exc}")
    labels = [s.strip() for s in args.labels.split(",") if s.strip()]
    if not labels or any(s not in ("ip", "random") for s in labels):
        p.error(f"--labels must be ip, random or ip,random, got {args.labels!r}")
    args.labels = list(dict.fromkeys(labels))
    if args.seeds < 1:
        p.error(f"--seeds must be >= 1, got {args.seeds}")
    if args.epochs < 1:
        p.error(f"--epochs must be >= 1, got {args.epochs}")
    if not args.lr > 0:
        p.error(f"--lr must be > 0, got {args.lr}")
    if args.weight_bound is not None and not args.weight_bound > 0:
        p.error(f"--weight-bound must be > 0, got {args.weight_bound}")
    if not 0 < args.tau <= 0.15:
        p.error(f"--tau must lie in (0, 0.15] (THEORY §2.2), got {args.tau}")
    if args.heldout_points < 1:
        p.error(f"--heldout-points must be >= 1, got {args.heldout_points}")
    from circuits.utils.cli import check_output_dir

    args.out = str(check_output_dir(p, args.out))
    return args


def run(args) -> dict:
    import numba
    import scipy

    from networks.separation import ceiling_sweep

    t0 = time.perf_counter()
    rows = ceiling_sweep(args.n, widths=args.widths, activation=args.activation,
                         seeds=args.seeds, base_seed=args.seed, labels=args.labels,
                         epochs=args.epochs, lr=args.lr, weight_bound=args.weight_bound,
                         tau=args.tau, heldout_points=args.heldout_points,
                         progress=not args.no_progress)
    settings = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()}
    return {"format": FORMAT, "version": VERSION, "experiment": "E21 correlation ceiling",
            "settings": settings, "seeds": {"base": args.seed, "per_row": "row['seed']",
                                            "runs_per_row": args.seeds},
            "versions": {"python": sys.version.split()[0], "numpy": np.__version__,
                         "scipy": scipy.__version__, "numba": numba.__version__,
                         "platform": platform.platform()},
            "rows": rows, "comparison": compare(rows), "seconds": time.perf_counter() - t0}


def compare(rows) -> list:
    """Per (n, width): ρ with IP labels minus ρ with the permuted labels."""
    d2 = {(r["n"], r["width"], r["labels"]): r for r in rows if r["depth"] == 2}
    out = []
    for (n, w, lab), r in sorted(d2.items()):
        if lab == "ip" and (n, w, "random") in d2:
            q = d2[(n, w, "random")]
            out.append({"n": n, "width": w, "rho_ip": r["rho"], "rho_random": q["rho"],
                        "difference": r["rho"] - q["rho"], "heldout_mse_ip": r["heldout_mse"],
                        "heldout_mse_random": q["heldout_mse"]})
    return out


def _f(v, spec):
    return "-" if v is None else format(v, spec)


def table(record) -> str:
    head = (f"{'n':>2} {'depth':>5} {'width':>5} {'labels':>6} {'rho':>8} {'ceiling':>9} "
            f"{'neuronw':>9} {'CS':>6} {'mse':>7} {'heldout':>7} {'B':>7} {'sec':>6}")
    lines = ["rho = E[(1-2y)(1-2N)] exact on all 4^n points (best of seeds); ceiling = §4.7 bound "
             "on |rho| (IP only); CS = sqrt(E[N~^2]) (trivial bound); heldout = MSE on fresh μ_τ "
             "points", head, "-" * len(head)]
    for r in record["rows"]:
        lines.append(f"{r['n']:>2} {r['depth']:>5} {r['width']:>5} {r['labels']:>6} "
                     f"{r['rho']:>8.4f} {_f(r['bound'], '9.3g'):>9} "
                     f"{_f(r.get('bound_neuronwise'), '9.3g'):>9} "
                     f"{_f(r.get('cauchy_schwarz'), '6.3f'):>6} {r['mse']:>7.4f} "
                     f"{r['heldout_mse']:>7.4f} {_f(r.get('B'), '7.3g'):>7} {r['seconds']:>6.1f}")
    cmp_ = record["comparison"]
    if cmp_:
        diffs = [c["difference"] for c in cmp_]
        lines.append("")
        lines.append(f"rho(IP) - rho(random labels) over {len(diffs)} (n, width) pairs: "
                     f"min {min(diffs):+.4f}, median {float(np.median(diffs)):+.4f}, "
                     f"max {max(diffs):+.4f}")
    return "\n".join(lines)


def plot(record, path) -> Path:
    """ρ against n on a linear axis (ρ <= 1) in the house style (:mod:`experiments._style`):
    one colour per target (IP, random labels), one line style per depth (depth 2 solid, the exact
    depth-3 net dashed), the width rule by line width; the §4.7 ceilings (vacuous: far above 1)
    in a table below, so they do not squash the measured ρ."""
    from circuits.utils.files import savefig_atomic
    from experiments._style import (SOURCE_MARKERS, TARGET_NAMES, depth_linestyle, legend_below,
                                    pyplot, target_colour)

    rows = record["rows"]
    d2 = [r for r in rows if r["depth"] == 2]
    ns = sorted({r["n"] for r in rows})
    slots = sorted({_slot(r) for r in d2}, key=_slot_order)
    with pyplot() as plt:
        fig, (ax, tab) = plt.subplots(2, 1, figsize=(9.6, 7.4),
                                      gridspec_kw={"height_ratios": [3.2, 1.3]})
        for j, k in enumerate(slots):
            lw = 0.8 + 1.0 * j
            for lab in ("ip", "random"):
                pts = sorted((r["n"], r["rho"]) for r in d2 if r["labels"] == lab and _slot(r) == k)
                if pts:
                    ax.plot(*zip(*pts), depth_linestyle(2), marker=SOURCE_MARKERS["trained"],
                            color=target_colour(lab), lw=lw, ms=3 + j,
                            label=f"depth 2 trained, width {k}, "
                                  f"{'IP' if lab == 'ip' else TARGET_NAMES['random']}")
        d3 = sorted((r["n"], r["rho"]) for r in rows if r["depth"] == 3)
        if d3:
            ax.plot(*zip(*d3), depth_linestyle(3), marker=SOURCE_MARKERS["exact"],
                    color=target_colour("ip"), label="depth 3, exact construction (width n + 1), IP")
        ax.axhline(0, color="gray", lw=0.6)
        ax.set_ylim(-0.05, 1.05)
        ax.set_xticks(ns)
        ax.set_xlabel("n (bits per party; d = 8n, 4^n support points)")
        ax.set_ylabel("ρ on μ₀ (exact, all 4^n points), best of seeds")
        ax.set_title(f"E21: correlation of trained depth-2 nets ({record['settings']['activation']}) "
                     f"with IP and with randomly permuted labels")
        rows_legend = legend_below(fig, [ax], ncol=2)
        tab.axis("off")
        cells = []
        for k in slots:
            row = []
            for n in ns:
                vals = [r["bound"] for r in d2 if r["labels"] == "ip" and _slot(r) == k
                        and r["n"] == n and r["bound"] is not None]
                row.append(f"{min(vals):.3g}" if vals else "-")
            cells.append(row)
        if cells:
            t = tab.table(cellText=cells, rowLabels=[f"width {k}" for k in slots],
                          colLabels=[f"n = {n}" for n in ns], loc="center", cellLoc="center")
            t.auto_set_font_size(False)
            t.set_fontsize(7.5)
        bounds = [r["bound"] for r in d2 if r["labels"] == "ip" and r["bound"] is not None]
        vacuous = ("every entry is above 1, i.e. vacuous" if bounds and min(bounds) > 1 else
                   "entries above 1 are vacuous")
        tab.set_title(f"§4.7 ceiling on |ρ| of each IP net (its own B, S, TV): {vacuous}."
                      "\nNeither the ceiling nor the random-label control can separate "
                      "depths (random labels are hard for every depth); E23 (depthsep separate) can.",
                      fontsize=7.5)
        fig.tight_layout(rect=(0, 0.03 * rows_legend + 0.02, 1, 1))
        try:
            return savefig_atomic(fig, path, dpi=110)
        finally:
            plt.close(fig)


def _slot(r) -> str:
    """The width rule of a row: "n", "n²", "n³", else the width itself."""
    n, w = r["n"], r["width"]
    return {n: "n", n * n: "n²", n ** 3: "n³"}.get(w, str(w))


def _slot_order(k: str):
    return {"n": (0, 0), "n²": (1, 0), "n³": (2, 0)}.get(k, (3, int(k) if k.isdigit() else 0))


def main(argv=None) -> int:
    from experiments._outputs import run_table

    return run_table(parse_args(argv), run, table, name="ceiling",
                     figures=lambda record, out: plot(record, out / "ceiling.png"))


if __name__ == "__main__":
    raise SystemExit(main())
