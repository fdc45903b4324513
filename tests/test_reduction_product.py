"""Tests of the product-form engine (THEORY §4.8): every kernel against a naive twin on the whole
support for small n, negative controls for every claimed property, the sparse-neuron regime."""

from __future__ import annotations

import math

import numpy as np
import pytest

import naive_reduction as naive
from circuits.analysis import numerical_rank
from circuits.utils.errors import DimensionError, ReductionError
from circuits.threshold import ThresholdCircuit, ThresholdLayer
from embeddings import HardInstance
from networks import SigmaNetwork, value_table
from networks.activations import ACTIVATIONS, Activation, register_activation, unregister_activation
from networks.reduction import (ShiftConvolution, certify, circuit_table, ip_signs,
                                least_working_k, product_support, quantise, random_shifts,
                                self_reduce, support_metrics, synthetic_approximator,
                                twisted_sums)

ACTS = sorted(ACTIVATIONS)


@pytest.fixture(scope="module")
def inst3():
    return HardInstance(3, seed=0)


def _net(dim, width, act, seed, bias=0.3):
    return SigmaNetwork.random([dim, width, 1], act, seed=seed, bias_scale=bias)


# ---------------------------------------------------------------- value_table (entry point)
@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("act", ACTS)
def test_value_table_matches_naive_loops(n, act):
    inst = HardInstance(n, seed=1)
    net = _net(inst.dim, 5, act, seed=n)
    V = value_table(net, inst)
    sup = product_support(inst)
    W, b = net.layers[0].weights, net.layers[0].bias
    u, u0 = net.layers[1].weights[0], float(net.layers[1].bias[0])
    sigma = lambda t: float(net.activation(np.array([t]))[0])      # noqa: E731
    ref = naive.value_table(W.tolist(), b.tolist(), u.tolist(), u0, sigma, sup.XA.tolist(),
                            sup.XB.tolist())
    assert V.dtype == np.float64 and V.shape == (1 << n, 1 << n)
    assert np.abs(V - np.array(ref)).max() <= 1e-12
    # V.T.reshape(-1) is the support's cube order a + 2^n b
    assert np.abs(V.T.reshape(-1) - net(inst.support().points)).max() <= 1e-12


def test_value_table_orientation_asymmetric(inst3):
    # a net reading only Alice's coordinates: V[a, b] depends on a only
    W = np.zeros((1, inst3.dim))
    W[0, :inst3.m] = np.arange(1, inst3.m + 1)
    net = SigmaNetwork([(W, [0.0]), ([[1.0]], [0.0])], activation="relu")
    V = value_table(net, inst3)
    assert np.ptp(V, axis=1).max() == 0 and np.ptp(V, axis=0).max() > 0
    X = inst3.support().points
    assert np.array_equal(V[5, 3], net(X[[5 + 8 * 3]])[0])


@pytest.mark.parametrize("n", [2, 3, 4])
def test_support_metrics_match_direct(n):
    inst = HardInstance(n, seed=0)
    for act in ("relu", "sigmoid", "heaviside"):
        net = _net(inst.dim, 6, act, seed=2)
        met, V = support_metrics(net, inst, store=True)
        X, _, y = inst.support()
        N = net(X)
        H = 1.0 - 2.0 * y
        assert abs(met.mse - math.fsum(((N - y) ** 2).tolist()) / len(y)) <= 1e-12
        assert abs(met.rho - math.fsum((H * (1 - 2 * N)).tolist()) / len(y)) <= 1e-12
        assert met.accuracy == float(np.mean((N >= 0.5) == (y == 1)))
        assert abs(met.second_moment - float(np.mean((1 - 2 * N) ** 2))) <= 1e-12
        assert abs(met.variance - float(np.var(H * (1 - 2 * N)))) <= 1e-12
        met2, none = support_metrics(net, inst)                  # streamed: same numbers
        assert none is None and met2.rho == met.rho and met2.mse == met.mse


