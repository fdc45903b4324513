"""Hostile and special files against every loader and CLI file command (issue 25 items 4-6).

Non-regular files are refused before they are opened (a FIFO used to block forever), numpy
files have their zip directory and ``.npy`` headers checked before any array is allocated, and
every problem is one of our own errors naming the file.
"""

import io
import json
import os
import threading
import tracemalloc
import zipfile

import numpy as np
import pytest

from circuits.io import load_circuit, load_truth_table
from circuits.utils.documents import read_document
from circuits.utils.errors import DepthsepError
from circuits.utils.files import read_json
from networks.interop import load_state_dict, save_state_dict
from networks.sigma import SigmaNetwork

LOADERS = {
    "load_circuit": (load_circuit, ".json"),
    "load_truth_table.json": (load_truth_table, ".json"),
    "load_truth_table.npy": (load_truth_table, ".npy"),
    "load_truth_table.txt": (load_truth_table, ".txt"),
    "SigmaNetwork.load": (SigmaNetwork.load, ".json"),
    "read_json": (read_json, ".json"),
    "read_document": (read_document, ".json"),
    "load_state_dict": (load_state_dict, ".npz"),
}


def _bounded(fn, seconds=20.0):
    """Run ``fn`` in a daemon thread; (finished, exception or None)."""
    box = {}

    def run():
        try:
            fn()
            box["exc"] = None
        except BaseException as exc:          # noqa: BLE001 - inspected by the caller
            box["exc"] = exc

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(seconds)
    return "exc" in box, box.get("exc")


@pytest.fixture
def fifo(tmp_path):
    made = []

    def make(suffix):
        p = tmp_path / f"pipe{suffix}"
        os.mkfifo(p)
        made.append(p)
        return p

    yield make
    for p in made:                # release a reader that the old code left blocked in open()
        try:
            os.close(os.open(p, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:
            pass


@pytest.mark.parametrize("name", sorted(LOADERS))
def test_a_fifo_is_refused_before_opening(name, fifo):
    fn, suffix = LOADERS[name]
    p = fifo(suffix)
    done, exc = _bounded(lambda: fn(p), 10.0)
    assert done, f"{name} blocked on a FIFO"
    assert isinstance(exc, DepthsepError) and "FIFO" in str(exc) and str(p) in str(exc), exc


@pytest.mark.parametrize("name", sorted(LOADERS))
def test_dev_zero_behind_a_symlink_is_refused(name, tmp_path):
    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero")
    fn, suffix = LOADERS[name]
    p = tmp_path / f"zero{suffix}"
    p.symlink_to("/dev/zero")
    done, exc = _bounded(lambda: fn(p), 10.0)
    assert done, f"{name} hung on /dev/zero"
    assert isinstance(exc, DepthsepError) and "not a regular file" in str(exc), exc


@pytest.mark.parametrize("name", sorted(LOADERS))
def test_a_directory_is_named_as_one(name, tmp_path):
    fn, suffix = LOADERS[name]
    d = tmp_path / f"dir{suffix}"
    d.mkdir()
    with pytest.raises(DepthsepError, match="directory"):
        fn(d)


def _npz_with_header(shape, dtype="<u1", data=b"\0" * 16):
    header = {"descr": dtype, "fortran_order": False, "shape": shape}
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, header)
    buf.write(data)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("0.weight.npy", buf.getvalue())
    return out.getvalue()


def _peak(fn):
    tracemalloc.start()
    try:
        fn()
    except DepthsepError as exc:
        err = exc
    else:
        err = None
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak, err


def test_npz_header_declaring_a_huge_array_is_refused_before_allocating(tmp_path):
    p = tmp_path / "bomb.npz"
    p.write_bytes(_npz_with_header((1 << 34,)))          # 16 GiB declared, 16 bytes present
    peak, err = _peak(lambda: load_state_dict(p))
    assert err is not None and "0.weight.npy" in str(err) and str(p) in str(err)
    assert peak < 50 << 20


def test_npz_zip_bomb_is_refused_from_the_directory(tmp_path):
    # 64 MiB of zeros compressed to ~64 KiB; the limit says 8 MiB
    arr = np.zeros(64 << 20, dtype=np.uint8)
    p = tmp_path / "zeros.npz"
    np.savez_compressed(p, a=arr)
    assert p.stat().st_size < 1 << 20
    peak, err = _peak(lambda: load_state_dict(p, max_bytes=8 << 20))
    assert err is not None and "max_bytes" in str(err)
    assert peak < 20 << 20


def test_npz_directory_that_understates_a_member_is_corrupt_not_a_bomb(tmp_path):
    arr = np.zeros(4 << 20, dtype=np.uint8)
    buf = io.BytesIO()
    np.savez_compressed(buf, a=arr)
    raw = bytearray(buf.getvalue())
    # patch the uncompressed size in the central directory entry (offset 24) to 1 KiB
    cd = raw.rfind(b"PK\x01\x02")
    raw[cd + 24:cd + 28] = (1024).to_bytes(4, "little")
    p = tmp_path / "liar.npz"
    p.write_bytes(bytes(raw))
    peak, err = _peak(lambda: load_state_dict(p))
    assert err is not None and str(p) in str(err)
    assert peak < 20 << 20


def test_npz_round_trip_still_works(tmp_path):
    net = SigmaNetwork.random([3, 4, 1], seed=0)
    p = save_state_dict(net, tmp_path / "w.npz")
    state = load_state_dict(p)
    assert SigmaNetwork.from_state_dict(state).equals(net)
    fortran = tmp_path / "f.npz"
    np.savez(fortran, a=np.asfortranarray(np.arange(6.0).reshape(2, 3)))
    assert load_state_dict(fortran)["a"].tolist() == [[0, 1, 2], [3, 4, 5]]


def test_npy_truth_table_header_is_checked_before_reading(tmp_path):
    header = {"descr": "<u1", "fortran_order": False, "shape": (1 << 36,)}
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, header)
    p = tmp_path / "t.npy"
    p.write_bytes(buf.getvalue() + b"\0" * 8)
    peak, err = _peak(lambda: load_truth_table(p))
    assert err is not None and str(p) in str(err)
    assert peak < 20 << 20
    q = tmp_path / "ok.npy"
    np.save(q, np.array([0, 1, 1, 0], dtype=np.uint8))
    assert load_truth_table(q).tolist() == [0, 1, 1, 0]


