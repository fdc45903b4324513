"""E22: radial targets on the unit ball — depth 2 suffices (Safran–Eldan–Shamir 2019; THEORY §3.5,
§3.6, §5 row E22), with SES Theorem 4's oscillating target as the contrast.

For each target, dimension d and accuracy ε the script reports
* ``ridge``: the smallest depth-2 ReLU ridge network N(x) = (1/N)Σ_j p(⟨w_j, x⟩) (profile p from a
  linear programme on the exact one-dimensional kernel, N directions, N a power of two) whose sup
  error is ≤ ε, measured on a dense sample of B_d and after adversarial local maximisation from the
  worst sample points (library: networks.separation.radial.ridge_depth2);
* ``ses_d3``: SES's d = 3 ridge route g = φ + rφ' (d = 3 only);
* ``depth3``: the ‖x‖² net composed with the univariate interpolant (depth 3, certified bound);
* ``trained``: the smallest width at which a trained depth-2 ReLU net reaches L2 (RMS) error ≤ ε
  under the uniform distribution on B_d (dims in ``--train-dims``), with the best constant's error.
Targets: hat = max(0, 1 - ‖x‖), cos = cos(π‖x‖)/π, and t4 = sin(2πd³‖x‖²) (SES Theorem 4's target
times 2πd³, i.e. errors relative to its amplitude) at ``--t4-dims``.

Outputs in ``--out`` (default results/radial): radial.json (atomic) and radial.png (width against d
for fixed ε and against 1/ε for fixed d, log axes).

Examples
--------
    python experiments/radial.py                         # 23 s (warm cache, 2 cores)
    python experiments/radial.py --dims 2,4,8 --eps 0.2,0.05 --no-progress --out /tmp/radial
    python experiments/radial.py --max-directions 65536 --dims 2,4,8,16,32,64
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from circuits.utils.cli import int_in_range

FORMAT = "depthsep.experiments.radial"
VERSION = 1


def _list(text, name, p, conv):
    try:
        vals = [conv(v) for v in text.split(",") if v.strip()]
    except ValueError:
        p.error(f"{name} must be a comma-separated list, got {text!r}")
    if not vals:
        p.error(f"{name} must not be empty")
    return sorted(set(vals))


def build_parser():
    p = argparse.ArgumentParser(allow_abbrev=False, prog="depthsep radial", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dims", default="2,3,4,8,16,32",
                   help="dimensions d for hat and cos; default 2,3,4,8,16,32")
    p.add_argument("--eps", default="0.2,0.1,0.05,0.02", help="accuracies ε; default 0.2,0.1,0.05,0.02")
    p.add_argument("--targets", default="hat,cos", help="radial targets among hat, cos; default both")
    p.add_argument("--t4-dims", default="2,3",
                   help="dimensions for the t4 contrast ('' to skip); default 2,3")
    p.add_argument("--train-dims", default="2,4,8",
                   help="dimensions at which depth-2 nets are trained ('' to skip); default 2,4,8")
    p.add_argument("--max-directions", type=int, default=2048,
                   help="largest number of ridge directions tried (powers of two); default 2048")
    p.add_argument("--max-knots", type=int, default=128,
                   help="largest number of profile knots in the ridge LP (doubling from 1); "
                        "default 128")
    p.add_argument("--max-train-width", type=int, default=64,
                   help="largest trained width (powers of two from 1); default 64")
    p.add_argument("--epochs", type=int, default=600, help="Adam epochs per trained net; default 600")
    p.add_argument("--points", type=int, default=None,
                   help="dense sample size for the sup-error search (plus adversarial ascent); "
                        "default 1000 + 500 d (scaled with d, like the ascent's starts and steps)")
    p.add_argument("--seed", type=int_in_range(0, 2**32 - 1, what="a numpy seed"), default=0,
                   help="seed of directions, samples and training, 0..2^32-1; default 0")
    p.add_argument("--out", default="results/radial",
                   help="output directory; default results/radial")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--no-plot", action="store_true", help="skip the PNG")
    return p


def parse_args(argv=None):
    p = build_parser()
    a = p.parse_args(argv)
    a.dims = _list(a.dims, "--dims", p, int)
    a.eps = _list(a.eps, "--eps", p, float)
    a.targets = _list(a.targets, "--targets", p, str)
    a.t4_dims = _list(a.t4_dims, "--t4-dims", p, int) if a.t4_dims.strip() else []
    a.train_dims = _list(a.train_dims, "--train-dims", p, int) if a.train_dims.strip() else []
    if min(a.dims + a.t4_dims + a.train_dims) < 2 or max(a.dims + a.t4_dims + a.train_dims) > 256:
        p.error("dimensions must lie in 2..256")
    if any(not 0 < e < 1 for e in a.eps):
        p.error(f"--eps values must lie in (0, 1), got {a.eps}")
    if any(t not in ("hat", "cos") for t in a.targets):
        p.error(f"--targets must be among hat, cos, got {a.targets}")
    for name in ("max_directions", "max_knots", "max_train_width", "epochs", "points"):
        if getattr(a, name) is not None and getattr(a, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be >= 1, got {getattr(a, name)}")
    if a.max_directions > 1 << 20:
        p.error("--max-directions must be <= 1048576")
    from circuits.utils.cli import check_output_dir

    a.out = str(check_output_dir(p, a.out))
    return a


def _jobs(a):
    cells = [(t, d) for t in a.targets for d in a.dims] + [("t4", d) for d in a.t4_dims]
    return cells


def run(a) -> dict:
    import scipy

    from circuits.utils.progress import progress_bar
    from networks.constructions import ses_theorem4_depth3
    from networks.separation import radial as R

    t0 = time.perf_counter()
    rows = []
    cells = _jobs(a)
    # trained nets: hat/cos at --train-dims, t4 at --t4-dims (skipped when --train-dims is '')
    train_cells = [(t, d) for t in a.targets for d in a.train_dims] + \
                  ([("t4", d) for d in a.t4_dims] if a.train_dims else [])
    with progress_bar(len(cells) + len(train_cells), enabled=not a.no_progress, desc="radial",
                      unit="cell") as bar:
        for tgt, d in cells:
            ts = time.perf_counter()
            pts = a.points or R.search_effort(d)["points"]
            ridge = R.ridge_depth2(tgt, d, a.eps, max_directions=a.max_directions,
                                   points=a.points, seed=a.seed, max_knots=a.max_knots)
            ses = R.ses_ridge_d3(tgt, a.eps, max_directions=a.max_directions,
                                 points=a.points or R.search_effort(3)["points"],
                                 seed=a.seed) if d == 3 and tgt != "t4" else {}
            for e in a.eps:
                rows.append({"target": tgt, "d": d, "eps": e, "method": "ridge", "depth": 2,
                             **ridge[e]})
                if ses:
                    rows.append({"target": tgt, "d": d, "eps": e, "method": "ses_d3", "depth": 2,
                                 **ses[e]})
                if tgt == "t4":
                    amp = 1.0 / (2 * np.pi * d ** 3)
                    c = ses_theorem4_depth3(d, e * amp)
                    X = R.dense_sample(d, pts, seed=a.seed)
                    err = c.measured_error(X) / amp
                    rows.append({"target": tgt, "d": d, "eps": e, "method": "depth3", "depth": 3,
                                 "width": int(sum(c.widths)), "widths": list(c.widths),
                                 "bound": c.error_bound / amp, "sup": err, "dense": err,
                                 "construction": "ses_theorem4_depth3"})
                else:
                    rows.append({"target": tgt, "d": d, "eps": e, "method": "depth3",
                                 **R.composition_depth3(tgt, d, e, points=pts,
                                                        seed=a.seed)})
            bar.update(1)
            bar.set_postfix(target=tgt, d=d, sec=f"{time.perf_counter() - ts:.1f}")
        for tgt, d in train_cells:
            tr = R.trained_widths(tgt, d, a.eps, max_width=a.max_train_width, epochs=a.epochs,
                                  seed=a.seed)
            for e in a.eps:
                rows.append({"target": tgt, "d": d, "eps": e, "method": "trained", "depth": 2,
                             "width": tr["smallest"][e], "l2_by_width": dict(zip(tr["widths"],
                                                                                 tr["l2"])),
                             "constant_l2": tr["constant_l2"], "max_width": tr["max_width"],
                             "seconds": tr["seconds"]})
            bar.update(1)
    return {"format": FORMAT, "version": VERSION, "experiment": "E22 radial targets",
            "settings": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(a).items()},
            "seeds": {"base": a.seed},
            "versions": {"python": sys.version.split()[0], "numpy": np.__version__,
                         "scipy": scipy.__version__, "platform": platform.platform()},
            "rows": rows, "seconds": time.perf_counter() - t0}


def table(record) -> str:
    eps = record["settings"]["eps"]
    lines = ["width reaching error <= eps.  ridge/ses_d3/depth3: the sup error found by a search "
             "(dense sample + adversarial ascent, scaled with d) is <= eps -- a LOWER bound on "
             "the sup error, so the width is 'not refuted'; '*' = certified (an upper bound on "
             "the sup error <= eps: hat only, exact at d = 2, branch-and-bound at d = 3); "
             "trained: L2 (RMS) error on the uniform ball, another metric; '>W' = not reached "
             "up to W; '>Wdir!' = direction cap artefact (a zonotope needs ~d/eps^2 directions); "
             "t4 errors relative to its amplitude; hat = the cone 1 - ||x|| (a norm, not SES "
             "Theorem 5's hard case)"]
    head = f"{'target':>6} {'d':>3} {'method':>8} | " + " ".join(f"{'eps=' + str(e):>10}" for e in eps)
    lines += [head, "-" * len(head)]
    keys = []
    for r in record["rows"]:
        k = (r["target"], r["d"], r["method"])
        if k not in keys:
            keys.append(k)
    by = {(r["target"], r["d"], r["method"], r["eps"]): r for r in record["rows"]}
    for k in sorted(keys, key=lambda k: (k[0], k[2], k[1])):
        cells = []
        for e in eps:
            r = by.get(k + (e,))
            if r is None:
                cells.append(f"{'':>10}")
            elif r.get("width") is None:
                cap = r.get("max_width") or record["settings"]["max_directions"]
                mark = "" if k[2] == "trained" else ("dir!" if r.get("cap_artefact") else "dir")
                cells.append(f"{'>' + str(cap) + mark:>10}")
            else:
                cells.append(f"{str(r['width']) + ('*' if r.get('certified') else ''):>10}")
        lines.append(f"{k[0]:>6} {k[1]:>3} {k[2]:>8} | " + " ".join(cells))
    tr = [r for r in record["rows"] if r["method"] == "trained"]
    if tr:
        lines.append("")
        lines.append("best-constant L2 error on the uniform ball: " + ", ".join(
            sorted({f"{r['target']} d={r['d']}: {r['constant_l2']:.3f}" for r in tr})))
    return "\n".join(lines)


#: Words for the figure (no raw identifiers).
TARGET_WORDS = {"hat": "cone 1 - ||x||", "cos": "cos(pi ||x||)/pi",
                "t4": "SES Thm 4: sin(2 pi d^3 ||x||^2)"}
METHOD_WORDS = {"ridge": "depth 2, ridge net (LP profile)", "depth3": "depth 3, ||x||^2 then profile",
                "ses_d3": "depth 2, SES ridge route (d = 3)", "trained": "depth 2, trained (Adam)"}


def plot(record, path) -> Path:
    from matplotlib.ticker import FixedLocator, NullFormatter, NullLocator

    from circuits.utils.files import savefig_atomic
    from experiments._style import (SOURCE_MARKERS, depth_linestyle, pyplot,
                                    target_colour)

    rows = [r for r in record["rows"] if r.get("width")]
    eps = record["settings"]["eps"]
    with pyplot() as plt:
        fig, (a1, a2, a3) = plt.subplots(1, 3, figsize=(16, 7.6))
        # house style: colour = target, line style = depth, marker = how the width was obtained
        styles = {"ridge": (depth_linestyle(2), SOURCE_MARKERS["search"]),
                  "ses_d3": (depth_linestyle(2), "D"),
                  "depth3": (depth_linestyle(3), SOURCE_MARKERS["exact"])}
        colors = {t: target_colour(t) for t in ("hat", "cos", "t4")}
        e_fix = max(eps)                   # panel (a): the largest accuracy, the one the text quotes

        def draw(ax, pts, tgt, meth, label):
            xs, ys, cert = zip(*pts)
            ls, mk = styles[meth]
            ax.plot(xs, ys, linestyle=ls, marker=mk, color=colors[tgt], label=label,
                    markerfacecolor="none")
            full = [(x, y) for x, y, c in pts if c]
            if full:
                ax.plot(*zip(*full), linestyle="none", marker=mk, color=colors[tgt])

        for tgt in colors:
            for meth in styles:
                pts = sorted((r["d"], r["width"], bool(r.get("certified"))) for r in rows
                             if r["target"] == tgt and r["method"] == meth and r["eps"] == e_fix)
                if pts:
                    draw(a1, pts, tgt, meth, f"{TARGET_WORDS[tgt]}: {METHOD_WORDS[meth]}")
        dims = sorted({r["d"] for r in record["rows"]})
        a1.set_xscale("log", base=2)
        a1.set_yscale("log")
        a1.xaxis.set_major_locator(FixedLocator(dims))
        a1.xaxis.set_minor_locator(NullLocator())
        a1.set_xticklabels([str(d) for d in dims])
        a1.set_xlabel("dimension d")
        a1.set_ylabel(f"width whose searched sup error is <= {e_fix}")
        a1.set_title(f"(a) sup error <= {e_fix}: width against dimension", fontsize=9)
        sdims = sorted({r["d"] for r in record["rows"] if r["target"] != "t4"})
        d_fix = sdims[len(sdims) // 2] if sdims else None
        for tgt in colors:
            for meth in styles:
                dd = d_fix if tgt != "t4" else min((r["d"] for r in rows if r["target"] == "t4"),
                                                   default=None)
                pts = sorted((1.0 / r["eps"], r["width"], bool(r.get("certified"))) for r in rows
                             if r["target"] == tgt and r["method"] == meth and r["d"] == dd)
                if pts:
                    draw(a2, pts, tgt, meth, f"{TARGET_WORDS[tgt]} (d = {dd}): {METHOD_WORDS[meth]}")
        a2.set_xscale("log")
        a2.set_yscale("log")
        inv = sorted({1.0 / e for e in eps})
        a2.xaxis.set_major_locator(FixedLocator(inv))
        a2.xaxis.set_minor_locator(NullLocator())
        a2.set_xticklabels([f"{x:g}" for x in inv])
        a2.set_xlabel("1 / accuracy (sup error)")
        a2.set_ylabel("width")
        a2.set_title(f"(b) sup error: width against 1/accuracy (cone, cos at d = {d_fix})",
                     fontsize=9)
        # (c) trained nets: another metric (L2 on the uniform ball), on its own axis
        tr = {}
        for r in record["rows"]:
            if r["method"] == "trained":
                tr[(r["target"], r["d"])] = r
        marks = ["o", "s", "^", "D", "v", "P"]
        tdims = sorted({k[1] for k in tr})
        for (tgt, d), r in sorted(tr.items()):
            pts = sorted((int(w), v) for w, v in r["l2_by_width"].items())
            a3.plot(*zip(*pts), color=colors[tgt], marker=marks[tdims.index(d) % len(marks)],
                    linestyle=depth_linestyle(2),
                    label=f"{TARGET_WORDS[tgt]}, d = {d} (best constant {r['constant_l2']:.3f})")
        for e in eps:
            a3.axhline(e, color="grey", lw=0.6, ls="--")
        a3.set_xscale("log", base=2)
        a3.set_yscale("log")
        a3.set_xlabel("hidden width of the trained depth-2 net")
        a3.set_ylabel("L2 (RMS) error on fresh uniform points of B_d")
        a3.set_title("(c) trained depth 2: L2 error (not a sup error; dashed: the accuracies)",
                     fontsize=9)
        yt = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0]
        a3.yaxis.set_major_locator(FixedLocator(yt))
        a3.yaxis.set_minor_formatter(NullFormatter())
        a3.set_yticklabels([f"{y:g}" for y in yt])
        wt = sorted({int(w) for r in tr.values() for w in r["l2_by_width"]})
        if wt:
            a3.xaxis.set_major_locator(FixedLocator(wt))
            a3.xaxis.set_minor_locator(NullLocator())
            a3.set_xticklabels([str(w) for w in wt])
        for ax in (a1, a2, a3):
            ax.grid(True, which="major", alpha=0.3)
            ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.13), frameon=False)
        fig.suptitle(f"E22: radial targets on the unit ball B_d.  (a) at ε = {e_fix:g}, (b) at "
                     f"d = {d_fix}: widths whose sup error, "
                     f"found by a search scaled with d, is <= the accuracy (a lower bound on the error;"
                     f" filled = certified upper bound <= accuracy); missing = not reached within "
                     f"{record['settings']['max_directions']} directions.  (c): trained nets, L2 "
                     f"error, a different metric.  The depth-3 widths of the cone and of cos "
                     f"coincide (both 1-Lipschitz).", fontsize=8.5, wrap=True)
        fig.tight_layout(rect=(0, 0, 1, 0.94))
        try:
            return savefig_atomic(fig, path, dpi=110)
        finally:
            plt.close(fig)


def main(argv=None) -> int:
    from experiments._outputs import run_table

    return run_table(parse_args(argv), run, table, name="radial",
                     figures=lambda record, out: plot(record, out / "radial.png"))


if __name__ == "__main__":
    raise SystemExit(main())
