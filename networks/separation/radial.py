"""Radial targets on the unit ball B_d (Safran–Eldan–Shamir 2019; THEORY §3.5–3.6, experiment E22).

Targets f(x) = φ(‖x‖) (:data:`TARGETS`): ``hat`` φ(r) = max(0, 1 - r), which is 1 - ‖x‖ on B_d:
the cone, an affine function of the Euclidean norm (a norm is easy for depth 2: a zonotope
approximates it; this is *not* SES Theorem 5's hard case, whose hardness needs oscillation), ``cos`` φ(r) = cos(πr)/π (smooth, 1-Lipschitz), and the contrast ``t4`` =
sin(2πd³r²) (SES Theorem 4's target sin(2πd³‖x‖²)/(2πd³) scaled by 2πd³: errors of t4 are relative
to that amplitude; at amplitude 1/(2πd³) ≤ 0.0199 the zero network already has sup error below every
ε ≥ 0.02, so absolute errors would say nothing).

Constructions (in :mod:`networks.separation.radial_widths`), each with its width and its *measured* sup error (dense sample + adversarial local
maximisation, :func:`sup_error`, scaled with d).  A search can only find errors, so the measured
value is a LOWER bound on the sup error; for the hat, :func:`hat_certificate` gives an UPPER bound
(exact at d = 2, branch-and-bound over the sphere where cheap):

* :func:`ridge_depth2` (depth 2, any d): for w uniform on S^{d-1}, s = ⟨w, x⟩/‖x‖ has the density
  ∝ (1 - s²)^{(d-3)/2}, so an even ReLU profile p(t) = c₀ + Σ_k γ_k (|t| - t_k)_+ has
  E_w p(⟨w, x⟩) = c₀ + 2Σ_k γ_k H_d(‖x‖, t_k) with the closed form H_d(r, t) = E(r s - t)_+
  (:func:`ridge_kernel`).  The profile is the linear programme (HiGHS) "least Σ|γ_k| subject to
  sup_r |c₀ + 2Σγ_k H_d(r, t_k) - φ(r)| ≤ ε/4" on J knots (J doubled until feasible), and
  E_w is replaced by the average over N directions (random, seeded; Fibonacci at d = 3; equally
  spaced at d = 2).  Width = N · 2 · #{γ_k ≠ 0}.  The smallest N (powers of two) whose measured sup
  error is ≤ ε is found by one pass over prefixes of the direction sequence.  For the hat the
  programme finds p(t) = 1 - |t|/E|s| exactly (one knot): the network is a zonotope norm.
* :func:`ses_ridge_d3` (depth 2, d = 3 only): SES's ridge route g = φ + rφ' (THEORY §3.6) with the
  library's :func:`networks.constructions.radial_ridge_depth2`.
* :func:`composition_depth3` (depth 3): the ‖x‖² net of THEORY §3.6 (width dK) followed by the
  interpolant of s ↦ φ(√s) on knots uniform in r (width J + 1); certified error L√(d/K²) + 3L/J.
  It is depth 3 (a ReLU of a sum of ReLUs), listed as such.

:func:`trained_widths` trains depth-2 ReLU networks (Adam, :func:`networks.train`) on points uniform
in B_d and reports the L2 (root-mean-square) error on fresh points for widths 1, 2, 4, …; the
smallest width with error ≤ ε is read off, next to the error of the best constant (in high d the
uniform ball concentrates near the sphere, so a radial target is nearly constant there).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from circuits.utils.errors import InvalidArgumentError
from circuits.utils.rng import as_rng
from circuits.utils.validation import check_int, check_real

__all__ = ["RadialTarget", "TARGETS", "get_target", "ridge_kernel", "RidgeProfileFit",
           "fit_ridge_profile", "RidgeNet", "sup_error", "dense_sample", "directions",
           "search_effort", "zonotope_range", "hat_certificate"]

#: The widths of E22 live in :mod:`networks.separation.radial_widths` (which imports this
#: module); they are reachable from here too, loaded on first use.
_WIDTHS = ("ridge_depth2", "ses_ridge_d3", "composition_depth3", "trained_widths")


def __getattr__(name):
    if name in _WIDTHS:
        from networks.separation import radial_widths

        return getattr(radial_widths, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# ----------------------------------------------------------------------------------- targets
@dataclass(frozen=True)
class RadialTarget:
    """f(x) = φ(‖x‖) on B_d.  ``lipschitz`` bounds |φ'| on [0, 1] (may depend on d)."""

    name: str
    phi: Callable = field(repr=False)
    dphi: Callable = field(repr=False)
    lipschitz: Callable = field(repr=False)
    description: str = ""

    def __call__(self, X) -> np.ndarray:
        X = np.asarray(X, dtype=np.float64)
        return self.phi(np.linalg.norm(X, axis=1), X.shape[1])

    def gradient(self, X) -> np.ndarray:
        X = np.asarray(X, dtype=np.float64)
        r = np.linalg.norm(X, axis=1)
        safe = np.where(r > 0, r, 1.0)
        return (self.dphi(r, X.shape[1]) / safe)[:, None] * X

    def constant_l2(self, d: int) -> float:
        """RMS error of the best constant under the uniform distribution on B_d (r = U^{1/d})."""
        u = (np.arange(20000) + 0.5) / 20000
        v = self.phi(u ** (1.0 / d), d)
        return float(np.std(v))


