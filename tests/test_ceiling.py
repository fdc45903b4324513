"""E21 (networks.separation.ceiling, experiments/ceiling.py): the §4.7 ceiling against a direct
computation, ρ never above it on random and trained nets, a negative control, the script end to end."""

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from embeddings import HardInstance
from networks import SigmaNetwork, loss_and_gradient
from networks.separation import (correlation_ceiling, exact_correlation, label_table,
                                 train_depth2)
from networks.train_product import product_loss_and_gradient, train_product


@pytest.fixture(scope="module")
def inst3():
    return HardInstance(3, seed=0)


def _direct_neuron_terms(net, inst):
    """Naive per-neuron |E[H σ(z_i)]| from the support points, and E[H], E[H N]."""
    X, _, labels = inst.support()
    H = 1.0 - 2.0 * labels.astype(float)
    W, b = net.layers[0].weights, net.layers[0].bias
    u, u0 = net.layers[1].weights[0], float(net.layers[1].bias[0])
    S = net.activation(X @ W.T + b)
    return np.abs((H[:, None] * S).mean(axis=0)), float(H.mean()), float((H * net(X)).mean()), \
        u, u0, X, W, b


def test_ceiling_formula_against_direct_computation(inst3):
    n = inst3.n
    net = SigmaNetwork.random([inst3.dim, 5, 1], "sigmoid", seed=3, bias_scale=0.7)
    c = correlation_ceiling(net, n)
    W, b = net.layers[0].weights, net.layers[0].bias
    u, u0 = net.layers[1].weights[0], float(net.layers[1].bias[0])
    B = max(np.abs(W).max(), np.abs(b).max(), np.abs(u).max(), abs(u0))
    R = max(abs(b[i]) + math.sqrt(sum(v * v for v in W[i])) for i in range(5))
    sig = 1 / (1 + math.exp(-R))
    S, TV = sig, math.tanh(R / 2)                         # THEORY §3.1 table (sigmoid)
    rhs = B * 2 ** -n + 5 * B * (S * 2 ** -n + TV * (n + 1) * 2 ** (-n / 2))
    assert c.B == pytest.approx(B) and c.R == pytest.approx(R) and c.TV == pytest.approx(TV)
    assert c.corr_bound == pytest.approx(rhs, rel=1e-12)
    assert c.rho_bound == pytest.approx(2 ** -n + 2 * rhs, rel=1e-12)
    # the pieces the bound is made of hold neuron by neuron (gate lemma + Stieltjes decomposition)
    terms, EH, EHN, *_ = _direct_neuron_terms(net, inst3)
    assert EH == pytest.approx(2 ** -n)
    radii = np.abs(b) + np.linalg.norm(W, axis=1)
    for i in range(5):
        lo = 1 / (1 + math.exp(radii[i]))
        assert terms[i] <= lo * 2 ** -n + math.tanh(radii[i] / 2) * (n + 1) * 2 ** (-n / 2) + 1e-15
    assert abs(EHN) <= c.neuronwise_corr_bound <= c.corr_bound


def test_gate_lemma_for_relu_levels(inst3):
    """|E[H·[z >= θ]]| <= (n+1) 2^{-n/2} for every level θ of a ReLU neuron (exhaustive)."""
    n = inst3.n
    net = SigmaNetwork.random([inst3.dim, 3, 1], "relu", seed=1, bias_scale=0.5)
    _, _, _, _, _, X, W, b = _direct_neuron_terms(net, inst3)
    H = 1.0 - 2.0 * inst3.support().labels
    for i in range(3):
        z = X @ W[i] + b[i]
        for th in np.unique(z):
            assert abs(np.mean(H * (z >= th))) <= (n + 1) * 2 ** (-n / 2)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2 ** 31), width=st.integers(1, 24),
       act=st.sampled_from(["relu", "sigmoid", "tanh", "heaviside", "sign", "hardtanh", "softplus"]),
       scale=st.floats(0.05, 4.0), bias=st.floats(0.0, 2.0), n=st.integers(2, 4))
def test_rho_never_exceeds_ceiling_on_random_nets(seed, width, act, scale, bias, n):
    inst = HardInstance(n, seed=0)
    net = SigmaNetwork.random([inst.dim, width, 1], act, seed=seed, scale=scale, bias_scale=bias)
    c = correlation_ceiling(net, n)
    r = exact_correlation(net, inst, label_table(n, "ip"))
    assert abs(r["rho"]) <= c.neuronwise_rho_bound * (1 + 1e-12) + 1e-15
    assert c.neuronwise_rho_bound <= c.rho_bound * (1 + 1e-12)


@pytest.mark.parametrize("act", ["relu", "sigmoid"])
def test_rho_never_exceeds_ceiling_on_trained_nets(act):
    inst = HardInstance(4, seed=0)
    Y = label_table(4, "ip")
    for w, bound in ((4, None), (32, None), (8, 0.3)):
        res = train_depth2(inst, w, Y, activation=act, seed=w, epochs=150, weight_bound=bound)
        c = correlation_ceiling(res.network, 4)
        r = exact_correlation(res.network, inst, Y)
        assert r["rho"] > 0.05                          # it learned something
        assert abs(r["rho"]) <= c.neuronwise_rho_bound <= c.rho_bound


