"""The figure of E23 (``depthsep separate``): best-affine R² against n, one column per depth-2
width rule and one per depth-3 width pair; the top row on a linear axis, the bottom row the same
curves on a log axis (where IP, random labels and the explicit floor part at large n); the
verdict's headline (and, for runs on several devices, which device trained which rows) as the
title; private."""

from __future__ import annotations

from pathlib import Path

#: Values below this are drawn at it on the log row (R² can be 0 to rounding).
LOG_FLOOR = 1e-8


def plot(record, path) -> Path:
    """R²_aff against n: one column per depth-2 width rule, one for each depth-3 width pair
    (trained nets, the exact construction, depth 2 of equal parameter count), linear and log
    rows; the title is the verdict's headline."""
    import textwrap

    from circuits.utils.files import savefig_atomic
    from experiments._devices import trained_on_lines
    from experiments._style import legend_below, pyplot

    summ = record["summary"]
    rules = list(dict.fromkeys(s["rule"] for s in summ if s["kind"] == "depth2"
                               and not s["rule"].startswith("params(")))
    d3 = [s for s in summ if s["kind"] == "depth3"]
    panels = ([("depth2", r) for r in rules]
              + [("depth3", r) for r in dict.fromkeys(s["rule"] for s in d3)])
    title = textwrap.wrap(record["verdict"]["headline"], 110) + trained_on_lines(record)

    with pyplot() as plt:
        fig, axes = plt.subplots(2, len(panels), figsize=(4.0 * len(panels), 7.2),
                                 sharey="row", squeeze=False)
        for col, (kind, rule) in enumerate(panels):
            for row, log in ((0, False), (1, True)):
                _panel(axes[row][col], summ, d3, kind, rule, log)
        vals = [float(v) for s in summ for v in (s.get("r2_affine_best"), s.get("floor"))
                if v is not None and float(v) > 0]
        axes[1][0].set_ylim(max(LOG_FLOOR, min(vals, default=1.0)) / 2, 2.0)
        from experiments._style import depth_linestyle

        for depth in (2, 3) if d3 else (2,):
            axes[0][0].plot([], [], depth_linestyle(depth), color="k", label=f"depth {depth}")
        axes[0][0].set_ylabel("best-affine R² on all 4^n pairs (best seed)")
        axes[1][0].set_ylabel(f"log scale (< {LOG_FLOOR:g} drawn at it)")
        rows = legend_below(fig, axes[0], ncol=3)
        fig.suptitle("\n".join(title), fontsize=9)
        height = fig.get_size_inches()[1]
        fig.tight_layout(rect=(0, (0.25 * rows + 0.1) / height, 1,
                               1 - (0.16 * len(title) + 0.1) / height))
        try:
            return savefig_atomic(fig, path, dpi=110)
        finally:
            plt.close(fig)


def _panel(ax, summ, d3, kind, rule, log):
    from experiments._style import (REFERENCE_COLOURS, SOURCE_MARKERS, TARGET_NAMES,
                                    depth_linestyle, target_colour)

    def y(v):
        return max(float(v), LOG_FLOOR) if log else float(v)

    def curve(pts, target, depth, marker="o"):
        # colour = target, line style = depth: one legend entry per target and per depth
        pts = sorted(pts)
        if pts:
            ax.plot([n for n, _ in pts], [y(v) for _, v in pts], depth_linestyle(depth),
                    marker=marker, color=target_colour(target),
                    label=TARGET_NAMES.get(target, target))

    if kind == "depth2":
        for t in dict.fromkeys(s["target"] for s in summ if s["kind"] == "depth2"):
            curve([(s["n"], s["r2_affine_best"]) for s in summ if s["kind"] == "depth2"
                   and s["rule"] == rule and s["target"] == t], t, 2)
        fl = sorted((s["n"], s["floor"]) for s in summ if s["kind"] == "floor"
                    and s["rule"] == rule and s.get("floor") is not None)
        if fl:
            ax.plot([n for n, _ in fl], [y(v) for _, v in fl], depth_linestyle("bound"),
                    color=REFERENCE_COLOURS["floor"], label="explicit depth-2 IP_j net (floor)")
        ns = sorted({s["n"] for s in summ if s["kind"] == "depth2" and s["rule"] == rule})
        ax.set_title(f"depth 2, width {rule}")
    else:
        ns = sorted({s["n"] for s in d3 if s["rule"] == rule})
        for t in dict.fromkeys(s["target"] for s in d3):
            curve([(s["n"], s["r2_affine_best"]) for s in d3
                   if s["rule"] == rule and s["target"] == t], t, 3)
            # depth 2 of equal parameter count, same target
            pts2 = []
            for s in d3:
                if s["rule"] != rule or s["target"] != t or not s.get("params"):
                    continue
                cands = [c for c in summ if c["kind"] == "depth2" and c["n"] == s["n"]
                         and c["target"] == t and c.get("params")]
                if cands:
                    c = min(cands, key=lambda c: abs(c["params"] - s["params"]))
                    pts2.append((s["n"], c["r2_affine_best"]))
            curve(pts2, t, 2, marker=".")
        exact = sorted((s["n"], s["r2_best"]) for s in summ if s["kind"] == "exact3"
                       and s["n"] in ns)
        if exact:
            ax.plot([n for n, _ in exact], [y(v) for _, v in exact],
                    depth_linestyle("construction"), marker=SOURCE_MARKERS["exact"],
                    color=REFERENCE_COLOURS["exact"], label="exact depth-3 construction (n, n+1)")
        ax.set_title(f"depth 3 {rule} vs depth 2, equal parameters")
    if ns:
        ax.set_xticks(ns)
        ax.set_xlim(min(ns) - 0.3, max(ns) + 0.3)
    ax.set_xlabel("n (bits per party; 4^n pairs)")
    if log:
        ax.set_yscale("log")
    else:
        ax.set_ylim(-0.03, 1.03)
