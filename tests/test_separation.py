"""The E20 experiment script at a tiny size: JSON fields, consistency of the reported widths, PNG."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from experiments import separation

ROOT = Path(__file__).resolve().parents[1]

TINY = ["--n-min", "2", "--n-max", "3", "--repeats", "2", "--epochs", "400", "--patience", "100",
        "--max-width-depth2", "16", "--max-width-depth3", "8", "--max-width-rf", "64",
        "--fixed-widths", "4", "--no-progress"]


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("sep")
    assert separation.main(TINY + ["--out", str(out)]) == 0
    return out, json.loads((out / "separation.json").read_text())


def test_outputs_exist(tiny_run, capsys):
    out, record = tiny_run
    png = (out / "separation.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 1000
    assert sorted(p.name for p in out.iterdir()) == ["separation.json", "separation.png"]


def test_json_fields(tiny_run):
    _, record = tiny_run
    assert record["format"] == separation.FORMAT and record["version"] == separation.VERSION
    assert record["settings"]["seed"] == 0 and record["settings"]["repeats"] == 2
    assert {"python", "numpy", "scipy", "platform"} <= set(record["environment"])
    assert [e["n"] for e in record["results"]] == [2, 3]
    for e in record["results"]:
        n = e["n"]
        assert e["n_points"] == 4 ** n and e["d"] == 2 * e["m"] == 8 * n
        assert e["best_constant_mse"] == pytest.approx(0.25 - 4.0 ** (-n - 1))   # THEORY §2.3
        for key in ("depth2", "depth3", "random_features"):
            rec = e[key]
            assert rec["widths"] == sorted(rec["widths"])
            assert rec["best_mse"] == [min(v) for v in rec["mse"]]
            first = next((w for w, v in zip(rec["widths"], rec["best_mse"]) if v <= 0.05), None)
            assert rec["smallest_width"] == first
            assert all(0 <= v < 1.0 for vals in rec["mse"] for v in vals)
        for key in ("depth2", "depth3"):
            rec = e[key]
            assert all(len(s) == 2 and len(set(s)) == 2 for s in rec["seeds"])   # 2 distinct seeds
            assert rec["median_mse"] == [float(np.median(v)) for v in rec["mse"]]
            assert "4" in rec["at_fixed_widths"] and 4 in rec["widths"]
            assert all(1 <= ep <= 400 for eps in rec["epochs"] for ep in eps)


def test_exact_depth3_reference(tiny_run):
    for e in tiny_run[1]["results"]:
        ex = e["exact_depth3"]
        assert ex["widths"] == [e["n"], e["n"] + 1] and ex["max_width"] == e["n"] + 1
        assert ex["mse"] < 1e-20


def test_baseline_interpolates_when_width_reaches_support(tiny_run):
    # n = 2: 16 points, 16 features + bias generically interpolate -> smallest width <= 16
    e2 = tiny_run[1]["results"][0]["random_features"]
    assert e2["smallest_width"] is not None and e2["smallest_width"] <= 16


def test_recorded_mse_is_reproducible(tiny_run):
    """Retrain one recorded run from its seed and get the same MSE."""
    from embeddings import HardInstance
    from networks import SigmaNetwork, train

    _, record = tiny_run
    e = record["results"][0]
    rec = e["depth2"]
    i = rec["widths"].index(4)
    X, _, labels = HardInstance(2, seed=0).support()
    net = SigmaNetwork.random([e["d"], 4, 1], "relu", seed=rec["seeds"][i][0])
    res = train(net, X, labels.astype(float), epochs=400, lr=0.01, patience=100, tol=1e-6,
                target_loss=None, dtype="float32")
    assert res.history["final_loss"] == pytest.approx(rec["mse"][i][0], rel=1e-12)


def test_table_mentions_every_n(tiny_run):
    text = separation.table(tiny_run[1])
    assert "w2*" in text and text.count("\n") == 2 + 2


def test_helpers():
    assert separation.width_sweep(2.0, 16) == [2, 4, 8, 16]
    assert separation.width_sweep(2.0, 1) == []
    assert separation.run_seed(1, 2, 3) != separation.run_seed(1, 2, 4)
    X = np.random.default_rng(0).normal(size=(10, 3))
    y = np.arange(10.0) % 2
    assert separation.random_feature_mse(X, y, 64, m=2, seed=1) < 1e-12       # interpolation
    assert separation.random_feature_mse(X, y, 1, m=2, seed=1) > 0.0


@pytest.mark.parametrize("argv", [["--n-min", "3", "--n-max", "2"], ["--repeats", "0"],
                                  ["--width-factor", "1"], ["--fixed-widths", "a,b"],
                                  ["--n-max", "11"], ["--target", "2"]])
def test_bad_arguments(argv, capsys):
    with pytest.raises(SystemExit) as info:
        separation.main(argv)
    assert info.value.code == 2


def test_help_from_the_command_line():
    proc = subprocess.run([sys.executable, "experiments/separation.py", "--help"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "--repeats" in proc.stdout and "E20" in proc.stdout
