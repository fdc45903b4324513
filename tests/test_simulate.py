import numpy as np
import pytest

import circuits as c
from circuits.utils.errors import DimensionError, InvalidCircuitError
from circuits.threshold import ThresholdCircuit, ThresholdLayer
from tests import naive


def random_layered(rng, N, widths, wmax=8, ties=False):
    layers, n_in = [], N
    for g in list(widths) + [1]:
        W = rng.integers(-wmax, wmax + 1, size=(g, n_in))
        if ties:   # thresholds that some input hits exactly
            z = rng.integers(0, 2, size=(g, n_in))
            t = (W * z).sum(axis=1)
        else:
            t = rng.integers(-wmax, wmax + 1, size=g)
        layers.append(ThresholdLayer(W, t))
        n_in = g
    return ThresholdCircuit(tuple(layers))


@pytest.mark.parametrize("N", [1, 3, 6, 9])
@pytest.mark.parametrize("widths", [(), (3,), (5, 4), (2, 3, 2)])
@pytest.mark.parametrize("ties", [False, True])
def test_truth_table_matches_naive(N, widths, ties):
    rng = np.random.default_rng(N * 100 + len(widths) + ties)
    for _ in range(3):
        circ = random_layered(rng, N, widths, ties=ties)
        ref = naive.circuit_table(naive.layers_of(circ), N)
        assert c.truth_table(circ).tolist() == ref
        assert c.count_ones(circ) == sum(ref)


@pytest.mark.parametrize("N", [2, 5, 8])
def test_disagreements_and_first_counterexample(N):
    rng = np.random.default_rng(N)
    circ = random_layered(rng, N, (4,), ties=True)
    target = rng.integers(0, 2, size=1 << N).astype(np.uint8)
    got = c.count_disagreements(circ, target)
    ref = naive.circuit_table(naive.layers_of(circ), N)
    diff = [k for k in range(1 << N) if ref[k] != target[k]]
    assert got.count == len(diff) and got.n_points == 1 << N
    if diff:
        assert got.index == diff[0]
        assert got.counterexample.tolist() == [(diff[0] >> i) & 1 for i in range(N)]
    else:
        assert got.counterexample is None and got.index == -1


@pytest.mark.parametrize("name, ref", [("parity", naive.parity), ("majority", naive.majority)])
@pytest.mark.parametrize("N", [1, 4, 7])
def test_named_targets_match_naive(name, ref, N):
    rng = np.random.default_rng(7)
    circ = random_layered(rng, N, (3,))
    table = naive.circuit_table(naive.layers_of(circ), N)
    expect = sum(a != b for a, b in zip(table, ref(N)))
    assert c.count_disagreements(circ, name).count == expect


@pytest.mark.parametrize("n", range(1, 7))
def test_ip_table_matches_naive(n):
    assert c.inner_product_mod2(n).tolist() == naive.ip_mod2(n)


@pytest.mark.parametrize("n", range(1, 8))
def test_ip_depth3_exact(n):
    circ = c.ip_depth3(n)
    assert c.count_disagreements(circ, "ip").count == 0
    assert c.count_ones(circ) == (1 << (n - 1)) * ((1 << n) - 1)


@pytest.mark.parametrize("n", range(1, 7))
def test_ip_depth2_exact(n):
    circ = c.ip_depth2(n)
    assert circ.size == n * (1 << (n - 1)) and circ.max_abs_weight <= n + 1
    assert c.count_disagreements(circ, c.InnerProductMod2(n)).count == 0


@pytest.mark.parametrize("N", range(1, 13))
def test_parity_depth2_exact(N):
    circ = c.parity_depth2(N)
    assert circ.size == N
    assert c.count_disagreements(circ, "parity").agrees


@pytest.mark.parametrize("N", [1, 2, 5, 8])
def test_majority_gate(N):
    assert c.truth_table(c.majority_gate(N)).tolist() == naive.majority(N)


