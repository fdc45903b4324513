"""Refuting cubes on restrictions of f: the restriction against a naive twin, the orbit
reduction against brute-force equivalence, soundness against the whole cube (a restriction
never refutes a cube that has a circuit), the drivers of both solvers, the CLI."""

import itertools
import json

import numpy as np
import pytest

pytest.importorskip("ortools")

from circuits.analysis.synthesis.cubes import solve_cube, top_gate_cubes      # noqa: E402
from circuits.analysis.synthesis.parallel import decide_by_cubes            # noqa: E402
from circuits.analysis.synthesis.restrict import (restriction, restrictions,  # noqa: E402
                                                  solve_cube_restricted)
from circuits.functions import inner_product_mod2, parity                   # noqa: E402
from circuits.hypercube import points                                       # noqa: E402
from circuits.utils.errors import InvalidArgumentError                      # noqa: E402


def _naive_restriction(t, n, fixed):
    """Loops only: the inputs f|fixed depends on, and its table over them."""
    def value(bits):
        return int(t[sum(b << i for i, b in enumerate(bits))])

    free = [i for i in range(n) if i not in fixed]

    def restricted(assign):                    # assign: dict over free inputs
        bits = [fixed.get(i, assign.get(i, 0)) for i in range(n)]
        return value(bits)
    essential = []
    for i in free:
        for rest in itertools.product((0, 1), repeat=len(free)):
            a = dict(zip(free, rest))
            if restricted({**a, i: 0}) != restricted({**a, i: 1}):
                essential.append(i)
                break
    table = [restricted(dict(zip(essential, bits[::-1])))
             for bits in itertools.product((0, 1), repeat=len(essential))]
    # itertools.product runs the last position fastest: reversed, bit 0 is the lowest input
    return np.array(table, dtype=np.uint8), tuple(essential)


def test_restriction_matches_the_naive_twin():
    rng = np.random.default_rng(3)
    cases = [(inner_product_mod2(2), 4), (parity(4), 4)]
    cases += [(rng.integers(0, 2, 32, dtype=np.uint8), 5) for _ in range(4)]
    cases += [((rng.random(32) < 0.15).astype(np.uint8), 5) for _ in range(2)]
    for t, n in cases:
        for r in (1, 2, 3):
            for inputs in itertools.combinations(range(n), r):
                for values in itertools.product((0, 1), repeat=r):
                    fixed = dict(zip(inputs, values))
                    got, kept = restriction(t, fixed)
                    want, wkept = _naive_restriction(np.asarray(t), n, fixed)
                    assert kept == wkept and np.array_equal(got, want), (t.tolist(), fixed)


def test_restriction_of_ip_drops_the_partner_and_rejects_bad_input():
    t3 = np.asarray(inner_product_mod2(3), dtype=np.uint8)
    t4 = inner_product_mod2(4)
    got, kept = restriction(t4, {0: 0})        # x_1 = 0: y_1 no longer matters
    assert len(kept) == 6 and 4 not in kept and np.array_equal(got, t3)
    got, kept = restriction(t4, {0: 1, 4: 1})  # x_1 = y_1 = 1: the complement of IP_3
    assert np.array_equal(got, 1 - t3)
    with pytest.raises(InvalidArgumentError, match="fixed"):
        restriction(t4, {9: 1})
    with pytest.raises(InvalidArgumentError, match="fixed"):
        restriction(t4, {0: 2})
    with pytest.raises(InvalidArgumentError, match="max_fixed"):
        restrictions(t4, 0)


def _np_class(t, n):
    """The set of tables equivalent to t under signed input permutations (brute force)."""
    Z = points(n).astype(np.int64)
    w = 1 << np.arange(n, dtype=np.int64)
    out = set()
    for perm in itertools.permutations(range(n)):
        for neg in range(1 << n):
            zz = Z[:, list(perm)] ^ ((neg >> np.arange(n)) & 1)
            out.add(np.asarray(t)[zz @ w].tobytes())
    return out


def test_one_restriction_per_orbit_and_none_lost():
    for t, n in [(inner_product_mod2(2), 4), (parity(4), 4)]:
        reps = restrictions(t, 2)
        classes = [(r["inputs"], _np_class(r["table"], r["inputs"])) for r in reps]
        # every non-constant restriction fixing 1 or 2 inputs is equivalent to a kept one
        for r in (1, 2):
            for inputs in itertools.combinations(range(n), r):
                for values in itertools.product((0, 1), repeat=r):
                    tab, kept = restriction(t, dict(zip(inputs, values)))
                    if tab.min() == tab.max():
                        continue
                    assert any(k == len(kept) and tab.tobytes() in c for k, c in classes)
        assert [r["inputs"] for r in reps] == sorted(r["inputs"] for r in reps)
    # parity: every restriction is parity of fewer inputs or its complement, one per size
    assert [r["inputs"] for r in restrictions(parity(5), 2)] == [3, 4]
    assert [r["inputs"] for r in restrictions(inner_product_mod2(4), 2)] == [4, 5, 6, 6, 6, 7]


