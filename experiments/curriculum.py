"""E25 (``depthsep separate --curriculum``): the learnability control of E23.

    depthsep separate --curriculum --n 4..7            # the recorded run (about 6 min)
    depthsep separate --curriculum --n 8 --seeds 1     # one more n, resumable
    depthsep separate --curriculum --n 4..7 --stall-window 200 --epochs 3000 --heldout
    depthsep separate --curriculum --n 4..7 --stall-window 200 --epochs 1000 --and-stage

Trains depth 3 (default widths (2n, n + 1)) and depth 2 of the same parameter count along the
ip_j dial ip_1 → … → ip_n (each stage warm-started from the last), next to the same nets trained
cold on IP and on random labels for the same total budget
(:func:`networks.separation.curriculum.curriculum_table`), and measures why cold training fails:
the label's gradient signal ‖E[S·∇N]‖ at initialisation, exact over all 4^n pairs, for IP,
MAJ∘AND, random labels and ip_1, ip_2 (:mod:`networks.separation.gradient_signal`).  The
prediction is printed before the run; the verdict says whether depth 3 gains more over depth 2 on
IP than on random labels.  Cells are appended to ``<out>/curriculum_cells.jsonl`` as they finish
(rerun the same command to continue).  Outputs: ``curriculum.json``, ``curriculum.png`` and
``gradient_signal.png``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

if __package__ in (None, ""):                      # `python experiments/curriculum.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from experiments._table_options import (add_executor_option, add_output_options,  # noqa: E402
                                        add_training_options, check_training_args)

MAX_N = 12


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(allow_abbrev=False, prog="depthsep separate --curriculum",
                                description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=str, default="4..7",
                   help=f"n (bits per party): a list 4,6 or a range 4..7, 2..{MAX_N}; default 4..7")
    p.add_argument("--depth3", type=str, default="2n:n+1",
                   help="depth-3 widths w1:w2 (polynomials of n); depth 2 gets the same "
                        "parameter count; default 2n:n+1")
    p.add_argument("--seeds", type=int, default=2, help="inits per net; default 2")
    p.add_argument("--epochs", type=int, default=300,
                   help="Adam epochs per stage (cold rows: n times this); default 300")
    add_training_options(p, lr=0.003, stall_tol=1e-3, unit="stage",
                         window_note=", --epochs is then only the cap per stage")
    p.add_argument("--heldout", action="store_true",
                   help="also train every net on a quarter of the pairs (half of each party's "
                        "inputs) and measure it on a disjoint quarter (inputs of neither party "
                        "seen): learning IP against memorising pairs")
    p.add_argument("--and-stage", action="store_true",
                   help="also the AND-stage design: each net trained on MAJ∘AND (its first layer "
                        "must carry the AND count), then on IP (and, as the control, on random "
                        "labels) with depth 3's first layer frozen; n x --epochs per stage; with "
                        "--heldout also on the training quadrant, measured on the held-out one")
    p.add_argument("--kinds", default=None,
                   help="run only these kinds of cell, comma-separated (curriculum, cold, "
                        "curriculum_heldout, cold_heldout, and_stage, and_stage_heldout); "
                        "default: every kind the options ask for")
    p.add_argument("--signal-inits", type=int, default=8,
                   help="random inits averaged for the gradient signal; default 8")
    add_executor_option(p)
    add_output_options(p, resume="curriculum_cells.jsonl", out="results/curriculum",
                       plots="the PNGs")
    return p


def parse_args(argv=None):
    from circuits.utils.cli import check_output_dir, int_list
    from networks.separation.separate import width_of

    p = build_parser()
    args = p.parse_args(argv)
    args.n = int_list(args.n, "--n", p, ranges=True)
    if min(args.n) < 2 or max(args.n) > MAX_N:
        p.error(f"--n values must lie in 2..{MAX_N} (the curriculum needs ip_1 and ip_2; the "
                f"table has 4^n pairs), got {args.n}")
    pair = tuple(x.strip() for x in args.depth3.split(":"))
    if len(pair) != 2:
        p.error(f"--depth3 must be one pair w1:w2 like 2n:n+1, got {args.depth3!r}")
    for rule in pair:
        try:
            width_of(rule, 4)
        except Exception as exc:  # noqa: BLE001 -- width_of's message names the expected form
            p.error(f"--depth3: {exc}")
    args.depth3 = [pair]
    check_training_args(p, args, counts=("seeds", "epochs", "signal_inits"))
    if args.kinds is not None:
        from networks.separation.curriculum import CURRICULUM_KINDS

        args.kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
        bad = [k for k in args.kinds if k not in CURRICULUM_KINDS]
        if bad or not args.kinds:
            p.error(f"--kinds must list kinds from {', '.join(CURRICULUM_KINDS)}, got {bad or '[]'}")
        need = {"curriculum_heldout": "--heldout", "cold_heldout": "--heldout",
                "and_stage": "--and-stage", "and_stage_heldout": "--heldout --and-stage"}
        for k in args.kinds:
            flags = need.get(k, "")
            if ("--heldout" in flags and not args.heldout) or \
                    ("--and-stage" in flags and not args.and_stage):
                p.error(f"--kinds {k} needs {flags}")
    args.out = str(check_output_dir(p, args.out))
    return args


def run(args) -> dict:
    """The E25 record for parsed ``depthsep separate`` arguments (``--curriculum``)."""
    from networks.separation.curriculum import curriculum_cells, stated_prediction
    from networks.separation.gradient_signal import gradient_signal_table, signal_exponent

    kinds = {c["kind"] for c in curriculum_cells(
        args.n, depth3=args.depth3[0], heldout=args.heldout, and_stage=args.and_stage,
        kinds=args.kinds)}
    print(f"prediction (stated before the run): "
          f"{stated_prediction(kinds, args.stall_window is not None)}", file=sys.stderr)
    t0 = time.perf_counter()
    out = Path(args.out)
    resume = out / "curriculum_cells.jsonl"
    if args.fresh and resume.exists():
        resume.unlink()
    from experiments._executor import running_cells

    with running_cells(args.executor) as executor:
        table = _table(args, resume, executor)
    t1 = time.perf_counter()
    signal = gradient_signal_table(args.n, inits=args.signal_inits, base_seed=args.seed,
                                   depth3_max_n=min(max(args.n), 8))
    exps = {f"{t}, depth {d}": signal_exponent(signal, t, d)
            for t in ("ip", "majand", "random", "ip_1", "ip_2") for d in (2, 3)}
    settings = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()}
    return {"format": "depthsep.experiments.curriculum", "version": 1,
            "experiment": "E25 the ip_j curriculum, depth 2 vs depth 3 at equal parameter count",
            "settings": settings, **table, "gradient_signal": signal,
            "signal_exponents": exps, "seconds_table": t1 - t0,
            "seconds_signal": time.perf_counter() - t1, "seconds": time.perf_counter() - t0}


def _table(args, resume, executor):
    from networks.separation.curriculum import curriculum_table

    return curriculum_table(args.n, depth3=args.depth3[0], seeds=args.seeds,
                            base_seed=args.seed, epochs=args.epochs, lr=args.lr, resume=resume,
                            progress=not args.no_progress, stall_window=args.stall_window,
                            stall_tol=args.stall_tol, heldout=args.heldout,
                            and_stage=args.and_stage, kinds=args.kinds, executor=executor)


def table_text(record) -> str:
    from networks.separation.depth_verdict import clause_line

    lines = ["E25: best-affine R2 on IP (exact, all 4^n pairs), median over seeds; "
             "'curriculum' = ip_1 -> ... -> ip_n, 'cold' = IP only, 'random' = random labels, "
             "each with n x (epochs per stage)",
             f"{'n':>2} {'net':>16} {'params':>7} {'curriculum':>10} {'cold IP':>8} "
             f"{'random':>8}   after each stage"]
    summ = record["summary"]

    def med(kind, target, n, rule):
        s = next((s for s in summ if s["kind"] == kind and s["target"] == target
                  and s["n"] == n and s["rule"] == rule), None)
        return (s["r2_affine_median"], s.get("params")) if s else (None, None)

    for st in record["stages"]:
        n, rule = st["n"], st["rule"]
        # held-out rows: every number measured on the held-out quadrant
        sfx = "_heldout" if st.get("kind") == "curriculum_heldout" else ""
        cur, params = med("curriculum" + sfx, "ip", n, rule)
        cold, _ = med("cold" + sfx, "ip", n, rule)
        rnd, _ = med("curriculum" + sfx, "random", n, rule)
        lines.append(f"{n:>2} {rule + (' held-out' if sfx else ''):>16} {params or 0:>7} "
                     f"{_f(cur):>10} {_f(cold):>8} {_f(rnd):>8}   "
                     + " ".join(f"{v:.3f}" for v in st["r2_affine_ip_after_stage"]))
    if any(st.get("kind") == "curriculum_heldout" for st in record["stages"]):
        lines.append("   'held-out' rows: trained on A_tr x B_tr (a quarter of the pairs), "
                     "measured on A_te x B_te (inputs of neither party seen)")
    lines += ["", "gradient signal at initialisation ||E[S grad N]|| (exact, mean over inits):"]
    sig = record["gradient_signal"]
    for depth in (2, 3):
        ns = sorted({r["n"] for r in sig if r["depth"] == depth})
        for t in dict.fromkeys(r["target"] for r in sig):
            vals = {r["n"]: r["signal_mean"] for r in sig if r["depth"] == depth
                    and r["target"] == t}
            if vals:
                e = record["signal_exponents"].get(f"{t}, depth {depth}")
                lines.append(f"  depth {depth} {t:>7}: " + " ".join(
                    f"n={n}: {vals[n]:.3g}" for n in ns if n in vals)
                    + (f"   (log2 slope {e:+.2f} per bit)" if e is not None else ""))
    v = record["verdict"]
    lines += ["", f"prediction (stated before the run): {record['prediction']}"]
    and_rows = [s for s in summ if s["kind"] in ("and_stage", "and_stage_heldout")]
    if and_rows:
        lines += ["", "AND stage (MAJ∘AND, then the labels; depth 3's first layer frozen): "
                  "best-affine R², median over seeds ('held-out': trained on the training "
                  "quadrant, measured on the held-out one)"]
        for s in and_rows:
            held = " held-out" if s["kind"] == "and_stage_heldout" else ""
            lines.append(f"  n={s['n']} {s['rule'] + held:>25} {s['target']:>7}: "
                         f"{s['r2_affine_median']:.4f}")
    for name in ("depth_gain_curriculum", "depth_gain_heldout", "depth_gain_and_stage",
                 "depth_gain_and_stage_heldout", "budget"):
        if name in v["clauses"]:
            c = v["clauses"][name]
            lines.append("  " + clause_line(name, c))
            lines += [f"      {d}" for d in c["detail"]]
    lines.append(f"verdict: {v['headline']}")
    return "\n".join(lines)


def _f(v) -> str:
    return "-" if v is None else f"{v:.4f}"


def plot(record, out: Path) -> list:
    """``curriculum.png`` (R² on IP after each stage, with the cold and random-label ends; only
    with curriculum rows), ``and_stage.png`` (only with AND-stage rows) and
    ``gradient_signal.png`` (signal against n, log scale); the titles are the verdict's
    headline."""
    import textwrap

    from circuits.utils.files import savefig_atomic
    from experiments._and_stage_plot import plot_and_stage
    from experiments._style import (REFERENCE_COLOURS, TARGET_NAMES, depth_linestyle,
                                    legend_below, pyplot, target_colour)

    paths = []
    stages = record["stages"]
    summ = record["summary"]
    and_png = plot_and_stage(record, out)
    if and_png is not None:
        paths.append(and_png)
    with pyplot() as plt:
        ns = sorted({s["n"] for s in stages})
        title = textwrap.wrap(record["verdict"]["headline"], 100)
        fig, axes = plt.subplots(1, max(1, len(ns)),
                                 figsize=(max(3.2 * max(1, len(ns)), 7.0),
                                          3.6 + 0.16 * len(title)),
                                 sharey=True, squeeze=False)
        for ax, n in zip(axes[0], ns):
            for st in (s for s in stages if s["n"] == n):
                x = list(range(1, n + 1))
                held = st.get("kind") == "curriculum_heldout"
                ax.plot(x, st["r2_affine_ip_after_stage"], depth_linestyle(st["depth"]),
                        marker="x" if held else "o", color=target_colour("ip"),
                        label=f"curriculum, depth {st['depth']}"
                        + (", held-out pairs" if held else ""))
                if held:
                    continue
                for kind, target, mk in (("cold", "ip", "s"), ("curriculum", "random", "^")):
                    s = next((s for s in summ if s["kind"] == kind and s["target"] == target
                              and s["n"] == n and s["rule"] == st["rule"]), None)
                    if s is not None:
                        ax.plot([n + 0.25], [s["r2_affine_median"]], marker=mk, ls="none",
                                color=target_colour(target),
                                label=("cold on IP" if kind == "cold" else
                                       "random labels") + ", same budget (each depth)")
            ax.set_title(f"n = {n}")
            ax.set_xticks(range(1, n + 1))
            ax.set_xlabel("stage j (labels ip_j)")
        axes[0][0].set_ylabel("best-affine R² on IP (median over seeds)")
        rows = legend_below(fig, axes[0], ncol=3)
        fig.suptitle("\n".join(title), fontsize=9)
        height = fig.get_size_inches()[1]          # the title's lines take about 0.16 in each
        fig.tight_layout(rect=(0, (0.25 * rows + 0.1) / height, 1,
                               1 - (0.16 * len(title) + 0.1) / height))
        try:
            if ns:                                  # no curriculum rows: no curriculum figure
                paths.append(savefig_atomic(fig, out / "curriculum.png", dpi=110))
        finally:
            plt.close(fig)

        sig = record["gradient_signal"]
        fig, ax = plt.subplots(figsize=(6.4, 4.2))
        for depth in (2, 3):
            for t in dict.fromkeys(r["target"] for r in sig):
                pts = sorted((r["n"], r["signal_mean"]) for r in sig
                             if r["target"] == t and r["depth"] == depth)
                if pts:
                    ax.plot(*zip(*pts), depth_linestyle(depth), marker="o",
                            color=target_colour(t) if not t.startswith("ip_")
                            else ("#009E73" if t == "ip_1" else "#CC79A7"),
                            label=TARGET_NAMES.get(t, t))
        ip2 = sorted((r["n"], r["signal_mean"]) for r in sig if r["target"] == "ip"
                     and r["depth"] == 2)
        if ip2:
            n0, v0 = ip2[0]
            xs = [n for n, _ in ip2]
            ax.plot(xs, [v0 * 2.0 ** (-(n - n0) / 2) for n in xs], depth_linestyle("bound"),
                    color=REFERENCE_COLOURS["bound"], label="2^(-n/2) (through IP's first point)")
        for depth in (2, 3):
            ax.plot([], [], depth_linestyle(depth), color="k", label=f"depth {depth}")
        ax.set_xticks(sorted({r["n"] for r in sig}))
        ax.set_yscale("log", base=2)
        ax.set_xlabel("n (bits per party)")
        ax.set_ylabel("‖E[S·∇N]‖ at initialisation (exact, mean over inits)")
        ax.set_title("the label's gradient signal at initialisation")
        rows = legend_below(fig, [ax], ncol=2)
        fig.tight_layout(rect=(0, 0.06 * rows + 0.02, 1, 1))
        try:
            paths.append(savefig_atomic(fig, out / "gradient_signal.png", dpi=110))
        finally:
            plt.close(fig)
    return paths


def main(argv=None) -> int:
    """``depthsep separate --curriculum``: run E25, print its table and verdict, write the
    record and the figures; 0 on success."""
    from experiments._outputs import run_table

    return run_table(parse_args(argv), run, table_text, name="curriculum",
                     what="curriculum.json and its figures", resume="curriculum_cells.jsonl",
                     figures=plot)


if __name__ == "__main__":
    raise SystemExit(main())
