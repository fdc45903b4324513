"""E25 on held-out halves: does a net trained along the ip_j dial learn IP or memorise its pairs?

A net that fits its training pairs may have learnt the target or memorised the pairs; the two
are told apart on pairs it never saw.  Here each party's 2^n inputs are split at random into two
halves, A = A_tr ∪ A_te and B = B_tr ∪ B_te (:func:`heldout_quadrants`, seeded by the base seed
and n), the net is trained on the **training quadrant** A_tr × B_tr (a quarter of the 4^n pairs,
still a product set, so the product-form trainer runs on it unchanged) and measured on the
**held-out quadrant** A_te × B_te, where neither Alice's nor Bob's input was seen.  A memoriser
scores ≈ 0 there (random labels are the control that shows it); a net that found the AND
structure of IP scores as on its training pairs.

Cells (kinds ``curriculum_heldout``, ``cold_heldout`` and ``and_stage_heldout``, computed by
:func:`run_heldout_cell`) mirror the ``curriculum`` / ``cold`` / ``and_stage`` cells of
:mod:`networks.separation.curriculum`; their main metrics (``r2_affine``, ``rho``, ``cos``, ...)
are those of the held-out quadrant, exact over its 4^{n−1} pairs, and ``train_r2_affine`` is
the training quadrant's.  The verdict's clauses ``depth_gain_heldout`` and
``depth_gain_and_stage_heldout`` compare depth 3 with depth 2 of equal parameter count on these
numbers, random labels as the control.  The AND stage is where held-out pairs can tell the two
apart: a first layer that carries the AND count a·b on *every* input (MAJ∘AND needs nothing
else) lets the upper layers of depth 3 compute IP = (a·b mod 2) on inputs it never saw.

Examples
--------
>>> from embeddings import HardInstance
>>> q = heldout_quadrants(HardInstance(3, seed=0), seed=0)
>>> sorted(q["a_train"].tolist() + q["a_test"].tolist()) == list(range(8)), q["train"].size
(True, 4)
"""

from __future__ import annotations

import time

import numpy as np

__all__ = ["heldout_quadrants", "run_heldout_cell", "HELDOUT_KINDS", "quadrant_metrics"]

#: The held-out kinds of cell (dispatched by :func:`networks.separation.separate.run_cell`).
HELDOUT_KINDS = ("curriculum_heldout", "cold_heldout", "and_stage_heldout")


def heldout_quadrants(instance, seed: int = 0) -> dict:
    """The training and held-out quadrants of ``instance`` (an :class:`embeddings.HardInstance`):
    ``a_train``, ``a_test``, ``b_train``, ``b_test`` (sorted index arrays, each half of
    0..2^n − 1, from a permutation seeded by ``(seed, n)``) and ``train`` / ``test``, the
    :class:`networks.product.support.ProductSupport` of A_tr × B_tr and A_te × B_te (2^{n−1}
    inputs per party; the code and embedding of the instance)."""
    from circuits.utils.errors import InvalidArgumentError
    from networks.product.parts import frozen
    from networks.product.support import ProductSupport, product_support

    sup = product_support(instance)
    if sup.n < 2:
        raise InvalidArgumentError(f"held-out halves need n >= 2 (two inputs per half), got "
                                   f"n = {sup.n}")
    half = sup.size // 2
    rng = np.random.default_rng([int(seed), sup.n, 2525])
    pa, pb = rng.permutation(sup.size), rng.permutation(sup.size)
    idx = {"a_train": np.sort(pa[:half]), "a_test": np.sort(pa[half:]),
           "b_train": np.sort(pb[:half]), "b_test": np.sort(pb[half:])}

    def sub(a, b):
        # n − 1 bits per party: the sub-support has 2^{n−1} rows on each side
        return ProductSupport(n=sup.n - 1, m=sup.m, XA=frozen(sup.XA[a], np.float64),
                              XB=frozen(sup.XB[b], np.float64),
                              code_bits=frozen(sup.code_bits[a], np.uint8))

    return {**idx, "train": sub(idx["a_train"], idx["b_train"]),
            "test": sub(idx["a_test"], idx["b_test"])}


