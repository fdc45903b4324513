"""E25: a learnability control for E23 -- training along the ip_j dial, depth 2 vs depth 3.

Cold training finds IP no better than random labels at either depth (E23), so a cold run cannot
tell depth from learnability.  Here each net is trained along the dial ip_1 → ip_2 → … → ip_n
(:mod:`networks.separation.targets`; ip_n = IP), each stage warm-started from the last: with
H_j = (−1)^{ip_j}, E[H_j·H_{j+1}] = 1/2, so every stage starts with correlation 1/2 with its
labels and has a gradient signal.  Rows, one per (n, net, seed), all exact on the 4^n pairs:

* ``curriculum`` / ``ip``: depth 3 at widths (r1, r2) (default (2n, n + 1)) and depth 2 of the
  same parameter count (rule ``params(r1, r2)``), ``epochs`` Adam epochs per stage (early stop
  per stage when the loss stalls); the best-affine R² on ip_j and on IP after every stage.
* ``curriculum`` / ``random``: the same two nets trained cold on random labels for n·``epochs``
  epochs: what the same capacity and budget memorise (the control a depth clause needs).
* ``cold`` / ``ip``: the same two nets trained cold on IP for n·``epochs`` epochs: what the
  curriculum itself adds.

The verdict (:func:`networks.separation.depth_verdict.verdict`, clause
``depth_gain_curriculum``) shows a separation only when, with the curriculum, depth 3 gains more
over depth 2 of equal parameter count on IP than on random labels at the same budget.

Examples
--------
>>> cells = curriculum_cells([4], seeds=1, epochs=10)
>>> sorted({(c["kind"], c["target"], len(c["widths"])) for c in cells})
[('cold', 'ip', 1), ('cold', 'ip', 2), ('curriculum', 'ip', 1), ('curriculum', 'ip', 2), ('curriculum', 'random', 1), ('curriculum', 'random', 2)]
"""

from __future__ import annotations

import time

import numpy as np

from circuits.utils.errors import InvalidArgumentError
from circuits.utils.validation import check_int
from networks.separation.stages import run_and_stage  # noqa: F401  (re-exported)

__all__ = ["curriculum_table", "curriculum_cells", "run_curriculum_cell", "run_and_stage",
           "CURRICULUM_PREDICTION",
           "DESIGN_PREDICTION", "AND_STAGE_PREDICTION",
           "CURRICULUM_KINDS", "DEFAULT_CURRICULUM_DEPTH3",
           "AND_STAGE_HELDOUT_PREDICTION", "stated_prediction"]

#: The kinds of cell this module computes (dispatched by :func:`networks.separation.separate.run_cell`).
CURRICULUM_KINDS = ("curriculum", "cold", "curriculum_heldout", "cold_heldout", "and_stage",
                    "and_stage_heldout")
DEFAULT_CURRICULUM_DEPTH3 = ("2n", "n+1")
#: The prediction, stated before the runs.
CURRICULUM_PREDICTION = (
    "with the ip_j curriculum, depth 3 at widths (2n, n+1) reaches best-affine R² ≥ 0.9 on IP_n "
    "for every n run, while depth 2 of the same parameter count stays below 0.5 and random "
    "labels at the same widths and budget stay below 0.3 at both depths: a learnability "
    "separation that cold training (E23) cannot show")


#: The prediction for the two E25 designs added after the first runs, stated before their runs:
#: stages run to convergence (``stall_window``) and held-out halves (``heldout``).
DESIGN_PREDICTION = (
    "stages run to convergence: no stage ends still improving, in-sample R² on IP rises at both "
    "depths over the 300-epoch stages, but depth 3 gains no more over depth 2 of equal parameter "
    "count on IP than on random labels (both memorise 4^n pairs at n ≤ 7); held-out halves: "
    "random labels score ≈ 0 on the held-out quadrant at both depths, and so do the curriculum "
    "nets on IP for n ≥ 5 (what they fit is memorised, not the AND structure), so no held-out "
    "depth gain")