def test_value_table_custom_activation_numpy_path(inst3):
    act = Activation("cube_test", lambda t: t ** 3, lambda t: 3 * t ** 2,
                     lipschitz_function=lambda R: 3 * R * R, sup_abs_function=lambda R: R ** 3,
                     total_variation_function=lambda R: 2 * R ** 3)
    register_activation(act)
    try:
        net = _net(inst3.dim, 4, "cube_test", seed=0)
        V = value_table(net, inst3)
        assert np.abs(V.T.reshape(-1) - net(inst3.support().points)).max() <= 1e-12
    finally:
        unregister_activation("cube_test")


def test_value_table_bad_input(inst3):
    with pytest.raises(TypeError, match="HardInstance"):
        value_table(_net(inst3.dim, 2, "relu", 0), "instance")
    with pytest.raises(DimensionError, match="input dimension"):
        value_table(_net(5, 2, "relu", 0), inst3)
    deep = SigmaNetwork.random([inst3.dim, 3, 3, 3, 1], "relu", seed=0)
    with pytest.raises(ReductionError, match="depth 2"):
        value_table(deep, inst3)
    with pytest.raises(ReductionError, match="GiB"):
        from networks.reduction.product import check_table_memory
        check_table_memory(30)


# ---------------------------------------------------------------- neuron-wise circuit evaluation
def _tie_circuit(m, n_rows, gates_per_row, seed):
    """Random integer depth-2 circuit over 2m bits whose thresholds hit attained values (ties),
    with rows repeated with both signs and one all-zero row."""
    rng = np.random.default_rng(seed)
    rows = rng.integers(-2, 3, size=(n_rows, 2 * m))
    rows[0] = 0
    W, T = [], []
    for r in rows:
        for _ in range(gates_per_row):
            s = rng.choice([-1, 1])
            c = rng.integers(0, 2, size=2 * m)
            W.append(s * r)
            T.append(int((s * r) @ c) + int(rng.integers(-1, 2)))      # often exactly attained
    v = rng.integers(-5, 6, size=len(W))
    return ThresholdCircuit([ThresholdLayer(np.array(W), np.array(T)),
                             ThresholdLayer(v[None, :], [int(rng.integers(-3, 4))])])


@pytest.mark.parametrize("n", [2, 3])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_circuit_table_matches_naive_with_ties(n, seed):
    inst = HardInstance(n, seed=0)
    sup = product_support(inst)
    circ = _tie_circuit(sup.m, 5, 7, seed)
    S = circuit_table(circ, inst)
    bw, bt = circ.layers[0].weights.tolist(), circ.layers[0].thresholds.tolist()
    tw, tt = circ.layers[1].weights[0].tolist(), int(circ.layers[1].thresholds[0])
    C = sup.code_bits.tolist()
    ties = 0
    for a in range(1 << n):
        for b in range(1 << n):
            c = C[a] + C[b]
            assert int(S[a, b]) == naive.gate_layer_value(bw, bt, tw, c)
            ties += sum(sum(w * x for w, x in zip(wg, c)) == tg for wg, tg in zip(bw, bt))
    assert ties > 0                                      # the case the search must get right
    from circuits import simulate
    words = (sup.code_bits.astype(np.int64) << np.arange(sup.m)).sum(axis=1)
    k = np.arange(4 ** n)
    generic = simulate.evaluate_indices(circ, words[k % (1 << n)] | (words[k >> n] << sup.m))
    assert np.array_equal(generic, (S >= tt).T.reshape(-1))


def test_threshold_circuit_cross_checks_generic_kernel(inst3):
    net = _net(inst3.dim, 4, "relu", seed=2)
    cr = quantise(net, inst3, rho=0.5)
    from networks.reduction import threshold_circuit
    res = threshold_circuit(cr, margin=0.2)
    assert res.n_checked_generic == 64                   # whole support at n = 3
    res = threshold_circuit(cr, margin=0.2, check_sample=10)
    assert res.n_checked_generic == 10