def test_a_restriction_never_refutes_a_cube_with_a_circuit():
    rng = np.random.default_rng(11)
    fs = [rng.integers(0, 2, 16, dtype=np.uint8) for _ in range(3)]
    fs += [rng.integers(0, 2, 32, dtype=np.uint8), parity(4), inner_product_mod2(2)]
    refuted_by_restriction = 0
    for f in fs:
        for s in (2, 3):
            for g in top_gate_cubes(s):
                whole = solve_cube(f, g, time_limit=30)
                r = solve_cube_restricted(f, g, 2, time_limit=30)
                assert whole["status"] != "unknown" and r["status"] != "unknown"
                assert r["status"] == whole["status"], (f.tolist(), g.tolist())
                if r["by"] is not None and r["by"]["fixed"]:
                    assert r["status"] == "infeasible"
                    refuted_by_restriction += 1
                assert r["wall_s"] == pytest.approx(sum(a["wall_s"] for a in r["attempts"]),
                                                    abs=1e-3)
    assert refuted_by_restriction > 10            # the shortcut is exercised, not bypassed


def test_ip4_cube_the_whole_model_left_open_falls_to_a_restriction():
    # cube 5 of IP_4 with 4 gates: CP-SAT's whole cube was unknown after 240 s; a restriction
    # to 6 inputs (IP_2 XOR y_1 XOR y_2 at x_1 = x_2 = 1) has no circuit with that top gate
    g = top_gate_cubes(4)[5]
    r = solve_cube_restricted(inner_product_mod2(4), g, 2, time_limit=60, whole=False)
    assert r["status"] == "infeasible" and r["by"]["inputs"] == 6
    tab, _ = restriction(inner_product_mod2(4), {int(i): b for i, b in r["by"]["fixed"].items()})
    assert solve_cube(tab, g, time_limit=60)["status"] == "infeasible"
    assert all(a["status"] == "feasible" for a in r["attempts"][:-1])


def test_drivers_of_both_solvers_with_restrictions(tmp_path):
    from circuits.analysis.synthesis.second_cubes import confirm_by_cubes

    cut = decide_by_cubes(parity(4), 3, time_limit=30, progress=False, restrict=2)
    assert cut["status"] == "infeasible" and cut["unknown"] == []
    state = tmp_path / "p.json"                    # the same on two worker processes
    two = decide_by_cubes(parity(4), 3, time_limit=30, progress=False, restrict=2, processes=2,
                          state=state)
    assert two["status"] == "infeasible"
    assert all(r["by"]["fixed"] for r in json.loads(state.read_text())["cubes"].values()
               if r["attempts"][0]["status"] == "infeasible")
    sat = confirm_by_cubes(parity(4), 3, time_limit=30, progress=False, restrict=2)
    assert sat["status"] == "infeasible"
    feas = decide_by_cubes(parity(4), 4, time_limit=30, progress=False, restrict=2)
    assert feas["status"] == "feasible" and feas["witness"] is not None
    with pytest.raises(InvalidArgumentError, match="restrict"):
        decide_by_cubes(parity(4), 3, restrict=4, progress=False)
    with pytest.raises(InvalidArgumentError, match="solver"):
        solve_cube_restricted(parity(4), top_gate_cubes(3)[1], 1, solver="z3")


def test_a_named_restriction_is_tried_first_and_hints_come_from_a_record():
    from circuits.analysis.synthesis.second_cubes import restriction_hints

    f, g = inner_product_mod2(2), top_gate_cubes(2)[1]
    default = solve_cube_restricted(f, g, 2, time_limit=30, whole=False)
    r = solve_cube_restricted(f, g, 2, time_limit=30, whole=False, first={3: 1, 1: 0})
    assert r["attempts"][0]["fixed"] == {"3": 1, "1": 0}
    assert len(r["attempts"]) <= len(default["attempts"]) + 1
    cubes = {"0": {"status": "infeasible", "by": {"fixed": {"2": 1}}},
             "1": {"status": "infeasible", "by": {"fixed": {}}},
             "2": {"status": "unknown", "by": None}, "3": {"status": "feasible"}}
    assert restriction_hints(cubes) == {0: {2: 1}}


