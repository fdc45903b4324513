"""The second solver cube by cube (bit-blasted CNF, CaDiCaL) against the CP-SAT cubes."""

import numpy as np
import pytest

pytest.importorskip("ortools")
pytest.importorskip("pysat")

from circuits.analysis.synthesis.cubes import solve_cube, top_gate_cubes          # noqa: E402
from circuits.analysis.synthesis.second_cubes import (compare_cube_states,         # noqa: E402
                                                      confirm_by_cubes, solve_cube_sat)
from circuits.functions import inner_product_mod2, majority, parity                # noqa: E402
from circuits.simulate import truth_table                                          # noqa: E402
from circuits.threshold import ThresholdCircuit, ThresholdLayer                    # noqa: E402


def _circuit(witness):
    return ThresholdCircuit(tuple(ThresholdLayer(np.array(x["weights"]), np.array(x["thresholds"]))
                                  for x in witness))


@pytest.mark.parametrize("f, s", [(parity(3), 2), (parity(3), 3), (inner_product_mod2(2), 2),
                                  (majority(3), 1), (parity(4), 3)])
def test_every_cube_decided_alike_by_both_solvers(f, s):
    for g in top_gate_cubes(s):
        a = solve_cube(f, g, time_limit=30)
        b = solve_cube_sat(f, g, time_limit=30)
        c = solve_cube_sat(f, g, time_limit=30, separation=True)
        d = solve_cube_sat(f, g, time_limit=30, separation=True, function=True, products=20)
        assert a["status"] == b["status"] == c["status"] == d["status"] != "unknown", g.tolist()
        if b["witness"] is not None:
            c = _circuit(b["witness"])
            assert np.array_equal(truth_table(c), f) and c.layers[0].n_gates == s


def test_random_functions_of_three_inputs():
    rng = np.random.default_rng(11)
    for _ in range(4):
        f = rng.integers(0, 2, 8, dtype=np.uint8)
        for g in top_gate_cubes(2):
            assert solve_cube(f, g, time_limit=30)["status"] == \
                solve_cube_sat(f, g, time_limit=30)["status"]


def test_shards_cover_the_cubes_and_resume(tmp_path):
    total = 0
    for i in range(3):
        st = tmp_path / f"s{i}.json"
        r = confirm_by_cubes(parity(3), 2, shard=(i, 3), state=st, progress=False)
        assert r["status"] == "infeasible"
        total += r["cubes"]
        again = confirm_by_cubes(parity(3), 2, shard=(i, 3), state=st, progress=False)
        assert again["cube_seconds"] == pytest.approx(r["cube_seconds"])
    assert total == len(top_gate_cubes(2))
    back = confirm_by_cubes(parity(3), 2, shard=(0, 3), reverse=True, progress=False)
    assert back["status"] == "infeasible" and back["cubes"] == 2
    assert confirm_by_cubes(parity(3), 3, progress=False)["status"] == "feasible"


def test_another_cdcl_solver_decides_the_same_cubes(tmp_path):
    # Kissat (or any python-sat solver) through the same driver: same statuses, its name kept
    st = tmp_path / "k.json"
    r = confirm_by_cubes(parity(3), 2, state=st, solver="kissat404", progress=False)
    assert r["status"] == "infeasible"
    from circuits.utils.files import read_json
    assert {c["solver"] for c in read_json(st)["cubes"].values()} == {"python-sat kissat404"}
    assert confirm_by_cubes(parity(3), 3, solver="glucose4", progress=False)["status"] == \
        "feasible"


def test_a_planted_disagreement_is_reported():
    a = {"0": {"status": "infeasible"}, "1": {"status": "infeasible"}, "2": {"status": "unknown"}}
    b = {"0": {"status": "infeasible"}, "1": {"status": "feasible"}, "2": {"status": "infeasible"}}
    assert compare_cube_states(a, b) == {"agree": [0], "disagree": [1], "open": [2]}


def test_the_agreement_check_catches_a_wrong_symmetry(monkeypatch):
    # treating the symmetries that complement f as if they kept it over-constrains the cube:
    # PAR_2 with 2 gates and top gate OR-like (cube 1) is feasible, the wrong lex-leader says no
    from circuits.analysis.synthesis import symmetry

    real = symmetry.function_symmetries
    g = top_gate_cubes(2)[1]
    assert solve_cube_sat(parity(2), g, function=True)["status"] == "feasible"
    monkeypatch.setattr(symmetry, "function_symmetries",
                        lambda t: [(pi, False) for pi, _ in real(t)])
    assert solve_cube_sat(parity(2), g, function=True)["status"] == "infeasible"
