"""The float32-lane product-form pass of depth-2 ReLU training (networks.product._kernels_train32):
against its naive twin on every pair (small n), against the float64 pass on random nets (several
tiles, slices, blocks, widths that are no multiple of a vector), with negative controls."""

from __future__ import annotations

import numpy as np
import pytest

import naive_reduction as naive
from embeddings import HardInstance
from networks import SigmaNetwork, product_loss_and_gradient
import importlib

tp = importlib.import_module("networks.train_product")     # the module (the package exports the function)

#: Stated tolerance of a float32 epoch's gradient against the float64 one: max-norm relative
#: error per parameter array (measured 4e-7 at n = 10-12; float32 has 6e-8 unit rounding).
F32_GRAD_RTOL = 1e-4


def _net(dim, w, seed, bias=0.3):
    return SigmaNetwork.random([dim, w, 1], "relu", seed=seed, bias_scale=bias)


def _rel(p, q):
    return float(np.abs(p - q).max() / max(np.abs(p).max(), 1e-300))


@pytest.mark.parametrize("n, w", [(2, 3), (3, 17), (4, 5)])
def test_float32_pass_matches_naive_twin_on_every_pair(n, w):
    inst = HardInstance(n, seed=0)
    sup = tp.product_support(inst)
    net = _net(inst.dim, w, seed=n + w)
    W, b = net.layers[0].weights, net.layers[0].bias
    u, u0 = net.layers[1].weights[0], float(net.layers[1].bias[0])
    A = sup.XA @ W[:, :sup.m].T
    B = sup.XB @ W[:, sup.m:].T
    Y = np.random.default_rng(n).normal(size=(sup.size, sup.size))
    # the float32 kernel sees α + c and β rounded to float32: give the twin the same numbers
    Ac32 = (A + b).astype(np.float32).astype(np.float64)
    B32 = B.astype(np.float32).astype(np.float64)
    u32 = u.astype(np.float32).astype(np.float64)
    ref = naive.relu_train_pass(Ac32.tolist(), B32.tolist(), u32.tolist(), u0, Y.tolist())
    for n_blocks in (1, 3):
        got = tp._full_pass(0, net.activation, A, B, b, u, u0, Y, n_blocks, "float32")
        for k in range(3):
            assert _rel(np.array(ref[k]), got[k]) <= 2e-5, k
        assert abs(got[3] - ref[3]) <= 1e-5 * ref[3]
        assert abs(got[4] - ref[4]) <= 1e-5 * max(1.0, abs(ref[4]))


@pytest.mark.parametrize("n, w, slice_terms", [(6, 21, 1 << 27), (7, 40, 1 << 12), (8, 300, 1 << 27)])
def test_float32_gradient_agrees_with_float64(n, w, slice_terms, monkeypatch):
    """Stated tolerance F32_GRAD_RTOL on random nets; several column tiles (w = 300: tile 218
    columns of 256), row slices (SLICE_TERMS lowered), uneven blocks; negative control."""
    monkeypatch.setattr(tp, "SLICE_TERMS", slice_terms)
    inst = HardInstance(n, seed=1)
    net = _net(inst.dim, w, seed=w)
    Y = (np.random.default_rng(w).random((1 << n, 1 << n)) < 0.5).astype(float)
    l64, g64 = product_loss_and_gradient(net, inst, targets=Y, precision="float64")
    l32, g32 = product_loss_and_gradient(net, inst, targets=Y, precision="float32")
    assert abs(l32 - l64) <= 1e-5 * l64
    worst = max(_rel(p, q) for a, b in zip(g64, g32) for p, q in zip(a, b))
    assert worst <= F32_GRAD_RTOL
    # negative control: the gradient of a slightly different network fails the same check
    W = np.array(net.layers[0].weights)
    W[0] += 1e-2
    other = SigmaNetwork([(W, net.layers[0].bias), net.layers[1]], activation="relu")
    g_other = product_loss_and_gradient(other, inst, targets=Y, precision="float32")[1]
    assert max(_rel(p, q) for a, b in zip(g64, g_other) for p, q in zip(a, b)) > F32_GRAD_RTOL


