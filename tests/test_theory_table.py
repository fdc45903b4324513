"""experiments/theory_table.py: cheap rows pass, the JSON is complete, a wrong expectation FAILs."""

import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHEAP = "E1,E3,E5,E12,E19"


@pytest.fixture(scope="module")
def tt():
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    spec = importlib.util.spec_from_file_location("theory_table_under_test",
                                                  ROOT / "experiments" / "theory_table.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _load(out):
    return json.loads((out / "theory_table.json").read_text())


def test_cheap_rows_pass_and_json_fields(tt, tmp_path, capsys):
    rc = tt.main(["--only", CHEAP, "--no-progress", "--out", str(tmp_path)])
    printed = capsys.readouterr().out
    rec = _load(tmp_path)
    assert rc == 0, printed
    assert rec["format"] == tt.FORMAT and rec["mode"] == "quick" and rec["n_fail"] == 0
    assert [r["id"] for r in rec["rows"]] == CHEAP.split(",")
    for r in rec["rows"]:
        assert set(r) >= {"id", "object", "expected", "measured", "verdict", "seconds", "note"}
        assert r["verdict"] == "ok" and r["seconds"] >= 0 and r["expected"] and r["measured"]
        assert r["id"] in printed
    e1 = next(r for r in rec["rows"] if r["id"] == "E1")
    n, value = re.fullmatch(r"A006516\((\d+)\) = (\d+)", e1["expected_value"]).groups()
    assert int(value) == (1 << (int(n) - 1)) * ((1 << int(n)) - 1)


def test_expected_values_follow_theory_formulas():
    from networks.theory import reference as ref
    assert [ref.a006516(n) for n in range(8)] == [0, 1, 6, 28, 120, 496, 2016, 8128]
    assert ref.ip_nonlinearity(4) == ref.a006516(4) == 120
    assert [round(ref.maj_singleton(N), 4) for N in (1, 3, 5, 7, 9)] == [1, 0.5, 0.375, 0.3125,
                                                                         0.2734]


def test_wrong_expectation_is_reported_as_fail(tt, tmp_path, monkeypatch):
    from networks.theory import reference as ref
    monkeypatch.setattr(ref, "a006516", lambda n: (1 << (n - 1)) * ((1 << n) - 1) + 1)
    monkeypatch.setattr(ref, "A000609", (2, 4, 14, 104, 1881, 94572))
    rc = tt.main(["--only", "E1,E3,E18", "--no-progress", "--out", str(tmp_path)])
    rec = _load(tmp_path)
    verdicts = {r["id"]: r["verdict"] for r in rec["rows"]}
    assert rc == 1 and rec["n_fail"] == 3
    assert verdicts == {"E1": "FAIL", "E3": "FAIL", "E18": "FAIL"}


def test_crashing_row_is_a_fail_not_a_crash(tt, tmp_path, monkeypatch):
    obj, expected, _ = tt.ROWS["E17"]

    def boom(ctx):
        raise RuntimeError("deliberate")

    monkeypatch.setitem(tt.ROWS, "E17", (obj, expected, boom))
    assert tt.main(["--only", "E17", "--no-progress", "--out", str(tmp_path)]) == 1
    row = _load(tmp_path)["rows"][0]
    assert row["verdict"] == "FAIL" and "deliberate" in row["measured"]


def test_rows_are_library_checks_and_no_experiment_imports_another():
    import ast

    from networks import theory
    assert [f"E{i}" for i in range(1, 20)] == list(theory.ROWS)
    for path in sorted((ROOT / "experiments").glob("*.py")):
        tree = ast.parse(path.read_text())
        imported = {a.name for node in ast.walk(tree) if isinstance(node, ast.Import)
                    for a in node.names}
        imported |= {f"{node.module}.{a.name}" if node.module == "experiments" else node.module
                     for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module
                     for a in node.names}
        # the private helpers (experiments._style, experiments._cli_*, ...) are shared pieces,
        # not experiments; an experiment module never imports another experiment
        others = {m for m in imported if m.startswith("experiments")
                  and not m.startswith("experiments._")}
        assert not others, f"{path.name} imports {others}"


def test_unknown_row_id_is_refused(tt, tmp_path):
    with pytest.raises(SystemExit):
        tt.main(["--only", "E99", "--out", str(tmp_path)])


def test_ctrl_c_keeps_the_rows_that_finished(tt, tmp_path, capsys, monkeypatch):
    # issue 24: Ctrl-C in row E5 used to lose E1 and E3; now they are printed and written,
    # the JSON says what was not run, and the exit status is 130
    obj, expected, _ = tt.ROWS["E5"]

    def interrupted(ctx):
        raise KeyboardInterrupt

    monkeypatch.setitem(tt.ROWS, "E5", (obj, expected, interrupted))
    rc = tt.main(["--only", "E1,E3,E5,E12", "--no-progress", "--out", str(tmp_path)])
    out, err = capsys.readouterr()
    rec = _load(tmp_path)
    assert rc == 130
    assert [r["id"] for r in rec["rows"]] == ["E1", "E3"] and rec["interrupted"] is True
    assert rec["rows_not_run"] == ["E5", "E12"] and "--only E5,E12" in err
    assert "E1" in out and "E3" in out
