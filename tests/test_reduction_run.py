"""networks.separation.reduction_run: one reduction run as a library call (what experiments/reduction.py and
the THEORY rows E8-E11 use)."""

import json

import numpy as np
import pytest

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


def test_constant_predictor_control_gets_sign_agreement_but_no_evidence(capsys):
    """The concentration step alone gives sign(M_k) = IP for any table with ρ != 0: on the best
    constant predictor the run must say so and must not claim evidence."""
    from experiments.reduction import headline

    run = reduction_run(4, 8, "relu", seed=0, control="constant")
    rec = run.record
    assert rec["sign_agrees_everywhere"] is True            # concentration works on a constant
    assert rec["beats_constant"] is False and rec["evidence"] is False
    assert abs(rec["mse"] - (0.25 - 4.0 ** -5)) < 1e-12 and abs(rec["rho"] - 4.0 ** -4) < 1e-12
    text = "\n".join(headline(rec))
    assert "NOT evidence" in text and "=> evidence" not in text
    assert "least working k" in text and "2^(n/2)" in text


def test_a_trained_run_is_evidence_and_its_files_recompute_the_printed_numbers(tmp_path):
    from circuits import load_circuit
    from experiments import reduction as E
    from networks import SigmaNetwork
    from networks.separation.ceiling import exact_correlation, label_table

    assert E.main(["--n", "4", "--width", "16", "--ball-points", "200", "--no-progress",
                   "--out", str(tmp_path)]) == 0
    rec = json.loads((tmp_path / "report.json").read_text())
    assert rec["format"] == E.REPORT_FORMAT and rec["evidence"] is True
    assert rec["files"] == {"network": "network.json", "circuit": "circuit.json"}
    net = SigmaNetwork.load(tmp_path / "network.json")
    from embeddings import HardInstance

    ex = exact_correlation(net, HardInstance(4, seed=0), label_table(4))
    assert ex["mse"] == pytest.approx(rec["mse"], abs=1e-12)
    circ = load_circuit(tmp_path / "circuit.json")
    assert circ.size == rec["threshold_circuit"]["size"]
    tc = rec["threshold_circuit"]
    assert tc["n_disagree_network_outside_band"] == 0
    links = {i["name"]: i for i in rec["bounds"]["inequalities"]}
    assert links["correlation"]["why"] == "identity" and links["correlation"]["relation"] == "≈"
    assert links["Forster"]["why"] == "automatic"
    assert links["sign(M_k) = IP"]["why"].startswith("concentration")


def test_rho_is_two_gamma_plus_half_the_second_moment_exactly():
    """The 'ρ >= 2γ' link is the identity ρ = 2γ + E[Ñ²]/2 (E(Ñ-H)² = 4·MSE): checked on random
    nets, where a failed identity would mean a wrong ρ or MSE."""
    from embeddings import HardInstance
    from networks import SigmaNetwork
    from networks.separation.ceiling import exact_correlation, label_table

    inst = HardInstance(4, seed=0)
    for seed in range(4):
        net = SigmaNetwork.random([inst.dim, 6, 1], "tanh", seed=seed, bias_scale=0.7)
        ex = exact_correlation(net, inst, label_table(4))
        gamma = 0.25 - ex["mse"]
        assert ex["rho"] == pytest.approx(2 * gamma + ex["second_moment"] / 2, abs=1e-12)


def test_the_reduction_package_only_reduces():
    """networks.reduction never reaches up to the trainer or to the experiment layer above it."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[1] / "networks" / "reduction"
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            for name in names:
                assert not name.startswith(("networks.train", "networks.separation")), \
                    f"{path.name} imports {name}"
