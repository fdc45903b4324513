"""Depth-3 training and value tables in product form (first layer α(a) + β(b) + b1, the second
layer over tiles of the 2^n × 2^n × w1 activations): against plain backprop on the explicit
support, finite differences, and the plain network on every pair, with negative controls."""

from __future__ import annotations

import numpy as np
import pytest

from embeddings import HardInstance
from networks import SigmaNetwork, loss_and_gradient, product_loss_and_gradient, train, value_table
from networks.train_product import train_product


def _net3(dim, w1, w2, act, seed):
    return SigmaNetwork.random([dim, w1, w2, 1], act, seed=seed, bias_scale=0.3)


@pytest.mark.parametrize("n", [2, 3])
@pytest.mark.parametrize("act", ["relu", "sigmoid", "tanh", "softplus"])
def test_depth3_value_table_matches_network_on_all_pairs(n, act):
    inst = HardInstance(n, seed=0)
    net = _net3(inst.dim, 5, 4, act, seed=n)
    V = value_table(net, inst)
    ref = net(inst.support().points)                      # cube order: index a + 2^n·b
    assert V.shape == (1 << n, 1 << n)
    assert np.abs(V.T.reshape(-1) - ref).max() <= 1e-12
    # orientation: V[a, b] is the pair (a, b) = row a (Alice), not its transpose
    assert not np.allclose(V, V.T)


def test_depth3_value_table_tiles():
    """Several tiles of rows (one row per tile) give the same table as one tile."""
    from networks.reduction.product import _depth3_tables, depth3_parts, depth3_pass, product_support

    inst = HardInstance(4, seed=1)
    net = _net3(inst.dim, 7, 3, "relu", seed=4)
    sup = product_support(inst)
    p = depth3_parts(net, dim=sup.dim)
    A, Bc = _depth3_tables(p, sup)
    V1 = np.empty((16, 16))
    depth3_pass(A, Bc, p.W2, p.b2, p.v, p.v0, p.activation, None, grad=False, V=V1, rows=1)
    assert np.abs(V1 - value_table(net, inst)).max() <= 1e-13


@pytest.mark.parametrize("act", ["relu", "sigmoid", "hardtanh"])
def test_depth3_gradient_matches_backprop(act):
    inst = HardInstance(3, seed=0)
    X, _, y = inst.support()
    net = _net3(inst.dim, 6, 5, act, seed=3)
    l0, g0 = loss_and_gradient(net, X, y.astype(float))
    l1, g1 = product_loss_and_gradient(net, inst)
    assert abs(l0 - l1) <= 1e-12
    assert len(g1) == 3
    for (w0, b0), (w1, b1) in zip(g0, g1):
        assert w0.shape == w1.shape and b0.shape == b1.shape
        assert np.abs(w0 - w1).max() <= 1e-12 and np.abs(b0 - b1).max() <= 1e-12
    # negative control: another network's gradient differs
    other = _net3(inst.dim, 6, 5, act, seed=4)
    g2 = product_loss_and_gradient(other, inst)[1]
    assert np.abs(g2[0][0] - g0[0][0]).max() > 1e-6


def test_depth3_gradient_general_targets_finite_differences():
    inst = HardInstance(2, seed=0)
    net = _net3(inst.dim, 4, 3, "tanh", seed=1)
    Y = np.random.default_rng(0).normal(size=(4, 4))
    loss, grads = product_loss_and_gradient(net, inst, targets=Y)
    layers = [(np.array(l.weights), np.array(l.bias)) for l in net.layers]
    h = 1e-6
    rng = np.random.default_rng(1)
    for li in range(3):
        for which in range(2):
            arr = layers[li][which]
            for idx in [tuple(rng.integers(0, s) for s in arr.shape) for _ in range(3)]:
                vals = []
                for sgn in (1, -1):
                    mod = [(w.copy(), b.copy()) for w, b in layers]
                    mod[li][which][idx] += sgn * h
                    vals.append(product_loss_and_gradient(SigmaNetwork(mod, activation="tanh"),
                                                          inst, targets=Y)[0])
                fd = (vals[0] - vals[1]) / (2 * h)
                assert abs(fd - grads[li][which][idx]) <= 1e-7 * max(1.0, abs(fd))


def test_depth3_train_product_equals_train_full_batch():
    inst = HardInstance(3, seed=0)
    X, _, y = inst.support()
    net = _net3(inst.dim, 8, 6, "relu", seed=2)
    r0 = train(net, X, y.astype(float), epochs=25, lr=0.01, patience=None)
    r1 = train_product(net, inst, epochs=25, lr=0.01, patience=None, precision="float64")
    assert r1.network.dims == net.dims
    for a, b in zip(r0.network.layers, r1.network.layers):
        assert np.abs(a.weights - b.weights).max() <= 1e-10
        assert np.abs(a.bias - b.bias).max() <= 1e-10
    assert abs(r0.history["final_loss"] - r1.history["final_loss"]) <= 1e-12
    h = r1.history
    assert h["settings"]["dims"] == list(net.dims) and h["settings"]["form"] == "product"
    assert h["epochs"] == 25 and h["reason"] == "epochs"
    assert h["final_loss"] < h["loss"][0]                   # it learns


def test_depth3_train_product_minibatch_mask_and_target():
    inst = HardInstance(3, seed=0)
    net = _net3(inst.dim, 6, 4, "relu", seed=5)
    mask = np.zeros((6, inst.dim), dtype=bool)
    mask[:, [0, 2, inst.m]] = True
    res = train_product(net, inst, epochs=20, lr=0.02, batch_size=16, mask=mask, patience=None)
    W = res.network.layers[0].weights
    assert np.all(W[~mask] == 0) and np.any(W[mask] != 0)
    assert res.history["epochs"] == 20
    Y = np.zeros((8, 8))
    res2 = train_product(net, inst, targets=Y, epochs=500, lr=0.02, target_loss=1e-3,
                         patience=None)
    assert res2.history["reason"] == "target_loss" and res2.history["reached_target"]
    with pytest.raises(Exception, match="mask"):
        train_product(net, inst, epochs=1, mask=mask[:, :3])


def test_depth3_batch_gradient_matches_backprop_on_the_batch():
    from networks.reduction.product import ip_signs, product_support
    from networks.train_product import _gradient3, _params3
    from networks.reduction.product import depth3_parts

    inst = HardInstance(3, seed=0)
    net = _net3(inst.dim, 5, 4, "sigmoid", seed=6)
    sup = product_support(inst)
    k = np.array([3, 17, 17, 40, 63], dtype=np.int64)              # pair index a·2^n + b
    ia, ib = k >> 3, k & 7
    Y = (ip_signs(3) < 0).astype(float)
    loss, g = _gradient3(_params3(depth3_parts(net)), sup, net.activation, Y,
                         batch=(ia, ib, Y[ia, ib]))
    l0, g0 = loss_and_gradient(net, inst.points_of(ia + 8 * ib), Y[ia, ib])
    assert abs(loss - l0) <= 1e-12
    flat0 = [g0[0][0], g0[0][1], g0[1][0], g0[1][1], g0[2][0][0], g0[2][1]]
    for p, q in zip(flat0, g):
        assert np.abs(p - q).max() <= 1e-12
