"""The main experiment: a trained depth-2 σ-network, reduced end to end (THEORY §4, E8–E11).

    python experiments/reduction.py --n 6 --out results/reduction
    python experiments/reduction.py --n 4 --activation threshold
    python experiments/reduction.py --sweep --sweep-n 3,4,5,6 --sweep-widths 16,32

Steps: build the hard instance (THEORY §2), train a depth-2 network (networks.train, Adam, MSE) on
its 4^n support points until it beats the trivial predictor (MSE <= 1/4 - γ), then

1. staircase every σ-neuron into threshold gates (§4.1) and check the sup error on every support
   point and on random points of the unit ball;
2. quantise the bottom weights (§4.2), build the integer ThresholdCircuit over the 2m code bits
   and evaluate it on all 4^n support points with the circuits kernels;
3. average k twisted XOR shifts (§4.3–4.4) and compute the margin min H·M_k over all 4^n pairs;
4. state the chain of inequalities down to Forster's bound and the implied width lower bound,
   plus the §4.7 correlation route (§4.5, §4.7).

Writes DIR/report.json (atomically) and DIR/reduction.png (margins before/after the
self-reduction; min margin vs k).  ``--sweep`` writes DIR/sweep.json and DIR/sweep.png.

For ``--activation threshold`` (Heaviside) gradients vanish, so a smooth surrogate is trained:
a sigmoid network; its hidden layer (W, b) is then read as Heaviside gates [Wx + b >= 0] and the
linear output layer is refitted by exact least squares on the support (the best top layer for
those gates).  The reported MSE is the Heaviside network's.
"""

from __future__ import annotations

import argparse
import math
import platform
import sys
import time
from pathlib import Path

if __package__ in (None, ""):                      # `python experiments/reduction.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

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
    p = argparse.ArgumentParser(prog="experiments/reduction.py", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=int, default=DEFAULTS["n"],
                   help="bits per party (support has 4^n points, d = 8n); default 6")
    p.add_argument("--m", type=int, default=None, help="code length per party; default 4n")
    p.add_argument("--width", type=int, default=DEFAULTS["width"],
                   help="hidden width w of the depth-2 network; default 32")
    p.add_argument("--activation", default=DEFAULTS["activation"],
                   help="relu, sigmoid, tanh, threshold (= heaviside, trained through a sigmoid "
                        "surrogate), or any registered activation; default relu")
    p.add_argument("--k", type=int, default=None,
                   help="copies in the self-reduction; default the Hoeffding + union-bound k "
                        "with M_emp = max|Ñ| (THEORY §4.4)")
    p.add_argument("--k-max", type=int, default=200_000,
                   help="cap on the default Hoeffding k (cost k·4^n); default 200000")
    p.add_argument("--seed", type=int, default=DEFAULTS["seed"],
                   help="seed of the code, the initial weights and the shifts; default 0")
    p.add_argument("--gamma", type=float, default=DEFAULTS["gamma"],
                   help="training stops once MSE <= 1/4 - gamma; default 0.05")
    p.add_argument("--epochs", type=int, default=DEFAULTS["epochs"],
                   help="maximum training epochs (full batch Adam); default 3000")
    p.add_argument("--lr", type=float, default=DEFAULTS["lr"], help="Adam step; default 0.03")
    p.add_argument("--circuit-margin", type=float, default=None,
                   help="staircase error γ' of the threshold circuit (default ρ_q/4)")
    p.add_argument("--no-circuit", action="store_true",
                   help="skip building/evaluating the integer threshold circuit")
    p.add_argument("--ball-points", type=int, default=10_000,
                   help="random unit-ball points for the staircase check; default 10000")
    p.add_argument("--out", default="results/reduction",
                   help="output directory; default results/reduction")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.add_argument("--sweep", action="store_true",
                   help="run over --sweep-n x --sweep-widths, record how the certified lower "
                        "bounds and measured sizes grow; writes sweep.json and sweep.png")
    p.add_argument("--sweep-n", type=lambda s: _parse_list(s, "--sweep-n"), default=[3, 4, 5, 6],
                   help="values of n for --sweep; default 3,4,5,6")
    p.add_argument("--sweep-widths", type=lambda s: _parse_list(s, "--sweep-widths"), default=None,
                   help="widths for --sweep; default the --width value")
    return p


def _versions() -> dict:
    import numba
    import scipy

    return {"python": platform.python_version(), "numpy": np.__version__,
            "numba": numba.__version__, "scipy": scipy.__version__,
            "platform": platform.platform()}


