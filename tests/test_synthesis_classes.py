"""NP classes of threshold functions by the compiled weight enumeration: its naive twin
(threshold_class_representatives) for k <= 6, OEIS A000609 / A000619 from the class orbits,
and, slow, the 7-input classes and their largest minimal weight."""

import numpy as np
import pytest

from circuits.analysis.synthesis.classes import (A000609, _bits, complete_tables,  # noqa: E402
                                                 count_from_tables, largest_minimal_weight,
                                                 regular_threshold_tables)
from circuits.analysis.synthesis.weights import (NP_CLASSES, _MAX_SINGLE_WEIGHT,   # noqa: E402
                                                 threshold_class_representatives, weight_bound)
from circuits.utils.errors import DepthsepError                                   # noqa: E402


@pytest.mark.parametrize("k", range(7))
def test_kernel_matches_naive_twin_and_a000609(k):
    tables = regular_threshold_tables(k, _MAX_SINGLE_WEIGHT[k])
    got = sorted(bytes(r) for r in _bits(tables, k).astype(np.uint8))
    want = sorted(bytes(r) for r in threshold_class_representatives(k))
    assert got == want
    total, per_r = count_from_tables(tables, k)
    assert total == A000609[k]
    assert per_r == list(NP_CLASSES[:k + 1])


def test_too_small_a_weight_range_is_caught():
    with pytest.raises(DepthsepError, match="raise max_weight"):
        complete_tables(5, 4)
    assert count_from_tables(regular_threshold_tables(5, 4), 5)[0] < A000609[5]


def test_largest_minimal_weight_small_k_and_screen():
    assert [largest_minimal_weight(k, max_weight=_MAX_SINGLE_WEIGHT[k])["value"]
            for k in range(6)] == list(_MAX_SINGLE_WEIGHT[:6])
    r = largest_minimal_weight(5, max_weight=5, screen=4)
    assert r["exact"] and r["value"] == 5 and r["milps"] < r["classes"] == 119
    r = largest_minimal_weight(5, max_weight=5, screen=5)       # nothing reaches the screen
    assert r["milps"] == 0 and not r["exact"]


@pytest.mark.slow
def test_seven_inputs_a000609_a000619_and_largest_minimal_weight():
    """A000609(7) = 8,378,070,864 (Winder 1965), A000619(7) = 28,262 classes of exactly 7
    relevant inputs, and the largest minimal weight of a 7-input gate is 18 (not 17: CP-SAT
    refutes 17 for every class the MILP puts at 18).  About 3 minutes on 2 shared cores."""
    tables = complete_tables(7, 20)
    total, per_r = count_from_tables(tables, 7)
    assert total == 8378070864 and per_r[-1] == 28262 and len(tables) == 29375
    r = largest_minimal_weight(7, max_weight=20, screen=16)
    assert r["exact"] and r["value"] == 18 == weight_bound(7)[0]
    assert r["histogram"] == {"17": 298, "18": 182}


def test_models_at_seven_inputs_use_the_bound_proven_here():
    """A 7-input gate (hidden gates at N = 7, a top gate over 7 hidden gates) gets the bound 18
    computed by this library, in both solvers; 8 inputs still use the published total 209."""
    pytest.importorskip("ortools")
    pytest.importorskip("pysat")
    from circuits.analysis import decide_depth2
    from circuits.analysis.synthesis.second import decide_depth2_sat
    from circuits.analysis.synthesis.weights import weight_bound_record
    from circuits.functions import majority, parity

    claim, circ = decide_depth2(majority(7), 1, time_limit=60, num_workers=1)
    assert claim.status == "feasible" and claim.hidden_weight == 18 and claim.complete
    assert decide_depth2_sat(majority(7), 1, time_limit=60)["hidden_weight"] == 18
    claim, _ = decide_depth2(parity(3), 7, time_limit=60, num_workers=1)
    assert claim.status == "feasible" and claim.top_weight == 18
    assert weight_bound_record(7) == {**weight_bound_record(7), "bound": 18, "proven_here": True}
    rec8 = weight_bound_record(8)
    assert rec8["bound"] == 209 and not rec8["proven_here"] and "published" in rec8["source"]
