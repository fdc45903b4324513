"""Least THR o THR o THR layers (least_depth3) against the enumerator twin and the naive
depth-3 twin, and the implied separation clauses of decide_depth3 against the model without them."""

import numpy as np
import pytest

pytest.importorskip("ortools")

from circuits.analysis import least_depth2                                 # noqa: E402
from circuits.analysis.synthesis.catalogue import npn_classes              # noqa: E402
from circuits.analysis.synthesis.depth3 import decide_depth3               # noqa: E402
from circuits.analysis.synthesis.least3 import (first_layer_by_enumeration,  # noqa: E402
                                                least_depth3)
from circuits.analysis.threshold_search import _codes_to_tables            # noqa: E402
from circuits.functions import inner_product_mod2, parity                 # noqa: E402
from circuits.utils.errors import InvalidArgumentError                     # noqa: E402


def test_separation_clauses_decide_like_the_model_without_them():
    """The clauses are implied (f is a function of each layer; the top gate is monotone after
    the complement normalisation): with and without them every decision is the same."""
    funcs = list(_codes_to_tables(np.arange(0, 256, 17, dtype=np.uint64), 3))
    funcs += [parity(3), inner_product_mod2(2)]
    for f in funcs:
        for sizes in ((1, 1), (2, 1), (1, 2), (2, 2)):
            a = decide_depth3(f, sizes, separate=True, num_workers=1, time_limit=20)[0].status
            b = decide_depth3(f, sizes, separate=False, num_workers=1, time_limit=20)[0].status
            assert a == b != "unknown", (f.tolist(), sizes)


def test_separation_refutes_parity4_three_first_layer_gates():
    """Three planes slice at most 30 of the 32 edges of Q4, so parity needs 4 first-layer gates
    in any depth; with the separation clauses CP-SAT refutes (3, 3) quickly."""
    claim, _ = decide_depth3(parity(4), (3, 3), num_workers=1, time_limit=60)
    assert claim.status == "infeasible" and claim.complete


@pytest.mark.parametrize("rep", range(14))
def test_least_depth3_on_every_npn_class_of_three_inputs(rep):
    """least_depth3 against the enumerator (first layer, second layer at it) on all 14 NPN
    classes of 3 inputs, and the total against its definition (decided here by brute force over
    the splits)."""
    f = npn_classes(3)[rep]
    d2 = least_depth2(f, time_limit=20, num_workers=1, confirm=False).size
    r = least_depth3(f, d2, time_limit=20, num_workers=1)
    assert r["decided"]
    e = first_layer_by_enumeration(f)
    assert e["first"] == (r["first"] if r["first"] <= 2 else None)
    if e["first"] is not None:
        assert e["second"] == r["second"]
    feasible = {(a, b) for a in range(1, 4) for b in range(1, 4)
                if decide_depth3(f, (a, b), num_workers=1, time_limit=20)[0].status == "feasible"}
    assert r["total"] == min(a + b for a, b in feasible)
    assert r["first"] == min(a for a, _ in feasible)
    assert r["second"] == min(b for a, b in feasible if a == r["first"])
    assert r["total"] <= d2 + 1


def test_least_depth3_parity_and_ip():
    r = least_depth3(parity(3), 3, num_workers=1)
    assert (r["first"], r["second"], r["total"]) == (3, 1, 4)
    r = least_depth3(inner_product_mod2(2), 2, num_workers=1)
    assert (r["first"], r["second"], r["total"]) == (2, 1, 3)
    with pytest.raises(InvalidArgumentError, match="depth2_size"):
        least_depth3(parity(3), 0)
    with pytest.raises(InvalidArgumentError, match="N <= 4"):
        first_layer_by_enumeration(parity(5))


def test_enumerator_finds_two_gate_first_layers():
    """IP_2 has a 2-gate THR o THR circuit, so some pair of threshold gates determines it with a
    threshold function of the pair on top (s2 = 1); parity of 4 needs more than 2."""
    e = first_layer_by_enumeration(inner_product_mod2(2))
    assert e["first"] == 2 and e["second"] == 1
    assert first_layer_by_enumeration(parity(4)) == {"first": None, "second": None}
