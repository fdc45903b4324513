"""Command-line option conventions (issue 14 items 9-12): circuits/utils/cli.py, ip_demo, theory_table.

Every option is checked before the work (exit status 2, one line naming the option), the table
is printed before files are written, and a failed write never loses the printed result.
"""

import argparse
import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from circuits.utils import cli, files

ROOT = Path(__file__).resolve().parents[1]


def _run(script, *args, timeout=300):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, str(ROOT / "experiments" / script), *args],
                          capture_output=True, text=True, env=env, timeout=timeout, cwd=str(ROOT))


# ------------------------------------------------------------------ library pieces

def test_int_in_range_and_friends():
    p = cli.int_in_range(1, 31)
    assert p("5") == 5
    for bad in ("-1", "40", "0", "1.5", "x", ""):
        with pytest.raises(argparse.ArgumentTypeError):
            p(bad)
    assert cli.positive_int("1") == 1
    with pytest.raises(argparse.ArgumentTypeError, match="below the minimum 1"):
        cli.positive_int("0")
    r = cli.real_in_range(0, 1, strict=False)
    assert r("0") == 0.0 and r("1") == 1.0
    for bad in ("-0.1", "1.5", "nan", "inf", "one"):
        with pytest.raises(argparse.ArgumentTypeError):
            r(bad)
    ids = cli.id_list(["E1", "E12"])
    assert ids("e12,E1") == ["E12", "E1"]
    with pytest.raises(argparse.ArgumentTypeError, match="E2"):
        ids("E1,E2")


def test_option_errors_use_the_argparse_convention(capsys):
    parser = argparse.ArgumentParser(prog="x")
    parser.add_argument("--n", type=cli.int_in_range(2, 8))
    with pytest.raises(SystemExit) as info:
        parser.parse_args(["--n", "40"])
    assert info.value.code == cli.EXIT_USAGE
    assert "argument --n: 40 is not between 2 and 8" in capsys.readouterr().err


def test_output_dir_check(tmp_path, capsys):
    assert cli.output_dir_problem(tmp_path / "a" / "b") is None
    assert (tmp_path / "a" / "b").is_dir() and list((tmp_path / "a" / "b").iterdir()) == []
    (tmp_path / "file").write_text("x")
    assert "not a directory" in cli.output_dir_problem(tmp_path / "file")
    assert cli.output_dir_problem("/proc/depthsep-test") is not None
    parser = argparse.ArgumentParser(prog="x")
    with pytest.raises(SystemExit) as info:
        cli.check_output_dir(parser, "/proc/depthsep-test", option="--out")
    assert info.value.code == 2
    assert "--out /proc/depthsep-test: cannot write results there" in capsys.readouterr().err


def test_save_or_report_keeps_going(tmp_path, capsys):
    def fail():
        raise OSError(errno.ENOSPC, "No space left on device")

    assert cli.save_or_report(fail, what="the record", where=tmp_path / "r.json") is False
    err = capsys.readouterr().err
    assert "could not write the record" in err and "No space left" in err
    assert cli.save_or_report(lambda: None, what="x", where="y") is True


# ------------------------------------------------------------------ ip_demo

@pytest.mark.parametrize("args, match", [
    (["--n-max", "-1"], "argument --n-max: -1 is not between 1 and 31"),
    (["--n-max", "40"], "argument --n-max: 40 is not between 1 and 31"),
    (["--n-max", "0"], "argument --n-max"),
    (["--depth2-n-max", "20"], "argument --depth2-n-max"),
    (["--max-seconds", "-5"], "argument --max-seconds"),
    (["--out", "/proc/depthsep-x"], "--out /proc/depthsep-x: cannot write"),
    (["--n-max", "26"], "--n-max 26 .* would take about .* above --max-seconds"),
])
def test_ip_demo_refuses_bad_options_before_starting(args, match):
    res = _run("ip_demo.py", *args)
    assert res.returncode == 2, res.stdout + res.stderr
    assert res.stdout == ""                                   # nothing ran, no table
    lines = res.stderr.strip().splitlines()
    assert lines[-1].startswith("depthsep ip-demo: error:")
    import re
    assert re.search(match, lines[-1]), lines[-1]


def test_ip_demo_table_then_file_and_a_failed_write_loses_nothing(tmp_path, monkeypatch, capsys):
    from experiments import ip_demo
    assert ip_demo.main(["--n-max", "4", "--no-progress", "--out", str(tmp_path)]) == 0
    rec = json.loads((tmp_path / "ip_demo.json").read_text())
    assert rec["ok"] and [r["n"] for r in rec["rows"] if r["circuit"] == "ip_depth3"] == [1, 2, 3, 4]
    capsys.readouterr()

    printed_before_write = []

    def full_disk(path, obj, **kw):
        printed_before_write.append("ip_depth3    4" in capsys.readouterr().out)
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(files, "write_json_atomic", full_disk)
    rc = ip_demo.main(["--n-max", "4", "--no-progress", "--out", str(tmp_path / "new")])
    err = capsys.readouterr().err
    assert rc == cli.EXIT_NOT_SAVED and printed_before_write == [True]
    assert "could not write the JSON record" in err and "No space left" in err


