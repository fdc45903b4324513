"""experiments/ip_demo.py end to end: exit code 0 only when every circuit computes IP mod 2."""

import numpy as np

import circuits
from circuits.threshold import ThresholdCircuit, ThresholdLayer
from experiments import ip_demo


def test_demo_verifies_every_circuit(capsys):
    assert ip_demo.main(["--n-max", "4", "--depth2-n-max", "3"]) == 0
    out = capsys.readouterr().out
    assert "all circuits compute IP mod 2 on every input" in out
    rows = [line.split() for line in out.splitlines()[1:-1]]
    assert [(r[0], int(r[1])) for r in rows] == [("ip_depth3", 1), ("ip_depth2", 1),
                                                 ("ip_depth3", 2), ("ip_depth2", 2),
                                                 ("ip_depth3", 3), ("ip_depth2", 3),
                                                 ("ip_depth3", 4)]
    for r in rows:
        n = int(r[1])
        assert int(r[6]) == 4 ** n and int(r[7]) == (1 << (n - 1)) * ((1 << n) - 1)
        assert int(r[8]) == 0                                         # errors column


def test_negative_control_a_broken_circuit_gives_exit_code_1(capsys, monkeypatch):
    real = circuits.ip_depth3

    def broken(n):
        c = real(n)
        if n < 3:
            return c
        W = c.layers[0].weights.copy()
        W[2, 2] = 0                                     # one AND gate can never fire
        return ThresholdCircuit((ThresholdLayer(W, c.layers[0].thresholds),) + c.layers[1:])

    monkeypatch.setattr(circuits, "ip_depth3", broken)
    assert ip_demo.main(["--n-max", "3", "--depth2-n-max", "1"]) == 1
    out = capsys.readouterr().out
    assert "MISMATCH FOUND" in out
    bad = [line.split() for line in out.splitlines() if line.startswith("ip_depth3")][-1]
    assert int(bad[1]) == 3 and int(bad[8]) > 0
    assert np.all(circuits.truth_table(real(3)) == circuits.inner_product_mod2(3))


def test_demo_saves_every_circuit_as_a_circuit_file(tmp_path, capsys):
    # issue 24: the circuits were only in the JSON summary; each is now a circuit file that
    # load_circuit reads back and that computes IP on all 4^n inputs
    import json

    from circuits.io import load_circuit
    assert ip_demo.main(["--n-max", "3", "--depth2-n-max", "2", "--no-progress",
                         "--out", str(tmp_path)]) == 0
    rows = json.loads((tmp_path / "ip_demo.json").read_text())["rows"]
    assert len(rows) == 5
    for row in rows:
        circ = load_circuit(tmp_path / row["file"])
        assert circ.depth == row["depth"] and circ.n_inputs == 2 * row["n"]
        assert circuits.count_disagreements(circ, "ip").count == 0
