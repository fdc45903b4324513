"""Daniely's Legendre machinery (THEORY §3.7, E12, E13) against scipy, exact twins and THEORY."""

import math

import numpy as np
import pytest
from scipy import integrate, special

from circuits.utils.errors import DimensionError
from networks import legendre as lg
from tests import naive_constructions as naive

T = np.linspace(-1.0, 1.0, 401)


# ----------------------------------------------------------------------------- E12 polynomials
@pytest.mark.parametrize("d", [3, 4, 5, 7, 10, 20, 35, 50])
def test_recurrence_matches_normalised_gegenbauer(d):
    alpha = (d - 2) / 2
    P = lg.legendre_polynomials(40, d, T)
    for n in range(41):
        ref = special.eval_gegenbauer(n, alpha, T) / special.eval_gegenbauer(n, alpha, 1.0)
        assert np.max(np.abs(P[n] - ref)) < 1e-12, (d, n)


def test_d2_is_chebyshev_and_scipy_gegenbauer_vanishes_there():
    P = lg.legendre_polynomials(40, 2, T)
    for n in range(41):
        assert np.max(np.abs(P[n] - special.eval_chebyt(n, T))) < 1e-12
    # pitfall 7: scipy's Gegenbauer at alpha = 0 is identically 0 for n >= 1
    assert np.all(special.eval_gegenbauer(3, 0.0, T) == 0)


def test_d3_is_classical_legendre():
    P = lg.legendre_polynomials(30, 3, T)
    for n in range(31):
        assert np.max(np.abs(P[n] - special.eval_legendre(n, T))) < 1e-12


@pytest.mark.parametrize("d", [2, 3, 4, 5, 8])
def test_recurrence_matches_exact_gram_schmidt(d):
    exact = naive.legendre_gram_schmidt(7, d)
    P = lg.legendre_polynomials(7, d, T)
    for n, coeffs in enumerate(exact):
        ref = np.array([naive.eval_poly(coeffs, t) for t in T])
        assert np.max(np.abs(P[n] - ref)) < 1e-12


@pytest.mark.parametrize("d", [2, 3, 6, 11])
def test_normalisation_and_parity(d):
    P = lg.legendre_polynomials(25, d, T)
    assert np.allclose(lg.legendre_polynomials(25, d, [1.0])[:, 0], 1.0, atol=1e-13)
    signs = (-1.0) ** np.arange(26)
    assert np.allclose(P[:, ::-1], signs[:, None] * P, atol=1e-13)
    assert np.allclose(lg.legendre_polynomial(5, d, T), P[5])


# ----------------------------------------------------------------------------- N_{d,n}
def test_harmonic_dimension_formulas_agree_and_match_counting():
    for d in range(2, 12):
        for n in range(0, 15):
            a = lg.harmonic_dimension(d, n)
            assert a == lg.harmonic_dimension(d, n, formula="ratio")
            assert a == naive.harmonic_dimension_by_counting(d, n)
            assert abs(lg.log_harmonic_dimension(d, n) - math.log(a)) < 1e-10
    for d in range(2, 40):
        for n in range(1, 60, 7):
            assert lg.harmonic_dimension(d, n) == lg.harmonic_dimension(d, n, formula="ratio")
    assert [lg.harmonic_dimension(3, n) for n in range(6)] == [2 * n + 1 for n in range(6)]
    assert [lg.harmonic_dimension(4, n) for n in range(6)] == [(n + 1) ** 2 for n in range(6)]


def test_harmonic_dimensions_sum_to_polynomial_space():
    # dim Pi_K(S^{d-1}) = C(d+K-1, d-1) + C(d+K-2, d-1)
    for d in range(2, 9):
        for K in range(0, 12):
            total = sum(lg.harmonic_dimension(d, n) for n in range(K + 1))
            expected = math.comb(d + K - 1, d - 1) + (math.comb(d + K - 2, d - 1) if K >= 1 else 0)
            assert total == expected


def test_log_harmonic_dimension_large():
    for d, n in [(60, 3600), (40, 1600), (100, 50)]:
        exact = math.log(lg.harmonic_dimension(d, n))
        assert abs(lg.log_harmonic_dimension(d, n) - exact) < 1e-9 * exact


# ----------------------------------------------------------------------------- mu_d
@pytest.mark.parametrize("d", [2, 3, 4, 5, 8, 13])
def test_density_normalised_with_moments(d):
    f = lambda t: lg.sphere_marginal_density(t, d)  # noqa: E731
    total = integrate.quad(f, -1, 1, limit=200)[0]
    m2 = integrate.quad(lambda t: t * t * f(t), -1, 1, limit=200)[0]
    m4 = integrate.quad(lambda t: t ** 4 * f(t), -1, 1, limit=200)[0]
    assert abs(total - 1) < 1e-7
    assert abs(m2 - 1 / d) < 1e-7
    assert abs(m4 - 3 / (d * (d + 2))) < 1e-7
    assert lg.sphere_marginal_moment(d, 2) == pytest.approx(3 / (d * (d + 2)), rel=1e-15)
    assert float(lg.sphere_marginal_density(1.5, d)) == 0.0