def train_network(instance, *, width: int, activation: str, gamma: float, epochs: int, lr: float,
                  seed: int, progress: bool):
    """Train a depth-2 network on the support; returns (network, info dict)."""
    from networks import SigmaNetwork, get_activation
    from networks.sigma import DenseLayer
    from networks.train import train

    act = get_activation(activation)
    surrogate = bool(act.jumps) and act.lipschitz(1.0) == 0.0
    train_act = "sigmoid" if surrogate else act.name
    sup = instance.support()
    X, y = sup.points, sup.labels.astype(np.float64)
    net0 = SigmaNetwork.random([instance.dim, width, 1], train_act, seed=seed)
    t0 = time.perf_counter()
    res = train(net0, X, y, epochs=epochs, lr=lr, seed=seed, patience=None,
                target_loss=0.25 - gamma, progress=progress, desc=f"train {train_act} w={width}")
    info = {"trained_activation": train_act, "epochs_run": int(res.history["epochs"]),
            "stopped": res.history.get("reason"), "train_seconds": time.perf_counter() - t0,
            "train_mse": float(res.history["final_loss"])}
    net = res.network
    if surrogate:
        hidden = net.layers[0]
        F = act(X @ hidden.weights.T + hidden.bias)
        A = np.concatenate([F, np.ones((F.shape[0], 1))], axis=1)
        coef, *_ = np.linalg.lstsq(A, y, rcond=None)
        net = SigmaNetwork([hidden, DenseLayer(coef[None, :-1], coef[-1:])], activation=act.name)
        info["conversion"] = (f"sigmoid surrogate -> {act.name} neurons with the same (W, b); "
                              f"output layer refitted by least squares on the support")
    return net, info


def check_staircase(network, instance, *, margin: float, n_ball: int, seed: int):
    """Step 1 on the original network: staircase, checked on the support and in the ball (E11)."""
    from embeddings.instance import uniform_ball
    from networks.reduction import staircase, staircase_gate_count
    from networks.reduction._common import depth2_parts

    parts = depth2_parts(network)
    st = staircase(network, margin=margin, allocation="optimal", max_gates=50_000_000)
    X = instance.support().points
    err_support = float(np.abs(parts(X) - st.value(X)).max())
    err_ball = 0.0
    if n_ball > 0:
        B = uniform_ball(n_ball, instance.dim, seed=seed)
        err_ball = float(np.abs(parts(B) - st.value(B)).max())
    L = parts.activation.lipschitz(parts.radius_global + 1.0)
    formula = (staircase_gate_count(parts.width, parts.radius_global, L, parts.weight_bound,
                                    margin) if L > 0 else 0)
    return st, {"n_gates": st.n_gates, "margin": margin, "error_bound": st.error_bound,
                "max_error_support": err_support, "max_error_ball": err_ball,
                "n_ball_points": n_ball, "holds": max(err_support, err_ball) <= st.error_bound,
                "gate_count_formula_global_uniform": formula,
                "radius_exact_max": float(parts.radius_exact.max()),
                "radius_global": parts.radius_global, "steps": list(st.steps)}


def check_shift_identity(network, instance, *, seed: int, n_shifts: int = 4) -> dict:
    """N∘R_{r,s} is a depth-2 net with N∘R_{r,s}(x_{a,b}) = N(x_{a⊕r,b⊕s}) (THEORY §4.3)."""
    from networks.reduction import random_shifts, shifted_network, value_matrix

    n = instance.n
    X = instance.support().points
    V = value_matrix(network(X), n)
    idx = np.arange(1 << n)
    worst = 0.0
    shifts = random_shifts(n, n_shifts, seed=seed)
    for r, s in shifts.tolist():
        Vs = value_matrix(shifted_network(network, instance, r, s)(X), n)
        worst = max(worst, float(np.abs(Vs - V[np.ix_(idx ^ r, idx ^ s)]).max()))
    return {"shifts": shifts.tolist(), "max_abs_error": worst, "holds": worst <= 1e-9}


def correlation_route(network, instance, gamma: float) -> dict:
    """The §4.7 width lower bound (no quantisation, no self-reduction)."""
    from networks.reduction import correlation_width_bound
    from networks.reduction._common import depth2_parts

    parts = depth2_parts(network)
    R = parts.radius_global
    act = parts.activation
    w = correlation_width_bound(instance.n, gamma, parts.weight_bound, act.sup_abs(R),
                                act.total_variation(R))
    return {"width_lower_bound": w, "width": parts.width, "holds": parts.width >= w}


