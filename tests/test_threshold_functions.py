"""Threshold-function recognition, minimal weights, Chow parameters, counting (E18), depth-2 search (E19)."""
import json
from functools import lru_cache

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import circuits
from circuits import DimensionError, InvalidCircuitError, ThresholdCircuit, ThresholdFunction, ThresholdLayer, inner_product_mod2, majority, parity, truth_table
from circuits.analysis import chow_parameters, count_threshold_functions, is_threshold_function, min_depth2_size, minimal_weights, all_threshold_functions, threshold_gate
from circuits.analysis.threshold_search import monotone_functions

from tests import naive_threshold as nt

A000609 = [2, 4, 14, 104, 1882, 94572]


@lru_cache(maxsize=None)
def brute(n):
    return nt.brute_threshold_functions(n, 3)       # exact for n <= 4 (same set and minima as wmax=5)


def assert_correct(table, res):
    """The result is right for `table`, checked independently of the LP."""
    n = int(len(table)).bit_length() - 1
    table = [int(v) for v in table]
    if res.is_threshold:
        assert res.weights.dtype == np.int64 and res.weights.shape == (n,)
        if n:
            assert ThresholdFunction(res.weights, res.threshold).truth_table().tolist() == table
        assert list(nt.table_of(res.weights.tolist(), res.threshold, n)) == table
        assert res.certificate is None
    else:
        assert res.weights is None and res.threshold is None
        assert nt.check_summability(table, n, res.certificate)


# ----------------------------------------------------------------------------- known functions
def test_known_functions():
    assert is_threshold_function([0, 0, 0, 1])                          # AND_2
    assert is_threshold_function(inner_product_mod2(1))                 # IP_1 = x0 AND y0
    assert not is_threshold_function([0, 1, 1, 0])                      # XOR
    assert not is_threshold_function(inner_product_mod2(2))             # IP_2
    assert not is_threshold_function(parity(3))
    for n in range(1, 7):
        ok, w, t = is_threshold_function(majority(n))
        assert ok and w.tolist() == [1] * n and t == (n + 1) // 2
    for tab in ([0], [1], [0, 0, 0, 0], [1] * 8):                       # constants count
        res = is_threshold_function(tab)
        assert res and res.weights.tolist() == [0] * (len(tab).bit_length() - 1)
        assert_correct(tab, res)


def test_xor_certificate_is_the_textbook_one():
    res = is_threshold_function([0, 1, 1, 0])
    assert res.certificate.order == 2
    assert sorted(res.certificate.ones.tolist()) == [1, 2]
    assert sorted(res.certificate.zeros.tolist()) == [0, 3]


@pytest.mark.parametrize("n", [0, 1, 2, 3])
def test_every_function_up_to_3_inputs(n):
    thr = brute(n) if n else {(0,): None, (1,): None}
    for tab in nt.all_tables(n):
        res = is_threshold_function(list(tab))
        assert bool(res) == (tab in thr), tab
        assert_correct(tab, res)


def test_unate_non_threshold_needs_the_dual_certificate():
    # x0 x1 OR x2 x3 is monotone (no 2-summable pair from non-unateness) but not threshold
    n = 8
    k = np.arange(1 << n)
    tab = (((k & 3) == 3) | (((k >> 2) & 3) == 3)).astype(np.uint8)
    res = is_threshold_function(tab)
    assert not res and nt.check_summability(tab.tolist(), n, res.certificate)
    assert res.certificate.order >= 2


def test_larger_n_uses_scaled_lp_vertex():
    rng = np.random.default_rng(5)
    for n in (8, 10, 12):
        w = rng.integers(-40, 41, size=n)
        t = int(rng.integers(-20, 21))
        tab = ThresholdFunction(w, t).truth_table()
        res = is_threshold_function(tab)
        assert res
        assert np.array_equal(ThresholdFunction(res.weights, res.threshold).truth_table(), tab)
    assert not is_threshold_function(parity(12))


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 6).flatmap(lambda n: st.tuples(
    st.lists(st.integers(-20, 20), min_size=n, max_size=n), st.integers(-60, 60))))
def test_random_threshold_functions_are_recognised(wt):
    w, t = wt
    tab = ThresholdFunction(w, t).truth_table()
    res = is_threshold_function(tab)
    assert_correct(tab.tolist(), res)
    assert res and int(np.abs(res.weights).sum()) <= sum(abs(v) for v in w)


