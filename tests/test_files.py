"""Atomic result files: permissions follow the umask; leftovers of killed writers are cleaned."""

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from circuits.utils import files
from circuits.utils.files import clean_stale_temp_files, write_bytes_atomic, write_json_atomic


def _mode(p):
    return stat.S_IMODE(os.stat(p).st_mode)


@pytest.mark.parametrize("mask, expect", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_new_files_honour_the_umask(tmp_path, mask, expect):
    old = os.umask(mask)
    try:
        p = write_json_atomic(tmp_path / "r.json", {"a": 1})
        q = write_bytes_atomic(tmp_path / "f.png", b"\x89PNG")
    finally:
        os.umask(old)
    assert _mode(p) == expect and _mode(q) == expect
    assert json.loads(p.read_text()) == {"a": 1}


def test_an_existing_file_keeps_its_mode(tmp_path):
    p = tmp_path / "r.json"
    p.write_text("{}")
    os.chmod(p, 0o640)
    write_json_atomic(p, {"b": 2})
    assert _mode(p) == 0o640 and json.loads(p.read_text()) == {"b": 2}


def _dead_pid():
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_leftovers_are_removed_by_age_only(tmp_path):
    dead = _dead_pid()
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        # a PID not alive here may be a live writer in another PID namespace (a container
        # sharing the directory): kept while fresh (issue 25 item 7)
        stale = tmp_path / f".r.json.{dead}-abcd1234.tmp"
        busy = tmp_path / f".r.json.{live.pid}-abcd1234.tmp"        # concurrent writer
        mine = tmp_path / f".other.json.{os.getpid()}-zz99zz99.tmp"  # this process, in flight
        old = tmp_path / f".x.json.{live.pid}-oldoldol.tmp"          # alive pid, but a day old
        other = tmp_path / ".r.json.abcd1234.tmp.keep"              # not our pattern
        for f in (stale, busy, mine, old, other):
            f.write_bytes(b"partial")
        day_ago = time.time() - 2 * 86400
        os.utime(old, (day_ago, day_ago))
        write_json_atomic(tmp_path / "r.json", [1, 2])
        left = sorted(p.name for p in tmp_path.iterdir())
        assert old.name not in left
        assert {stale.name, busy.name, mine.name, other.name, "r.json"} <= set(left)
        os.utime(stale, (day_ago, day_ago))
        assert clean_stale_temp_files(tmp_path) == [stale]
        assert json.loads((tmp_path / "r.json").read_text()) == [1, 2]
    finally:
        live.kill()
        live.wait()


def test_temp_file_name_carries_the_writer_pid(tmp_path, monkeypatch):
    seen = []
    real = files.os.replace

    def spy(src, dst):
        seen.append(os.path.basename(src))
        return real(src, dst)

    monkeypatch.setattr(files.os, "replace", spy)
    write_json_atomic(tmp_path / "r.json", {})
    assert files._TMP_RE.match(seen[0]) and f".{os.getpid()}-" in seen[0]


def test_a_failed_write_leaves_nothing(tmp_path):
    with pytest.raises(TypeError):
        write_json_atomic(tmp_path / "r.json", {"a": object()})
    assert list(tmp_path.iterdir()) == []
    assert clean_stale_temp_files(tmp_path / "missing") == []


def test_output_directory_is_locked_against_a_second_run(tmp_path):
    import argparse

    from circuits.utils.cli import check_output_dir
    code = ("import argparse, sys, time\n"
            "from circuits.utils.cli import check_output_dir\n"
            f"check_output_dir(argparse.ArgumentParser(), {str(tmp_path)!r})\n"
            "print('locked', flush=True); time.sleep(60)\n")
    root = Path(__file__).resolve().parents[1]
    holder = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                              cwd=str(root), env=dict(os.environ, PYTHONPATH=str(root)))
    try:
        assert holder.stdout.readline().strip() == "locked"
        parser = argparse.ArgumentParser(prog="depthsep reduce")
        with pytest.raises(SystemExit) as exc:
            check_output_dir(parser, tmp_path)
        assert exc.value.code == 2
    finally:
        holder.kill()
        holder.wait()
    # the holder is gone (even by SIGKILL): the lock is free again, and taking it twice in one
    # process is fine
    assert check_output_dir(argparse.ArgumentParser(), tmp_path) == tmp_path
    assert check_output_dir(argparse.ArgumentParser(), tmp_path) == tmp_path
