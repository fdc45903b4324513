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
  :func:`matched_width`), so that the depth comparison is at equal parameter count.
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
one BLAS thread (:func:`pinned_threads`), so the same cell gives the same row bit for bit.

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

import contextlib
import json
import math
import os
import time

import numpy as np

from circuits.utils.errors import InvalidArgumentError
from circuits.utils.validation import check_int

__all__ = ["separation_table", "explicit_ip_j", "floor_j", "ip_floor", "width_of",
           "path_norm", "evaluate_net", "verdict", "heldout_split", "PREDICTION", "Cell",
           "make_cells", "run_cell", "exact_ip_rho", "DEFAULT_TARGETS", "DEFAULT_WIDTHS",
           "DEFAULT_DEPTH3", "ip_floor_r2", "ip_floor_cos", "param_count", "matched_width",
           "pinned_threads", "summarise", "epoch_cap", "stopping"]

DEFAULT_TARGETS = ("ip", "majand", "random")
DEFAULT_WIDTHS = ("n", "n^2")
DEFAULT_DEPTH3 = (("n", "n+1"), ("n^2", "n"))
#: Relative loss decrease over the last tenth of the epochs above which a run that ended on its
#: epoch budget is flagged "still improving".
STILL_IMPROVING = 1e-3
#: With a work budget (:func:`epoch_cap`), no trained cell gets fewer epochs than this.
MIN_CAPPED_EPOCHS = 200


# --------------------------------------------------------------------------------------------
# widths


def width_of(rule, n: int) -> int:
    """The width a rule gives at n: an int, or a polynomial of n written ``n``, ``2n``,
    ``n^2``, ``n^3``, ``n+1``, ``2n^2+1`` (terms c·n^k and constants joined by ``+``)."""
    n = check_int(n, name="n", minimum=1, what="bits per party")
    if isinstance(rule, (int, np.integer)) and not isinstance(rule, bool):
        w = int(rule)
    else:
        text = str(rule).replace(" ", "").replace("**", "^").replace("*", "")
        w = 0
        try:
            for term in text.split("+"):
                if "n" in term:
                    coef, _, power = term.partition("n")
                    w += (int(coef) if coef else 1) * n ** (int(power[1:]) if power else 1)
                else:
                    w += int(term)
        except ValueError:
            raise InvalidArgumentError(f"width rule {rule!r}: expected an int or a polynomial of "
                                       f"n such as n, 2n, n^2, n^3, n+1") from None
    if w < 1:
        raise InvalidArgumentError(f"width rule {rule!r} gives width {w} at n = {n}; widths "
                                   f"must be >= 1")
    return w


def param_count(dims) -> int:
    """Weights and biases of a fully connected net of layer sizes ``dims`` = [d, w1, ..., 1]."""
    return int(sum((a + 1) * b for a, b in zip(dims[:-1], dims[1:])))


def matched_width(dim: int, widths) -> int:
    """The depth-2 width whose parameter count, w(d + 2) + 1, is nearest to that of a net of
    hidden widths ``widths`` on input dimension ``dim`` (equal parameter counts across depths)."""
    p = param_count([dim, *widths, 1])
    return max(1, int(round((p - 1) / (dim + 2))))


def path_norm(net) -> "float | None":
    """P = Σ_i |u_i|(|b_i| + ‖w_i‖₂) of a depth-2 net (None for other depths): on ‖x‖ ≤ 1,
    |u_i σ(⟨w_i, x⟩ + b_i)| ≤ |u_i|(|b_i| + ‖w_i‖) for a 1-Lipschitz σ with σ(0) = 0."""
    if net.depth != 2:
        return None
    hid, out = net.layers
    u = np.abs(out.weights[0])
    return math.fsum((u * (np.abs(hid.bias) + np.linalg.norm(hid.weights, axis=1))).tolist())