#: The prediction for the AND-stage design (``and_stage``), stated before its run.
AND_STAGE_PREDICTION = (
    "AND stage (train on MAJ∘AND, whose first layer must carry the AND count, then freeze the "
    "first layer of depth 3 and train its upper layers on IP): depth 3 reaches best-affine R² "
    "≥ 0.5 on IP at n ≤ 7, depth 2 of equal parameter count (MAJ∘AND then IP, nothing frozen) "
    "stays below 0.2, and random labels on the same frozen layer stay below 0.2")

#: The prediction for the AND stage on held-out halves (``and_stage`` with ``heldout``), stated
#: before its run.
AND_STAGE_HELDOUT_PREDICTION = (
    "AND stage on held-out halves (both stages on the training quadrant, measured on the "
    "held-out one): a first layer that carries the AND count carries it on unseen inputs too, "
    "so depth 3 with that layer frozen reaches best-affine R² ≥ 0.3 on IP on the held-out "
    "quadrant at n = 6 and 7, while depth 2 of equal parameter count and random labels on the "
    "same frozen layer stay below 0.1 there")


def curriculum_cells(ns, *, depth3=DEFAULT_CURRICULUM_DEPTH3, seeds: int = 1,
                     base_seed: int = 0, epochs: int = 300, lr: float = 3e-3,
                     stall_window: "int | None" = None, stall_tol: float = 1e-3,
                     heldout: bool = False, and_stage: bool = False,
                     kinds=None) -> list:
    """Every cell of the E25 table (:class:`networks.separation.cells.Cell`).

    ``and_stage``: also the AND-stage cells (kind ``and_stage``, targets IP and random labels):
    n·``epochs`` on MAJ∘AND, then n·``epochs`` on the target with depth 3's first layer frozen
    (depth 2 trains every layer in both stages: freezing its only hidden layer would leave a
    linear read-out).  ``and_stage`` with ``heldout``: also the same two stages on the training
    quadrant, measured on the held-out quadrant (kind ``and_stage_heldout``).

    ``stall_window``/``stall_tol``: convergence-based stopping of every stage (and cold run),
    ``epochs`` then only its cap (None: the patience rule).  ``heldout``: also the held-out cells
    (:mod:`networks.separation.curriculum_heldout`: trained on a quarter of the pairs, measured
    on a disjoint quarter), for the curriculum on IP and on random labels and cold on IP.
    ``kinds``: keep only the cells of these kinds (names from :data:`CURRICULUM_KINDS`; None:
    every kind the other options ask for), e.g. ``("and_stage", "and_stage_heldout")`` for a run
    that decides the AND-stage clauses alone."""
    from networks.separation.ceiling import run_seed
    from networks.separation.cells import Cell, matched_width, width_of

    r1, r2 = depth3
    extra = ({} if stall_window is None
             else {"stall_window": int(stall_window), "stall_tol": float(stall_tol)})
    kinds_ = [("curriculum", "ip"), ("curriculum", "random"), ("cold", "ip")]
    if heldout:
        kinds_ += [("curriculum_heldout", "ip"), ("curriculum_heldout", "random"),
                   ("cold_heldout", "ip")]
    if and_stage:
        kinds_ += [("and_stage", "ip"), ("and_stage", "random")]
    if and_stage and heldout:
        kinds_ += [("and_stage_heldout", "ip"), ("and_stage_heldout", "random")]
    if kinds is not None:
        kinds = tuple(kinds)
        bad = [k for k in kinds if k not in CURRICULUM_KINDS]
        if bad or not kinds:
            raise InvalidArgumentError(f"kinds must name kinds of cell from {CURRICULUM_KINDS}, "
                                       f"got {list(kinds)}")
        missing = [k for k in kinds if k not in {k_ for k_, _ in kinds_}]
        if missing:
            raise InvalidArgumentError(f"kinds {missing} are not in this table: pass "
                                       "heldout=True / and_stage=True for them")
        kinds_ = [kt for kt in kinds_ if kt[0] in kinds]
    cells = []
    for n in ns:
        w1, w2 = width_of(r1, n), width_of(r2, n)
        nets = ((f"({r1}, {r2})", [w1, w2]), (f"params({r1}, {r2})",
                                               [matched_width(8 * n, [w1, w2])]))
        for r in range(seeds):
            for kind, target in kinds_:
                for rule, widths in nets:
                    # the same init for the rows of a net: only the labels/schedule/pairs differ
                    cells.append(Cell(kind=kind, target=target, n=n, rule=rule, widths=widths,
                                      seed=run_seed(base_seed, n, *widths, r, 25), epochs=epochs,
                                      lr=lr, base_seed=base_seed, **extra))
    return cells