def _t4(r, d):
    return np.sin(2 * math.pi * d ** 3 * r * r)


def _dt4(r, d):
    w = 2 * math.pi * d ** 3
    return 2 * w * r * np.cos(w * r * r)


TARGETS = {
    "hat": RadialTarget("hat", lambda r, d: np.maximum(0.0, 1.0 - r),
                        lambda r, d: np.where(r < 1.0, -1.0, 0.0), lambda d: 1.0,
                        "1 - ||x|| on B_d (the cone, an affine function of the Euclidean norm; "
                        "not SES Theorem 5's hard case)"),
    "cos": RadialTarget("cos", lambda r, d: np.cos(math.pi * r) / math.pi,
                        lambda r, d: -np.sin(math.pi * r), lambda d: 1.0,
                        "cos(pi ||x||)/pi (smooth, 1-Lipschitz)"),
    "t4": RadialTarget("t4", _t4, _dt4, lambda d: 4 * math.pi * d ** 3,
                       "sin(2 pi d^3 ||x||^2) = 2 pi d^3 x SES Theorem 4's target (errors relative "
                       "to its amplitude 1/(2 pi d^3))"),
}


def get_target(name) -> RadialTarget:
    if isinstance(name, RadialTarget):
        return name
    if name not in TARGETS:
        raise InvalidArgumentError(f"target must be one of {sorted(TARGETS)}, got {name!r}")
    return TARGETS[name]


# ------------------------------------------------------------------------ ridge kernel
def _marginal_consts(d: int):
    from scipy.special import gammaln

    a = (d - 1) / 2.0
    cd = math.exp(gammaln(d / 2.0) - 0.5 * math.log(math.pi) - gammaln((d - 1) / 2.0))
    return a, cd


def ridge_kernel(r, t, d: int) -> np.ndarray:
    """H_d(r, t) = E_w (r⟨w, e₁⟩ - t)_+ for w uniform on S^{d-1}, r ∈ [0, 1], t ≥ 0 (broadcast).

    Closed form with s = ⟨w, e₁⟩ (density c_d (1 - s²)^{(d-3)/2}, s = 2B - 1, B ~ Beta(a, a),
    a = (d - 1)/2): H = r·c_d(1 - u²)^{(d-1)/2}/(d - 1) - t·P(s ≥ u), u = t/r.

    >>> d = 3; round(float(ridge_kernel(1.0, 0.0, d)), 12)          # E s_+ = 1/4 at d = 3
    0.25
    """
    from scipy.special import betainc

    d = check_int(d, name="d", minimum=2, what="dimension")
    r, t = np.broadcast_arrays(np.asarray(r, dtype=np.float64), np.asarray(t, dtype=np.float64))
    a, cd = _marginal_consts(d)
    out = np.zeros(r.shape)
    ok = r > t
    u = np.where(ok, t / np.where(r > 0, r, 1.0), 1.0)
    m1 = cd * np.power(np.clip(1.0 - u * u, 0.0, None), (d - 1) / 2.0) / (d - 1)
    m0 = betainc(a, a, np.clip((1.0 - u) / 2.0, 0.0, 1.0))
    out[ok] = (r * m1 - t * m0)[ok]
    return out


