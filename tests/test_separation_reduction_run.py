"""networks.separation.reduction_run: one reduction run as a library call (what experiments/reduction.py and
the THEORY rows E8-E11 use)."""

import json

import numpy as np

from networks.separation.reduction_run import reduction_run


def test_reduction_run_record_and_objects():
    run = reduction_run(3, 16, "relu", seed=0, ball_points=500)
    rec = run.record
    assert run.ok and run.report is not None and run.staircase is not None
    assert rec["n"] == 3 and rec["width"] == 16 and rec["sign_agrees_everywhere"] is True
    assert rec["staircase"]["holds"] and rec["shift_identity"]["holds"]
    assert rec["rho"] > 0 and abs(rec["gamma"] - (0.25 - rec["mse"])) < 1e-15
    json.dumps({k: v for k, v in rec.items()})              # JSON-ready, no objects inside
    X = run.instance.support().points
    assert np.array_equal(run.network(X), run.network(X))
    assert run.report.certificate.ok


def test_reduction_run_stops_when_the_net_does_not_beat_the_trivial_predictor():
    # seed 3, width 1, no training: rho = -0.371 (measured); the run must stop before step 1
    run = reduction_run(2, 1, "relu", seed=3, epochs=0, gamma=0.2, ball_points=0)
    assert run.record["rho"] < 0 and "trivial predictor" in run.record["error"]
    assert run.report is None and run.staircase is None and not run.ok
    assert run.record["sign_agrees_everywhere"] is False and run.record["chain_ok"] is False
