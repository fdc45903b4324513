"""least_depth2 (CP-SAT exact synthesis, issue 21) against its naive twin, the exhaustive
enumerator min_depth2_size, plus witness re-verification and planted wrong solver answers."""

import numpy as np
import pytest

pytest.importorskip("ortools")

from circuits.analysis import exact_synthesis as ES                        # noqa: E402
from circuits.analysis import least_depth2, min_depth2_size, decide_depth2  # noqa: E402
from circuits.analysis.threshold_search import _codes_to_tables            # noqa: E402
from circuits.functions import inner_product_mod2, majority, parity        # noqa: E402
from circuits.simulate import truth_table                                   # noqa: E402
from circuits.utils.errors import DepthsepError, InvalidArgumentError      # noqa: E402


def _check(f, **kw):
    r = least_depth2(f, time_limit=20, num_workers=1, **kw)
    assert r.status == "optimal" and r.complete
    assert np.array_equal(truth_table(r.circuit), np.asarray(f, dtype=np.uint8))
    assert r.circuit.layers[0].n_gates == r.size
    return r


@pytest.mark.parametrize("n", [1, 2, 3])
def test_twin_every_function(n):
    """The enumerator and CP-SAT agree on every function of N <= 3 (256 at N = 3)."""
    tables = _codes_to_tables(np.arange(1 << (1 << n), dtype=np.uint64), n)
    for f in tables:
        naive = min_depth2_size(f, 4)
        r = _check(f, cross_check=False)
        assert r.size == naive.size, f.tolist()


def test_twin_sample_n4():
    """At N = 4 the enumerator finishes quickly for s <= 2: both agree on "size <= 2"."""
    rng = np.random.default_rng(21)
    sample = [inner_product_mod2(2), majority(4), parity(4)]
    sample += list(rng.integers(0, 2, size=(3, 16), dtype=np.uint8))
    for f in sample:
        r = _check(f, cross_check=False)
        naive = min_depth2_size(f, 2, max_candidates=10**6)
        assert (naive.size == r.size) if r.size <= 2 else naive.size is None, f.tolist()


@pytest.mark.slow
def test_twin_sample_n4_s3():
    rng = np.random.default_rng(4)
    for f in [parity(4)] + list(rng.integers(0, 2, size=(2, 16), dtype=np.uint8)):
        r = _check(f, cross_check=False)
        naive = min_depth2_size(f, 3, max_candidates=2 * 10**8)
        assert (naive.size == r.size) if r.size <= 3 else naive.size is None


def test_published_parity_values():
    """Least hidden layer of THR o THR for PARITY_N is N (N <= 4; Neural Computation 13(2))."""
    for n in (2, 3, 4):
        r = _check(parity(n))
        assert r.size == n
        assert [c.status for c in r.claims] == ["infeasible"] * (n - 1) + ["feasible"]
        for c in r.claims:
            assert c.solver == "OR-Tools CP-SAT" and c.version and c.wall_s >= 0


def test_ip2_and_threshold_control():
    assert _check(inner_product_mod2(2)).size == 2
    assert _check(majority(5)).size == 1


def test_small_weight_is_not_complete():
    r = least_depth2(parity(3), max_weight=1, time_limit=20, num_workers=1)
    assert not r.complete and "within the weight bounds" in r.summary()
    assert r.size is not None and r.circuit.max_abs_weight <= 1


def test_direct_wires():
    # parity_2 = x0 + x1 - 2 AND(x0, x1) >= 1: one hidden gate with direct wires
    r = least_depth2(parity(2), direct=True, time_limit=20, num_workers=1)
    assert r.size == 1
    assert np.array_equal(truth_table(r.circuit), parity(2))


def test_symmetry_off_same_answer():
    for sym in (False, ("complement",), ("order",)):
        r = least_depth2(parity(3), symmetry=sym, time_limit=20, num_workers=1)
        assert r.size == 3


def test_planted_wrong_witness_caught(monkeypatch):
    real = ES._witness

    def wrong(*a, **k):
        c = real(*a, **k)
        top = c.layers[1]
        return ES.ThresholdCircuit((c.layers[0], ES.ThresholdLayer(top.weights,
                                                                    top.thresholds + 1)))
    monkeypatch.setattr(ES, "_witness", wrong)
    with pytest.raises(DepthsepError, match="rejected"):
        least_depth2(parity(3), time_limit=20, num_workers=1)


