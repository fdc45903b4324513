"""``depthsep least-circuit --catalogue NAME``: least THR o THR sizes of a whole family.

NAME is ``npn4`` (one representative of each of the 222 NPN classes of 4-input functions),
``sym5`` or ``sym6`` (the symmetric functions of 5 / 6 inputs up to negating the output and
all inputs).  Each row: the least hidden size (proved, refutations confirmed by the second
solver, or an honest interval), the least weight range ``W`` of a least-size circuit (every
hidden and top weight within ``[-W, W]``), and the least size with input-to-top wires.  Writes
``least_catalogue_NAME.json`` and ``least_catalogue_NAME.png`` (classes per least size; an
undecided class is drawn as a hatched box over its proved interval, never as a bar of height 0).
"""

from __future__ import annotations

import time
from pathlib import Path

FORMAT = "depthsep.least_catalogue"
VERSION = 1
CATALOGUES = ("npn4", "sym5", "sym6")


def _functions(name: str):
    from circuits.analysis.synthesis.catalogue import npn_classes, symmetric_classes

    if name == "npn4":
        return [(f"NPN{i:03d}", t) for i, t in enumerate(npn_classes(4))]
    n = int(name[3:])
    return [(f"SYM{n}[{v}]", t) for v, t in symmetric_classes(n)]


def run_catalogue(name: str, out: Path, *, time_limit: float, workers: int,
                  progress: bool) -> int:
    from circuits.analysis.synthesis.catalogue import catalogue
    from circuits.utils.files import write_json_atomic
    from experiments._outputs import record_and_figure

    funcs = _functions(name)
    t0 = time.perf_counter()
    partial = out / f"least_catalogue_{name}.partial.json"

    def save_partial(rows):                 # a killed run keeps the rows it finished
        write_json_atomic(partial, {"format": FORMAT, "version": VERSION, "catalogue": name,
                                    "time_limit": time_limit, "partial": True, "rows": rows})
    rows = catalogue(funcs, time_limit=time_limit, num_workers=workers, direct=True,
                     weights=True, depth3=name == "npn4", progress=progress,
                     on_row=save_partial)
    partial.unlink(missing_ok=True)
    wall = time.perf_counter() - t0
    _annotate(rows, name)
    sizes: "dict[str, int]" = {}
    for r in rows:
        key = str(r["size"]) if r["size"] is not None else f"[{r['lower']},{_upper(r) or '?'}]"
        sizes[key] = sizes.get(key, 0) + 1
    undecided = [r["name"] for r in rows if r["size"] is None]
    disagree = [r["name"] for r in rows if r["disagreements"]]
    unconfirmed = [r["name"] for r in rows if r["lower"] > 1 and not r["refutations_confirmed"]]
    print(f"{name}: {len(rows)} functions in {wall:.1f} s; classes per least hidden size: "
          + ", ".join(f"{k}: {v}" for k, v in sorted(sizes.items())))
    print(f"  undecided: {len(undecided)}; classes whose lower bound rests on a refutation not "
          f"confirmed by the second solver in time: {len(unconfirmed)}; solver disagreements: "
          f"{len(disagree)}")
    depth3 = _depth3_summary(rows)
    if depth3:
        print(f"  THR∘THR∘THR (CP-SAT; first layer checked by the enumerator): "
              f"classes per least first layer {_counts(depth3['first'])}; per least total "
              f"hidden size {_counts(depth3['total'])}; classes whose least total is below the "
              f"depth-2 size + 1: "
              f"{depth3['total_below_depth2_plus_1']}; first layer below the depth-2 size: "
              f"{depth3['first_below_depth2']}; undecided {len(depth3['undecided'])}; "
              f"enumerator disagreements {len(depth3['enumerator_disagreements'])}")
    if name != "npn4":
        for r in rows:
            d = r["direct"] or {}
            w = (r["weight"] or {}).get("least_weight")
            size = r["size"] if r["size"] is not None else f"{r['lower']}..{_upper(r) or '?'}"
            dsize = d.get("size") if d.get("size") is not None else \
                f"{d.get('lower')}..{d.get('upper') or '?'}"
            print(f"  {r['name']:<16} least size {size!s:>6}   least W {w if w else '-':>4}   "
                  f"with direct wires {dsize!s:>5}   ({r['seconds']:.1f} s)")
    record = {"format": FORMAT, "version": VERSION, "catalogue": name,
              "time_limit": time_limit, "seconds": round(wall, 2), "size_counts": sizes,
              "undecided": undecided, "disagreements": disagree, "unconfirmed": unconfirmed,
              "depth3": depth3, "rows": rows}
    return record_and_figure(record, out / f"least_catalogue_{name}.json",
                             lambda path: _figure(rows, name, path),
                             out / f"least_catalogue_{name}.png")


def _counts(hist: dict) -> str:
    return ", ".join(f"{k}: {v}" for k, v in hist.items())


