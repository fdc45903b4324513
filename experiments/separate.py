"""E23: depth 2 vs depth 3 at polynomial width, with an easy control of the same shape.

Trains depth-2 ReLU nets (widths polynomial in n) and depth-3 ReLU nets by full-batch Adam on all
4^n pairs of μ₀ (product form, THEORY §4.8) against IP, against MAJ∘AND (the same AND layer with a
threshold on top: the control that *can* separate) and against random labels (hard for every
depth: a control that cannot separate), and puts two training-free references next to them: the
exact depth-3 construction (ρ = 1) and the explicit depth-2 IP_j net of width j·2^{j−1} (ρ = 2^{j−n}
exactly, the floor a trained depth-2 net of that width should reach on IP).  All metrics are exact
averages over the 4^n pairs.  The prediction is stated before the run and checked after it
(networks.separation.separate.PREDICTION); a failed clause is reported, not tuned away.

Every cell (target × depth × width × seed × n) is independent and is appended to
``<out>/cells.jsonl`` as it finishes: run the same command again to continue after Ctrl-C or a
kill (``--fresh`` starts over).  ``--executor threads|processes`` or ``--scheduler ADDRESS``
(Dask) run cells in parallel, one cell per task.

Outputs in ``--out`` (default results/separate): ``separate.json`` (rows, summary, verdict,
settings, versions; atomic), ``separate.png`` (R² against n, one panel per width rule),
``cells.jsonl`` (the resume file).

Examples
--------
    depthsep separate                                  # n = 4..8, 2 seeds: the default run
    depthsep separate --n 8,9,10 --seeds 3 --out results/sep-large
    depthsep separate --full --out results/separate-full   # n = 4..12, 3 seeds, n, n^2, n^3
    depthsep separate --targets ip,majand,ip_3,thr --widths n,2n
    depthsep separate --sampled --n 14..24                 # past exhaustive sizes (E24)
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

if __package__ in (None, ""):                      # `python experiments/separate.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from circuits.utils.cli import int_list  # noqa: E402

FORMAT = "depthsep.experiments.separate"
VERSION = 1
DEFAULT_N = (4, 5, 6, 7, 8)
FULL_N = tuple(range(4, 13))
MAX_N = 12


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="depthsep separate", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=str, default=None,
                   help=f"n (bits per party): a list 4,6,8 or a range 4..9, 1..{MAX_N}; default "
                        f"{','.join(map(str, DEFAULT_N))} (4..12 with --full)")
    p.add_argument("--full", action="store_true",
                   help="the full table: n = 4..12, 3 seeds, widths n,n^2,n^3, depth 3 to n = 10, "
                        "5000 epochs (hours on 2 cores; resumable)")
    p.add_argument("--targets", type=str, default="ip,majand,random",
                   help="targets (networks.separation.targets): ip, majand, maj, thr, random, "
                        "ip_j; default ip,majand,random")
    p.add_argument("--widths", type=str, default=None,
                   help="depth-2 width rules, polynomials of n: default n,n^2 (n,n^2,n^3 with "
                        "--full)")
    p.add_argument("--depth3", type=str, default="n:n+1,n^2:n",
                   help="trained depth-3 width pairs w1:w2; default n:n+1,n^2:n; 'none' for none")
    p.add_argument("--depth3-max-n", type=int, default=None,
                   help="train depth 3 only for n up to this; default 6 (10 with --full)")
    p.add_argument("--seeds", type=int, default=None,
                   help="training seeds per cell; default 2 (3 with --full)")
    p.add_argument("--epochs", type=int, default=None,
                   help="full-batch Adam epoch budget (stops early when the loss stalls); "
                        "default 1000 (5000 with --full)")
    p.add_argument("--lr", type=float, default=0.02, help="Adam step size; default 0.02")
    p.add_argument("--seed", type=int, default=0, help="base seed (code, labels, inits); >= 0")
    p.add_argument("--heldout-n", type=str, default="4,5,6",
                   help="n for the held-out figure (train on half the pairs, test on the other "
                        "half; width n^2; n <= 8); 'none' to skip; default 4,5,6")
    p.add_argument("--executor", choices=("none", "threads", "processes"), default="none",
                   help="where cells run: this thread (default), a thread pool or a process pool")
    p.add_argument("--scheduler", type=str, default=None,
                   help="a Dask scheduler address (tcp://host:8786): one cell per Dask task")
    p.add_argument("--fresh", action="store_true",
                   help="ignore <out>/cells.jsonl and recompute every cell")
    p.add_argument("--out", type=Path, default=Path("results/separate"),
                   help="output directory; default results/separate")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--no-plot", action="store_true", help="skip the PNG")
    return p


def parse_args(argv=None):
    from networks.separation.separate import width_of
    from networks.separation.targets import get_target

    p = build_parser()
    args = p.parse_args(argv)
    args.n = (int_list(args.n, "--n", p, ranges=True) if args.n
              else list(FULL_N if args.full else DEFAULT_N))
    if min(args.n) < 1 or max(args.n) > MAX_N:
        p.error(f"--n values must lie in 1..{MAX_N} (the exhaustive table has 4^n pairs; the "
                f"sampled mode goes further), got {args.n}")
    args.targets = list(dict.fromkeys(t.strip() for t in args.targets.split(",") if t.strip()))
    for t in args.targets:
        try:
            get_target(t)
            if t.startswith("ip_") and int(t[3:]) > min(args.n):
                p.error(f"--targets {t} needs n >= {t[3:]}, but --n includes {min(args.n)}")
        except Exception as exc:  # noqa: BLE001 -- the registry's message names the choices
            if isinstance(exc, SystemExit):
                raise
            p.error(f"--targets: {exc}")
    if not args.targets:
        p.error("--targets must name at least one target")
    widths = args.widths or ("n,n^2,n^3" if args.full else "n,n^2")
    args.widths = [w.strip() for w in widths.split(",") if w.strip()]
    d3 = [] if args.depth3.strip().lower() == "none" else [
        tuple(x.strip() for x in pair.split(":")) for pair in args.depth3.split(",") if pair.strip()]
    for rule in args.widths + [r for pair in d3 for r in pair]:
        try:
            width_of(rule, 4)
        except Exception as exc:  # noqa: BLE001
            p.error(f"--widths/--depth3: {exc}")
    if any(len(pair) != 2 for pair in d3):
        p.error(f"--depth3 must be pairs w1:w2 like n:n+1,n^2:n, got {args.depth3!r}")
    args.depth3 = d3
    args.depth3_max_n = args.depth3_max_n if args.depth3_max_n is not None else (
        10 if args.full else 6)
    args.seeds = args.seeds if args.seeds is not None else (3 if args.full else 2)
    args.epochs = args.epochs if args.epochs is not None else (5000 if args.full else 1000)
    for name in ("seeds", "epochs"):
        if getattr(args, name) < 1:
            p.error(f"--{name} must be >= 1, got {getattr(args, name)}")
    if not args.lr > 0:
        p.error(f"--lr must be > 0, got {args.lr}")
    if args.seed < 0:
        p.error(f"--seed must be >= 0, got {args.seed}")
    args.heldout_n = ([] if args.heldout_n.strip().lower() == "none"
                      else int_list(args.heldout_n, "--heldout-n", p, ranges=True))
    if args.heldout_n and (min(args.heldout_n) < 1 or max(args.heldout_n) > 8):
        p.error(f"--heldout-n values must lie in 1..8 (explicit points), got {args.heldout_n}")
    from circuits.utils.cli import check_output_dir

    args.out = str(check_output_dir(p, args.out))
    return args


def _executor(args):
    if args.executor == "threads":
        return "threads"
    if args.executor == "processes":
        import concurrent.futures as cf

        from circuits.utils.parallel import usable_cpus

        import multiprocessing as mp

        # spawn, not fork: this process already runs numba's worker threads
        return cf.ProcessPoolExecutor(max_workers=usable_cpus(),
                                      mp_context=mp.get_context("spawn"))
    return None


def run(args) -> dict:
    import numba
    import numpy as np
    import scipy

    from networks.separation.separate import PREDICTION, heldout_split, separation_table

    print(f"prediction (stated before the run): {PREDICTION}", file=sys.stderr)
    t0 = time.perf_counter()
    out = Path(args.out)
    resume = out / "cells.jsonl"
    if args.fresh and resume.exists():
        resume.unlink()
    executor = _executor(args)
    try:
        table = separation_table(args.n, targets=args.targets, widths=args.widths,
                                 depth3=args.depth3, depth3_max_n=args.depth3_max_n,
                                 seeds=args.seeds, base_seed=args.seed, epochs=args.epochs,
                                 lr=args.lr, resume=resume, executor=executor,
                                 client=args.scheduler, progress=not args.no_progress)
    finally:
        if executor is not None and not isinstance(executor, str):
            executor.shutdown()
    held = [heldout_split(n, t, "n^2", seed=args.seed, epochs=args.epochs, lr=args.lr,
                          base_seed=args.seed)
            for n in args.heldout_n for t in args.targets if t in ("ip", "majand", "random")]
    settings = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()}
    return {"format": FORMAT, "version": VERSION,
            "experiment": "E23 depth 2 vs depth 3 at polynomial width",
            "settings": settings, "prediction": PREDICTION, **table, "heldout": held,
            "caption": caption(table, held),
            "versions": {"python": sys.version.split()[0], "numpy": np.__version__,
                         "scipy": scipy.__version__, "numba": numba.__version__,
                         "platform": platform.platform()},
            "seconds": time.perf_counter() - t0}


def caption(table, held) -> str:
    """What the figure shows, in words, from the numbers (including "no difference")."""
    v = table["verdict"]
    cl = v["clauses"]
    bits = ["R² = 1 − MSE/Var(y) of the best seed, exact on all 4^n pairs of μ₀; depth 2 trained "
            "at the width rule of each panel, depth 3 trained at (n, n+1) and (n², n), the exact "
            "depth-3 construction at (n, n+1), and the explicit depth-2 IP_j net (squared "
            "correlation, its best affine rescaling) as the floor."]
    for name in ("hard", "easy", "depth3", "depth3_trained", "control", "budget"):
        if name in cl:
            bits.append(f"{name}: {cl[name]['status']} — " + "; ".join(cl[name]["detail"]))
    if "control" in cl and cl["control"]["status"] == "holds":
        bits.append("random labels = IP for depth 2, as predicted: random labels cannot "
                    "separate depth 2 from depth 3.")
    if held:
        bits.append("held-out (train on half the pairs, test on the other half, width n²): " +
                    ", ".join(f"{h['target']} n={h['n']}: test R² {h['test_r2']:.3f}"
                              for h in held))
    return " ".join(bits)


def _f(v, spec):
    return "-" if v is None else format(v, spec)


def table_text(record) -> str:
    head = (f"{'n':>2} {'kind':>6} {'target':>7} {'width':>10} {'seeds':>5} {'R2 best':>8} "
            f"{'R2 med':>8} {'rho best':>8} {'gamma':>7} {'path P':>8} {'ceiling':>8} "
            f"{'floor':>7} {'improving':>9} {'sec':>6}")
    lines = ["R2 = 1 - MSE/Var(y), rho = E[(1-2y)(1-2N)], gamma = 1/4 - MSE: exact on all 4^n "
             "pairs; ceiling = neuron-wise §4.7 bound on |rho| (IP, depth 2; vacuous if >= 1); "
             "floor = rho of the explicit depth-2 IP_j net of at most this width",
             head, "-" * len(head)]
    for s in record["summary"]:
        w = "x".join(map(str, s["widths"]))
        lines.append(f"{s['n']:>2} {s['kind']:>6} {s['target']:>7} {w:>10} {s['seeds']:>5} "
                     f"{_f(s['r2_best'], '8.4f'):>8} {_f(s['r2_median'], '8.4f'):>8} "
                     f"{s['rho_best']:>8.4f} {_f(s['gamma_best'], '7.4f'):>7} "
                     f"{_f(s['path_norm'], '8.3g'):>8} {_f(s['ceiling'], '8.3g'):>8} "
                     f"{_f(s['floor'], '7.4f'):>7} {('yes' if s['still_improving'] else 'no'):>9} "
                     f"{s['seconds']:>6.1f}")
    below = [s for s in record["summary"] if s.get("below_floor") and s["kind"] == "depth2"]
    if below:
        lines.append("")
        lines.append("trained depth-2 IP rows below the explicit floor (optimisation, not "
                     "expressivity): " + ", ".join(f"n={s['n']} width {s['widths'][0]}: rho "
                                                   f"{s['rho_best']:.4f} < {s['floor']:.4f}"
                                                   for s in below))
    if record.get("heldout"):
        lines.append("")
        lines.append("held-out (train on a random half of the pairs, test on the other half):")
        for h in record["heldout"]:
            lines.append(f"  n={h['n']} {h['target']:>7} width {h['width']}: train R2 "
                         f"{_f(h['train_r2'], '.3f')}, test R2 {_f(h['test_r2'], '.3f')}")
    v = record["verdict"]
    lines.append("")
    lines.append(f"prediction: {record['prediction']}")
    for name, c in v["clauses"].items():
        lines.append(f"  {name}: {c['status'].upper()}")
        for d in c["detail"]:
            lines.append(f"      {d}")
    head_line = ("SEPARATION SHOWN: depth 2 loses IP at polynomial width while it keeps MAJ∘AND "
                 "and depth 3 computes IP" if v["separation_shown"] else
                 "separation NOT shown by this run (see the clauses above)")
    lines.append(f"verdict: {v['overall'].upper()} -- {head_line}")
    return "\n".join(lines)


def plot(record, path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from circuits.utils.files import savefig_atomic

    summ = record["summary"]
    rules = list(dict.fromkeys(s["rule"] for s in summ if s["kind"] == "depth2"))
    d3rules = list(dict.fromkeys(s["rule"] for s in summ if s["kind"] == "depth3"))
    panels = [("depth2", r) for r in rules] + ([("depth3", None)] if d3rules else [])
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 4.2), sharey=True,
                             squeeze=False)
    colours = {"ip": "C3", "majand": "C0", "maj": "C2", "thr": "C4", "random": "C7"}
    names = {"ip": "IP", "majand": "MAJ∘AND (easy control)", "maj": "majority",
             "thr": "random threshold fn", "random": "random labels (hard for all depths)"}
    ns = sorted({s["n"] for s in summ})
    exact = sorted((s["n"], s["r2_best"]) for s in summ if s["kind"] == "exact3")
    for ax, (kind, rule) in zip(axes[0], panels):
        lines = [s for s in summ if s["kind"] == kind and (rule is None or s["rule"] == rule)]
        styles = ["-", "--"]              # depth 3: first and second width pair
        for t in dict.fromkeys(s["target"] for s in lines):
            for k, r in enumerate(dict.fromkeys(s["rule"] for s in lines if s["target"] == t)):
                pts = sorted((s["n"], s["r2_best"], s["r2_median"]) for s in lines
                             if s["target"] == t and s["rule"] == r and s["r2_best"] is not None)
                if not pts:
                    continue
                x, best, med = zip(*pts)
                label = names.get(t, t) + (f", widths {r}" if kind == "depth3" else "")
                ax.plot(x, best, styles[k % 2], marker="o", color=colours.get(t, None),
                        label=label)
                ax.plot(x, med, linestyle="none", marker=".", color=colours.get(t, None),
                        alpha=0.6)
        if exact:
            ax.plot(*zip(*exact), ":", marker="s", color="k", ms=4,
                    label="exact depth-3 construction (n, n+1)")
        if kind == "depth2":
            fl = sorted((s["n"], (s["rho_best"] ** 2)) for s in summ
                        if s["kind"] == "floor" and s["rule"] == rule)
            if fl:
                ax.plot(*zip(*fl), "-.", color="C1", label="explicit depth-2 IP_j floor (ρ²)")
            ax.set_title(f"depth 2, width {rule}", fontsize=10)
        else:
            ax.set_title("depth 3, trained", fontsize=10)
        ax.axhline(0.01, color="gray", lw=0.6, ls="--")
        ax.axhline(0.4, color="gray", lw=0.6, ls="--")
        ax.set_xticks(ns)
        ax.set_xlabel("n (bits per party; 4^n pairs)")
        ax.set_ylim(-0.05, 1.05)
        ax.grid(True, alpha=0.3)
    handles = {}
    for ax in axes[0]:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(lab, h)
    fig.legend(list(handles.values()), list(handles.keys()), loc="lower center",
               ncol=min(4, len(handles)), fontsize=7, frameon=False)
    axes[0][0].set_ylabel("R² on all 4^n pairs (best seed; dots: median)")
    v = record["verdict"]
    fig.suptitle(f"E23: depth 2 vs depth 3 at polynomial width — prediction "
                 f"{v['overall']}{'; separation shown' if v['separation_shown'] else ''} "
                 f"(dashed lines: R² = 0.01 and 0.4)", fontsize=9)
    rows_of_legend = -(-len(handles) // min(4, max(1, len(handles))))
    fig.tight_layout(rect=(0, 0.045 * rows_of_legend + 0.02, 1, 1))
    try:
        return savefig_atomic(fig, path, dpi=110)
    finally:
        plt.close(fig)


def main(argv=None) -> int:
    from circuits.utils.cli import EXIT_NOT_SAVED, save_or_report
    from circuits.utils.files import write_json_atomic

    args = parse_args(argv)
    try:
        record = run(args)
    except KeyboardInterrupt:
        print(f"interrupted: finished cells are kept in {Path(args.out) / 'cells.jsonl'}; run "
              f"the same command again to continue", file=sys.stderr)
        return 130
    print(table_text(record))
    out = Path(args.out)

    def write():
        print(f"wrote {write_json_atomic(out / 'separate.json', record)}")
        if not args.no_plot:
            print(f"wrote {plot(record, out / 'separate.png')}")

    if not save_or_report(write, what="separate.json and separate.png", where=out):
        return EXIT_NOT_SAVED
    print(f"total {record['seconds']:.1f} s ({record['resumed']} of {record['cells']} cells "
          f"from the resume file)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
