"""Depth 2 vs depth 3 at polynomial width, with an easy control of the same shape (THEORY §5 E23).

The claim of the papers is that IP is hard for depth 2 and easy for depth 3.  A control that
*can* separate is a function of the same shape that depth 2 finds easy: MAJ∘AND
([#{i: a_i b_i = 1} ≥ t_n], :mod:`networks.separation.targets`) has the same AND layer as IP with
a threshold instead of a parity on top.  Random labels are kept, labelled as the control that is
hard for every depth (they cannot separate depth 2 from depth 3).

:func:`separation_table` builds the table, one independent *cell* per (target, depth, width rule,
seed, n), on all 4^n pairs of μ₀ (product form, THEORY §4.8):

* **trained depth 2**: ReLU, widths given as polynomials of n (``"n"``, ``"n^2"``, ``"n^3"``),
  full-batch Adam (:func:`networks.train_product.train_product`) until the loss stalls or the
  epoch budget ends; a cell that ends on the budget while its loss still fell by more than
  ``STILL_IMPROVING`` (relative) over the last tenth of its epochs is flagged ``still_improving``.
* **trained depth 3**: widths (n, n + 1) and (n², n), first layer in product form, same trainer;
  for each depth-3 pair a **depth-2 net of the same parameter count** (rule ``params(r1, r2)``,
  :func:`~networks.separation.cells.matched_width`), so that the depth comparison is at equal
  parameter count.
* **training-free references** (no optimisation involved): the exact depth-3 construction
  (THEORY §3.2, ρ = 1, max error 0 up to rounding) and the explicit depth-2 net
  :func:`explicit_ip_j` computing IP_j with width j·2^{j−1}, whose correlation with IP_n is exactly
  2^{j−n}.  At width w the **floor** is that net's best-affine R² (:func:`ip_floor_r2`, about
  4^{j(w)−n}) and its cos 2^{j(w)−n}, j(w) the largest j with j·2^{j−1} ≤ w.  A trained depth-2
  IP row whose best-affine R² is below the floor is flagged (scale-free: a rescaled net gets the
  same flag): that is optimisation, not expressivity.

Per row: γ = 1/4 − MSE, ρ = E[(1 − 2y)(1 − 2N)], R² = 1 − MSE/Var(y), and the scale-free
cos = ρ/√E[Ñ²] and best-affine R² (the squared correlation of N and y), the path norm
P = Σ_i |u_i|(|b_i| + ‖w_i‖₂) (depth 2), the parameter count, the neuron-wise §4.7 ceiling on |ρ|
for IP rows (:func:`networks.separation.ceiling.correlation_ceiling`), epochs, still improving?,
seconds.  All metrics are exact float64 averages over the 4^n pairs
(:func:`networks.separation.ceiling.exact_correlation`).  Every cell runs on one numba thread and
one BLAS thread (:func:`~networks.separation.cells.pinned_threads`), so the same cell gives the
same row bit for bit.  One cell's width rules, metrics and stopping rules are
:mod:`networks.separation.cells` (re-exported here).

:func:`heldout_split` is the generalisation figure: train on a random half of the pairs, test on
the other half (explicit points, n ≤ 8).

:func:`verdict` (:mod:`networks.separation.depth_verdict`) sorts what the table shows into
expressivity and learnability clauses and prints "separation shown" only when a clause that
isolates depth holds; it also checks the prediction stated before the run (:data:`PREDICTION`).

Examples
--------
>>> from embeddings import HardInstance
>>> inst = HardInstance(4, seed=0)
>>> net = explicit_ip_j(inst, 2)
>>> net.dims, round(exact_ip_rho(net, inst), 12) == 2.0 ** (2 - 4)
((32, 4, 1), True)
>>> floor_j(4), floor_j(3), width_of("n^2", 5), width_of("n+1", 5)
(2, 1, 25, 6)
"""

from __future__ import annotations

import os
import time

