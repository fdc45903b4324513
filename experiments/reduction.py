"""The main experiment: a trained depth-2 σ-network, reduced end to end (THEORY §4, §4.8, E8–E11).

    python experiments/reduction.py                       # n = 6, ReLU, width 32
    python experiments/reduction.py --n 10 --width 64
    python experiments/reduction.py --n 6 --sparse 2      # neurons read 2 + 2 coordinates
    python experiments/reduction.py --sweep               # n = 4..12: least k vs n and vs ρ

Each run is :func:`networks.separation.reduction_run.reduction_run`: build the hard instance (THEORY §2)
and its product-form support once, train a depth-2 network in product form
(networks.train_product: Adam, full-batch MSE over all 4^n points) until MSE <= 1/4 - γ or the
epoch cap, then

1. staircase every σ-neuron into threshold gates (§4.1), checked on all support points (product
   form) and on random points of the unit ball;
2. quantise the bottom weights (§4.2), build the integer ThresholdCircuit over the 2m code bits
   and evaluate it exactly on all 4^n support points (neuron-wise; gate by gate on a sample);
3. the self-reduction (§4.3, §4.8) of the *quantised* network: M_k averages k copies, each the
   network at an XOR-shifted input multiplied by parities of the input bits; its margin over
   all 4^n pairs by FWHT for the k used (Bernstein's by default) and the least working k; the
   same on the integer circuit's Boolean output;
4. the chain of inequalities down to Forster's bound, rank links flagged when they hold by
   dimension only, and the §4.7 correlation route.

Writes DIR/report.json (atomically; its ``format`` field names the layout), DIR/network.json
(the trained network: ``SigmaNetwork.load``, ``depthsep info|spectrum``), DIR/circuit.json (the
integer circuit: ``circuits.load_circuit``, ``depthsep check``) and DIR/reduction.png, so every
printed number can be recomputed from the run's own files.

What the printout claims: "sign(M_k) = IP on all inputs" is evidence only when the network beats
the best constant predictor (MSE < 1/4 - 4^{-n-1}); the concentration step alone gives it for
any table with ρ != 0, so the informative number is the least working k against 2^{n/2}.
``--control constant`` (the best constant, untrained) and ``--control random`` (trained on
permuted labels) run the same chain on predictors that cannot be evidence.  ``--sweep`` writes DIR/sweep.json and
DIR/sweep.png (least working k against n and against ρ with the Hoeffding and Bernstein
predictions for margin > 0).

For ``--activation threshold`` (Heaviside) gradients vanish, so a sigmoid network is trained; its
hidden layer (W, b) is then read as Heaviside gates and the output layer refitted by exact least
squares on the support.  The reported MSE is the Heaviside network's.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

if __package__ in (None, ""):                      # `python experiments/reduction.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from circuits.utils.cli import (EXIT_NOT_SAVED, check_output_dir, int_in_range, positive_int,
                                real_in_range, save_or_report)

#: Largest n the command accepts: the (2^n, 2^n) float64 tables are 2 GiB at n = 14.
# the largest n the reduction runs: 4^n = 2^{2n} points, 2n <= circuits.hypercube's
# MAX_EXHAUSTIVE_BITS (24); the library refuses beyond, so the CLI does too
MAX_N = 12
DEFAULTS = {"n": 6, "width": 32, "activation": "relu", "gamma": 0.05, "epochs": 3000,
            "lr": 0.03, "seed": 0}


def _parse_list(text: str, name: str) -> list[int]:
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{name} must be a comma-separated list of integers, "
                                         f"got {text!r}") from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"{name} needs positive integers, got {text!r}")
    return values


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(allow_abbrev=False, prog="depthsep reduce", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    a = p.add_argument
    a("--n", type=int_in_range(2, MAX_N, what="bits per party"), default=DEFAULTS["n"],
      help=f"bits per party (4^n support points), 2..{MAX_N}; default 6")
    a("--m", type=positive_int, default=None, help="code length per party, n <= m; default 4n")
    a("--width", type=positive_int, default=DEFAULTS["width"], help="hidden width w; default 32")
    a("--activation", default=DEFAULTS["activation"],
      help="relu, sigmoid, tanh, threshold (trained through a sigmoid surrogate), or any "
           "registered activation; default relu")
    a("--sparse", type=positive_int, default=None, metavar="R",
      help="sparse-neuron regime: every neuron reads R of Alice's and R of Bob's coordinates "
           "(K_i <= 2^R), so the rank links can bite below 2^n")
    a("--k", type=positive_int, default=None, help="copies in the self-reduction; default --k-rule's k")
    a("--k-rule", choices=("bernstein", "hoeffding"), default="bernstein",
      help="bound giving the default k (for H·M_k >= 3ρ/4 w.p. >= 1/2); default bernstein")
    a("--k-max", type=positive_int, default=1 << 30, help="cap on the default k; default 2^30 (shifts are "
      "streamed: k costs seconds, not memory)")
    a("--seed", type=int_in_range(0, 2**32 - 1, what="a numpy seed"), default=DEFAULTS["seed"],
      help="seed of code, weights, shifts, 0..2^32-1; default 0")
    a("--gamma", type=real_in_range(0, 0.25), default=DEFAULTS["gamma"],
      help="training stops once MSE <= 1/4 - gamma; default 0.05")
    a("--epochs", type=positive_int, default=None,
      help="epoch cap (full batch); default 3000 while 4^n·w <= 2^22, then scaled down as "
           "3000·2^22/(4^n·w) with a floor of 30 (n = 10, w = 64: 187), so one run stays within "
           "minutes; the table says when the cap stops training before the γ target")
    a("--lr", type=real_in_range(0), default=DEFAULTS["lr"], help="Adam step (> 0); default 0.03")
    a("--batch-size", type=positive_int, default=None, help="mini-batches of pairs (default full batch)")
    a("--circuit-margin", type=real_in_range(0), default=None,
      help="staircase error γ' of the threshold circuit (default ρ_q/4)")
    a("--no-circuit", action="store_true", help="skip the integer threshold circuit")
    a("--max-gates", type=positive_int, default=400_000,
      help="largest integer circuit; a larger default margin is raised to fit (said in the "
           "output); default 400000")
    a("--ball-points", type=int_in_range(0, None), default=10_000,
      help="random unit-ball points for the staircase check; default 10000")
    a("--control", choices=("constant", "random"), default=None,
      help="reduce a network that cannot be evidence: 'constant' (the best constant predictor "
           "E[IP], not trained) or 'random' (trained on randomly permuted IP labels); the "
           "concentration step gives sign(M_k) = IP for any table with ρ != 0")
    a("--out", default="results/reduction", help="output directory; default results/reduction")
    a("--no-progress", action="store_true", help="no progress bars")
    a("--sweep", action="store_true",
      help="run over --sweep-n x --sweep-widths; writes sweep.json and sweep.png")
    a("--sweep-n", type=lambda s: _parse_list(s, "--sweep-n"), default=list(range(4, 13)),
      help="values of n for --sweep; default 4..12")
    a("--sweep-widths", type=lambda s: _parse_list(s, "--sweep-widths"), default=None,
      help="widths for --sweep; default the --width value")
    return p


def _versions() -> dict:
    import numba
    import scipy

    return {"python": platform.python_version(), "numpy": np.__version__,
            "numba": numba.__version__, "scipy": scipy.__version__,
            "platform": platform.platform()}


def run_one(args, *, n: int, width: int, progress: bool) -> dict:
    """Train + steps 1–4 for one (n, width) (:func:`networks.separation.reduction_run.reduction_run`);
    returns the report dict (:func:`save_one` writes it)."""
    from networks.separation.reduction_run import reduction_run

    run = reduction_run(n, width, args.activation, m=args.m, seed=args.seed, gamma=args.gamma,
                        epochs=args.epochs, lr=args.lr, batch_size=args.batch_size,
                        sparse=args.sparse, k=args.k, k_rule=args.k_rule, k_max=args.k_max,
                        circuit=not args.no_circuit, circuit_margin=args.circuit_margin,
                        max_gates=args.max_gates, ball_points=args.ball_points,
                        control=args.control, progress=progress)
    record = dict(run.record)
    record["_network"] = run.network
    record["_instance"] = run.instance
    record["_seed"] = args.seed
    record["versions"] = _versions()
    if run.report is not None:
        record["_report"] = run.report
        record["_staircase"] = run.staircase
    return record


#: Version of report.json's layout (its ``format`` field).
REPORT_FORMAT = "depthsep-reduction-report/2"


def save_one(rec: dict, out: Path, *, figure: bool = True) -> bool:
    """Write ``network.json`` (the trained network, :meth:`networks.SigmaNetwork.load` reads it),
    ``circuit.json`` (the integer circuit, :func:`circuits.load_circuit` reads it; when one was
    built), ``reduction.png`` (if there is a report) and ``report.json`` atomically into ``out``;
    on a write error say so on stderr and return False (the results were printed before)."""
    from circuits.io import circuit_to_dict
    from circuits.utils.files import write_json_atomic

    record = {"format": REPORT_FORMAT,
              **{k: v for k, v in rec.items() if not k.startswith("_")}}

    def write():
        files = {}
        if figure and rec.get("_report") is not None:
            t0 = time.perf_counter()
            plot_report(rec["_report"], out / "reduction.png")
            record["figure"] = str(out / "reduction.png")
            record["timings"] = {**record["timings"], "figure": time.perf_counter() - t0}
        if rec.get("_network") is not None:
            write_json_atomic(out / "network.json", rec["_network"].to_dict())
            files["network"] = "network.json"
        report = rec.get("_report")
        if report is not None and report.circuit is not None:
            # the support it is meant for goes with it (depthsep check / spectrum work there);
            # compact (like circuits.io.save_circuit): 13 MB instead of 36 MB at n = 6
            from experiments._cli_support import support_metadata

            doc = circuit_to_dict(report.circuit.circuit)
            if rec.get("_instance") is not None:
                doc["metadata"] = support_metadata(rec["_instance"], seed=rec.get("_seed"),
                                                   target="ip", made_by="depthsep reduce")
            write_json_atomic(out / "circuit.json", doc, indent=None)
            files["circuit"] = "circuit.json"
        record["files"] = files
        write_json_atomic(out / "report.json", record)            # last: it lists the others

    return save_or_report(write, what="report.json, network.json, circuit.json and reduction.png",
                          where=out)


def plot_report(report, path: Path) -> None:
    """Per-pair margins before and after the self-reduction; worst margin against k (house
    style, :mod:`experiments._style`: IP's colour for every margin of M_k, grey for the network
    alone, the bound's colour and line style for 3ρ/4)."""
    from circuits.utils.files import savefig_atomic
    from experiments._style import (REFERENCE_COLOURS, depth_linestyle, legend_below, pyplot,
                                    target_colour)

    ip, alone, ref = target_colour("ip"), "#9A9A9A", REFERENCE_COLOURS["bound"]
    red = report.reduction
    before = (report.quantised.support.H * report.quantised.value_matrix()).ravel()
    after = red.margins.ravel()
    with pyplot() as plt:
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11.5, 5.0))
        bins = np.linspace(min(before.min(), after.min()), max(before.max(), after.max()), 80)
        ax1.hist(before, bins=bins, alpha=0.6, color=alone,
                 label="quantised network alone (one copy)")
        ax1.hist(after, bins=bins, alpha=0.6, color=ip,
                 label=f"M_k: average of k = {red.k} shifted copies")
        ax1.set_yscale("log")
        ax1.axvline(0, color="k", lw=0.8)
        ax1.axvline(red.rho, color=ref, ls=depth_linestyle("bound"), lw=1,
                    label=f"mean margin ρ = {red.rho:.3f} (same for both)")
        ax1.set_xlabel("signed margin at a pair (a, b): positive = sign of IP")
        ax1.set_ylabel(f"number of pairs (of {4 ** report.n})")
        ax1.set_title(f"margins on IP, n = {report.n}, width {report.width}, "
                      f"{report.activation} (quantised)")
        pm = red.prefix_margins
        ax2.plot(np.arange(1, pm.size + 1), pm, lw=1, color=ip,
                 label="worst margin of M_k, every k (exact scan)")
        if red.least.evaluated:
            ks, ms = zip(*red.least.evaluated)
            ax2.plot(ks, ms, "o", ms=4, color=ip, mfc="none",
                     label="worst margin of M_k at larger k (exact, fast Walsh-Hadamard)")
        ax2.plot([red.k], [red.min_margin], "s", color="k",
                 label=f"k used = {red.k} ({red.k_rule.capitalize()}'s bound)")
        ax2.axhline(0, color="k", lw=0.8)
        ax2.axhline(0.75 * red.rho, color=ref, ls=depth_linestyle("bound"), lw=1,
                    label="3ρ/4 (the certificate's target)")
        if red.least_k is not None:
            ax2.axvline(red.least_k, color="k", ls=depth_linestyle("construction"), lw=1.2,
                        label=f"least working k = {red.least_k}")
        ax2.set_xscale("log")
        ax2.set_xlabel("k (number of shifted copies averaged)")
        ax2.set_ylabel("worst margin over all 4^n pairs")
        ax2.set_title("the worst pair's margin as copies are added")
        rows = legend_below(fig, (ax1, ax2), ncol=2)
        fig.tight_layout(rect=(0, 0.045 * rows + 0.02, 1, 1))
        savefig_atomic(fig, path, dpi=110)
        plt.close(fig)