# ---------------------------------------------------------------- FWHT certificate (§4.8)
@pytest.mark.parametrize("n", [1, 2, 3])
def test_fwht_margins_match_naive(n):
    rng = np.random.default_rng(n)
    V = rng.normal(size=(1 << n, 1 << n))
    V[0, -1] = 4.0
    sh = random_shifts(n, 11, seed=n)
    M = np.array(naive.twisted_M(V.tolist(), sh.tolist()))
    T = ShiftConvolution(ip_signs(n) * V).table(sh)
    assert np.abs(T - ip_signs(n) * M).max() <= 1e-12


def test_fwht_matches_direct_kernel_large_k():
    n = 6
    V = synthetic_approximator(n, seed=0)
    sh = random_shifts(n, 5000, seed=2)
    G, prefix = twisted_sums(V, sh)
    conv = ShiftConvolution(ip_signs(n) * V)
    assert np.abs(conv.table(sh) - G / 5000).max() <= 1e-12
    for k in (1, 37, 4096):
        assert abs(conv.min_margin(sh[:k]) - prefix[k - 1]) <= 1e-12


def test_least_k_bisection_agrees_with_exact_scan():
    n = 5
    V = synthetic_approximator(n, seed=3)
    sh = random_shifts(n, 400, seed=0)
    _, prefix = twisted_sums(V, sh)                       # every prefix, exactly
    exact = least_working_k(V, sh)
    assert exact.method == "prefix scan"
    assert exact.k == int(np.flatnonzero(prefix > 0)[0]) + 1
    scanned = least_working_k(V, sh, direct_budget=4 ** n * 2)
    assert scanned.method == "doubling + prefix scan" and scanned.k == exact.k
    forced = least_working_k(V, sh, direct_budget=4 ** n * 2, exact_budget=0)   # k <= 2 only
    assert forced.method == "doubling + bisection" and forced.k_direct == 2
    k = forced.k
    assert prefix[k - 1] > 0 and prefix[k - 2] <= 0 and k >= exact.k
    for kk, mg in forced.evaluated:
        assert abs(mg - prefix[kk - 1]) <= 1e-12
    none = least_working_k(V, sh[:3], direct_budget=4 ** n)
    assert none.k is None and none.method == "none"


# ---------------------------------------------------------------- negative controls
def _fitted_net(inst, width=24, seed=0, labels=None):
    rng = np.random.default_rng(seed)
    X = inst.support().points
    y = inst.support().labels.astype(float) if labels is None else labels
    W = rng.normal(size=(width, inst.dim)) * 1.5
    b = rng.normal(size=width) * 0.3
    F = np.maximum(X @ W.T + b, 0)
    A = np.concatenate([F, np.ones((F.shape[0], 1))], axis=1)
    coef, *_ = np.linalg.lstsq(A, y, rcond=None)
    return SigmaNetwork([(W, b), (coef[None, :-1], coef[-1:])], activation="relu")


@pytest.fixture(scope="module")
def inst5():
    return HardInstance(5, seed=0)


def test_negative_control_no_twist(inst5):
    net = _fitted_net(inst5, width=256)
    V = 1.0 - 2.0 * value_table(net, inst5)
    red = self_reduce(V, seed=0)
    assert red.sign_agrees_everywhere                        # with the twist: works
    sh = red.shifts[:64]
    plain = np.array(naive.untwisted_M(V.tolist(), sh.tolist()))
    H = ip_signs(5)
    assert (H * plain <= 0).sum() > 0.3 * H.size             # without it: ~half wrong
    assert abs(float(np.mean(H * plain))) < 0.5 * red.rho


def test_negative_control_permuted_network(inst5):
    net = _fitted_net(inst5, width=256)
    V = 1.0 - 2.0 * value_table(net, inst5)
    red = self_reduce(V, seed=0)
    assert red.sign_agrees_everywhere
    perm = np.random.default_rng(0).permutation(32)          # not an XOR shift
    Vp = V[perm][:, perm]
    rp = self_reduce(Vp, k=red.k, seed=0)
    assert not rp.sign_agrees_everywhere and rp.least_k is None
    assert abs(rp.rho) < red.rho / 4


