"""Training robustness (issues 24/25): divergence stops with a clear error, Ctrl-C lands inside an
epoch, time and memory are estimated and refused before the bulk of a run, and the first
epoch seen by the progress bar does not include kernel compilation."""

from __future__ import annotations

import _thread
import importlib
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

from circuits.utils.errors import DimensionError, InvalidNetworkError, RunTooLongError
from embeddings import HardInstance
from networks import SigmaNetwork, train

tp = importlib.import_module("networks.train_product")     # the module (the package exports the function)


@pytest.fixture(scope="module")
def inst3():
    return HardInstance(3, seed=0)


@pytest.mark.parametrize("dims", [[16], [8, 6]])
@pytest.mark.parametrize("act", ["relu", "sigmoid"])
def test_lr_1e6_stops_with_a_divergence_error(inst3, dims, act):
    """lr = 1e6 drives the loss to ~1e12 with finite numbers: both trainers must stop and say so."""
    net = SigmaNetwork.random([inst3.dim, *dims, 1], act, seed=0)
    with pytest.raises(InvalidNetworkError, match="diverged.*lower lr"):
        tp.train_product(net, inst3, epochs=3000, lr=1e6, patience=None)
    X, _, y = inst3.support()
    with pytest.raises(InvalidNetworkError, match="diverged.*lower lr"):
        train(net, X, y.astype(float), epochs=3000, lr=1e6, patience=None)
    # control: a sane learning rate trains without the error
    res = tp.train_product(net, inst3, epochs=50, lr=1e-2, patience=None)
    assert res.history["final_loss"] < res.history["loss"][0]


def test_non_finite_loss_stops_minibatch_and_explicit(inst3):
    net = SigmaNetwork.random([inst3.dim, 8, 1], "relu", seed=0)
    with pytest.raises(InvalidNetworkError, match="diverged"):
        tp.train_product(net, inst3, epochs=3000, lr=1e6, batch_size=16, patience=None)
    X, _, y = inst3.support()
    with pytest.raises(InvalidNetworkError, match="diverged"):
        train(net, X, y.astype(float), epochs=3000, lr=1e6, batch_size=16, patience=None)


def test_ctrl_c_lands_inside_an_epoch(monkeypatch):
    """An epoch of n = 10, w = 3000 (3·10^9 pair-neuron terms) takes seconds as one kernel call;
    sliced, a KeyboardInterrupt (what Ctrl-C raises) must land within 0.6 s.  Slices are made
    small here (a few ms) so that the check measures where the interrupt is handled, not how long
    a default slice (about 0.05 s idle) takes on a machine loaded 10 deep."""
    monkeypatch.setattr(tp, "SLICE_TERMS", 1 << 22, raising=False)
    inst = HardInstance(10, seed=0)
    small = HardInstance(3, seed=0)
    tp.train_product(SigmaNetwork.random([small.dim, 4, 1], "relu", seed=0), small, epochs=1)
    net = SigmaNetwork.random([inst.dim, 3000, 1], "relu", seed=1)
    fired = []

    def fire():
        fired.append(time.perf_counter())
        _thread.interrupt_main()

    # interrupt_main() does nothing while SIGINT is ignored (pytest run as a background job of
    # a non-interactive shell): the test installs Python's handler itself, and caps the run at
    # 20 epochs so that a lost interrupt fails in seconds rather than training for half an hour
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.5, fire)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            tp.train_product(net, inst, epochs=20, lr=1e-3, patience=None, max_seconds=None)
        landed = time.perf_counter()
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    assert fired, "the interrupt never fired: training ended first"
    assert landed - fired[0] <= 0.6, f"Ctrl-C landed after {landed - fired[0]:.2f} s"


