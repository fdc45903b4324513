"""One exact overflow rule for every class that holds integer weights (issue 25, items 1-2).

The rule: every weight and threshold lies in [-(2^63 - 1), 2^63 - 1] (int64-min is refused) and
``sum_i |w_i| + |t|`` computed in Python ints is at most 2^63 - 1, per gate.  Below it, the kernels
are exact (checked against the Python-int twin in tests/naive.py); above it, construction fails.
"""

import numpy as np
import pytest

import circuits as C
from circuits.threshold import INT64_MAX, preactivation_bound
from circuits.utils.errors import InvalidCircuitError

from tests.naive import circuit_table, layers_of
from tests.naive_threshold import table_of

INT64_MIN = -(1 << 63)
KERNELS = ["lowhigh", "bitsliced", "fused", "generic", "auto"]


def test_issue_repro_threshold_function_sum_wraps_is_refused():
    with pytest.raises(InvalidCircuitError, match="exceeds int64"):
        C.ThresholdFunction([2 ** 62, 2 ** 62], 2 ** 62)
    with pytest.raises(InvalidCircuitError, match="exceeds int64"):
        C.ThresholdFunction([2 ** 62] * 3, 2 ** 62 + 1)


@pytest.mark.parametrize("make", [
    lambda v: C.ThresholdFunction([v, 1], 0),
    lambda v: C.ThresholdFunction([1, 1], v),
    lambda v: C.ThresholdLayer(np.array([[v, 1]], dtype=np.int64), [0]),
    lambda v: C.ThresholdLayer([[1, 1]], np.array([v], dtype=np.int64)),
    lambda v: C.ThresholdCircuit.single_gate(np.array([v], dtype=np.int64), 0),
    lambda v: C.DagGate("g", "THR", [("x", 0)], weights=[v], threshold=0),
    lambda v: C.DagGate("g", "THR", [("x", 0)], weights=[1], threshold=v),
])
def test_int64_min_is_refused_everywhere(make):
    with pytest.raises(InvalidCircuitError, match="int64"):
        make(INT64_MIN)
    with pytest.raises(InvalidCircuitError, match="int64"):
        make(np.int64(INT64_MIN))


@pytest.mark.parametrize("cls", ["function", "layer", "dag"])
def test_the_same_rule_at_the_edge_in_every_class(cls):
    ok = ([2 ** 62, 2 ** 62 - 2], 1)               # sum |w| + |t| = 2^63 - 1: accepted
    bad = ([2 ** 62, 2 ** 62 - 1], 1)              # 2^63: refused
    build = {
        "function": lambda w, t: C.ThresholdFunction(w, t),
        "layer": lambda w, t: C.ThresholdLayer([w], [t]),
        "dag": lambda w, t: C.DagGate("g", "THR", [("x", 0), ("x", 1)], weights=w, threshold=t),
    }[cls]
    build(*ok)
    with pytest.raises(InvalidCircuitError, match="exceeds int64"):
        build(*bad)
    assert preactivation_bound([ok[0]], [ok[1]]) == INT64_MAX
    with pytest.raises(InvalidCircuitError):
        preactivation_bound([bad[0]], [bad[1]])
    with pytest.raises(InvalidCircuitError):
        preactivation_bound([[INT64_MIN]], [0])


EDGE = [                                           # every one has sum |w| + |t| = 2^63 - 1
    ([2 ** 62, 2 ** 62 - 1], 0),
    ([2 ** 62, -(2 ** 61)], 2 ** 61 - 1),
    ([-(2 ** 62), -(2 ** 61) + 1], -(2 ** 61)),
    ([INT64_MAX - 5, 2, 3], 0),
    ([INT64_MAX - 6, -2, 3], 1),
    ([2 ** 61] * 3, 2 ** 61 - 1),
    ([2 ** 60] * 4 + [-(2 ** 60)] * 3, 2 ** 60 - 1),
]


@pytest.mark.parametrize("w,t", EDGE)
def test_threshold_function_near_the_limit_is_exact(w, t):
    f = C.ThresholdFunction(w, t)
    assert f.truth_table().tolist() == list(table_of(w, t, len(w)))


def run_or_not_applicable(fn, kernel):
    """``fn(kernel)``, or None when a forced kernel says (with our own error) it does not apply."""
    try:
        return fn(kernel)
    except InvalidCircuitError as exc:
        if kernel == "auto" or "does not apply" not in str(exc):
            raise
        return None


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("w,t", EDGE)
def test_single_gate_near_the_limit_is_exact_with_every_kernel(w, t, kernel):
    c = C.ThresholdCircuit.single_gate(w, t)
    truth = circuit_table(layers_of(c), c.n_inputs)
    got = run_or_not_applicable(lambda k: C.truth_table(c, kernel=k).tolist(), kernel)
    assert got in (None, truth)
    assert run_or_not_applicable(lambda k: C.count_ones(c, kernel=k), kernel) in (None, sum(truth))
    zero = C.ThresholdCircuit.single_gate([0] * c.n_inputs, 1)
    f = C.ThresholdFunction(w, t)
    got = run_or_not_applicable(lambda k: C.count_disagreements(zero, f, kernel=k).count, kernel)
    assert got in (None, sum(truth))


def test_bit_sliced_plan_decides_not_applicable_before_filling_int64_arrays():
    # each layer-1 gate passes the per-gate bound, but their mask table together would need
    # more than 2^62 bytes: the plan must say "not applicable" (it raised OverflowError)
    c = C.ThresholdCircuit([C.ThresholdLayer([[2 ** 60, 1, 3], [2 ** 60, -1, 2], [-(2 ** 60), 5, 1]],
                                             [1, 0, -2]),
                            C.ThresholdLayer([[1, 1, -1]], [1])])
    truth = circuit_table(layers_of(c), c.n_inputs)
    plan = C.kernel_plan(c)
    assert plan.kernel == "lowhigh" and "mask table" in plan.reason
    assert C.truth_table(c).tolist() == truth
    assert C.count_ones(c) == sum(truth)
    for kernel in ("bitsliced", "fused"):
        with pytest.raises(InvalidCircuitError, match="does not apply"):
            C.count_ones(c, kernel=kernel)
