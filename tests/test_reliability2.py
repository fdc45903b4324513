"""Issue 25 (reliability, round two): wrong bits, plan overflow, hostile files, the CLI's last
resort, --json and the fuzzers that stay (fast profiles here, long ones behind ``slow``)."""

import io
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

import circuits as C
from circuits.graph import DagGate
from circuits.io import load_circuit, load_truth_table
from circuits.threshold import INT64_MAX, preactivation_bound
from circuits.utils.documents import read_document
from circuits.utils.errors import DepthsepError, InvalidCircuitError
from experiments import cli
from networks.interop import load_state_dict
from networks.sigma import SigmaNetwork
from tests.naive import circuit_table

ROOT = Path(__file__).resolve().parents[1]
I64_MIN = -(1 << 63)


# ------------------------------------------------------------ item 1: one exact bound rule
def test_threshold_function_wrapping_bound_refused():
    # sum |w| = 2^63 wraps in int64: accepted (and evaluated wrongly as [0, 1, 1, 0]) before
    with pytest.raises(InvalidCircuitError, match="exceeds int64"):
        C.ThresholdFunction([2**62, 2**62], 2**62)
    with pytest.raises(InvalidCircuitError, match="exceeds int64"):
        C.ThresholdFunction([2**62] * 3, 2**62 + 1)


@pytest.mark.parametrize("make", [
    lambda: C.ThresholdFunction([I64_MIN], 0),
    lambda: C.ThresholdFunction([1], I64_MIN),
    lambda: C.ThresholdLayer([[I64_MIN, 0]], [0]),
    lambda: C.ThresholdLayer([[1]], [I64_MIN]),
    lambda: C.ThresholdCircuit.single_gate([I64_MIN], 0),
    lambda: DagGate("g", "THR", [("x", 0)], weights=[I64_MIN], threshold=0),
    lambda: DagGate("g", "THR", [("x", 0), ("x", 1)], weights=[2**62, 2**62], threshold=0),
])
def test_int64_min_refused_everywhere(make):
    with pytest.raises(InvalidCircuitError, match="exceeds int64"):
        make()


def test_bound_rule_is_exact_at_the_limit():
    # exactly 2^63 - 1 is legal, one more is not, for the layer and the function alike
    half = INT64_MAX // 2
    assert preactivation_bound([[half, half]], [1]) == INT64_MAX
    C.ThresholdFunction([half, half], 1)
    C.ThresholdLayer([[half, half]], [1])
    with pytest.raises(InvalidCircuitError):
        C.ThresholdFunction([half, half], 2)
    with pytest.raises(InvalidCircuitError):
        C.ThresholdLayer([[half, half]], [2])
    f = C.ThresholdFunction([half, half], 1)
    assert f.truth_table().tolist() == [0, 1, 1, 1]
    g = C.ThresholdFunction([half, -half], -1)
    assert g.truth_table().tolist() == [1, 1, 0, 1]


# ------------------------------------------------ item 2: bit-sliced plan near the int64 limit
@pytest.mark.parametrize("kernel", ["auto", "lowhigh"])
def test_plan_decides_not_applicable_before_overflow(kernel):
    W = [[2**59, -2**59 + 1, 5]] * 4
    T = [1, 2, 3, -4]
    c = C.ThresholdCircuit.depth2(W, T, [1, 1, 1, 1], 2)
    want = circuit_table([(W, T), ([[1, 1, 1, 1]], [2])], 3)
    assert C.truth_table(c, kernel=kernel).tolist() == want
    assert C.count_ones(c, kernel=kernel) == sum(want)
    assert C.count_disagreements(c, C.TruthTable(want), kernel=kernel).count == 0
    if kernel == "auto":
        assert C.kernel_plan(c).kernel == "lowhigh"
    with pytest.raises(InvalidCircuitError, match="does not apply"):
        C.count_ones(c, kernel="bitsliced")


