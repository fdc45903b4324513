"""The papers' constructions (THEORY §3.2-3.6, E6, E14-E17): widths, weights and errors asserted."""

import dataclasses
import json
import math

import numpy as np
import pytest
from circuits.utils.errors import InvalidArgumentError
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate

from circuits.utils.errors import DimensionError
from circuits.utils.rng import uniform_ball, uniform_sphere
from embeddings import HardInstance
from networks import DenseLayer, SigmaNetwork
from networks import constructions as cs
from circuits.utils.errors import InvalidNetworkError
from tests import naive_constructions as naive


def _tol(c):
    """Pitfall 2: exact (0) when sqrt(m/2), 1/sqrt(2m) are exact binary floats, else 1e-9."""
    return 0.0 if c.params["exact_in_floats"] else 1e-9


# ============================================================================ §3.3 lemma
@pytest.mark.parametrize("L,m", [(1.0, 200), (3.0, 600), (5 * math.pi, 3142)])
def test_lipschitz_lemma_theory_counts(L, m):
    c = cs.lipschitz_relu_sum(lambda t: np.sin(L * t), L, 1.0, 0.01)
    assert c.widths == (m,) == c.width_formula
    assert m <= 2 * 1.0 * L / 0.01 + 2
    assert c.params["max_abs_gamma"] <= L * (1 + 1e-12)
    assert c.params["max_abs_gamma"] >= 0.99 * L           # THEORY: max|gamma| = L
    t = np.linspace(-1, 1, 20_001).reshape(-1, 1)             # >= 6 points per piece
    err = c.measured_error(t)
    assert err <= c.error_bound <= 0.01 / 2 + 1e-15
    assert c.max_weight <= c.weight_formula
    # |weights| as stated: alpha in {+-1}, |beta| <= R, |gamma| <= 2L, output bias f(0)
    first, out = c.network.layers
    assert set(np.unique(first.weights).tolist()) == {-1.0, 1.0}
    assert np.abs(first.bias).max() <= 1.0
    assert np.abs(out.weights).max() <= 2 * L and out.bias[0] == 0.0


def test_lipschitz_lemma_integral_ratio_gives_exact_count():
    c = cs.lipschitz_relu_sum(np.abs, 2.0, 1.5, 0.25)      # RL/eps = 12
    assert c.widths == (24,) and c.widths[0] == 2 * 1.5 * 2.0 / 0.25


@settings(max_examples=25, deadline=None)
@given(slopes=st.lists(st.floats(-1, 1), min_size=2, max_size=12),
       L=st.floats(0.5, 4.0), R=st.floats(0.3, 3.0), eps=st.floats(0.01, 0.5))
def test_lipschitz_lemma_random_lipschitz_functions(slopes, L, R, eps):
    # a random L-Lipschitz piecewise-linear function on [-R, R]
    xs = np.linspace(-R, R, len(slopes) + 1)
    ys = np.concatenate([[0.3], 0.3 + np.cumsum(L * np.array(slopes) * np.diff(xs))])
    f = lambda t: np.interp(t, xs, ys)  # noqa: E731
    c = cs.lipschitz_relu_sum(f, L, R, eps)
    assert c.widths[0] == 2 * math.ceil(R * L / eps * (1 - 1e-12))
    assert c.widths[0] <= 2 * R * L / eps + 2
    grid = np.linspace(-R, R, 4001).reshape(-1, 1)
    assert c.measured_error(grid) <= c.error_bound + 1e-12
    assert c.error_bound <= eps / 2 * (1 + 1e-9)
    assert c.max_weight <= c.weight_formula * (1 + 1e-12)
    assert c.params["max_abs_gamma"] <= 2 * L * (1 + 1e-9)
    # N is L-Lipschitz on the whole line
    wide = np.linspace(-3 * R, 3 * R, 6001)
    vals = c.network(wide.reshape(-1, 1))
    assert np.max(np.abs(np.diff(vals) / np.diff(wide))) <= L * (1 + 1e-9)


