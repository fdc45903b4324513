"""One cell of the E23 and E25 tables: width rules, equal parameter counts, exact metrics,
the stopping rules and the pinned threads (:mod:`networks.separation.separate` builds and runs the
cells; :mod:`networks.separation.curriculum` adds its own kinds).

A width rule is an int or a polynomial of n (:func:`width_of`); :func:`matched_width` gives the
depth-2 width of the same parameter count as a deeper net; :func:`evaluate_net` measures a net on
all 4^n pairs (exact, scale-free cos and best-affine R² included); :class:`Cell` names a cell in
the resume file; :func:`epoch_cap` and :func:`stopping` are a trained cell's budget and stopping
rule; every cell runs inside :func:`pinned_threads` (one numba and one BLAS thread), so the same
cell gives the same row bit for bit.

Examples
--------
>>> width_of("n^2", 5), width_of("n+1", 5), matched_width(8 * 4, [4, 5])
(25, 6, 5)
"""

from __future__ import annotations

import contextlib
import json
import math

import numpy as np

from circuits.utils.errors import InvalidArgumentError
from circuits.utils.validation import check_int
from networks.separation.floor import floor_j, ip_floor_cos, ip_floor_r2

__all__ = ["width_of", "param_count", "matched_width", "path_norm", "evaluate_net", "Cell",
           "epoch_cap", "stopping", "pinned_threads", "STILL_IMPROVING", "MIN_CAPPED_EPOCHS"]

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


def _train(net, inst, Y, epochs, lr, cell=None, freeze_first=False):
    """Full-batch Adam on all 4^n pairs (:func:`networks.train_product.train_product`) with the
    cell's stopping rule (:func:`stopping`), loss target 1e-6 and no time limit (the epoch
    budget is the user's choice and every cell is resumable)."""
    from networks.train_product import train_product

    return train_product(net, inst, targets=Y, epochs=epochs, lr=lr, target_loss=1e-6,
                         max_seconds=None, freeze_first=freeze_first, **stopping(cell or {}))


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