# ---------------------------------------------------------- item 3: every saved network loads
def test_save_bytes_per_parameter_fit_the_load_limit(tmp_path):
    # worst case: width-1 rows of the longest float reprs; scaled to MAX_NETWORK_PARAMS, the
    # file must fit MAX_NETWORK_BYTES and the value count the loader's max_values
    import networks.sigma as sigma
    net = SigmaNetwork.random([1, 2000, 1], seed=0)
    worst = -1.2345678901234567e-308
    net = net.with_layers([type(L)(np.full_like(L.weights, worst), np.full_like(L.bias, worst))
                           for L in net.layers])
    p = net.save(tmp_path / "w.json")
    per_param = p.stat().st_size / net.n_params
    assert per_param * sigma.MAX_NETWORK_PARAMS <= sigma.MAX_NETWORK_BYTES
    assert SigmaNetwork.load(p).equals(net)


@pytest.mark.slow
def test_large_network_save_then_load(tmp_path):
    # 2.4 M parameters: the indented JSON of save() was above load()'s 64 MiB limit
    net = SigmaNetwork.random([1, 800_000, 1], seed=0, bias_scale=1.0)
    assert net.n_params > 2_300_000
    p = net.save(tmp_path / "big.json")
    assert SigmaNetwork.load(p).equals(net)


def test_save_refuses_what_load_would_refuse(tmp_path, monkeypatch):
    import networks.sigma as sigma
    net = SigmaNetwork.random([3, 4, 1], seed=0)
    monkeypatch.setattr(sigma, "MAX_NETWORK_PARAMS", net.n_params - 1)
    with pytest.raises(DepthsepError, match="parameters"):
        net.save(tmp_path / "n.json")
    assert not (tmp_path / "n.json").exists()


# ------------------------------------------------------------ item 4: non-regular files
def _loaders():
    return {
        "read_document": lambda p: read_document(p),
        "load_circuit": lambda p: load_circuit(p),
        "load_truth_table": lambda p: load_truth_table(p),
        "SigmaNetwork.load": lambda p: SigmaNetwork.load(p),
        "load_state_dict": lambda p: load_state_dict(p),
    }


_SUFFIX = {"load_truth_table": ".txt", "load_state_dict": ".npz"}


def _run_child(code: str, timeout: float = 60):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=timeout, env=env, cwd=str(ROOT))


@pytest.mark.parametrize("name", sorted(_loaders()))
@pytest.mark.parametrize("special", ["fifo", "devzero"])
def test_special_files_refused_without_blocking(tmp_path, name, special):
    p = tmp_path / f"f{_SUFFIX.get(name, '.json')}"
    if special == "fifo":
        os.mkfifo(p)
    else:
        p.symlink_to("/dev/zero")
    # in-process with an alarm: a blocking open/read would hang the test run otherwise
    import signal

    def _hang(*_):
        raise TimeoutError("loader blocked")
    old = signal.signal(signal.SIGALRM, _hang)
    signal.alarm(10)
    try:
        with pytest.raises(DepthsepError, match="not a regular file"):
            _loaders()[name](p)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def test_cli_check_on_fifo_does_not_hang(tmp_path):
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    r = subprocess.run([sys.executable, "-m", "experiments.cli", "check", str(fifo), "--target",
                        "ip"], capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, PYTHONPATH=str(ROOT)), cwd=str(ROOT))
    assert r.returncode == 1 and "not a regular file" in r.stderr
    assert "Traceback" not in r.stderr


# ------------------------------------------------------------------------- item 5: memory
def _npz_bytes(members: dict, compression=zipfile.ZIP_STORED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=compression) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def _npy(arr) -> bytes:
    b = io.BytesIO()
    np.save(b, arr)
    return b.getvalue()


def test_npz_zip_bomb_refused_from_the_directory(tmp_path):
    # 64 MiB of zeros compress to ~64 KiB; the limit is checked before inflating anything
    p = tmp_path / "bomb.npz"
    p.write_bytes(_npz_bytes({"w.npy": _npy(np.zeros(1 << 23))}, zipfile.ZIP_DEFLATED))
    assert p.stat().st_size < 1 << 20
    with pytest.raises(DepthsepError, match="zip bomb"):
        load_state_dict(p, max_bytes=1 << 24)


