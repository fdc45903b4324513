"""Resume files (separate's cells.jsonl, separate-sampled's sampled.json) and the output lock.

Each test is a way a previous tree lost cells, used forged ones, blocked, wrote outside the
output directory or crashed: regular files only, no links followed, every row checked against
its key and checksum, an unusable file moved aside with a message (never silently dropped),
changed settings refused with the difference named, the lock on the resolved directory, and no
abbreviated options.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from circuits.utils.errors import DepthsepError
from networks.separation import separate as S

ROOT = Path(__file__).resolve().parents[1]


def _row(kind="floor", target="ip", n=3, rule="n", seed=None, rho=0.25):
    return {"kind": kind, "target": target, "n": n, "rule": rule, "widths": [3], "seed": seed,
            "rho": rho, "r2": None, "depth": 2, "seconds": 0.01}


def _key(kind="floor", target="ip", n=3, rule="n", seed=None):
    return json.dumps([kind, target, n, rule, seed, None, None, 0], separators=(",", ":"))


def _aside(d: Path, name="cells.jsonl"):
    return sorted(p.name for p in d.iterdir() if p.name.startswith(f"{name}.unusable-"))


def _load_in_thread(path, seconds=20.0):
    """S._load_resume(path) in a daemon thread: (finished, result or exception)."""
    box = {}

    def target():
        try:
            box["r"] = S._load_resume(path)
        except BaseException as exc:  # noqa: BLE001 -- the test inspects it
            box["r"] = exc

    t = threading.Thread(target=target, daemon=True)
    t.start()
    t.join(seconds)
    return not t.is_alive(), box.get("r")


# ------------------------------------------------------------------------------ cells.jsonl
def test_rows_round_trip_with_a_checksum(tmp_path):
    p = tmp_path / "cells.jsonl"
    S._append_resume(p, _key(), _row())
    S._append_resume(p, _key(rule="n^2"), _row(rule="n^2"))
    assert all("sum" in json.loads(x) for x in p.read_text().splitlines())
    assert S._load_resume(p) == {_key(): _row(), _key(rule="n^2"): _row(rule="n^2")}
    assert _aside(tmp_path) == []


def test_a_fifo_or_device_in_place_of_the_resume_file_is_moved_aside_not_read(tmp_path):
    fifo = tmp_path / "cells.jsonl"
    os.mkfifo(fifo)
    finished, result = _load_in_thread(fifo)
    assert finished, "reading a FIFO resume file blocked"
    assert result == {} and len(_aside(tmp_path)) == 1 and not os.path.lexists(fifo)
    (tmp_path / "cells.jsonl").symlink_to("/dev/zero")
    finished, result = _load_in_thread(tmp_path / "cells.jsonl")
    assert finished and result == {} and len(_aside(tmp_path)) == 2


def test_the_appender_never_follows_a_planted_link(tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("precious\n")
    out = tmp_path / "out"
    out.mkdir()
    (out / "cells.jsonl").symlink_to(outside)
    with pytest.raises(DepthsepError, match="symbolic link"):
        S._append_resume(out / "cells.jsonl", _key(), _row())
    assert outside.read_text() == "precious\n"
    assert S._load_resume(out / "cells.jsonl") == {}        # the link is moved aside, unread
    assert outside.read_text() == "precious\n" and len(_aside(out)) == 1
    S._append_resume(out / "cells.jsonl", _key(), _row())    # now a fresh regular file
    assert not (out / "cells.jsonl").is_symlink()


def test_a_tampered_value_is_not_used_and_the_file_is_moved_aside(tmp_path, capsys):
    p = tmp_path / "cells.jsonl"
    S._append_resume(p, _key(), _row())
    S._append_resume(p, _key(rule="n^2"), _row(rule="n^2"))
    lines = p.read_text().splitlines()
    lines[0] = lines[0].replace('"rho":0.25', '"rho":0.99')
    p.write_text("\n".join(lines) + "\n")
    done = S._load_resume(p)
    assert list(done) == [_key(rule="n^2")]
    assert "checksum mismatch" in capsys.readouterr().err
    (aside,) = _aside(tmp_path)
    assert '"rho":0.99' in (tmp_path / aside).read_text()    # the original is kept
    assert S._load_resume(p) == done and _aside(tmp_path) == [aside]   # the rewrite is clean


def test_rows_swapped_between_keys_are_rejected(tmp_path):
    p = tmp_path / "cells.jsonl"
    S._append_resume(p, _key(), _row())
    S._append_resume(p, _key(rule="n^2"), _row(rule="n^2", rho=0.5))
    a, b = (json.loads(x) for x in p.read_text().splitlines())
    a["key"], b["key"] = b["key"], a["key"]
    p.write_text(json.dumps(a) + "\n" + json.dumps(b) + "\n")
    assert S._load_resume(p) == {}
    # a consistent forgery without a checksum (an earlier depthsep's line) is still checked
    # against its key
    p.write_text(json.dumps({"key": _key(rule="n^2"), "row": _row()}) + "\n")
    assert S._load_resume(p) == {}


@pytest.mark.parametrize("content", [
    b"\xff\xfe\x00garbage\n",
    b'{"key": ["a"], "row": 1}\n',
    b'{"key": "k"}\n',
    b'{"key": "[\\"floor\\"]", "row": {"kind": 1}, "sum": 5}\n',
    b"[" * 100000 + b"]" * 100000 + b"\n",
    b'{"key": "x", "row": {}, "sum": "' + b"0" * 64 + b'"}\n',
    b"[]\n\"x\"\n{}\n",
])
def test_hostile_lines_are_named_and_moved_aside_never_an_exception(tmp_path, capsys, content):
    p = tmp_path / "cells.jsonl"
    p.write_bytes(content)
    assert S._load_resume(p) == {}
    assert "moved aside" in capsys.readouterr().err
    assert len(_aside(tmp_path)) == 1


def test_a_line_cut_by_a_kill_is_recomputed_quietly(tmp_path, capsys):
    p = tmp_path / "cells.jsonl"
    S._append_resume(p, _key(), _row())
    S._append_resume(p, _key(rule="n^2"), _row(rule="n^2"))
    text = p.read_text()
    p.write_text(text[: len(text) - 20])                     # the kill cut the last line
    assert list(S._load_resume(p)) == [_key()]
    assert _aside(tmp_path) == [] and "moved aside" not in capsys.readouterr().err
    S._append_resume(p, _key(rule="n^2"), _row(rule="n^2"))   # on a fresh line after the cut
    assert len(S._load_resume(p)) == 2


def test_an_oversized_resume_file_is_refused_by_size(tmp_path):
    from circuits.utils.resume import load_jsonl

    p = tmp_path / "cells.jsonl"
    p.write_bytes(b" " * 5000)
    assert load_jsonl(p, max_bytes=4096) == {} and len(_aside(tmp_path)) == 1


# ------------------------------------------------------------------------------ sampled.json
SAMPLED = ["--n", "6", "--steps", "20", "--grid", "8", "--pairs", "4000", "--targets",
           "majand", "--no-progress", "--tries", "1"]


@pytest.fixture(scope="module")
def sampled_run(tmp_path_factory):
    from experiments import sampled as E

    d = tmp_path_factory.mktemp("sampled")
    assert E.main([*SAMPLED, "--out", str(d)]) == 0
    return json.loads((d / "sampled.json").read_text())


def test_changed_settings_refuse_naming_the_difference_never_silent_loss(tmp_path,
                                                                          sampled_run):
    from experiments import sampled as E

    (tmp_path / "sampled.json").write_text(json.dumps(sampled_run))
    argv = [*SAMPLED, "--out", str(tmp_path)]
    argv[argv.index("--steps") + 1] = "21"
    with pytest.raises(DepthsepError, match=r"steps 20 -> 21.*--fresh"):
        E.main(argv)
    assert json.loads((tmp_path / "sampled.json").read_text()) == sampled_run   # untouched
    assert E.main([*argv, "--fresh"]) == 0
    (aside,) = _aside(tmp_path, "sampled.json")
    assert json.loads((tmp_path / aside).read_text()) == sampled_run           # kept aside


@pytest.mark.parametrize("mutate", ["empty list", "string", "partial row", "tampered",
                                    "swapped", "link"])
def test_hostile_sampled_json_is_moved_aside_and_the_run_completes(tmp_path, sampled_run,
                                                                   mutate, capsys):
    from experiments import sampled as E

    p = tmp_path / "sampled.json"
    doc = json.loads(json.dumps(sampled_run))
    (k, row), = doc["rows"].items()
    if mutate == "empty list":
        p.write_text("[]")
    elif mutate == "string":
        p.write_text('"x"')
    elif mutate == "partial row":
        doc["rows"][k] = {"n": 6}
        p.write_text(json.dumps(doc))
    elif mutate == "tampered":
        row["estimate"]["rho"]["mean"] = 0.999
        p.write_text(json.dumps(doc))
    elif mutate == "swapped":
        doc["rows"] = {k.replace("seed=0", "seed=1"): row}
        p.write_text(json.dumps(doc))
    else:
        outside = tmp_path / "elsewhere.json"
        outside.write_text(json.dumps(doc))
        p.symlink_to(outside)
    assert E.main([*SAMPLED, "--out", str(tmp_path)]) == 0
    assert "moved aside" in capsys.readouterr().err
    assert len(_aside(tmp_path, "sampled.json")) == 1
    new = json.loads(p.read_text())
    assert set(new["rows"]) == {k} and new["rows"][k]["estimate"]["rho"]["mean"] != 0.999


def test_sampled_rows_resume_when_nothing_changed(tmp_path, sampled_run, capsys):
    from experiments import sampled as E

    (tmp_path / "sampled.json").write_text(json.dumps(sampled_run))
    assert E.main([*SAMPLED, "--out", str(tmp_path)]) == 0
    assert "resuming: 1 finished cells" in capsys.readouterr().out
    assert json.loads((tmp_path / "sampled.json").read_text())["rows"] == sampled_run["rows"]


# ------------------------------------------------------------------------------ lock, options
_HOLD = ("import sys, time\nfrom circuits.utils.resume import lock_output_dir\n"
         "with lock_output_dir(sys.argv[1]):\n    print('held', flush=True)\n    time.sleep(60)\n")


def test_the_lock_covers_every_way_of_naming_the_directory(tmp_path):
    from circuits.utils.resume import lock_output_dir

    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "alias").symlink_to(real)
    holder = subprocess.Popen([sys.executable, "-c", _HOLD, str(real)], cwd=ROOT,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        for name in (tmp_path / "alias", tmp_path / "alias" / ".." / "real",
                     os.path.relpath(real)):
            with pytest.raises(DepthsepError, match="another depthsep run"):
                with lock_output_dir(name):
                    pass
        from experiments import sampled as E

        with pytest.raises(DepthsepError, match="another depthsep run"):
            E.main([*SAMPLED, "--out", str(tmp_path / "alias")])
        assert not (real / "sampled.json").exists()
    finally:
        holder.kill()
        holder.wait()
    with lock_output_dir(tmp_path / "alias"):                # free again; nesting is allowed
        with lock_output_dir(real):
            pass


def test_separate_takes_the_lock_on_its_output_directory(tmp_path):
    from experiments import separate as E

    holder = subprocess.Popen([sys.executable, "-c", _HOLD, str(tmp_path)], cwd=ROOT,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(DepthsepError, match="another depthsep run"):
            E.main(["--n", "3", "--targets", "ip", "--widths", "n", "--depth3", "none",
                    "--seeds", "1", "--epochs", "5", "--heldout-n", "none", "--no-plot",
                    "--no-progress", "--out", str(tmp_path)])
    finally:
        holder.kill()
        holder.wait()


def _parsers():
    for path in sorted((ROOT / "experiments").glob("*.py")) + sorted(
            (ROOT / "benchmarks").glob("*.py")):
        text = path.read_text(encoding="utf-8")
        for m in re.finditer(r"ArgumentParser\(", text):
            yield path, text[m.end(): m.end() + 400]


def test_every_parser_refuses_abbreviated_options():
    found = list(_parsers())
    assert len(found) >= 25
    missing = [str(p.relative_to(ROOT)) for p, call in found
               if "allow_abbrev=False" not in call.split("\n\n")[0]]
    assert missing == []


@pytest.mark.parametrize("module", ["experiments.separate", "experiments.sampled",
                                    "experiments.least_circuit", "experiments.ip_demo"])
def test_an_abbreviated_out_is_a_usage_error(module, capsys):
    build = importlib.import_module(module).build_parser
    p = build()
    assert isinstance(p, argparse.ArgumentParser)
    with pytest.raises(SystemExit) as exc:
        p.parse_args(["--ou", "elsewhere"])
    assert exc.value.code == 2
