"""Atomic result files: permissions follow the umask; leftovers of killed writers are cleaned."""

import json
import os
import stat
import subprocess
import sys
import time

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


def test_old_leftovers_are_removed_on_the_next_write_by_age_only(tmp_path):
    dead = _dead_pid()
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        stale = tmp_path / f".r.json.{dead}-abcd1234.tmp"           # writer killed, 2 h ago
        fresh = tmp_path / f".q.json.{dead}-abcd1234.tmp"    # "dead" PID (another namespace?)
        busy = tmp_path / f".r.json.{live.pid}-abcd1234.tmp"        # concurrent writer
        mine = tmp_path / f".other.json.{os.getpid()}-zz99zz99.tmp"  # this process, in flight
        old = tmp_path / f".x.json.{live.pid}-oldoldol.tmp"          # alive pid, but a day old
        other = tmp_path / ".r.json.abcd1234.tmp.keep"              # not our pattern
        for f in (stale, fresh, busy, mine, old, other):
            f.write_bytes(b"partial")
        day_ago = time.time() - 2 * 86400
        os.utime(old, (day_ago, day_ago))
        os.utime(stale, (time.time() - 7200, time.time() - 7200))
        write_json_atomic(tmp_path / "r.json", [1, 2])
        left = sorted(p.name for p in tmp_path.iterdir())
        assert stale.name not in left and old.name not in left
        assert {fresh.name, busy.name, mine.name, other.name, "r.json"} <= set(left)
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