def run_curriculum_cell(cell, base_seed: int = 0) -> dict:
    """One E25 row (call it inside :func:`networks.separation.cells.pinned_threads`, as
    :func:`networks.separation.separate.run_cell` does)."""
    from embeddings import HardInstance
    from networks.separation.ceiling import exact_correlation
    from networks.separation.cells import _still_improving, _train, evaluate_net
    from networks.separation.curriculum_heldout import HELDOUT_KINDS, run_heldout_cell
    from networks.separation.targets import target_table
    from networks.sigma import SigmaNetwork

    if cell["kind"] in HELDOUT_KINDS:
        return run_heldout_cell(cell, base_seed)
    n, bs = cell["n"], cell.get("base_seed", base_seed)
    t0 = time.perf_counter()
    inst = HardInstance(n, seed=bs)
    gen = inst.embedding.generator
    Y = target_table(cell["target"], n, seed=bs, generator=gen)
    Yip = target_table("ip", n, seed=bs, generator=gen)
    net = SigmaNetwork.random([inst.dim, *cell["widths"], 1], "relu", seed=cell["seed"],
                              bias_scale=0.5)
    row = {k: cell[k] for k in ("kind", "target", "n", "rule", "widths", "seed")}
    stages = []
    if cell["kind"] == "curriculum" and cell["target"] == "ip":
        for j in range(1, n + 1):
            Yj = target_table(f"ip_{j}" if j < n else "ip", n, seed=bs, generator=gen)
            res = _train(net, inst, Yj, cell["epochs"], cell["lr"], cell)
            net = res.network
            stages.append({"j": j, "epochs": res.history["epochs"],
                           "reason": res.history["reason"],
                           "r2_affine_stage": exact_correlation(net, inst, Yj)["r2_affine"],
                           "r2_affine_ip": (exact_correlation(net, inst, Y)["r2_affine"]
                                            if j < n else None)})
        stages[-1]["r2_affine_ip"] = stages[-1]["r2_affine_stage"]
    elif cell["kind"] == "and_stage":
        net, res, stages = run_and_stage(
            net, cell, target_table("majand", n, seed=bs, generator=gen), Y,
            train=lambda net_, labels, freeze: _train(net_, inst, labels, n * cell["epochs"],
                                                      cell["lr"], cell, freeze_first=freeze),
            measure=lambda net_, labels: {
                "r2_affine_stage": exact_correlation(net_, inst, labels)["r2_affine"],
                "r2_affine_ip": exact_correlation(net_, inst, Yip)["r2_affine"]})
    else:                       # cold: n·epochs on the final labels (IP or random)
        res = _train(net, inst, Y, n * cell["epochs"], cell["lr"], cell)
        net = res.network
    row.update(evaluate_net(net, inst, Y, target=cell["target"]), depth=len(cell["widths"]) + 1,
               trained=True, stages=stages,
               epochs=sum(s["epochs"] for s in stages) if stages else res.history["epochs"],
               reason=res.history["reason"],
               still_improving=res.history["reason"] == "epochs"
               and _still_improving(res.history["loss"], cell))
    row["seconds"] = time.perf_counter() - t0
    return row


