"""Catalogues of least THR o THR sizes: NPN class counts, the symmetric-function classes, the
catalogue against the exhaustive enumerator on every NPN class of 3 inputs, and the CLI."""

import json

import numpy as np
import pytest

pytest.importorskip("ortools")

from circuits.analysis import min_depth2_size                               # noqa: E402
from circuits.analysis.synthesis.catalogue import (catalogue, npn_classes,  # noqa: E402
                                                   symmetric_classes)
from circuits.functions import parity                                      # noqa: E402


def test_npn_class_counts():
    assert [len(npn_classes(n)) for n in range(4)] == [1, 2, 4, 14]
    reps = npn_classes(4)
    assert len(reps) == 222
    assert any(np.array_equal(r, parity(4)) or np.array_equal(r, 1 - parity(4)) for r in reps)


def test_symmetric_classes():
    five = symmetric_classes(5)
    assert len(five) == 19 and len(symmetric_classes(6)) == 35
    names = [v for v, _ in five]
    assert "010101" in names                                 # parity, up to negation
    v, t = five[names.index("010101")]
    assert np.array_equal(t, parity(5))


def test_catalogue_matches_the_enumerator_on_every_npn_class_of_three_inputs():
    funcs = [(str(i), t) for i, t in enumerate(npn_classes(3))]
    rows = catalogue(funcs, time_limit=20, progress=False, direct=True)
    for (name, t), row in zip(funcs, rows):
        assert row["size"] == min_depth2_size(t, 4).size, name
        assert row["refutations_confirmed"] and not row["disagreements"]
        assert row["weight"]["decided"] and 1 <= row["weight"]["least_weight"] <= 2
        assert row["direct"]["size"] <= row["size"]
        # the direct-wire refutations are checked by the second solver too
        d = row["direct"]
        assert d["refutations_confirmed"]
        assert all(c["second"] == "confirmed" for c in d["claims"] if c["status"] == "infeasible")
    assert max(r["size"] for r in rows) == 3 == rows[[n for n, _ in funcs].index(
        next(n for n, t in funcs if np.array_equal(t, parity(3))
             or np.array_equal(t, 1 - parity(3))))]["size"]


def test_cli_catalogue(tmp_path, monkeypatch, capsys):
    from experiments import _least_catalogue as least_catalogue
    from experiments.least_circuit import main

    monkeypatch.setattr(least_catalogue, "_functions",
                        lambda name: [(f"NPN3-{i}", t) for i, t in enumerate(npn_classes(3))])
    assert main(["--catalogue", "npn4", "--time-limit", "20", "--out", str(tmp_path),
                 "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "14 functions" in out and "undecided: 0" in out and "{" not in out
    rec = json.loads((tmp_path / "least_catalogue_npn4.json").read_text())
    assert sum(rec["size_counts"].values()) == 14 and rec["size_counts"]["3"] == 1
    assert (tmp_path / "least_catalogue_npn4.png").stat().st_size > 0
    assert not (tmp_path / "least_catalogue_npn4.partial.json").exists()
    # the depth-3 columns: parity of 3 needs 3 first-layer gates, everything else at most 2
    assert "THR∘THR∘THR" in out and "enumerator disagreements 0" in out
    d3 = rec["depth3"]
    assert d3["first"]["3"] == 1 and not d3["undecided"] and not d3["enumerator_disagreements"]
    assert all(r["depth3"]["total"] <= r["size"] + 1 for r in rec["rows"])


def test_symmetric_construction_for_every_symmetric_function():
    from circuits.analysis.synthesis.catalogue import symmetric_circuit
    from circuits.simulate import truth_table

    from circuits.hypercube import points
    for n in (1, 3, 5):
        for code in range(1 << (n + 1)):
            v = [(code >> k) & 1 for k in range(n + 1)]
            c = symmetric_circuit(v)
            assert c.layers[0].n_gates == n and c.max_abs_weight <= 1
            assert np.array_equal(truth_table(c), np.array(v, dtype=np.uint8)[points(n).sum(1)])
