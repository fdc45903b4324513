"""Safran–Eldan–Shamir (SES) constructions and the univariate Lipschitz lemma (THEORY §3.3,
§3.5, §3.6): ||x||^2 and ||x||^{2k} as depth-2 nets, the d = 3 ridge net for phi(||x||), and
Theorem 4's target with its depth-3 net.
"""

from __future__ import annotations

import itertools
import math
from typing import Callable

import numpy as np

from circuits.utils.errors import DimensionError, InvalidNetworkError
from circuits.utils.rng import uniform_sphere
from circuits.utils.validation import check_real
from networks.constructions._common import (Construction, RidgeProfile, _callable, _int_at_least, interpolation_profile,
                                            lipschitz_profile)
from networks.legendre import sphere_marginal_moment as _moment
from networks.sigma import DenseLayer, SigmaNetwork

__all__ = ["lipschitz_relu_sum", "fibonacci_sphere", "squared_norm_depth2", "norm_power_depth2",
           "radial_ridge_depth2", "ses_theorem4_target", "ses_theorem4_gradient",
           "ses_theorem4_lipschitz", "ses_theorem4_depth3"]


# ============================================================================ §3.3 lemma
def lipschitz_relu_sum(f: Callable, lipschitz: float, radius: float, eps: float) -> Construction:
    """Univariate Lipschitz lemma (THEORY §3.3) as a depth-2 ReLU network on R^1.

    Parameters
    ----------
    f : callable
        Vectorised f, L-Lipschitz on [-radius, radius].
    lipschitz, radius, eps : float
        L, R and the sup error eps.

    Returns
    -------
    Construction
        Width m = 2 ceil(RL/eps) (= 2RL/eps when RL/eps is an integer), weights: input
        weights +-1, biases |beta| <= R, output weights |gamma| <= 2L, output bias f(0).
        Certified error L h / 2 <= eps / 2 on [-R, R]; the network is L-Lipschitz on R.

    Examples
    --------
    >>> [lipschitz_relu_sum(np.sin, L, 1.0, 0.01).widths[0] for L in (1.0, 3.0, 5 * np.pi)]
    [200, 600, 3142]
    """
    L = check_real(lipschitz, minimum=0, name="lipschitz", what="Lipschitz constant of f on [-R, R]")
    R = check_real(radius, minimum=0, name="radius", what="half-width R of the interval [-R, R]")
    e = check_real(eps, minimum=0, name="eps", what="target sup error")
    p = lipschitz_profile(f, L, R, e)
    J = p.width // 2
    return Construction(
        network=p.network(), name="lipschitz_relu_sum",
        target=lambda X: np.asarray(f(np.asarray(X, dtype=np.float64)[:, 0]), dtype=np.float64),
        width_formula=(2 * J,), formula="m = 2 ceil(R L / eps) <= 2RL/eps + 2",
        weight_formula=max(1.0, R, 2 * L, abs(p.const)), error_bound=p.error_bound, accuracy=e,
        domain=f"[-{R:g}, {R:g}]",
        params={"lipschitz": L, "radius": R, "eps": e, "J": J, "h": e / L,
                "max_abs_gamma": float(np.abs(p.gamma).max()), "network_lipschitz": p.lipschitz})


def fibonacci_sphere(n_points: int) -> np.ndarray:
    """n quasi-uniform directions on S^2 (Fibonacci lattice), float64 (n, 3), unit norm.

    >>> P = fibonacci_sphere(100); P.shape, bool(np.allclose(np.linalg.norm(P, axis=1), 1))
    ((100, 3), True)
    """
    N = _int_at_least(n_points, name="n_points", minimum=1, what="number of directions")
    i = np.arange(N, dtype=np.float64)
    z = 1.0 - (2.0 * i + 1.0) / N
    r = np.sqrt(np.maximum(1.0 - z * z, 0.0))
    phi = i * (math.pi * (3.0 - math.sqrt(5.0)))
    return np.column_stack([r * np.cos(phi), r * np.sin(phi), z])