def run_one(args, *, n: int, width: int, out: "Path | None", progress: bool, figure: bool = True):
    """Train + steps 1–4 for one (n, width); returns the report dict (written if ``out``)."""
    from circuits.utils.errors import ReductionError
    from circuits.utils.files import write_json_atomic
    from embeddings import HardInstance
    from networks.reduction import reduce_network, support_mse

    t_all = time.perf_counter()
    timings = {}
    t0 = time.perf_counter()
    instance = HardInstance(n, args.m, seed=args.seed)
    timings["instance"] = time.perf_counter() - t0
    net, train_info = train_network(instance, width=width, activation=args.activation,
                                    gamma=args.gamma, epochs=args.epochs, lr=args.lr,
                                    seed=args.seed, progress=progress)
    timings["train"] = train_info["train_seconds"]
    mse = support_mse(net, instance)
    H = 1.0 - 2.0 * instance.support().labels.astype(np.float64)
    rho = float(np.mean(H * (1.0 - 2.0 * net(instance.support().points))))
    record = {"n": n, "m": instance.m, "d": instance.dim, "width": width,
              "activation": net.activation.name, "seed": args.seed, "mse": mse,
              "gamma": 0.25 - mse, "rho": rho, "training": train_info,
              "instance": instance.summary().to_dict(), "versions": _versions()}
    if rho <= 0:
        record.update(error=f"the trained network does not beat the trivial predictor (ρ = "
                            f"{rho:.4g} <= 0); train longer (--epochs) or wider (--width)",
                      sign_agrees_everywhere=False, chain_ok=False)
        if out is not None:
            write_json_atomic(out / "report.json", record)
        return record
    t0 = time.perf_counter()
    st, st_info = check_staircase(net, instance, margin=max(rho / 4, 1e-3),
                                  n_ball=args.ball_points, seed=args.seed)
    timings["staircase"] = time.perf_counter() - t0
    record["shift_identity"] = check_shift_identity(net, instance, seed=args.seed)
    t0 = time.perf_counter()
    try:
        report = reduce_network(net, instance, k=args.k, seed=args.seed, k_max=args.k_max,
                                circuit=not args.no_circuit, circuit_margin=args.circuit_margin,
                                progress=progress)
    except ReductionError as exc:          # e.g. κ = 0 for a step activation (THEORY §4.6)
        record.update(error=str(exc), sign_agrees_everywhere=False, chain_ok=False,
                      correlation_route=correlation_route(net, instance, 0.25 - mse))
        if out is not None:
            write_json_atomic(out / "report.json", record)
        return record
    timings["reduction"] = time.perf_counter() - t0
    timings.update({f"reduction.{k}": v for k, v in report.timings.items()})
    rd = report.to_dict()
    rd.pop("timings", None)
    record.update(rd)
    record["staircase"] = st_info
    record["training"] = train_info
    record["versions"] = _versions()
    timings["total"] = time.perf_counter() - t_all
    record["timings"] = timings
    if out is not None:
        if figure:
            t0 = time.perf_counter()
            plot_report(report, out / "reduction.png")
            record["figure"] = str(out / "reduction.png")
            timings["figure"] = time.perf_counter() - t0
        write_json_atomic(out / "report.json", record)
    record["_report"] = report
    record["_staircase"] = st
    return record


