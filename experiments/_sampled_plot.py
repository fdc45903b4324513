"""The figure of E24 (``depthsep separate-sampled``): Cov/P against the proven centred IP
ceilings, the ρ_h–P trade-off over λ, and the depth axis (proven numbers); private."""

from __future__ import annotations

from statistics import median as _stat_median


def _median(xs):
    return float(_stat_median(xs))


def plot(doc, png):
    """Cov(S, h)/P against n with intervals and the proven centred IP ceiling, in the house
    style (:mod:`experiments._style`: one colour per target, depth 2 solid, depth 3 dashed, the
    bound dash-dotted, the width rule by line width); ρ_h against the path norm P over the
    penalties λ only when the run has more than one λ (one λ is no trade-off); on the right the
    depth axis (:func:`_depth_axis`)."""
    try:
        from experiments._style import (REFERENCE_COLOURS, SOURCE_MARKERS, TARGET_NAMES,
                                        depth_linestyle, legend_below, pyplot, target_colour)
    except ImportError:                                     # pragma: no cover
        return
    from circuits.utils.files import savefig_atomic
    from networks.separation.sampled_verdict import centred_ceiling_per_norm, ip_ceiling_per_norm

    rows = list(doc["rows"].values())
    if not rows:
        return
    table = doc.get("table") or []     # run() summarises before plotting
    lams = sorted({r["penalty"] for r in rows})
    rules = sorted({r["width_rule"] for r in rows})
    lw = {rule: 1.0 + 1.2 * i for i, rule in enumerate(rules)}
    name = {t: TARGET_NAMES.get(t, t) for t in {r["target"] for r in rows}}
    with pyplot() as plt:
        trade = len(lams) > 1
        fig, axes = plt.subplots(1, 3 if trade else 2, figsize=(17 if trade else 13, 6.2))
        ax, cx = axes[0], axes[-1]
        lines: dict = {}
        for e in table:
            lines.setdefault((e["target"], e["width_rule"], e["penalty"]), []).append(e)
        multi = any(len(e["seeds"]) > 1 for e in table)
        for (t, rule, lam), es in sorted(lines.items()):
            es.sort(key=lambda e: e["n"])
            x = [e["n"] for e in es]
            k = max(len(e["seeds"]) for e in es)
            y = [max(e["best"]["cov_per_norm"], 1e-5) for e in es]
            err = [e["best"]["ci_per_norm"] for e in es]
            ax.errorbar(x, y, yerr=err, marker=SOURCE_MARKERS["trained"], capsize=3,
                        color=target_colour(t), ls=depth_linestyle(2), lw=lw[rule],
                        label=f"depth 2 trained, {name[t]}, width {rule}"
                              + (f", λ = {lam:g}" if trade else "") + (f", best of {k}" if k > 1
                                                                          else ""))
            if k > 1:                                   # the median over seeds, its interval
                ym = [max(e["median"]["cov_per_norm"], 1e-5) for e in es]
                lo = [max(a - max(e["median"]["lower"], 1e-5), 0.0) for a, e in zip(ym, es)]
                hi = [max(max(e["median"]["upper"], 1e-5) - a, 0.0) for a, e in zip(ym, es)]
                ax.errorbar([v + 0.25 for v in x], ym, yerr=[lo, hi], marker="s", ls=":",
                            capsize=2, color=target_colour(t), alpha=0.6, lw=lw[rule],
                            label=f"{name[t]}, width {rule}, median of {k}")
        ns = sorted({r["n"] for r in rows})
        xs = list(range(min(ns), max(max(ns), 24) + 1))
        ax.plot(xs, [centred_ceiling_per_norm(n) for n in xs], color=REFERENCE_COLOURS["bound"],
                ls=depth_linestyle("bound"),
                label="proven centred ceiling K_n + 2^(1-n) for every depth-2 net on IP "
                      "(Toeplitz gate lemma)")
        ax.plot(xs, [centred_ceiling_per_norm(n, lemma="dyadic") for n in xs],
                color=REFERENCE_COLOURS["bound"], ls=depth_linestyle("bound"), lw=0.7, alpha=0.6,
                label="the same with the dyadic gate lemma (n + 1), used before")
        ax.set_yscale("log")
        ax.set_xlabel("n (bits per party)")
        ax.set_ylabel("Cov(S, h) / P (centred hidden-unit correlation per path norm)")
        ax.set_title("per-norm gap at depth 2: Cov/P against the proven IP ceiling"
                     + ("" if trade else f" (λ = {lams[0]:g})"))
        if trade:
            bx = axes[1]
            curves: dict = {}
            for r in rows:
                curves.setdefault((r["n"], r["target"], r["width_rule"]), []).append(r)
            nsz = {n: 3 + 2 * i for i, n in enumerate(ns)}
            for (n, t, rule), rs in sorted(curves.items()):
                by_lam: dict = {}
                for r in rs:
                    by_lam.setdefault(r["penalty"], []).append(r)
                order = sorted(by_lam, key=lambda lam: _median([r["estimate"]["path_norm"]
                                                                for r in by_lam[lam]]))
                P = [_median([r["estimate"]["path_norm"] for r in by_lam[lam]]) for lam in order]
                rh = [_median([r["estimate"]["rho_h"]["mean"] for r in by_lam[lam]])
                      for lam in order]
                bx.plot(P, rh, marker=SOURCE_MARKERS["trained"], ms=nsz[n],
                        color=target_colour(t), lw=lw[rule], ls=depth_linestyle(2),
                        label=f"{name[t]}, width {rule} (marker size: n = {', '.join(map(str, ns))})")
            pm = max(r["estimate"]["path_norm"] for r in rows) * 1.05
            bx.plot([0, pm], [0, ip_ceiling_per_norm(max(ns)) * pm],
                    color=REFERENCE_COLOURS["bound"], ls=depth_linestyle("bound"),
                    label=f"IP ceiling K_n·P at n = {max(ns)}")
            bx.set_ylim(bottom=0)
            bx.set_xlabel("path norm P")
            bx.set_ylabel("ρ_h")
            bx.set_title(f"ρ_h against P over λ = {', '.join(f'{v:g}' for v in lams)}")
        _depth_axis(cx, doc)
        nrows = legend_below(fig, axes, ncol=3, bottom=0.055)
        first = doc.get("first_certified_n")
        st = doc["settings"]
        cap = (f"Depth-2 ReLU nets, {st['steps']} Adam steps on fresh {st['grid']}² grids of "
               f"pairs; Cov on {st['pairs']:.0e} fresh i.i.d. pairs per net; bars: "
               f"empirical-Bernstein half-width (δ = {st['delta']}"
               + (", Bonferroni over a cell's seeds" if multi else "")
               + "); values ≤ 1e-5 drawn at 1e-5. "
               + (f"First n with a certified per-norm gap between IP and an easy target at "
                  f"depth 2 (Cov/P − CI > K_n + 2^(1-n)): {first} (dyadic lemma: "
                  f"{doc.get('first_certified_n_dyadic')}); not a depth separation: the "
                  f"proven depth-2 norm bound passes the depth-3 net's norm only at "
                  f"n* = {doc.get('crossing_n_star')} (right; a comparison of proven numbers)."
                  if first else "No n certified in this run (Cov/P − CI ≤ K_n + 2^(1-n) "
                  "everywhere)."))
        fig.text(0.01, 0.005, cap, fontsize=7.5, wrap=True)
        fig.tight_layout(rect=(0, 0.04 * nrows + 0.07, 1, 1))
        savefig_atomic(fig, png, dpi=110)
        plt.close(fig)