def test_wrong_circuit_is_caught():
    circ = c.ip_depth3(4)
    L = list(circ.layers)
    W = L[0].weights.copy()
    W[2, 2] = 0                             # break one AND gate: h_2 = [y_2 >= 2] = 0
    L[0] = ThresholdLayer(W, L[0].thresholds)
    bad = ThresholdCircuit(tuple(L))
    res = c.count_disagreements(bad, "ip")
    assert res.count > 0
    x = res.counterexample
    assert x[2] == 1 and x[4 + 2] == 1      # the counterexample uses the broken pair


def test_target_validation():
    circ = c.ip_depth3(2)
    with pytest.raises(DimensionError, match="inputs"):
        c.count_disagreements(circ, np.zeros(8, dtype=np.uint8))
    with pytest.raises(DimensionError, match="power-of-two"):
        c.count_disagreements(circ, np.zeros(12, dtype=np.uint8))
    with pytest.raises(InvalidCircuitError, match="only 0 and 1"):
        c.count_disagreements(circ, np.full(16, 2))
    with pytest.raises(ValueError, match="unknown target"):
        c.count_disagreements(circ, "xor")
    with pytest.raises(DimensionError, match="even"):
        c.count_disagreements(c.parity_depth2(3), "ip")
    with pytest.raises(TypeError):
        c.count_ones("not a circuit")


def test_truth_table_refuses_large():
    big = ThresholdCircuit.single_gate(np.ones(30, dtype=np.int64), 15)
    with pytest.raises(DimensionError, match="count_ones"):
        c.truth_table(big)


def test_executor_path_matches_local():
    from concurrent.futures import ThreadPoolExecutor
    circ = c.ip_depth2(5)
    local = c.count_disagreements(circ, "parity")
    assert local.count > 0 and local.index >= 0       # a first counterexample for both to find
    with ThreadPoolExecutor(2) as ex:
        remote = c.count_disagreements(circ, "parity", executor=ex, chunk_bits=6)
    assert (remote.count, remote.index) == (local.count, local.index)
    assert np.array_equal(remote.counterexample, local.counterexample)
    with ThreadPoolExecutor(2) as ex:
        assert c.count_ones(circ, executor=ex, chunk_bits=5) == c.count_ones(circ)


def _naive_function_tables():
    """(function object, its truth table from the naive twins) for every function class."""
    N = 5
    cube = [[naive.bit(k, i) for i in range(N)] for k in range(1 << N)]
    w, t = [3, -2, 1, 0, -1], 1
    return [(c.Parity(5), naive.parity(5)), (c.Majority(6), naive.majority(6)),
            (c.Majority(5), naive.majority(5)),
            (c.And(4), [int(k == 15) for k in range(16)]), (c.Or(4), [int(k != 0) for k in range(16)]),
            (c.ThresholdFunction(w, t), [naive.gate(w, t, x) for x in cube]),
            (c.InnerProductMod2(2), naive.ip_mod2(2)), (c.InnerProductMod2(3), naive.ip_mod2(3)),
            (c.Constant(3, 1), [1] * 8), (c.Constant(3, 0), [0] * 8)]


def test_function_objects_agree_with_naive_tables():
    # f(bits) and f.truth_table() share the kernel's _target_bit, so each is checked against
    # an independent naive twin (comparing them with each other would check nothing)
    for f, ref in _naive_function_tables():
        assert f.truth_table().tolist() == ref, f
        bits = c.points(f.n_inputs)
        assert f(bits).tolist() == ref, f
        k = np.array([len(ref) - 1, 0, len(ref) // 2 + 1])
        assert f(bits[k]).tolist() == [ref[i] for i in k], f
        table = np.array(ref, dtype=np.uint8)
        assert c.TruthTable(table)(bits).tolist() == ref
        assert c.TruthTable(table).truth_table().tolist() == ref