def curriculum_table(ns, *, depth3=DEFAULT_CURRICULUM_DEPTH3, seeds: int = 1,
                     base_seed: int = 0, epochs: int = 300, lr: float = 3e-3,
                     resume=None, executor=None, client=None, progress: bool = False,
                     stall_window: "int | None" = None, stall_tol: float = 1e-3,
                     heldout: bool = False, and_stage: bool = False, kinds=None) -> dict:
    """The E25 table (entry point): ``{"rows", "summary", "verdict", "prediction", "cells",
    "resumed"}``; ``resume``/``executor``/``client``/``progress`` as in
    :func:`networks.separation.separate.separation_table` (same resume file format; cells are
    bit-reproducible).

    Parameters
    ----------
    ns : iterable of int
        Bits per party (2..12; a stage costs about 4^n·w1·w2 per epoch at depth 3).
    depth3 : pair of width rules (default (2n, n + 1)); depth 2 gets the same parameter count.
    seeds : inits per net.
    epochs, lr : Adam epochs per stage (cold rows: n·epochs) and step size; with
        ``stall_window`` the epochs are only a cap.
    stall_window, stall_tol : convergence-based stopping of every stage (:func:`curriculum_cells`).
    heldout : also train on a quarter of the pairs and measure on a disjoint quarter
        (:mod:`networks.separation.curriculum_heldout`): learning against memorising.
    and_stage : also the AND-stage cells (:func:`curriculum_cells`).
    kinds : keep only the cells of these kinds (:func:`curriculum_cells`).
    """
    from networks.separation.cell_runs import run_cells
    from networks.separation.depth_verdict import summarise, verdict

    ns = [check_int(n, name="ns", minimum=2, maximum=12, what="bits per party") for n in ns]
    seeds = check_int(seeds, name="seeds", minimum=1, what="inits per net")
    epochs = check_int(epochs, name="epochs", minimum=1, what="Adam epochs per stage")
    cells = curriculum_cells(ns, depth3=depth3, seeds=seeds, base_seed=base_seed,
                             epochs=epochs, lr=lr, stall_window=stall_window,
                             stall_tol=stall_tol, heldout=heldout, and_stage=and_stage,
                             kinds=kinds)
    rows, resumed = run_cells(cells, run=_run_pinned, base_seed=base_seed, resume=resume,
                              executor=executor, client=client, progress=progress,
                              desc="curriculum")
    summary = summarise(rows)
    return {"rows": rows, "summary": summary, "verdict": verdict(summary),
            "prediction": stated_prediction({c["kind"] for c in cells},
                                            stall_window is not None),
            "cells": len(cells), "resumed": resumed,
            "stages": _stage_table(rows)}


def _run_pinned(cell, *, base_seed: int = 0) -> dict:
    """One E25 row on one numba and one BLAS thread
    (:func:`networks.separation.cells.pinned_threads`): a bit-exact function of the cell."""
    from networks.separation.cells import pinned_threads

    with pinned_threads():
        return run_curriculum_cell(cell, base_seed)


def stated_prediction(kinds, stall_window: bool = False) -> str:
    """The predictions stated before a run whose cells are of ``kinds`` (each design's own)."""
    parts = []
    if kinds & {"curriculum", "cold"}:
        parts.append(CURRICULUM_PREDICTION)
    if (stall_window and kinds & {"curriculum", "cold"}) or \
            kinds & {"curriculum_heldout", "cold_heldout"}:
        parts.append(DESIGN_PREDICTION)
    if "and_stage" in kinds:
        parts.append(AND_STAGE_PREDICTION)
    if "and_stage_heldout" in kinds:
        parts.append(AND_STAGE_HELDOUT_PREDICTION)
    return "; ".join(parts)


def _stage_table(rows) -> list:
    """Per curriculum net: best-affine R² on IP after each stage (median over seeds)."""
    groups: dict = {}
    for r in rows:
        if r["kind"] in ("curriculum", "curriculum_heldout") and r["target"] == "ip" \
                and r.get("stages"):
            groups.setdefault((r["n"], r["rule"], r["kind"]), []).append(r)
    out = []
    for (n, rule, kind), rs in sorted(groups.items()):
        # held-out rows: R² on IP on the held-out quadrant after each stage
        field = "r2_affine_ip_test" if kind == "curriculum_heldout" else "r2_affine_ip"
        per = [[s[field] for s in r["stages"]] for r in rs]
        out.append({"n": n, "rule": rule, "depth": rs[0]["depth"], "kind": kind,
                    "r2_affine_ip_after_stage": [float(np.median(col)) for col in zip(*per)],
                    "r2_affine_stage": [float(np.median([r["stages"][k]["r2_affine_stage"]
                                                         for r in rs])) for k in range(n)]})
    return out
