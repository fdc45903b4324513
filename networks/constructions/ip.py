"""THEORY §3.2: exact depth-3 ReLU networks for f_d on the support of mu_tau (box variant) and on
the R-cube support (v1 setting), and the label functions they represent.
"""

from __future__ import annotations

import math

import numpy as np

from circuits.functions import ip_values
from circuits.hypercube import index_of, join_index
from circuits.utils.errors import DimensionError, InvalidNetworkError
from networks.constructions._common import Construction, _int_at_least
from networks.sigma import DenseLayer, SigmaNetwork

__all__ = ["ip_depth3_relu", "ip_depth3_relu_rcube", "ip_of_decoded", "ip_of_rounded"]


def ip_of_decoded(X, n: int, m: int) -> np.ndarray:
    """IP(dec(x)) with a_i = [x_i > 0], b_i = [x_{m+i} > 0], i < n (THEORY §2.4), float64 0/1.

    Equals f_d on the support of mu_tau.

    >>> ip_of_decoded(np.array([[1.0, -1.0, 1.0, 1.0]]), 1, 2).tolist()
    [1.0]
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[1] < m + n:
        raise DimensionError(f"X must have shape (n_points, >= {m + n}), got {X.shape}")
    k = join_index(index_of(X[:, :n] > 0), index_of(X[:, m:m + n] > 0), n)
    return ip_values(k, n).astype(np.float64)


def ip_of_rounded(X, n: int) -> np.ndarray:
    """IP of the rounded coordinates on the R-cube: x_i = round(X_i), y_i = round(X_{n+i}).

    >>> ip_of_rounded(np.array([[0.9, 0.1, 0.8, 0.2]]), 2).tolist()
    [1.0]
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[1] != 2 * n:
        raise DimensionError(f"X must have shape (n_points, {2 * n}), got {X.shape}")
    return ip_values(index_of(X >= 0.5), n).astype(np.float64)


def _tri_layers(n: int, first_out: np.ndarray, first_bias: float = 0.0):
    """Layers 2-3 of §3.2: r_k = ReLU(S - k), k = 0..n, S = first_out . h + first_bias;
    y = r_0 + sum_{k>=1} 2 (-1)^k r_k = S mod 2 for S in {0..n}."""
    k = np.arange(n + 1, dtype=np.float64)
    W2 = np.tile(first_out, (n + 1, 1))
    b2 = first_bias - k
    v = np.where(np.arange(n + 1) % 2 == 1, -2.0, 2.0)
    v[0] = 1.0
    return DenseLayer(W2, b2), DenseLayer(v.reshape(1, -1), [0.0])


def ip_depth3_relu(n, m: int | None = None, *, tau: float | None = None) -> Construction:
    """Exact depth-3 ReLU network for f_d on the support of mu_tau (THEORY §3.2).

    Input x = (x^A, x^B) in R^{2m} (Alice coordinates [0, m), Bob [m, 2m), as in
    ``embeddings.HardInstance``).  tau = 0 (points): layer 1 has n units
    h_i = ReLU(sqrt(m/2)(x_i + x_{m+i})) = a_i b_i; layer 2 has n + 1 units r_k = ReLU(S - k);
    output r_0 + sum_k 2(-1)^k r_k = S mod 2 = IP(a, b).  tau > 0 (boxes): layer 1 has 2n units,
    h_i = [ReLU(t_i - tau) - ReLU(t_i - 1 + tau)]/(1 - 2 tau), t_i = (1+tau) sqrt(m/2)(x_i + x_{m+i}).

    Parameters
    ----------
    n : int or HardInstance
        Bits per party (>= 1), or an ``embeddings.HardInstance`` whose ``n``, ``m`` and ``tau``
        are used (then ``m`` and ``tau`` must not be passed).
    m : int, optional
        Code length per party (default 4n, as ``embeddings.CodeEmbedding``); m >= n.  Must be
        the instance's m: the net reads coordinates i and m + i.
    tau : float, optional
        Box half-diagonal, 0 <= tau < 1/2 (default 0; THEORY uses <= 0.15).

    Returns
    -------
    Construction
        ``error_bound`` 0 (exact in exact arithmetic; floating point adds ~1e-15 unless sqrt(m/2)
        and sqrt(2m) are powers of two, e.g. n = 2, 8 at m = 4n, pitfall 2), widths (n, n + 1) or
        (2n, n + 1), max |weight| max(sqrt(m/2), 2) (boxes: the largest of (1+tau) sqrt(m/2), 2
        and 1/(1 - 2 tau)), recorded as ``params["max_abs_weight_no_bias"]``; the layer-2 biases
        -k reach n, so ``max_weight`` (weights and biases) is max(that, n).  ``target`` = IP of the decoded bits (= f_d on the support).

    Examples
    --------
    >>> c = ip_depth3_relu(2)                       # m = 8: sqrt(m/2) = 2, exact in floats
    >>> c.widths, c.max_weight
    ((2, 3), 2.0)
    >>> s = 1 / 4                                   # 1/sqrt(2m)
    >>> X = np.array([[s, s] + [-s] * 6 + [s, s] + [-s] * 6,      # a = b = 11: IP = 0
    ...               [s, -s] + [-s] * 6 + [s, s] + [-s] * 6])    # a = 10, b = 11: IP = 1
    >>> c.network(X).tolist(), c.target(X).tolist()
    ([0.0, 1.0], [0.0, 1.0])
    """
    n, m, tau = _ip_args(n, m, tau)
    d = 2 * m
    first, mid, out, widths, wbound, formula = _ip_layers(n, m, tau)
    net = SigmaNetwork([first, mid, out], activation="relu")
    return Construction(
        network=net, name="ip_depth3_relu", target=lambda X: ip_of_decoded(X, n, m),
        width_formula=widths, formula=formula, weight_formula=wbound, error_bound=0.0,
        accuracy=0.0, domain=("support of mu_0 (the 4^n hard points)" if tau == 0.0 else
                              f"support of mu_tau (boxes), tau = {tau:g}"),
        params={"n": n, "m": m, "d": d, "tau": tau, "exact_in_floats": _exact_scaling(m),
                "max_abs_weight_no_bias": max(float(np.abs(layer.weights).max())
                                              for layer in net.layers)})