def evaluate_net(net, instance, Y, *, target: str) -> dict:
    """γ, ρ, R², MSE, accuracy, the scale-free cos = ρ/√E[Ñ²] and best-affine R², path norm and
    parameter count of ``net`` against table Y (all 4^n pairs, exact), and for IP rows of depth 2
    the neuron-wise §4.7 ceiling on |ρ| and the floor at the same width: ``floor`` is the
    best-affine R² of the explicit IP_j net (:func:`ip_floor_r2`), ``floor_cos`` its cos, and
    ``below_floor`` compares best-affine R² (a rescaled net gives the same flag)."""
    from networks.separation.ceiling import correlation_ceiling, exact_correlation

    ex = exact_correlation(net, instance, Y)
    p = float(np.mean(Y))
    var = p * (1.0 - p)
    row = {"rho": ex["rho"], "mse": ex["mse"], "gamma": 0.25 - ex["mse"],
           "r2": (1.0 - ex["mse"] / var) if var > 0 else None, "accuracy": ex["accuracy"],
           "cos": ex["cos"], "r2_affine": ex["r2_affine"],
           "path_norm": path_norm(net), "label_mean": p, "params": param_count(net.dims)}
    if target == "ip" and net.depth == 2:
        ceil = correlation_ceiling(net, instance.n)
        width = net.dims[1]
        fl = ip_floor_r2(instance.n, width)
        # the floor flag is scale-free: best-affine R² against the floor net's (cos printed too)
        row.update(ceiling=ceil.neuronwise_rho_bound,
                   ceiling_vacuous=bool(ceil.neuronwise_rho_bound >= 1.0),
                   floor=fl, floor_cos=ip_floor_cos(instance.n, width),
                   floor_j=min(instance.n, floor_j(width)),
                   below_floor=bool(ex["r2_affine"] < fl))
    return row


# --------------------------------------------------------------------------------------------
# cells


class Cell(dict):
    """One independent unit of the table: ``kind`` ("depth2", "depth3", "exact3", "floor"),
    ``target``, ``n``, ``widths`` (list), ``rule`` (text), ``seed``, training settings.
    Its ``key`` names it in the resume file."""

    @property
    def key(self) -> str:
        key = [self["kind"], self["target"], self["n"], self["rule"], self["seed"],
               self.get("epochs"), self.get("lr"), self.get("base_seed")]
        if self.get("stall_window") is not None:
            # convergence-based stopping enters the key (cells of the patience rule keep theirs)
            key += [self["stall_window"], self["stall_tol"]]
        return json.dumps(key, separators=(",", ":"))


