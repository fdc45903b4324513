"""Interrupts, runaway sizes and numba's threading layers (issue 14, items 1, 2 and 7).

The interrupt and threading-layer tests run a child Python process (a crash must not take the
test run with it) with this worktree first on its path.
"""

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

import circuits as c
from circuits import simulate
from circuits.utils import parallel, slicing
from circuits.utils.errors import DepthsepError, RunTooLongError
from circuits.utils.parallel import format_seconds, resolve_max_seconds, run_chunks

ROOT = Path(__file__).resolve().parents[1]


def _default_sigint():
    # the child handles Ctrl-C as a process started from a terminal does, even when pytest
    # itself was started with SIGINT ignored (``nohup pytest &``, some CI runners): an ignored
    # disposition is inherited across exec, and Python then installs no KeyboardInterrupt handler
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _child(code: str, env=None):
    full = dict(os.environ, PYTHONPATH=str(ROOT), **(env or {}))
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=full, cwd=str(ROOT),
                            preexec_fn=_default_sigint)


# ------------------------------------------------------------------ item 1: Ctrl-C

_LONG_COUNT = """
    import time
    import circuits as C
    from circuits.utils.parallel import run_chunks
    from circuits.analysis import correlation
    kind, ex = {kind!r}, {executor!r}
    small = C.ThresholdCircuit.single_gate([1] * 20, 10)
    big = C.ThresholdCircuit.single_gate([1] * 40, 20)     # minutes of work (either kernel)
    C.count_ones(small, executor=ex); C.truth_table(small)  # compile outside the timed part
    print("started", flush=True)
    try:
        if kind == "count_ones":
            C.count_ones(big, executor=ex, max_seconds=None)
        elif kind == "count_disagreements":
            C.count_disagreements(big, "ip", executor=ex, max_seconds=None)
        elif kind == "correlation":
            correlation(big, "parity", executor=ex)
        elif kind == "truth_table":
            wide = C.ThresholdCircuit.depth2([[1] * 30] * 400, [15] * 400, [1] * 400, 200)
            C.truth_table(wide, allow_large=True, max_seconds=None)
    except KeyboardInterrupt:
        print(f"KeyboardInterrupt at {{time.time():.3f}}", flush=True)
        raise
    print("finished: the interrupt was lost", flush=True)
"""


@pytest.mark.parametrize("kind, executor", [("count_ones", None), ("count_ones", "threads"),
                                            ("count_disagreements", None),
                                            ("correlation", "threads"), ("truth_table", None)])
def test_ctrl_c_raises_keyboard_interrupt_within_a_second(kind, executor):
    env = {"DEPTHSEP_MAX_SECONDS": "none"}
    proc = _child(_LONG_COUNT.format(kind=kind, executor=executor), env)
    try:
        line = proc.stdout.readline()
        assert "started" in line, proc.stderr.read()
        time.sleep(1.5)
        sent = time.time()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
        ended = time.time()
    finally:
        proc.kill()
    assert proc.returncode != -signal.SIGSEGV and proc.returncode != 139, err[-2000:]
    assert "KeyboardInterrupt" in out, (out, err[-2000:])
    raised = float(out.split("KeyboardInterrupt at ")[1].split()[0])
    assert raised - sent < 1.0, f"KeyboardInterrupt {raised - sent:.2f} s after SIGINT"
    assert proc.returncode in (-signal.SIGINT, 130, 1), (proc.returncode, err[-2000:])
    assert ended - sent < 10.0   # interpreter shutdown included (slow on a loaded machine)


def test_deferred_sigint_reraises_after_the_call():
    # the guard that keeps numba's return boxing whole: a SIGINT during the call is held and
    # raised when the call returns, with the call's result intact
    # (Python's own handler is installed for the test: under ``nohup pytest`` SIGINT is ignored)
    seen = []
    outer = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            with slicing._deferred_sigint():
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(0.05)
                seen.append("body finished")
        assert seen == ["body finished"]
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, outer)


