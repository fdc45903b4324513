"""``kernel="auto"`` compiling a repeatedly counted circuit's kernel in a child process
(``circuits._background``, ``circuits.dispatch._repeat_choice``).

The suite runs with the children switched off (tests/conftest.py); each test here switches them
on or off itself.
"""

import multiprocessing
import os
import sys
import tempfile
import time

import numba
import pytest

import circuits as c
from circuits import _background as bg, _bitsliced_cache as kc, _bitsliced_codegen as cg, _jit, dispatch

needs_jit = pytest.mark.skipif(bool(numba.config.DISABLE_JIT),
                               reason="no compiled kernels with the JIT off")


def _circuit(seed):
    """2^20 points, 16 hidden gates: "auto" serves the generic kernel, the compiled one would
    be faster but its compile does not pay for one call (a seed per test: kernels loaded by one
    test stay loaded in this process)."""
    from benchmarks.bench_circuits import w1_circuit
    return w1_circuit(20, 16, seed=seed)


@pytest.fixture
def caches(tmp_path, monkeypatch):
    """An empty kernel cache; numba's cache of the library kernels kept warm (the child then
    loads the driver instead of compiling it)."""
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(_jit.numba_cache_root()))
    monkeypatch.setenv("DEPTHSEP_CACHE_DIR", str(tmp_path))
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))    # the hand-over files
    monkeypatch.setattr(bg, "_STARTED", [0])             # each test under the per-process cap
    yield tmp_path
    bg.stop_all()


def _key(circ):
    return kc.circuit_key(circ, dispatch._fused_mask_bits(circ))


def _wait_ready(key, circ, want, timeout=180.0):
    """Count until the child has finished; every count meanwhile must be ``want``."""
    t0 = time.monotonic()
    while bg.status(key) == "running":
        assert time.monotonic() - t0 < timeout, "the compiling child did not finish"
        assert (c.count_disagreements(circ, "ip").count, c.count_ones(circ)) == want
        time.sleep(0.05)
    return bg.status(key)


def _sleeper(tmp_path):
    """An "interpreter" that ignores its arguments and sleeps (a child that never finishes)."""
    path = tmp_path / "sleeper"
    path.write_text("#!/bin/sh\nexec sleep 600\n")
    path.chmod(0o700)
    return str(path)


@needs_jit
def test_repeat_calls_switch_to_the_kernel_a_child_compiled(caches, monkeypatch):
    monkeypatch.setattr(dispatch, "_BACKGROUND", "eager")
    circ = _circuit(40)
    key = _key(circ)
    r = c.count_disagreements(circ, "ip", kernel="lowhigh")
    want = (r.count, c.count_ones(circ, kernel="lowhigh"))
    first = c.count_disagreements(circ, "ip")              # calls 1 and 2: no child
    assert (first.count, first.index) == (r.count, r.index)
    assert c.count_ones(circ) == want[1]
    assert bg.status(key) is None and c.kernel_plan(circ).kernel == "generic"
    assert c.count_ones(circ) == want[1]                  # call 3: the child starts
    assert bg.status(key) in ("running", "ready")
    assert kc.state(key) != "loaded"
    assert "a child process compiling its kernel: " in c.kernel_plan(circ).reason
    assert _wait_ready(key, circ, want) == "ready"
    assert bg.running() == 0
    after = c.count_disagreements(circ, "ip")             # loaded from the cache and run
    assert (after.count, after.index) == (r.count, r.index)
    assert kc.state(key) == "loaded" and c.kernel_plan(circ).kernel == "fused"
    assert c.count_ones(circ) == want[1]
    assert not list((caches / "tmp").iterdir())             # the hand-over file is gone


@needs_jit
def test_switched_off_no_child(caches, monkeypatch):
    monkeypatch.setattr(dispatch, "_BACKGROUND", "off")
    circ = _circuit(41)
    want = c.count_ones(circ, kernel="lowhigh")
    for _ in range(4):
        assert c.count_ones(circ) == want
    assert bg.status(_key(circ)) is None and bg.running() == 0
    assert kc.state(_key(circ)) == "absent" and "child" not in c.kernel_plan(circ).reason
    monkeypatch.setattr(dispatch, "_BACKGROUND", "eager")    # control: on, the same calls start one
    c.count_ones(circ)
    assert bg.status(_key(circ)) in ("running", "ready")


@needs_jit
def test_a_failing_child_changes_no_result_and_is_not_retried(caches, monkeypatch):
    monkeypatch.setattr(dispatch, "_BACKGROUND", "eager")
    monkeypatch.setattr(bg.sys, "executable", "/bin/false")
    circ = _circuit(42)
    key = _key(circ)
    want = c.count_ones(circ, kernel="lowhigh")
    for _ in range(3):
        assert c.count_ones(circ) == want
    t0 = time.monotonic()
    while bg.status(key) == "running":
        assert time.monotonic() - t0 < 30
        time.sleep(0.01)
    assert "exited with status 1" in bg.status(key)
    for _ in range(3):
        assert c.count_ones(circ) == want
    assert bg.running() == 0 and "exited with status 1" in bg.status(key)
    assert c.kernel_plan(circ).kernel == "generic" and kc.state(key) == "absent"


