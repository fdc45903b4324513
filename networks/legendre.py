"""Daniely's Legendre machinery on the sphere (THEORY.md §3.7, experiments E12, E13).

For x, x' uniform on S^{d-1} the inner product t = <x, x'> has law mu_d,

    d mu_d(t) = Gamma(d/2) / (sqrt(pi) Gamma((d-1)/2)) (1 - t^2)^((d-3)/2) dt,   t in [-1, 1],

and the Legendre polynomials in dimension d (P_0 = 1, P_1 = t,
P_n = [(2n+d-4)/(n+d-3)] t P_{n-1} - [(n-1)/(n+d-3)] P_{n-2}) satisfy
``int P_n P_m d mu_d = delta_nm / N_{d,n}`` with N_{d,n} the dimension of the degree-n spherical
harmonics.  An inner-product function F(x, x') = g(<x, x'>) therefore expands as
F = sum_n alpha_n h_n with the orthonormal h_n = sqrt(N_{d,n}) P_n(<x, x'>) and
alpha_n = int g sqrt(N_{d,n}) P_n d mu_d; its tail ||P_n F||^2 = sum_{i >= n} alpha_i^2 drives the
width lower bound of Daniely's main theorem (:func:`daniely_width_bound_log2`).

Numerics: polynomials by the three-term recurrence (never by dividing scipy's Gegenbauer
polynomial by its fast-growing value at 1; scipy's Gegenbauer is identically 0 at alpha = 0,
i.e. d = 2, where P_n is Chebyshev's T_n), integrals by Gauss-Jacobi quadrature
(:func:`scipy.special.roots_jacobi`, alpha = beta = (d-3)/2) with weights normalised to sum 1,
binomials in log space (:func:`math.lgamma`) where d, n are large.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from circuits.utils.errors import DimensionError
from circuits.utils.validation import check_int

__all__ = [
    "legendre_polynomials", "legendre_polynomial", "harmonic_dimension", "log_harmonic_dimension",
    "sphere_marginal_density", "sphere_marginal_moment", "gauss_jacobi", "legendre_coefficients",
    "tail_norm", "best_polynomial_error", "daniely_lemma_bound", "separable_norm_bound",
    "main_inequality_bound", "daniely_width_bound_log2", "daniely_nonvacuous_dimension",
    "default_quadrature_nodes", "daniely_tail_nodes", "daniely_tail_norm",
]


# ----------------------------------------------------------------------------- validation
def _check_dim(d, *, name="d", minimum=2) -> int:
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)):
        raise TypeError(f"{name} must be an int (the ambient dimension of S^(d-1)), "
                        f"got {type(d).__name__}")
    d = int(d)
    if d < minimum:
        raise DimensionError(f"{name} must be >= {minimum} (sphere S^(d-1) in R^d), got {d}; "
                             f"pass an integer dimension d >= {minimum}")
    return d


def _check_degree(n, *, name="n", minimum=0) -> int:
    return check_int(n, name=name, minimum=minimum, what="a polynomial degree")


def _as_points(t, *, name="t") -> np.ndarray:
    arr = np.asarray(t, dtype=np.float64)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite, found NaN or inf; clean the input points first")
    return arr


# ----------------------------------------------------------------------------- polynomials
def legendre_polynomials(n_max: int, d: int, t) -> np.ndarray:
    """P_0(t), ..., P_{n_max}(t) in dimension d, stacked as an array of shape ``(n_max + 1, *t.shape)``.

    Parameters
    ----------
    n_max : int
        Highest degree (>= 0).
    d : int
        Ambient dimension (>= 2); d = 2 gives Chebyshev T_n, d = 3 the classical Legendre P_n.
    t : array_like
        Points, usually in [-1, 1] (the recurrence is stable there).

    Returns
    -------
    numpy.ndarray
        float64 array ``P[n] = P_n(t)``, normalised by P_n(1) = 1.

    Examples
    --------
    >>> P = legendre_polynomials(2, 3, [0.0, 0.5, 1.0])      # d = 3: (3t^2 - 1)/2
    >>> [round(float(v), 4) for v in P[2]]
    [-0.5, -0.125, 1.0]
    >>> [round(float(v), 4) for v in legendre_polynomials(3, 2, [0.5])[:, 0]]   # Chebyshev T_n
    [1.0, 0.5, -0.5, -1.0]

    Notes
    -----
    THEORY.md §3.7: P_n = [(2n+d-4)/(n+d-3)] t P_{n-1} - [(n-1)/(n+d-3)] P_{n-2}, n >= 2 (the
    recurrence starts at n = 2 because n + d - 3 = 0 at d = 2, n = 1).
    """
    n_max = _check_degree(n_max, name="n_max")
    d = _check_dim(d)
    t = _as_points(t)
    out = np.empty((n_max + 1,) + t.shape, dtype=np.float64)
    out[0] = 1.0
    if n_max >= 1:
        out[1] = t
    for n in range(2, n_max + 1):
        den = n + d - 3
        out[n] = ((2 * n + d - 4) / den) * t * out[n - 1] - ((n - 1) / den) * out[n - 2]
    return out


def legendre_polynomial(n: int, d: int, t) -> np.ndarray:
    """P_n(t) in dimension d (see :func:`legendre_polynomials`).

    >>> round(float(legendre_polynomial(4, 4, 0.3)), 6)   # d = 4: U_4(t)/5, Chebyshev 2nd kind
    0.00992
    """
    return legendre_polynomials(n, d, t)[_check_degree(n)]


def harmonic_dimension(d: int, n: int, *, formula: str = "difference") -> int:
    """N_{d,n}: dimension of the degree-n spherical harmonics on S^{d-1}, exact (Python int).

    Parameters
    ----------
    d, n : int
        Dimension (>= 2) and degree (>= 0).
    formula : {"difference", "ratio"}
        ``"difference"``: C(d+n-1, d-1) - C(d+n-3, d-1); ``"ratio"``:
        ((2n+d-2)/n) C(n+d-3, n-1) (n >= 1, evaluated exactly). Both agree (tested).

    Examples
    --------
    >>> [harmonic_dimension(3, n) for n in range(5)]      # 2n + 1
    [1, 3, 5, 7, 9]
    >>> [harmonic_dimension(4, n, formula="ratio") for n in range(5)]   # (n + 1)^2
    [1, 4, 9, 16, 25]
    >>> [harmonic_dimension(2, n) for n in range(4)]
    [1, 2, 2, 2]
    """
    d = _check_dim(d)
    n = _check_degree(n)
    if formula == "difference":
        return math.comb(d + n - 1, d - 1) - (math.comb(d + n - 3, d - 1) if n >= 2 else 0)
    if formula == "ratio":
        if n == 0:
            return 1
        num = (2 * n + d - 2) * math.comb(n + d - 3, n - 1)
        q, r = divmod(num, n)
        if r:  # cannot happen (the value is an integer); guard against a formula slip
            raise ArithmeticError(f"N_{{{d},{n}}} ratio formula is not an integer: {num}/{n}")
        return q
    raise ValueError(f"formula must be 'difference' or 'ratio', got {formula!r}")


def log_harmonic_dimension(d: int, n: int) -> float:
    """Natural log of N_{d,n} in floating point via lgamma (for large d, n).

    >>> abs(log_harmonic_dimension(60, 3600) - math.log(harmonic_dimension(60, 3600))) < 1e-9
    True
    """
    d = _check_dim(d)
    n = _check_degree(n)
    if n == 0:
        return 0.0
    if d == 2:
        return math.log(2.0)
    # N = ((2n + d - 2)/n) * C(n + d - 3, n - 1),  C(a, b) = Gamma(a+1) / (Gamma(b+1) Gamma(a-b+1))
    return (math.log(2 * n + d - 2) - math.log(n) + math.lgamma(n + d - 2) - math.lgamma(n)
            - math.lgamma(d - 1))


# ----------------------------------------------------------------------------- mu_d
def sphere_marginal_density(t, d: int) -> np.ndarray:
    """Density of mu_d, the law of x_1 (equivalently of <x, x'>) for x uniform on S^{d-1}.

    d mu_d = Gamma(d/2) / (sqrt(pi) Gamma((d-1)/2)) (1 - t^2)^((d-3)/2) dt on (-1, 1), 0 outside.

    Examples
    --------
    >>> round(float(sphere_marginal_density(0.3, 3)), 6)    # uniform on [-1, 1] at d = 3
    0.5
    >>> round(float(sphere_marginal_density(0.0, 2)), 6)    # arcsine law 1 / (pi sqrt(1 - t^2))
    0.31831
    """
    d = _check_dim(d)
    t = _as_points(t)
    logc = math.lgamma(d / 2) - 0.5 * math.log(math.pi) - math.lgamma((d - 1) / 2)
    inside = np.abs(t) < 1.0
    out = np.zeros(t.shape, dtype=np.float64)
    tt = t[inside]
    out[inside] = np.exp(logc + 0.5 * (d - 3) * np.log1p(-tt * tt))
    if d == 3:
        out[np.abs(t) == 1.0] = 0.5
    return out


def sphere_marginal_moment(d: int, k: int) -> float:
    """E t^{2k} under mu_d, exactly (2k-1)!! / prod_{j<k} (d + 2j) (= c_{d,k} of THEORY §3.6).

    >>> sphere_marginal_moment(5, 1), round(sphere_marginal_moment(5, 2), 6)
    (0.2, 0.085714)
    """
    d = _check_dim(d)
    k = _check_degree(k, name="k")
    num, den = 1, 1
    for j in range(k):
        num *= 2 * j + 1
        den *= d + 2 * j
    return num / den


def gauss_jacobi(n_nodes: int, d: int) -> tuple[np.ndarray, np.ndarray]:
    """Gauss-Jacobi nodes and weights for mu_d (alpha = beta = (d-3)/2), weights summing to 1.

    The rule integrates every polynomial of degree <= 2 n_nodes - 1 exactly against mu_d.

    Examples
    --------
    >>> x, w = gauss_jacobi(5, 5)
    >>> round(float(w.sum()), 12), round(float(w @ x**2), 12), round(float(w @ x**4), 12)
    (1.0, 0.2, 0.085714285714)
    """
    from scipy.special import roots_jacobi

    n_nodes = _check_degree(n_nodes, name="n_nodes", minimum=1)
    d = _check_dim(d)
    a = (d - 3) / 2.0
    x, w = roots_jacobi(n_nodes, a, a)
    w = np.asarray(w, dtype=np.float64)
    return np.asarray(x, dtype=np.float64), w / w.sum()


def default_quadrature_nodes(d: int, n_max: int) -> int:
    """Default number of Gauss-Jacobi nodes for degree n_max: max(2 n_max + 64, 512).

    Exact for polynomial g of degree <= 2 n_max + 63 times P_n; oscillatory g needs about as
    many nodes as its angular frequency (g = sin(pi d^3 t): about 1.05 pi d^3, see
    :func:`daniely_tail_nodes`) - :func:`tail_norm` checks convergence by default.

    >>> default_quadrature_nodes(3, 9), default_quadrature_nodes(10, 300)
    (512, 664)
    """
    _check_dim(d)
    n_max = _check_degree(n_max, name="n_max")
    return max(2 * n_max + 64, 512)


def daniely_tail_nodes(d: int) -> int:
    """Nodes for g = sin(pi d^3 t): max(ceil(10 d^2.5), ceil(1.2 pi d^3), 2 d^2 + 64).

    THEORY E13 asks for >= 10 d^2.5 nodes; resolving the frequency pi d^3 needs ~1.05 pi d^3
    (at d = 10, 3162 nodes give ||P_100 F||^2 = 0.5009 instead of 0.5000).

    >>> daniely_tail_nodes(3), daniely_tail_nodes(10)
    (156, 3770)
    """
    d = _check_dim(d)
    return max(int(math.ceil(10 * d ** 2.5)), int(math.ceil(1.2 * math.pi * d ** 3)), 2 * d * d + 64)


def daniely_tail_norm(d: int, *, squared: bool = False, n_nodes: int | None = None,
                      check: bool = True) -> float:
    """||P_{d^2} F|| (``squared=True``: ||P_{d^2} F||^2, the number THEORY E13 quotes) for
    Daniely's F(x, x') = sin(pi d^3 <x, x'>); the flag and its default are those of
    :func:`tail_norm`.

    >>> round(daniely_tail_norm(3, squared=True), 4), round(daniely_tail_norm(4, squared=True), 4)
    (0.4953, 0.4999)
    """
    d = _check_dim(d, minimum=2)
    w = math.pi * d ** 3
    return tail_norm(lambda t: np.sin(w * t), d, d * d,
                     n_nodes=daniely_tail_nodes(d) if n_nodes is None else n_nodes,
                     squared=squared, check=check)


def _g_values(g: Callable, x: np.ndarray) -> np.ndarray:
    if not callable(g):
        raise TypeError(f"g must be a callable g(t) -> array (vectorised over t), "
                        f"got {type(g).__name__}")
    vals = np.asarray(g(x), dtype=np.float64)
    if vals.shape != x.shape:
        raise DimensionError(f"g must map an array of shape {x.shape} to the same shape, "
                             f"got {vals.shape}; vectorise g (e.g. with numpy ufuncs)")
    if not np.all(np.isfinite(vals)):
        raise ValueError("g returned NaN or inf on [-1, 1]; g must be finite there")
    return vals


def legendre_coefficients(g: Callable, d: int, n_max: int, *, n_nodes: int | None = None
                          ) -> np.ndarray:
    """alpha_0, ..., alpha_{n_max} of F(x, x') = g(<x, x'>) in the basis h_n = sqrt(N_{d,n}) P_n.

    alpha_n = int g(t) sqrt(N_{d,n}) P_n(t) d mu_d(t), by Gauss-Jacobi quadrature with
    ``n_nodes`` nodes (default :func:`default_quadrature_nodes`).

    Examples
    --------
    >>> a = legendre_coefficients(lambda t: t**2, 3, 3)    # t^2 = 1/3 P_0 + 2/3 P_2, N_{3,2} = 5
    >>> [round(float(v), 6) for v in a[::2]], bool(abs(a[1]) + abs(a[3]) < 1e-12)
    ([0.333333, 0.298142], True)
    """
    d = _check_dim(d)
    n_max = _check_degree(n_max, name="n_max")
    if n_nodes is None:
        n_nodes = default_quadrature_nodes(d, n_max)
    x, w = gauss_jacobi(n_nodes, d)
    gv = _g_values(g, x)
    P = legendre_polynomials(n_max, d, x)
    sqrtN = np.exp(0.5 * np.array([log_harmonic_dimension(d, n) for n in range(n_max + 1)]))
    return sqrtN * (P @ (w * gv))


def tail_norm(g: Callable, d: int, n: int, *, n_nodes: int | None = None, squared: bool = False,
              check: bool = True, rtol: float = 1e-6) -> float:
    """||P_n F|| = (sum_{i >= n} alpha_i^2)^(1/2) for F(x, x') = g(<x, x'>) (L2 on S^{d-1} x S^{d-1}).

    Computed as ||g||^2_{mu_d} - sum_{i < n} alpha_i^2 with one Gauss-Jacobi rule.

    Parameters
    ----------
    g : callable
        Vectorised g: [-1, 1] -> R.
    d, n : int
        Dimension and first degree of the tail.
    n_nodes : int, optional
        Quadrature nodes (default :func:`default_quadrature_nodes`).
    squared : bool
        Return ||P_n F||^2 instead of the norm.
    check : bool
        Recompute with 1.5x the nodes and raise ``ValueError`` if the two differ by more than
        ``rtol`` (relative; or 1e-14 absolute) - a guard against under-resolved oscillatory g.

    Examples
    --------
    >>> d = 3; g = lambda t: np.sin(np.pi * d**3 * t)
    >>> round(tail_norm(g, d, d * d, squared=True), 4)        # THEORY E13
    0.4953
    >>> tail_norm(lambda t: t**2, 3, 3, squared=True) < 1e-12   # a polynomial has no tail
    True
    """
    d = _check_dim(d)
    n = _check_degree(n)
    if n_nodes is None:
        n_nodes = default_quadrature_nodes(d, n)
    value, total = _tail_sq(g, d, n, n_nodes)
    if check:
        other, _ = _tail_sq(g, d, n, int(math.ceil(1.5 * n_nodes)))
        # relative tolerance, or rounding noise of the subtraction ||g||^2 - head
        if abs(other - value) > max(rtol * abs(value), 1e-11 * total):
            raise ValueError(f"tail norm not converged: {value!r} with {n_nodes} nodes vs {other!r} "
                             f"with {int(math.ceil(1.5 * n_nodes))}; pass a larger n_nodes")
    return value if squared else math.sqrt(value)


def _tail_sq(g, d, n, n_nodes) -> float:
    x, w = gauss_jacobi(n_nodes, d)
    gv = _g_values(g, x)
    total = float(w @ (gv * gv))
    if n == 0:
        return total, total
    P = legendre_polynomials(n - 1, d, x)
    sqrtN = np.exp(0.5 * np.array([log_harmonic_dimension(d, i) for i in range(n)]))
    alpha = sqrtN * (P @ (w * gv))
    # cancellation leaves rounding noise of order n eps ||g||^2: clip it at 0
    return max(total - float(alpha @ alpha), 0.0), total


def best_polynomial_error(g: Callable, d: int, k: int, *, n_nodes: int | None = None,
                          check: bool = True) -> float:
    """min over deg p <= k of int (g - p)^2 d mu_d (= ||P_{k+1} F||^2, the orthogonal remainder).

    >>> round(best_polynomial_error(lambda t: t**3, 3, 2), 6)    # t^3 - 3t/5 = (2/5) P_3
    0.022857
    """
    k = _check_degree(k, name="k")
    return tail_norm(g, d, k + 1, n_nodes=n_nodes, squared=True, check=check)


# ----------------------------------------------------------------------------- Daniely's bounds
def daniely_lemma_bound(m: float, k: int) -> float:
    """Lemma lower bound (m - k) / (4 e pi m) on int (sin(pi sqrt(d) m t) - p)^2 d mu_d, deg p <= k.

    Valid for d > d_0; it is far below the true best error (about 1/2, pitfall 6).

    >>> round(daniely_lemma_bound(10, 0), 4)
    0.0293
    """
    if not m > 0:
        raise ValueError(f"m must be > 0, got {m!r}")
    k = _check_degree(k, name="k")
    return (m - k) / (4 * math.e * math.pi * m)


def separable_norm_bound(weight_bound: float, d: int) -> float:
    """||g_j|| <= B^2 (1 + sqrt(4 d)) for one ReLU neuron with weights bounded by B (our reading).

    >>> separable_norm_bound(1.0, 4)
    5.0
    """
    d = _check_dim(d)
    if not weight_bound >= 0:
        raise ValueError(f"weight_bound must be >= 0, got {weight_bound!r}")
    return weight_bound ** 2 * (1 + math.sqrt(4 * d))


def main_inequality_bound(tail: float, sum_norms: float, d: int, n: int) -> float:
    """Right side of ||F - sum g_j||^2 >= ||P_n F|| (||P_n F|| - 2 sum ||g_j|| / sqrt(N_{d,n})).

    ``tail`` is ||P_n F|| (the norm, not squared), ``sum_norms`` = sum_j ||g_j||.

    >>> main_inequality_bound(0.7, 0.0, 3, 9) == 0.7 ** 2
    True
    """
    if tail < 0 or sum_norms < 0:
        raise ValueError(f"tail and sum_norms must be >= 0, got {tail!r}, {sum_norms!r}")
    return tail * (tail - 2.0 * sum_norms / math.exp(0.5 * log_harmonic_dimension(d, n)))


def daniely_width_bound_log2(d: int) -> float:
    """log2 of the width lower bound of Daniely's main theorem at dimension d.

    width >= sqrt(N_{d,d^2}) / (20 e pi 2^{2d} (1 + sqrt(4d)) + 2^{d+1})  (g = sin(pi d^3 t),
    n = d^2, weights <= B = 2^d, squared error < 1/(50 e^2 pi^2)); computed in log space.
    Negative values mean the bound is vacuous (width >= something < 1).

    Examples
    --------
    >>> [round(daniely_width_bound_log2(d), 2) for d in (10, 20, 60)]
    [-10.64, 1.6, 81.8]
    """
    d = _check_dim(d, minimum=2)
    half_log2_n = 0.5 * log_harmonic_dimension(d, d * d) / math.log(2.0)
    # log2(20 e pi 2^{2d} (1 + sqrt(4d)) + 2^{d+1}) = 2d + log2(20 e pi (1+sqrt(4d)) + 2^{1-d})
    den = 2 * d + math.log2(20 * math.e * math.pi * (1 + math.sqrt(4 * d)) + 2.0 ** (1 - d))
    return half_log2_n - den


def daniely_nonvacuous_dimension(d_max: int = 200) -> int:
    """Smallest d with a width bound > 1 (log2 > 0) that stays > 1 for all larger d <= d_max.

    >>> daniely_nonvacuous_dimension()      # pitfall 6: vacuous below d ~ 19
    19
    """
    d_max = _check_dim(d_max, name="d_max", minimum=3)
    first = None
    for d in range(2, d_max + 1):
        if daniely_width_bound_log2(d) > 0:
            if first is None:
                first = d
        else:
            first = None
    if first is None:
        raise ValueError(f"the bound is vacuous for every d <= {d_max}; raise d_max")
    return first