def _training_line(rec) -> str:
    t = rec["training"]
    stop = ("reached MSE <= {:.3f}".format(t["target_mse"]) if t["reached_target"] else
            "STOPPED ON THE EPOCH CAP before MSE <= {:.3f}".format(t["target_mse"]))
    return (f"training (product form): {t['epochs_run']}/{t['epoch_cap']} epochs "
            f"({t['train_seconds']:.1f} s), {stop}; MSE = {rec['mse']:.4f} (γ = {rec['gamma']:.4f}), "
            f"ρ = {rec['rho']:.4f}, accuracy {rec['accuracy']:.4f}")


def print_report(rec: dict) -> None:
    report = rec["_report"]
    st, tc, red, rc = rec["staircase"], rec.get("threshold_circuit"), report.reduction, \
        report.reduction_circuit
    b = report.certificate.bounds
    print(f"\n== depth-2 {rec['activation']} network, n = {rec['n']} (d = {rec['d']}), width "
          f"{rec['width']}, seed {rec['seed']}" + (f", sparse: {rec['training']['sparse_reads']}+"
          f"{rec['training']['sparse_reads']} coordinates per neuron" if rec['training']['sparse_reads']
          else "") + " ==")
    print(_training_line(rec))
    if "conversion" in rec["training"]:
        print(f"  {rec['training']['conversion']}")
    if report.circuit is not None and "margin raised" in report.circuit.steps[1]:
        print(report.circuit.steps[1])
    rows = [("1 staircase gates (real weights)", st["n_gates"], "error bound / measured",
             f"{st['error_bound']:.3g} / {max(st['max_error_support'], st['max_error_ball']):.3g}"),
            ("2 quantisation grid η", f"{report.quantised.eta:.3g}", "K measured / bound",
             f"{report.quantised.K} / {report.quantised.K_bound}")]
    if tc is not None:
        rows += [("2 integer circuit size, depth", f"{tc['size']}, {tc['depth']}", "max|weight|",
                  str(tc["max_abs_weight"])),
                 ("2 circuit vs IP (avg-case net)", f"{tc['n_errors_ip']} errors",
                  "vs [N_C >= 1/2]", f"{tc['n_disagree_real']} disagreements"),
                 ("2 circuit vs network's [N >= 1/2]", f"{tc['n_disagree_network']} disagreements",
                  f"|N-1/2| <= {tc['network_band']:.3g} band",
                  f"{tc['n_disagree_network_outside_band']} outside it")]
    rows += [("3 k used (rule)", f"{red.k} ({red.k_rule})", "Bernstein / Hoeffding k",
              f"{red.bernstein_k} / {red.hoeffding_k}"),
             ("3 least working k (margin > 0)", str(red.least_k), "how", red.least.method),
             ("3 min H·M_k (before: min H·Ñ_q)", f"{red.min_margin:.4f}", "",
              f"({red.margin_before:.4f})"),
             ("3 sign(M_k) = IP on all 4^n", str(red.sign_agrees_everywhere), "sign errors",
              str(red.n_sign_errors))]
    if rc is not None:
        rows.append(("3 same on circuit's Boolean output", str(rc.sign_agrees_everywhere),
                     "k used / least k", f"{rc.k} / {rc.least_k}"))
    rows += [("4 Forster 2^{n/2} <= rank M_k (automatic)" if red.sign_agrees_everywhere
              else "4 Forster bound of sign(M_k) <= rank M_k",
              f"{b['forster']:.4g} <= {b.get('rank_Mk', '-')}",
              "<= k(1 + sum min K)", str(b["rank_bound_Mk"])
              + (" (>= 2^n: by dimension only)" if b["rank_Mk_by_dimension"] else "")),
             ("4 implied width lower bound", f"{b['width_bound_measured']:.3g}", "§4.0 / §4.7",
              f"{b['width_bound_theory']:.3g} / {b['width_bound_correlation']:.3g}")]
    for a, v, c, dv in rows:
        print(f"  {a:<36} {str(v):>22}   {c:<24} {dv}")
    for line in headline(rec):
        print(line)
    if b["rank_V_by_dimension"] or b["rank_Mk_by_dimension"]:
        print("   rank links marked 'by dimension only' hold for every 2^n x 2^n matrix and say "
              "nothing about the network; --sparse R exercises them below 2^n.")
    if b["width_bound_measured"] < 1:
        print(f"   (the width bounds are vacuous at n = {rec['n']}: the chain gives w >= 1 only "
              f"once 2^(n/2) >= k(1 + K))")
    print("\nchain of inequalities (THEORY §4.5, §4.7):")
    print(report.certificate.table())
    print(f"\n{report.certificate.headline()}; total {rec['timings']['total']:.1f} s")