def _ip_args(n, m, tau):
    """``(n, m, tau)`` validated, taken from an instance when ``n`` is one."""
    if all(hasattr(n, a) for a in ("n", "m", "tau")) and not isinstance(n, (int, np.integer)):
        if m is not None or tau is not None:
            raise TypeError("pass either an instance or n (with m, tau), not both")
        n, m, tau = n.n, n.m, n.tau
    tau = 0.0 if tau is None else tau
    n = _int_at_least(n, name="n", minimum=1, what="bits per party")
    m = 4 * n if m is None else _int_at_least(m, name="m", minimum=n, what="code length, >= n")
    try:
        tau = float(tau)
    except (TypeError, ValueError):
        raise TypeError(f"tau must be a real number, got {type(tau).__name__}") from None
    if not (0.0 <= tau < 0.5):
        raise InvalidNetworkError(f"tau must satisfy 0 <= tau < 1/2 (box half-diagonal), got {tau!r}")
    return n, m, tau


def _ip_layers(n: int, m: int, tau: float):
    """The three layers of §3.2 with their width and weight formulas:
    ``(first, mid, out, widths, weight_bound, formula)``."""
    d = 2 * m
    s = math.sqrt(m / 2)
    idx = np.arange(n)
    if tau == 0.0:
        W1 = np.zeros((n, d))
        W1[idx, idx] = s
        W1[idx, m + idx] = s
        mid, out = _tri_layers(n, np.ones(n))
        return (DenseLayer(W1, np.zeros(n)), mid, out, (n, n + 1), max(s, 2.0, float(n)),
                "n, n + 1; max|weight| = max(sqrt(m/2), 2), biases up to n")
    c = (1 + tau) * s
    W1 = np.zeros((2 * n, d))
    W1[idx, idx] = c
    W1[idx, m + idx] = c
    W1[n + idx, idx] = c
    W1[n + idx, m + idx] = c
    b1 = np.concatenate([np.full(n, -tau), np.full(n, -(1 - tau))])
    mid, out = _tri_layers(n, np.concatenate([np.ones(n), -np.ones(n)]) / (1 - 2 * tau))
    return (DenseLayer(W1, b1), mid, out, (2 * n, n + 1), max(c, 2.0, 1 / (1 - 2 * tau), n),
            "2n, n + 1; max|weight| = max((1+tau) sqrt(m/2), 2, 1/(1-2tau)), biases up to n")


def _exact_scaling(m: int) -> bool:
    """sqrt(m/2) and 1/sqrt(2m) are exact binary floats iff m/2 is a perfect square."""
    if m % 2:
        return False
    r = math.isqrt(m // 2)
    return r * r == m // 2 and (r & (r - 1)) == 0


def ip_depth3_relu_rcube(n: int) -> Construction:
    """Exact depth-3 ReLU network for IP on the R-cube support ([0,1/4] u [3/4,1])^{2n} (§3.2, §2.5).

    Layer 1: h_i = ReLU(4(x_i + y_i) - 5) - ReLU(4(x_i + y_i) - 6) = [x_i, y_i >= 3/4] (2n units,
    x = first n coordinates, y = last n); layers 2-3 as in :func:`ip_depth3_relu`.

    >>> c = ip_depth3_relu_rcube(2)
    >>> X = np.array([[0.9, 0.1, 0.8, 0.2], [0.9, 0.8, 1.0, 0.75]])
    >>> c.widths, c.network(X).tolist(), c.target(X).tolist()
    ((4, 3), [1.0, 0.0], [1.0, 0.0])
    """
    n = _int_at_least(n, name="n", minimum=1, what="bits per party")
    idx = np.arange(n)
    W1 = np.zeros((2 * n, 2 * n))
    for off in (0, n):
        W1[off + idx, idx] = 4.0
        W1[off + idx, n + idx] = 4.0
    b1 = np.concatenate([np.full(n, -5.0), np.full(n, -6.0)])
    mid, out = _tri_layers(n, np.concatenate([np.ones(n), -np.ones(n)]))
    net = SigmaNetwork([DenseLayer(W1, b1), mid, out], activation="relu")
    return Construction(
        network=net, name="ip_depth3_relu_rcube", target=lambda X: ip_of_rounded(X, n),
        width_formula=(2 * n, n + 1), formula="2n, n + 1; max|w| = max(6, n)",
        weight_formula=max(6.0, float(n)), error_bound=0.0, accuracy=0.0,
        domain="([0, 1/4] u [3/4, 1])^{2n}", params={"n": n, "d": 2 * n})