@dataclass(frozen=True)
class RidgeProfileFit:
    """An even ReLU profile p(t) = c0 + Σ_k γ_k (|t| - t_k)_+ with E_w p(⟨w, x⟩) ≈ φ(‖x‖).

    ``fit_error`` is max_r |c0 + 2Σγ H_d(r, t_k) - φ(r)| on a fine grid of r (4001 points);
    ``l1`` = Σ|γ_k|; ``knots``/``gamma`` keep only γ_k ≠ 0.
    """

    d: int
    c0: float
    knots: np.ndarray = field(repr=False)
    gamma: np.ndarray = field(repr=False)
    J: int
    fit_error: float
    l1: float

    @property
    def units_per_direction(self) -> int:
        return 2 * int(self.gamma.size)

    def __call__(self, t) -> np.ndarray:
        a = np.abs(np.asarray(t, dtype=np.float64))
        return self.c0 + np.maximum(a[..., None] - self.knots, 0.0) @ self.gamma

    def table(self):
        """(x, y) so that p(t) = np.interp(|t|, x, y) on [0, 1] (piecewise linear in |t|)."""
        xs = np.unique(np.concatenate([[0.0], self.knots, [1.0]]))
        return xs, self(xs)

    def derivative(self, t) -> np.ndarray:
        t = np.asarray(t, dtype=np.float64)
        return np.sign(t) * ((np.abs(t)[..., None] > self.knots) @ self.gamma)


def fit_ridge_profile(target, d: int, tol: float, *, max_knots: int = 128,
                      grid: int = 400) -> "RidgeProfileFit | None":
    """The least-Σ|γ| even profile on J = 1, 2, 4, … ≤ ``max_knots`` knots t_k = k/J with
    sup_r |E_w p - φ| ≤ ``tol`` on a grid (HiGHS LP); None when no J ≤ max_knots is feasible."""
    from scipy.optimize import linprog

    tgt = get_target(target)
    d = check_int(d, name="d", minimum=2, what="dimension")
    tol = check_real(tol, name="tol", minimum=0, what="profile fit tolerance")
    rg = np.linspace(0.0, 1.0, grid + 1)
    fine = np.linspace(0.0, 1.0, 4001)
    phi, phi_f = tgt.phi(rg, d), tgt.phi(fine, d)
    J = 1
    while J <= max_knots:
        knots = np.arange(J) / J
        A = 2.0 * ridge_kernel(rg[:, None], knots[None, :], d)
        # variables: c0 (free), γ+ (J), γ- (J) >= 0; minimise Σγ+ + Σγ-
        M = np.hstack([np.ones((rg.size, 1)), A, -A])
        res = linprog(np.concatenate([[0.0], np.ones(2 * J)]),
                      A_ub=np.vstack([M, -M]), b_ub=np.concatenate([phi + 0.5 * tol,
                                                                    -(phi - 0.5 * tol)]),
                      bounds=[(None, None)] + [(0, None)] * (2 * J), method="highs")
        if res.status == 0:
            c0 = float(res.x[0])
            g = res.x[1:J + 1] - res.x[J + 1:]
            keep = np.abs(g) > 1e-12 * max(1.0, np.abs(g).max())
            Af = 2.0 * ridge_kernel(fine[:, None], knots[None, keep], d)
            err = float(np.abs(c0 + Af @ g[keep] - phi_f).max())
            if err <= tol:
                return RidgeProfileFit(d=d, c0=c0, knots=knots[keep], gamma=g[keep], J=J,
                                       fit_error=err, l1=float(np.abs(g).sum()))
        J *= 2
    return None