def test_negative_control_k1_fails(inst5):
    net = _fitted_net(inst5, width=256)
    qn = quantise(net, inst5)
    red = self_reduce(qn.value_matrix(), k=1, seed=0)
    assert not red.sign_agrees_everywhere
    cert = certify(n=5, width=256, mse=qn.metrics_original.mse, quantised=qn, reduction=red)
    assert {"margin > 0", "sign(M_k) = IP"} <= {f.name for f in cert.failures}


# ---------------------------------------------------------------- sparse-neuron regime (§4.5)
def _sparse_net(inst, width, reads, seed, act="relu"):
    """Every neuron reads ``reads`` Alice and ``reads`` Bob coordinates (the rest are 0)."""
    rng = np.random.default_rng(seed)
    m = inst.m
    W = np.zeros((width, inst.dim))
    for i in range(width):
        W[i, rng.choice(m, reads, replace=False)] = rng.normal(size=reads)
        W[i, m + rng.choice(m, reads, replace=False)] = rng.normal(size=reads)
    b = rng.normal(size=width) * 0.3
    u = rng.normal(size=width)
    return SigmaNetwork([(W, b), (u[None, :], [0.1])], activation=act)


@pytest.mark.parametrize("act", ["relu", "tanh"])
def test_sparse_rank_bounds_bite_below_dimension(act):
    inst = HardInstance(6, seed=0)
    net = _sparse_net(inst, width=5, reads=2, seed=1, act=act)
    qn = quantise(net, inst, eta=1e-3)
    assert qn.K_A.max() <= 4 and qn.K_B.max() <= 4           # 2 coordinates: <= 2^2 values
    V = qn.value_matrix()
    assert 1 < numerical_rank(V) <= qn.rank_bound <= 1 + 5 * 4 < 64
    for k in (1, 2, 3):
        red = self_reduce(V, k=k, seed=k)
        assert numerical_rank(red.M) <= k * qn.rank_bound < 64
    cert = certify(n=6, width=5, mse=qn.metrics_original.mse, quantised=qn,
                   reduction=self_reduce(V, k=3, seed=3))
    links = {i.name: i for i in cert.inequalities}
    assert links["rank V"].holds and not links["rank V"].by_dimension
    assert links["rank M_k"].holds and not links["rank M_k"].by_dimension


def test_dense_rank_bound_is_flagged_by_dimension(inst5):
    net = _fitted_net(inst5, width=64)
    qn = quantise(net, inst5)
    red = self_reduce(qn.value_matrix(), seed=0)
    cert = certify(n=5, width=64, mse=qn.metrics_original.mse, quantised=qn, reduction=red)
    links = {i.name: i for i in cert.inequalities}
    assert links["rank M_k"].by_dimension and "by dimension only" in cert.table()


# ---------------------------------------------------------------- product-form training (§4.8)
@pytest.mark.parametrize("n", [2, 3])
@pytest.mark.parametrize("act", ACTS)
def test_product_gradient_matches_backprop(n, act):
    from networks import loss_and_gradient, product_loss_and_gradient

    inst = HardInstance(n, seed=0)
    X, _, y = inst.support()
    net = _net(inst.dim, 6, act, seed=n + 7)
    l0, g0 = loss_and_gradient(net, X, y.astype(float))
    l1, g1 = product_loss_and_gradient(net, inst)
    assert abs(l0 - l1) <= 1e-12
    for (w0, b0), (w1, b1) in zip(g0, g1):
        assert np.abs(w0 - w1).max() <= 1e-12 and np.abs(b0 - b1).max() <= 1e-12


