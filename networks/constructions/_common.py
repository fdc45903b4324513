"""Shared parts of the constructions: the :class:`Construction` result type, univariate ReLU
sums (:class:`RidgeProfile`, the interpolation and Lipschitz-lemma profiles) and argument checks.

The Lipschitz lemma's *profile* lives here because all three sources build on it (Daniely's
inner layers, the SES ridge nets); the lemma as a network of its own is
:func:`networks.constructions.ses.lipschitz_relu_sum`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from circuits.utils.errors import DimensionError, InvalidNetworkError
from circuits.utils.validation import check_int, check_real
from networks.sigma import DenseLayer, SigmaNetwork

__all__ = ["Construction", "RidgeProfile", "interpolation_profile", "lipschitz_profile"]

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