def headline(rec: dict) -> list:
    """The run's conclusion, honest about what it shows.

    sign(M_k) = IP is printed as evidence only when the network beats the best constant
    predictor (γ > 4^{-n-1}); the concentration step alone gives it for any table with ρ != 0,
    so the informative number is the least working k, against Forster's 2^{n/2}.
    """
    report = rec["_report"]
    red = report.reduction
    n, n4 = rec["n"], 4 ** rec["n"]
    forster = 2.0 ** (n / 2)
    control = {"constant": "CONTROL (constant predictor E[IP], not trained): ",
               "random": "CONTROL (trained on randomly permuted labels): "}.get(rec.get("control"), "")
    lines = []
    if not rec.get("beats_constant"):
        lines.append(f"=> {control}the network does NOT beat a constant (MSE = {rec['mse']:.6g} >= "
                     f"{0.25 - 4.0 ** (-n - 1):.6g}, the best constant's; γ = {rec['gamma']:.3g}): "
                     f"nothing below is evidence about it.  sign(M_k) = IP "
                     f"{'holds' if red.sign_agrees_everywhere else 'fails'} here only because "
                     f"ρ = {rec['rho']:.3g} != 0: the concentration step works for any table "
                     f"with ρ != 0, a constant included.")
    elif red.sign_agrees_everywhere:
        wrong = int((report.quantised.value_matrix() * report.quantised.support.H <= 0).sum())
        lines.append(f"=> {control}self-reduction of the QUANTISED network (beats the best constant: "
                     f"γ = {rec['gamma']:.4g} > 4^-(n+1)): M_k, the average of k = {red.k} copies "
                     f"(each the network at an XOR-shifted input multiplied by parities of the "
                     f"input bits; not itself a network of width k·w), has sign = IP on all {n4} "
                     f"inputs, margin {red.min_margin:.4f}; the quantised network alone errs on "
                     f"{wrong} of them.")
    else:
        lines.append(f"=> {control}sign(M_k) != IP on {red.n_sign_errors} of {n4} inputs at k = "
                     f"{red.k}: no conclusion.")
    if red.least_k is not None:
        rel = "<" if red.least_k < forster else ">="
        lines.append(f"   informative number: least working k = {red.least_k} {rel} 2^(n/2) = "
                     f"{forster:.4g} (the chain bounds the width only when k(1 + K) < 2^(n/2)); "
                     f"sign(M_k) = IP by itself holds for any table with ρ != 0 (try --control "
                     f"constant, --control random).")
    return lines