# ------------------------------------------------------------------ theory_table

@pytest.mark.parametrize("args, match", [
    (["--only", "E99"], "argument --only: unknown id"),
    (["--only", ","], "argument --only"),
    (["--seed", "-1"], "argument --seed: -1 is not between 0 and"),
    (["--out", "/proc/depthsep-x"], "--out /proc/depthsep-x: cannot write"),
])
def test_theory_table_refuses_bad_options_before_starting(args, match):
    res = _run("theory_table.py", *args, "--no-progress")
    assert res.returncode == 2, res.stdout + res.stderr
    assert res.stdout == "" and "[E1]" not in res.stderr
    assert match in res.stderr.strip().splitlines()[-1]


def test_theory_table_prints_before_writing_and_survives_a_failed_write(tmp_path, monkeypatch,
                                                                       capsys):
    from experiments import theory_table
    seen = []

    def full_disk(path, obj, **kw):
        seen.append("E1" in capsys.readouterr().out)
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(files, "write_json_atomic", full_disk)
    rc = theory_table.main(["--only", "E1", "--no-progress", "--out", str(tmp_path)])
    assert rc == cli.EXIT_NOT_SAVED and seen == [True]
    assert "could not write the JSON record" in capsys.readouterr().err


# ------------------------------------------------------------------ reduce, ceiling, radial

@pytest.mark.parametrize("module, args, match", [
    ("reduction", ["--n", "40"], "argument --n: 40 is not between 2 and 12"),
    # issue 24: the range is what the command can run (13-14 used to reach the library's
    # "Pass allow_large=True", a Python argument the CLI does not have)
    ("reduction", ["--n", "13"], "argument --n: 13 is not between 2 and 12"),
    ("reduction", ["--seed", "-1"], "argument --seed: -1 is not between 0 and 4294967295"),
    ("ceiling", ["--seed", "-1"], "argument --seed: -1 is not between 0 and 4294967295"),
    ("radial", ["--seed", "-1"], "argument --seed: -1 is not between 0 and 4294967295"),
    ("reduction", ["--out", ""], "--out : cannot write results there .an empty path"),
    ("ceiling", ["--out", ""], "--out : cannot write results there .an empty path"),
    ("radial", ["--out", ""], "--out : cannot write results there .an empty path"),
    ("reduction", ["--lr", "-1"], "argument --lr"),
    ("reduction", ["--m", "2"], "argument --m: 2 is below n = 6"),
    ("reduction", ["--epochs", "0"], "argument --epochs"),
    ("reduction", ["--sweep", "--sweep-n", "4,20"], "argument --sweep-n: 20 is above"),
    ("reduction", ["--out", "/proc/depthsep-x"], "--out /proc/depthsep-x: cannot write"),
    ("ceiling", ["--out", "/proc/depthsep-x"], "--out /proc/depthsep-x: cannot write"),
    ("radial", ["--out", "/proc/depthsep-x"], "--out /proc/depthsep-x: cannot write"),
])
def test_experiments_refuse_bad_options_before_starting(module, args, match, capsys):
    import importlib
    import re
    mod = importlib.import_module(f"experiments.{module}")
    with pytest.raises(SystemExit) as exc:
        mod.main(args + ["--no-progress"])
    assert exc.value.code == 2
    out, err = capsys.readouterr()
    assert out == ""                                           # nothing ran
    assert re.search(match, err.strip().splitlines()[-1]), err


@pytest.mark.parametrize("module, args, marker", [
    ("reduction", ["--n", "3", "--width", "8"], "chain of inequalities"),
    ("ceiling", ["--n", "2", "--widths", "2", "--epochs", "20", "--heldout-points", "64"], "rho"),
    ("radial", ["--dims", "2", "--eps", "0.2", "--targets", "hat", "--t4-dims", "",
                "--train-dims", ""], "ridge"),
])
def test_experiments_print_before_a_failed_write(module, args, marker, tmp_path, monkeypatch,
                                                   capsys):
    import importlib
    mod = importlib.import_module(f"experiments.{module}")

    def full_disk(*a, **kw):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(files, "write_json_atomic", full_disk)
    monkeypatch.setattr(files, "savefig_atomic", full_disk)
    rc = mod.main(args + ["--no-progress", "--out", str(tmp_path / "o")])
    out, err = capsys.readouterr()
    assert rc == cli.EXIT_NOT_SAVED
    assert marker.lower() in out.lower()                       # the results were printed
    assert "could not write" in err and "No space left" in err
    assert not list((tmp_path / "o").glob("*.json"))