import numpy as np

from circuits.utils.validation import check_int
# one cell's width rules, metrics and stopping rules (re-exported: their documented home was here)
from networks.separation.cells import (MIN_CAPPED_EPOCHS, STILL_IMPROVING, Cell,  # noqa: F401
                                       _still_improving, _train, epoch_cap, evaluate_net,
                                       matched_width, param_count, path_norm, pinned_threads,
                                       stopping, width_of)
# the resume file of the cells (re-exported: defined here before)
from networks.separation.cell_runs import _append_resume, _load_resume  # noqa: F401

__all__ = ["separation_table", "explicit_ip_j", "floor_j", "ip_floor", "width_of",
           "path_norm", "evaluate_net", "verdict", "heldout_split", "PREDICTION", "Cell",
           "make_cells", "run_cell", "exact_ip_rho", "DEFAULT_TARGETS", "DEFAULT_WIDTHS",
           "DEFAULT_DEPTH3", "ip_floor_r2", "ip_floor_cos", "param_count", "matched_width",
           "pinned_threads", "summarise", "epoch_cap", "stopping"]

DEFAULT_TARGETS = ("ip", "majand", "random")
DEFAULT_WIDTHS = ("n", "n^2")
DEFAULT_DEPTH3 = (("n", "n+1"), ("n^2", "n"))


# --------------------------------------------------------------------------------------------
# cells


def make_cells(ns, *, targets=DEFAULT_TARGETS, widths=DEFAULT_WIDTHS, depth3=DEFAULT_DEPTH3,
               depth3_max_n: int = 10, seeds: int = 2, base_seed: int = 0, epochs: int = 600,
               lr: float = 0.02, stall_window: "int | None" = None, stall_tol: float = 1e-3,
               work: "float | None" = None) -> list:
    """Every cell of the table, cheapest first within each n.

    For every depth-3 width pair a depth-2 cell of the same parameter count
    (:func:`~networks.separation.cells.matched_width`, input dimension d = 8n of the default
    code m = 4n) is added, rule ``params(r1, r2)``, unless a depth-2 width rule already gives
    that width: the learnability comparison of the verdict is depth 3 against depth 2 at equal
    parameter count.

    ``stall_window``/``stall_tol``: convergence-based stopping (a trained cell stops when its
    best loss fell by less than ``stall_tol`` relative over ``stall_window`` epochs,
    :func:`networks.train_product.train_product`); None keeps the patience rule (100 epochs
    without an absolute improvement of 1e-7).  ``work``: a per-cell budget in pair-neuron terms
    (:func:`~networks.separation.cells.epoch_cap`); each trained cell's ``epochs`` is its own cap."""
    from networks.separation.ceiling import run_seed
    from networks.separation.targets import get_target

    def trained(**kw):
        cap = epoch_cap(epochs, kw["n"], kw["widths"], work)
        extra = ({} if stall_window is None
                 else {"stall_window": int(stall_window), "stall_tol": float(stall_tol)})
        return Cell(**kw, epochs=cap, lr=lr, base_seed=base_seed, **extra)

    cells = []
    for n in ns:
        cells.append(Cell(kind="exact3", target="ip", n=n, rule="exact (n, n+1)",
                          widths=[n, n + 1], seed=None, base_seed=base_seed))
        for rule in widths:
            cells.append(Cell(kind="floor", target="ip", n=n, rule=str(rule),
                              widths=[width_of(rule, n)], seed=None, base_seed=base_seed))
        for ti, t in enumerate(targets):
            get_target(t)
            for rule in widths:
                w = width_of(rule, n)
                for r in range(seeds):
                    cells.append(trained(kind="depth2", target=t, n=n, rule=str(rule),
                                         widths=[w], seed=run_seed(base_seed, n, w, ti, r)))
            if n <= depth3_max_n:
                plain = {width_of(rule, n) for rule in widths}
                for pair in depth3:
                    r1, r2 = pair[:2]
                    if len(pair) > 2 and pair[2] is not None and n > int(pair[2]):
                        continue                   # this pair's own largest n
                    w1, w2 = width_of(r1, n), width_of(r2, n)
                    for r in range(seeds):
                        cells.append(trained(kind="depth3", target=t, n=n, rule=f"({r1}, {r2})",
                                             widths=[w1, w2],
                                             seed=run_seed(base_seed, n, w1, w2, ti, r, 3)))
                    # depth 2 at the depth-3 net's parameter count (unless a width rule has it)
                    w = matched_width(8 * n, [w1, w2])
                    if w in plain:
                        continue
                    plain.add(w)
                    for r in range(seeds):
                        cells.append(trained(kind="depth2", target=t, n=n,
                                             rule=f"params({r1}, {r2})", widths=[w],
                                             seed=run_seed(base_seed, n, w, ti, r)))
    return cells