def test_threads_stop_at_the_next_slice_when_the_run_is_cancelled():
    # a chunk on a worker thread notices the cancel flag between slices (the mechanism that
    # makes Ctrl-C on executor="threads" return within a slice instead of a chunk)
    meter = slicing._Meter(1 << 40, None, 1, None)
    calls = []

    def fn(start, stop):
        calls.append((start, stop))
        if len(calls) == 3:
            meter.cancel.set()
        return stop - start

    with pytest.raises(slicing._Cancelled):
        slicing._run_sliced(fn, 0, 1 << 40, lambda a, b: a + b, 0, meter, slicing._NO_GUARD)
    assert len(calls) == 3


# ------------------------------------------------------------------ item 2: runaway sizes

@pytest.mark.parametrize("executor", [None, "threads"])
def test_runaway_count_is_refused_quickly_with_its_estimate(executor):
    big = c.ThresholdCircuit.single_gate([1] * 62, 31)   # the bit-sliced kernel: ~2.6 years
    t = time.perf_counter()
    with pytest.raises(RunTooLongError) as info:
        c.count_ones(big, executor=executor)
    assert time.perf_counter() - t < 20      # a calibration, not a 46-year run
    err = info.value
    assert isinstance(err, DepthsepError)
    assert err.max_seconds == parallel.DEFAULT_MAX_SECONDS
    assert err.estimate_seconds > 365 * 86400          # years at any plausible speed
    assert err.n_items == 1 << 62
    msg = str(err)
    for hint in ("years", "client=", "max_seconds=None", "DEPTHSEP_MAX_SECONDS", "2^62"):
        assert hint in msg


def test_limit_from_keyword_and_environment(monkeypatch):
    circ = c.ThresholdCircuit.single_gate([1] * 40, 20)   # seconds even bit-sliced
    with pytest.raises(RunTooLongError, match="max_seconds=0.001"):
        c.count_ones(circ, max_seconds=0.001)
    monkeypatch.setenv("DEPTHSEP_MAX_SECONDS", "0.001")
    with pytest.raises(RunTooLongError):
        c.count_ones(circ)
    with pytest.raises(RunTooLongError):
        c.truth_table(c.ThresholdCircuit.single_gate([1] * 26, 13), allow_large=True)
    monkeypatch.setenv("DEPTHSEP_MAX_SECONDS", "none")
    assert resolve_max_seconds() is None
    small = c.ThresholdCircuit.single_gate([1] * 12, 6)
    assert c.count_ones(small) == sum(1 for k in range(1 << 12) if bin(k).count("1") >= 6)
    monkeypatch.setenv("DEPTHSEP_MAX_SECONDS", "soon")
    with pytest.raises(ValueError, match="DEPTHSEP_MAX_SECONDS"):
        c.count_ones(small)
    with pytest.raises(ValueError, match="max_seconds"):
        c.count_ones(small, max_seconds=-1)


def test_estimate_only_refuses_what_is_long():
    # 2^26 points take well under a second: the default limit never gets in the way, and an
    # explicit max_seconds=None runs anything
    circ = c.ThresholdCircuit.single_gate([1] * 26, 13)
    got = c.count_ones(circ)
    from math import comb
    assert got == sum(comb(26, k) for k in range(13, 27))
    assert c.count_ones(circ, max_seconds=None) == got


def test_slices_tile_the_range_and_grow_towards_the_target_time():
    calls = []

    def fn(start, stop):
        calls.append((start, stop))
        return stop - start

    n = 1 << 22
    assert run_chunks(fn, n, combine=lambda a, b: a + b, initial=0) == n
    assert calls[0] == (0, slicing._FIRST_SLICE)
    assert all(calls[i][1] == calls[i + 1][0] for i in range(len(calls) - 1))
    assert calls[-1][1] == n
    assert len(calls) < 12          # grown 16-fold while fast: few Python round trips


class _Tiled:
    """A chunk function that asks for a larger first slice (as the bit-sliced kernels do)."""

    def __init__(self, first_slice):
        self.first_slice = first_slice
        self.calls = []

    def __call__(self, start, stop):
        self.calls.append((start, stop))
        return stop - start


@pytest.mark.parametrize("hint, first", [(1 << 18, 1 << 18), (0, None), (True, None),
                                         ("big", None), (None, None)])