def plot_report(report, path: Path) -> None:
    """Margins H·Ñ before and H·M_k after the self-reduction; min margin vs k."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from circuits.utils.files import savefig_atomic
    from networks.reduction import ip_sign_matrix

    red = report.reduction
    H = ip_sign_matrix(report.n)
    before = (H * report.quantised.value_matrix()).ravel()
    after = red.margins.ravel()
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    bins = np.linspace(min(before.min(), after.min()), max(before.max(), after.max()), 80)
    ax1.hist(before, bins=bins, alpha=0.6, label="before: H·Ñ_q(x_{a,b})")
    ax1.hist(after, bins=bins, alpha=0.6, label=f"after: H·M_k, k = {red.k}")
    ax1.set_yscale("log")
    ax1.axvline(0, color="k", lw=0.8)
    ax1.axvline(red.rho, color="C2", ls="--", lw=1, label=f"ρ = {red.rho:.3f}")
    ax1.set_xlabel("margin")
    ax1.set_ylabel(f"pairs (a, b) of {4 ** report.n}")
    ax1.set_title(f"n = {report.n}, w = {report.width}, {report.activation}")
    ax1.legend(fontsize=8)
    ks = np.arange(1, red.k + 1)
    ax2.plot(ks, red.prefix_margins, lw=1, label="min_{a,b} H·M_k (exact, all 4^n pairs)")
    ax2.axhline(0, color="k", lw=0.8)
    ax2.axhline(0.75 * red.rho, color="C2", ls="--", lw=1, label="3ρ/4 (Hoeffding target)")
    k_h = red.hoeffding()
    if k_h <= red.k:
        ax2.axvline(k_h, color="C3", ls=":", lw=1, label=f"Hoeffding k (M_emp) = {k_h}")
    if red.stable_k is not None:
        ax2.axvline(red.stable_k, color="C1", ls=":", lw=1, label=f"least working k = {red.stable_k}")
    ax2.set_xscale("log")
    ax2.set_xlabel("k (copies)")
    ax2.set_ylabel("min margin")
    ax2.set_title("uniform margin after k twisted shifts")
    ax2.legend(fontsize=8)
    fig.tight_layout()
    savefig_atomic(fig, path, dpi=110)
    plt.close(fig)


def print_report(record: dict) -> None:
    report = record["_report"]
    st = record["staircase"]
    tc = record.get("threshold_circuit")
    print(f"\n== depth-2 {record['activation']} network, n = {record['n']} (d = {record['d']}), "
          f"width {record['width']}, seed {record['seed']} ==")
    print(f"training: {record['training']['epochs_run']} epochs "
          f"({record['training']['train_seconds']:.1f} s), MSE = {record['mse']:.4f} "
          f"(γ = {record['gamma']:.4f}), ρ = {record['rho']:.4f}")
    if "conversion" in record["training"]:
        print(f"  {record['training']['conversion']}")
    rows = [
        ("1 staircase gates (real weights)", st["n_gates"], "error bound / measured",
         f"{st['error_bound']:.3g} / {max(st['max_error_support'], st['max_error_ball']):.3g}"),
        ("2 quantisation grid η", f"{report.quantised.eta:.3g}",
         "K measured / bound", f"{report.quantised.K} / {report.quantised.K_bound}"),
    ]
    if tc is not None:
        rows.append(("2 integer circuit size, depth", f"{tc['size']}, {tc['depth']}",
                     "max|weight|", str(tc["max_abs_weight"])))
        rows.append(("2 circuit vs IP (avg-case net)", f"{tc['n_errors_ip']} errors",
                     "vs [N_C >= 1/2]", f"{tc['n_disagree_real']} disagreements"))
    red = report.reduction
    rows += [
        ("3 copies k (least working)", f"{red.k} ({red.stable_k})", "min H·M_k (before)",
         f"{red.min_margin:.4f} ({red.margin_before:.4f})"),
        ("3 sign(M_k) = IP on all 4^n", str(red.sign_agrees_everywhere), "sign errors",
         str(red.n_sign_errors)),
    ]
    b = report.certificate.bounds
    rows.append(("4 Forster 2^{n/2} <= rank M_k", f"{b['forster']:.4g} <= {b.get('rank_Mk', '-')}",
                 "<= k(1 + sum min K)", str(b["rank_bound_Mk"])))
    rows.append(("4 implied width lower bound", f"{b['width_bound_measured']:.3g}",
                 "§4.0 / §4.7", f"{b['width_bound_theory']:.3g} / {b['width_bound_correlation']:.3g}"))
    for a, v, c, dv in rows:
        print(f"  {a:<34} {str(v):>22}   {c:<24} {dv}")
    n4 = 4 ** record["n"]
    if red.sign_agrees_everywhere:
        print(f"=> the average of k = {red.k} twisted copies (a depth-2 net of width "
              f"{red.k * record['width']}) has sign = IP on all {n4} inputs, margin "
              f"{red.min_margin:.4f}; the network alone errs on "
              f"{int((report.quantised.value_matrix(original=True) * _H(record['n']) <= 0).sum())}"
              f" of them.")
    if b["width_bound_measured"] < 1:
        print(f"   (the width bounds are vacuous at n = {record['n']}: the chain gives w >= 1 only "
              f"once 2^(n/2) >= k(1 + K); see --sweep for where §4.7 takes over)")
    print("\nchain of inequalities (THEORY §4.5, §4.7):")
    print(report.certificate.table())
    print(f"\nall links hold: {report.ok}; total {record['timings']['total']:.1f} s")


def _H(n: int) -> np.ndarray:
    from networks.reduction import ip_sign_matrix

    return ip_sign_matrix(n)


def run_sweep(args, out: Path, progress: bool) -> int:
    from circuits.utils.files import write_json_atomic

    widths = args.sweep_widths or [args.width]
    rows = []
    for n in args.sweep_n:
        for w in widths:
            rec = run_one(args, n=n, width=w, out=None, progress=progress, figure=False)
            row = {k: rec.get(k) for k in ("n", "m", "width", "activation", "mse", "rho", "k",
                                           "least_k", "stable_k", "K", "min_margin",
                                           "sign_agrees_everywhere", "chain_ok", "error")}
            if "bounds" in rec:
                bnd = rec["bounds"]["bounds"]
                row.update({k: bnd.get(k) for k in ("forster", "rank_Mk", "rank_bound_Mk",
                                                    "k_hoeffding_emp", "k_hoeffding_theory",
                                                    "K_bound_theory", "width_bound_measured",
                                                    "width_bound_theory",
                                                    "width_bound_correlation", "B",
                                                    "S_sigma", "TV_sigma")})
                row["gamma"] = rec.get("gamma")
            if rec.get("threshold_circuit"):
                tc = rec["threshold_circuit"]
                row.update(circuit_size=tc["size"], circuit_max_abs_weight=tc["max_abs_weight"])
            row["staircase_gates"] = rec.get("staircase", {}).get("n_gates")
            row["seconds"] = rec.get("timings", {}).get("total")
            rows.append(row)
            print(f"n={n:>2} w={w:>4}: MSE {row['mse']:.4f} ρ {row['rho']:.4f} k {row['k']} "
                  f"(least {row['stable_k']}) sign ok {row['sign_agrees_everywhere']} "
                  f"circuit {row.get('circuit_size')} gates, width bound (chain) "
                  f"{row.get('width_bound_measured')}")
            write_json_atomic(out / "sweep.json", {"rows": rows, "versions": _versions(),
                                                   "args": {k: v for k, v in vars(args).items()}})
    plot_sweep(rows, out / "sweep.png")
    return 0 if all(r.get("sign_agrees_everywhere") for r in rows) else 1


def plot_sweep(rows: list, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from circuits.utils.files import savefig_atomic

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    for w in sorted({r["width"] for r in rows}):
        rs = [r for r in rows if r["width"] == w and r.get("k")]
        ns = [r["n"] for r in rs]
        for key, style in (("circuit_size", "o-"), ("k", "s--"), ("K", "^:"),
                           ("rank_bound_Mk", "v-.")):
            vals = [r.get(key) for r in rs]
            if any(v for v in vals):
                ax1.plot(ns, [math.log2(v) if v else np.nan for v in vals], style,
                         label=f"{key}, w = {w}")
        last = rs[-1] if rs else None
        if last and last.get("B") is not None and last["gamma"] > 0:
            from networks.reduction import correlation_width_bound

            grid = np.arange(2, 97)
            wb = np.array([correlation_width_bound(int(n), last["gamma"], last["B"],
                                                   last["S_sigma"], last["TV_sigma"])
                           for n in grid])
            ax2.plot(grid, np.where(wb > 0, np.log2(np.maximum(wb, 1e-300)), np.nan), "-",
                     label=f"§4.7 bound at γ = {last['gamma']:.3f}, B = {last['B']:.2f} "
                           f"(w = {w} run, n = {last['n']})")
            ax2.axhline(math.log2(w), ls=":", lw=0.8, color="grey")
    ns_all = sorted({r["n"] for r in rows})
    ax1.plot(ns_all, [n / 2 for n in ns_all], "k-", lw=1, label="log2 Forster 2^{n/2}")
    ax1.set_xlabel("n")
    ax1.set_ylabel("log2")
    ax1.set_title("measured sizes of the reduction")
    ax1.legend(fontsize=7)
    ax2.set_xlabel("n (same γ, B, σ)")
    ax2.set_ylabel("log2 certified width lower bound")
    ax2.set_title("when the §4.7 bound exceeds the width (dotted)")
    ax2.legend(fontsize=7)
    fig.tight_layout()
    savefig_atomic(fig, path, dpi=110)
    plt.close(fig)


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.n < 1 or args.width < 1:
        parser.error(f"--n and --width must be >= 1, got {args.n}, {args.width}")
    if args.k is not None and args.k < 1:
        parser.error(f"--k must be >= 1 (copies of the network), got {args.k}")
    if not 0 < args.gamma < 0.25:
        parser.error(f"--gamma must lie in (0, 1/4), got {args.gamma}")
    from networks import get_activation

    try:
        get_activation(args.activation)
    except Exception as exc:            # unknown name: show the registry's message
        parser.error(str(exc))
    out = Path(args.out)
    progress = not args.no_progress
    if args.sweep:
        return run_sweep(args, out, progress)
    rec = run_one(args, n=args.n, width=args.width, out=out, progress=progress)
    if "error" in rec:
        print(rec["error"])
        print(f"wrote {out / 'report.json'}")
        return 1
    print_report(rec)
    print(f"wrote {out / 'report.json'} and {out / 'reduction.png'}")
    return 0 if rec["sign_agrees_everywhere"] and rec["chain_ok"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
