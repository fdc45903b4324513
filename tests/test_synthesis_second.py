"""The second solver (bit-blasted CNF, python-sat) against CP-SAT: they agree on every decision
at N <= 5 that the suite runs, a planted disagreement is reported, and the bit-vector arithmetic
matches integer arithmetic on every small value."""

import numpy as np
import pytest

pytest.importorskip("ortools")
pytest.importorskip("pysat")

from circuits.analysis import decide_depth2, least_depth2                   # noqa: E402
from circuits.analysis.synthesis._bitblast import CNF                        # noqa: E402
from circuits.analysis.synthesis.second import (decide_depth2_sat,          # noqa: E402
                                                second_opinion)
from circuits.analysis.threshold_search import _codes_to_tables             # noqa: E402
from circuits.functions import inner_product_mod2, majority, parity        # noqa: E402
from circuits.simulate import truth_table                                   # noqa: E402
from circuits.utils.errors import InvalidArgumentError                      # noqa: E402


def test_bitvector_arithmetic_matches_integers():
    from pysat.solvers import Solver

    B = 4
    for x in range(-8, 8):
        for y in range(-8, 8):
            c = CNF()
            xv, yv = [c.new() for _ in range(B)], [c.new() for _ in range(B)]
            for bits, val in ((xv, x), (yv, y)):
                for i, b in enumerate(bits):
                    c.add([b if (val >> i) & 1 else -b])
            ge, sm = c.geq(xv, yv), c.plus(xv, yv)
            with Solver(name="cadical195", bootstrap_with=c.clauses) as s:
                assert s.solve()
                model = set(s.get_model())
            assert (ge in model) == (x >= y), (x, y)
            if -8 <= x + y < 8:
                assert c.value(sm, model) == x + y
            assert c.value(xv, model) == x


def _agree(f, sizes, order=True):
    for s in sizes:
        cp, _ = decide_depth2(f, s, time_limit=30, num_workers=1)
        sat = decide_depth2_sat(f, s, time_limit=30, order=order)
        assert cp.status == sat["status"] != "unknown", (f.tolist(), s)
        if sat["circuit"] is not None:
            assert np.array_equal(truth_table(sat["circuit"]), f)
            assert sat["circuit"].layers[0].n_gates == s


@pytest.mark.parametrize("n", [1, 2])
def test_solvers_agree_on_every_function(n):
    for f in _codes_to_tables(np.arange(1 << (1 << n), dtype=np.uint64), n):
        _agree(f, range(1, n + 2), order=bool(f[0]))


@pytest.mark.parametrize("rep", range(14))
def test_solvers_agree_on_every_npn_class_of_three_inputs(rep):
    """All 14 NPN classes of 3 inputs (every function of 3 inputs is one of them up to negating
    and permuting inputs and the output, which keeps every decision), every size s = 1..4: the
    least size of each class is at most 3, so both sides of every boundary are decided."""
    from circuits.analysis.synthesis.catalogue import npn_classes

    _agree(npn_classes(3)[rep], (1, 2, 3, 4))


def _catalogue_rows(name):
    from pathlib import Path
    import json

    path = Path(__file__).resolve().parents[1] / f"docs/figures/least_catalogue_{name}.json"
    return [r for r in json.loads(path.read_text())["rows"] if r["size"] is not None]


def _agree_at_least(rows, time_limit):
    """Both solvers at every row's least size (feasible) and one below (infeasible)."""
    for r in rows:
        f = np.array([int(c) for c in r["table"]], dtype=np.uint8)
        sizes = [s for s in (r["size"] - 1, r["size"]) if s >= 1]
        for s in sizes:
            cp, _ = decide_depth2(f, s, time_limit=time_limit, num_workers=1)
            sat = decide_depth2_sat(f, s, time_limit=time_limit)
            want = "feasible" if s == r["size"] else "infeasible"
            assert cp.status == sat["status"] == want, (r["name"], s, cp.status, sat["status"])
            if sat["circuit"] is not None:
                assert np.array_equal(truth_table(sat["circuit"]), f)


@pytest.mark.slow
def test_solvers_agree_on_every_npn_class_of_four_inputs_at_its_least_size():
    """Every one of the 222 NPN classes of 4 inputs at its least size (both feasible) and its
    least size - 1 (both infeasible; the least sizes from the catalogue record)."""
    rows = _catalogue_rows("npn4")
    assert len(rows) == 222
    _agree_at_least(rows, 120)


def test_solvers_agree_on_npn4_classes_sample():
    """The default run's share of the slow test above: every 20th class and parity."""
    rows = _catalogue_rows("npn4")
    _agree_at_least(rows[::20] + rows[-1:], 60)


