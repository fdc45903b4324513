"""Refining a published catalogue: only the open (or named) rows are rerun, settled rows are
kept bit for bit, a killed run resumes, a row's refutation taken from cube records is validated
(tampered records refused), and the CLI's errors."""

import json

import numpy as np
import pytest

pytest.importorskip("ortools")
pytest.importorskip("pysat")

from circuits.analysis.synthesis.catalogue import catalogue, symmetric_classes  # noqa: E402
from circuits.analysis.synthesis.parallel import decide_by_cubes                # noqa: E402
from circuits.analysis.synthesis.refine import cube_reference, refine_row      # noqa: E402
from circuits.analysis.synthesis.second_cubes import confirm_by_cubes           # noqa: E402
from circuits.functions import parity                                          # noqa: E402
from circuits.utils.errors import InvalidArgumentError                         # noqa: E402
from experiments.least_circuit import main                                     # noqa: E402

PAR3 = "SYM3[0101]"


@pytest.fixture(scope="module")
def sym3_rows():
    """The least sizes of the symmetric functions of 3 inputs, as a catalogue would write them."""
    funcs = [(f"SYM3[{v}]", t) for v, t in symmetric_classes(3)]
    rows = catalogue(funcs, time_limit=20, progress=False)
    for r in rows:
        r["construction"] = 3
    assert {r["name"]: r["size"] for r in rows}[PAR3] == 3
    return rows


def _publish(tmp_path, rows, *, open_parity=True):
    """A sym5-labelled record of the 3-input rows, parity's row made open and unconfirmed."""
    rows = json.loads(json.dumps(rows))
    if open_parity:
        r = next(r for r in rows if r["name"] == PAR3)
        r.update(size=None, lower=2, upper=None, refutations_confirmed=False, weight=None)
    rec = {"format": "depthsep.least_catalogue", "version": 1, "catalogue": "sym5",
           "time_limit": 20.0, "seconds": 1.0, "rows": rows}
    (tmp_path / "least_catalogue_sym5.json").write_text(json.dumps(rec))
    return rec


def _read(tmp_path):
    return json.loads((tmp_path / "least_catalogue_sym5.json").read_text())


def test_refine_reruns_only_the_open_row_and_keeps_the_rest(tmp_path, sym3_rows, capsys):
    before = _publish(tmp_path, sym3_rows)
    assert main(["--catalogue", "sym5", "--refine", "--time-limit", "20", "--workers", "1",
                 "--out", str(tmp_path), "--no-progress"]) == 0
    after = _read(tmp_path)
    old = {r["name"]: r for r in before["rows"]}
    for r in after["rows"]:
        if r["name"] == PAR3:
            # confirmed s = 1 by the second solver, then s = 2 refuted by both: 3 = construction
            assert r["size"] == 3 and r["lower"] == 3 and r["refutations_confirmed"]
            assert r["weight"]["least_weight"] == 1
            (run,) = r["refine"]
            sizes = [(st["size"], st["status"]) for st in run["steps"]]
            assert sizes == [(1, "infeasible"), (2, "infeasible"), (2, "infeasible")]
            assert run["time_limit"] == 20.0 and "--refine" in run["command"]
        else:
            assert r == old[r["name"]]                       # bit for bit
    assert after["undecided"] == [] and after["unconfirmed"] == []
    assert after["refinements"][0]["rows"] == [PAR3]
    assert (tmp_path / "least_catalogue_sym5.png").stat().st_size > 0
    # a rerun with the same options skips the refined row (resumable), nothing else changes
    assert main(["--catalogue", "sym5", "--refine", "--time-limit", "20", "--workers", "1",
                 "--out", str(tmp_path), "--no-progress"]) == 0
    again = _read(tmp_path)
    assert again["rows"] == after["rows"] and again["refinements"][1]["rows"] == []
    assert "refined 0 rows" in capsys.readouterr().out
    # a larger budget reruns it and keeps the first run's steps before its own
    assert main(["--catalogue", "sym5", "--refine", "--only", PAR3, "--time-limit", "21",
                 "--workers", "1", "--out", str(tmp_path), "--no-progress"]) == 0
    runs = next(r for r in _read(tmp_path)["rows"] if r["name"] == PAR3)["refine"]
    assert [x["time_limit"] for x in runs] == [20.0, 21.0]


