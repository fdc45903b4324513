"""``depthsep separation-table``: lower bound <= exact least THR o THR size <= construction.

For IP_n (N = 2n) and the controls of the same N (parity, majority, a random function, a random
threshold function), the exact least number of hidden gates of a layered THR o THR circuit
(:func:`circuits.analysis.least_depth2`, CP-SAT, proved or an honest interval), next to

* the constructions: the depth-3 IP circuit (2n hidden gates, :func:`circuits.ip_depth3`), the
  depth-2 one (n·2^(n−1) hidden gates, :func:`circuits.ip_depth2`), the hyperplane-section
  product (:func:`circuits.ip_depth2_sections`, growth 2^(3n/4), the rate of Amano's bound),
  Amano's O(1.682^n) itself (growth only: his construction is not implemented), N gates for
  parity;
* every lower bound of :mod:`circuits.analysis.bounds` that applies at this size: HMPST
  (MAJ o MAJ with the witness's weights), GHR/Nisan (MAJ o THR), Forster (THR o MAJ, the
  sign-rank route), IPS for parity, and "none known" for THR o THR (``thr_thr_bound``); each
  with how loose it is (truth - bound).  At these N every such bound is small: the column shows
  by how much.

Writes ``separation_table.json`` and ``separation_table.png`` into ``--out``.

``--reduction`` prices the reduction chain instead: for IP_n, n = 2..N_MAX, the least size next to
what ``depthsep reduce --n n`` builds (its network, staircase, integer circuit and the k copies
of the self-reduction, each size read off the built object) and every lower bound, with the
gates each step gives away; writes ``reduction_table.json`` and ``reduction_table.png``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from circuits.utils.cli import check_output_dir, id_list, int_in_range, real_in_range

FORMAT = "depthsep.separation_table"
VERSION = 1
CONTROLS = ("ip", "parity", "majority", "random", "random-threshold")
#: the house colour key of each function name's prefix
_TARGET_OF = {"IP": "ip", "PAR": "parity", "MAJ": "maj", "RAND": "random", "RTHR": "thr"}


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(allow_abbrev=False, prog="depthsep separation-table", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n-max", "--n", dest="n_max",
                   type=int_in_range(1, 4, what="bits per party (N = 2n <= 8)"),
                   default=2, help="largest n of IP_n: rows n = 1..N_MAX (controls use N = 2n); "
                   "--n is the same option; default 2")
    p.add_argument("--functions", type=id_list(CONTROLS), default=list(CONTROLS),
                   help=f"comma-separated subset of {','.join(CONTROLS)}; default all")
    p.add_argument("--time-limit", type=real_in_range(0), default=30.0,
                   help="CP-SAT seconds per decision; default 30")
    p.add_argument("--max-weight", type=int_in_range(1, 10**6), default=None,
                   help="small-weight variant: cap every |weight| at W")
    p.add_argument("--workers", type=int_in_range(1, 64), default=2, help="CP-SAT threads")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, default=Path("results/separation_table"))
    p.add_argument("--reduction", action="store_true",
                   help="instead: IP_n's least THR∘THR size for n = 2..N_MAX next to what "
                        "'depthsep reduce --n n' builds (network, staircase, integer circuit, "
                        "k copies) and every library lower bound, each with the gates it gives "
                        "away; writes reduction_table.json and reduction_table.png")
    p.add_argument("--no-progress", action="store_true")
    return p


def _bounds(function: str, n: int, N: int, f, circuit) -> list:
    """Every library lower bound that applies, as dicts (value None = none known)."""
    from circuits.analysis import bounds as B
    from circuits.analysis.communication import sign_matrix

    rows = []
    w_bot = int(abs(circuit.layers[0].weights).max()) if circuit is not None else 1
    w_top = int(abs(circuit.layers[1].weights).max()) if circuit is not None else 1
    if function == "ip":
        for b, cls in ((B.maj_maj_bound(n, max(w_top, 1), max(w_bot, 1)), "MAJ o MAJ"),
                       (B.maj_thr_bound(n, max(w_top, 1)), "MAJ o THR"),
                       (B.thr_maj_bound(n, max(w_bot, 1)), "THR o MAJ"),
                       (B.thr_thr_bound(n), "THR o THR")):
            rows.append({"bound": cls, "value": b.value, "formula": b.formula})
    if function == "parity":
        b = B.parity_depth_bound(N, 2)
        rows.append({"bound": "depth-2 (IPS)", "value": b.value, "formula": b.formula})
    if N % 2 == 0:
        fb = B.forster_sign_rank_bound(sign_matrix(f))
        K = N * max(w_bot, 1) + 1          # values of a bottom linear form with |w| <= W_bot
        s = max(0, -(-(fb.inputs["ceil"] - 1) // K))
        rows.append({"bound": f"sign rank (bottom |w| <= {w_bot})", "value": s,
                     "formula": f"1 + s ({N} W_bot + 1) >= Forster {fb.value:.3f}"})
    return rows


def _construction(function: str, n: int, N: int):
    if function == "ip":
        from circuits import ip_depth2

        from circuits import ip_depth2_sections

        hidden = int(ip_depth2(n).layers[0].weights.shape[0])    # n·2^(n-1), read off the circuit
        sections = ip_depth2_sections(n).size                     # O(2^(3n/4)), read off too
        return {"depth-3 (2n)": 2 * n, "depth-2 ip_depth2 (n·2^(n-1))": hidden,
                "depth-2 sections (2^(3n/4) growth)": sections,
                "Amano O(1.682^n)": f"~{1.682 ** n:.1f} (growth)"}
    if function == "parity":
        return {"N gates (classic)": N}
    if function in ("majority", "random-threshold"):
        return {"one gate": 1}
    return {"DNF (ones of f)": None}


def _figure(rows: list, path: Path) -> None:
    """Bound, exact size (or its undecided interval, hatched) and the construction sizes."""
    from circuits.utils.files import savefig_atomic
    from experiments._style import (REFERENCE_COLOURS, SOURCE_MARKERS, legend_below, pyplot,
                                    target_colour)

    with pyplot() as plt:
        fig, ax = plt.subplots(figsize=(7.5, 4.0))
        xs = list(range(len(rows)))
        ax.bar([x - 0.2 for x in xs], [r["best_bound"] for r in rows], 0.4,
               color=REFERENCE_COLOURS["bound"], label="best library lower bound")
        first_open = True
        for x, r in zip(xs, rows):
            colour = target_colour(_TARGET_OF.get(r["function"].split("_")[0], ""))
            if r["truth"] is not None:
                ax.bar(x + 0.2, r["truth"], 0.4, color=colour,
                       label="exact least THR∘THR size (proved)" if x == 0 else None)
            else:                                   # undecided: the interval, never a 0 bar
                hi = r["upper"] if r["upper"] is not None else r["lower"] + 1
                ax.bar(x + 0.2, hi - r["lower"], 0.4, bottom=r["lower"], fill=False,
                       hatch="//", edgecolor=colour,
                       label="undecided: proved interval" if first_open else None)
                first_open = False
            sizes = [v for v in r["constructions"].values() if isinstance(v, int)]
            if sizes:
                ax.plot([x + 0.2] * len(sizes), sizes, linestyle="none",
                        marker=SOURCE_MARKERS["exact"], color=REFERENCE_COLOURS["exact"],
                        label="construction sizes" if x == 0 else None)
        ax.set_xticks(xs, [r["function"] for r in rows], rotation=45, ha="right")
        ax.set_ylabel("hidden gates")
        ax.set_title("Measured: library lower bounds vs the exact least THR∘THR size")
        nrow = legend_below(fig, [ax], ncol=2)
        fig.tight_layout(rect=(0, 0.07 * nrow, 1, 1))
        savefig_atomic(fig, path, dpi=120)
        plt.close(fig)


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    out = check_output_dir(parser, args.out)
    if args.reduction:
        if args.n_max < 2:
            parser.error("--reduction prices IP_n for n = 2..N_MAX (depthsep reduce needs "
                         "n >= 2): give --n-max 2 or 3")
        from experiments._reduction_table import run_reduction_table

        return run_reduction_table(range(2, args.n_max + 1), out, time_limit=args.time_limit,
                                   workers=args.workers, progress=not args.no_progress)
    from circuits.analysis import least_depth2
    from experiments._outputs import record_and_figure
    from circuits.analysis.exact_synthesis import target_table

    rows = []
    for n in range(1, args.n_max + 1):
        N = 2 * n
        for function in args.functions:
            f, name = target_table(function, n if function == "ip" else N, seed=args.seed)
            if function == "random":
                cons = {"DNF (ones of f)": int(f.sum())}
            else:
                cons = _construction(function, n, N)
            r = least_depth2(f, max_size=2 ** n + N, max_weight=args.max_weight,
                             time_limit=args.time_limit, num_workers=args.workers,
                             progress=not args.no_progress)
            bnds = _bounds(function, n, N, f, r.circuit)
            best = max([b["value"] for b in bnds if isinstance(b["value"], int)] + [1])
            truth = r.size
            row = {"function": name, "N": N, "truth": truth, "lower": r.lower, "upper": r.upper,
                   "complete": r.complete, "summary": r.summary(), "bounds": bnds,
                   "best_bound": best,
                   "looseness": (truth - best) if truth is not None else None,
                   "constructions": cons,
                   "solver_seconds": round(sum(c.wall_s for c in r.claims), 3),
                   "claims": [c.as_dict() for c in r.claims]}
            rows.append(row)
            tr = truth if truth is not None else f"[{r.lower},{r.upper or '?'}]"
            cons_txt = ", ".join(f"{k}: {v if v is not None else 'n/a'}" for k, v in cons.items())
            conf = ("refutations confirmed by the second solver" if r.refutations_confirmed
                    else "some refutations by CP-SAT alone")
            if r.lower <= 1:
                conf = "no refutation needed"
            if r.disagreements:
                conf = f"SOLVERS DISAGREE at s = {r.disagreements}"
            row["refutations_confirmed"] = r.refutations_confirmed
            row["disagreements"] = list(r.disagreements)
            print(f"{name:<18} N={N}  bound {best:>3} <= truth {tr!s:>6}   constructions: "
                  f"{cons_txt}   ({row['solver_seconds']:.2f} s, "
                  f"{'complete' if r.complete else 'within |w| bound'}; {conf})", flush=True)
    record = {"format": FORMAT, "version": VERSION, "max_weight": args.max_weight,
              "time_limit": args.time_limit, "rows": rows}
    return record_and_figure(record, out / "separation_table.json",
                             lambda path: _figure(rows, path), out / "separation_table.png")


if __name__ == "__main__":
    raise SystemExit(main())
