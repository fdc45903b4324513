"""Held-out generalisation of E23: train on a random half of the 4^n pairs, test on the other."""

from __future__ import annotations

import time

import numpy as np

from circuits.utils.validation import check_int

__all__ = ["heldout_split"]


def heldout_split(n: int, target: str, width, *, seed: int = 0, epochs: int = 600,
                  lr: float = 0.02, base_seed: int = 0) -> dict:
    """Train a depth-2 ReLU net on a random half of the 4^n pairs, test on the other half.

    Explicit points (:func:`networks.train`, full batch), so n ≤ 8.  Returns train and test
    MSE and R² (R² against the variance of the labels of each half) and the width.
    """
    from embeddings import HardInstance
    from networks.sigma import SigmaNetwork
    from networks.separation.targets import target_table
    from networks.train import train

    n = check_int(n, name="n", minimum=1, maximum=8, what="bits per party (explicit points)")
    from networks.separation.cells import pinned_threads, width_of

    w = width_of(width, n)
    inst = HardInstance(n, seed=base_seed)
    sup = inst.support()
    size = 1 << n
    idx = np.arange(size * size)
    a, b = idx % size, idx // size                       # cube order: index a + 2^n·b
    y = target_table(target, n, seed=base_seed, generator=inst.embedding.generator)[a, b]
    perm = np.random.default_rng([seed, n, 4242]).permutation(idx.size)
    tr, te = perm[: idx.size // 2], perm[idx.size // 2:]
    net0 = SigmaNetwork.random([inst.dim, w, 1], "relu", seed=seed, bias_scale=0.5)
    t0 = time.perf_counter()
    out = {}
    with pinned_threads():                   # bit-reproducible whatever the thread settings
        res = train(net0, sup.points[tr], y[tr], epochs=epochs, lr=lr, patience=100, tol=1e-7)
        for name, part in (("train", tr), ("test", te)):
            v = res.network(sup.points[part])
            mse = float(np.mean((v - y[part]) ** 2))
            var = float(np.var(y[part]))
            out[f"{name}_mse"] = mse
            out[f"{name}_r2"] = 1.0 - mse / var if var > 0 else None
    out.update(n=n, target=target, rule=str(width), width=w, seed=seed,
               epochs=res.history["epochs"], seconds=time.perf_counter() - t0)
    return out
