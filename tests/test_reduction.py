"""Tests of networks.reduction (THEORY §4): each step against naive exhaustive computations."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest

import naive_reduction as naive
from circuits.utils.errors import DimensionError, InvalidArgumentError, ReductionError
from embeddings import HardInstance
from circuits.utils.rng import uniform_ball
from networks import SigmaNetwork, get_activation
from networks.activations import ACTIVATIONS
from circuits.analysis import numerical_rank
from networks.reduction import (bernstein_k, certify, correlation_width_bound,
                                exact_shift_average, hoeffding_k, quantise, random_shifts,
                                reduce_network, reduce_to_circuit, self_reduce, shifted_network,
                                staircase, staircase_gate_count, synthetic_approximator,
                                threshold_circuit, twist_sign, twisted_sums, value_matrix)
from networks.reduction import ip_signs as ip_sign_matrix

ACTS = sorted(ACTIVATIONS)


@pytest.fixture(scope="module")
def inst3():
    return HardInstance(3, seed=0)


def _net(dim, width, act, seed, bias=0.3):
    return SigmaNetwork.random([dim, width, 1], act, seed=seed, bias_scale=bias)


# ---------------------------------------------------------------- twist identity (§4.3)
@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_twist_identity_exhaustive(n):
    size = 1 << n
    a, b, r, s = (v.ravel() for v in np.meshgrid(*[np.arange(size)] * 4, indexing="ij"))
    ip = np.bitwise_count((a & b).astype(np.uint64)) & 1
    ip_shift = np.bitwise_count(((a ^ r) & (b ^ s)).astype(np.uint64)) & 1
    par = lambda x: np.bitwise_count(x.astype(np.uint64)) & 1   # noqa: E731
    assert np.array_equal(ip_shift, ip ^ par(a & s) ^ par(r & b) ^ par(r & s))
    H = 1 - 2 * ip.astype(np.int64)
    Hs = 1 - 2 * ip_shift.astype(np.int64)
    assert np.array_equal(H, twist_sign(a, b, r, s) * Hs)
    if n <= 2:   # twin: plain Python
        for aa, bb, rr, ss in itertools.product(range(size), repeat=4):
            assert naive.ip(aa ^ rr, bb ^ ss) == (naive.ip(aa, bb) ^ naive.ip(aa, ss)
                                                  ^ naive.ip(rr, bb) ^ naive.ip(rr, ss))


def test_ip_sign_matrix_orientation():
    H = ip_sign_matrix(2)
    for a, b in itertools.product(range(4), repeat=2):
        assert H[a, b] == 1 - 2 * naive.ip(a, b)


# ---------------------------------------------------------------- self-reduction kernel (§4.3–4.4)
@pytest.mark.parametrize("n", [1, 2, 3])
def test_twisted_sums_match_naive(n):
    rng = np.random.default_rng(n)
    V = rng.normal(size=(1 << n, 1 << n))
    V[0, 1 % (1 << n)] = 3.0                      # asymmetric: catches an [a, b] transpose
    sh = random_shifts(n, 7, seed=n)
    red = self_reduce(V, shifts=sh)
    M = np.array(naive.twisted_M(V.tolist(), sh.tolist()))
    assert np.allclose(red.M, M, rtol=0, atol=1e-12)
    assert np.allclose(red.prefix_margins, naive.prefix_margins(V.tolist(), sh.tolist()),
                       rtol=0, atol=1e-12)
    assert red.k == 7 and red.M.shape == (1 << n, 1 << n)
    a, b = red.worst_pair
    assert math.isclose(ip_sign_matrix(n)[a, b] * red.M[a, b], red.min_margin, abs_tol=1e-12)


def test_twisted_sums_chunked_equals_single_call():
    rng = np.random.default_rng(0)
    V = rng.normal(size=(128, 128))
    sh = random_shifts(7, 9, seed=1)
    G0, p0 = twisted_sums(V, sh)
    G1, p1 = twisted_sums(V, sh, executor="threads")
    G2, p2 = twisted_sums(V, sh, progress=True)
    assert np.array_equal(G0, G1) and np.array_equal(p0, p1)
    assert np.array_equal(G0, G2) and np.array_equal(p0, p2)


@pytest.mark.parametrize("n", [2, 4, 6])
def test_exact_average_over_all_shifts_is_rho_H(n):          # E9 (i)
    rng = np.random.default_rng(n)
    V = rng.normal(size=(1 << n, 1 << n))
    H = ip_sign_matrix(n)
    rho = float(np.mean(H * V))
    assert np.abs(exact_shift_average(V) - rho * H).max() <= 1e-12


def test_synthetic_approximator_n7():                        # E9 (ii)
    V = synthetic_approximator(7, seed=0)
    H = ip_sign_matrix(7)
    assert 0.7 < float(np.mean(H * V)) < 0.8
    red = self_reduce(V, k=256, seed=1)
    pm = red.prefix_margins
    assert pm[0] < 0 and pm[7] < 0                           # k = 1, 8 fail somewhere
    assert pm[63] > 0 and pm[255] > 0 and red.sign_agrees_everywhere
    assert red.least_k <= 64 and red.least.method == "prefix scan"
    assert red.least_k == int(np.flatnonzero(pm > 0)[0]) + 1
    assert red.n_sign_errors == 0 and float(np.min(red.margins)) == red.min_margin


def test_hoeffding_k_matches_formula():
    for M, rho, n, delta in [(1.0, 1.0, 1, 0.5), (2.3, 0.2, 6, 0.1), (10.0, 0.05, 9, 0.5)]:
        assert hoeffding_k(M, rho, n, delta=delta) == naive.hoeffding_k(M, rho, n, delta)


def test_bernstein_k_matches_formula():
    for var, M, rho, n, delta, target in [(0.1, 1.0, 0.5, 5, 0.5, 0.75), (0.9, 3.0, 0.7, 12, 0.01, 0.0),
                                          (0.0, 1.0, 1.0, 1, 0.5, 0.0)]:
        assert (bernstein_k(var, M, rho, n, delta=delta, target=target)
                == naive.bernstein_k(var, M, rho, n, delta, target))


@pytest.mark.parametrize("n", [4, 5])
def test_bernstein_k_delivers_its_margin(n):
    # the guarantee is probabilistic (δ = 0.01 per seed); the bound is loose enough that every
    # one of these seeds must reach min H·M_k >= 3ρ/4 at Bernstein's k
    V = synthetic_approximator(n, seed=n)
    for seed in range(8):
        red = self_reduce(V, seed=seed, delta=0.01)
        assert red.k == red.bernstein_k < red.hoeffding_k
        assert red.min_margin >= 0.75 * red.rho


def test_default_k_is_bernstein_with_M_emp_and_variance():
    H = ip_sign_matrix(3).astype(float)
    V = 0.4 * H + 0.1 + 0.05 * np.cos(np.arange(64.0)).reshape(8, 8)
    U = H * V
    rho, var = float(np.mean(U)), float(np.var(U))
    M = float(np.abs(V).max())
    red = self_reduce(V, seed=0)
    assert red.k == bernstein_k(var, M, rho, 3) and red.k_rule == "bernstein"
    assert math.isclose(red.variance, var, rel_tol=1e-12)
    assert self_reduce(V, seed=0, k_rule="hoeffding").k == hoeffding_k(M, rho, 3)


def test_default_k_cap():
    V = 0.05 * ip_sign_matrix(2) + 0.01
    assert self_reduce(V, seed=0, k_max=10).k == 10
    assert self_reduce(V, seed=0, k_rule="hoeffding", k_max=50).k == 50
    assert self_reduce(V, seed=0, k=60, k_max=50).k == 60        # explicit k wins


def test_self_reduce_bad_input():
    with pytest.raises(ReductionError, match="k must be >= 1"):
        self_reduce(np.eye(4), k=0)
    with pytest.raises(ReductionError, match="k = 0"):
        self_reduce(np.eye(4), shifts=np.zeros((0, 2), dtype=np.int64))
    with pytest.raises(DimensionError, match="square"):
        self_reduce(np.ones((4, 3)), k=1)
    with pytest.raises(DimensionError, match=r"\[0, 2\^2\)"):
        self_reduce(np.eye(4), shifts=[[4, 0]])
    bad = np.eye(4)
    bad[0, 0] = np.nan
    with pytest.raises(ReductionError, match="NaN"):
        self_reduce(bad, k=1)
    with pytest.raises(ReductionError, match="ρ"):
        self_reduce(-ip_sign_matrix(2))          # default k needs ρ > 0
    with pytest.raises(TypeError):
        self_reduce(np.eye(4), k=2.5)


def test_value_matrix_orientation():
    vals = np.arange(16.0)                        # k = a + 4 b
    V = value_matrix(vals, 2)
    assert V[1, 2] == 1 + 4 * 2 and V[2, 1] == 2 + 4 * 1


# ---------------------------------------------------------------- staircase (§4.1, E11)
def _ball(n_points, dim, seed=0):
    return uniform_ball(n_points, dim, seed=seed)


@pytest.mark.parametrize("act", ACTS)
@pytest.mark.parametrize("mode", [("ball", "uniform"), ("ball", "optimal"), ("global", "uniform")])
def test_staircase_error_bound_random_nets(act, mode):
    net = _net(8, 5, act, seed=ACTS.index(act))
    st = staircase(net, margin=0.1, range_mode=mode[0], allocation=mode[1])
    sphere = _ball(500, 8, seed=2)
    sphere /= np.linalg.norm(sphere, axis=1, keepdims=True)     # the extreme pre-activations
    X = np.concatenate([_ball(10_000, 8, seed=1), sphere])
    err = np.abs(net(X) - st.value(X)).max()
    assert err <= st.error_bound
    assert st.error_bound <= 0.1 + 1e-6
    if get_activation(act).lipschitz(1.0) == 0:          # step functions: exact
        assert err <= 1e-12


@pytest.mark.parametrize("act", ["relu", "sigmoid", "tanh", "heaviside"])
def test_staircase_on_support_points(act, inst3):
    net = _net(inst3.dim, 6, act, seed=3)
    st = staircase(net, margin=0.05)
    X = inst3.support().points
    assert np.abs(net(X) - st.value(X)).max() <= st.error_bound
    # same signs wherever the network is farther than the bound from 1/2
    far = np.abs(net(X) - 0.5) > st.error_bound
    assert np.array_equal(net.classify(X)[far], st.classify(X)[far])


@pytest.mark.parametrize("act", ["relu", "sigmoid", "tanh", "softplus"])
def test_staircase_gate_count_formula(act):                  # E11
    # the count w⌈2RLwB/γ'⌉ is the least number of equal steps on [-R, R] whose spacing Δ keeps
    # every neuron within δ = γ'/(wB) (L·Δ <= δ): check that property of the built staircase,
    # and that one step fewer per neuron would violate it, instead of re-evaluating the formula
    w, margin = 4, 0.2
    net = _net(6, w, act, seed=1)
    st = staircase(net, margin=margin, range_mode="global", allocation="uniform")
    R, B = st.radius_global, net.weight_bound
    delta = margin / (w * B)
    per = st.gates_per_neuron
    for i in range(w):
        th = np.sort(st.theta[st.neuron == i])
        steps = np.diff(np.concatenate([[-R], th]))
        assert np.allclose(steps, 2 * R / per[i], rtol=1e-12) and math.isclose(th[-1], R)
        L = st.lipschitz[i]
        assert L * 2 * R / per[i] <= delta * (1 + 1e-12) < L * 2 * R / (per[i] - 1)
    assert st.n_gates == staircase_gate_count(w, R, st.lipschitz.max(), B, margin)
    X = _ball(5000, 6, seed=3)
    assert np.abs(net(X) - st.value(X)).max() <= margin


def test_staircase_heaviside_exact_one_gate_per_neuron():
    net = SigmaNetwork([([[1.0, 0.0], [0.0, 1.0]], [0.0, 0.5]), ([[2.0, -1.0]], [0.25])],
                       activation="heaviside")
    st = staircase(net, delta=0.01)
    assert st.n_gates == 2 and st.error_bound < 1e-8
    X = _ball(5000, 2, seed=0)
    assert np.array_equal(st.value(X), net(X))


def test_staircase_jump_at_range_start():
    # range of z = x_0 + 1 over the ball is [0, 2]: the jump of H sits exactly at its start
    net = SigmaNetwork([([[1.0, 0.0]], [1.0]), ([[1.0]], [0.0])], activation="heaviside")
    st = staircase(net, margin=0.1)
    X = np.array([[-1.0, 0.0], [0.0, 1.0], [0.5, 0.0]])
    assert st.value(X).tolist() == net(X).tolist() == [1.0, 1.0, 1.0]


def test_staircase_matches_naive_gate_sum():
    net = _net(3, 2, "tanh", seed=5)
    st = staircase(net, margin=0.3)
    W, b = net.layers[0].weights, net.layers[0].bias
    for x in _ball(50, 3, seed=7):
        z = W @ x + b
        total = st.base + sum(tw * (d * (z[i] - th) >= 0) for i, d, th, tw in
                              zip(st.neuron.tolist(), st.direction.tolist(), st.theta.tolist(),
                                  st.top_weight.tolist()))
        assert math.isclose(st.value(x[None, :])[0], total, abs_tol=1e-12)


def test_staircase_non_right_continuous_jump():
    from networks.activations import Activation

    # σ(t) = [t > 0]: left-closed gate [t <= 0] needed (value at the jump = left limit)
    act = Activation("open_step", lambda t: (t > 0).astype(float), lambda t: 0 * t,
                     lipschitz_function=lambda R: 0.0, sup_abs_function=lambda R: 1.0,
                     total_variation_function=lambda R: 1.0, jumps=(0.0,), value_range=(0.0, 1.0))
    from networks.reduction._common import Depth2Parts

    parts = Depth2Parts(W=np.array([[1.0]]), b=np.array([0.0]), u=np.array([1.0]), u0=0.0,
                        activation=act)
    st = staircase(parts, margin=0.1)
    x = np.array([[-0.5], [0.0], [0.5]])
    assert st.value(x).tolist() == [0.0, 0.0, 1.0]
    assert (st.direction < 0).any()


def test_staircase_bad_input():
    net = _net(4, 3, "relu", seed=0)
    with pytest.raises(ReductionError, match="exactly one"):
        staircase(net, margin=0.1, delta=0.1)
    with pytest.raises(ReductionError, match="exactly one"):
        staircase(net)
    with pytest.raises(InvalidArgumentError, match="margin"):
        staircase(net, margin=-1.0)
    with pytest.raises(ReductionError, match="range_mode"):
        staircase(net, margin=0.1, range_mode="box")
    with pytest.raises(ReductionError, match="max_gates"):
        staircase(net, margin=1e-6, max_gates=1000)
    with pytest.raises(ReductionError, match="depth 2"):
        staircase(SigmaNetwork.random([4, 3, 3, 1], seed=0), margin=0.1)
    with pytest.raises(ReductionError, match="weight_bound"):
        staircase(net, margin=0.1, weight_bound=1e-3)
    with pytest.raises(TypeError):
        staircase("not a network", margin=0.1)


# ---------------------------------------------------------------- quantisation + circuit (§4.2)
def test_quantise_against_naive(inst3):
    net = _net(inst3.dim, 5, "relu", seed=11)
    eta = 0.01
    qn = quantise(net, inst3, eta=eta, rho=0.1)
    m = inst3.m
    C = qn.code_bits
    assert np.array_equal(qn.q, np.round(net.layers[0].weights / eta).astype(np.int64))
    assert qn.K_A.tolist() == naive.distinct_counts(qn.q[:, :m].tolist(), C.tolist())
    assert qn.K_B.tolist() == naive.distinct_counts(qn.q[:, m:].tolist(), C.tolist())
    X = inst3.support().points
    assert np.allclose(qn.values, qn.network_quantised()(X), rtol=0, atol=1e-9)
    assert np.allclose(qn.values_original, net(X), rtol=0, atol=1e-12)
    assert qn.max_change <= qn.change_bound
    # code bits reproduce the embedding: x_{a,b} = (2c - 1)/sqrt(2m)
    a = np.arange(64) & 7
    b = np.arange(64) >> 3
    c = np.concatenate([C[a], C[b]], axis=1)
    assert np.allclose((2.0 * c - 1) / math.sqrt(2 * m), X, atol=1e-15)
    assert np.abs(qn.q).max() <= qn.W_int and qn.K <= qn.K_bound


@pytest.mark.parametrize("act", ["relu", "sigmoid", "tanh", "heaviside", "sign"])
def test_quantisation_bound_random_nets(act, inst3):
    for seed in range(3):
        net = _net(inst3.dim, 6, act, seed=seed)
        qn = quantise(net, inst3, rho=0.2)
        assert qn.max_change <= qn.change_bound
        if get_activation(act).jumps:
            assert qn.change_bound < 1e-8 and qn.max_change < 1e-12    # κ rule keeps every value
            assert qn.kappa > qn.eta * math.sqrt(2 * inst3.m)
        V, V0 = qn.value_matrix(), qn.value_matrix(original=True)
        assert np.abs(V - V0).max() <= 2 * qn.change_bound
        assert numerical_rank(V) <= qn.rank_bound                     # E8


@pytest.mark.parametrize("act", ["relu", "sigmoid", "tanh", "heaviside"])
def test_threshold_circuit_exhaustive(act, inst3):
    net = _net(inst3.dim, 4, act, seed=2)
    qn = quantise(net, inst3, rho=0.5)
    cr = threshold_circuit(qn, margin=0.2)
    c = cr.circuit
    assert c.depth == 2 and c.n_inputs == 2 * inst3.m and c.size == cr.gate_neuron.size
    # circuit kernels vs a naive exact evaluation of every gate, on all 4^n support points
    bw, bt = c.layers[0].weights.tolist(), c.layers[0].thresholds.tolist()
    tw, tt = c.layers[1].weights[0].tolist(), int(c.layers[1].thresholds[0])
    C = qn.code_bits
    for k in range(64):
        bits = C[k & 7].tolist() + C[k >> 3].tolist()
        assert int(cr.circuit_bits[k]) == int(naive.gate_layer_value(bw, bt, tw, bits) >= tt)
    assert np.abs(cr.values - qn.values).max() <= cr.stair_bound
    assert np.abs(cr.values - qn.values_original).max() <= cr.total_bound
    assert cr.n_disagree_real == 0
    decided = np.abs(cr.values - 0.5) > cr.top_rounding_bound
    assert np.array_equal(cr.circuit_bits[decided], (cr.values >= 0.5)[decided])


def test_threshold_circuit_integer_top_rounding(inst3):
    net = _net(inst3.dim, 3, "sigmoid", seed=4)
    qn = quantise(net, inst3, rho=0.5)
    cr = threshold_circuit(qn, margin=0.3, top_error=1e-3)
    c = cr.circuit
    bw, bt = c.layers[0].weights, c.layers[0].thresholds
    tw = c.layers[1].weights[0]
    C = qn.code_bits
    base_shift = None
    for k in range(64):
        cbits = np.concatenate([C[k & 7], C[k >> 3]]).astype(np.int64)
        g = (bw @ cbits >= bt).astype(np.int64)
        approx = float(tw @ g) * cr.epsilon
        # N_C - base = sum v_g g  and |eps * sum V_g g - sum v_g g| <= chains * eps / 2
        if base_shift is None:
            base_shift = cr.values[k] - approx
        assert abs((cr.values[k] - approx) - base_shift) <= cr.n_chains * cr.epsilon + 1e-12


def test_reduce_to_circuit_is_quantise_then_circuit(inst3):
    net = _net(inst3.dim, 3, "tanh", seed=8)
    a = reduce_to_circuit(net, inst3, rho=0.4, margin=0.2)
    b = threshold_circuit(quantise(net, inst3, rho=0.4), margin=0.2)
    assert a.circuit.equals(b.circuit) and np.array_equal(a.values, b.values)


def test_quantise_bad_input(inst3):
    net = _net(inst3.dim, 3, "relu", seed=0)
    with pytest.raises(DimensionError, match="input dimension"):
        quantise(_net(5, 3, "relu", seed=0), inst3, eta=0.1)
    with pytest.raises(ReductionError, match="depth 2"):
        quantise(SigmaNetwork.random([inst3.dim, 3, 3, 1], seed=0), inst3, eta=0.1)
    with pytest.raises(ReductionError, match="weight_bound"):
        quantise(net, inst3, eta=0.1, weight_bound=1e-3)
    with pytest.raises(InvalidArgumentError, match="eta"):
        quantise(net, inst3, eta=0.0)
    with pytest.raises(ReductionError, match="trivial predictor"):
        quantise(SigmaNetwork([(np.zeros((3, inst3.dim)), np.zeros(3)),
                               (np.zeros((1, 3)), [0.5])]), inst3)
    with pytest.raises(TypeError, match="HardInstance"):
        quantise(net, object(), eta=0.1)
    # a support pre-activation exactly on the Heaviside jump: κ = 0
    step = SigmaNetwork([(np.zeros((1, inst3.dim)), [0.0]), ([[1.0]], [0.0])],
                        activation="heaviside")
    with pytest.raises(ReductionError, match="§4.7"):
        quantise(step, inst3, eta=0.1)


# ---------------------------------------------------------------- shift identity (§4.3)
@pytest.mark.parametrize("act", ["relu", "tanh"])
def test_shifted_network_identity(act, inst3):
    net = _net(inst3.dim, 5, act, seed=6)
    X = inst3.support().points
    V = value_matrix(net(X), 3)
    for r, s in [(0, 0), (1, 0), (0, 5), (3, 6), (7, 7)]:
        shifted = shifted_network(net, inst3, r, s)
        assert shifted.depth == 2 and shifted.weight_bound == net.weight_bound
        Vs = value_matrix(shifted(X), 3)
        a = np.arange(8)
        assert np.allclose(Vs, V[np.ix_(a ^ r, a ^ s)], rtol=0, atol=1e-12)


# ---------------------------------------------------------------- certificates (§4.5, §4.7)
def _fitted_net(inst, width=16, seed=0):
    """A depth-2 ReLU network fitted by least squares on random features (fast, deterministic)."""
    rng = np.random.default_rng(seed)
    X = inst.support().points
    y = inst.support().labels.astype(float)
    W = rng.normal(size=(width, inst.dim)) * 1.5
    b = rng.normal(size=width) * 0.3
    F = np.maximum(X @ W.T + b, 0)
    A = np.concatenate([F, np.ones((F.shape[0], 1))], axis=1)
    coef, *_ = np.linalg.lstsq(A, y, rcond=None)
    return SigmaNetwork([(W, b), (coef[None, :-1], coef[-1:])], activation="relu")


def test_reduce_network_chain_holds(inst3):
    net = _fitted_net(inst3, width=24)
    rep = reduce_network(net, inst3, seed=0)
    assert rep.mse < 0.25 and rep.ok, rep.certificate.table()
    red = rep.reduction
    assert red.sign_agrees_everywhere
    assert red.k == bernstein_k(red.variance, red.M_emp, red.rho, 3)
    assert rep.reduction_circuit is not None and rep.reduction_circuit.sign_agrees_everywhere
    b = rep.certificate.bounds
    assert b["forster"] == 3 and b["forster"] <= b["rank_Mk"] <= b["rank_bound_Mk"]
    assert b["rank_V"] <= b["rank_bound_V"] <= 1 + 24 * rep.quantised.K
    names = [i.name for i in rep.certificate.inequalities]
    for name in ("accuracy", "correlation", "quantisation", "staircase", "integer circuit",
                 "sign(M_k) = IP", "rank M_k", "Forster", "§4.7 gate lemma"):
        assert name in names
    d = rep.to_dict()
    json.dumps(d)
    assert d["threshold_circuit"]["depth"] == 2
    assert "summary" not in d and rep.summary().count("\n") > 10


def test_certificate_reports_failures_with_offending_input(inst3):
    net = _fitted_net(inst3, width=24)
    qn = quantise(net, inst3)
    red = self_reduce(qn.value_matrix(), k=1, seed=3)           # one copy: not enough
    assert not red.sign_agrees_everywhere
    cert = certify(n=3, width=24, mse=0.2, quantised=qn, reduction=red)
    assert not cert.ok
    failed = {f.name: f for f in cert.failures}
    assert "sign(M_k) = IP" in failed and "margin > 0" in failed
    a, b = red.worst_pair
    assert failed["margin > 0"].offending == {"a": a, "b": b, "margin": red.min_margin}
    assert "FAILS" in cert.table()
    json.dumps(cert.to_dict())


def test_correlation_route_bound_holds_for_trained_like_nets(inst3):
    net = _fitted_net(inst3, width=12, seed=1)
    rep = reduce_network(net, inst3, circuit=False)
    gl = {i.name: i for i in rep.certificate.inequalities}["§4.7 gate lemma"]
    assert gl.holds and gl.lhs <= gl.rhs
    # formula twin
    assert math.isclose(correlation_width_bound(20, 0.1, 1.0, 1.0, 2.0),
                        (0.1 - 2.0 ** -21 * 3) / (2.0 * 21 * 2.0 ** -10 + 2.0 ** -20))


# ---------------------------------------------------------------- slow: larger cases
@pytest.mark.slow
@pytest.mark.parametrize("act", ["relu", "sigmoid", "tanh", "heaviside"])
def test_staircase_million_ball_points(act):                       # E11 at full size
    inst = HardInstance(4, seed=0)
    net = _net(inst.dim, 16, act, seed=9)
    st = staircase(net, margin=0.05, allocation="optimal")
    for seed in range(10):
        X = uniform_ball(100_000, inst.dim, seed=seed)
        assert np.abs(net(X) - st.value(X)).max() <= st.error_bound
    X = inst.support().points
    assert np.abs(net(X) - st.value(X)).max() <= st.error_bound


@pytest.mark.parametrize("act", ["relu", "sigmoid", "tanh", "heaviside"])
def test_correlation_gate_lemma_random_nets(act, inst3):            # E8 (§4.7 inequality)
    from networks.reduction.certificates import correlation_bound

    for seed in range(3):
        net = _net(inst3.dim, 8, act, seed=seed)
        X = inst3.support().points
        H = 1.0 - 2.0 * inst3.support().labels
        lhs = abs(float(np.mean(H * net(X))))
        R = net.weight_bound * (math.sqrt(inst3.dim) + 1)
        sigma = get_activation(act)
        rhs = correlation_bound(3, 8, net.weight_bound, sigma.sup_abs(R),
                                sigma.total_variation(R), 4)
        assert lhs <= rhs