# ----------------------------------------------------------------------------- minimal weights
@pytest.mark.parametrize("objective,slot", [("sum", 0), ("max", 1)])
def test_minimal_weights_match_brute_force_n3(objective, slot):
    items = sorted(brute(3).items())
    if objective == "max":                     # the sum objective covers all 104; max a sample
        items = items[::3]
    for tab, best in items:
        res = minimal_weights(list(tab), objective=objective)
        assert_correct(tab, res)
        got = np.abs(res.weights)
        assert (int(got.sum()) if slot == 0 else int(got.max())) == best[slot], tab


def test_minimal_weights_match_brute_force_n4_sample():
    items = sorted(brute(4).items())
    rng = np.random.default_rng(0)
    for j in rng.choice(len(items), size=25, replace=False):
        tab, best = items[j]
        res = minimal_weights(list(tab))
        assert_correct(tab, res)
        assert int(np.abs(res.weights).sum()) == best[0]


def test_minimal_weights_known_examples():
    r = minimal_weights(ThresholdFunction([10, 20, 30, -5], 25).truth_table())
    assert_correct(ThresholdFunction([10, 20, 30, -5], 25).truth_table().tolist(), r)
    r = minimal_weights(inner_product_mod2(2))
    assert not r and nt.check_summability(inner_product_mod2(2).tolist(), 4, r.certificate)


# ----------------------------------------------------------------------------- Chow parameters
def test_chow_matches_naive(rng):
    for n in range(0, 6):
        for _ in range(5):
            tab = rng.integers(0, 2, size=1 << n)
            assert chow_parameters(tab).tolist() == nt.chow(tab.tolist(), n)
    assert chow_parameters(majority(3)).tolist() == [0, 4, 4, 4]


def test_chow_parameters_determine_threshold_functions_n3():
    tables = nt.all_tables(3)
    chows = {}
    for tab in tables:
        chows.setdefault(tuple(chow_parameters(list(tab)).tolist()), []).append(tab)
    thr = brute(3)
    for tab in thr:
        assert chows[tuple(nt.chow(list(tab), 3))] == [tab]      # no other function shares them
    # ... and the converse fails: some non-threshold functions share Chow parameters
    assert any(len(v) > 1 for v in chows.values())


# ----------------------------------------------------------------------------- E18 counting
def test_monotone_functions_dedekind():
    assert [monotone_functions(n).shape[0] for n in range(6)] == [2, 3, 6, 20, 168, 7581]
    for n in range(4):
        for row in monotone_functions(n):
            assert nt.is_monotone(row.tolist(), n)


def test_count_threshold_functions_e18():
    assert [count_threshold_functions(n) for n in range(5)] == A000609[:5]


@pytest.mark.parametrize("n", range(4))
def test_exhaustive_count_agrees(n):
    assert count_threshold_functions(n, method="exhaustive") == A000609[n]


@pytest.mark.parametrize("n", range(5))
def test_threshold_functions_equal_brute_force_set(n):
    got = {tuple(r) for r in all_threshold_functions(n).tolist()}
    assert got == (set(brute(n)) if n else {(0,), (1,)})


@pytest.mark.slow
def test_exhaustive_count_n4():
    assert count_threshold_functions(4, method="exhaustive", progress=False) == 1882


@pytest.mark.slow
def test_count_n5():
    assert count_threshold_functions(5) == 94572


# ----------------------------------------------------------------------------- E19 depth-2 search
def test_parity_depth2_minima_e19():
    for n, expected in ((2, 2), (3, 3)):
        res = min_depth2_size(parity(n), 4)
        assert res.size == expected
        c = res.circuit
        assert c.depth == 2 and c.size == expected
        assert nt.layered_table(c) == parity(n).tolist()
    assert min_depth2_size(parity(3), 2).size is None                # 2 gates are not enough


def test_depth2_of_threshold_and_constant_functions():
    res = min_depth2_size(majority(3), 2)
    assert res.size == 1 and truth_table(res.circuit).tolist() == majority(3).tolist()
    res = min_depth2_size([1, 1, 1, 1], 1)
    assert res.size == 1 and truth_table(res.circuit).tolist() == [1, 1, 1, 1]


