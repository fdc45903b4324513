"""The fused float32-lane depth-3 ReLU pass (networks.product._kernels_train3): against its naive
twin on every pair (small n), against the float64 pass (stated tolerance), bit-for-bit repeats
for a fixed thread count, and its use by the trainer; with negative controls."""

from __future__ import annotations

import importlib
import math

import numpy as np
import pytest

from embeddings import HardInstance
from networks import SigmaNetwork, train
from networks.reduction.product import depth3_parts, depth3_pass, product_support
from networks.product import _pass3

tp = importlib.import_module("networks.train_product")     # the module (the package exports the function)


def _net3(dim, w1, w2, seed, bias=0.3):
    return SigmaNetwork.random([dim, w1, w2, 1], "relu", seed=seed, bias_scale=bias)


def _tables(inst, net):
    sup = product_support(inst)
    p = depth3_parts(net, dim=sup.dim)
    A = sup.XA @ p.W1[:, :sup.m].T
    Bc = sup.XB @ p.W1[:, sup.m:].T + p.b1
    return p, A, Bc


def _f32(x):
    return np.asarray(x, dtype=np.float32).astype(np.float64)


def naive_relu3_pass(A, Bc, W2, b2, v, v0, Y):
    """Twin: plain loops over every pair (a, b) and neuron, math.fsum for every sum.

    z1 = A[a] + Bc[b]; h1 = max(z1, 0); z2 = b2 + W2 h1; N = v0 + v·max(z2, 0);
    g = 2 (N - Y[a][b]) / #pairs; d2_j = g v_j [z2_j > 0]; d1_i = [z1_i > 0] Σ_j W2[j][i] d2_j.
    Returns (loss, Qa, Qb, dW2, db2, dv, dv0)."""
    size_a, size_b, w1, w2 = len(A), len(Bc), len(A[0]), len(W2)
    total = size_a * size_b
    qa = [[[] for _ in range(w1)] for _ in range(size_a)]
    qb = [[[] for _ in range(w1)] for _ in range(size_b)]
    dw = [[[] for _ in range(w1)] for _ in range(w2)]
    db, dv, loss, gs = [[] for _ in range(w2)], [[] for _ in range(w2)], [], []
    for a in range(size_a):
        for b in range(size_b):
            z1 = [A[a][i] + Bc[b][i] for i in range(w1)]
            h1 = [max(z, 0.0) for z in z1]
            z2 = [math.fsum([b2[j]] + [W2[j][i] * h1[i] for i in range(w1)]) for j in range(w2)]
            val = math.fsum([v0] + [v[j] * max(z2[j], 0.0) for j in range(w2)])
            r = val - Y[a][b]
            loss.append(r * r)
            g = 2.0 * r / total
            gs.append(g)
            d2 = [g * v[j] if z2[j] > 0 else 0.0 for j in range(w2)]
            for j in range(w2):
                dv[j].append(g * max(z2[j], 0.0))
                db[j].append(d2[j])
                for i in range(w1):
                    dw[j][i].append(d2[j] * h1[i])
            for i in range(w1):
                if z1[i] > 0:
                    d1 = math.fsum([W2[j][i] * d2[j] for j in range(w2)])
                    qa[a][i].append(d1)
                    qb[b][i].append(d1)
    fs = math.fsum
    return (fs(loss) / total, np.array([[fs(x) for x in row] for row in qa]),
            np.array([[fs(x) for x in row] for row in qb]),
            np.array([[fs(x) for x in row] for row in dw]), np.array([fs(x) for x in db]),
            np.array([fs(x) for x in dv]), fs(gs))


def _rel(p, q):
    p, q = np.asarray(p, dtype=np.float64), np.asarray(q, dtype=np.float64)
    return float(np.abs(p - q).max() / max(np.abs(q).max(), 1e-300))


@pytest.mark.parametrize("n, w1, w2", [(2, 3, 2), (3, 6, 5), (3, 9, 4), (4, 5, 7)])
def test_float32_depth3_pass_matches_naive_twin_on_every_pair(n, w1, w2):
    """Widths that are no multiple of 4 (padding), 1 and 3 blocks of rows."""
    inst = HardInstance(n, seed=0)
    p, A, Bc = _tables(inst, _net3(inst.dim, w1, w2, seed=n + w1))
    Y = np.random.default_rng(n).normal(size=(1 << n, 1 << n))
    # the kernel sees α, β + b1, W2, b2, v rounded to float32: give the twin the same numbers
    args = [_f32(A), _f32(Bc), _f32(p.W2), _f32(p.b2), _f32(p.v)]
    ref = naive_relu3_pass(*[x.tolist() for x in args], p.v0, Y.tolist())
    for threads in (1, 3):
        got = _pass3.depth3_pass32(A, Bc, p.W2, p.b2, p.v, p.v0, Y, threads=threads)
        assert abs(got[0] - ref[0]) <= 1e-6 * ref[0]
        for k in range(1, 6):
            assert np.shape(got[k]) == np.shape(ref[k]), k
            assert _rel(got[k], ref[k]) <= 2e-5, k
        assert abs(got[6] - ref[6]) <= 1e-5 * max(1.0, abs(ref[6]))
    # negative control: the twin of another network differs
    p2, A2, Bc2 = _tables(inst, _net3(inst.dim, w1, w2, seed=n + w1 + 1))
    other = _pass3.depth3_pass32(A2, Bc2, p2.W2, p2.b2, p2.v, p2.v0, Y)
    assert _rel(other[1], ref[1]) > 1e-3


