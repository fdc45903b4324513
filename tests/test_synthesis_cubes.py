"""The cube split (one sub-problem per NP class of the top gate) against the whole CP-SAT model,
the parallel driver's backends, its resumable state file and its honest combined status."""

import json

import numpy as np
import pytest

pytest.importorskip("ortools")

from circuits.analysis import decide_depth2                                 # noqa: E402
from circuits.analysis.synthesis.cubes import (_extreme_points,             # noqa: E402
                                               _symmetric_blocks, top_gate_cubes)
from circuits.analysis.synthesis.parallel import decide_by_cubes            # noqa: E402
from circuits.analysis.threshold_search import _codes_to_tables             # noqa: E402
from circuits.functions import inner_product_mod2, majority, parity        # noqa: E402
from circuits.simulate import truth_table                                   # noqa: E402
from circuits.threshold import ThresholdCircuit, ThresholdLayer            # noqa: E402


def _circuit(witness):
    return ThresholdCircuit(tuple(ThresholdLayer(np.array(x["weights"]), np.array(x["thresholds"]))
                                  for x in witness))


def _same(f, s, **kw):
    whole, _ = decide_depth2(f, s, time_limit=30, num_workers=1)
    cut = decide_by_cubes(f, s, time_limit=30, progress=False, **kw)
    assert whole.status == cut["status"] != "unknown", (f.tolist(), s)
    if cut["witness"] is not None:
        c = _circuit(cut["witness"])
        assert np.array_equal(truth_table(c), f) and c.layers[0].n_gates == s
    return cut


def test_cube_split_equals_whole_model_on_every_function_of_two_inputs():
    for f in _codes_to_tables(np.arange(16, dtype=np.uint64), 2):
        for s in (1, 2):
            _same(f, s, stop_on_feasible=False)


def test_cube_split_equals_whole_model_on_small_cases():
    rng = np.random.default_rng(5)
    for f, sizes in [(parity(3), (2, 3)), (inner_product_mod2(2), (1, 2)), (parity(4), (3, 4)),
                     (majority(5), (1,)), (rng.integers(0, 2, 8, dtype=np.uint8), (1, 2, 3)),
                     (rng.integers(0, 2, 16, dtype=np.uint8), (2, 3))]:
        for s in sizes:
            _same(f, s)


def test_cubes_are_the_np_classes_and_their_extremes():
    assert [len(top_gate_cubes(s)) for s in range(1, 5)] == [3, 5, 10, 27]
    maj3 = majority(3)
    mf, mt = _extreme_points(maj3, 3)
    assert sorted(mf) == [1, 2, 4] and sorted(mt) == [3, 5, 6]
    assert _symmetric_blocks(maj3, 3) == [(0, 1), (1, 2)]


def test_processes_backend_and_resumable_state(tmp_path):
    state = tmp_path / "cubes.json"
    r = decide_by_cubes(parity(3), 2, processes=2, state=state, progress=False)
    assert r["status"] == "infeasible" and r["infeasible"] == r["cubes"] == 5
    rec = json.loads(state.read_text())
    assert len(rec["cubes"]) == 5
    again = decide_by_cubes(parity(3), 2, state=state, progress=False)
    assert again["status"] == "infeasible" and again["cube_seconds"] == pytest.approx(r["cube_seconds"])
    with pytest.raises(Exception, match="another decision"):
        decide_by_cubes(parity(3), 3, state=state, progress=False)


def test_one_unknown_cube_makes_the_answer_unknown(tmp_path, monkeypatch):
    from circuits.analysis.synthesis import parallel

    real = parallel._task

    def flaky(table, g, time_limit, num_workers, *rest):
        r = real(table, g, time_limit, num_workers, *rest)
        return dict(r, status="unknown") if g == top_gate_cubes(2)[2].tolist() else r
    monkeypatch.setattr(parallel, "_task", flaky)
    state = tmp_path / "s.json"
    r = decide_by_cubes(parity(3), 2, state=state, progress=False)
    assert r["status"] == "unknown" and r["unknown"] == [2] and r["infeasible"] == 4
    monkeypatch.undo()
    r = decide_by_cubes(parity(3), 2, state=state, progress=False)      # resumes the open cube
    assert r["status"] == "infeasible" and r["unknown"] == []
    cube2 = json.loads(state.read_text())["cubes"]["2"]                 # the open run is kept
    assert cube2["status"] == "infeasible" and cube2["earlier"][0]["status"] == "unknown"


def test_dask_backend():
    distributed = pytest.importorskip("distributed")
    with distributed.Client(processes=False, n_workers=1, threads_per_worker=2,
                            dashboard_address=None) as client:
        r = decide_by_cubes(parity(3), 3, client=client, progress=False)
    assert r["status"] == "feasible"
    assert np.array_equal(truth_table(_circuit(r["witness"])), parity(3))


def test_cli_least_circuit_cubes(tmp_path, capsys):
    from experiments.least_circuit import main

    rc = main(["--function", "parity", "--n", "3", "--cubes", "--state", str(tmp_path / "st.json"),
               "--out", str(tmp_path), "--no-progress"])
    out = capsys.readouterr().out
    assert rc == 0 and "size = 3" in out and "cube split" in out and "top gate fixed" in out
    assert "every refutation confirmed by the second solver" in out and "{" not in out
    assert (tmp_path / "st_s2.json").exists()
    rec = json.loads((tmp_path / "least_circuit.json").read_text())
    assert rec["size"] == 3 and rec["refutations_confirmed"] is True


def test_cli_stdout_has_no_raw_dicts(tmp_path, capsys):
    from experiments.least_circuit import main

    assert main(["--function", "ip", "--n", "2", "--depth3", "2,1", "--workers", "1",
                 "--out", str(tmp_path), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "layer 1: W = " in out and "{" not in out
    assert main(["--function", "parity", "--n", "3", "--out", str(tmp_path),
                 "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "python-sat cadical195 confirmed" in out and "{" not in out