def run_cell(cell, *, base_seed: int = 0) -> dict:
    """Compute one cell (a pure function of the cell and the base seed, bit for bit: the
    threads are pinned, :func:`~networks.separation.cells.pinned_threads`): the row dict."""
    with pinned_threads():
        from networks.separation.curriculum import CURRICULUM_KINDS

        if cell["kind"] in CURRICULUM_KINDS:
            from networks.separation.curriculum import run_curriculum_cell

            return run_curriculum_cell(cell, base_seed)
        return _run_cell(cell, base_seed)



def _run_cell(cell, base_seed):
    from embeddings import HardInstance
    from networks.sigma import SigmaNetwork
    from networks.separation.targets import target_table

    n = cell["n"]
    t0 = time.perf_counter()
    inst = HardInstance(n, seed=cell.get("base_seed", base_seed))
    Y = target_table(cell["target"], n, seed=cell.get("base_seed", base_seed),
                     generator=inst.embedding.generator)
    row = {k: cell[k] for k in ("kind", "target", "n", "rule", "widths", "seed")}
    if cell["kind"] == "exact3":
        from networks.constructions import ip_depth3_relu
        from networks.reduction.product import value_table

        net = ip_depth3_relu(inst).network
        V = value_table(net, inst)
        row.update(evaluate_net(net, inst, Y, target="ip"), depth=3, trained=False,
                   max_error=float(np.abs(V - Y).max()), epochs=0, still_improving=False)
    elif cell["kind"] == "floor":
        w = cell["widths"][0]
        j = min(n, floor_j(w))
        row["depth"] = 2
        row["trained"] = False
        if j >= 1:
            net = explicit_ip_j(inst, j)
            row.update(evaluate_net(net, inst, Y, target="ip"), widths=[net.dims[1]])
        else:
            row.update(rho=2.0 ** -n, r2=None, gamma=None, mse=None, widths=[0], cos=0.0,
                       r2_affine=0.0)
        row.update(floor_j=j, floor=ip_floor_r2(n, w), floor_cos=ip_floor_cos(n, w),
                   below_floor=False, epochs=0, still_improving=False)
    else:
        dims = [inst.dim, *cell["widths"], 1]
        net0 = SigmaNetwork.random(dims, "relu", seed=cell["seed"], bias_scale=0.5)
        res = _train(net0, inst, Y, cell["epochs"], cell["lr"], cell)
        losses = res.history["loss"]
        improving = res.history["reason"] == "epochs" and _still_improving(losses, cell)
        row.update(evaluate_net(res.network, inst, Y, target=cell["target"]),
                   depth=2 if cell["kind"] == "depth2" else 3, trained=True,
                   epochs=res.history["epochs"], reason=res.history["reason"],
                   still_improving=improving)
        row["device"] = res.history["settings"]["device"]     # hook: which device trained
    row["seconds"] = time.perf_counter() - t0
    return row