def test_density_is_law_of_a_coordinate(rng):
    d = 6
    x = rng.standard_normal((200_000, d))
    t = x[:, 0] / np.linalg.norm(x, axis=1)
    hist, edges = np.histogram(t, bins=20, range=(-1, 1))
    cdf = np.array([integrate.quad(lambda s: lg.sphere_marginal_density(s, d), a, b)[0]
                    for a, b in zip(edges[:-1], edges[1:])])
    expected = cdf * t.size
    assert np.all(np.abs(hist - expected) <= 5 * np.sqrt(expected) + 5)


@pytest.mark.parametrize("d", [2, 3, 5, 8, 20, 50])
def test_gauss_jacobi_exact_on_polynomials(d):
    x, w = lg.gauss_jacobi(12, d)
    assert abs(w.sum() - 1) < 1e-14
    for k in range(12):
        assert abs(float(w @ x ** (2 * k)) - float(naive.moment(d, 2 * k))) < 1e-14
        assert abs(float(w @ x ** (2 * k + 1))) < 1e-14


@pytest.mark.parametrize("d", [2, 3, 4, 5, 6, 7, 8])
def test_orthogonality(d):
    x, w = lg.gauss_jacobi(64, d)
    P = lg.legendre_polynomials(40, d, x)
    G = (P * w) @ P.T
    N = np.array([lg.harmonic_dimension(d, n) for n in range(41)], dtype=float)
    assert np.max(np.abs(G - np.diag(1 / N))) < 1e-11
    # orthonormal basis sqrt(N) P_n
    Q = np.sqrt(N)[:, None] * P
    assert np.max(np.abs((Q * w) @ Q.T - np.eye(41))) < 1e-10


def test_orthogonality_large_d():
    for d in (20, 50):
        x, w = lg.gauss_jacobi(64, d)
        P = lg.legendre_polynomials(40, d, x)
        N = np.array([lg.harmonic_dimension(d, n) for n in range(41)], dtype=float)
        Q = np.sqrt(N)[:, None] * P
        assert np.max(np.abs((Q * w) @ Q.T - np.eye(41))) < 1e-10


def test_addition_formula_monte_carlo(rng):
    d, n_samples = 5, 400_000
    v = rng.standard_normal(d); v /= np.linalg.norm(v)
    vp = rng.standard_normal(d); vp /= np.linalg.norm(vp)
    X = rng.standard_normal((n_samples, d)); X /= np.linalg.norm(X, axis=1, keepdims=True)
    Pv = lg.legendre_polynomials(3, d, X @ v)
    Pvp = lg.legendre_polynomials(3, d, X @ vp)
    for n in range(4):
        for m in range(4):
            prod = Pv[n] * Pvp[m]
            mean, se = prod.mean(), prod.std() / math.sqrt(n_samples)
            expected = (float(lg.legendre_polynomial(n, d, v @ vp)) / lg.harmonic_dimension(d, n)
                        if n == m else 0.0)
            assert abs(mean - expected) <= 4 * se + 1e-12, (n, m)


# ----------------------------------------------------------------------------- coefficients, tails
@pytest.mark.parametrize("d", [3, 4, 7])
def test_coefficients_of_a_basis_polynomial(d):
    a = lg.legendre_coefficients(lambda t: lg.legendre_polynomial(4, d, t), d, 8)
    expected = np.zeros(9)
    expected[4] = 1 / math.sqrt(lg.harmonic_dimension(d, 4))
    assert np.max(np.abs(a - expected)) < 1e-12
    assert lg.tail_norm(lambda t: lg.legendre_polynomial(4, d, t), d, 4, squared=True) == \
        pytest.approx(1 / lg.harmonic_dimension(d, 4), rel=1e-10)
    assert lg.tail_norm(lambda t: lg.legendre_polynomial(4, d, t), d, 5, squared=True) < 1e-13


def test_parseval_and_tail_consistency():
    d = 4
    g = lambda t: np.exp(2 * t) * np.cos(5 * t)  # noqa: E731
    a = lg.legendre_coefficients(g, d, 60)
    x, w = lg.gauss_jacobi(200, d)
    total = float(w @ g(x) ** 2)
    assert abs(float(a @ a) - total) < 1e-12
    for n in (0, 3, 10):
        assert lg.tail_norm(g, d, n, squared=True) == pytest.approx(float(a[n:] @ a[n:]),
                                                                     abs=1e-12)
    assert lg.tail_norm(g, d, 3) == pytest.approx(math.sqrt(float(a[3:] @ a[3:])), rel=1e-10)


def test_best_polynomial_error_matches_least_squares():
    d, k = 5, 4
    g = lambda t: np.abs(t) ** 1.5  # noqa: E731
    x, w = lg.gauss_jacobi(300, d)
    V = np.vander(x, k + 1) * np.sqrt(w)[:, None]
    coef, *_ = np.linalg.lstsq(V, g(x) * np.sqrt(w), rcond=None)
    resid = float(np.sum((V @ coef - g(x) * np.sqrt(w)) ** 2))
    # same rule on both sides (|t|^1.5 is not smooth: the convergence check would object)
    assert lg.best_polynomial_error(g, d, k, n_nodes=300, check=False) == pytest.approx(resid, abs=1e-12)


