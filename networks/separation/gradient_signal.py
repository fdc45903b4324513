"""Why cold training fails on IP: the label's gradient signal at initialisation, exact (E25).

For the MSE L = E[(N − y)²] over the 4^n pairs, the gradient is
∇L = 2E[N·∇N] − 2E[y·∇N], and with S = 1 − 2y the part that depends on the labels is

    ∇L(y) − ∇L(1/2) = −2E[(y − 1/2)·∇N] = E[S·∇N],

the correlation of the labels with the net's parameter gradient: the only thing that tells a
randomly initialised net *which* function to learn.  :func:`gradient_signal` computes
‖E[S·∇_θ N]‖₂ exactly (two calls of :func:`networks.train_product.product_loss_and_gradient` in
float64, labels y and the constant 1/2, all 4^n pairs) for several targets on the *same* random
inits, so the ratio between targets is free of the net's scale.  For IP one expects the signal to
fall like 2^{−n/2} (every ReLU unit is a mixture of threshold gates, each of correlation at most
(n + 1)2^{−n/2} with (−1)^IP); for MAJ∘AND it stays of order 1; for random labels it is the
noise floor, about 2^{−n} times a dimension factor; for a fixed ip_j it does not fall with n.

Examples
--------
>>> rows = gradient_signal(3, ("ip", "majand"), inits=2)
>>> [r["target"] for r in rows], all(r["signal_mean"] > 0 for r in rows)
(['ip', 'majand'], True)
"""

from __future__ import annotations

import math

import numpy as np

from circuits.utils.validation import check_int

__all__ = ["gradient_signal", "gradient_signal_table", "signal_exponent", "default_widths",
           "DEFAULT_SIGNAL_TARGETS"]

DEFAULT_SIGNAL_TARGETS = ("ip", "majand", "random", "ip_1", "ip_2")


def _flat(grads) -> np.ndarray:
    return np.concatenate([np.ravel(np.asarray(x, dtype=np.float64))
                           for pair in grads for x in pair])


def default_widths(n: int, depth: int) -> list:
    """Depth 2: width n²; depth 3: (2n, n + 1) (the E25 curriculum nets)."""
    return [n * n] if depth == 2 else [2 * n, n + 1]


def gradient_signal(n: int, targets=DEFAULT_SIGNAL_TARGETS, *, depth: int = 2, widths=None,
                    inits: int = 8, base_seed: int = 0) -> list:
    """Per target: ‖E[S·∇_θ N]‖₂ at initialisation, exact over the 4^n pairs, for ``inits``
    random depth-``depth`` ReLU nets (``SigmaNetwork.random(..., bias_scale=0.5)``, the E23
    init), the same nets for every target.  Rows: mean, median, min, max over the inits, and
    the ratio to the first target's signal on the same inits (median).  Threads are pinned
    (bit-reproducible)."""
    from embeddings import HardInstance
    from networks.separation.ceiling import run_seed
    from networks.separation.cells import pinned_threads
    from networks.separation.targets import target_table
    from networks.sigma import SigmaNetwork
    from networks.train_product import product_loss_and_gradient

    n = check_int(n, name="n", minimum=1, maximum=12, what="bits per party")
    depth = check_int(depth, name="depth", minimum=2, maximum=3, what="network depth")
    inits = check_int(inits, name="inits", minimum=1, what="random initialisations")
    widths = list(widths) if widths is not None else default_widths(n, depth)
    targets = [t for t in targets if not (t.startswith("ip_") and int(t[3:]) > n)]
    inst = HardInstance(n, seed=base_seed)
    gen = inst.embedding.generator
    tables = {t: target_table(t, n, seed=base_seed, generator=gen) for t in targets}
    half = np.full((1 << n, 1 << n), 0.5)
    sig = {t: [] for t in targets}
    with pinned_threads():
        for i in range(inits):
            net = SigmaNetwork.random([inst.dim, *widths, 1], "relu",
                                      seed=run_seed(base_seed, n, depth, i, 77), bias_scale=0.5)
            g0 = _flat(product_loss_and_gradient(net, inst, targets=half,
                                                 precision="float64")[1])
            for t in targets:
                g = _flat(product_loss_and_gradient(net, inst, targets=tables[t],
                                                    precision="float64")[1])
                sig[t].append(math.sqrt(math.fsum(((g - g0) ** 2).tolist())))
    ref = np.asarray(sig[targets[0]]) if targets else None
    rows = []
    for t in targets:
        v = np.asarray(sig[t])
        rows.append({"n": n, "target": t, "depth": depth, "widths": widths, "inits": inits,
                     "signal_mean": float(np.mean(v)), "signal_median": float(np.median(v)),
                     "signal_min": float(v.min()), "signal_max": float(v.max()),
                     "ratio_to_first": float(np.median(v / np.where(ref > 0, ref, 1.0))),
                     "first": targets[0], "per_init": v.tolist()})
    return rows


def gradient_signal_table(ns, targets=DEFAULT_SIGNAL_TARGETS, *, depths=(2, 3), inits: int = 8,
                          base_seed: int = 0, depth3_max_n: int = 8) -> list:
    """:func:`gradient_signal` for every n in ``ns`` and depth in ``depths`` (depth 3 up to
    ``depth3_max_n``)."""
    rows = []
    for n in ns:
        for depth in depths:
            if depth == 3 and n > depth3_max_n:
                continue
            rows += gradient_signal(n, targets, depth=depth, inits=inits, base_seed=base_seed)
    return rows


def signal_exponent(rows, target: str = "ip", depth: int = 2) -> "float | None":
    """Least-squares slope of log₂(mean signal) against n for one target and depth (−1/2 is
    the 2^{−n/2} law); None with fewer than two n."""
    pts = sorted((r["n"], r["signal_mean"]) for r in rows
                 if r["target"] == target and r["depth"] == depth and r["signal_mean"] > 0)
    if len(pts) < 2:
        return None
    x = np.array([p[0] for p in pts], dtype=float)
    y = np.log2([p[1] for p in pts])
    return float(np.polyfit(x, y, 1)[0])