def test_npy_header_declaring_more_than_present_refused(tmp_path):
    raw = bytearray(_npy(np.zeros(4, dtype=np.uint8)))
    raw = bytes(raw).replace(b"(4,)", b"(1099511627776,)".ljust(4))   # 2^40 declared
    hdr_ok = _npy(np.zeros(4, dtype=np.uint8))
    p = tmp_path / "t.npy"
    # rebuild a valid-length header with the huge shape
    from numpy.lib import format as npf
    b = io.BytesIO()
    npf.write_array_header_1_0(b, {"descr": "|u1", "fortran_order": False,
                                   "shape": (1 << 40,)})
    p.write_bytes(b.getvalue() + b"\0" * 4)
    with pytest.raises(InvalidCircuitError, match="header declares"):
        load_truth_table(p)
    q = tmp_path / "w.npz"
    q.write_bytes(_npz_bytes({"w.npy": b.getvalue() + b"\0" * 4}))
    with pytest.raises(DepthsepError, match="header declares"):
        load_state_dict(q)
    assert raw and hdr_ok


def test_truth_table_json_with_one_long_string_is_refused_cheaply(tmp_path):
    # numpy would make a (2^15, 100k)-character string array (~13 GiB) out of this 160 KB file
    p = tmp_path / "t.json"
    p.write_text(json.dumps(["a" * 100_000] + [0] * (1 << 15)))
    with pytest.raises(InvalidCircuitError, match=r"truth_table\[0\]"):
        load_truth_table(p)


# -------------------------------------------------- item 6: our errors, and the CLI's last resort
@pytest.mark.parametrize("content", [b"garbage", b"PK\x03\x04" + b"\0" * 40,
                                     _npz_bytes({"w.npy": b"\x93NUMPY\x01\x00zz"})])