# ------------------------------------------------------------------------ directions / samples
def directions(N: int, d: int, *, seed=0) -> np.ndarray:
    """N unit vectors: equally spaced half-circle angles at d = 2 (the profile is even), Fibonacci
    at d = 3, normalised Gaussians (seeded) otherwise."""
    from circuits.utils.rng import uniform_sphere as random_sphere
    from networks.constructions import fibonacci_sphere

    if d == 2:
        th = (np.arange(N) + 0.5) * math.pi / N
        return np.column_stack([np.cos(th), np.sin(th)])
    if d == 3:
        return fibonacci_sphere(N)
    return random_sphere(N, d, seed=seed)


def dense_sample(d: int, points: int, *, seed=0) -> np.ndarray:
    """Half uniform in B_d, half with radius uniform in [0, 1] (the uniform ball has almost no mass
    near the centre in high d), plus the origin."""
    from circuits.utils.rng import uniform_ball as random_ball, uniform_sphere as random_sphere

    g = as_rng(seed)
    k = points // 2
    U = random_ball(points - k, d, seed=g)
    S = random_sphere(k, d, seed=g) * g.random(k)[:, None]
    return np.vstack([np.zeros((1, d)), U, S])


# ------------------------------------------------------------------------ ridge networks
@dataclass(frozen=True, eq=False)
class RidgeNet:
    """N(x) = (1/N) Σ_j p(⟨w_j, x⟩): a depth-2 ReLU network of width N·units_per_direction."""

    profile: RidgeProfileFit
    W: np.ndarray = field(repr=False)

    @property
    def width(self) -> int:
        return int(self.W.shape[0]) * self.profile.units_per_direction

    def __call__(self, X) -> np.ndarray:
        xs, ys = self.profile.table()
        out = np.empty(X.shape[0])
        step = max(1, (1 << 22) // max(1, self.W.shape[0]))
        for s in range(0, X.shape[0], step):
            Z = np.abs(X[s:s + step] @ self.W.T)
            out[s:s + step] = np.interp(Z, xs, ys).mean(axis=1)
        return out

    def gradient(self, X) -> np.ndarray:
        Z = X @ self.W.T
        return (self.profile.derivative(Z) @ self.W) / self.W.shape[0]

    def network(self):
        """The same function as a :class:`networks.SigmaNetwork` (depth 2, ReLU)."""
        from networks.sigma import DenseLayer, SigmaNetwork

        p, N = self.profile, self.W.shape[0]
        K = p.knots.size
        W1 = np.concatenate([self.W[:, None, :] * s for s in (1.0, -1.0)], axis=1)  # (N, 2, d)
        W1 = np.repeat(W1[:, :, None, :], K, axis=2).reshape(N * 2 * K, -1)
        b1 = np.tile(-p.knots, 2 * N)
        u = np.tile(p.gamma, 2 * N) / N
        return SigmaNetwork([DenseLayer(W1, b1), DenseLayer(u[None, :], [p.c0])],
                            activation="relu")


def _ascent(fn, grad, target, X0, steps: int = 60):
    """Projected normalised gradient ascent of |fn - target| inside the unit ball."""
    X = X0.copy()
    best = np.abs(fn(X) - target(X))
    for k in range(steps):
        eta = 0.2 * (1.0 - k / steps) + 1e-3
        sgn = np.sign(fn(X) - target(X))
        G = sgn[:, None] * (grad(X) - target.gradient(X))
        norm = np.linalg.norm(G, axis=1, keepdims=True)
        Xn = X + eta * G / np.where(norm > 0, norm, 1.0)
        r = np.linalg.norm(Xn, axis=1, keepdims=True)
        Xn = Xn / np.maximum(r, 1.0)
        e = np.abs(fn(Xn) - target(Xn))
        better = e > best
        X[better] = Xn[better]
        best = np.maximum(best, e)
    return float(best.max()), X


def search_effort(d: int) -> dict:
    """The default search for :func:`sup_error`, scaled with d (a sphere of higher dimension has
    more room for a bad direction): dense points 1000 + 500 d, ascent from 16 + 4 d worst points
    plus as many random starts, 60 + 5 d steps."""
    return {"points": 1000 + 500 * d, "starts": 16 + 4 * d, "steps": 60 + 5 * d}


def sup_error(fn, grad, target, X, *, starts: "int | None" = None, steps: "int | None" = None,
              seed=0) -> dict:
    """A LOWER bound on sup |fn - target| over B_d: the largest error on the dense sample X and
    after adversarial ascent from the ``starts`` worst sample points and ``starts`` random points
    of the sphere (defaults scaled with d, :func:`search_effort`).  Keys ``dense``,
    ``adversarial``, ``sup`` (their max: a lower bound, ``sup_is`` says so)."""
    d = X.shape[1]
    eff = search_effort(d)
    starts = eff["starts"] if starts is None else starts
    steps = eff["steps"] if steps is None else steps
    e = np.abs(fn(X) - target(X))
    worst = np.argsort(e)[-starts:]
    from circuits.utils.rng import uniform_sphere
    X0 = np.vstack([X[worst], uniform_sphere(starts, d, seed=seed) * 0.999])
    adv, _ = _ascent(fn, grad, target, X0, steps=steps)
    return {"dense": float(e.max()), "adversarial": adv, "sup": max(float(e.max()), adv),
            "sup_is": "lower bound (sample + ascent)",
            "points": int(X.shape[0]), "starts": 2 * starts, "steps": steps}


def _zonotope_h(W, U):
    """h(u) = (1/N) Σ_j |⟨w_j, u⟩| for the rows u of U (chunked)."""
    out = np.empty(U.shape[0])
    step = max(1, (1 << 22) // max(1, W.shape[0]))
    for s in range(0, U.shape[0], step):
        out[s:s + step] = np.abs(U[s:s + step] @ W.T).mean(axis=1)
    return out


def zonotope_range(W, *, tol: float = 1e-3,
                   budget: int = 200_000) -> "tuple[float, float, str] | None":
    """Certified bounds (lo, hi) with lo <= min_u h(u) and max_u h(u) <= hi over the unit sphere,
    h(u) = (1/N) Σ_j |⟨w_j, u⟩| (the support function of a zonotope), and the method; None when
    the branch-and-bound exceeds ``budget`` evaluations of h.

    d = 2: exact.  Between consecutive zeros of the ⟨w_j, u⟩ h is ⟨s, u⟩ for a fixed s, so its
    minimum is at a zero and its maximum at a zero or at s/‖s‖.
    d >= 3: branch-and-bound over the faces of the cube [-1, 1]^d projected onto the sphere; the
    projection is 1-Lipschitz outside the unit ball, so a face box of side a lies within
    a·sqrt(d - 1)/2 of its centre's image, and h (1-Lipschitz for unit w_j) moves by at most that
    much.  Boxes are split in 2^{d-1} until the bounds are within ``tol`` of the best values found.
    """
    W = np.asarray(W, dtype=np.float64)
    N, d = W.shape
    if d == 2:
        ang = np.arctan2(W[:, 1], W[:, 0])
        zeros = np.concatenate([ang + np.pi / 2, ang - np.pi / 2])
        U = np.column_stack([np.cos(zeros), np.sin(zeros)])
        hz = _zonotope_h(W, U)
        # the candidate maxima: s/‖s‖ on each arc; s is the signed mean at the arc's midpoint
        zs = np.sort(np.mod(zeros, 2 * np.pi))
        mids = (zs + np.roll(zs, -1) + np.where(np.arange(zs.size) == zs.size - 1, 2 * np.pi,
                                                0.0)) / 2
        M = np.column_stack([np.cos(mids), np.sin(mids)])
        S = (np.sign(M @ W.T) @ W) / N
        nS = np.linalg.norm(S, axis=1)
        C = S / np.where(nS > 0, nS, 1.0)[:, None]
        inside = np.sign(C @ W.T) == np.sign(M @ W.T)
        cand = np.where(inside.all(axis=1), nS, -np.inf)
        return float(hz.min()), float(max(hz.max(), cand.max())), "exact (d = 2)"
    half = math.sqrt(d - 1) / 2
    # boxes at the depth where the Lipschitz slack falls below tol: above the budget, the
    # certificate is not cheap (in high d it never is: 2d (sqrt(d-1)/tol)^(d-1) boxes)
    if (d - 1) * math.log(max(2.0, 2 * half / tol)) + math.log(2 * d) > math.log(budget):
        return None
    # boxes: (face axis, face sign, centre in the other d-1 coordinates, side)
    faces = [(ax, sg) for ax in range(d) for sg in (1.0, -1.0)]
    centres = np.zeros((len(faces), d - 1))
    axes = np.array([f[0] for f in faces])
    signs = np.array([f[1] for f in faces])
    side = 2.0
    lo_best, hi_best = math.inf, -math.inf
    lo_open = hi_open = None
    used = 0
    corners = np.array(np.meshgrid(*[[-0.25, 0.25]] * (d - 1), indexing="ij")).reshape(d - 1, -1).T
    while True:
        P = np.empty((centres.shape[0], d))
        for k in range(centres.shape[0]):
            rest = [i for i in range(d) if i != axes[k]]
            P[k, rest] = centres[k]
            P[k, axes[k]] = signs[k]
        U = P / np.linalg.norm(P, axis=1, keepdims=True)
        h = _zonotope_h(W, U)
        used += h.size
        rad = side * half
        lo_best, hi_best = min(lo_best, float(h.min())), max(hi_best, float(h.max()))
        keep_lo = h - rad < lo_best - tol
        keep_hi = h + rad > hi_best + tol
        lo_open = float((h[~keep_lo] - rad).min()) if (~keep_lo).any() else lo_open
        hi_open = float((h[~keep_hi] + rad).max()) if (~keep_hi).any() else hi_open
        keep = keep_lo | keep_hi
        if not keep.any():
            lo = min(lo_best - tol, lo_open if lo_open is not None else lo_best)
            hi = max(hi_best + tol, hi_open if hi_open is not None else hi_best)
            return max(0.0, lo), hi, f"cap branch-and-bound ({used} evaluations)"
        nxt = int(keep.sum()) * corners.shape[0]
        if used + nxt > budget:
            return None
        centres = (centres[keep][:, None, :] + side * corners[None, :, :]).reshape(-1, d - 1)
        axes = np.repeat(axes[keep], corners.shape[0])
        signs = np.repeat(signs[keep], corners.shape[0])
        side /= 2


def hat_certificate(net: "RidgeNet", *, tol: float = 0.005,
                    budget: int = 400_000_000) -> "dict | None":
    """An UPPER bound on sup over B_d of |net - (1 - ‖x‖)| for a one-knot (zonotope) ridge net
    of the hat, or None when it is not of that form or the bound is not cheap.

    With p(t) = c₀ + γ|t| and x = r u: net(x) - (1 - r) = (c₀ - 1) + r(1 + γ h(u)), affine in
    r ∈ [0, 1], so the sup is max(|c₀ - 1|, |c₀ + γ h| over h ∈ [min h, max h]) and bounds on
    the zonotope's support function h (:func:`zonotope_range`, to within ``tol`` of the error,
    i.e. tol/|γ| in h) certify it.
    """
    p = net.profile
    if p.knots.size != 1 or p.knots[0] != 0.0:
        return None
    c0, g = p.c0, float(p.gamma[0])
    budget = max(1000, budget // max(1, net.W.shape[0]))   # budget counts h-terms |⟨w_j, u⟩|
    rng_ = zonotope_range(net.W, tol=tol / max(abs(g), 1e-12), budget=budget)
    if rng_ is None:
        return None
    lo, hi, how = rng_
    bound = max(abs(c0 - 1.0), abs(c0 + g * lo), abs(c0 + g * hi))
    return {"certified_sup": bound, "h_min_lower": lo, "h_max_upper": hi, "method": how}
