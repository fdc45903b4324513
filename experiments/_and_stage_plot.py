"""The AND-stage figure of E25 (``and_stage.png``): best-affine R² after the AND stage, per n,
on the training pairs (kind ``and_stage``) and on the held-out quadrant (``and_stage_heldout``),
for depth 3 (first layer frozen) and depth 2 of equal parameter count, on IP and on random
labels (the control).  Bars are medians over seeds; the dots are the seeds.  The title is the
verdict's headline."""

from __future__ import annotations

import textwrap
from pathlib import Path

__all__ = ["plot_and_stage"]

_KINDS = (("and_stage", "in sample"), ("and_stage_heldout", "held-out quadrant"))


def plot_and_stage(record, out: Path) -> "Path | None":
    """Write ``out/and_stage.png`` if the record has AND-stage rows; return its path or None."""
    from circuits.utils.files import savefig_atomic
    from experiments._style import TARGET_NAMES, legend_below, pyplot, target_colour

    rows = [r for r in record["rows"] if r["kind"] in dict(_KINDS)]
    if not rows:
        return None
    kinds = [(k, name) for k, name in _KINDS if any(r["kind"] == k for r in rows)]
    ns = sorted({r["n"] for r in rows})
    groups = [(n, k, name) for n in ns for k, name in kinds]
    bars = [(3, "ip"), (2, "ip"), (3, "random"), (2, "random")]
    title = textwrap.wrap(record["verdict"]["headline"], 100)
    with pyplot() as plt:
        fig, ax = plt.subplots(figsize=(max(6.4, 1.6 * len(groups)), 4.0 + 0.16 * len(title)))
        width = 0.8 / len(bars)
        for g, (n, kind, _) in enumerate(groups):
            for b, (depth, target) in enumerate(bars):
                vals = sorted(float(r["r2_affine"]) for r in rows if r["kind"] == kind
                              and r["n"] == n and r["target"] == target
                              and r["depth"] == depth)
                if not vals:
                    continue
                x = g - 0.4 + width * (b + 0.5)
                med = vals[len(vals) // 2] if len(vals) % 2 else \
                    0.5 * (vals[len(vals) // 2 - 1] + vals[len(vals) // 2])
                ax.bar(x, med, width * 0.9, color=target_colour(target),
                       alpha=1.0 if depth == 3 else 0.45,
                       hatch=None if depth == 3 else "//", edgecolor="k", linewidth=0.5,
                       label=f"{TARGET_NAMES.get(target, target)}, depth {depth}"
                             + (" (first layer frozen)" if depth == 3 else ""))
                ax.plot([x] * len(vals), vals, "k.", ms=3, label="_seeds")
        ax.set_xticks(range(len(groups)))
        ax.set_xticklabels([f"n = {n}\n{name}" for n, _, name in groups], fontsize=8)
        ax.set_ylabel("best-affine R² after the AND stage")
        ax.set_ylim(0, 1.02)
        lines = legend_below(fig, [ax], ncol=2)
        fig.suptitle("\n".join(title), fontsize=9)
        height = fig.get_size_inches()[1]
        fig.tight_layout(rect=(0, (0.25 * lines + 0.1) / height, 1,
                               1 - (0.16 * len(title) + 0.1) / height))
        try:
            return savefig_atomic(fig, Path(out) / "and_stage.png", dpi=110)
        finally:
            plt.close(fig)
