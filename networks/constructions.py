"""The constructions of the three seed papers as explicit ReLU networks, with their formulas.

Every builder returns a :class:`Construction`: the :class:`~networks.sigma.SigmaNetwork` itself,
the function it is meant to represent (``target``), the widths and weight bound predicted by the
paper's formula, and a *certified* sup-error bound computed from the construction (interpolation
errors, cubature defects) - all next to :meth:`Construction.measured_error`, which evaluates the
real network.  The tests assert ``measured <= error_bound <= requested accuracy``.

=========================================  ================================================  =====
builder                                    what it builds                                    THEORY
=========================================  ================================================  =====
:func:`ip_depth3_relu`                     exact depth-3 net for f_d on supp mu_tau          §3.2
:func:`ip_depth3_relu_rcube`               the same on the R-cube support (v1 setting)       §3.2
:func:`lipschitz_relu_sum`                 univariate Lipschitz lemma (m <= 2RL/eps units)   §3.3
:func:`inner_product_depth3`               Daniely's depth-3 net for g(<x, x'>) on spheres   §3.4
:func:`squared_norm_depth2`                SES ||x||^2, width dK, error <= d/K^2             §3.6
:func:`norm_power_depth2`                  SES ||x||^{2k} by cubature + ridge units          §3.6
:func:`radial_ridge_depth2`                SES d = 3 ridge net for phi(||x||), g = phi+r phi'  §3.6
:func:`ses_theorem4_depth3`                depth-3 net for SES Theorem 4's target            §3.5
=========================================  ================================================  =====

Helpers: :func:`ses_theorem4_target`, :func:`ses_theorem4_gradient`,
:func:`ses_theorem4_lipschitz` (E17: the target is 2-Lipschitz on the ball, pitfall 4),
:func:`fibonacci_sphere`, :func:`random_sphere`,
:func:`random_ball`.

Examples
--------
>>> c = lipschitz_relu_sum(np.sin, lipschitz=1.0, radius=1.0, eps=0.01)
>>> c.widths, c.width_formula
((200,), (200,))
>>> t = np.linspace(-1, 1, 2001).reshape(-1, 1)
>>> bool(c.measured_error(t) <= c.error_bound <= 0.01)
True
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from circuits.utils.errors import DimensionError
from circuits.utils.rng import as_rng
from circuits.utils.validation import check_int, check_real
from circuits.utils.errors import InvalidNetworkError
from networks.legendre import sphere_marginal_moment as _moment
from networks.sigma import DenseLayer, SigmaNetwork

__all__ = [
    "Construction", "RidgeProfile",
    "ip_depth3_relu", "ip_depth3_relu_rcube", "ip_of_decoded", "ip_of_rounded",
    "lipschitz_relu_sum", "lipschitz_profile", "interpolation_profile",
    "inner_product_depth3", "squared_norm_depth2", "norm_power_depth2", "radial_ridge_depth2",
    "ses_theorem4_target", "ses_theorem4_gradient", "ses_theorem4_lipschitz", "ses_theorem4_depth3",
    "fibonacci_sphere", "random_sphere", "random_ball",
]

# rows per evaluation chunk: keep one hidden activation matrix at ~2^23 float64 (64 MB)
_CHUNK_ELEMENTS = 1 << 23


# ============================================================================ validation


def _int_at_least(value, *, name: str, minimum: int, what: str) -> int:
    return check_int(value, name=name, minimum=minimum, what=what)


def _callable(f, *, name: str) -> Callable:
    if not callable(f):
        raise TypeError(f"{name} must be a vectorised callable t -> f(t), got {type(f).__name__}")
    return f


def _eval_1d(f: Callable, t: np.ndarray, *, name: str) -> np.ndarray:
    vals = np.asarray(f(t), dtype=np.float64)
    if vals.shape != t.shape:
        vals = np.broadcast_to(vals, t.shape) if vals.ndim == 0 else vals
    if vals.shape != t.shape:
        raise DimensionError(f"{name} must map an array of shape {t.shape} to the same shape, got "
                             f"{vals.shape}; vectorise it (numpy ufuncs, np.vectorize)")
    if not np.all(np.isfinite(vals)):
        raise InvalidNetworkError(f"{name} returned NaN or inf on its interval; it must be finite")
    return vals


# ============================================================================ result type
@dataclass(frozen=True, eq=False)
class Construction:
    """A network built by a paper's construction, with its formulas and certified error.

    Attributes
    ----------
    network : SigmaNetwork
        The ReLU network itself.
    name : str
        Which construction (the builder's name).
    target : callable
        ``target(X) -> (N,)``: the function the network represents on ``domain``.
    width_formula : tuple of int
        Hidden widths predicted by the paper's formula (tests compare with ``widths``).
    formula : str
        The width formula as text.
    weight_formula : float
        The stated bound on max |weight or bias| (``max_weight`` must not exceed it).
    error_bound : float or None
        Certified sup |network - target| on ``domain`` (None when only measured, e.g. the
        quadrature part of :func:`radial_ridge_depth2`).
    accuracy : float or None
        The accuracy eps that was requested (``error_bound <= accuracy``), if any.
    domain : str
        Where the guarantee holds.
    params : dict
        Construction parameters and intermediate quantities (JSON-ready).
    """

    network: SigmaNetwork
    name: str
    target: Callable
    width_formula: tuple
    formula: str
    weight_formula: float
    error_bound: float | None
    accuracy: float | None
    domain: str
    params: dict = field(default_factory=dict)

    @property
    def widths(self) -> tuple:
        """Hidden widths of the actual network."""
        return self.network.widths

    @property
    def depth(self) -> int:
        return self.network.depth

    @property
    def max_weight(self) -> float:
        """max |weight or bias| of the actual network (B(N))."""
        return self.network.weight_bound

    def errors(self, X, y=None) -> np.ndarray:
        """|N(x) - y| per row (y defaults to ``target(X)``), evaluated in memory-bounded chunks."""
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != self.network.input_dim:
            raise DimensionError(f"X must have shape (n_points, {self.network.input_dim}) for "
                                 f"{self.name}, got {X.shape}; use X.reshape(-1, "
                                 f"{self.network.input_dim})")
        if y is not None:
            y = np.asarray(y, dtype=np.float64).reshape(-1)
            if y.shape[0] != X.shape[0]:
                raise DimensionError(f"y must have one value per row of X ({X.shape[0]}), got "
                                     f"{y.shape[0]}")
        rows = max(1, _CHUNK_ELEMENTS // max(self.network.dims))
        out = np.empty(X.shape[0], dtype=np.float64)
        for s in range(0, X.shape[0], rows):
            Xc = X[s:s + rows]
            yc = (np.asarray(self.target(Xc), dtype=np.float64).reshape(-1) if y is None
                  else y[s:s + rows])
            out[s:s + rows] = np.abs(self.network(Xc) - yc)
        return out

    def measured_error(self, X, y=None) -> float:
        """max |N(x) - y| over the rows of X (y defaults to ``target(X)``); 0.0 for no rows."""
        e = self.errors(X, y)
        return float(e.max()) if e.size else 0.0

    def max_error_over(self, chunks, *, progress: bool = False, total: int | None = None) -> float:
        """max error over an iterable of chunks: ``(X, y)`` pairs or objects with ``.points`` and
        ``.labels`` (e.g. ``HardInstance.iter_support(...)``)."""
        from circuits.utils.progress import progress_bar

        worst = 0.0
        with progress_bar(total, enabled=progress, desc=self.name, unit="chunk") as bar:
            for chunk in chunks:
                if hasattr(chunk, "points"):
                    X, y = chunk.points, chunk.labels
                else:
                    X, y = chunk
                worst = max(worst, self.measured_error(X, y))
                bar.update(1)
        return worst

    def report(self, X=None, y=None) -> dict:
        """Formulas next to the measured quantities (measured error only if X is given)."""
        out = {"name": self.name, "depth": self.depth, "widths": list(self.widths),
               "width_formula": list(self.width_formula), "formula": self.formula,
               "max_weight": self.max_weight, "weight_formula": self.weight_formula,
               "error_bound": self.error_bound, "accuracy": self.accuracy, "domain": self.domain,
               "params": dict(self.params)}
        if X is not None:
            X = np.asarray(X, dtype=np.float64)
            out["measured_error"] = self.measured_error(X, y)
            out["n_points"] = int(X.shape[0])
        return out

    def summary(self, X=None, y=None) -> str:
        """Printable one-screen summary (see :meth:`report`)."""
        r = self.report(X, y)
        lines = [f"{r['name']}: depth {r['depth']}, widths {tuple(r['widths'])} "
                 f"(formula {tuple(r['width_formula'])}: {r['formula']})",
                 f"  max|weight or bias| {r['max_weight']:.6g} (bound {r['weight_formula']:.6g})",
                 f"  error bound {r['error_bound']!r} (requested {r['accuracy']!r}) on {r['domain']}"]
        if "measured_error" in r:
            lines.append(f"  measured max error {r['measured_error']:.3e} on {r['n_points']} points")
        return "\n".join(lines)

    def to_dict(self) -> dict:
        """JSON-ready record: :meth:`report` plus the network (``SigmaNetwork.to_dict``)."""
        out = self.report()
        out["network"] = self.network.to_dict()
        return out


# ============================================================================ ridge profiles
@dataclass(frozen=True, eq=False)
class RidgeProfile:
    """A univariate ReLU sum p(t) = const + sum_i gamma_i ReLU(alpha_i t + beta_i).

    ``error_bound`` is a certified bound on sup |p - f| over ``interval`` for the f it
    approximates; ``lipschitz`` bounds |p'| on the whole line.
    """

    alpha: np.ndarray
    beta: np.ndarray
    gamma: np.ndarray
    const: float
    interval: tuple
    error_bound: float
    lipschitz: float

    @property
    def width(self) -> int:
        return int(self.alpha.shape[0])

    def __call__(self, t) -> np.ndarray:
        t = np.asarray(t, dtype=np.float64)
        z = np.maximum(np.multiply.outer(t, self.alpha) + self.beta, 0.0)
        return self.const + z @ self.gamma

    def network(self) -> SigmaNetwork:
        """The profile as a depth-2 ReLU network on R^1."""
        return SigmaNetwork([DenseLayer(self.alpha.reshape(-1, 1), self.beta),
                             DenseLayer(self.gamma.reshape(1, -1), [self.const])], activation="relu")


def _frozen(a) -> np.ndarray:
    a = np.array(a, dtype=np.float64)
    a.setflags(write=False)
    return a


def _one_sided(values: np.ndarray, knots: np.ndarray):
    """gamma of sum_j gamma_j ReLU(t - knots_j) interpolating ``values`` at the knots (from the
    left end); returns (gamma, slopes)."""
    slopes = np.diff(values) / np.diff(knots)
    gamma = np.empty_like(slopes)
    gamma[0] = slopes[0]
    gamma[1:] = np.diff(slopes)
    return gamma, slopes


def interpolation_profile(f: Callable, knots, *, lipschitz: float | None = None,
                          second_derivative: float | None = None) -> RidgeProfile:
    """Piecewise-linear interpolant of f at increasing ``knots`` t_0 < ... < t_K as K ReLUs.

    p(t) = f(t_0) + s_0 ReLU(t - t_0) + sum_{j=1}^{K-1} (s_j - s_{j-1}) ReLU(t - t_j) (THEORY
    §3.6, q_K); constant f(t_0) left of t_0, last slope right of t_K.

    The certified error on [t_0, t_K] is min(L h/2, M2 h^2/8) with h the largest gap,
    ``lipschitz`` = L >= sup|f'|, ``second_derivative`` = M2 >= sup|f''| (give at least one).

    Examples
    --------
    >>> p = interpolation_profile(np.square, np.linspace(-1, 1, 9), second_derivative=2.0)
    >>> p.width, p.error_bound                       # K = 8 pieces: error 1/K^2
    (8, 0.015625)
    >>> [round(float(v), 6) for v in p(np.array([0.0, 0.125, 1.0]))]
    [0.0, 0.03125, 1.0]
    """
    f = _callable(f, name="f")
    knots = np.asarray(knots, dtype=np.float64).reshape(-1)
    if knots.size < 2 or not np.all(np.isfinite(knots)) or not np.all(np.diff(knots) > 0):
        raise InvalidNetworkError(f"knots must be >= 2 finite, strictly increasing numbers, got "
                                  f"{knots.size} values; use np.linspace(lo, hi, K + 1)")
    if lipschitz is None and second_derivative is None:
        raise InvalidNetworkError("give lipschitz= (sup|f'|) or second_derivative= (sup|f''|) so "
                                  "the interpolation error can be certified")
    h = float(np.diff(knots).max())
    bounds = []
    if lipschitz is not None:
        bounds.append(check_real(lipschitz, minimum=0, name="lipschitz", what="sup|f'|") * h / 2)
    if second_derivative is not None:
        m2 = float(second_derivative)
        if not (math.isfinite(m2) and m2 >= 0):
            raise InvalidNetworkError(f"second_derivative must be finite and >= 0, got {m2!r}")
        bounds.append(m2 * h * h / 8)
    values = _eval_1d(f, knots, name="f")
    gamma, slopes = _one_sided(values, knots)
    K = gamma.size
    return RidgeProfile(alpha=_frozen(np.ones(K)), beta=_frozen(-knots[:-1]), gamma=_frozen(gamma),
                        const=float(values[0]), interval=(float(knots[0]), float(knots[-1])),
                        error_bound=min(bounds), lipschitz=float(np.abs(slopes).max()))


def _lemma_points(radius: float, lipschitz: float, eps: float):
    ratio = radius * lipschitz / eps
    J = max(1, int(math.ceil(ratio * (1 - 1e-12))))   # RL/eps in Z must not round up
    h = eps / lipschitz
    pts = np.minimum(np.arange(J + 1) * h, radius)
    pts[-1] = radius
    return J, h, pts


def lipschitz_profile(f: Callable, lipschitz: float, radius: float, eps: float) -> RidgeProfile:
    """The Lipschitz lemma's ReLU sum (THEORY §3.3) for an L-Lipschitz f on [-R, R].

    N(t) = f(0) + sum_{j<J} g+_j ReLU(t - xi_j) + sum_{j<J} g-_j ReLU(-t - xi_j), xi_j = j h,
    h = eps/L, J = ceil(RL/eps): the piecewise-linear interpolant of f at 0, +-h, ..., +-R with
    m = 2J units, |alpha| = 1, |beta| <= R, |gamma| <= 2L; certified error L h_max / 2 <= eps/2.

    >>> p = lipschitz_profile(np.abs, 1.0, 1.0, 0.25)
    >>> p.width, [round(float(v), 6) for v in p(np.array([-1.0, -0.3, 0.6]))]
    (8, [1.0, 0.3, 0.6])
    """
    f = _callable(f, name="f")
    L = check_real(lipschitz, minimum=0, name="lipschitz", what="Lipschitz constant of f on [-R, R]")
    R = check_real(radius, minimum=0, name="radius", what="half-width R of the interval [-R, R]")
    eps = check_real(eps, minimum=0, name="eps", what="target sup error")
    J, h, pts = _lemma_points(R, L, eps)
    f0 = float(_eval_1d(f, np.zeros(1), name="f")[0])
    gp, sp = _one_sided(_eval_1d(f, pts, name="f"), pts)
    gm, sm = _one_sided(_eval_1d(f, -pts, name="f"), pts)
    alpha = np.concatenate([np.ones(J), -np.ones(J)])
    beta = np.concatenate([-pts[:-1], -pts[:-1]])
    gamma = np.concatenate([gp, gm])
    h_max = float(np.diff(pts).max())
    return RidgeProfile(alpha=_frozen(alpha), beta=_frozen(beta), gamma=_frozen(gamma), const=f0,
                        interval=(-R, R), error_bound=L * h_max / 2,
                        lipschitz=float(max(np.abs(sp).max(), np.abs(sm).max())))


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


# ============================================================================ §3.2 exact nets
def ip_of_decoded(X, n: int, m: int) -> np.ndarray:
    """IP(dec(x)) with a_i = [x_i > 0], b_i = [x_{m+i} > 0], i < n (THEORY §2.4), float64 0/1.

    Equals f_d on the support of mu_tau.

    >>> ip_of_decoded(np.array([[1.0, -1.0, 1.0, 1.0]]), 1, 2).tolist()
    [1.0]
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[1] < m + n:
        raise DimensionError(f"X must have shape (n_points, >= {m + n}), got {X.shape}")
    a = X[:, :n] > 0
    b = X[:, m:m + n] > 0
    return (np.count_nonzero(a & b, axis=1) & 1).astype(np.float64)


def ip_of_rounded(X, n: int) -> np.ndarray:
    """IP of the rounded coordinates on the R-cube: x_i = round(X_i), y_i = round(X_{n+i}).

    >>> ip_of_rounded(np.array([[0.9, 0.1, 0.8, 0.2]]), 2).tolist()
    [1.0]
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[1] != 2 * n:
        raise DimensionError(f"X must have shape (n_points, {2 * n}), got {X.shape}")
    a = X[:, :n] >= 0.5
    b = X[:, n:] >= 0.5
    return (np.count_nonzero(a & b, axis=1) & 1).astype(np.float64)


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
    d = 2 * m
    s = math.sqrt(m / 2)
    idx = np.arange(n)
    if tau == 0.0:
        W1 = np.zeros((n, d))
        W1[idx, idx] = s
        W1[idx, m + idx] = s
        first = DenseLayer(W1, np.zeros(n))
        mid, out = _tri_layers(n, np.ones(n))
        widths = (n, n + 1)
        wbound = max(s, 2.0, float(n))
        formula = "n, n + 1; max|weight| = max(sqrt(m/2), 2), biases up to n"
    else:
        c = (1 + tau) * s
        W1 = np.zeros((2 * n, d))
        W1[idx, idx] = c
        W1[idx, m + idx] = c
        W1[n + idx, idx] = c
        W1[n + idx, m + idx] = c
        b1 = np.concatenate([np.full(n, -tau), np.full(n, -(1 - tau))])
        first = DenseLayer(W1, b1)
        mid, out = _tri_layers(n, np.concatenate([np.ones(n), -np.ones(n)]) / (1 - 2 * tau))
        widths = (2 * n, n + 1)
        wbound = max(c, 2.0, 1 / (1 - 2 * tau), n)
        formula = "2n, n + 1; max|weight| = max((1+tau) sqrt(m/2), 2, 1/(1-2tau)), biases up to n"
    net = SigmaNetwork([first, mid, out], activation="relu")
    return Construction(
        network=net, name="ip_depth3_relu", target=lambda X: ip_of_decoded(X, n, m),
        width_formula=widths, formula=formula, weight_formula=wbound, error_bound=0.0,
        accuracy=0.0, domain=("support of mu_0 (the 4^n hard points)" if tau == 0.0 else
                              f"support of mu_tau (boxes), tau = {tau:g}"),
        params={"n": n, "m": m, "d": d, "tau": tau, "exact_in_floats": _exact_scaling(m),
                "max_abs_weight_no_bias": max(float(np.abs(layer.weights).max())
                                              for layer in net.layers)})


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


# ============================================================================ sphere helpers
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


def random_sphere(n_points: int, d: int, *, seed=0) -> np.ndarray:
    """n uniform points on S^{d-1} (normalised Gaussians), float64 (n, d).

    >>> bool(np.allclose(np.linalg.norm(random_sphere(5, 4, seed=1), axis=1), 1))
    True
    """
    N = _int_at_least(n_points, name="n_points", minimum=0, what="number of points")
    d = _int_at_least(d, name="d", minimum=1, what="dimension")
    G = as_rng(seed).standard_normal((N, d))
    return G / np.linalg.norm(G, axis=1, keepdims=True)


def random_ball(n_points: int, d: int, *, seed=0) -> np.ndarray:
    """n uniform points in the unit ball B_d, float64 (n, d).

    >>> bool((np.linalg.norm(random_ball(50, 3, seed=1), axis=1) <= 1).all())
    True
    """
    rng = as_rng(seed)
    U = random_sphere(n_points, d, seed=rng)
    return U * rng.random(U.shape[0])[:, None] ** (1.0 / d)


# ============================================================================ §3.4 Daniely
def inner_product_depth3(g: Callable, lipschitz: float, d: int, eps: float) -> Construction:
    """Daniely's depth-3 ReLU network for F(x, x') = g(<x, x'>) on S^{d-1} x S^{d-1} (THEORY §3.4).

    Input (x, x') in R^{2d}.  Layer 1 (width d 2 ceil(8Ld/eps)): for each j the Lipschitz-lemma
    approximant q of t^2 on [-2, 2] (L = 4, accuracy eps/(L d)) applied to x_j + x'_j, so
    N_i = (1/2) sum_j q(x_j + x'_j) - 1 ~ <x, x'> to eps/(2L).  Layer 2 (width 2 ceil(2L/eps)):
    the lemma's approximant N_g of g on [-1, 1] to eps/2 applied to N_i (N_g is L-Lipschitz on R,
    so N_i slightly outside [-1, 1] is harmless).  sup error <= L eps/(2L) + eps/2 = eps; weights
    O(1 + L).

    Parameters
    ----------
    g : callable
        Vectorised, L-Lipschitz on [-1, 1].
    lipschitz : float
        L.
    d : int
        Sphere dimension (x in R^d).
    eps : float
        Target sup error.

    Examples
    --------
    >>> c = inner_product_depth3(lambda t: np.sin(np.pi * t), np.pi, 3, 0.2)
    >>> c.widths, c.width_formula                         # THEORY: 2262 = 16 d^2 L / eps, 64
    ((2262, 64), (2262, 64))
    >>> X = np.hstack([random_sphere(500, 3, seed=1), random_sphere(500, 3, seed=2)])
    >>> bool(c.measured_error(X) <= c.error_bound <= 0.2)
    True
    """
    g = _callable(g, name="g")
    L = check_real(lipschitz, minimum=0, name="lipschitz", what="Lipschitz constant of g on [-1, 1]")
    d = _int_at_least(d, name="d", minimum=1, what="sphere dimension, x in R^d")
    e = check_real(eps, minimum=0, name="eps", what="target sup error")
    q = lipschitz_profile(np.square, 4.0, 2.0, e / (L * d))
    ng = lipschitz_profile(g, L, 1.0, e / 2)
    mq = q.width
    # layer 1: unit (j, i) = ReLU(alpha_i (x_j + x'_j) + beta_i)
    W1 = np.zeros((d * mq, 2 * d))
    rows = np.arange(d * mq)
    j_of = rows // mq
    a_rep = np.tile(q.alpha, d)
    W1[rows, j_of] = a_rep
    W1[rows, d + j_of] = a_rep
    b1 = np.tile(q.beta, d)
    # N_i = u . h + u0
    u = 0.5 * np.tile(q.gamma, d)
    u0 = 0.5 * d * q.const - 1.0
    W2 = np.outer(ng.alpha, u)
    b2 = ng.alpha * u0 + ng.beta
    net = SigmaNetwork([DenseLayer(W1, b1), DenseLayer(W2, b2),
                        DenseLayer(ng.gamma.reshape(1, -1), [ng.const])], activation="relu")
    delta = 0.5 * d * q.error_bound                       # |N_i - <x, x'>|
    bound = ng.lipschitz * delta + ng.error_bound
    J1 = int(math.ceil(8 * L * d / e * (1 - 1e-12)))
    J2 = int(math.ceil(2 * L / e * (1 - 1e-12)))

    def target(X, _d=d):
        X = np.asarray(X, dtype=np.float64)
        return np.asarray(g(np.einsum("ij,ij->i", X[:, :_d], X[:, _d:])), dtype=np.float64)

    return Construction(
        network=net, name="inner_product_depth3", target=target,
        width_formula=(d * 2 * J1, 2 * J2),
        formula="d * 2 ceil(8 L d / eps) (= 16 d^2 L / eps when integral), 2 ceil(2 L / eps)",
        weight_formula=max(4.0, 2.0, 2 * L, abs(ng.const)), error_bound=bound, accuracy=e,
        domain=f"S^{d - 1} x S^{d - 1}",
        params={"d": d, "lipschitz": L, "eps": e, "inner_error_bound": delta,
                "outer_error_bound": ng.error_bound})


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
    >>> X = random_ball(2000, 3, seed=1)
    >>> bool(c.measured_error(X) <= c.error_bound <= 0.05)
    True
    """
    d = _int_at_least(d, name="d", minimum=1, what="input dimension")
    k = _int_at_least(k, name="k", minimum=1, what="half the power, target ||x||^{2k}")
    e = check_real(eps, minimum=0, name="eps", what="target sup error")
    n_mono = math.comb(d + 2 * k - 1, 2 * k)
    D = 2 * n_mono if n_directions is None else _int_at_least(
        n_directions, name="n_directions", minimum=1, what="number of cubature directions")
    W = fibonacci_sphere(D) if d == 3 else random_sphere(D, d, seed=seed)
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
    >>> bool(c.measured_error(random_ball(500, 3, seed=2)) < 0.05)
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
    >>> bool(c.measured_error(random_ball(2000, 2, seed=3)) <= c.error_bound <= 0.002)
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