def test_depth2_search_on_ip2_is_exact():
    # IP_2 is not a threshold function (one gate is not enough) and two hidden gates are
    assert min_depth2_size(inner_product_mod2(2), 1).size is None
    res = min_depth2_size(inner_product_mod2(2), 2)
    assert res.size == 2 and res.circuit.layers[0].weights.shape[0] == 2
    assert truth_table(res.circuit).tolist() == inner_product_mod2(2).tolist()


def test_depth2_budget_error():
    with pytest.raises(DimensionError, match="max_candidates"):
        min_depth2_size(parity(4), 4)
    with pytest.raises(DimensionError, match="N <= 4"):
        min_depth2_size(parity(5), 1)
    with pytest.raises(DimensionError, match="N >= 1"):
        min_depth2_size([1], 1)


# ----------------------------------------------------------------------------- gates in circuits
def test_threshold_gate_inserts_into_a_circuit():
    g_and = threshold_gate([0, 0, 0, 1])
    g_or = threshold_gate([0, 1, 1, 1])
    assert g_and.depth == 1 and g_and.n_inputs == 2
    hidden = ThresholdLayer(np.vstack([g_or.layers[0].weights, g_and.layers[0].weights]),
                            np.concatenate([g_or.layers[0].thresholds, g_and.layers[0].thresholds]))
    xor_top = is_threshold_function([0, 1, 0, 0])       # [g0 AND NOT g1] on the hidden pattern
    c = ThresholdCircuit((hidden, xor_top.gate().layers[0]))
    assert truth_table(c).tolist() == [0, 1, 1, 0]
    with pytest.raises(InvalidCircuitError, match="not a threshold function"):
        threshold_gate([0, 1, 1, 0])
    with pytest.raises(DimensionError, match="at least one input"):
        threshold_gate([1])


def test_result_object():
    res = is_threshold_function([0, 1, 1, 1])
    ok, w, t = res
    assert ok is True and w.tolist() == [1, 1] and t == 1
    assert not w.flags.writeable
    assert res.function().truth_table().tolist() == [0, 1, 1, 1]
    json.dumps(res.to_dict())
    bad = is_threshold_function([0, 1, 1, 0])
    assert not bad and list(bad)[0] is False
    json.dumps(bad.to_dict())
    assert "summable_order=2" in repr(bad)
    with pytest.raises(InvalidCircuitError):
        bad.gate()


def test_package_entry_point():
    assert circuits.analysis.is_threshold_function is is_threshold_function
    assert "is_threshold_function" in circuits.analysis.__all__


# ----------------------------------------------------------------------------- bad input
def test_bad_input():
    with pytest.raises(DimensionError, match="power-of-two"):
        is_threshold_function([0, 1, 1])
    with pytest.raises(InvalidCircuitError, match="only 0 and 1"):
        is_threshold_function([0, 2, 1, 1])
    with pytest.raises(DimensionError, match="N <= 16"):
        is_threshold_function(np.zeros(1 << 17, dtype=np.uint8))
    with pytest.raises(DimensionError, match="N <= 6"):
        minimal_weights(np.zeros(1 << 7, dtype=np.uint8))
    with pytest.raises(DimensionError):
        is_threshold_function([[0, 1], [1, 1]])
    with pytest.raises(TypeError):
        is_threshold_function("0110")
    with pytest.raises(ValueError, match="objective"):
        minimal_weights([0, 1], objective="l2")
    with pytest.raises(ValueError, match="method"):
        count_threshold_functions(2, method="magic")
    with pytest.raises(DimensionError):
        count_threshold_functions(6)
    with pytest.raises(DimensionError):
        count_threshold_functions(5, method="exhaustive")


def test_recognised_gate_goes_into_a_dag():
    from circuits import DagCircuit, DagGate, points

    res = is_threshold_function(ThresholdFunction([3, -2, 1], 2).truth_table())
    c = DagCircuit(4, [DagGate("g", "THR", [("x", 0), ("x", 1), ("x", 2)], res.weights, res.threshold),
                       DagGate("out", "XOR", ["g", ("x", 3)])])
    g = ThresholdFunction([3, -2, 1], 2)(points(4)[:, :3])
    assert c.evaluate(points(4)).tolist() == (g ^ points(4)[:, 3]).tolist()
    assert truth_table(c).tolist() == (g ^ points(4)[:, 3]).tolist()