def _depth3_summary(rows) -> "dict | None":
    """Counts of the depth-3 columns (None when the catalogue has none)."""
    d3 = [(r, r["depth3"]) for r in rows if r.get("depth3")]
    if not d3:
        return None

    def hist(key):
        out: "dict[str, int]" = {}
        for _, d in d3:
            k = str(d[key])
            out[k] = out.get(k, 0) + 1
        return dict(sorted(out.items()))
    return {"first": hist("first"), "total": hist("total"),
            "first_below_depth2": sum(1 for r, d in d3 if d["first"] is not None
                                      and d["first"] < r["size"]),
            "total_below_depth2_plus_1": sum(1 for r, d in d3 if d["total"] is not None
                                             and d["total"] < r["size"] + 1),
            "undecided": [r["name"] for r, d in d3 if not d["decided"]],
            "enumerator_disagreements": [r["name"] for r, d in d3
                                         if d.get("enumerator_agrees") is False],
            "solver": "CP-SAT (decide_depth3); refutations not confirmed by a second solver"}


def _annotate(rows, name: str) -> None:
    """Symmetric catalogues: the n-gate construction of each row (re-verified) as an upper bound
    where the search found none (``construction``)."""
    if name == "npn4":
        return
    from circuits.analysis.synthesis.catalogue import symmetric_circuit

    n = int(name[3:])
    for r in rows:
        values = [int(r["table"][(1 << k) - 1]) for k in range(n + 1)]
        symmetric_circuit(values)                # raises unless it computes the table
        r["construction"] = n


def _upper(r) -> "int | None":
    """The best upper bound of a row: a found circuit or the construction."""
    ups = [u for u in (r["upper"], r.get("construction")) if u is not None]
    return min(ups) if ups else None


def _figure(rows, name: str, path: Path) -> None:
    from circuits.utils.files import savefig_atomic
    from experiments._style import depth_linestyle, legend_below, pyplot, target_colour

    top = max([_upper(r) or r["lower"] for r in rows] + [1])
    xs = list(range(1, top + 1))
    plain = [sum(1 for r in rows if r["size"] == s) for s in xs]
    direct = [sum(1 for r in rows if (r["direct"] or {}).get("size") == s) for s in xs]
    first = [sum(1 for r in rows if (r.get("depth3") or {}).get("first") == s) for s in xs]
    has3 = any(r.get("depth3") for r in rows)
    open3 = sum(1 for r in rows if r.get("depth3") and r["depth3"].get("first") is None)
    bw = 0.27 if has3 else 0.4
    with pyplot() as plt:
        fig, ax = plt.subplots(figsize=(6.4, 3.6))
        off = bw if has3 else bw / 2
        ax.bar([x - off for x in xs], plain, bw, color=target_colour("parity"),
               label="THR∘THR, least hidden size (proved)")
        ds = [r["direct"] for r in rows if r.get("direct")]
        alone = sum(1 for d in ds if (d.get("lower") or 1) > 1
                    and not d.get("refutations_confirmed"))
        open_d = sum(1 for d in ds if d.get("size") is None)
        how = "proved" + (f"; {alone} by CP-SAT alone" if alone else "") + \
            (f"; {open_d} undecided, not drawn" if open_d else "")
        ax.bar([x + (0 if has3 else off) for x in xs], direct, bw, color=target_colour("maj"),
               label=f"with input-to-top wires ({how})")
        if has3:
            ax.bar([x + off for x, c in zip(xs, first) if c], [c for c in first if c], bw,
                   fill=False,
                   edgecolor=target_colour("parity"), linestyle=depth_linestyle(3),
                   linewidth=1.2, label="THR∘THR∘THR, least first layer (CP-SAT"
                   + (f"; {open3} undecided, not drawn)" if open3 else ")"))
        groups: "dict[tuple, int]" = {}
        for r in rows:
            if r["size"] is None:
                key = (r["lower"], _upper(r) or top)
                groups[key] = groups.get(key, 0) + 1
        base = 0.0
        for i, ((lo, hi), count) in enumerate(sorted(groups.items())):
            # undecided: a hatched box over the proved interval lo..hi, its height the number of
            # such classes (stacked), never a bar of height 0
            ax.bar((lo + hi) / 2, count, hi - lo + 0.8, bottom=base, hatch="//", fill=False,
                   edgecolor=target_colour("random"),
                   label="undecided: proved interval (height = classes)" if i == 0 else None)
            ax.text(hi + 0.45, base + count / 2, f"{count} in {lo}..{hi}", va="center",
                    fontsize=7)
            base += count
        ax.set_xticks(xs)
        ax.set_xlabel("hidden gates")
        ax.set_ylabel("functions (classes)")
        ax.set_title(f"Measured: least hidden sizes of threshold circuits, {name} "
                     f"({len(rows)} classes)")
        rows_below = legend_below(fig, [ax], ncol=2)
        fig.tight_layout(rect=(0, 0.06 * rows_below, 1, 1))
        savefig_atomic(fig, path, dpi=120)
        plt.close(fig)