SWEEP_KEYS = ("n", "m", "width", "activation", "mse", "gamma", "rho", "variance", "k", "k_rule",
              "least_k", "least_k_method", "bernstein_k", "hoeffding_k", "bernstein_k_positive",
              "hoeffding_k_positive", "min_margin", "sign_agrees_everywhere", "chain_ok", "error",
              "beats_constant", "evidence", "control")


def run_sweep(args, out: Path, progress: bool) -> int:
    from circuits.utils.files import write_json_atomic

    rows = []
    for n in args.sweep_n:
        for w in args.sweep_widths or [args.width]:
            rec = run_one(args, n=n, width=w, progress=progress)
            row = {k: rec.get(k) for k in SWEEP_KEYS}
            row.update(reached_target=rec["training"]["reached_target"],
                       epochs_run=rec["training"]["epochs_run"],
                       seconds=rec.get("timings", {}).get("total"))
            rows.append(row)
            write_json_atomic(out / "sweep.json", {"rows": rows, "versions": _versions(),
                                                   "args": dict(vars(args))})
            if row.get("error"):
                print(f"n={n:>2} w={w:>4}: MSE {row['mse']:.4f}, ρ {row['rho']:.3g}: "
                      f"{row['error']}")
                continue
            print(f"n={n:>2} w={w:>4}: MSE {row['mse']:.4f}"
                  f"{'' if row['reached_target'] else ' (epoch cap)'} ρ {row['rho']:.3g} "
                  f"least k {row['least_k']} (Bernstein {row['bernstein_k_positive']}, Hoeffding "
                  f"{row['hoeffding_k_positive']} for margin > 0); k used {row['k']}, sign ok "
                  f"{row['sign_agrees_everywhere']}, {row['seconds']:.1f} s")
    plot_sweep(rows, out / "sweep.png")
    return 0 if all(r.get("sign_agrees_everywhere") for r in rows) else 1