def test_refine_only_named_rows(tmp_path, sym3_rows):
    before = _publish(tmp_path, sym3_rows, open_parity=False)
    maj = "SYM3[0011]"
    assert main(["--catalogue", "sym5", "--refine", "--only", maj, "--time-limit", "10",
                 "--workers", "1", "--out", str(tmp_path), "--no-progress"]) == 0
    after = _read(tmp_path)
    assert [r["name"] for r in after["rows"] if "refine" in r] == [maj]
    for a, b in zip(after["rows"], before["rows"]):
        if a["name"] != maj:
            assert a == b
        else:
            assert a["size"] == b["size"] == 1


def test_refine_row_unknown_keeps_the_bound():
    """A decision that runs out of time (planted: 1 ms) never moves a bound."""
    r = refine_row(parity(4), lower=2, upper=4, lower_confirmed=True, time_limit=1e-3,
                   num_workers=1)
    assert r["lower"] == 2 and r["size"] is None and r["upper"] == 4
    assert all(st["status"] in ("unknown", "infeasible") for st in r["steps"])


@pytest.fixture(scope="module")
def par3_cube_records(tmp_path_factory):
    d = tmp_path_factory.mktemp("cubes")
    cp, sat = d / "cp.json", d / "sat.json"
    assert decide_by_cubes(parity(3), 2, state=cp, progress=False)["status"] == "infeasible"
    assert confirm_by_cubes(parity(3), 2, state=sat, progress=False)["status"] == "infeasible"
    return cp, sat


def _tampered(tmp_path, src, change):
    rec = json.loads(src.read_text())
    change(rec)
    p = tmp_path / src.name
    p.write_text(json.dumps(rec))
    return p


def test_cube_reference_validated_and_tampering_refused(tmp_path, par3_cube_records):
    cp, sat = par3_cube_records
    ref = cube_reference(parity(3), cp, [sat])
    assert ref["size"] == 2 and ref["lower"] == 3 and ref["cubes"] == 5
    bad = {
        "is feasible": (sat, lambda r: r["cubes"]["0"].update(status="feasible")),
        "has not refuted 1 of the 5": (sat, lambda r: r["cubes"]["1"].update(status="unknown")),
        "CP-SAT solver has not refuted": (cp, lambda r: r["cubes"].pop("2")),
        "another function": (cp, lambda r: r["key"].update(table="0" * 7 + "1")),
        "expected format": (sat, lambda r: r.update(format="depthsep.synthesis_cubes")),
        "decides s = 3": (sat, lambda r: r["key"].update(size=3)),
    }
    for why, (src, change) in bad.items():
        p = _tampered(tmp_path, src, change)
        args = (p, [sat]) if src is cp else (cp, [p])
        with pytest.raises(InvalidArgumentError, match=why):
            cube_reference(parity(3), *args)
    with pytest.raises(InvalidArgumentError, match="another function"):
        cube_reference(np.array([0, 0, 0, 1, 0, 1, 1, 1], dtype=np.uint8), cp, [sat])


def test_cli_cube_record_settles_the_row(tmp_path, sym3_rows, par3_cube_records):
    cp, sat = par3_cube_records
    _publish(tmp_path, sym3_rows)
    assert main(["--catalogue", "sym5", "--refine", "--confirm-only", "--only", PAR3,
                 "--cube-record", f"{cp},{sat}", "--time-limit", "10", "--workers", "1",
                 "--out", str(tmp_path), "--no-progress"]) == 0
    r = next(r for r in _read(tmp_path)["rows"] if r["name"] == PAR3)
    assert r["size"] == 3 and r["refine"][-1]["cube_record"]
    assert r["refine"][-1]["steps"][0]["solver"] == "both (cube records)"
    # a tampered record is refused with a clear error
    p = _tampered(tmp_path, sat, lambda rec: rec["cubes"]["3"].update(status="feasible"))
    with pytest.raises(SystemExit):
        main(["--catalogue", "sym5", "--refine", "--cube-record", f"{cp},{p}",
              "--out", str(tmp_path), "--no-progress"])