def test_a_chunk_function_may_set_its_first_slice(hint, first):
    fn = _Tiled(hint)
    n = 1 << 22
    assert run_chunks(fn, n, combine=lambda a, b: a + b, initial=0) == n
    assert fn.calls[0] == (0, first or slicing._FIRST_SLICE)     # invalid hints are ignored
    assert all(fn.calls[i][1] == fn.calls[i + 1][0] for i in range(len(fn.calls) - 1))
    assert fn.calls[-1][1] == n


def test_bit_sliced_runs_start_with_64_planes():
    circ = c.ip_depth3(8)
    fn = simulate._ChunkFn(simulate._plan_of(circ, "bitsliced")[1], c.as_boolean_function(
        "ip", 16)._spec())
    assert fn.first_slice == 64 * 4096
    assert simulate._ChunkFn(simulate._plan_of(circ, "lowhigh")[1], None).first_slice is None


def test_progress_bar_counts_points_with_an_eta(capsys):
    circ = c.ThresholdCircuit.single_gate([1] * 22, 11)
    c.count_ones(circ, progress=True)
    err = capsys.readouterr().err
    assert "pt" in err and "<" in err      # tqdm's "elapsed<remaining" ETA field


def test_format_seconds():
    assert format_seconds(0.5) == "0.5 s"
    assert format_seconds(600) == "10 min"
    assert format_seconds(46 * 365.25 * 86400) == "46 years"


# ------------------------------------------------------------------ item 7: workqueue layer

_WORKQUEUE = """
    import warnings
    import numba
    import circuits as C
    from circuits import simulate as S
    from circuits.utils import parallel
    S._SERIAL_CUBE_WORK = 0                       # force numba's parallel kernel
    circ = C.ThresholdCircuit.single_gate([1] * 22, 11)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        got = C.count_ones(circ, executor="threads")
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(2) as pool:
        got2 = C.count_ones(circ, executor=pool)
    print(parallel.numba_threading_layer(), got, got2, any("workqueue" in str(x.message) for x in w))
"""


def test_threads_on_the_workqueue_layer_do_not_abort():
    proc = _child(_WORKQUEUE, {"NUMBA_THREADING_LAYER": "workqueue"})
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, (proc.returncode, err[-2000:])
    from math import comb
    expect = sum(comb(22, k) for k in range(11, 23))
    layer, got, got2, warned = out.split()
    assert layer == "workqueue" and int(got) == expect and int(got2) == expect
    if parallel.usable_cpus() > 1:
        assert warned == "True"


_USER_THREADS = """
    import threading
    import numpy as np
    import circuits as C
    from circuits import _kernels, simulate as S
    from embeddings import _kernels as EK
    S._SERIAL_CUBE_WORK = 0                        # every count launches the parallel cube kernel
    circ = C.ThresholdCircuit.single_gate([1] * 16, 8)
    f = C.ThresholdFunction([3, -1, 2, 2, -2, 1, 1, 4, -3, 2, 1, 1], 3)
    rng = np.random.default_rng(0)
    words = rng.integers(0, 1 << 62, size=(64, 1), dtype=np.uint64)
    X = rng.normal(size=(400, 40))
    U, V = rng.random((300, 16)), rng.random((300, 16))

    def calls():
        return [C.count_ones(circ, kernel="lowhigh"),
                C.count_disagreements(circ, "majority", kernel="lowhigh").count,
                f.truth_table().tobytes(), EK._sqdist_table(words, X, 0.3, 0.0).tobytes(),
                [a.tobytes() for a in EK._min_over_label(U, V, np.int64(1))]]

    want = calls()                                 # serial: one thread
    got, errors = [], []

    def user_thread():
        try:
            for _ in range(12):
                got.append(calls())
        except BaseException as exc:
            errors.append(repr(exc))

    ts = [threading.Thread(target=user_thread) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    import numba
    print(numba.threading_layer(), len(got), all(g == want for g in got), errors)
"""


@pytest.mark.parametrize("layer", ["workqueue", "default"])
def test_user_threads_launching_parallel_kernels_do_not_abort(layer):
    # issue 25 item 10: plain user threads (no executor) calling the library at once; numba's
    # workqueue layer aborted the process (exit 134, "Concurrent access has been detected")
    env = {"NUMBA_THREADING_LAYER": layer, "NUMBA_NUM_THREADS": "2"}
    proc = _child(_USER_THREADS, env)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, (proc.returncode, err[-2000:])
    got_layer, n, same, errors = out.split(maxsplit=3)
    assert (got_layer == "workqueue") == (layer == "workqueue")
    assert n == "48" and same == "True" and errors.strip() == "[]", out