def test_lipschitz_lemma_matches_naive_twin(rng):
    f, L, R, eps = (lambda t: np.cos(2 * t) + t / 3), 2.4, 1.3, 0.05
    c = cs.lipschitz_relu_sum(f, L, R, eps)
    t = rng.uniform(-2 * R, 2 * R, 300)
    ref = np.array([naive.lemma_eval(f, L, R, eps, float(v)) for v in t])
    assert np.max(np.abs(c.network(t.reshape(-1, 1)) - ref)) < 1e-12


def test_profiles_direct():
    p = cs.interpolation_profile(np.square, np.linspace(-1, 1, 33), second_derivative=2.0)
    t = np.linspace(-1, 1, 10001)
    assert np.max(np.abs(p(t) - t * t)) <= p.error_bound + 1e-15
    assert p.error_bound == pytest.approx(1 / 32 ** 2)
    assert np.allclose(p.network()(t.reshape(-1, 1)), p(t), atol=1e-14)


# ============================================================================ §3.4 Daniely (E14)
def _pairs(n_pairs, d, seed):
    X = uniform_sphere(n_pairs, d, seed=seed)
    Y = uniform_sphere(n_pairs, d, seed=seed + 1)
    # extremes: x' = x (t = 1) and x' = -x (t = -1)
    k = max(1, n_pairs // 20)
    Y[:k] = X[:k]
    Y[k:2 * k] = -X[k:2 * k]
    return np.hstack([X, Y])


def test_daniely_theory_example():
    c = cs.inner_product_depth3(lambda t: np.sin(np.pi * t), np.pi, 3, 0.2)
    assert c.widths == c.width_formula == (2262, 64)
    assert c.widths[0] == math.ceil(16 * 3 ** 2 * math.pi / 0.2 / 2) * 2   # 16 d^2 L / eps
    err = c.measured_error(_pairs(4000, 3, 5))
    assert err <= c.error_bound <= 0.2
    assert err < 0.01                                        # THEORY: measured 0.001
    assert c.max_weight <= c.weight_formula


@pytest.mark.parametrize("d,j,eps", [(2, 1, 0.3), (2, 5, 0.5), (3, 3, 0.5), (5, 2, 0.5),
                                     (8, 1, 0.4)])
def test_daniely_e14_small(d, j, eps):
    L = math.pi * j
    c = cs.inner_product_depth3(lambda t: np.sin(np.pi * j * t), L, d, eps)
    assert c.widths == c.width_formula
    assert c.widths[0] == d * 2 * math.ceil(8 * L * d / eps)
    assert c.widths[1] == 2 * math.ceil(2 * L / eps)
    assert c.measured_error(_pairs(2000, d, 3)) <= c.error_bound <= eps
    assert c.max_weight <= c.weight_formula


def test_daniely_matches_naive_composition(rng):
    g, L, d, eps = (lambda t: np.cos(2 * t)), 2.0, 3, 0.5
    c = cs.inner_product_depth3(g, L, d, eps)
    P = _pairs(30, d, 9)
    ref = np.array([naive.daniely_eval(g, L, d, eps, p[:d], p[d:]) for p in P])
    assert np.max(np.abs(c.network(P) - ref)) < 1e-10


@pytest.mark.slow
@pytest.mark.parametrize("j", [1, 2])
def test_daniely_e14_d20_1e5_pairs(j):
    d, eps = 20, 0.5 * j
    c = cs.inner_product_depth3(lambda t: np.sin(np.pi * j * t), math.pi * j, d, eps)
    assert c.widths == c.width_formula
    assert c.measured_error(_pairs(100_000, d, 21)) <= c.error_bound <= eps


# ============================================================================ §3.6 SES (E15-E16)
def _check_squared_norm(d, K, n_points):
    c = cs.squared_norm_depth2(d, K)
    assert c.widths == c.width_formula == (d * K,)
    assert c.error_bound == pytest.approx(d / K ** 2, rel=1e-12)
    X = np.vstack([uniform_ball(n_points, d, seed=d + K),
                   uniform_sphere(n_points // 3, d, seed=K)])
    err = c.errors(X)
    assert err.max() <= d / K ** 2 + 1e-12
    assert np.all(c.network(X) >= c.target(X) - 1e-12)       # q_K >= t^2


@pytest.mark.parametrize("d,K", [(2, 8), (2, 128), (10, 8), (10, 32), (100, 8), (100, 32),
                                 (10, 128)])
def test_squared_norm_e15(d, K):
    _check_squared_norm(d, K, 3000)


@pytest.mark.slow
@pytest.mark.parametrize("d", [2, 10, 100])
@pytest.mark.parametrize("K", [8, 32, 128])
def test_squared_norm_e15_1e5_points(d, K):
    _check_squared_norm(d, K, 100_000 if d <= 10 else 20_000)


def test_squared_norm_bound_attained_on_grid_midpoints_d2():
    for K in (8, 32, 128):
        c = cs.squared_norm_depth2(2, K)
        mids = -1 + (2 * np.arange(K) + 1) / K
        G = np.array(np.meshgrid(mids, mids)).reshape(2, -1).T
        G = G[np.linalg.norm(G, axis=1) <= 1]
        assert c.measured_error(G) == pytest.approx(2 / K ** 2, abs=1e-12)   # 0.03125 at K = 8


def test_squared_norm_theory_values():
    # THEORY: 0.075 <= 0.098 (d = 100, K = 32), 0.0093 <= 0.0098 (d = 10, K = 32) on random points
    c = cs.squared_norm_depth2(100, 32)
    assert c.measured_error(uniform_ball(2000, 100, seed=1)) <= 0.0977
    c = cs.squared_norm_depth2(10, 32)
    assert c.measured_error(uniform_ball(5000, 10, seed=1)) <= 0.0098


def test_squared_norm_matches_naive(rng):
    c = cs.squared_norm_depth2(3, 5)
    X = uniform_ball(100, 3, seed=4)
    ref = np.array([naive.squared_norm_eval(x, 5) for x in X])
    assert np.max(np.abs(c.network(X) - ref)) < 1e-12


def test_sphere_moments_theory_and_monte_carlo(rng):
    from networks.legendre import sphere_marginal_moment
    # THEORY §3.6 values are c_{d,k} ||x||^{2k} at ||x|| = 0.8
    for (d, k), ref in {(5, 1): 0.12800, (5, 2): 0.03511, (8, 3): 0.00410}.items():
        assert sphere_marginal_moment(d, k) * 0.64 ** k == pytest.approx(ref, abs=6e-6)
        x = rng.standard_normal(d); x *= 0.8 / np.linalg.norm(x)
        W = uniform_sphere(400_000, d, seed=rng)
        v = (W @ x) ** (2 * k)
        assert abs(v.mean() - ref) <= 4 * v.std() / math.sqrt(v.size) + 1e-5


@pytest.mark.parametrize("d,k,eps", [(3, 1, 0.02), (3, 2, 0.05), (3, 3, 0.1), (5, 2, 0.05),
                                     (4, 3, 0.2)])
def test_norm_power(d, k, eps):
    c = cs.norm_power_depth2(d, k, eps)
    assert c.widths == c.width_formula
    assert c.params["cubature_defect"] < 1e-9
    assert abs(c.params["sum_lambda"] - 1) < 1e-9           # averages of c_{d,k} ||x||^{2k}
    X = np.vstack([uniform_ball(2000, d, seed=1), uniform_sphere(500, d, seed=2)])
    assert c.measured_error(X) <= c.error_bound <= eps
    assert c.max_weight <= c.weight_formula * (1 + 1e-12)


def test_fibonacci_sphere_quasi_uniform():
    P = cs.fibonacci_sphere(1000)
    assert np.allclose(np.linalg.norm(P, axis=1), 1)
    assert np.abs(P.mean(axis=0)).max() < 1e-2
    assert np.allclose(P.T @ P / 1000, np.eye(3) / 3, atol=5e-3)


def _phi(r):
    return np.cos(3 * r)


def _dphi(r):
    return -3 * np.sin(3 * r)


def _g(t):
    a = np.abs(t)
    return _phi(a) + a * _dphi(a)


def test_archimedes_identity_exact():
    # phi(r) = (1/2r) int_{-r}^{r} g(t) dt; THEORY: 0.8253, 0.0707, -0.9041 at r = 0.2, 0.5, 0.9
    for r, ref in [(0.2, 0.8253), (0.5, 0.0707), (0.9, -0.9041)]:
        val = integrate.quad(_g, -r, r)[0] / (2 * r)
        assert val == pytest.approx(float(_phi(r)), abs=1e-12)
        assert abs(val - ref) < 1e-4


def _quadrature_error(N, X):
    W = cs.fibonacci_sphere(N)
    approx = _g(X @ W.T).mean(axis=1)
    return float(np.max(np.abs(approx - _phi(np.linalg.norm(X, axis=1)))))


def test_ridge_quadrature_rate_e16():
    X = uniform_ball(400, 3, seed=5)
    Ns = [100, 400, 1600, 6400]
    errs = [_quadrature_error(N, X) for N in Ns]
    # O(N^{-1/2}) or better: err * sqrt(N) never grows beyond the first value (with slack)
    scaled = [e * math.sqrt(N) for e, N in zip(errs, Ns)]
    assert all(s <= 1.5 * scaled[0] for s in scaled)
    assert errs[-1] < errs[0] / 4


def _check_ridge(N, eps, n_points):
    c = cs.radial_ridge_depth2(_phi, _dphi, 15.0, N, eps)
    assert c.widths == c.width_formula
    X = np.vstack([uniform_ball(n_points, 3, seed=6), uniform_sphere(n_points // 3, 3, seed=7)])
    quad = _quadrature_error(N, X)
    err = c.measured_error(X)
    # profile error (certified) + quadrature error of the Fibonacci average (measured with exact g)
    assert err <= c.params["profile_error_bound"] + quad + 1e-9
    assert c.params["profile_error_bound"] <= eps / 2 + 1e-12
    assert c.max_weight <= c.weight_formula * (1 + 1e-12)
    return err


@pytest.mark.parametrize("N", [100, 400])
def test_ridge_network_e16(N):
    _check_ridge(N, 0.05, 300)


@pytest.mark.slow
def test_ridge_network_e16_large():
    errs = {N: _check_ridge(N, 0.1, 600) for N in (100, 1600, 10_000)}
    assert errs[10_000] <= errs[100]


# ============================================================================ §3.5 Theorem 4 (E17)
@pytest.mark.parametrize("d", [2, 5, 10])
def test_theorem4_lipschitz_is_two(d):
    assert abs(cs.ses_theorem4_lipschitz(d) - 2.0) < 1e-6       # pitfall 4: not 1
    assert cs.ses_theorem4_lipschitz(d, radius=0.5) <= 1.0 + 1e-12
    X = uniform_ball(20_000, d, seed=d)
    grads = np.linalg.norm(cs.ses_theorem4_gradient(X), axis=1)
    assert grads.max() <= 2.0 + 1e-12


@pytest.mark.parametrize("d", [2, 3])
def test_theorem4_gradient_finite_differences(d, rng):
    X = uniform_ball(20, d, seed=3) * 0.9
    G = cs.ses_theorem4_gradient(X)
    h = 1e-7
    for i in range(d):
        E = np.zeros(d); E[i] = h
        fd = (cs.ses_theorem4_target(X + E) - cs.ses_theorem4_target(X - E)) / (2 * h)
        assert np.max(np.abs(fd - G[:, i])) < 1e-5


@pytest.mark.parametrize("d", [2, 3, 4])
def test_theorem4_target_from_daniely(d):
    # THEORY §3.6: on the sphere f((x + x')/2) = (-1)^{d^3} sin(pi d^3 <x, x'>) / (2 pi d^3)
    X, Y = uniform_sphere(500, d, seed=1), uniform_sphere(500, d, seed=2)
    t = np.einsum("ij,ij->i", X, Y)
    w = math.pi * d ** 3
    lhs = cs.ses_theorem4_target((X + Y) / 2)
    assert np.max(np.abs(lhs - (-1) ** (d ** 3) * np.sin(w * t) / (2 * w))) < 1e-12


@pytest.mark.parametrize("d,eps", [(2, 0.002), (3, 0.0005)])
def test_theorem4_depth3(d, eps):
    c = cs.ses_theorem4_depth3(d, eps)
    assert c.widths == c.width_formula and c.depth == 3
    X = np.vstack([uniform_ball(3000, d, seed=1), uniform_sphere(500, d, seed=2)])
    assert c.measured_error(X) <= c.error_bound <= eps
    assert c.max_weight <= c.weight_formula


# ============================================================================ result object
def test_construction_report_and_json(tmp_path):
    c = cs.squared_norm_depth2(3, 4)
    X = uniform_ball(50, 3, seed=1)
    r = c.report(X)
    assert r["widths"] == [12] and r["measured_error"] <= r["error_bound"]
    text = c.summary(X)
    assert "formula" in text and "measured" in text
    data = json.loads(json.dumps(c.to_dict()))
    assert SigmaNetwork.from_dict(data["network"]).equals(c.network)
    assert c.measured_error(np.zeros((0, 3))) == 0.0


def test_max_error_over_chunks():
    c = cs.ip_depth3_relu(3)
    inst = HardInstance(3)
    assert c.max_error_over(inst.iter_support(chunk=10)) <= 1e-9
    sup = inst.support()
    assert c.max_error_over([(sup.points, sup.labels)], progress=False) <= 1e-9


# ============================================================================ errors
def test_bad_input():
    with pytest.raises(DimensionError, match="n must be >= 1"):
        cs.ip_depth3_relu(0)
    with pytest.raises(DimensionError, match="m must be >= 3"):
        cs.ip_depth3_relu(3, 2)
    with pytest.raises(InvalidNetworkError, match="tau"):
        cs.ip_depth3_relu(3, tau=0.5)
    with pytest.raises(TypeError, match="n must be an int"):
        cs.ip_depth3_relu(2.0)
    with pytest.raises(InvalidArgumentError, match="eps must be > 0"):
        cs.lipschitz_relu_sum(np.sin, 1.0, 1.0, 0.0)
    with pytest.raises(InvalidArgumentError, match="lipschitz"):
        cs.lipschitz_relu_sum(np.sin, -1.0, 1.0, 0.1)
    with pytest.raises(TypeError, match="callable"):
        cs.lipschitz_relu_sum(3.0, 1.0, 1.0, 0.1)
    with pytest.raises(DimensionError, match="same shape"):
        cs.lipschitz_relu_sum(lambda t: np.ones(2), 1.0, 1.0, 0.1)
    with pytest.raises(InvalidNetworkError, match="NaN or inf"):
        cs.lipschitz_relu_sum(lambda t: np.full_like(t, np.inf), 1.0, 1.0, 0.1)
    with pytest.raises(InvalidNetworkError, match="knots"):
        cs.interpolation_profile(np.sin, [0.0, 0.0, 1.0], lipschitz=1.0)
    with pytest.raises(InvalidNetworkError, match="lipschitz= .* or second_derivative="):
        cs.interpolation_profile(np.sin, [0.0, 1.0])
    with pytest.raises(InvalidNetworkError, match="n_directions >="):
        cs.norm_power_depth2(4, 2, 0.1, n_directions=3)
    c = cs.squared_norm_depth2(3, 4)
    with pytest.raises(DimensionError, match=r"shape \(n_points, 3\)"):
        c.measured_error(np.zeros((5, 4)))
    with pytest.raises(DimensionError, match="one value per row"):
        c.measured_error(np.zeros((5, 3)), np.zeros(4))
    with pytest.raises(DimensionError, match=r"shape \(n_points, 2\)"):
        cs.ses_theorem4_target(np.zeros((3, 3)), 2)


# ============================================================================ negative controls
# Every "measured error <= certified bound" / "exact on the support" claim above has a twin here:
# the same check, on the same points, must FAIL for the construction with one unit removed.

def _without_strongest_output_unit(c):
    """``c`` with the last hidden unit of largest |output weight| disconnected from the output."""
    layers = list(c.network.layers)
    W = layers[-1].weights.copy()
    j = int(np.argmax(np.abs(W[0])))
    assert W[0, j] != 0.0
    W[0, j] = 0.0
    layers[-1] = DenseLayer(W, layers[-1].bias)
    return dataclasses.replace(c, network=c.network.with_layers(layers))


def _ball_and_sphere(d, seed):
    return np.vstack([uniform_ball(2000, d, seed=seed), uniform_sphere(500, d, seed=seed + 1)])


_BOUNDED = {
    "lemma": (lambda: cs.lipschitz_relu_sum(lambda t: np.sin(3.0 * t), 3.0, 1.0, 0.01),
              lambda: np.linspace(-1, 1, 20_001).reshape(-1, 1)),
    "squared_norm": (lambda: cs.squared_norm_depth2(10, 8), lambda: _ball_and_sphere(10, 18)),
    "daniely": (lambda: cs.inner_product_depth3(lambda t: np.sin(np.pi * t), np.pi, 2, 0.3),
                lambda: _pairs(2000, 2, 3)),
    "norm_power": (lambda: cs.norm_power_depth2(3, 2, 0.05), lambda: _ball_and_sphere(3, 1)),
    "theorem4": (lambda: cs.ses_theorem4_depth3(2, 0.002), lambda: _ball_and_sphere(2, 1)),
}


@pytest.mark.parametrize("name", sorted(_BOUNDED))
def test_negative_control_one_unit_removed_exceeds_the_bound(name):
    build, points = _BOUNDED[name]
    c, X = build(), points()
    assert c.measured_error(X) <= c.error_bound                  # the claim ...
    assert _without_strongest_output_unit(c).measured_error(X) > c.error_bound   # ... can fail


def test_negative_control_perturbed_ip_nets_are_not_exact():
    inst = HardInstance(3)
    sup = inst.support()
    c = cs.ip_depth3_relu(3, inst.m)
    assert c.measured_error(sup.points, sup.labels) <= _tol(c)
    assert _without_strongest_output_unit(c).measured_error(sup.points, sup.labels) >= 0.5
    # a relative change of 1e-6 in one first-layer weight is already seen on the support
    layers = list(c.network.layers)
    W = layers[0].weights.copy()
    W[0, 0] *= 1 + 1e-6
    layers[0] = DenseLayer(W, layers[0].bias)
    tiny = dataclasses.replace(c, network=c.network.with_layers(layers))
    assert tiny.measured_error(sup.points, sup.labels) > max(_tol(c), 1e-7)
    rc = cs.ip_depth3_relu_rcube(3)
    from circuits.hypercube import points
    worst_corner = np.where(points(6) == 1, 0.75, 0.25)
    assert rc.measured_error(worst_corner) <= 1e-12
    assert _without_strongest_output_unit(rc).measured_error(worst_corner) >= 0.5