def test_truth_table_json_memory_is_bounded(tmp_path):
    # ~1 MB: one long string and 100,000 short ones made numpy allocate ~160 GB of '<U' cells
    p = tmp_path / "t.json"
    p.write_text(json.dumps(["x" * 400_000] + ["a"] * 100_000))
    peak, err = _peak(lambda: load_truth_table(p))
    assert err is not None and str(p) in str(err)
    assert peak < 64 << 20
    q = tmp_path / "ok.json"
    q.write_text(json.dumps({"truth_table": [0, 1, 1, 1]}))
    assert load_truth_table(q).tolist() == [0, 1, 1, 1]
    r = tmp_path / "bools.json"
    r.write_text(json.dumps([False, True, True, False]))
    assert load_truth_table(r).tolist() == [0, 1, 1, 0]


_RSS_CHILD = """
import resource, sys
from circuits.io import load_truth_table
from circuits.utils.errors import DepthsepError
load_truth_table(sys.argv[2])                      # warm: every import and code path done
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    load_truth_table(sys.argv[1])
    verdict = "accepted"
except DepthsepError as exc:
    verdict = "refused " + str(exc).replace(chr(10), " ")[:400]
print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) // 1024, verdict)
"""

#: 4 MiB truth-table JSON files.  Before issue 25's byte-level reader, json.loads built one
#: Python object per entry: peak RSS above a warm loader's grew 50 MiB (empty objects), 133 MiB
#: (nested lists), 97 MiB (short strings), 45 MiB (object keys), up to ~2 GiB at the loader's
#: 64 MiB size limit; now it stays within the warm peak (0 MiB growth measured for each).
_HOSTILE_TABLES = {
    "objects": lambda n: "[" + ",".join(["{}"] * (n // 3)) + "]",
    "nested lists": lambda n: "[" + ",".join(["[[[[[[[[[[]]]]]]]]]]"] * (n // 21)) + "]",
    "strings": lambda n: "[" + ",".join(['"ab"'] * (n // 5)) + "]",
    "keys": lambda n: "{" + ",".join(f'"{i:x}":0' for i in range(n // 10)) + "}",
}


@pytest.mark.parametrize("shape", sorted(_HOSTILE_TABLES))
def test_truth_table_json_peak_rss_is_a_few_bytes_per_byte(tmp_path, shape):
    import subprocess
    import sys
    from pathlib import Path
    root = Path(__file__).resolve().parents[1]
    p = tmp_path / "t.json"
    p.write_text(_HOSTILE_TABLES[shape](4 << 20))
    ok = tmp_path / "ok.json"
    ok.write_text("[0, 1, 1, 0]")
    out = subprocess.run([sys.executable, "-c", _RSS_CHILD, str(p), str(ok)], capture_output=True,
                         text=True, timeout=120, cwd=str(root),
                         env=dict(os.environ, PYTHONPATH=str(root)))
    assert out.returncode == 0, out.stderr[-2000:]
    grew, verdict = out.stdout.split(" ", 1)
    assert verdict.startswith("refused") and str(p) in verdict, verdict
    assert int(grew) < 24, f"{shape}: peak RSS grew {grew} MiB for a 4 MiB file"


_CLI_RSS_CHILD = """
import contextlib, io, resource, sys
from experiments.cli import main
def run(path):
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        rc = main(["spectrum", path])
    return rc, err.getvalue()
run(sys.argv[2])                                   # warm
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
rc, err = run(sys.argv[1])
print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) // 1024, rc,
      err.replace(chr(10), " ")[:300])
"""


@pytest.mark.parametrize("shape", ["objects", "nested lists", "strings"])
def test_cli_spectrum_reads_a_table_json_without_a_generic_parse(tmp_path, shape):
    # `depthsep spectrum|check --target FILE.json` parsed the file with json.loads first to
    # look for a circuit's "format": 76-166 MiB above the warm peak for these 4 MiB files
    import subprocess
    import sys
    from pathlib import Path
    root = Path(__file__).resolve().parents[1]
    p = tmp_path / "t.json"
    p.write_text(_HOSTILE_TABLES[shape](4 << 20))
    ok = tmp_path / "ok.json"
    ok.write_text("[0, 1, 1, 0]")
    out = subprocess.run([sys.executable, "-c", _CLI_RSS_CHILD, str(p), str(ok)],
                         capture_output=True, text=True, timeout=120, cwd=str(root),
                         env=dict(os.environ, PYTHONPATH=str(root)))
    assert out.returncode == 0, out.stderr[-2000:]
    grew, rc, err = out.stdout.split(" ", 2)
    assert rc == "1" and "truth_table[0]" in err and str(p) in err, out.stdout
    assert int(grew) < 24, f"{shape}: peak RSS grew {grew} MiB for a 4 MiB file"


@pytest.mark.parametrize("text, want", [
    ("[0,1,1,0]", [0, 1, 1, 0]),
    (" \n[ 0 ,\t1 ,\r\n 1, 0 ]\n", [0, 1, 1, 0]),
    ("[false, true, true, true]", [0, 1, 1, 1]),
    ('{"truth_table": [1, 0]}', [1, 0]),
    (' {\n "truth_table" :\n[1,\n0]\n}\n', [1, 0]),
    ('{"truth_table": [0, 1], "name": "xor-ish", "n": 1}', [0, 1]),     # generic, small
    ('{"name": "x", "truth_table": [1, 1]}', [1, 1]),
])
def test_truth_table_json_shapes_still_read(tmp_path, text, want):
    p = tmp_path / "t.json"
    p.write_text(text)
    assert load_truth_table(p).tolist() == want


@pytest.mark.parametrize("text, match", [
    ("[0, 1, 2, 0]", r"truth_table\[2\] = '2'"),
    ("[0, 1, 10, 0]", r"truth_table\[2\] = '10'"),
    ("[0, 1, 1.0, 0]", r"truth_table\[2\] = '1.0'"),
    ('[0, "1", 1, 0]', r"truth_table\[1\] = '\"1\"'"),
    ("[0, 1, 1, 0,]", r"truth_table\[4\] = nothing"),
    ("[0, 1 1, 0]", r"truth_table\[1\] = '11'"),
    ("[0, 1, 1, 0", "not closed"),
    ("[0, 1, 1, 0] x", "not closed"),
    ("[0, 1, 1]", "power-of-two"),
    ('{"truth_table": [0, 1], "pad": [' + "0," * 5000 + "0]}", "read only up to 4096"),
    ('{"table": [0, 1]}', "needs a 'truth_table' field"),
], ids=lambda v: v[:24] if isinstance(v, str) else None)
def test_truth_table_json_errors_name_the_entry(tmp_path, text, match):
    p = tmp_path / "t.json"
    p.write_text(text)
    with pytest.raises(DepthsepError, match=match) as exc:
        load_truth_table(p)
    assert str(p) in str(exc.value)


# ------------------------------------------------------------------ the CLI's file commands

def _cli(argv, capsys):
    from experiments.cli import main
    rc = main(argv)
    out, err = capsys.readouterr()
    return rc, out, err


def test_cli_info_on_a_directory_says_directory(tmp_path, capsys):
    rc, out, err = _cli(["info", str(tmp_path)], capsys)
    assert rc == 1 and "directory" in err and "no such file" not in err
    assert len(err.strip().splitlines()) == 1


def test_cli_info_on_a_garbage_npz_is_one_line(tmp_path, capsys):
    p = tmp_path / "garbage.npz"
    p.write_bytes(b"this is not a zip file")
    rc, out, err = _cli(["info", str(p)], capsys)
    assert rc == 1 and str(p) in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("argv", [["check", "{f}", "--target", "parity"], ["spectrum", "{f}"],
                                  ["info", "{f}"]])
def test_cli_file_commands_refuse_a_fifo(argv, fifo, capsys):
    p = fifo(".json")
    box = {}
    done, exc = _bounded(lambda: box.setdefault("rc", __import__("experiments.cli").cli.main(
        [a.format(f=p) for a in argv])), 10.0)
    assert done and exc is None and box["rc"] == 1
    assert "FIFO" in capsys.readouterr().err


def test_cli_last_resort_handler_is_one_line_exit_1(tmp_path, capsys, monkeypatch):
    import experiments.cli as cli

    def boom(args):
        raise RuntimeError("an unexpected bug\nwith a second line")

    monkeypatch.setitem(cli._FILE_HANDLERS, "info", boom)
    p = tmp_path / "x.json"
    p.write_text("{}")
    rc, out, err = _cli(["info", str(p)], capsys)
    assert rc == 1 and "Traceback" not in err and "RuntimeError" in err
    assert len(err.strip().splitlines()) == 1


def test_cli_ctrl_c_is_one_line_exit_130(tmp_path):
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path
    root = Path(__file__).resolve().parents[1]
    p = tmp_path / "x.json"
    p.write_text("{}")
    code = ("import sys, time, experiments.cli as c\n"
            "def slow(args):\n    print('ready', flush=True); time.sleep(60)\n"
            "c._FILE_HANDLERS['info'] = slow\n"
            f"sys.exit(c.main(['info', {str(p)!r}]))\n")
    # the child handles Ctrl-C as when started from a terminal, even under a pytest that runs
    # with SIGINT ignored (a background job): an ignored disposition is inherited across exec
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=str(root),
                            env=dict(os.environ, PYTHONPATH=str(root)),
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert proc.stdout.readline().strip() == "ready"
    time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert err.strip().endswith("interrupted") and len(err.strip().splitlines()) == 1


def test_cli_json_prints_only_the_files_this_run_wrote(tmp_path, capsys):
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps({"secret": "do not print"}))
    os.chmod(secret, 0o600)
    out = tmp_path / "out"
    out.mkdir()
    (out / "linked.json").symlink_to(secret)               # fresh mtime, outside --out
    (out / "other.json").write_text(json.dumps({"not": "ours"}))   # written just now, not by us
    rc, text, err = _cli(["--json", "ip-demo", "--n-max", "1", f"--out={out}"], capsys)
    assert rc == 0, err
    rec = json.loads(text)
    assert "ip_demo.json" in rec["files"]
    assert not {"linked.json", "other.json"} & set(rec["files"])
    assert "do not print" not in text and '"ours"' not in text


def test_cli_info_names_the_file_and_the_field_of_a_bad_state_dict(tmp_path, capsys):
    p = tmp_path / "w.npz"
    np.savez(p, **{"0.weight": np.array([["a", "b"]]), "0.bias": np.array(["x"])})
    rc, out, err = _cli(["info", str(p)], capsys)
    assert rc == 1 and str(p) in err and "0.weight" in err


def test_fuzzer_covers_the_truth_table_and_resume_readers():
    """Mutated truth tables, cells.jsonl and sampled.json files through least-circuit's table
    reader and the two resume readers: only our own errors, no hang, no changed row used while
    the file still carries checksums (the long run, 10,000 files each, is in
    docs/reliability.rst)."""
    from tests import fuzz_files

    readers = ("least-circuit --table", "cells.jsonl", "sampled.json")
    stats, failures, _ = fuzz_files.run(150, seed=31, every_target=True, only=readers)
    assert failures == []
    assert stats["cases"] == 150
    for name in readers:
        assert sum(v for k, v in stats.items() if k.startswith(name)) == 150
    assert stats["least-circuit --table refused"] > 0
    assert sum(v for k, v in stats.items() if k.startswith("cells.jsonl") and "aside" in k) > 0
    assert sum(v for k, v in stats.items() if k.startswith("sampled.json") and "aside" in k) > 0
