"""Tests of the reduction experiment (`depthsep reduce`, experiments/reduction.py) end to end: its
report, options and errors (the library steps: tests/test_reduction.py)."""

from __future__ import annotations

import json

import pytest


# ---------------------------------------------------------------- the experiment (end to end)
def test_experiment_end_to_end(tmp_path, capsys):
    import experiments.reduction as exp

    out = tmp_path / "red"
    rc = exp.main(["--n", "3", "--width", "16", "--out", str(out), "--no-progress",
                   "--ball-points", "2000"])
    text = capsys.readouterr().out
    assert rc == 0, text
    rep = json.loads((out / "report.json").read_text())
    for key in ("n", "width", "activation", "mse", "rho", "k", "least_k", "bernstein_k",
                "hoeffding_k", "min_margin", "sign_agrees_everywhere", "threshold_circuit",
                "bounds", "seed", "versions", "timings", "self_reduction_circuit"):
        assert key in rep
    assert rep["n"] == 3 and rep["width"] == 16 and rep["activation"] == "relu"
    assert rep["sign_agrees_everywhere"] is True and rep["mse"] <= 0.25 - 0.05 + 1e-12
    assert rep["training"]["reached_target"] is True
    assert rep["k"] == rep["bernstein_k"] and rep["least_k"] <= rep["k"]
    assert {"size", "depth", "max_abs_weight"} <= set(rep["threshold_circuit"])
    assert rep["bounds"]["ok"] is True and rep["staircase"]["holds"] is True
    assert rep["shift_identity"]["holds"] is True
    assert (out / "reduction.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]
    assert "chain of inequalities" in text and "QUANTISED" in text
    assert "least working k (margin > 0)" in text and f" {rep['least_k']} " in text
    assert "not itself a network of width k·w" in text


def test_experiment_epoch_cap_is_stated(tmp_path, capsys):
    import experiments.reduction as exp

    rc = exp.main(["--n", "3", "--width", "8", "--epochs", "3", "--out", str(tmp_path),
                   "--no-progress", "--ball-points", "0", "--no-circuit"])
    text = capsys.readouterr().out
    rep = json.loads((tmp_path / "report.json").read_text())
    assert rep["training"]["reached_target"] is False and rep["training"]["epochs_run"] == 3
    if "error" in rep:                      # ρ <= 0 after 3 epochs: refused, exit code 1
        assert rc == 1 and "trivial predictor" in text
    else:
        assert "STOPPED ON THE EPOCH CAP" in text


def test_experiment_sparse_option(tmp_path, capsys):
    import experiments.reduction as exp

    exp.main(["--n", "5", "--width", "6", "--sparse", "2", "--epochs", "300", "--out",
              str(tmp_path), "--no-progress", "--ball-points", "0", "--no-circuit", "--k", "2"])
    rep = json.loads((tmp_path / "report.json").read_text())
    assert "error" not in rep, rep.get("error")
    q = rep["quantisation"]
    assert max(q["K_A"]) <= 4 and max(q["K_B"]) <= 4 and rep["training"]["sparse_reads"] == 2
    b = rep["bounds"]["bounds"]
    assert b["rank_V"] <= b["rank_bound_V"] < 32 and not b["rank_V_by_dimension"]
    assert b["rank_Mk"] <= b["rank_bound_Mk"]


def test_experiment_threshold_and_sweep(tmp_path):
    import experiments.reduction as exp

    rc = exp.main(["--n", "3", "--width", "32", "--activation", "threshold", "--out",
                   str(tmp_path / "thr"), "--no-progress", "--ball-points", "100"])
    rep = json.loads((tmp_path / "thr" / "report.json").read_text())
    assert rep["activation"] == "heaviside" and "conversion" in rep["training"]
    assert rc == 0 and rep["sign_agrees_everywhere"] and rep["chain_ok"]
    rc = exp.main(["--sweep", "--sweep-n", "3,4", "--sweep-widths", "32", "--out",
                   str(tmp_path / "sw"), "--no-progress", "--no-circuit", "--ball-points", "0"])
    sw = json.loads((tmp_path / "sw" / "sweep.json").read_text())
    assert rc == 0 and [r["n"] for r in sw["rows"]] == [3, 4]
    assert all(r["least_k"] >= 1 and r["bernstein_k_positive"] >= 1 for r in sw["rows"])
    assert (tmp_path / "sw" / "sweep.png").read_bytes()[:4] == b"\x89PNG"


def test_experiment_cli_errors(capsys):
    import experiments.reduction as exp

    with pytest.raises(SystemExit) as e:
        exp.main(["--help"])
    assert e.value.code == 0 and "--activation" in capsys.readouterr().out
    for bad in (["--k", "0"], ["--gamma", "0.3"], ["--activation", "nope"], ["--n", "0"]):
        with pytest.raises(SystemExit) as e:
            exp.main(bad)
        assert e.value.code == 2


# ---------------------------------------------------------------- slow: larger cases
@pytest.mark.slow
def test_experiment_default_size(tmp_path):
    import experiments.reduction as exp

    rc = exp.main(["--out", str(tmp_path), "--no-progress"])
    rep = json.loads((tmp_path / "report.json").read_text())
    assert rc == 0 and rep["n"] == 6 and rep["sign_agrees_everywhere"]


@pytest.mark.slow
def test_experiment_n7_trained_net_margin(tmp_path):                 # E9 (iii), E10
    import experiments.reduction as exp

    rc = exp.main(["--n", "7", "--width", "64", "--out", str(tmp_path), "--no-progress",
                   "--no-circuit", "--ball-points", "1000"])
    rep = json.loads((tmp_path / "report.json").read_text())
    assert rc == 0
    b = rep["bounds"]["bounds"]
    assert rep["sign_agrees_everywhere"] and rep["chain_ok"]
    assert rep["min_margin"] >= rep["rho_q"] / 2
    assert 2 ** 3.5 <= b["rank_Mk"] <= b["rank_bound_Mk"]
