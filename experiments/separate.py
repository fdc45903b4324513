"""E23: depth 2 vs depth 3 at polynomial width, with an easy control of the same shape.

Trains depth-2 ReLU nets (widths polynomial in n) and depth-3 ReLU nets by full-batch Adam on all
4^n pairs of μ₀ (product form, THEORY §4.8) against IP, against MAJ∘AND (the same AND layer with a
threshold on top: the control that *can* separate) and against random labels (hard for every
depth: a control that cannot separate), and puts two training-free references next to them: the
exact depth-3 construction (ρ = 1) and the explicit depth-2 IP_j net of width j·2^{j−1} (ρ = 2^{j−n}
exactly, the floor a trained depth-2 net of that width should reach on IP).  All metrics are exact
averages over the 4^n pairs; every depth-3 width pair gets a depth-2 net of the same parameter
count.  The prediction is stated before the run and checked after it
(networks.separation.separate.PREDICTION); a failed clause is reported, not tuned away.  The
verdict keeps expressivity (what exists: the exact depth-3 net against the best depth-2 net
known, scale-free) apart from learnability (what training finds: depth 3 against depth 2 of equal
parameter count, each against random labels) and prints "separation shown" only when a clause
that isolates depth holds; its headline is the figure's title.  The same command and seeds give
the same separate.json bit for bit (less wall-clock times), whatever the thread settings.

Every cell (target × depth × width × seed × n) is independent and is appended to
``<out>/cells.jsonl`` as it finishes: run the same command again to continue after Ctrl-C or a
kill (``--fresh`` starts over).  ``--executor threads|processes`` or ``--scheduler ADDRESS``
(Dask) run cells in parallel, one cell per task.

FULL DESIGN (``--full``): n = 4..12; depth-2 widths n and n²; trained depth 3 at (n, n+1) for
every n and at (n², n) for n ≤ 10, each with depth 2 of the same parameter count; targets ip,
majand, random; 3 seeds; Adam lr 0.02, full batch.  Convergence-based stopping: a cell stops when
its best loss fell by less than 0.1% (relative) over the last 200 epochs, or reaches loss 1e-6.
Two safety nets, both pure functions of the cell (the rows do not depend on the machine): at
most 4000 epochs, and at most 10^12 pair-neuron terms (4^n times the product of the hidden
widths, per epoch) but never fewer than 200 epochs.  A cell ending on a net is flagged "still
improving" and the verdict's budget clause names it.  Designed from per-cell rates measured on
one thread (benchmarks/bench_cell_rates.py, BENCHMARKS.md): even if every cell ran to its cap,
the table is about 2.7 h on 2 quiet cores with ``--executor processes`` (n = 12 about half of
it); cells that stall stop sooner.  Cells run cheapest first within each n, so a stopped run
keeps whole n.  (n², n) stops at n = 10 because one such epoch at n = 12 is about 3·10^10 terms
(several seconds on one thread).  The curriculum rows of the full table are
``depthsep separate --curriculum --n 4..10 --seeds 3 --executor processes`` (300 epochs per
stage, about 1,500 core-seconds if every stage runs to its budget: 0.2 h more on 2 cores).

Outputs in ``--out`` (default results/separate): ``separate.json`` (rows, summary, verdict,
settings, versions; atomic), ``separate.png`` (best-affine R² against n, one panel per width
rule and one per depth-3 width pair),
``cells.jsonl`` (the resume file).

Examples
--------
    depthsep separate                                  # n = 4..8, 2 seeds: the default run
    depthsep separate --n 8,9,10 --seeds 3 --out results/sep-large
    depthsep separate --full --executor processes --out results/separate-full
    depthsep separate --targets ip,majand,ip_3,thr --widths n,2n
    depthsep separate --sampled --n 14..24                 # past exhaustive sizes (E24)
    depthsep separate --curriculum --n 4..7                # E25: the ip_j curriculum, depth 2 vs 3
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

if __package__ in (None, ""):                      # `python experiments/separate.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from circuits.utils.cli import int_list  # noqa: E402
from experiments._table_options import (add_executor_option, add_output_options,  # noqa: E402
                                        add_training_options, check_training_args)
from experiments._devices import trained_on  # noqa: E402

FORMAT = "depthsep.experiments.separate"
VERSION = 1
DEFAULT_N = (4, 5, 6, 7, 8)
FULL_N = tuple(range(4, 13))
MAX_N = 12
# the full table's design (FULL DESIGN in the text above; rates measured in BENCHMARKS.md)
FULL_EPOCHS = 4000
FULL_STALL_WINDOW = 200
FULL_STALL_TOL = 1e-3
FULL_WORK = 1e12
FULL_WIDE_MAX_N = 10
FULL_DEPTH3 = f"n:n+1,n^2:n:{FULL_WIDE_MAX_N}"



def build_parser() -> argparse.ArgumentParser:
    from networks.separation.separate import MIN_CAPPED_EPOCHS

    p = argparse.ArgumentParser(allow_abbrev=False, prog="depthsep separate", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=str, default=None,
                   help=f"n (bits per party): a list 4,6,8 or a range 4..9, 1..{MAX_N}; default "
                        f"{','.join(map(str, DEFAULT_N))} (4..12 with --full)")
    p.add_argument("--full", action="store_true",
                   help="the full table (FULL DESIGN above): n = 4..12, 3 seeds, widths n,n^2, "
                        f"depth 3 (n, n+1) to n = 12 and (n^2, n) to n = {FULL_WIDE_MAX_N}, each "
                        "with depth 2 of equal parameter count; convergence-based stopping "
                        "with an epoch cap and a per-cell work cap as safety nets; resumable")
    p.add_argument("--targets", type=str, default="ip,majand,random",
                   help="targets (networks.separation.targets): ip, majand, maj, thr, random, "
                        "ip_j; default ip,majand,random")
    p.add_argument("--widths", type=str, default=None,
                   help="depth-2 width rules, polynomials of n: default n,n^2 (n,n^2,n^3 with "
                        "--full)")
    p.add_argument("--depth3", type=str, default=None,
                   help="trained depth-3 width pairs w1:w2 (depth 2 of the same parameter count "
                        "is added); default n:n+1,n^2:n; 'none' for none")
    p.add_argument("--curriculum", action="store_true",
                   help="E25 instead of E23 (`depthsep separate --curriculum`, its own options: "
                        "`depthsep separate --curriculum --help`): depth 3 and depth 2 of "
                        "equal parameter count trained along ip_1 -> ... -> ip_n, with cold and "
                        "random-label controls, and the exact gradient signal at "
                        "initialisation")
    p.add_argument("--depth3-max-n", type=int, default=None,
                   help="train depth 3 only for n up to this; default 6 (10 with --full)")
    p.add_argument("--seeds", type=int, default=None,
                   help="training seeds per cell; default 2 (3 with --full)")
    p.add_argument("--epochs", type=int, default=None,
                   help="full-batch Adam epoch budget (stops early when the loss stalls); "
                        f"default 1000 ({FULL_EPOCHS} with --full)")
    add_training_options(p, lr=0.02, stall_tol=FULL_STALL_TOL, unit="trained cell",
                         window_default=f", {FULL_STALL_WINDOW} with --full")
    p.add_argument("--work", type=float, default=None,
                   help="per-cell work cap in pair-neuron terms (4^n times the product of the "
                        "hidden widths, per epoch): caps the epochs of the most expensive cells "
                        f"(never below {MIN_CAPPED_EPOCHS} epochs); default: none, "
                        f"{FULL_WORK:.0e} with --full")
    p.add_argument("--heldout-n", type=str, default="4,5,6",
                   help="n for the held-out figure (train on half the pairs, test on the other "
                        "half; width n^2; n <= 8); 'none' to skip; default 4,5,6")
    add_executor_option(p)
    p.add_argument("--scheduler", type=str, default=None,
                   help="a Dask scheduler address (tcp://host:8786): one cell per Dask task")
    p.add_argument("--device", type=str, default="cpu",
                   help="where trained cells train: cpu (numba, the default), cpu-torch or "
                        "cuda[:index] (PyTorch, the torch extra; the same loss and metrics); "
                        "rows, separate.json and the figure name the device.  Dask workers read "
                        "DEPTHSEP_TRAIN_DEVICE instead")
    add_output_options(p, resume="cells.jsonl", out="results/separate", plots="the PNG")
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
    widths = args.widths or "n,n^2"
    args.widths = [w.strip() for w in widths.split(",") if w.strip()]
    if args.curriculum:
        p.error("--curriculum is E25, run by `depthsep separate --curriculum` "
                "(python -m experiments.curriculum)")
    if args.depth3 is None:
        args.depth3 = FULL_DEPTH3 if args.full else "n:n+1,n^2:n"
    d3 = [] if args.depth3.strip().lower() == "none" else [
        tuple(x.strip() for x in pair.split(":")) for pair in args.depth3.split(",") if pair.strip()]
    if any(len(pair) not in (2, 3) for pair in d3):
        p.error(f"--depth3 must be pairs w1:w2 (or w1:w2:max_n) like n:n+1,n^2:n:10, got "
                f"{args.depth3!r}")
    try:
        d3 = [(a, b) if not rest else (a, b, int(rest[0])) for a, b, *rest in d3]
    except ValueError:
        p.error(f"--depth3: the third field of w1:w2:max_n must be an integer, got "
                f"{args.depth3!r}")
    for rule in args.widths + [r for pair in d3 for r in pair[:2]]:
        try:
            width_of(rule, 4)
        except Exception as exc:  # noqa: BLE001
            p.error(f"--widths/--depth3: {exc}")
    args.depth3 = d3
    args.depth3_max_n = args.depth3_max_n if args.depth3_max_n is not None else (
        MAX_N if args.full else 6)
    args.seeds = args.seeds if args.seeds is not None else (3 if args.full else 2)
    args.epochs = args.epochs if args.epochs is not None else (FULL_EPOCHS if args.full
                                                               else 1000)
    if args.stall_window is None and args.full:
        args.stall_window = FULL_STALL_WINDOW
    if args.work is None and args.full:
        args.work = FULL_WORK
    check_training_args(p, args)
    if args.work is not None and not args.work > 0:
        p.error(f"--work must be > 0 (pair-neuron terms), got {args.work}")
    args.heldout_n = ([] if args.heldout_n.strip().lower() == "none"
                      else int_list(args.heldout_n, "--heldout-n", p, ranges=True))
    if args.heldout_n and (min(args.heldout_n) < 1 or max(args.heldout_n) > 8):
        p.error(f"--heldout-n values must lie in 1..8 (explicit points), got {args.heldout_n}")
    from circuits.utils.cli import check_output_dir
    from circuits.utils.errors import DepthsepError
    from networks.product._torch import resolve_device

    try:
        args.device = resolve_device(args.device)
    except DepthsepError as exc:
        p.error(f"--device: {exc}")
    args.out = str(check_output_dir(p, args.out))
    return args


def run(args) -> dict:
    from experiments._executor import running_cells

    import numba
    import numpy as np
    import scipy

    from networks.separation.separate import PREDICTION, heldout_split, separation_table

    print(f"prediction (stated before the run): {PREDICTION}", file=sys.stderr)
    t0 = time.perf_counter()
    out = Path(args.out)
    resume = out / "cells.jsonl"
    if args.fresh and os.path.lexists(resume):
        from circuits.utils.resume import move_aside

        if resume.is_symlink() or not resume.is_file():
            move_aside(resume, "--fresh: not a regular file")
        else:
            resume.unlink()
    from networks.product._torch import ENV_DEVICE

    before = os.environ.get(ENV_DEVICE)
    os.environ[ENV_DEVICE] = args.device        # read by train_product, here and in workers
    try:
        with running_cells(args.executor) as executor:
            table = separation_table(args.n, targets=args.targets, widths=args.widths,
                                     depth3=args.depth3, depth3_max_n=args.depth3_max_n,
                                     seeds=args.seeds, base_seed=args.seed, epochs=args.epochs,
                                     lr=args.lr, resume=resume, executor=executor,
                                     client=args.scheduler, progress=not args.no_progress,
                                     stall_window=args.stall_window, stall_tol=args.stall_tol,
                                     work=args.work)
    finally:
        if before is None:
            os.environ.pop(ENV_DEVICE, None)
        else:
            os.environ[ENV_DEVICE] = before
    held = [heldout_split(n, t, "n^2", seed=args.seed, epochs=args.epochs, lr=args.lr,
                          base_seed=args.seed)
            for n in args.heldout_n for t in args.targets if t in ("ip", "majand", "random")]
    settings = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()}
    return {"format": FORMAT, "version": VERSION,
            "experiment": "E23 depth 2 vs depth 3 at polynomial width",
            "settings": settings, "prediction": PREDICTION, **table, "heldout": held,
            "trained_on": trained_on(table["rows"]), "caption": caption(table, held),
            "versions": {"python": sys.version.split()[0], "numpy": np.__version__,
                         "scipy": scipy.__version__, "numba": numba.__version__,
                         "platform": platform.platform()},
            "seconds": time.perf_counter() - t0}


#: Fields that hold wall-clock times or the environment: everything else in separate.json is a
#: bit-exact function of the command (same options, seeds and code), whatever the thread counts.
NOT_REPRODUCED = ("seconds", "versions", "out")


def reproducible(record):
    """``record`` without the fields of :data:`NOT_REPRODUCED` (at any depth): two runs of the
    same command give equal results, bit for bit (tests/test_separate_repro.py)."""
    if isinstance(record, dict):
        return {k: reproducible(v) for k, v in record.items() if k not in NOT_REPRODUCED}
    if isinstance(record, list):
        return [reproducible(v) for v in record]
    return record


def caption(table, held) -> str:
    """What the figure shows, in words, from the numbers (including "no difference")."""
    v = table["verdict"]
    bits = ["Best-affine R² (scale-free: the squared correlation of the net with the target) of "
            "the best seed, exact on all 4^n pairs of μ₀; depth-2 panels: trained nets at the "
            "panel's width rule and the explicit depth-2 IP_j floor; depth-3 panel: trained "
            "depth 3 and the exact depth-3 construction, with depth 2 of equal parameter count."]
    bits.append("verdict: " + v["headline"] + ".")
    for name, c in v["clauses"].items():
        bits.append(f"{name} ({c.get('family', '-')}): {c['status']} — " + "; ".join(c["detail"]))
    if held:
        bits.append("held-out (train on half the pairs, test on the other half, width n²): " +
                    ", ".join(f"{h['target']} n={h['n']}: test R² {h['test_r2']:.3f}"
                              for h in held))
    return " ".join(bits)


def _f(v, spec):
    return "-" if v is None else format(v, spec)


def table_text(record) -> str:
    from networks.separation.depth_verdict import clause_line

    head = (f"{'n':>2} {'kind':>10} {'target':>7} {'width':>10} {'params':>7} {'seeds':>5} "
            f"{'R2 best':>8} {'R2aff best':>10} {'R2aff med':>9} {'cos best':>8} "
            f"{'rho best':>8} {'path P':>8} {'ceiling':>8} {'floor R2aff':>11} "
            f"{'improving':>9} {'sec':>6}")
    lines = ["R2 = 1 - MSE/Var(y); R2aff = best-affine R2 (squared correlation of N and y) and "
             "cos = rho/sqrt(E[(1-2N)^2]) are scale-free; rho = E[(1-2y)(1-2N)]: all exact on "
             "all 4^n pairs; ceiling = neuron-wise §4.7 bound on |rho| (IP, depth 2; vacuous if "
             ">= 1); floor = best-affine R2 of the explicit depth-2 IP_j net of at most this width",
             head, "-" * len(head)]
    for s in record["summary"]:
        w = "x".join(map(str, s["widths"]))
        lines.append(f"{s['n']:>2} {s['kind']:>10} {s['target']:>7} {w:>10} "
                     f"{_f(s.get('params'), 'd'):>7} {s['seeds']:>5} "
                     f"{_f(s['r2_best'], '8.4f'):>8} {_f(s.get('r2_affine_best'), '10.4f'):>10} "
                     f"{_f(s.get('r2_affine_median'), '9.4f'):>9} "
                     f"{_f(s.get('cos_best'), '8.4f'):>8} {s['rho_best']:>8.4f} "
                     f"{_f(s['path_norm'], '8.3g'):>8} {_f(s['ceiling'], '8.3g'):>8} "
                     f"{_f(s['floor'], '11.4g'):>11} "
                     f"{('yes' if s['still_improving'] else 'no'):>9} {s['seconds']:>6.1f}")
    below = [s for s in record["summary"] if s.get("below_floor") and s["kind"] == "depth2"]
    lines.append("")
    lines.append("trained depth-2 IP rows below the explicit floor (scale-free: best-affine R2 "
                 "and cos against the floor net's; optimisation, not expressivity): " +
                 (", ".join(f"n={s['n']} width {s['widths'][0]}: R2aff "
                            f"{s['r2_affine_best']:.4g} < {s['floor']:.4g} (cos "
                            f"{_f(s.get('cos_best'), '.4g')} vs {_f(s.get('floor_cos'), '.4g')})"
                            for s in below) if below else "none"))
    if record.get("heldout"):
        lines.append("")
        lines.append("held-out (train on a random half of the pairs, test on the other half):")
        for h in record["heldout"]:
            lines.append(f"  n={h['n']} {h['target']:>7} width {h['width']}: train R2 "
                         f"{_f(h['train_r2'], '.3f')}, test R2 {_f(h['test_r2'], '.3f')}")
    v = record["verdict"]
    lines.append("")
    lines.append(f"prediction (stated before the run): {record['prediction']}")
    lines.append(f"prediction: {v['overall'].upper()}")
    for name, c in v["clauses"].items():
        lines.append("  " + clause_line(name, c))
        for d in c["detail"]:
            lines.append(f"      {d}")
    lines.append(f"verdict: {v['headline']}")
    return "\n".join(lines)


def plot(record, path) -> Path:
    """separate.png: R²_aff against n, one panel per depth-2 width rule, one per depth-3 width
    pair (:mod:`experiments._separate_plot`); the title is the verdict's headline."""
    from experiments._separate_plot import plot

    return plot(record, path)


def main(argv=None) -> int:
    from circuits.utils.interrupts import second_interrupt_exits
    from circuits.utils.resume import lock_output_dir

    args = parse_args(argv)
    # the lock is on the resolved directory (every way of naming it); Ctrl-C twice exits at once
    with lock_output_dir(args.out), second_interrupt_exits():
        return _main(args)


def _main(args) -> int:
    from experiments._outputs import run_table

    return run_table(args, run, table_text, name="separate", resume="cells.jsonl",
                     figures=lambda record, out: plot(record, out / "separate.png"))


if __name__ == "__main__":
    raise SystemExit(main())