def test_cli_info_on_broken_npz_is_one_line(tmp_path, capsys, content):
    p = tmp_path / "garbage.npz"
    p.write_bytes(content)
    assert cli.main(["info", str(p)]) == 1
    err = capsys.readouterr().err
    assert "garbage.npz" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_cli_info_on_a_directory_says_directory(tmp_path, capsys):
    assert cli.main(["info", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "directory" in err and "no such file" not in err


def test_cli_last_resort_handler(monkeypatch, capsys, tmp_path):
    def boom(args):
        raise RuntimeError("unexpected\nmulti-line")
    monkeypatch.setitem(cli._FILE_HANDLERS, "info", boom)
    assert cli.main(["info", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "internal error: RuntimeError" in err

    def interrupted(args):
        raise KeyboardInterrupt
    monkeypatch.setitem(cli._FILE_HANDLERS, "info", interrupted)
    assert cli.main(["info", str(tmp_path)]) == 130
    assert capsys.readouterr().err == "depthsep: interrupted\n"


# ------------------------------------------------------------- item 13: --json prints own files
def test_json_lists_only_files_this_run_wrote(tmp_path, capsys):
    secret = tmp_path / "secret.json"
    secret.write_text('{"password": "hunter2"}')
    secret.chmod(0o600)
    out = tmp_path / "out"
    out.mkdir()
    (out / "link.json").symlink_to(secret)
    (out / "old.json").write_text('{"old": true}')
    linked_dir = tmp_path / "elsewhere"
    linked_dir.mkdir()
    (linked_dir / "x.json").write_text('{"x": 1}')
    (out / "sub").symlink_to(linked_dir)
    rc = cli.main(["ip-demo", "--n-max", "1", "--depth2-n-max", "1", "--out", str(out),
                   "--json"])
    assert rc == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["files"], "the run's own files are listed"
    text = json.dumps(doc["files"])
    assert "hunter2" not in text and "link.json" not in doc["files"]
    assert "old.json" not in doc["files"] and not any(k.startswith("sub") for k in doc["files"])


# ------------------------------------------------------------- item 7: one run per --out
def test_second_run_on_a_locked_out_dir_is_refused(tmp_path, capsys):
    import fcntl
    out = tmp_path / "out"
    out.mkdir()
    fd = os.open(out, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)      # a run in progress holds it
        assert cli.main(["ip-demo", "--n-max", "1", "--depth2-n-max", "1", "--out", str(out)]) == 1
        assert "another depthsep run" in capsys.readouterr().err
        assert list(out.iterdir()) == []
    finally:
        os.close(fd)
    assert cli.main(["ip-demo", "--n-max", "1", "--depth2-n-max", "1", "--out", str(out)]) == 0


# --------------------------------------------------------------------- the fuzzers that stay
def test_circuit_fuzzer_fast_profile():
    from tests import fuzz_circuits
    stats, failures, _ = fuzz_circuits.run(120, seed=25, fused_every=60)
    assert failures == []
    assert stats["cases"] >= 100 and stats["bitsliced"] > 0 and stats["lowhigh"] >= 100


def test_file_fuzzer_fast_profile():
    from tests import fuzz_files
    stats, failures, _ = fuzz_files.run(300, seed=25)
    assert failures == []
    assert stats["cases"] == 300 and sum(v for k, v in stats.items() if "refused" in k) > 0
    stats, failures, _ = fuzz_files.run(40, seed=26, every_target=True, subprocess_every=40)
    assert failures == []
    assert stats["load_circuit refused"] + stats["load_circuit accepted"] == 40
    assert sum(v for k, v in stats.items() if k.startswith("cli info")) == 40
    assert stats["real cli processes"] == 3


@pytest.mark.slow
def test_circuit_fuzzer_long_profile():
    from tests import fuzz_circuits
    stats, failures, _ = fuzz_circuits.run(10_000, seed=2025, fused_every=200)
    assert failures == [] and stats["cases"] >= 9_000


@pytest.mark.slow
def test_circuit_fuzzer_long_profile_bit_sliced_range():
    # every case in the bit-sliced range, so "bitsliced" and "fused" check all of them; the
    # fused kernels compiled here stay in memory (~1.4 MiB each): children of 500 cases
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-m", "tests.fuzz_circuits", "10000", "2026",
                          "--kernels", "bitsliced,fused", "--scales", "small", "--batch", "500"],
                         capture_output=True, text=True, cwd=str(ROOT),
                         env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]


@pytest.mark.slow
def test_file_fuzzer_long_profile():
    from tests import fuzz_files
    stats, failures, _ = fuzz_files.run(10_000, seed=2025, every_target=True,
                                        subprocess_every=100)
    assert failures == [] and stats["cases"] == 10_000


# ------------------------------------------- item 10: Ctrl-C while chunks are being submitted
def test_interrupt_during_submission_stops_the_chunks_already_submitted():
    import concurrent.futures as cf
    import time as _time

    from circuits.utils.parallel import run_chunks

    calls = []

    def fn(start, stop):                    # 1 ms per item: a 4096-item chunk runs ~4 s
        calls.append((start, stop))
        _time.sleep(0.001 * (stop - start))
        return stop - start

    class InterruptedPool(cf.ThreadPoolExecutor):
        def submit(self, *a, **k):
            if len(self.seen) == 3:
                raise KeyboardInterrupt     # Ctrl-C arrives while chunk 4 is being submitted
            self.seen.append(1)
            return super().submit(*a, **k)

    pool = InterruptedPool(max_workers=2)
    pool.seen = []
    try:
        with pytest.raises(KeyboardInterrupt):
            run_chunks(fn, 1 << 16, combine=lambda a, b: a + b, initial=0, executor=pool,
                       chunk_size=4096, max_seconds=None)
        t0 = _time.perf_counter()
        pool.shutdown(wait=True)
        waited = _time.perf_counter() - t0
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    # the running chunks stop at their next slice and the queued one never starts: far less
    # than the ~8 s the three submitted chunks (two at a time) would take to finish
    assert waited < 3.0, waited
    assert sum(e - s for s, e in calls) < 3 * 4096