def test_negative_control_ceiling_fails_for_labels_without_ips_discrepancy():
    """The §4.7 ceiling is a property of IP (low discrepancy): applied to the labels y = a_0 (a
    single gate) it is beaten by a one-neuron threshold net with B = 1, which reaches ρ = 1 while
    the formula says ρ <= 0.70 at n = 10.  The same net has ρ ~ 0 against IP.  This is why the
    random-label rows carry no bound."""
    from networks.sigma import DenseLayer

    n = 10
    inst = HardInstance(n, seed=0)
    W = np.zeros((1, inst.dim))
    W[0, 0] = 1.0                                     # reads x_0 = (2 a_0 - 1)/sqrt(2m)
    net = SigmaNetwork([DenseLayer(W, [0.0]), DenseLayer([[1.0]], [0.0])], activation="heaviside")
    c = correlation_ceiling(net, n)
    size = 1 << n
    dictator = np.repeat((np.arange(size) & 1).astype(float)[:, None], size, axis=1)  # Y[a,b]=a_0
    r = exact_correlation(net, inst, dictator)
    assert c.rho_bound < 0.71 and r["rho"] == 1.0 > c.rho_bound          # the control fails
    r_ip = exact_correlation(net, inst, label_table(n, "ip"))
    assert abs(r_ip["rho"]) <= c.neuronwise_rho_bound


def test_random_labels_keep_counts_and_differ():
    Y, P = label_table(4, "ip"), label_table(4, "random", seed=3)
    assert Y.sum() == P.sum() == 2 ** 3 * (2 ** 4 - 1)
    assert (Y != P).mean() > 0.3
    assert np.array_equal(P, label_table(4, "random", seed=3))


def test_product_gradient_matches_backprop(inst3):
    """Naive twin: the product-form gradient equals backpropagation on the 4^n points."""
    X, idx, labels = inst3.support()
    for act in ("relu", "tanh", "softplus"):
        net = SigmaNetwork.random([inst3.dim, 6, 1], act, seed=2, bias_scale=0.4)
        P = label_table(3, "random", seed=1)
        y = P.T.reshape(-1)                                   # cube order k = a + 2^n b
        l1, g1 = product_loss_and_gradient(net, inst3, targets=P)
        l2, g2 = loss_and_gradient(net, X, y)
        assert l1 == pytest.approx(l2, rel=1e-12)
        for (a, b), (c, d) in zip(g1, g2):
            np.testing.assert_allclose(a, c, rtol=1e-9, atol=1e-13)
            np.testing.assert_allclose(b, d, rtol=1e-9, atol=1e-13)


def test_train_product_lowers_the_exact_loss(inst3):
    net = SigmaNetwork.random([inst3.dim, 16, 1], "relu", seed=0, bias_scale=0.5)
    res = train_product(net, inst3, epochs=200, lr=0.02)
    r = exact_correlation(res.network, inst3, label_table(3))
    assert r["mse"] == pytest.approx(res.history["final_loss"], rel=1e-9)
    assert res.history["final_loss"] < 0.5 * res.history["loss"][0]


def test_script_end_to_end(tmp_path):
    from experiments import ceiling

    out = tmp_path / "c"
    assert ceiling.main(["--n", "2,3", "--widths", "2,8", "--epochs", "60", "--no-progress",
                         "--heldout-points", "256", "--out", str(out)]) == 0
    rec = json.loads((out / "ceiling.json").read_text())
    assert rec["format"] == ceiling.FORMAT and {"numpy", "python"} <= set(rec["versions"])
    png = (out / "ceiling.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 2000
    need = {"n", "width", "depth", "labels", "activation", "rho", "bound", "mse", "heldout_mse",
            "seed", "seconds"}
    for r in rec["rows"]:
        assert need <= set(r)
        if r["depth"] == 3:
            assert r["rho"] == pytest.approx(1.0, abs=1e-12) and r["width"] == r["n"] + 1
        elif r["labels"] == "ip":
            assert abs(r["rho"]) <= r["bound"]
        else:
            assert r["bound"] is None
    combos = {(r["n"], r["width"], r["labels"]) for r in rec["rows"] if r["depth"] == 2}
    assert combos == {(n, w, lab) for n in (2, 3) for w in (2, 8) for lab in ("ip", "random")}
    assert len(rec["comparison"]) == 4


@pytest.mark.parametrize("argv", [["--n", "4,x"], ["--n", "13"], ["--n", "10"], ["--seeds", "0"],
                                  ["--activation", "nope"], ["--tau", "0.5"],
                                  ["--labels", "ip,foo"], ["--widths", "0,4"]])
def test_script_rejects_bad_options(argv, capsys):
    from experiments import ceiling

    with pytest.raises(SystemExit) as exc:
        ceiling.parse_args(argv)
    assert exc.value.code == 2
    assert "error:" in capsys.readouterr().err