def test_float32_pass_repeats_bit_for_bit_and_survives_large_biases():
    """The compiled order of every float32 sum is fixed (``contract``/``reassoc`` flags, see the
    kernel's docstring): two calls agree bit for bit.  Biases of size 20 (relu(a + x) =
    max(x, -a) + a cancels a large row term) still meet the stated tolerance."""
    inst = HardInstance(7, seed=2)
    net = _net(inst.dim, 37, seed=5, bias=20.0)
    Y = (np.random.default_rng(5).random((1 << 7, 1 << 7)) < 0.5).astype(float)
    first = product_loss_and_gradient(net, inst, targets=Y, precision="float32")
    again = product_loss_and_gradient(net, inst, targets=Y, precision="float32")
    assert first[0] == again[0]
    for a, b in zip(first[1], again[1]):
        for p, q in zip(a, b):
            assert np.array_equal(p, q)
    l64, g64 = product_loss_and_gradient(net, inst, targets=Y, precision="float64")
    assert abs(first[0] - l64) <= 1e-5 * l64
    assert max(_rel(p, q) for a, b in zip(g64, first[1]) for p, q in zip(a, b)) <= F32_GRAD_RTOL


def test_float64_slices_agree_with_one_call(monkeypatch):
    inst = HardInstance(6, seed=0)
    net = SigmaNetwork.random([inst.dim, 9, 1], "sigmoid", seed=3, bias_scale=0.3)
    l1, g1 = product_loss_and_gradient(net, inst)
    monkeypatch.setattr(tp, "SLICE_TERMS", 1 << 10)
    l2, g2 = product_loss_and_gradient(net, inst)
    assert abs(l1 - l2) <= 1e-14 * l1
    assert max(_rel(p, q) for a, b in zip(g1, g2) for p, q in zip(a, b)) <= 1e-12


def test_precision_is_validated():
    inst = HardInstance(2, seed=0)
    with pytest.raises(Exception, match="precision"):
        tp.train_product(_net(inst.dim, 3, 0), inst, epochs=1, precision="half")


def test_history_separates_the_epochs_from_the_reference_pass():
    """``loop_seconds`` (the epochs) is part of ``seconds`` (the whole call, which adds the one
    float64 pass computing ``final_loss``); benchmarks time epochs with it."""
    inst = HardInstance(5, seed=0)
    h = tp.train_product(_net(inst.dim, 4, 0), inst, epochs=3, patience=None).history
    assert 0.0 < h["loop_seconds"] <= h["seconds"]


@pytest.mark.parametrize("n, w, act", [(4, 5, "relu"), (6, 33, "relu"), (5, 7, "tanh")])
def test_final_loss_is_the_float64_pass_loss_bit_for_bit(n, w, act):
    """A float32 run's final loss comes from the forward half of the float64 pass alone
    (``_kernels._loss_rows``, so no float64 training kernel is compiled by a default run): the
    same bits as the full float64 pass; a different target table gives a different loss."""
    inst = HardInstance(n, seed=1)
    sup = tp.product_support(inst)
    net = SigmaNetwork.random([inst.dim, w, 1], act, seed=w, bias_scale=0.3)
    grad = tp._Depth2Grad(sup, net.activation, "float32")
    params = [net.layers[0].weights, net.layers[0].bias, net.layers[1].weights[0],
              net.layers[1].bias]
    Y = (np.random.default_rng(w).random((sup.size, sup.size)) < 0.5).astype(float)
    assert tp._final_loss(grad, params, Y) == grad(params, Y, precision="float64")[0]
    assert tp._final_loss(grad, params, 1.0 - Y) != grad(params, Y, precision="float64")[0]