@pytest.mark.parametrize("d,expected", [(3, 0.4953), (4, 0.4999), (5, 0.5000), (6, 0.5000),
                                        (7, 0.5000), (8, 0.5000), (9, 0.5000), (10, 0.5000)])
def test_daniely_tail_e13(d, expected):
    value = lg.daniely_tail_norm(d, squared=True)   # converged (check=True)
    assert abs(value - expected) < 1e-3
    assert value >= (1 / (5 * math.e * math.pi)) ** 2


def test_tail_check_catches_underresolved_quadrature():
    with pytest.raises(ValueError, match="not converged"):
        lg.daniely_tail_norm(10, n_nodes=2500)


def test_lemma_bound_far_below_true_error():
    # THEORY §3.7: true best errors ~0.500, bounds <= 0.0293 (pitfall 6: >= 17x below)
    for d in (20, 50, 100):
        for m in (4, 10):
            g = lambda t, d=d, m=m: np.sin(np.pi * math.sqrt(d) * m * t)  # noqa: E731
            for k in (0, 3, 6, 9):
                err = lg.best_polynomial_error(g, d, k)
                bound = lg.daniely_lemma_bound(m, k)
                assert abs(err - 0.5) < 1e-3
                assert bound <= 0.0293 and err >= 17 * bound


# ----------------------------------------------------------------------------- width bound
THEORY_LOG2 = {10: -10.64, 15: -5.26, 20: 1.60, 25: 9.51, 30: 18.24, 40: 37.59, 60: 81.80}


def _exact_log2_bound(d):
    N = naive.harmonic_dimension_by_counting(d, d * d) if d <= 6 else lg.harmonic_dimension(d, d * d)
    den = 20 * math.e * math.pi * 2 ** (2 * d) * (1 + math.sqrt(4 * d)) + 2 ** (d + 1)
    return 0.5 * math.log2(N) - math.log2(den)


@pytest.mark.parametrize("d", sorted(THEORY_LOG2))
def test_width_bound_matches_theory(d):
    value = lg.daniely_width_bound_log2(d)
    assert abs(value - THEORY_LOG2[d]) <= 0.005 + 1e-9
    assert value == pytest.approx(_exact_log2_bound(d), abs=1e-9)


def test_width_bound_vacuous_below_19():
    assert all(lg.daniely_width_bound_log2(d) < 0 for d in range(2, 19))
    assert abs(lg.daniely_width_bound_log2(19) - 0.13) < 0.005
    assert lg.daniely_nonvacuous_dimension() == 19
    assert all(lg.daniely_width_bound_log2(d) > 0 for d in range(19, 120))


def test_main_inequality_and_neuron_bound():
    assert lg.separable_norm_bound(2.0, 9) == 4 * 7
    tail = 0.7
    N = lg.harmonic_dimension(5, 25)
    # if sum ||g_j|| <= tail sqrt(N) / 4 then error^2 >= tail^2 / 2
    s = tail * math.sqrt(N) / 4
    assert lg.main_inequality_bound(tail, s, 5, 25) == pytest.approx(tail ** 2 / 2, rel=1e-12)
    assert lg.main_inequality_bound(tail, 0.0, 5, 25) == tail ** 2


# ----------------------------------------------------------------------------- errors
def test_bad_input():
    with pytest.raises(DimensionError, match="d must be >= 2"):
        lg.legendre_polynomials(3, 1, T)
    with pytest.raises(DimensionError, match="n_max must be >= 0"):
        lg.legendre_polynomials(-1, 3, T)
    with pytest.raises(TypeError, match="d must be an int"):
        lg.harmonic_dimension(3.0, 2)
    with pytest.raises(ValueError, match="formula"):
        lg.harmonic_dimension(3, 2, formula="nope")
    with pytest.raises(ValueError, match="finite"):
        lg.legendre_polynomials(2, 3, [np.nan])
    with pytest.raises(TypeError, match="callable"):
        lg.tail_norm(3.0, 3, 2)
    with pytest.raises(DimensionError, match="same shape"):
        lg.tail_norm(lambda t: np.ones(3), 3, 2)
    with pytest.raises(ValueError, match="NaN or inf"):
        lg.legendre_coefficients(lambda t: np.full_like(t, np.nan), 3, 2)
    with pytest.raises(DimensionError, match="n_nodes"):
        lg.gauss_jacobi(0, 3)
    with pytest.raises(ValueError, match="m must be > 0"):
        lg.daniely_lemma_bound(0, 1)
    with pytest.raises(ValueError, match="weight_bound"):
        lg.separable_norm_bound(-1.0, 3)


def test_tail_norm_flags_share_one_default():
    import inspect
    defaults = {f.__name__: inspect.signature(f).parameters["squared"].default
                for f in (lg.tail_norm, lg.daniely_tail_norm)}
    assert set(defaults.values()) == {False}, defaults
    assert lg.daniely_tail_norm(3) == pytest.approx(math.sqrt(lg.daniely_tail_norm(3, squared=True)))