def test_a_rerun_keeps_what_an_earlier_run_spent(tmp_path):
    state = tmp_path / "cubes.json"
    f = parity(4)
    decide_by_cubes(f, 3, time_limit=30, progress=False, state=state)
    rec = json.loads(state.read_text())
    # pretend an earlier run left cube 4 open after 7 seconds
    rec["cubes"]["4"] = {"status": "unknown", "wall_s": 7.0, "witness": None}
    state.write_text(json.dumps(rec))
    r = decide_by_cubes(f, 3, time_limit=30, progress=False, state=state, restrict=2,
                        whole=False)
    cube4 = json.loads(state.read_text())["cubes"]["4"]
    assert cube4["status"] == "infeasible" and cube4["by"]["fixed"]
    # an open cube that a run does not reach stays in the file
    rec = json.loads(state.read_text())
    rec["cubes"]["5"] = {"status": "unknown", "wall_s": 3.0, "witness": None}
    state.write_text(json.dumps(rec))
    from circuits.analysis.synthesis import parallel

    real = parallel._task

    def only_cube_4(table, g, *rest):          # the run reaches cube 4 only, then stops
        if g != top_gate_cubes(3)[4].tolist():
            raise KeyboardInterrupt
        return real(table, g, *rest)
    rec["cubes"]["4"] = {"status": "unknown", "wall_s": 1.0, "witness": None}
    state.write_text(json.dumps(rec))
    import unittest.mock as mock

    with mock.patch.object(parallel, "_task", only_cube_4), pytest.raises(KeyboardInterrupt):
        decide_by_cubes(f, 3, time_limit=30, progress=False, state=state)
    cubes = json.loads(state.read_text())["cubes"]
    assert cubes["4"]["status"] == "infeasible" and cubes["5"]["status"] == "unknown"
    assert cube4["earlier"] == [{"status": "unknown", "wall_s": 7.0, "witness": None}]
    assert r["cube_seconds"] >= 7.0 and r["status"] == "infeasible"
    # the second solver's driver keeps them too
    from circuits.analysis.synthesis.second_cubes import confirm_by_cubes

    sat_state = tmp_path / "sat.json"
    confirm_by_cubes(f, 3, time_limit=30, progress=False, state=sat_state)
    rec = json.loads(sat_state.read_text())
    rec["cubes"]["4"] = {"status": "unknown", "wall_s": 5.0, "witness": None}
    sat_state.write_text(json.dumps(rec))
    r = confirm_by_cubes(f, 3, time_limit=30, progress=False, state=sat_state, restrict=2)
    cube4 = json.loads(sat_state.read_text())["cubes"]["4"]
    assert cube4["status"] == "infeasible" and cube4["earlier"][0]["wall_s"] == 5.0
    assert r["cube_seconds"] >= 5.0


def test_cli_restrict(tmp_path, capsys):
    from experiments.least_circuit import main

    state = tmp_path / "par4.json"
    assert main(["--function", "parity", "--n", "4", "--lower", "3", "--max-size", "4",
                 "--cubes", "--restrict", "2", "--time-limit", "30", "--workers", "1",
                 "--state", str(state), "--no-progress", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "s = 3: infeasible" in out and "restrictions of f fixing up to 2 inputs" in out
    assert "2 inputs: |w| <= 1 (proven here)" in out       # the bound of PAR_2's cubes
    # the refutation is checked by the second solver cube by cube, resumable from its own file
    assert "cube split (10 top-gate classes) confirmed" in out
    sat = json.loads((tmp_path / "par4_s3_sat.json").read_text())
    assert len(sat["cubes"]) == 10 and all(r["status"] == "infeasible"
                                           for r in sat["cubes"].values())
    rec = json.loads((tmp_path / "least_circuit.json").read_text())
    assert rec["claims"][0]["second"]["verdict"] == "confirmed"
    # the second solver tried first the restriction that refuted each cube for CP-SAT
    cp = json.loads((tmp_path / "par4_s3.json").read_text())["cubes"]
    hinted = [i for i, r in cp.items() if r["by"]["fixed"]]
    assert hinted
    for i in hinted:
        assert sat["cubes"][i]["attempts"][0]["fixed"] == cp[i]["by"]["fixed"]
    for bad, msg in [(["--restrict", "1"], "add --cubes"),
                     (["--cubes", "--restrict-only"], "needs --restrict")]:
        with pytest.raises(SystemExit):
            main(["--function", "parity", "--n", "3", "--out", str(tmp_path), *bad])
        assert msg in capsys.readouterr().err