def test_planted_wrong_infeasible_caught():
    from ortools.sat.python import cp_model

    def liar(solver, model):
        return cp_model.INFEASIBLE
    with pytest.raises(DepthsepError, match="enumerator found one"):
        least_depth2(parity(2), _solve=liar, num_workers=1)


def test_unknown_is_honest():
    from ortools.sat.python import cp_model

    def timeout(solver, model):
        return cp_model.UNKNOWN
    r = least_depth2(parity(3), _solve=timeout, max_size=4, num_workers=1)
    assert r.size is None and r.status == "unknown" and r.upper is None and r.lower == 1
    assert "unknown" in r.summary()


def test_bad_arguments():
    with pytest.raises(InvalidArgumentError, match="symmetry"):
        least_depth2(parity(2), symmetry=("nope",))
    with pytest.raises(InvalidArgumentError, match="max_weight"):
        decide_depth2(parity(2), 2, max_weight=0)


def test_weight_bounds_computed_match():
    assert [ES.max_minimal_weight(k) for k in range(4)] == list(ES._MAX_SINGLE_WEIGHT[:4])


@pytest.mark.slow
def test_weight_bound_n4_and_parity5():
    assert ES.max_minimal_weight(4) == ES._MAX_SINGLE_WEIGHT[4]
    r = least_depth2(parity(5), time_limit=300, num_workers=2)
    assert r.size == 5 and r.complete        # C(5) = 5 planes slice Q5


def test_paterson_planes_slice_q6():
    assert ES.sliced_edges(ES.PATERSON_PLANES, 6) == 192
    assert ES.sliced_edges(ES.PATERSON_PLANES[:4], 6) < 192


def test_max_sliced_edges_small():
    # one plane slices at most C(n, n/2)-ish middle edges: Q3 -> 6 (the middle layer cut), Q2 -> 2
    r = ES.max_sliced_edges(3, 1, time_limit=10, num_workers=1)
    assert r["status"] == "optimal" and r["max_cut"] == 6
    assert ES.max_sliced_edges(2, 2, time_limit=10, num_workers=1)["max_cut"] == 4


@pytest.mark.slow
def test_max_sliced_edges_s43():
    r = ES.max_sliced_edges(4, 3, time_limit=120, num_workers=2)
    assert r["status"] == "optimal" and r["max_cut"] == 30       # S(4, 3) = 30


def test_cli_least_circuit_json(tmp_path, capsys):
    import json
    from experiments import cli
    rc = cli.main(["--json", "least-circuit", "--function", "ip", "--n", "2", "--no-progress",
                   "--workers", "1", "--out", str(tmp_path)])
    assert rc == 0
    rec = json.loads(capsys.readouterr().out)["files"]["least_circuit.json"]
    assert rec["size"] == 2 and rec["status"] == "optimal" and rec["complete"]
    assert rec["claims"][0]["status"] == "infeasible" and rec["claims"][0]["cross_checked"]


def test_cli_separation_table(tmp_path):
    from experiments import separation_table
    rc = separation_table.main(["--n-max", "1", "--no-progress", "--workers", "1",
                                "--out", str(tmp_path)])
    assert rc == 0
    assert (tmp_path / "separation_table.png").stat().st_size > 0
    import json
    rows = json.loads((tmp_path / "separation_table.json").read_text())["rows"]
    by = {r["function"]: r for r in rows}
    assert by["PAR_2"]["truth"] == 2 and by["MAJ_2"]["truth"] == 1
    assert all(r["best_bound"] <= r["truth"] for r in rows)


@pytest.mark.slow
def test_ip3_needs_four_gates():
    """IP_3 has no THR o THR circuit with 3 hidden gates over all integer weights (issue 21)."""
    c, w = decide_depth2(inner_product_mod2(3), 3, time_limit=600, num_workers=2)
    assert c.status == "infeasible" and c.complete and w is None


def test_ip3_four_gate_witness():
    """The 4-gate IP_3 circuit found by the plain look-ahead (issue 21): with the slow proof that
    3 gates are impossible, IP_3's least THR o THR size is 4 (below the depth-3 2n = 6)."""
    from circuits.threshold import ThresholdCircuit
    c = ThresholdCircuit.depth2([[-9, 4, -1, -9, 4, -3], [1, 3, -2, 1, 0, -2],
                                 [4, 1, 7, 3, 5, 7], [1, -9, -2, 1, -9, -7]],
                                [-13, -2, 20, -16], [-3, -3, -3, -3], -8)
    ES.verify_witness(c, inner_product_mod2(3))
    with pytest.raises(DepthsepError):
        ES.verify_witness(c, parity(6))