def epoch_cap(epochs: int, n: int, widths, work: "float | None" = None,
              min_epochs: int = MIN_CAPPED_EPOCHS) -> int:
    """The epoch cap of a trained cell: ``epochs``, and with a work budget ``work`` (pair-neuron
    terms 4^n·Πw summed over epochs) at most ``work / (4^n·Πw)`` epochs, but never fewer than
    ``min(epochs, min_epochs)``.  A pure function of the cell's shape (no clock), so the cap
    and the rows are the same on every machine.

    >>> epoch_cap(4000, 12, [144], work=1e12), epoch_cap(4000, 12, [144, 12], work=1e12)
    (413, 200)
    """
    if work is None:
        return int(epochs)
    per_epoch = 4 ** int(n) * math.prod(int(w) for w in widths)
    return int(min(epochs, max(min(epochs, min_epochs), work // per_epoch)))


def make_cells(ns, *, targets=DEFAULT_TARGETS, widths=DEFAULT_WIDTHS, depth3=DEFAULT_DEPTH3,
               depth3_max_n: int = 10, seeds: int = 2, base_seed: int = 0, epochs: int = 600,
               lr: float = 0.02, stall_window: "int | None" = None, stall_tol: float = 1e-3,
               work: "float | None" = None) -> list:
    """Every cell of the table, cheapest first within each n.

    For every depth-3 width pair a depth-2 cell of the same parameter count
    (:func:`matched_width`, input dimension d = 8n of the default code m = 4n) is added, rule
    ``params(r1, r2)``, unless a depth-2 width rule already gives that width: the learnability
    comparison of the verdict is depth 3 against depth 2 at equal parameter count.

    ``stall_window``/``stall_tol``: convergence-based stopping (a trained cell stops when its
    best loss fell by less than ``stall_tol`` relative over ``stall_window`` epochs,
    :func:`networks.train_product.train_product`); None keeps the patience rule (100 epochs
    without an absolute improvement of 1e-7).  ``work``: a per-cell budget in pair-neuron terms
    (:func:`epoch_cap`); each trained cell's ``epochs`` is its own cap."""
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


def stopping(cell) -> dict:
    """The stopping keywords of :func:`networks.train_product.train_product` for a trained cell:
    the stall rule when the cell has one (``patience`` off), else the patience rule."""
    if cell.get("stall_window") is not None:
        return {"patience": None, "stall_window": cell["stall_window"],
                "stall_tol": cell["stall_tol"]}
    return {"patience": 100, "tol": 1e-7}


def _still_improving(losses, cell=None) -> bool:
    """Whether a run that ended on its epoch cap was still improving: with the stall rule, its
    best loss fell by at least ``stall_tol`` (relative) over the last ``stall_window`` epochs
    (or the run was shorter than the window); else the loss fell by more than
    :data:`STILL_IMPROVING` over the last tenth of the epochs."""
    if cell is not None and cell.get("stall_window") is not None:
        window = int(cell["stall_window"])
        if len(losses) <= window:
            return True
        before, after = min(losses[:-window]), min(losses)
        return bool(before - after >= cell["stall_tol"] * before)
    if len(losses) < 20:
        return True
    tail = max(2, len(losses) // 10)
    before, after = losses[-tail], losses[-1]
    return bool(before - after > STILL_IMPROVING * max(before, 1e-12))


def run_cell(cell, *, base_seed: int = 0) -> dict:
    """Compute one cell (a pure function of the cell and the base seed, bit for bit: the
    threads are pinned, :func:`pinned_threads`): the row dict."""
    with pinned_threads():
        from networks.separation.curriculum import CURRICULUM_KINDS

        if cell["kind"] in CURRICULUM_KINDS:
            from networks.separation.curriculum import run_curriculum_cell

            return run_curriculum_cell(cell, base_seed)
        return _run_cell(cell, base_seed)


@contextlib.contextmanager
def pinned_threads():
    """One numba and one BLAS thread for the block: every reduction runs in one fixed order, so
    a row is a bit-exact function of its cell whatever NUMBA_NUM_THREADS, OMP_NUM_THREADS or the
    BLAS say (parallelism is across cells; numba's thread count is thread-local)."""
    import numba

    from networks.train_product import blas_threads

    before = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        with blas_threads(1):
            yield
    finally:
        numba.set_num_threads(before)


def _run_cell(cell, base_seed):
    from embeddings import HardInstance
    from networks.sigma import SigmaNetwork
    from networks.separation.targets import target_table
    from networks.train_product import train_product

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
        # the epoch budget is the user's choice and every cell is resumable: no time refusal
        res = train_product(net0, inst, targets=Y, epochs=cell["epochs"], lr=cell["lr"],
                            target_loss=1e-6, max_seconds=None, **stopping(cell))
        losses = res.history["loss"]
        improving = res.history["reason"] == "epochs" and _still_improving(losses, cell)
        row.update(evaluate_net(res.network, inst, Y, target=cell["target"]),
                   depth=2 if cell["kind"] == "depth2" else 3, trained=True,
                   epochs=res.history["epochs"], reason=res.history["reason"],
                   still_improving=improving)
        row["device"] = res.history["settings"]["device"]     # hook: which device trained
    row["seconds"] = time.perf_counter() - t0
    return row


class _CellRunner:
    """Picklable chunk function for :func:`circuits.utils.parallel.run_chunks`: cells [start,
    stop) of a fixed list."""

    def __init__(self, cells, base_seed):
        self.cells, self.base_seed = list(cells), base_seed

    def __call__(self, start, stop):
        return [(self.cells[i].key, run_cell(self.cells[i], base_seed=self.base_seed))
                for i in range(start, stop)]


def _check_row(key: str, row: dict) -> "str | None":
    """Why the resume row ``row`` cannot be the cell ``key`` (``None``: it can).  The row must
    name the same cell as its key and hold only the plain values a computed row holds."""
    try:
        kind, target, n, rule, seed = json.loads(key)[:5]
    except (ValueError, TypeError):
        return "the key is not a cell key"
    if [row.get(f) for f in ("kind", "target", "n", "rule", "seed")] != [kind, target, n, rule,
                                                                        seed]:
        return f"the row names another cell than its key {key[:80]}"
    for f in ("rho", "seconds"):
        if isinstance(row.get(f), bool) or not isinstance(row.get(f), (int, float)):
            return f"row field {f!r} must be a number"
    widths = row.get("widths")
    if not isinstance(widths, list) or not all(type(w) is int for w in widths):
        return "row field 'widths' must be a list of integers"
    for f, v in row.items():
        if not _plain(v):
            return (f"row field {f!r} holds a {type(v).__name__} that is not plain data (numbers, "
                    f"text, and lists or objects of them, at most {_PLAIN_DEPTH} deep)")
    return None


_PLAIN_DEPTH = 3


def _plain(v, depth: int = 0) -> bool:
    """Whether ``v`` is plain row data: None, a bool, number or text, or (at most
    :data:`_PLAIN_DEPTH` levels of) lists and text-keyed objects of them -- what a computed row
    holds (a curriculum row keeps its stages as a list of objects)."""
    if v is None or isinstance(v, (bool, int, float, str)):
        return True
    if depth >= _PLAIN_DEPTH:
        return False
    if isinstance(v, list):
        return all(_plain(x, depth + 1) for x in v)
    if isinstance(v, dict):
        return all(isinstance(k, str) and _plain(x, depth + 1) for k, x in v.items())
    return False


def _load_resume(path) -> dict:
    """Finished cells of the resume file (:func:`circuits.utils.resume.load_jsonl`: regular
    file, size cap, every row checked against its key and checksum; a bad file moved aside)."""
    from circuits.utils.resume import load_jsonl

    return load_jsonl(path, check_row=_check_row)


def _append_resume(path, key, row) -> None:
    from circuits.utils.resume import append_jsonl

    append_jsonl(path, key, row)


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
    widths : width rules for depth 2 (:func:`width_of`: ``"n"``, ``"n^2"``, ``"n^3"``, ints).
    depth3 : pairs of width rules for trained depth 3 (run for n ≤ ``depth3_max_n``); a third
        element, ``(r1, r2, k)``, runs that pair only for n ≤ k as well.
    seeds : training seeds per cell; rows keep every seed, the summary the best and the median.
    epochs, lr : Adam epoch cap and step (full batch); runs stop early when the loss stalls.
    stall_window, stall_tol : convergence-based stopping (:func:`make_cells`): a trained cell
        stops when its best loss fell by less than ``stall_tol`` (relative) over
        ``stall_window`` epochs; None (default) keeps the patience rule.
    work : float, optional
        Per-cell work budget in pair-neuron terms (4^n·Πw per epoch, :func:`epoch_cap`): the
        safety net that caps the epochs of the most expensive cells.
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
    resume file run (one per task), each appended to it as it finishes."""
    from circuits.utils.parallel import run_chunks

    done = _load_resume(resume)
    resumed = sum(1 for c in cells if c.key in done)
    todo = [c for c in cells if c.key not in done]
    todo.sort(key=lambda c: (c["n"], int(np.prod(c["widths"]))))

    def combine(acc, part):
        # a monoid on lists of (key, row); the runner may fold slices before folding chunks, so
        # the resume file is written once per key, when the key is first seen
        for key, row in part:
            if key not in done:
                if resume is not None:
                    _append_resume(resume, key, row)
                done[key] = row
        return acc + list(part)

    if todo:
        run_chunks(_CellRunner(todo, base_seed), len(todo), combine=combine, initial=[],
                   executor=executor, client=client, chunk_size=1, progress=progress,
                   desc=desc, max_seconds=None, timeout=None)
    return [done[c.key] for c in cells], resumed


from networks.separation.depth_verdict import PREDICTION, summarise, verdict  # noqa: E402
from networks.separation.floor import (  # noqa: E402  (re-exported)
    exact_ip_rho, explicit_ip_j, floor_j, ip_floor, ip_floor_cos, ip_floor_r2)


from networks.separation.heldout import heldout_split  # noqa: E402