def separation_table(ns, *, targets=DEFAULT_TARGETS, widths=DEFAULT_WIDTHS,
                     depth3=DEFAULT_DEPTH3, depth3_max_n: int = 10, seeds: int = 2,
                     base_seed: int = 0, epochs: int = 600, lr: float = 0.02,
                     resume: "str | os.PathLike | None" = None, executor=None, client=None,
                     progress: bool = False, stall_window: "int | None" = None,
                     stall_tol: float = 1e-3, work: "float | None" = None) -> dict:
    """The E23 table (entry point).  Returns ``{"rows": [...], "summary": [...], "verdict":
    {...}, "prediction": PREDICTION, "cells": total, "resumed": how many came from ``resume``}``.

    Parameters
    ----------
    ns : iterable of int
        Bits per party (1..12; each epoch costs about 4^n·w).
    targets : names from :mod:`networks.separation.targets` (``ip`` is always the hard one).
    widths : width rules for depth 2 (:func:`~networks.separation.cells.width_of`: ``"n"``,
        ``"n^2"``, ``"n^3"``, ints).
    depth3 : pairs of width rules for trained depth 3 (run for n ≤ ``depth3_max_n``); a third
        element, ``(r1, r2, k)``, runs that pair only for n ≤ k as well.
    seeds : training seeds per cell; rows keep every seed, the summary the best and the median.
    epochs, lr : Adam epoch cap and step (full batch); runs stop early when the loss stalls.
    stall_window, stall_tol : convergence-based stopping (:func:`make_cells`): a trained cell
        stops when its best loss fell by less than ``stall_tol`` (relative) over
        ``stall_window`` epochs; None (default) keeps the patience rule.
    work : float, optional
        Per-cell work budget in pair-neuron terms (4^n·Πw per epoch,
        :func:`~networks.separation.cells.epoch_cap`): the safety net that caps the epochs of
        the most expensive cells.
    resume : path of a JSON-lines file; finished cells are appended as they complete and skipped
        on the next call with the same file (a killed or interrupted run loses only the cells in
        flight).
    executor, client : where cells run (:func:`circuits.utils.parallel.run_chunks`: None =
        this thread, "threads", a concurrent.futures executor, a Dask client); one cell per task.
    progress : bool
        A progress bar over cells.
    """
    ns = [check_int(n, name="ns", minimum=1, maximum=12, what="bits per party") for n in ns]
    seeds = check_int(seeds, name="seeds", minimum=1, what="training seeds per cell")
    cells = make_cells(ns, targets=targets, widths=widths, depth3=depth3,
                       depth3_max_n=depth3_max_n, seeds=seeds, base_seed=base_seed,
                       epochs=epochs, lr=lr, stall_window=stall_window, stall_tol=stall_tol,
                       work=work)
    rows, resumed = run_cells(cells, base_seed=base_seed, resume=resume, executor=executor,
                              client=client, progress=progress)
    summary = summarise(rows)
    return {"rows": rows, "summary": summary, "verdict": verdict(summary),
            "prediction": PREDICTION, "cells": len(cells), "resumed": resumed}


def run_cells(cells, *, base_seed=0, resume=None, executor=None, client=None, progress=False,
              desc="separate"):
    """(rows in the order of ``cells``, how many came from ``resume``): the cells not in the
    resume file run (one per task, :func:`run_cell`), each appended to it as it finishes
    (:func:`networks.separation.cell_runs.run_cells`)."""
    from networks.separation.cell_runs import run_cells as _run_cells

    return _run_cells(cells, run=run_cell, base_seed=base_seed, resume=resume, executor=executor,
                      client=client, progress=progress, desc=desc)


from networks.separation.depth_verdict import PREDICTION, summarise, verdict  # noqa: E402
from networks.separation.floor import (  # noqa: E402  (re-exported)
    exact_ip_rho, explicit_ip_j, floor_j, ip_floor, ip_floor_cos, ip_floor_r2)


from networks.separation.heldout import heldout_split  # noqa: E402