def test_time_estimate_refuses_before_the_bulk(monkeypatch):
    inst = HardInstance(6, seed=0)
    net = SigmaNetwork.random([inst.dim, 64, 1], "relu", seed=0)
    t0 = time.perf_counter()
    with pytest.raises(RunTooLongError, match="would take about.*max_seconds=1") as err:
        tp.train_product(net, inst, epochs=10 ** 6, lr=1e-3, patience=None, max_seconds=1)
    assert time.perf_counter() - t0 < 5.0
    assert err.value.estimate_seconds > 1 and err.value.max_seconds == 1
    monkeypatch.setenv("DEPTHSEP_MAX_SECONDS", "1")                # the environment variable
    with pytest.raises(RunTooLongError):
        tp.train_product(net, inst, epochs=10 ** 6, lr=1e-3, patience=None)
    deep = SigmaNetwork.random([inst.dim, 16, 8, 1], "relu", seed=0)
    with pytest.raises(RunTooLongError):
        tp.train_product(deep, inst, epochs=10 ** 6, lr=1e-3, patience=None)
    # control: a run under the limit is not refused
    res = tp.train_product(net, inst, epochs=5, lr=1e-3, patience=None)
    assert res.history["epochs"] == 5


def test_memory_estimate_refuses_before_allocating(monkeypatch, inst3):
    net = SigmaNetwork.random([inst3.dim, 100_000, 1], "relu", seed=0)    # estimate ≈ 0.23 GB
    memory = importlib.import_module("networks.product.memory")      # where the estimate lives
    monkeypatch.setattr(memory, "available_memory_bytes", lambda: 1 << 27)
    with pytest.raises(DimensionError, match="GiB.*smaller width"):
        tp.train_product(net, inst3, epochs=0)
    # the estimate is in the range measured for the CLI's --width 1000000 at n = 6 (8.3 GB peak)
    sup = tp.product_support(HardInstance(6, seed=0))
    est = tp.training_memory_bytes(sup, [sup.dim, 10 ** 6, 1])
    assert 4e9 <= est <= 2e10
    # control: a small net fits
    tp.check_training_memory(tp.product_support(inst3), [inst3.dim, 8, 1])


def test_first_epoch_on_the_progress_bar_excludes_compilation(tmp_path):
    """In a fresh process, the time from the bar's start to its first tick must look like an
    epoch, not like loading / compiling the kernels (which made the ETA read hours)."""
    code = textwrap.dedent("""
        import importlib, json, time
        import numpy as np
        tp = importlib.import_module("networks.train_product")
        from embeddings import HardInstance
        from networks import SigmaNetwork
        ticks, compiled = [], []
        from networks.product import _kernels_train32 as k32
        class Bar:
            def __enter__(self):
                compiled.append(len(k32._train_blocks_relu32.signatures))
                ticks.append(time.perf_counter()); return self
            def __exit__(self, *a):
                return False
            def update(self, k=1):
                ticks.append(time.perf_counter())
            def set_postfix(self, *a, **k):
                pass
        tp.progress_bar = lambda *a, **k: Bar()
        inst = HardInstance(5, seed=0)
        net = SigmaNetwork.random([inst.dim, 16, 1], "relu", seed=0)
        tp.train_product(net, inst, epochs=12, lr=1e-3, patience=None, progress=True)
        print(json.dumps([compiled[0], np.diff(ticks).tolist()]))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300, cwd=str(__import__("pathlib").Path(__file__).parent.parent))
    assert out.returncode == 0, out.stderr[-2000:]
    compiled, gaps = __import__("json").loads(out.stdout.strip().splitlines()[-1])
    assert compiled >= 1, "the epoch kernel was not compiled / loaded before the bar started"
    later = float(np.median(gaps[1:]))
    assert gaps[0] <= 5 * later + 0.25, f"first epoch {gaps[0]:.3f} s vs {later:.4f} s later"


def test_interrupt_tests_pass_with_sigint_ignored(tmp_path):
    """Run the tests that interrupt under a pytest started with SIGINT ignored (``nohup pytest
    &`` from a script): each must install the handler it needs and pass in minutes, not wait
    for an interrupt that never comes."""
    import os
    import signal as _signal
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=",
         "--timeout", "240",
         "tests/test_train_robust.py::test_ctrl_c_lands_inside_an_epoch",
         "tests/test_hostile_files.py::test_cli_ctrl_c_is_one_line_exit_130"],
        cwd=str(root), capture_output=True, text=True, timeout=300,
        env=dict(os.environ, PYTHONPATH=str(root)),
        preexec_fn=lambda: _signal.signal(_signal.SIGINT, _signal.SIG_IGN))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "2 passed" in proc.stdout