@pytest.mark.parametrize("act", ["relu", "sigmoid", "hardtanh"])
@pytest.mark.parametrize("n_blocks", [1, 3, 32])
def test_product_gradient_tiles_and_blocks(act, n_blocks):
    """Several row tiles per block, uneven blocks, a width that is no multiple of a vector:
    the fused kernel against ordinary backprop to 1e-9 relative; the loss is a compensated sum
    (agrees to rounding)."""
    from networks import loss_and_gradient
    from networks.reduction.product import _activation_code
    from networks.train_product import _gradient, _targets, product_support

    inst = HardInstance(5, seed=1)
    X, _, y = inst.support()
    net = _net(inst.dim, 21, act, seed=5)
    l0, g0 = loss_and_gradient(net, X, y.astype(float))
    sup = product_support(inst)
    params = [np.array(net.layers[0].weights), np.array(net.layers[0].bias),
              np.array(net.layers[1].weights[0]), np.array(net.layers[1].bias)]
    l1, g1 = _gradient(params, sup, _activation_code(net.activation), net.activation,
                       _targets(sup, None), n_blocks)
    assert abs(l0 - l1) <= 1e-12 * l0
    ref = [g0[0][0], g0[0][1], g0[1][0][0], g0[1][1]]
    for p, q in zip(ref, g1):
        assert np.abs(p - q).max() <= 1e-9 * np.abs(p).max()
    # negative control: a gradient of another network must not pass the same check
    params[0][0, 0] += 0.5
    g2 = _gradient(params, sup, _activation_code(net.activation), net.activation,
                   _targets(sup, None), n_blocks)[1]
    assert np.abs(ref[0] - g2[0]).max() > 1e-9 * np.abs(ref[0]).max()


def test_product_gradient_general_targets_and_custom_activation(inst3):
    from networks import loss_and_gradient, product_loss_and_gradient

    X = inst3.support().points
    Y = np.random.default_rng(0).normal(size=(8, 8))
    act = Activation("cube_grad_test", lambda t: t ** 3, lambda t: 3 * t ** 2,
                     lipschitz_function=lambda R: 3 * R * R, sup_abs_function=lambda R: R ** 3,
                     total_variation_function=lambda R: 2 * R ** 3)
    register_activation(act)
    try:
        for name in ("tanh", "cube_grad_test"):
            net = _net(inst3.dim, 4, name, seed=1)
            l0, g0 = loss_and_gradient(net, X, Y.T.reshape(-1))
            l1, g1 = product_loss_and_gradient(net, inst3, targets=Y)
            assert abs(l0 - l1) <= 1e-12
            assert all(np.abs(p - q).max() <= 1e-12 for a, b in zip(g0, g1) for p, q in zip(a, b))
    finally:
        unregister_activation("cube_grad_test")


def test_train_product_equals_train_full_batch():
    from networks import train, train_product

    inst = HardInstance(4, seed=0)
    X, _, y = inst.support()
    net = _net(inst.dim, 12, "relu", seed=3)
    r0 = train(net, X, y.astype(float), epochs=40, lr=0.01, patience=None)
    r1 = train_product(net, inst, epochs=40, lr=0.01, patience=None, precision="float64")
    for a, b in zip(r0.network.layers, r1.network.layers):
        assert np.abs(a.weights - b.weights).max() <= 1e-10
    assert abs(r0.history["final_loss"] - r1.history["final_loss"]) <= 1e-12
    assert r1.history["reason"] == "epochs" and r1.history["settings"]["form"] == "product"
    assert r1.history["settings"]["precision"] == "float64"
    r2 = train_product(net, inst, epochs=40, lr=0.01, patience=None)     # default: float32 lanes
    assert r2.history["settings"]["precision"] == "float32"
    for a, b in zip(r0.network.layers, r2.network.layers):
        assert 0 < np.abs(a.weights - b.weights).max() <= 1e-5