def test_one_child_per_key_at_most_max_children_and_none_left(caches, monkeypatch):
    monkeypatch.setattr(bg.sys, "executable", _sleeper(caches))
    assert bg.MAX_CHILDREN == 1
    assert bg.start("k1", "x = 1\n")
    proc, path = bg._RUNNING["k1"]
    assert os.path.exists(path) and os.stat(path).st_mode & 0o077 == 0   # private hand-over
    assert not bg.start("k1", "x = 1\n")                  # one per key
    assert not bg.start("k2", "x = 1\n")                  # the slot is taken
    assert bg.status("k1") == "running" and bg.status("k2") is None
    bg.stop_all()
    assert proc.returncode is not None                    # reaped: no zombie
    assert bg.running() == 0 and not os.path.exists(path)
    assert bg.status("k1") == "stopped before it finished"
    assert not bg.start("k1", "x = 1\n")                  # never retried


def _spawned_worker(env):
    os.environ.update(env)
    from circuits import _background, dispatch as d
    d._BACKGROUND = "eager"
    circ = _circuit(43)
    key = _key(circ)
    counts = [c.count_ones(circ) for _ in range(3)]
    t0 = time.monotonic()
    while _background.status(key) == "running" and time.monotonic() - t0 < 180:
        counts.append(c.count_ones(circ))
        time.sleep(0.05)
    counts.append(c.count_ones(circ))
    return counts, _background.status(key), c.kernel_plan(circ).kernel


@needs_jit
def test_works_in_a_spawned_process(caches):
    env = {k: os.environ[k] for k in ("NUMBA_CACHE_DIR", "DEPTHSEP_CACHE_DIR")}
    want = c.count_ones(_circuit(43), kernel="lowhigh")
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(1) as pool:
        counts, status, kernel = pool.apply(_spawned_worker, (env,))
    assert set(counts) == {want} and status == "ready" and kernel == "fused"


def test_the_child_refuses_a_private_cache(tmp_path, monkeypatch):
    """The child's exit status says whether the kernel reached the shared cache: a kernel
    compiled into a private temporary directory is of no use to the caller."""
    if numba.config.DISABLE_JIT:
        pytest.skip("no compiled kernels with the JIT off")
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(_jit.numba_cache_root()))
    monkeypatch.setenv("DEPTHSEP_CACHE_DIR", str(tmp_path / "cache"))
    circ = _circuit(44)
    key = _key(circ)
    src = cg.source(circ, dispatch._fused_mask_bits(circ))
    path = tmp_path / "src.py"
    path.write_text(src)
    assert bg._child_main([key, str(path)]) == 0 and not path.exists()
    assert kc.state(key) == "loaded"
    (tmp_path / "cache" / "kernels").chmod(0o777)        # writable by others: not used
    try:
        path.write_text(src)
        monkeypatch.setattr(kc, "_LOADED", type(kc._LOADED)())
        monkeypatch.setattr(kc, "_TEMP_DIR", [])
        with pytest.warns(_jit.CacheWarning):
            assert bg._child_main([key, str(path)]) in (3, 4)
    finally:
        (tmp_path / "cache" / "kernels").chmod(0o700)


@pytest.mark.parametrize("value, on", [("0", "off"), ("OFF", "off"), ("1", "auto"),
                                       (None, "auto"), ("eager", "eager")])
def test_the_environment_switch(value, on):
    import subprocess
    env = {k: v for k, v in os.environ.items() if k != "DEPTHSEP_BACKGROUND_COMPILE"}
    if value is not None:
        env["DEPTHSEP_BACKGROUND_COMPILE"] = value
    out = subprocess.run([sys.executable, "-c", "from circuits import dispatch; "
                          "print(dispatch._BACKGROUND)"], env=env, capture_output=True, text=True,
                         timeout=120, check=True)
    assert out.stdout.strip() == str(on)


def test_the_child_compiles_only_against_the_callers_package(tmp_path):
    path = tmp_path / "src.py"
    path.write_text("x = 1\n")
    assert bg._child_main(["k" * 24, str(path)], str(tmp_path)) == 5     # another package root
    assert not path.exists()
    assert bg._package_root() == str(__import__("pathlib").Path(c.__file__).resolve().parents[1])