def plot_sweep(rows: list, path: Path) -> None:
    """Least working k against n (integer ticks, lines: n is ordered) and against ρ (a scatter:
    one point per run, no line through unrelated runs), with the margin > 0 predictions, in the
    house style (:mod:`experiments._style`: the measurement in the target's colour, the two
    concentration bounds dash-dotted and dotted in the bound colours)."""
    from circuits.utils.files import savefig_atomic
    from experiments._style import (REFERENCE_COLOURS, SOURCE_MARKERS, depth_linestyle,
                                    legend_below, pyplot, target_colour)

    ok = [r for r in rows if r.get("least_k")]
    series = (("least_k", SOURCE_MARKERS["exact"], "-", target_colour("ip"),
               "least working k (measured, exact margins)"),
              ("bernstein_k_positive", SOURCE_MARKERS["search"], depth_linestyle("bound"),
               REFERENCE_COLOURS["bound"], "Bernstein k for margin > 0 (bound)"),
              ("hoeffding_k_positive", "v", depth_linestyle("construction"),
               REFERENCE_COLOURS["floor"], "Hoeffding k for margin > 0 (bound)"))
    order = sorted(ok, key=lambda r: r["n"])
    with pyplot() as plt:
        fig, axes = plt.subplots(1, 2, figsize=(12, 4.8))
        for key, mk, ls, col, lab in series:
            axes[0].plot([r["n"] for r in order], [r[key] for r in order], marker=mk, ls=ls,
                         color=col, label=lab)
            axes[1].scatter([r["rho"] for r in ok], [r[key] for r in ok], marker=mk, color=col,
                            label=lab)
        ns = sorted({r["n"] for r in rows})
        axes[0].plot(ns, [2.0 ** (n / 2) for n in ns], color=REFERENCE_COLOURS["exact"], lw=1,
                     label="2^(n/2) (Forster; the chain bounds width only when k(1 + K) < it)")
        axes[0].set_xticks(ns)
        axes[0].set_xlabel("n (bits per party)")
        axes[1].set_xlabel("ρ = E[H·Ñ_q] of the quantised network")
        axes[1].set_xscale("log")
        for ax in axes:
            ax.set_yscale("log")
            ax.set_ylabel("copies k")
        axes[0].set_title("copies needed for sign(M_k) = IP on all 4^n pairs")
        axes[1].set_title("the same against the network's correlation ρ (one point per run)")
        missing = [r for r in rows if not r.get("least_k")]
        if missing:
            fig.text(0.5, 0.005, "not shown: " + "; ".join(
                f"n = {r['n']} (ρ = {r['rho']:.2g}, " + (r["error"][:40] if r.get("error") else
                                                        f"no working k <= {r['k']}") + ")"
                for r in missing), ha="center", fontsize=7)
        nrows = legend_below(fig, axes[:1], ncol=2, bottom=0.03)
        fig.tight_layout(rect=(0, 0.06 * nrows + 0.05, 1, 1))
        savefig_atomic(fig, path, dpi=110)
        plt.close(fig)


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.sparse is not None and not 1 <= args.sparse <= 4 * min([args.n] + args.sweep_n):
        parser.error(f"--sparse must be between 1 and m (coordinates per party), got {args.sparse}")
    from networks import get_activation

    try:
        get_activation(args.activation)
    except Exception as exc:            # unknown name: show the registry's message
        parser.error(str(exc))
    for n in [args.n] + (args.sweep_n if args.sweep else []):
        if args.m is not None and args.m < n:
            parser.error(f"argument --m: {args.m} is below n = {n} (a systematic code contains "
                         f"the message; the default is 4n)")
        if n > MAX_N:
            parser.error(f"argument --sweep-n: {n} is above the maximum {MAX_N} (bits per party)")
    out = check_output_dir(parser, args.out)
    progress = not args.no_progress
    if args.sweep:
        return run_sweep(args, out, progress)
    rec = run_one(args, n=args.n, width=args.width, progress=progress)
    if "error" in rec:
        if rec.get("control"):
            print(f"control {rec['control']}: ", end="")
        print(rec["error"])
        saved = save_one(rec, out, figure=False)
        if saved:
            print(f"wrote {out / 'report.json'}")
        return 1 if saved else EXIT_NOT_SAVED
    print_report(rec)
    if not save_one(rec, out):
        return EXIT_NOT_SAVED
    extra = " and circuit.json" if rec["_report"].circuit is not None else ""
    print(f"wrote {out / 'report.json'}, {out / 'reduction.png'}, network.json{extra}")
    if rec.get("control"):
        return 0                          # a control ran as intended; it is not a claim
    return 0 if rec["sign_agrees_everywhere"] and rec["chain_ok"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
