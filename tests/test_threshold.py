import numpy as np
import pytest
from hypothesis import given, strategies as st

import circuits as c
from circuits.utils.errors import InvalidCircuitError
from circuits.threshold import ThresholdCircuit, ThresholdLayer
from tests import naive


def test_layer_copies_and_freezes():
    w = np.array([[1, 2]])
    layer = ThresholdLayer(w, [1])
    w[0, 0] = 99
    assert layer.weights[0, 0] == 1
    with pytest.raises(ValueError):
        layer.weights[0, 0] = 5
    assert layer.weights.dtype == np.int64 and layer.thresholds.dtype == np.int64


@pytest.mark.parametrize("bad, msg", [
    ([[1.5, 2]], "integers"),
    ([[np.nan, 1]], "finite"),
    ([[np.inf, 1]], "finite"),
    ([1, 2], "2-dimensional"),
    (np.zeros((0, 2)), "at least one gate"),
    ([["a", "b"]], "integer array"),
])
def test_layer_rejects(bad, msg):
    with pytest.raises(InvalidCircuitError, match=msg):
        ThresholdLayer(bad, [0] * max(1, np.shape(bad)[0] if np.ndim(bad) == 2 else 1))


def test_threshold_shape_mismatch():
    with pytest.raises(InvalidCircuitError, match="shape"):
        ThresholdLayer([[1, 1], [1, 1]], [1])


def test_integral_floats_accepted():
    assert ThresholdLayer(np.array([[2.0, -3.0]]), [1.0]).weights.tolist() == [[2, -3]]


def test_overflow_refused_with_bound():
    with pytest.raises(InvalidCircuitError, match="exceeds int64"):
        ThresholdLayer([[2 ** 62, 2 ** 62]], [0])
    ThresholdLayer([[2 ** 61, 2 ** 61]], [0])  # fits


def _bound_by_python_ints(layer):
    return max(sum(abs(v) for v in row) + abs(t)
               for row, t in zip(layer.weights.tolist(), layer.thresholds.tolist()))


@pytest.mark.parametrize("w, t", [
    ([[-2 ** 63, 0]], [0]),                      # |INT64_MIN| = 2^63: refused, not wrapped to < 0
    ([[2 ** 62, -(2 ** 62) + 1]], [0]),          # the row sum is exactly 2^63 - 1: accepted
    ([[2 ** 62, 0], [0, 1]], [0, 1]),            # over the crude bound: Python-int fallback
    ([[3, -4, 5], [-7, 0, 1]], [-9, 2]),
])
def test_cached_bound_equals_python_int_sum(w, t):
    exact = max(sum(abs(v) for v in row) + abs(s) for row, s in zip(w, t))
    if exact > 2 ** 63 - 1:
        with pytest.raises(InvalidCircuitError, match="exceeds int64"):
            ThresholdLayer(w, t)
        return
    layer = ThresholdLayer(w, t)
    assert layer.preactivation_bound == exact == _bound_by_python_ints(layer)
    assert type(layer.preactivation_bound) is int


@given(st.lists(st.lists(st.integers(-2 ** 40, 2 ** 40), min_size=3, max_size=3), min_size=1,
                max_size=6), st.integers(-2 ** 40, 2 ** 40))
def test_cached_bound_matches_naive_random(rows, t):
    layer = ThresholdLayer(rows, [t] * len(rows))
    assert layer.preactivation_bound == _bound_by_python_ints(layer)
    circ = ThresholdCircuit((layer, ThresholdLayer([[1] * len(rows)], [1])))
    assert circ.preactivation_bound == max(_bound_by_python_ints(layer), len(rows) + 1)


def test_chaining_and_output_gate():
    with pytest.raises(InvalidCircuitError, match="chain"):
        ThresholdCircuit((ThresholdLayer([[1, 1]], [1]), ThresholdLayer([[1, 1]], [1])))
    with pytest.raises(InvalidCircuitError, match="exactly one gate"):
        ThresholdCircuit((ThresholdLayer([[1, 1], [1, 0]], [1, 1]),))
    with pytest.raises(TypeError):
        ThresholdCircuit(([[1]],))


def test_properties():
    circ = c.ip_depth3(4)
    assert (circ.depth, circ.size, circ.n_inputs) == (3, 8, 8)
    assert circ.n_wires == 8 + 16 + 4
    assert circ.preactivation_bound == max(2 + 2, 4 + 4, 2 + 1)
    w, t, s = circ.packed()
    assert s.tolist() == [8, 4, 4, 1] and w.size == 8 * 4 + 4 * 4 + 4 and t.size == 9


def test_equals():
    assert c.ip_depth3(3).equals(c.ip_depth3(3))
    assert not c.ip_depth3(3).equals(c.ip_depth3(4))
    assert not c.ip_depth3(3).equals("x")


small_layers = st.integers(1, 4).flatmap(lambda n_in: st.integers(1, 4).flatmap(
    lambda g: st.tuples(st.lists(st.lists(st.integers(-5, 5), min_size=n_in, max_size=n_in),
                                 min_size=g, max_size=g),
                        st.lists(st.integers(-6, 6), min_size=g, max_size=g))))


@given(small_layers, st.lists(st.integers(-3, 3), min_size=4, max_size=4), st.integers(-3, 3))
def test_evaluate_matches_naive(hidden, top, s):
    W, t = hidden
    top = top[:len(W)]
    circ = ThresholdCircuit.depth2(W, t, top, s)
    N = circ.n_inputs
    assert circ.evaluate(c.points(N)).tolist() == naive.circuit_table(naive.layers_of(circ), N)