def quadrant_metrics(net, support, Y) -> dict:
    """ρ, MSE, R², best-affine R², cos and accuracy of ``net`` on a quadrant (exact over its
    pairs; ``Y`` the quadrant's 0/1 table)."""
    from networks.separation.ceiling import exact_correlation

    ex = exact_correlation(net, support, Y)
    p = float(np.mean(Y))
    var = p * (1.0 - p)
    return {"rho": ex["rho"], "mse": ex["mse"], "gamma": 0.25 - ex["mse"],
            "r2": (1.0 - ex["mse"] / var) if var > 0 else None, "accuracy": ex["accuracy"],
            "cos": ex["cos"], "r2_affine": ex["r2_affine"], "label_mean": p}


def run_heldout_cell(cell, base_seed: int = 0) -> dict:
    """One held-out E25 row: the net of the cell trained on the training quadrant (along the
    dial for ``curriculum_heldout``, cold on the final labels for ``cold_heldout``, MAJ∘AND then
    the labels with depth 3's first layer frozen for ``and_stage_heldout``) and measured on the
    held-out quadrant (call inside
    :func:`networks.separation.cells.pinned_threads`)."""
    from embeddings import HardInstance
    from networks.separation.cells import _still_improving, _train, param_count, path_norm
    from networks.separation.targets import target_table
    from networks.sigma import SigmaNetwork

    n, bs = cell["n"], cell.get("base_seed", base_seed)
    t0 = time.perf_counter()
    inst = HardInstance(n, seed=bs)
    gen = inst.embedding.generator
    q = heldout_quadrants(inst, seed=bs)
    tr = np.ix_(q["a_train"], q["b_train"])
    te = np.ix_(q["a_test"], q["b_test"])
    Y = target_table(cell["target"], n, seed=bs, generator=gen)
    net = SigmaNetwork.random([inst.dim, *cell["widths"], 1], "relu", seed=cell["seed"],
                              bias_scale=0.5)
    row = {k: cell[k] for k in ("kind", "target", "n", "rule", "widths", "seed")}
    stages = []
    if cell["kind"] == "curriculum_heldout" and cell["target"] == "ip":
        for j in range(1, n + 1):
            Yj = target_table(f"ip_{j}" if j < n else "ip", n, seed=bs, generator=gen)
            res = _train(net, q["train"], np.ascontiguousarray(Yj[tr]), cell["epochs"],
                         cell["lr"], cell)
            net = res.network
            stages.append({"j": j, "epochs": res.history["epochs"],
                           "reason": res.history["reason"],
                           "r2_affine_stage": quadrant_metrics(net, q["train"],
                                                               Yj[tr])["r2_affine"],
                           "r2_affine_ip_test": quadrant_metrics(net, q["test"],
                                                                 Y[te])["r2_affine"]})
    elif cell["kind"] == "and_stage_heldout":
        # as the and_stage cell, on the training quadrant only (MAJ∘AND's labels there too)
        from networks.separation.stages import run_and_stage

        Yip = target_table("ip", n, seed=bs, generator=gen)
        net, res, stages = run_and_stage(
            net, cell, target_table("majand", n, seed=bs, generator=gen), Y,
            train=lambda net_, labels, freeze: _train(
                net_, q["train"], np.ascontiguousarray(labels[tr]), n * cell["epochs"],
                cell["lr"], cell, freeze_first=freeze),
            measure=lambda net_, labels: {
                "r2_affine_stage": quadrant_metrics(net_, q["train"], labels[tr])["r2_affine"],
                "r2_affine_stage_test": quadrant_metrics(net_, q["test"],
                                                         labels[te])["r2_affine"],
                "r2_affine_ip_test": quadrant_metrics(net_, q["test"], Yip[te])["r2_affine"]})
    else:                       # cold: n·epochs on the final labels (IP or random)
        res = _train(net, q["train"], np.ascontiguousarray(Y[tr]), n * cell["epochs"],
                     cell["lr"], cell)
        net = res.network
    train = quadrant_metrics(net, q["train"], Y[tr])
    row.update(quadrant_metrics(net, q["test"], Y[te]), train_r2_affine=train["r2_affine"],
               train_r2=train["r2"], path_norm=path_norm(net), params=param_count(net.dims),
               depth=len(cell["widths"]) + 1, trained=True, stages=stages, heldout=True,
               epochs=sum(s["epochs"] for s in stages) if stages else res.history["epochs"],
               reason=res.history["reason"],
               still_improving=res.history["reason"] == "epochs"
               and _still_improving(res.history["loss"], cell))
    row["seconds"] = time.perf_counter() - t0
    return row