def test_cli_refine_errors(tmp_path, sym3_rows, capsys):
    with pytest.raises(SystemExit):
        main(["--catalogue", "sym5", "--refine", "--out", str(tmp_path), "--no-progress"])
    assert "needs the published record" in capsys.readouterr().err
    _publish(tmp_path, sym3_rows)
    with pytest.raises(SystemExit):
        main(["--catalogue", "sym5", "--refine", "--only", "SYM3[9999]", "--out", str(tmp_path)])
    assert "is no row of this catalogue" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--catalogue", "sym5", "--only", PAR3, "--out", str(tmp_path)])
    assert "need --refine" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--refine", "--out", str(tmp_path)])
    assert "needs --catalogue" in capsys.readouterr().err


def test_unconfirmed_row_is_refined_again_from_cp_sats_bound(tmp_path, sym3_rows, monkeypatch):
    """A second solver that runs out of time (planted) leaves parity's bound to CP-SAT alone:
    the row keeps both solvers' bound (1) and CP-SAT's (3) apart; a later run with a larger
    budget starts from CP-SAT's bound and confirms it."""
    from circuits.analysis.synthesis import refine

    _publish(tmp_path, sym3_rows)
    real = refine._second_refute
    monkeypatch.setattr(refine, "_second_refute",
                        lambda *a, **k: ("unknown", 0.0, None, "planted: out of time"))
    args = ["--catalogue", "sym5", "--refine", "--only", PAR3, "--workers", "1",
            "--out", str(tmp_path), "--no-progress"]
    assert main(args + ["--time-limit", "20"]) == 0
    r = next(r for r in _read(tmp_path)["rows"] if r["name"] == PAR3)
    assert (r["lower"], r["lower_cp_sat"], r["size"]) == (1, 3, None)
    assert not r["refutations_confirmed"] and _read(tmp_path)["unconfirmed"] == [PAR3]
    monkeypatch.setattr(refine, "_second_refute", real)
    assert main(args + ["--time-limit", "30", "--confirm-only"]) == 0
    r = next(r for r in _read(tmp_path)["rows"] if r["name"] == PAR3)
    assert (r["lower"], r["lower_cp_sat"], r["size"]) == (3, 3, 3) and r["refutations_confirmed"]
    assert [st["size"] for st in r["refine"][-1]["steps"]] == [2]


def test_refine_direct_column_checks_its_refutations(tmp_path):
    """--refine-direct: a direct-wire column without checked refutations (parity of 4 needs 2
    hidden gates with direct wires) is decided again with the second solver; a row needing 1
    gate is not touched."""
    p4 = "".join(map(str, parity(4).tolist()))
    maj = "".join(str(int(bin(k).count("1") >= 2)) for k in range(16))
    rows = [{"name": n, "table": t, "size": size, "lower": size, "upper": size,
             "refutations_confirmed": True, "disagreements": [], "weight": None,
             "direct": {"size": d, "lower": d, "upper": d}, "depth3": None, "seconds": 1.0,
             "construction": 4} for n, t, size, d in (("P4", p4, 4, 2), ("MAJ", maj, 1, 1))]
    rec = {"format": "depthsep.least_catalogue", "version": 1, "catalogue": "sym5",
           "time_limit": 20.0, "seconds": 1.0, "rows": rows}
    (tmp_path / "least_catalogue_sym5.json").write_text(json.dumps(rec))
    assert main(["--catalogue", "sym5", "--refine", "--refine-direct", "--time-limit", "20",
                 "--workers", "1", "--out", str(tmp_path), "--no-progress"]) == 0
    after = _read(tmp_path)
    d = after["rows"][0]["direct"]
    assert d["size"] == 2 and d["refutations_confirmed"]
    assert [(c["size"], c["status"], c["second"]) for c in d["claims"]] == [
        (1, "infeasible", "confirmed"), (2, "feasible", None)]
    assert after["rows"][1] == rows[1] and after["direct_unconfirmed"] == []