def test_train_product_minibatch_and_mask(inst3):
    from networks import loss_and_gradient, train_product
    from networks.train_product import _gradient, product_support

    net = _net(inst3.dim, 6, "relu", seed=2)
    sup = product_support(inst3)
    k = np.array([3, 17, 17, 40, 63], dtype=np.int64)              # pair index a·2^n + b
    ia, ib = k >> 3, k & 7
    Y = (ip_signs(3) < 0).astype(float)
    params = [np.array(net.layers[0].weights), np.array(net.layers[0].bias),
              np.array(net.layers[1].weights[0]), np.array(net.layers[1].bias)]
    loss, g = _gradient(params, sup, 0, net.activation, Y, 0, batch=(ia, ib, Y[ia, ib]))
    X = inst3.points_of(ia + 8 * ib)
    l0, g0 = loss_and_gradient(net, X, Y[ia, ib])
    assert abs(loss - l0) <= 1e-12 and np.abs(g[0] - g0[0][0]).max() <= 1e-12
    assert np.abs(g[2] - g0[1][0][0]).max() <= 1e-12
    mask = np.zeros((6, inst3.dim), dtype=bool)
    mask[:, [0, 1, inst3.m]] = True
    res = train_product(net, inst3, epochs=30, lr=0.02, batch_size=16, mask=mask, patience=None,
                        target_loss=1e-9)
    W = res.network.layers[0].weights
    assert np.all(W[~mask] == 0) and np.any(W[mask] != 0)
    assert res.history["epochs"] == 30 and res.history["reached_target"] is False
    with pytest.raises(Exception, match="mask"):
        train_product(net, inst3, epochs=1, mask=mask[:, :3])


def test_shift_sequence_streams_across_blocks():
    from networks.reduction.fwht import BLOCK, ShiftSequence

    seq = ShiftSequence(2, seed=5, length=BLOCK + 300)
    rows = seq.rows(0, BLOCK + 300)
    assert rows.shape == (BLOCK + 300, 2) and rows.min() >= 0 and rows.max() < 4
    assert np.array_equal(seq.rows(BLOCK - 7, BLOCK + 9), rows[BLOCK - 7:BLOCK + 9])
    for k in (BLOCK + 300, 10, BLOCK + 1, BLOCK):                  # out of order: cache reset
        ref = np.bincount(rows[:k, 0] * 4 + rows[:k, 1], minlength=16)
        assert np.array_equal(seq.histogram(k), ref)
    assert np.array_equal(random_shifts(2, 50, seed=5), rows[:50])


def test_circuit_margin_fitted_to_max_gates(inst3):
    from networks.reduction import threshold_circuit
    from networks.reduction.circuit import gate_estimate

    qn = quantise(_net(inst3.dim, 4, "relu", seed=2), inst3, rho=0.5)
    est = gate_estimate(qn, 0.01)
    assert est > 2000
    with pytest.raises(ReductionError, match="max_gates"):
        threshold_circuit(qn, margin=0.01, max_gates=2000)
    cr = threshold_circuit(qn, margin=0.01, max_gates=2000, fit_max_gates=True)
    assert cr.size <= 2000 and cr.margin > 0.01 and "margin raised" in cr.steps[1]
    assert cr.max_stair_error <= cr.stair_bound and cr.n_disagree_real == 0


@pytest.mark.parametrize("act", ["relu", "tanh", "heaviside", "sign"])
def test_staircase_table_matches_gate_sum(act, inst3):
    from networks.reduction import staircase, staircase_table

    net = _net(inst3.dim, 3, act, seed=4)
    st = staircase(net, margin=0.3)
    T = staircase_table(st, inst3)
    sup = product_support(inst3)
    W, b = net.layers[0].weights, net.layers[0].bias
    m = inst3.m
    for a in range(8):
        for bb in range(8):
            z = sup.XA[a] @ W[:, :m].T + (sup.XB[bb] @ W[:, m:].T + b)   # the kernel's order
            total = st.base + sum(tw * (d * (z[i] - th) >= 0) for i, d, th, tw in
                                  zip(st.neuron.tolist(), st.direction.tolist(),
                                      st.theta.tolist(), st.top_weight.tolist()))
            assert abs(T[a, bb] - total) <= 1e-12
    assert np.abs(T.T.reshape(-1) - net(inst3.support().points)).max() <= st.error_bound
