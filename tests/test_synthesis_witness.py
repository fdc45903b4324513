"""Lower-bound witnesses for the largest minimal per-gate weight: the 8-input witness proved by
the MILP and by CP-SAT, a 5-input one equal to the computed maximum, wrong claims rejected."""

import pytest

pytest.importorskip("ortools")

from circuits.analysis.synthesis.weights import weight_bound                 # noqa: E402
from circuits.analysis.synthesis.witness import (WITNESS_8,                  # noqa: E402
                                                 check_weight_witness)
from circuits.utils.errors import DepthsepError, InvalidArgumentError       # noqa: E402


def test_eight_input_witness_is_proved_by_both_solvers():
    w, t, W = WITNESS_8
    r = check_weight_witness(w, t, W)
    assert r["k"] == 8 and r["proved"] and r["milp"]["value"] == W
    assert r["cpsat_below"] == "infeasible"
    # above the 7-input maximum proven here, below the published bound the model uses
    assert weight_bound(7)[0] < W <= weight_bound(8)[0]


def test_five_input_witness_reaches_the_computed_maximum():
    r = check_weight_witness([5, 3, 2, 2, 1], 5, 5)
    assert r["proved"] and weight_bound(5)[0] == 5


@pytest.mark.parametrize("claimed", [4, 6])
def test_wrong_claims_are_rejected(claimed):
    with pytest.raises(DepthsepError, match="witness claim"):
        check_weight_witness([5, 3, 2, 2, 1], 5, claimed)


def test_bad_witness_input():
    with pytest.raises(InvalidArgumentError, match="constant"):
        check_weight_witness([1, 1], 5, 1)
    with pytest.raises(InvalidArgumentError, match="claimed"):
        check_weight_witness([1, 1], 1, 0)