def test_every_parallel_kernel_guards_its_launch():
    # the guard lives in circuits._jit.njit: every parallel=True kernel of the library is a
    # ParallelKernel, so no launch can bypass it (a lint test makes every kernel use that njit)
    import importlib
    import pkgutil

    import numba.core.registry

    from circuits._jit import ParallelKernel
    found, bare = [], []
    for pkg in ("circuits", "embeddings", "networks"):
        root = importlib.import_module(pkg)
        for info in pkgutil.walk_packages(root.__path__, pkg + "."):
            if "_kernels" not in info.name and not info.name.endswith("_simd"):
                continue
            mod = importlib.import_module(info.name)
            for name, obj in vars(mod).items():
                if isinstance(obj, ParallelKernel):
                    found.append(f"{info.name}.{name}")
                elif isinstance(obj, numba.core.registry.CPUDispatcher) and \
                        obj.targetoptions.get("parallel"):
                    bare.append(f"{info.name}.{name}")
    assert bare == []
    assert {"circuits._kernels._cube_run", "embeddings._kernels._sqdist_table",
            "embeddings._kernels._min_over_label"} <= set(found), found


# ------------------------------------------------------------------ item 8: named arguments

from networks.sigma import SigmaNetwork  # noqa: E402
from networks.train import train  # noqa: E402
from circuits.utils.errors import InvalidCircuitError  # noqa: E402


@pytest.mark.parametrize("call, err, match", [
    (lambda: c.ThresholdCircuit.depth2([[1, 1], [1, 1]], [1, 2], [1, 1], [1, 2]),
     InvalidCircuitError, "output_threshold must be a single integer"),
    (lambda: c.ThresholdCircuit.single_gate([1, 1], [1, 2]), InvalidCircuitError,
     "threshold must be a single integer"),
    (lambda: c.ThresholdCircuit.single_gate([1, 1], True), InvalidCircuitError,
     "threshold holds booleans"),
    (lambda: c.ThresholdCircuit.depth2([[1, 1], [1, 1]], [True, 2], [1, 1], 1),
     InvalidCircuitError, "thresholds holds booleans"),
    (lambda: c.ThresholdCircuit.depth2([[1, 1], [1, 1]], np.array([1, 2]), [1, 1], np.True_),
     InvalidCircuitError, "output_threshold holds booleans"),
    (lambda: c.ThresholdCircuit.single_gate(np.array([True, False]), 1), InvalidCircuitError,
     "weights holds booleans"),
    (lambda: c.ThresholdFunction([1, 2], True), InvalidCircuitError, "threshold holds booleans"),
    (lambda: SigmaNetwork.random([3, 2.7, 1]), TypeError, r"dims\[1\] must be an int"),
    (lambda: SigmaNetwork.random([3, True, 1]), TypeError, r"dims\[1\] must be an int"),
    (lambda: SigmaNetwork.random([3, 2, 1], scale="2"), TypeError, "scale must be a real"),
    (lambda: SigmaNetwork.random([3, 2, 1], bias_scale=True), TypeError, "bias_scale"),
    (lambda: train(SigmaNetwork.random([3, 2, 1]), "abc", [1.0]), TypeError,
     r"X must be an array of real numbers of shape \(n_points, 3\)"),
    (lambda: train(SigmaNetwork.random([3, 2, 1]), [[1, 2, 3]], ["a"]), TypeError,
     "y must be an array of real numbers"),
])
def test_bad_arguments_are_named(call, err, match):
    with pytest.raises(err, match=match):
        call()


def test_single_values_in_any_integer_form_still_work():
    a = c.ThresholdCircuit.depth2([[1, 1], [1, 1]], [1, 2], [1, -1], np.array([1]))
    b = c.ThresholdCircuit.depth2([[1, 1], [1, 1]], [1, 2], [1, -1], np.int64(1))
    assert a.equals(b) and c.truth_table(a).tolist() == [0, 1, 1, 0]
    assert c.ThresholdCircuit.single_gate([1, 1], 2.0).equals(c.ThresholdCircuit.single_gate([1, 1], 2))
