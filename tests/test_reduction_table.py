"""``depthsep separation-table --reduction``: IP_n's least THR o THR size against what the
reduction chain builds and every lower bound, and the docs table generated from its record."""

import json
from pathlib import Path

import pytest

pytest.importorskip("ortools")

from experiments import separation_table                                    # noqa: E402
from experiments._reduction_table import render_rst                         # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def _check_record(rec):
    for col in rec["columns"]:
        least = col["least"]
        for r in col["rows"]:
            v = r["value"]
            if v is None:
                assert r["kind"] == "bound" and "none known" in r["why"]
                continue
            assert r["gap"] == pytest.approx(v - least)
            if r["kind"] == "bound":            # a lower bound above the truth is a bug
                assert v <= least, r
            elif r["kind"] in ("construction", "reduction"):
                assert v >= least, r
        assert col["refutations_confirmed"] and not col["disagreements"]


def test_reduction_table_end_to_end_at_n2(tmp_path, capsys):
    assert separation_table.main(["--reduction", "--n-max", "2", "--time-limit", "30",
                                  "--workers", "1", "--out", str(tmp_path),
                                  "--no-progress"]) == 0
    rec = json.loads((tmp_path / "reduction_table.json").read_text())
    assert (tmp_path / "reduction_table.png").stat().st_size > 10_000
    (col,) = rec["columns"]
    assert col["n"] == 2 and col["least"] == 2
    steps = {r["step"]: r for r in col["rows"]}
    assert steps["ip_depth2 (hidden gates)"]["value"] == 4
    circuit = steps["reduce: integer circuit (hidden gates)"]["value"]
    assert steps["reduce: k copies of the circuit (least k)"]["value"] == \
        col["least_k_circuit"] * circuit
    _check_record(rec)
    out = capsys.readouterr().out
    assert render_rst(rec) in out


def test_reduction_needs_n_at_least_2(tmp_path):
    with pytest.raises(SystemExit):
        separation_table.main(["--reduction", "--n-max", "1", "--out", str(tmp_path)])


def test_docs_table_is_the_recorded_table():
    """The docs page carries exactly the table rendered from docs/figures/reduction_table.json."""
    rec = json.loads((ROOT / "docs/figures/reduction_table.json").read_text())
    _check_record(rec)
    assert [c["n"] for c in rec["columns"]] == [2, 3]
    page = (ROOT / "docs/theory/least.rst").read_text()
    assert render_rst(rec) in page
