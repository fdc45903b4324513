"""The figure of E23 (``depthsep separate``): best-affine R² against n, one panel per depth-2
width rule and one per depth-3 width pair, the verdict's headline as the title; private."""

from __future__ import annotations

from pathlib import Path


def plot(record, path) -> Path:
    """R²_aff against n: one panel per depth-2 width rule, one for depth 3 (trained nets, the
    exact construction, depth 2 of equal parameter count); the title is the verdict's headline."""
    import textwrap

    from circuits.utils.files import savefig_atomic
    from experiments._style import (REFERENCE_COLOURS, SOURCE_MARKERS, TARGET_NAMES,
                                    depth_linestyle, legend_below, pyplot, target_colour)

    summ = record["summary"]
    rules = list(dict.fromkeys(s["rule"] for s in summ if s["kind"] == "depth2"
                               and not s["rule"].startswith("params(")))
    d3 = [s for s in summ if s["kind"] == "depth3"]
    panels = ([("depth2", r) for r in rules]
              + [("depth3", r) for r in dict.fromkeys(s["rule"] for s in d3)])
    ns = sorted({s["n"] for s in summ})

    def curve(ax, pts, target, depth, label, marker="o"):
        # colour = target, line style = depth: one legend entry per target and per depth
        pts = sorted(pts)
        if pts:
            ax.plot(*zip(*pts), depth_linestyle(depth), marker=marker,
                    color=target_colour(target), label=TARGET_NAMES.get(target, target))

    with pyplot() as plt:
        fig, axes = plt.subplots(1, len(panels), figsize=(4.0 * len(panels), 4.0),
                                 sharey=True, squeeze=False)
        for ax, (kind, rule) in zip(axes[0], panels):
            if kind == "depth2":
                for t in dict.fromkeys(s["target"] for s in summ if s["kind"] == "depth2"):
                    curve(ax, [(s["n"], s["r2_affine_best"]) for s in summ
                               if s["kind"] == "depth2" and s["rule"] == rule
                               and s["target"] == t], t, 2,
                          f"{TARGET_NAMES.get(t, t)}")
                fl = [(s["n"], s["floor"]) for s in summ if s["kind"] == "floor"
                      and s["rule"] == rule and s.get("floor") is not None]
                if fl:
                    ax.plot(*zip(*sorted(fl)), depth_linestyle("bound"),
                            color=REFERENCE_COLOURS["floor"],
                            label="explicit depth-2 IP_j net (floor)")
                ax.set_title(f"depth 2, width {rule}")
                ax.set_xticks(ns)
            else:
                n3 = sorted({s["n"] for s in d3 if s["rule"] == rule})
                for s3rule in (rule,):
                    for t in dict.fromkeys(s["target"] for s in d3):
                        pts3 = [(s["n"], s["r2_affine_best"]) for s in d3
                                if s["rule"] == s3rule and s["target"] == t]
                        curve(ax, pts3, t, 3, f"{TARGET_NAMES.get(t, t)}, depth 3")
                        # depth 2 of equal parameter count, same target
                        pts2 = []
                        for s in d3:
                            if s["rule"] != s3rule or s["target"] != t:
                                continue
                            cands = [c for c in summ if c["kind"] == "depth2" and c["n"] == s["n"]
                                     and c["target"] == t and c.get("params")]
                            if cands and s.get("params"):
                                c = min(cands, key=lambda c: abs(c["params"] - s["params"]))
                                pts2.append((s["n"], c["r2_affine_best"]))
                        curve(ax, pts2, t, 2, f"{TARGET_NAMES.get(t, t)}, depth 2 "
                              f"(equal parameters)", marker=".")
                exact = [(s["n"], s["r2_best"]) for s in summ if s["kind"] == "exact3"
                         and s["n"] in n3]
                if exact:
                    ax.plot(*zip(*sorted(exact)), depth_linestyle("construction"),
                            marker=SOURCE_MARKERS["exact"], color=REFERENCE_COLOURS["exact"],
                            label="exact depth-3 construction (n, n+1)")
                ax.set_title(f"depth 3 {rule} vs depth 2, equal parameters")
                ax.set_xticks(n3)
                ax.set_xlim(min(n3) - 0.3, max(n3) + 0.3)
            ax.set_xlabel("n (bits per party; 4^n pairs)")
            ax.set_ylim(-0.03, 1.03)
        for depth in (2, 3) if d3 else (2,):
            axes[0][0].plot([], [], depth_linestyle(depth), color="k", label=f"depth {depth}")
        axes[0][0].set_ylabel("best-affine R² on all 4^n pairs (best seed)")
        rows = legend_below(fig, axes[0], ncol=3)
        fig.suptitle("\n".join(textwrap.wrap(record["verdict"]["headline"], 110)), fontsize=9)
        fig.tight_layout(rect=(0, 0.06 * rows + 0.02, 1, 0.93))
        try:
            return savefig_atomic(fig, path, dpi=110)
        finally:
            plt.close(fig)