# ============================================================================ §3.6 SES
def squared_norm_depth2(d: int, K: int) -> Construction:
    """SES ||x||^2 on the unit ball as a depth-2 ReLU net of width d K, sup error <= d / K^2.

    N(x) = sum_i q_K(x_i), q_K the K-piece interpolant of t^2 on [-1, 1] (0 <= q_K - t^2 <= 1/K^2);
    the bound d/K^2 is attained at d = 2 on grid midpoints (E15).

    >>> c = squared_norm_depth2(2, 8)
    >>> c.widths, c.error_bound
    ((16,), 0.03125)
    >>> X = np.array([[0.125, 0.125]])             # a grid midpoint in each coordinate
    >>> round(c.measured_error(X), 12)
    0.03125
    """
    d = _int_at_least(d, name="d", minimum=1, what="input dimension")
    K = _int_at_least(K, name="K", minimum=1, what="interpolation pieces per coordinate")
    q = interpolation_profile(np.square, np.linspace(-1.0, 1.0, K + 1), second_derivative=2.0)
    W1 = np.zeros((d * K, d))
    rows = np.arange(d * K)
    W1[rows, rows // K] = np.tile(q.alpha, d)
    net = SigmaNetwork([DenseLayer(W1, np.tile(q.beta, d)),
                        DenseLayer(np.tile(q.gamma, d).reshape(1, -1), [d * q.const])],
                       activation="relu")
    return Construction(
        network=net, name="squared_norm_depth2",
        target=lambda X: np.einsum("ij,ij->i", np.asarray(X, float), np.asarray(X, float)),
        width_formula=(d * K,), formula="d K", weight_formula=max(2.0, float(d)),
        error_bound=d * q.error_bound, accuracy=None, domain=f"unit ball B_{d}",
        params={"d": d, "K": K, "per_coordinate_error": q.error_bound})


def _monomials(d: int, degree: int):
    """Exponent multisets of degree ``degree`` in d variables with multinomial coefficients."""
    combos = list(itertools.combinations_with_replacement(range(d), degree))
    coef = np.empty(len(combos))
    fact = math.factorial(degree)
    for r, c in enumerate(combos):
        counts = np.bincount(np.asarray(c, dtype=np.int64), minlength=d)
        coef[r] = fact / math.prod(math.factorial(int(v)) for v in counts)
    return combos, coef


def _cubature(directions: np.ndarray, k: int):
    """Least-squares (minimum-norm) lambda with sum_j lambda_j <w_j, x>^{2k} = c_{d,k} ||x||^{2k},
    matched coefficient by coefficient; returns (lambda, certified defect on the unit sphere)."""
    D, d = directions.shape
    combos, coef = _monomials(d, 2 * k)
    A = np.empty((len(combos), D))
    for r, c in enumerate(combos):
        A[r] = coef[r] * np.prod(directions[:, list(c)], axis=1)
    # ||x||^{2k} = sum_{|beta| = k} k!/beta! x^{2 beta}
    b = np.zeros(len(combos))
    fk = math.factorial(k)
    ck = _moment(d, k)
    for r, c in enumerate(combos):
        counts = np.bincount(np.asarray(c, dtype=np.int64), minlength=d)
        if np.all(counts % 2 == 0):
            b[r] = ck * fk / math.prod(math.factorial(int(v) // 2) for v in counts)
    lam, *_ = np.linalg.lstsq(A, b, rcond=None)
    # |x^alpha| <= 1 on the sphere, so sup |defect| <= sum of |coefficient residuals|
    defect = float(np.abs(A @ lam - b).sum())
    return lam, defect


def _ridge_depth2(directions: np.ndarray, weights: np.ndarray, p: RidgeProfile,
                  const: float = 0.0) -> SigmaNetwork:
    """N(x) = const + sum_j weights_j p(<w_j, x>) as one hidden layer of D * width units."""
    D, d = directions.shape
    m = p.width
    W1 = (directions[:, None, :] * p.alpha[None, :, None]).reshape(D * m, d)
    b1 = np.tile(p.beta, D)
    v = (weights[:, None] * p.gamma[None, :]).reshape(1, -1)
    return SigmaNetwork([DenseLayer(W1, b1),
                         DenseLayer(v, [const + p.const * math.fsum(weights)])], activation="relu")


def norm_power_depth2(d: int, k: int, eps: float, *, n_directions: int | None = None,
                      seed=0) -> Construction:
    """SES ||x||^{2k} on B_d as a depth-2 ReLU net via a cubature on S^{d-1} (THEORY §3.6).

    ||x||^{2k} = c_{d,k}^{-1} sum_j lambda_j <w_j, x>^{2k} for a strength-2k cubature {lambda_j, w_j}
    (directions: Fibonacci at d = 3, else random with ``seed``; lambda by minimum-norm least
    squares on the monomial coefficients, so the residual defect is certified: every monomial
    is <= 1 on the sphere); then t^{2k} is replaced by its K-piece interpolant on [-1, 1] with
    error k(2k-1)/K^2, K chosen so the total certified error is <= eps.

    Parameters
    ----------
    d, k : int
        Dimension and half-power (practical: k <= 3, d <= 10).
    eps : float
        Target sup error on the unit ball.
    n_directions : int, optional
        Default 2 C(d + 2k - 1, 2k) (twice the number of degree-2k monomials).

    Examples
    --------
    >>> c = norm_power_depth2(3, 2, 0.05)
    >>> from circuits.utils.rng import uniform_ball
    >>> X = uniform_ball(2000, 3, seed=1)
    >>> bool(c.measured_error(X) <= c.error_bound <= 0.05)
    True
    """
    d = _int_at_least(d, name="d", minimum=1, what="input dimension")
    k = _int_at_least(k, name="k", minimum=1, what="half the power, target ||x||^{2k}")
    e = check_real(eps, minimum=0, name="eps", what="target sup error")
    n_mono = math.comb(d + 2 * k - 1, 2 * k)
    D = 2 * n_mono if n_directions is None else _int_at_least(
        n_directions, name="n_directions", minimum=1, what="number of cubature directions")
    W = fibonacci_sphere(D) if d == 3 else uniform_sphere(D, d, seed=seed)
    lam, defect = _cubature(W, k)
    ck = _moment(d, k)
    scale = float(np.abs(lam).sum()) / ck
    defect_ball = defect / ck
    if defect_ball >= e / 2:
        raise InvalidNetworkError(
            f"cubature defect {defect_ball:.3g} >= eps/2 = {e / 2:.3g} with {D} directions in d = "
            f"{d}; pass n_directions >= {n_mono} (the number of degree-{2 * k} monomials), more "
            f"directions or a larger eps")
    m2 = 2 * k * (2 * k - 1)
    # interpolation error m2 h^2 / 8 with h = 2/K = m2 / (2 K^2); need scale * that <= eps - defect
    K = max(1, int(math.ceil(math.sqrt(scale * m2 / (2 * (e - defect_ball))))))
    p = interpolation_profile(lambda t: t ** (2 * k), np.linspace(-1.0, 1.0, K + 1),
                              second_derivative=float(m2))
    net = _ridge_depth2(W, lam / ck, p)
    bound = scale * p.error_bound + defect_ball
    return Construction(
        network=net, name="norm_power_depth2",
        target=lambda X: np.einsum("ij,ij->i", np.asarray(X, float), np.asarray(X, float)) ** k,
        width_formula=(D * K,), formula="n_directions * K, K = ceil(sqrt(S k(2k-1)/(eps - defect))), "
                                        "S = sum|lambda| / c_{d,k}",
        weight_formula=max(1.0, float(np.abs(lam).max() / ck * np.abs(p.gamma).max()),
                           abs(p.const) * float(np.abs(lam.sum())) / ck),
        error_bound=bound, accuracy=e, domain=f"unit ball B_{d}",
        params={"d": d, "k": k, "eps": e, "n_directions": D, "K": K, "c_dk": ck,
                "sum_abs_lambda": float(np.abs(lam).sum()), "sum_lambda": float(lam.sum()),
                "cubature_defect": defect_ball, "n_monomials": n_mono})


def radial_ridge_depth2(phi: Callable, dphi: Callable, lipschitz_g: float, n_directions: int,
                        eps: float) -> Construction:
    """SES d = 3 ridge network for a radial f(x) = phi(||x||) on B_3 (THEORY §3.6, E16).

    For w uniform on S^2, <w, x> is uniform on [-r, r] (r = ||x||, Archimedes), so
    phi(r) = E_w g(<w, x>) with the even g(t) = phi(|t|) + |t| phi'(|t|).  The network is
    N(x) = (1/N) sum_j p(<w_j, x>) with N Fibonacci directions w_j and p the Lipschitz-lemma
    approximant of g on [-1, 1] to eps (certified: ``params["profile_error_bound"]``).  The
    quadrature error of the Fibonacci average is measured, not certified (E16: O(N^{-1/2}) or
    better), so ``error_bound`` is None.

    Parameters
    ----------
    phi, dphi : callable
        phi and its derivative on [0, 1], vectorised.
    lipschitz_g : float
        A bound on |g'| on [-1, 1].
    n_directions : int
        N.
    eps : float
        Accuracy of the ridge profile.

    Examples
    --------
    >>> c = radial_ridge_depth2(lambda r: np.cos(3 * r), lambda r: -3 * np.sin(3 * r), 15.0, 400, 0.01)
    >>> c.widths[0] == 400 * c.params["profile_width"]
    True
    >>> from circuits.utils.rng import uniform_ball
    >>> bool(c.measured_error(uniform_ball(500, 3, seed=2)) < 0.05)
    True
    """
    phi = _callable(phi, name="phi")
    dphi = _callable(dphi, name="dphi")
    Lg = check_real(lipschitz_g, minimum=0, name="lipschitz_g", what="bound on |g'| on [-1, 1]")
    N = _int_at_least(n_directions, name="n_directions", minimum=1, what="Fibonacci directions")
    e = check_real(eps, minimum=0, name="eps", what="accuracy of the ridge profile")

    def g(t):
        a = np.abs(np.asarray(t, dtype=np.float64))
        return np.asarray(phi(a), dtype=np.float64) + a * np.asarray(dphi(a), dtype=np.float64)

    p = lipschitz_profile(g, Lg, 1.0, e)
    W = fibonacci_sphere(N)
    net = _ridge_depth2(W, np.full(N, 1.0 / N), p)

    def target(X):
        return np.asarray(phi(np.linalg.norm(np.asarray(X, dtype=np.float64), axis=1)),
                          dtype=np.float64)

    return Construction(
        network=net, name="radial_ridge_depth2", target=target,
        width_formula=(N * 2 * int(math.ceil(Lg / e * (1 - 1e-12))),),
        formula="N * 2 ceil(L_g / eps)", weight_formula=max(1.0, 2 * Lg / N, abs(p.const)),
        error_bound=None, accuracy=None, domain="unit ball B_3",
        params={"n_directions": N, "eps": e, "lipschitz_g": Lg, "profile_width": p.width,
                "profile_error_bound": p.error_bound})


# ============================================================================ §3.5 Theorem 4
def _check_X_dim(X, d: int) -> np.ndarray:
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[1] != d:
        raise DimensionError(f"X must have shape (n_points, {d}), got {X.shape}; use "
                             f"X.reshape(-1, {d})")
    return X


def ses_theorem4_target(X, d: int | None = None) -> np.ndarray:
    """SES Theorem 4's target f(x) = sin(2 pi d^3 ||x||^2) / (2 pi d^3) (d = X.shape[1] by default).

    >>> f = ses_theorem4_target(np.array([[0.0, 0.0], [0.5, 0.0], [0.125, 0.0]]))
    >>> [round(float(v) * 16 * np.pi, 9) + 0.0 for v in f]       # 2 pi d^3 = 16 pi at d = 2
    [0.0, 0.0, 0.707106781]
    """
    X = np.asarray(X, dtype=np.float64)
    d = X.shape[-1] if d is None else d
    X = _check_X_dim(X, d)
    w = 2 * math.pi * d ** 3
    return np.sin(w * np.einsum("ij,ij->i", X, X)) / w


def ses_theorem4_gradient(X, d: int | None = None) -> np.ndarray:
    """grad f(x) = 2 x cos(2 pi d^3 ||x||^2), shape (N, d).

    >>> ses_theorem4_gradient(np.array([[1.0, 0.0]])).tolist()        # |grad| = 2 at ||x|| = 1
    [[2.0, 0.0]]
    """
    X = np.asarray(X, dtype=np.float64)
    d = X.shape[-1] if d is None else d
    X = _check_X_dim(X, d)
    w = 2 * math.pi * d ** 3
    return 2 * X * np.cos(w * np.einsum("ij,ij->i", X, X))[:, None]


def ses_theorem4_lipschitz(d: int, *, radius: float = 1.0, n_grid: int = 200_001) -> float:
    """sup_{||x|| <= radius} ||grad f|| = max_r 2 r |cos(2 pi d^3 r^2)| (radial, so 1-D).

    Evaluated on a fine grid of r plus every r with cos(2 pi d^3 r^2) = +-1 in [0, radius] and the
    endpoint; = 2 on the unit ball (pitfall 4: not 1) and ~1 on the ball of radius 1/2.

    >>> ses_theorem4_lipschitz(2), round(ses_theorem4_lipschitz(2, radius=0.5), 6)
    (2.0, 1.0)
    """
    d = _int_at_least(d, name="d", minimum=1, what="dimension")
    R = check_real(radius, minimum=0, name="radius", what="ball radius")
    n_grid = _int_at_least(n_grid, name="n_grid", minimum=2, what="grid points")
    w = 2 * math.pi * d ** 3
    r = np.linspace(0.0, R, n_grid)
    # cos(w r^2) = +-1  <=>  w r^2 = j pi  <=>  r = sqrt(j pi / w)
    j = np.arange(0, int(math.floor(w * R * R / math.pi)) + 1)
    r = np.concatenate([r, np.sqrt(j * math.pi / w), [R]])
    r = r[r <= R]
    return float(np.max(2 * r * np.abs(np.cos(w * r * r))))


def ses_theorem4_depth3(d: int, eps: float) -> Construction:
    """Depth-3 ReLU network for SES Theorem 4's target on B_d (depth 2 needs 2^{Omega(d log d)}).

    Layer 1: :func:`squared_norm_depth2`'s units with K = ceil(sqrt(2d/eps)) (||x||^2 to
    d/K^2 <= eps/2, values in [0, 1 + d/K^2]); layer 2: the interpolant of
    s -> sin(2 pi d^3 s)/(2 pi d^3) (1-Lipschitz) on [0, 1 + d/K^2] with spacing <= eps (error
    <= eps/2).  Certified error <= eps; widths d K and ceil((1 + d/K^2)/eps).

    >>> c = ses_theorem4_depth3(2, 0.002)
    >>> from circuits.utils.rng import uniform_ball
    >>> bool(c.measured_error(uniform_ball(2000, 2, seed=3)) <= c.error_bound <= 0.002)
    True
    """
    d = _int_at_least(d, name="d", minimum=1, what="input dimension")
    e = check_real(eps, minimum=0, name="eps", what="target sup error")
    K = int(math.ceil(math.sqrt(2 * d / e)))
    inner = squared_norm_depth2(d, K)
    top = 1.0 + inner.error_bound
    M = int(math.ceil(top / e))
    w = 2 * math.pi * d ** 3
    outer = interpolation_profile(lambda s: np.sin(w * s) / w, np.linspace(0.0, top, M + 1),
                                  lipschitz=1.0)
    l1, l2 = inner.network.layers
    u, u0 = l2.weights[0], float(l2.bias[0])
    W2 = np.outer(outer.alpha, u)
    b2 = outer.alpha * u0 + outer.beta
    net = SigmaNetwork([l1, DenseLayer(W2, b2), DenseLayer(outer.gamma.reshape(1, -1),
                                                           [outer.const])], activation="relu")
    return Construction(
        network=net, name="ses_theorem4_depth3", target=lambda X: ses_theorem4_target(X, d),
        width_formula=(d * K, M), formula="d ceil(sqrt(2d/eps)), ceil((1 + d/K^2)/eps)",
        weight_formula=max(2.0, d + top),
        error_bound=inner.error_bound + outer.error_bound, accuracy=e, domain=f"unit ball B_{d}",
        params={"d": d, "eps": e, "K": K, "M": M, "lipschitz": 2.0})