@needs_jit
def test_a_stopped_child_leaves_no_source_without_its_compiled_code(caches):
    """Stopped mid-compile (as at the caller's exit), the child removes the source it wrote:
    otherwise a later process would take the kernel for cached and compile in its first call."""
    from benchmarks.bench_circuits import w1_circuit
    circ = w1_circuit(20, 64, seed=45)             # about a second of compile after the write
    key = _key(circ)
    source = kc.cache_dir() / f"_depthsep_fused_{key}.py"
    assert bg.start(key, cg.source(circ, dispatch._fused_mask_bits(circ)))
    t0 = time.monotonic()
    while not source.exists():
        assert bg.status(key) == "running" and time.monotonic() - t0 < 120
        time.sleep(0.005)
    assert not kc._numba_files(kc.cache_dir())     # written, not yet compiled
    bg.stop_all()
    assert bg.running() == 0 and bg.status(key) == "stopped before it finished"
    assert not source.exists() and kc.state(key) == "absent"
    assert not kc._numba_files(kc.cache_dir())


def test_a_process_starts_at_most_max_starts_children(caches, monkeypatch):
    monkeypatch.setattr(bg.sys, "executable", _sleeper(caches))
    monkeypatch.setattr(bg, "_STARTED", [bg.MAX_STARTS - 1])
    assert bg.start("k3", "x = 1\n")                     # the last one allowed
    bg.stop_all()
    assert not bg.start("k4", "x = 1\n") and bg.status("k4") is None
    monkeypatch.setattr(bg, "_STARTED", [0])             # control: the same start, under the cap
    assert bg.start("k4", "x = 1\n")
    bg.stop_all()


def test_auto_mode_starts_the_child_when_the_saving_covers_the_compile_over_the_cores(
        monkeypatch):
    """"auto": the child is due once uses x gain covers setup / usable cores (a 2-core machine
    waits for half the foreground rule's calls, an 8-core one for an eighth); "eager" always;
    the foreground rule needs the whole setup."""
    from circuits.utils import _executor

    for cores, due_at in ((2, 50), (8, 13), (1, 100)):
        monkeypatch.setattr(_executor, "usable_cpus", lambda c=cores: c)
        got = [u for u in range(1, 200) if bg.child_due("auto", u, 1e6, 1e8)]
        assert got[0] == due_at and got == list(range(due_at, 200))
    assert bg.child_due("eager", 1, 1.0, 1e12)
    monkeypatch.setattr(dispatch, "_BACKGROUND", "sometimes")
    with pytest.raises(ValueError, match="_BACKGROUND must be one of"):
        dispatch._background_mode()
    for value, mode in ((True, "eager"), (False, "off"), ("auto", "auto")):
        monkeypatch.setattr(dispatch, "_BACKGROUND", value)
        assert dispatch._background_mode() == mode


def test_auto_mode_waits_for_the_calls_to_pay(caches, monkeypatch):
    """In "auto" mode four calls start no child while the saving so far is below the compile
    over the cores (here: 1 core); on a machine of very many cores the third call starts one
    (control)."""
    from circuits.utils import _executor

    monkeypatch.setattr(dispatch, "_BACKGROUND", "auto")
    monkeypatch.setattr(bg.sys, "executable", _sleeper(caches))     # a child that never ends
    monkeypatch.setattr(_executor, "usable_cpus", lambda: 1)
    circ = _circuit(46)
    for _ in range(4):
        c.count_ones(circ)
    assert bg.status(_key(circ)) is None and bg.running() == 0
    monkeypatch.setattr(_executor, "usable_cpus", lambda: 10**9)
    circ = _circuit(47)
    for _ in range(3):
        assert bg.status(_key(circ)) is None
        c.count_ones(circ)
    assert bg.status(_key(circ)) == "running"


def test_a_source_without_numbas_index_is_not_a_cached_kernel(caches, monkeypatch):
    """While a child compiles, the kernel's source is in the cache but numba's index is not:
    the state stays "absent" (a load there would compile in the foreground), so "auto" keeps
    the kernel that needs no compile; with the index beside it the state is "cached"."""
    circ = _circuit(48)
    key = _key(circ)
    src = kc.cache_dir() / f"_depthsep_fused_{key}.py"
    src.parent.mkdir(parents=True, exist_ok=True)
    src.write_text(cg.source(circ, dispatch._fused_mask_bits(circ)))
    assert kc.state(key) == "absent" and not kc.indexed(key)
    monkeypatch.setattr(dispatch, "_BACKGROUND", "off")
    assert c.kernel_plan(circ).kernel == "generic"
    index_dir = _jit.cache_path_of(kc.cache_dir() / "x.py")
    index_dir.mkdir(parents=True, exist_ok=True)
    (index_dir / f"_depthsep_fused_{key}.data-1.py311.nbc").write_bytes(b"")
    assert kc.state(key) == "absent"                     # machine code without the index
    (index_dir / f"_depthsep_fused_{key}.data-1.py311.nbi").write_bytes(b"")
    assert kc.state(key) == "cached" and kc.indexed(key)
