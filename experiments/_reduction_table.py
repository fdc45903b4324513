"""``depthsep separation-table --reduction``: the truth against the reduction chain, in gates.

For IP_n at n = 2, 3 (N = 2n inputs) the least layered THR o THR size is proved
(:func:`circuits.analysis.least_depth2`, refutations confirmed by the second solver).  Next to it:

* the constructions, each size read off the built circuit: ``ip_depth3`` (hidden gates of both
  hidden layers) and ``ip_depth2``;
* what ``depthsep reduce --n n`` builds (:func:`networks.separation.reduction_run.reduction_run`,
  the same defaults: ReLU, width 32, seed 0): the trained network's hidden neurons, the
  staircase's threshold gates (real weights), the integer threshold circuit's hidden gates and
  its largest weight (read off the :class:`~circuits.threshold.ThresholdCircuit` it returns),
  how many support points that circuit alone gets wrong, the least number k of copies for
  which the self-reduction M_k has sign = IP on the circuit's Boolean output, and the gates of
  those k copies (k times the circuit: not itself a THR o THR circuit);
* every lower bound the library has for IP_n's depth-2 circuits (HMPST for MAJ o MAJ and
  GHR/Nisan for MAJ o THR at the least circuit's weights, Forster's sign-rank route, the
  chain's own width bound from the reduce run, and THR o THR: none known).

Each row says how many gates the step gives away against the least size (``gap``: value - least,
positive for constructions and reductions, negative for lower bounds) and the ratio.  A caveat
on the reduce rows: the network and its circuit read the hard instance's 4n code bits per party
(8n circuit inputs), not the 2n bits of the plain IP_n; they are sizes of what the chain builds,
not of circuits for the same function.
"""

from __future__ import annotations

import time
from pathlib import Path

FORMAT = "depthsep.reduction_table"
VERSION = 1
#: the reduce defaults priced here (``depthsep reduce``'s own defaults)
REDUCE = {"width": 32, "activation": "relu", "seed": 0}


def _hidden(circuit) -> int:
    """Hidden gates of a built circuit: every layer but the top one."""
    return int(sum(layer.n_gates for layer in circuit.layers[:-1]))