def test_planted_false_bound_is_reported_as_a_disagreement(tmp_path, sym3_rows):
    """A record claiming CP-SAT refuted 2 gates for majority (planted: it needs 1): the second
    solver finds a verified 2-gate circuit, the row names the disagreement and trusts no bound."""
    rows = json.loads(json.dumps(sym3_rows))
    maj = next(r for r in rows if r["name"] == "SYM3[0011]")
    maj.update(size=None, lower=3, upper=None, refutations_confirmed=False, weight=None)
    _publish(tmp_path, rows, open_parity=False)
    assert main(["--catalogue", "sym5", "--refine", "--only", "SYM3[0011]", "--time-limit", "20",
                 "--workers", "1", "--out", str(tmp_path), "--no-progress"]) == 0
    rec = _read(tmp_path)
    r = next(r for r in rec["rows"] if r["name"] == "SYM3[0011]")
    assert r["disagreements"] == [2] and rec["disagreements"] == ["SYM3[0011]"]
    assert r["lower"] == 1 and r["upper"] == 2 and r["size"] is None
    assert r["refine"][-1]["steps"][0]["status"] == "feasible"


def test_refine_depth3_adds_the_columns(tmp_path, sym3_rows):
    """--refine-depth3 adds the THR o THR o THR columns to every settled row (checked against
    the enumerator twin at 3 inputs); nothing else of a row changes."""
    before = _publish(tmp_path, sym3_rows, open_parity=False)
    assert main(["--catalogue", "sym5", "--refine", "--refine-depth3", "--time-limit", "20",
                 "--workers", "1", "--out", str(tmp_path), "--no-progress"]) == 0
    after = _read(tmp_path)
    for a, b in zip(after["rows"], before["rows"]):
        d = a.pop("depth3")
        b.pop("depth3")
        assert a == b
        assert d["decided"] and d["enumerator_agrees"] and d["refine"]["column"] == "depth3"
        assert d["first"] <= a["size"] and d["total"] <= a["size"] + 1
    par = next(r for r in after["rows"] if r["name"] == PAR3)
    assert after["depth3"]["undecided"] == [] and after["depth3"]["enumerator_disagreements"] == []
    assert par["size"] == 3
    with pytest.raises(SystemExit):
        main(["--catalogue", "sym5", "--refine", "--refine-depth3", "--refine-direct",
              "--out", str(tmp_path)])


def test_a_killed_refine_keeps_the_rows_it_finished(tmp_path, sym3_rows, monkeypatch):
    """Interrupted on its second row, the record on disk holds the first row refined and the
    second as published; the rerun refines only the second."""
    from circuits.analysis.synthesis import refine

    rows = json.loads(json.dumps(sym3_rows))
    for r in rows:
        if r["name"] in ("SYM3[0001]", PAR3):
            r.update(size=None, lower=1, upper=None, weight=None)
    _publish(tmp_path, rows, open_parity=False)
    real, calls = refine.refine_row, []

    def interrupted(*a, **k):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*a, **k)
    monkeypatch.setattr(refine, "refine_row", interrupted)
    args = ["--catalogue", "sym5", "--refine", "--time-limit", "20", "--workers", "1",
            "--out", str(tmp_path), "--no-progress"]
    with pytest.raises(KeyboardInterrupt):
        main(args)
    got = {r["name"]: r for r in _read(tmp_path)["rows"]}
    assert got["SYM3[0001]"]["size"] == 1 and "refine" in got["SYM3[0001]"]
    assert got[PAR3]["size"] is None and "refine" not in got[PAR3]
    monkeypatch.setattr(refine, "refine_row", real)
    assert main(args) == 0
    rec = _read(tmp_path)
    assert rec["refinements"][-1]["rows"] == [PAR3] and rec["undecided"] == []