def _depth_axis(cx, doc) -> None:
    """The depth comparison on a path-norm axis (proven numbers, not measurements): P₃(n) of the
    three exact depth-3 IP nets against the proven least norm of a depth-2 net with ρ = 1 on IP
    under both gate lemmas; the crossings n* marked, the run's n shaded."""
    from experiments._style import REFERENCE_COLOURS, depth_linestyle, target_colour
    from networks.separation.sampled_verdict import crossings, depth_comparison

    cr = doc.get("crossings") or crossings()
    dc = depth_comparison(range(4, cr["before"] + 8))
    x = [d["n"] for d in dc]
    ex, bd = REFERENCE_COLOURS["exact"], REFERENCE_COLOURS["bound"]
    cx.plot(x, [d["depth3_path_norm_tri"] for d in dc], depth_linestyle(3), color=ex, lw=0.8,
            alpha=0.6, label="exact depth-3 IP net of THEORY 3.2: P₃(n) (before)")
    cx.plot(x, [d["depth3_path_norm"] for d in dc], depth_linestyle(3), color=ex, lw=1.8,
            label="balanced exact depth-3 net, widths n, n: P₃(n)")
    cx.plot(x, [d["depth3_path_norm_fourier"] for d in dc], depth_linestyle(3), color=ex, lw=1.2,
            marker="s", ms=2.5, label="Fourier exact depth-3 net, widths n, 2^n: P₃(n)")
    cx.plot(x, [d["depth2_lower_bound"] for d in dc], depth_linestyle("bound"), color=bd, lw=1.8,
            label="any depth-2 net with ρ = 1: P + |u₀| ≥ (1 − 2^-n)/K_n (proven, Toeplitz lemma)")
    cx.plot(x, [d["depth2_lower_bound_dyadic"] for d in dc], depth_linestyle("bound"), color=bd,
            lw=0.8, alpha=0.6, label="the same with the dyadic lemma (before)")
    cx.axvline(cr["before"], color=target_colour("ip"), lw=0.7, ls=":",
               label=f"n* before = {cr['before']}")
    cx.axvline(cr["after"], color=target_colour("ip"), lw=1.2,
               label=f"n* after = {cr['after']} (balanced; {cr['after_width_2n']} at width 2^n)")
    ns = [r["n"] for r in doc["rows"].values()]
    if ns:
        cx.axvspan(min(ns) - 0.5, max(ns) + 0.5, color="#0072B2", alpha=0.12,
                   label="n of this run")
    cx.set_yscale("log")
    cx.set_xlabel("n (bits per party)")
    cx.set_ylabel("path norm")
    cx.set_title("depth axis (proven): depth-3 norm vs depth-2 bound")
