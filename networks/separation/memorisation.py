"""The E20 memorisation curve (THEORY §5 row E20, superseded by E21 and E22).

Smallest width at which a network fits the 4^n support points of μ₀ to a target MSE.  The same
widths arise with randomly permuted labels, so this measures memorisation capacity, not depth
separation; it is kept because THEORY's E20 row quotes its random-feature baseline.

* :func:`random_feature_mse` — ReLU(Xw + b) features, w ~ N(0, m I), b ~ N(0, 1), output weights
  and bias by least squares (THEORY §5, E20 baseline);
* :func:`random_feature_curve` — widths 2, 4, 8, … until the best of ``draws`` reaches the target;
* :func:`trained_curve` — the same for Adam-trained depth-2 or depth-3 ReLU networks.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["width_sweep", "run_seed", "random_feature_mse", "random_feature_curve",
           "trained_curve"]


def width_sweep(factor: float, max_width: int, start: int = 2) -> list:
    """Geometric widths start, start·factor, ... (rounded, distinct) up to max_width.

    >>> width_sweep(2.0, 40)
    [2, 4, 8, 16, 32]
    """
    out, w = [], float(start)
    while round(w) <= max_width:
        if not out or round(w) > out[-1]:
            out.append(int(round(w)))
        w *= factor
    return out


def run_seed(base: int, *key) -> int:
    """A 32-bit seed derived from the base seed and a key.

    >>> run_seed(0, 3, 2, 8, 0) == run_seed(0, 3, 2, 8, 0) != run_seed(0, 3, 2, 8, 1)
    True
    """
    return int(np.random.SeedSequence([int(base), *map(int, key)]).generate_state(1)[0])


def random_feature_mse(X, y, width: int, *, m: int, seed) -> float:
    """MSE on (X, y) of least squares over ReLU(X w + b) features plus a bias (E20 baseline).

    >>> X = np.eye(4) / 2; y = np.array([0.0, 1.0, 1.0, 0.0])
    >>> random_feature_mse(X, y, 16, m=2, seed=0) < 1e-20     # interpolates 4 points
    True
    """
    from scipy.linalg import lstsq

    rng = np.random.default_rng(seed)
    W = rng.normal(0.0, math.sqrt(m), size=(X.shape[1], width))
    b = rng.normal(0.0, 1.0, size=width)
    F = np.empty((X.shape[0], width + 1))
    np.maximum(X @ W + b, 0.0, out=F[:, :width])
    F[:, width] = 1.0
    coef = lstsq(F, y, lapack_driver="gelsy", check_finite=False)[0]
    r = F @ coef - y
    return float(r @ r) / X.shape[0]


def _smallest(widths, values, target):
    return next((w for w, v in zip(widths, values) if v is not None and v <= target), None)


def _width_curve(best_of, *, target: float, max_width: int) -> dict:
    """Widths 2, 4, … up to ``max_width``: ``best_of(width)`` (the best MSE at that width) until it
    reaches ``target``; the curve and the smallest width that reached it."""
    widths, best = [], []
    for width in width_sweep(2.0, max_width):
        widths.append(width)
        best.append(best_of(width))
        if best[-1] <= target:
            break
    return {"widths": widths, "best_mse": best, "smallest_width": _smallest(widths, best, target),
            "max_width": max_width}


def random_feature_curve(X, y, *, m: int, target: float, max_width: int, draws: int = 3,
                         seed: int = 0, n: int = 0) -> dict:
    """Widths 2^j (j >= 1) until the best of ``draws`` draws reaches ``target`` or max_width."""
    return _width_curve(lambda width: min(
        random_feature_mse(X, y, width, m=m, seed=run_seed(seed, n, 0, width, r))
        for r in range(draws)), target=target, max_width=max_width)


def trained_curve(X, y, *, depth: int, max_width: int, target: float, repeats: int = 2,
                  epochs: int = 2000, lr: float = 0.01, patience: int = 300, seed: int = 0,
                  n: int = 0) -> dict:
    """Adam-trained depth-``depth`` ReLU nets over widths 2, 4, … (stop at the first success)."""
    from networks.sigma import SigmaNetwork
    from networks.train import train

    d = X.shape[1]

    def best_of(width):
        vals = []
        for r in range(repeats):
            net = SigmaNetwork.random([d] + [width] * (depth - 1) + [1], "relu",
                                      seed=run_seed(seed, n, depth, width, r))
            res = train(net, X, y, epochs=epochs, lr=lr, patience=patience, tol=1e-6,
                        target_loss=target, dtype="float32")
            vals.append(res.history["final_loss"])
        return min(vals)

    return _width_curve(best_of, target=target, max_width=max_width)