@pytest.mark.parametrize("n, w1, w2, slice_terms", [(6, 17, 5, 1 << 30), (7, 40, 13, 1 << 14),
                                                    (8, 21, 3, 1 << 30)])
def test_float32_depth3_gradient_agrees_with_float64(n, w1, w2, slice_terms, monkeypatch):
    """Stated tolerance F32_GRAD_RTOL against the float64 pass; about 1e-7 when the float64 pass
    sees the same float32-rounded inputs (the rest is the rounding of the inputs); several
    slices of rows (SLICE_TERMS3 lowered), tiles and groups; negative control."""
    monkeypatch.setattr(_pass3, "SLICE_TERMS3", slice_terms)
    inst = HardInstance(n, seed=1)
    net = _net3(inst.dim, w1, w2, seed=w1)
    p, A, Bc = _tables(inst, net)
    Y = (np.random.default_rng(w1).random((1 << n, 1 << n)) < 0.5).astype(float)
    seen = []
    got = _pass3.depth3_pass32(A, Bc, p.W2, p.b2, p.v, p.v0, Y, check=seen.append)
    ref = depth3_pass(A, Bc, p.W2, p.b2, p.v, p.v0, p.activation, Y)
    ref32 = depth3_pass(_f32(A), _f32(Bc), _f32(p.W2), _f32(p.b2), _f32(p.v), p.v0,
                        p.activation, Y)
    assert abs(got[0] - ref[0]) <= 1e-5 * ref[0]
    for k in range(1, 6):
        assert _rel(got[k], ref[k]) <= _pass3.F32_GRAD_RTOL, k
        assert _rel(got[k], ref32[k]) <= 1e-6, k
    assert abs(got[6] - ref[6]) <= 1e-5 * max(1.0, abs(ref[6]))
    if slice_terms < 1 << 20:
        assert len(seen) >= 2 and seen == sorted(seen) and 0 < seen[0] and seen[-1] < 1
    # negative control: a perturbed second layer moves the gradient beyond the tolerance
    W2b = p.W2 * 1.01
    moved = _pass3.depth3_pass32(A, Bc, W2b, p.b2, p.v, p.v0, Y)
    assert _rel(moved[3], ref[3]) > 10 * _pass3.F32_GRAD_RTOL


def test_float32_depth3_pass_repeats_bit_for_bit():
    inst = HardInstance(7, seed=0)
    p, A, Bc = _tables(inst, _net3(inst.dim, 30, 6, seed=2))
    Y = np.random.default_rng(0).random((128, 128))
    for threads in (1, 2):
        r1 = _pass3.depth3_pass32(A, Bc, p.W2, p.b2, p.v, p.v0, Y, threads=threads)
        r2 = _pass3.depth3_pass32(A, Bc, p.W2, p.b2, p.v, p.v0, Y, threads=threads)
        assert r1[0] == r2[0] and r1[6] == r2[6]
        for k in range(1, 6):
            assert np.array_equal(r1[k], r2[k]), k


def test_trainer_uses_the_float32_depth3_pass_and_keeps_float64():
    inst = HardInstance(3, seed=0)
    X, _, y = inst.support()
    net = _net3(inst.dim, 8, 6, seed=2)
    r64 = tp.train_product(net, inst, epochs=25, lr=0.01, patience=None, precision="float64")
    r32 = tp.train_product(net, inst, epochs=25, lr=0.01, patience=None)      # default float32
    ref = train(net, X, y.astype(float), epochs=25, lr=0.01, patience=None)
    assert r64.history["settings"]["precision"] == "float64"
    assert r32.history["settings"]["precision"] == "float32"
    for a, b, c in zip(ref.network.layers, r64.network.layers, r32.network.layers):
        assert np.abs(a.weights - b.weights).max() <= 1e-10
        assert np.abs(a.weights - c.weights).max() <= 1e-4          # rounding only
    assert r32.history["final_loss"] < r32.history["loss"][0]
    # final_loss is the float64 loss of the returned network in both cases
    for r in (r32, r64):
        loss = tp.product_loss_and_gradient(r.network, inst, precision="float64")[0]
        assert r.history["final_loss"] == loss
    # the float32 gradient through the public function is within the stated tolerance
    l32, g32 = tp.product_loss_and_gradient(net, inst, precision="float32")
    l64, g64 = tp.product_loss_and_gradient(net, inst)
    assert abs(l32 - l64) <= 1e-5 * l64
    for (w32, b32), (w64, b64) in zip(g32, g64):
        assert _rel(w32, w64) <= _pass3.F32_GRAD_RTOL and _rel(b32, b64) <= _pass3.F32_GRAD_RTOL
    # other activations stay float64 whatever the precision asked
    sig = SigmaNetwork.random([inst.dim, 5, 4, 1], "sigmoid", seed=0)
    h = tp.train_product(sig, inst, epochs=2, lr=0.01, patience=None).history
    assert h["settings"]["precision"] == "float64"