@pytest.mark.slow
def test_solvers_agree_on_the_symmetric_functions_of_five_inputs():
    """The 19 symmetric classes of 5 inputs at their least size and least size - 1."""
    rows = _catalogue_rows("sym5")
    assert len(rows) == 19
    _agree_at_least(rows, 300)


def test_solvers_agree_at_four_and_five_inputs():
    rng = np.random.default_rng(29)
    for f, sizes in [(parity(4), (3, 4)), (inner_product_mod2(2), (1, 2)), (majority(5), (1,)),
                     (parity(5), (3,)), (rng.integers(0, 2, 16, dtype=np.uint8), (2, 3)),
                     (rng.integers(0, 2, 32, dtype=np.uint8), (2,))]:
        _agree(f, sizes)


def test_least_depth2_confirms_every_refutation():
    r = least_depth2(parity(4), time_limit=30, num_workers=1)
    assert r.size == 4 and r.refutations_confirmed and not r.disagreements
    assert [c.second["verdict"] for c in r.claims[:-1]] == ["confirmed"] * 3
    assert r.claims[-1].second is None
    assert "every refutation confirmed by the second solver" in r.summary()


def test_planted_disagreement_is_reported():
    """CP-SAT lies "infeasible" everywhere: the SAT solver finds a circuit at s = 3, the result
    names the disagreement and uses the re-verified circuit."""
    from ortools.sat.python import cp_model

    def liar(solver, model):
        return cp_model.INFEASIBLE
    r = least_depth2(parity(3), _solve=liar, num_workers=1, cross_check=False, time_limit=20)
    assert r.disagreements == [3] and "DISAGREE at s = 3" in r.summary()
    assert r.size == 3 and np.array_equal(truth_table(r.circuit), parity(3))
    assert [c.second["verdict"] for c in r.claims] == ["confirmed", "confirmed", "disagrees"]
    assert r.as_dict()["disagreements"] == [3]


def test_planted_sat_liar_disagrees_with_a_feasible_claim():
    claim, circ = decide_depth2(parity(3), 3, time_limit=20, num_workers=1)
    op = second_opinion(parity(3), claim, _solve=lambda sat: False)
    assert claim.status == "feasible" and op["verdict"] == "disagrees"
    op = second_opinion(parity(3), claim, time_limit=20)
    assert op["verdict"] == "confirmed"


def test_timeout_is_unknown_and_unconfirmed():
    r = decide_depth2_sat(parity(5), 4, time_limit=0.2)
    assert r["status"] == "unknown" and r["circuit"] is None and r["wall_s"] < 10
    res = least_depth2(parity(3), time_limit=20, num_workers=1, confirm=1e-4)
    assert res.size == 3 and not res.refutations_confirmed
    assert "by CP-SAT alone" in res.summary()


def test_no_child_process_falls_back_to_an_interruptible_solver(monkeypatch):
    """Inside a daemonic worker no child process can start: the in-process solver answers."""
    import multiprocessing.process as mpp

    from circuits.analysis.synthesis import second

    def refuse(self):
        raise AssertionError("daemonic processes are not allowed to have children")
    monkeypatch.setattr(mpp.BaseProcess, "start", refuse)
    r = second.decide_depth2_sat(parity(3), 2, time_limit=20)
    assert r["status"] == "infeasible" and r["solver"] == "python-sat glucose4"
    assert second.decide_depth2_sat(parity(3), 3, time_limit=20)["status"] == "feasible"
    assert second.decide_depth2_sat(parity(5), 4, time_limit=0.5)["status"] == "unknown"


def test_solvers_agree_with_direct_wires():
    """Input-to-top wires in both encodings: the same status at both sides of each least size,
    every SAT witness re-verified (and checked here against the table)."""
    rng = np.random.default_rng(29)
    for f, sizes in [(parity(4), (1, 2)), (parity(5), (1, 2)), (inner_product_mod2(2), (1,)),
                     (rng.integers(0, 2, 16, dtype=np.uint8), (1, 2))]:
        for s in sizes:
            cp, _ = decide_depth2(f, s, direct=True, time_limit=30, num_workers=1)
            sat = decide_depth2_sat(f, s, direct=True, time_limit=30)
            assert cp.status == sat["status"] != "unknown", (s, cp.status, sat["status"])
            if sat["circuit"] is not None:
                assert np.array_equal(truth_table(sat["circuit"]), f)
    assert decide_depth2_sat(parity(4), 1, direct=True)["status"] == "infeasible"
    r = least_depth2(parity(5), direct=True, time_limit=30, num_workers=1)
    assert r.size == 2 and r.refutations_confirmed
    assert r.claims[0].second["verdict"] == "confirmed"          # s = 1 refuted by both
    with pytest.raises(InvalidArgumentError, match="fan-in"):
        decide_depth2_sat(parity(6), 3, direct=True)