def reduction_column(n: int, *, time_limit: float = 60.0, workers: int = 2,
                     progress: bool = False) -> dict:
    """Every step of the chain for IP_n, as rows ``{step, kind, value, gap, ratio, why}``."""
    from circuits import ip_depth2, ip_depth3
    from circuits.analysis import bounds as B
    from circuits.analysis import least_depth2
    from circuits.analysis.communication import sign_matrix
    from circuits.analysis.exact_synthesis import target_table
    from circuits.utils.errors import DepthsepError
    from networks.separation.reduction_run import reduction_run

    f, name = target_table("ip", n)
    t0 = time.perf_counter()
    r = least_depth2(f, max_size=2 ** n + 2 * n, time_limit=time_limit, num_workers=workers,
                     progress=progress)
    least_s = time.perf_counter() - t0
    if r.size is None:
        raise DepthsepError(f"the least THR o THR size of {name} was not decided within "
                           f"{time_limit} s per decision ({r.summary()}); raise --time-limit")
    least = r.size
    w_bot = int(abs(r.circuit.layers[0].weights).max())
    w_top = max(1, int(abs(r.circuit.layers[1].weights).max()))
    t0 = time.perf_counter()
    run = reduction_run(n, REDUCE["width"], REDUCE["activation"], seed=REDUCE["seed"],
                        progress=progress)
    reduce_s = time.perf_counter() - t0
    rec = run.record
    if run.report is None or run.report.circuit is None:
        raise DepthsepError(f"depthsep reduce --n {n} built no circuit: {rec.get('error')}")
    circ = run.report.circuit.circuit
    rc = run.report.reduction_circuit
    k_circ = rc.least_k if rc is not None else None
    fb = B.forster_sign_rank_bound(sign_matrix(f))
    K = 2 * n * w_bot + 1                  # values of a bottom linear form with |w| <= W_bot
    sign_rank_gates = max(0, -(-(fb.inputs["ceil"] - 1) // K))
    bounds = run.report.certificate.bounds

    def row(step, kind, value, why):
        gap = None if value is None else round(value - least, 4)
        ratio = None if value is None or least == 0 else round(value / least, 4)
        return {"step": step, "kind": kind, "value": value, "gap": gap, "ratio": ratio,
                "why": why}

    rows = [row("least layered THR∘THR (proved)", "truth", least,
                f"CP-SAT, every refutation confirmed by the second solver: {r.summary()}"),
            row("ip_depth3 (hidden gates, both layers)", "construction", _hidden(ip_depth3(n)),
                "read off the built circuit"),
            row("ip_depth2 (hidden gates)", "construction", _hidden(ip_depth2(n)),
                "read off the built circuit"),
            row("reduce: trained network (hidden neurons)", "reduction", int(rec["width"]),
                f"ReLU, MSE {rec['mse']:.4f}, reads {2 * rec['m']} code bits"),
            row("reduce: staircase threshold gates (real weights)", "reduction",
                int(rec["staircase"]["n_gates"]), "read off the staircase"),
            row("reduce: integer circuit (hidden gates)", "reduction", _hidden(circ),
                f"read off the built circuit: depth {len(circ.layers)}, max |w| = "
                f"{int(circ.max_abs_weight)}, wrong on "
                f"{rec['threshold_circuit']['n_errors_ip']} of {4 ** n} support pairs"),
            row("reduce: k copies of the circuit (least k)", "reduction",
                None if k_circ is None else k_circ * _hidden(circ),
                f"k = {k_circ} copies until sign(M_k) = IP on the circuit's output (not "
                f"itself a THR∘THR circuit)"),
            row("MAJ∘MAJ bound (HMPST), least circuit's weights", "bound",
                B.maj_maj_bound(n, w_top, max(w_bot, 1)).value,
                f"W_top = {w_top}, W_bot = {w_bot}"),
            row("MAJ∘THR bound (GHR / Nisan)", "bound", B.maj_thr_bound(n, w_top).value,
                f"W_top = {w_top}"),
            row("THR∘MAJ bound (Forster / FKLMSS)", "bound",
                B.thr_maj_bound(n, max(w_bot, 1)).value, f"W_bot = {w_bot}"),
            row("sign-rank route, least circuit's bottom weights", "bound", sign_rank_gates,
                f"1 + s ({2 * n} W_bot + 1) >= Forster {fb.value:.3f}, W_bot = {w_bot}"),
            row("chain's width bound (reduce, measured)", "bound",
                round(float(bounds["width_bound_measured"]), 4),
                "vacuous (< 1)" if bounds["width_bound_measured"] < 1 else "informative"),
            row("THR∘THR bound", "bound", B.thr_thr_bound(n).value, "none known")]
    return {"n": n, "N": 2 * n, "function": name, "least": least, "rows": rows,
            "least_seconds": round(least_s, 2), "reduce_seconds": round(reduce_s, 2),
            "least_claims": [c.as_dict() for c in r.claims],
            "refutations_confirmed": r.refutations_confirmed,
            "disagreements": list(r.disagreements), "reduce": dict(REDUCE),
            "reduce_inputs": 2 * int(rec["m"]), "least_k_network": rec["least_k"],
            "least_k_circuit": k_circ}


def render_rst(record: dict) -> str:
    """The docs table of a reduction-table record (the docs page carries exactly this text)."""
    cols = record["columns"]
    head = ["step"] + [f"n = {c['n']}" for c in cols] + [f"gap n = {c['n']}" for c in cols]
    body = []
    for i, r0 in enumerate(cols[0]["rows"]):
        cells = [r0["step"]]
        for c in cols:
            v = c["rows"][i]["value"]
            cells.append("none known" if v is None else f"{v:,}" if isinstance(v, int)
                         else f"{v:g}")
        for c in cols:
            g = c["rows"][i]["gap"]
            cells.append("-" if g is None or c["rows"][i]["kind"] == "truth" else
                         f"{g:+,}" if isinstance(g, int) else f"{g:+g}")
        body.append(cells)
    widths = [max(len(x[j]) for x in [head] + body) for j in range(len(head))]
    rule = "  ".join("=" * w for w in widths)
    lines = [rule, "  ".join(h.ljust(w) for h, w in zip(head, widths)).rstrip(), rule]
    lines += ["  ".join(x.ljust(w) for x, w in zip(cells, widths)).rstrip() for cells in body]
    lines.append(rule)
    return "\n".join(lines) + "\n"


def _figure(record: dict, path: Path) -> None:
    """One bar per step and n (log scale): the truth and the reductions in IP's colour, the
    constructions in the construction colour, the bounds in the bound colour; a bound with no
    value or a value below 1 (vacuous) is named in the label, never drawn as a bar."""
    import numpy as np

    from circuits.utils.files import savefig_atomic
    from experiments._style import REFERENCE_COLOURS, pyplot, target_colour

    colour = {"truth": target_colour("ip"), "reduction": target_colour("ip"),
              "construction": REFERENCE_COLOURS["exact"], "bound": REFERENCE_COLOURS["bound"]}
    cols = record["columns"]
    steps = [r["step"] for r in cols[0]["rows"]]
    with pyplot() as plt:
        fig, ax = plt.subplots(figsize=(8.0, 5.2))
        width = 0.8 / len(cols)
        for ci, c in enumerate(cols):
            for si, r in enumerate(c["rows"]):
                x = si + (ci - (len(cols) - 1) / 2) * width
                v = r["value"]
                if v is None or v < 1:
                    ax.text(x, 1.05, "none" if v is None else "<1", rotation=90, fontsize=6,
                            ha="center", va="bottom")
                    continue
                light = len(cols) > 1 and ci < len(cols) - 1
                ax.bar(x, v, width, color=colour[r["kind"]], alpha=0.55 if light else 1.0,
                       hatch="//" if r["kind"] == "reduction" else None,
                       edgecolor="white" if r["kind"] != "reduction" else "black",
                       label=None)
        handles = [plt.Rectangle((0, 0), 1, 1, color=colour["truth"]),
                   plt.Rectangle((0, 0), 1, 1, facecolor=colour["reduction"], hatch="//",
                                 edgecolor="black"),
                   plt.Rectangle((0, 0), 1, 1, color=colour["construction"]),
                   plt.Rectangle((0, 0), 1, 1, color=colour["bound"])]
        labels = ["least THR∘THR (proved)", "built by depthsep reduce (hatched)",
                  "construction", "lower bound"]
        if len(cols) > 1:
            handles.insert(0, plt.Rectangle((0, 0), 1, 1, color="#999999", alpha=0.55))
            labels.insert(0, "left bar of each pair (light): n = "
                          + ", ".join(str(c["n"]) for c in cols[:-1])
                          + f"; right (dark): n = {cols[-1]['n']}")
        ax.set_yscale("log")
        ax.set_xticks(np.arange(len(steps)), steps, rotation=40, ha="right", fontsize=7)
        ax.set_ylabel("gates (hidden gates of depth-2 circuits)")
        ax.set_title("Measured: IP_n's least THR∘THR size against the reduction chain")
        fig.legend(handles, labels, loc="lower center", ncol=3, frameon=False, fontsize=8)
        fig.tight_layout(rect=(0, 0.09, 1, 1))
        savefig_atomic(fig, path, dpi=120)
        plt.close(fig)


def run_reduction_table(ns, out: Path, *, time_limit: float, workers: int,
                        progress: bool) -> int:
    """Compute, print and save (JSON + PNG) the reduction table for the given n."""
    from experiments._outputs import record_and_figure

    t0 = time.perf_counter()
    cols = [reduction_column(n, time_limit=time_limit, workers=workers, progress=progress)
            for n in ns]
    record = {"format": FORMAT, "version": VERSION, "time_limit": time_limit,
              "seconds": round(time.perf_counter() - t0, 2), "columns": cols}
    print("IP_n: least THR∘THR size against the reduction chain (gap = gates given away)")
    print(render_rst(record), end="")
    for c in cols:
        print(f"  n = {c['n']}: least size {c['least']} ({c['least_seconds']:.1f} s, "
              f"refutations confirmed: {c['refutations_confirmed']}, disagreements: "
              f"{c['disagreements'] or 'none'}); reduce run {c['reduce_seconds']:.1f} s "
              f"(circuit over {c['reduce_inputs']} code bits, not the {c['N']} bits of IP_n)")
    return record_and_figure(record, out / "reduction_table.json",
                             lambda path: _figure(record, path), out / "reduction_table.png")
