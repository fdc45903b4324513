"""Where compiled kernels are cached, and what a damaged, foreign or unusable cache does
(issues 24 and 25: ``circuits._jit``, ``circuits._bitsliced_codegen``, ``circuits.dispatch``).

Every test here fails on the code before this change: numba wrote its cache into the package
folders, a damaged entry raised on every later run, an unusable cache made the import fail,
generated kernels were imported from any directory, and nothing bounded the kernels kept.
"""

import importlib.util
import os
import pickle
import shutil
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numba
import numpy as np
import pytest

import circuits as c
from circuits import _bitsliced_cache as kc, _bitsliced_codegen as cg, _jit, dispatch
from tests.test_bitsliced import naive_table, random_circuit

ROOT = Path(__file__).resolve().parents[1]
JIT_OFF = bool(numba.config.DISABLE_JIT)
needs_jit = pytest.mark.skipif(JIT_OFF, reason="numba's cache only exists with the JIT on")
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
FU = {"kernel": "fused"}


def _child(code, env, cwd):
    full = {k: v for k, v in os.environ.items()
            if k not in ("NUMBA_CACHE_DIR", "DEPTHSEP_CACHE_DIR", "XDG_CACHE_HOME", "PYTHONPATH")}
    full.update(env)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=full, cwd=cwd,
                          capture_output=True, text=True, timeout=300)


def _installed_copy(tmp_path):
    """The circuits package copied as pip would install it (no caches), away from the repo."""
    site = tmp_path / "site"
    shutil.copytree(ROOT / "circuits", site / "circuits",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return site


# A small kernel (fast to compile) called through the package, then where files went.
_RUN_KERNEL = """
import os, sys
{before}
import numpy as np
from circuits import _kernels
print(_kernels._rows_tile_len(np.array([3, 2, 1], dtype=np.int64)))
"""


def _cache_files(path):
    return sorted(p.name for p in Path(path).rglob("*") if p.suffix in (".nbi", ".nbc"))


@needs_jit
def test_an_installed_copy_writes_nothing_next_to_its_modules(tmp_path):
    site = _installed_copy(tmp_path)
    cache = tmp_path / "cache"
    r = _child(_RUN_KERNEL.format(before=""), {"PYTHONPATH": str(site), "PYTHONDONTWRITEBYTECODE": "1",
                                               "DEPTHSEP_CACHE_DIR": str(cache)}, tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "1024"
    assert not list(site.rglob("__pycache__")), "the installed tree got cache files"
    files = _cache_files(cache / "numba")
    assert any(f.startswith("_kernels._rows_tile_len") for f in files), files


@needs_jit
def test_numba_cache_dir_is_honoured_even_when_set_after_numba_was_imported(tmp_path):
    site = _installed_copy(tmp_path)
    late = tmp_path / "late-numba-cache"
    before = f"import numba\nos.environ['NUMBA_CACHE_DIR'] = {str(late)!r}"
    r = _child(_RUN_KERNEL.format(before=before),
               {"PYTHONPATH": str(site), "PYTHONDONTWRITEBYTECODE": "1",
                "DEPTHSEP_CACHE_DIR": str(tmp_path / "unused")}, tmp_path)
    assert r.returncode == 0, r.stderr
    assert any(f.startswith("_kernels._rows_tile_len") for f in _cache_files(late))
    assert not _cache_files(tmp_path / "unused") and not list(site.rglob("__pycache__"))


@needs_jit
def test_no_usable_cache_directory_anywhere_still_imports_and_runs(tmp_path):
    """The package folders, $HOME and every cache variable unusable (numba's own locators all
    fail: before, the import raised "cannot cache function ... no locator available")."""
    site = _installed_copy(tmp_path)
    for pkg in [site / "circuits"] + [p for p in (site / "circuits").rglob("*") if p.is_dir()]:
        (pkg / "__pycache__").write_text("a file where a folder would go")
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    r = _child(_RUN_KERNEL.format(before=""),
               {"PYTHONPATH": str(site), "PYTHONDONTWRITEBYTECODE": "1",
                "HOME": str(blocker / "home")}, tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "1024"
    assert "not caching compiled kernels" in r.stderr


@needs_jit
@pytest.mark.skipif(IS_ROOT, reason="root writes into read-only directories")
@pytest.mark.parametrize("which", ["DEPTHSEP_CACHE_DIR", "NUMBA_CACHE_DIR"])
def test_a_read_only_cache_directory_still_imports_and_runs(tmp_path, which):
    site = _installed_copy(tmp_path)
    ro = tmp_path / "read-only"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        r = _child(_RUN_KERNEL.format(before=""), {"PYTHONPATH": str(site), which: str(ro),
                                                   "PYTHONDONTWRITEBYTECODE": "1"}, tmp_path)
    finally:
        ro.chmod(0o755)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "1024" and "not caching compiled kernels" in r.stderr
    assert not list(site.rglob("__pycache__"))


# --- numba's cache entries: damaged or foreign ---------------------------------------------------

_MODULE = '''
from circuits._jit import njit


@njit(cache=True)
def f(x):
    return 3 * x + 1
'''


def _import_fresh(path, tag):
    name = f"_depthsep_test_cache_{tag}"
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def _pickled(*objs):
    return b"".join(pickle.dumps(o) for o in objs)


def _corrupt(kind, index, data):
    if kind == "index_truncated":
        index.write_bytes(index.read_bytes()[:len(index.read_bytes()) // 2])
    elif kind == "index_garbage":
        index.write_bytes(os.urandom(300))
    elif kind == "index_empty":
        index.write_bytes(b"")
    elif kind == "index_wrong_shape":           # valid pickles, not an index
        index.write_bytes(_pickled(numba.__version__, pickle.dumps("not a tuple")))
    elif kind == "index_wrong_version":
        index.write_bytes(_pickled("0.0.0", b"") )
    elif kind == "index_is_a_directory":
        index.unlink()
        index.mkdir()
    elif kind == "data_truncated":
        data.write_bytes(data.read_bytes()[:40])
    elif kind == "data_garbage":
        data.write_bytes(os.urandom(len(data.read_bytes())))
    elif kind == "data_missing":
        data.unlink()
    elif kind == "data_is_a_directory":
        data.unlink()
        data.mkdir()
    elif kind == "index_writable_by_others":
        index.chmod(0o666)
    elif kind == "index_owned_by_another_user":
        os.chown(index, 4242, 4242)
    else:
        raise AssertionError(kind)


KINDS = ["index_truncated", "index_garbage", "index_empty", "index_wrong_shape",
         "index_wrong_version", "index_is_a_directory", "data_truncated", "data_garbage",
         "data_missing", "data_is_a_directory", "index_writable_by_others",
         pytest.param("index_owned_by_another_user",
                      marks=pytest.mark.skipif(not IS_ROOT, reason="chown needs root"))]


@needs_jit
@pytest.mark.parametrize("kind", KINDS)
def test_a_damaged_or_foreign_entry_is_replaced_not_fatal(tmp_path, monkeypatch, kind):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "nc"))
    src = tmp_path / "mod.py"
    src.write_text(_MODULE)
    assert _import_fresh(src, f"{kind}_1").f(3) == 10         # compiled and saved
    index, = (tmp_path / "nc").rglob("*.nbi")
    data, = (tmp_path / "nc").rglob("*.nbc")
    _corrupt(kind, index, data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", _jit.CacheWarning)
        assert _import_fresh(src, f"{kind}_2").f(3) == 10     # before: raised, every run
    again = _import_fresh(src, f"{kind}_3").f
    with warnings.catch_warnings():
        warnings.simplefilter("error")                         # the entry was repaired
        assert again(3) == 10
    assert sum(again.stats.cache_hits.values()) == 1
    assert _jit.safe_file(index) is None


@needs_jit
@pytest.mark.parametrize("how", ["writable_by_others",
                                 pytest.param("owned_by_another_user", marks=pytest.mark.skipif(
                                     not IS_ROOT, reason="chown needs root"))])
def test_an_unsafe_cache_directory_is_not_used(tmp_path, monkeypatch, how):
    nc = tmp_path / "nc"
    nc.mkdir()
    if how == "writable_by_others":
        nc.chmod(0o777)
    else:
        os.chown(nc, 4242, 4242)
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(nc))
    src = tmp_path / "mod.py"
    src.write_text(_MODULE)
    with pytest.warns(_jit.CacheWarning, match="not caching compiled kernels"):
        mod = _import_fresh(src, f"unsafe_{how}")
    assert mod.f(3) == 10
    assert not _cache_files(nc)


@needs_jit
def test_a_sticky_shared_root_is_accepted(tmp_path, monkeypatch):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)                                       # like /tmp
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(shared))
    src = tmp_path / "mod.py"
    src.write_text(_MODULE)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _import_fresh(src, "sticky").f(3) == 10
    assert _cache_files(shared)
    sub, = [p for p in shared.iterdir() if p.is_dir()]
    assert _jit.safe_directory(sub) is None                    # ours, 0700


def test_safe_directory_reasons(tmp_path):
    d = tmp_path / "d"
    assert _jit.safe_directory(d) is None and (d.stat().st_mode & 0o777) == 0o700
    d.chmod(0o757)
    assert "writable by every user" in _jit.safe_directory(d)
    f = tmp_path / "f"
    f.write_text("x")
    assert "not a directory" in _jit.safe_directory(f)
    assert "cannot create" in _jit.safe_directory(f / "below")


# --- compiled circuit kernels: sources, memory, pruning -----------------------------------------

@needs_jit
def test_a_planted_kernel_in_a_directory_others_can_write_is_never_run(tmp_path, monkeypatch):
    monkeypatch.setenv("DEPTHSEP_CACHE_DIR", str(tmp_path))
    circ = random_circuit(np.random.default_rng(31), 13, (4,))
    kernels = tmp_path / "kernels"
    kernels.mkdir()
    kernels.chmod(0o777)
    marker = tmp_path / "ran"
    (kernels / f"_depthsep_fused_{kc.circuit_key(circ)}.py").write_text(
        f"open({str(marker)!r}, 'w').close()\n" + cg.source(circ))
    with pytest.warns(_jit.CacheWarning, match="private temporary directory"):
        assert c.count_ones(circ, **FU) == sum(naive_table(circ))
    assert not marker.exists()


@needs_jit
@pytest.mark.parametrize("damage", ["garbage", "truncated", "directory", "foreign"])
def test_a_damaged_or_foreign_kernel_source_is_written_again(tmp_path, monkeypatch, damage):
    if damage == "foreign" and not IS_ROOT:
        pytest.skip("chown needs root")
    monkeypatch.setenv("DEPTHSEP_CACHE_DIR", str(tmp_path))
    seed = 40 + ["garbage", "truncated", "directory", "foreign"].index(damage)
    circ = random_circuit(np.random.default_rng(seed), 13, (4,))     # not loaded in this process
    path = tmp_path / "kernels" / f"_depthsep_fused_{kc.circuit_key(circ)}.py"
    path.parent.mkdir(mode=0o700)
    good = cg.source(circ)
    if damage == "garbage":
        path.write_bytes(b"\xff\xfe" + os.urandom(500))        # not even UTF-8
    elif damage == "truncated":
        path.write_text(good[: len(good) // 2])
    elif damage == "directory":
        path.mkdir()
    else:
        path.write_text(good)
        os.chown(path, 4242, 4242)
    assert c.count_ones(circ, **FU) == sum(naive_table(circ))
    assert path.read_text() == good and path.stat().st_uid == os.geteuid()


@needs_jit
def test_loaded_kernels_are_bounded_and_pruned_with_their_numba_files(tmp_path, monkeypatch):
    monkeypatch.setenv("DEPTHSEP_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setattr(kc, "MAX_LOADED", 1)
    monkeypatch.setattr(kc, "MAX_FILES", 1)
    rng = np.random.default_rng(33)
    keys = []
    for i in range(2):
        circ = random_circuit(rng, 13, (3,))
        assert c.count_ones(circ, **FU) == sum(naive_table(circ))
        keys.append(kc.circuit_key(circ))
        src = tmp_path / "kernels" / f"_depthsep_fused_{keys[-1]}.py"
        os.utime(src, (1e9 + i, 1e9 + i))
    assert kc.state(keys[0]) != "loaded" and kc.state(keys[1]) == "loaded"
    assert f"_depthsep_fused_{keys[0]}" not in sys.modules
    numba_files = {p.name.split(".", 1)[0] for p in kc._numba_files(tmp_path / "kernels")}
    assert numba_files == {f"_depthsep_fused_{keys[1]}"}        # the pruned kernel's went too
    assert [p.name for p in (tmp_path / "kernels").glob("*.py")] == [
        f"_depthsep_fused_{keys[1]}.py"]


def test_auto_stops_compiling_when_the_process_budget_is_spent(tmp_path, monkeypatch):
    monkeypatch.setenv("DEPTHSEP_CACHE_DIR", str(tmp_path))
    circ = c.ip_depth3(18)
    assert c.kernel_plan(circ).kernel == "fused"
    monkeypatch.setattr(kc, "MAX_PROCESS_KERNELS", len(kc._EVER_LOADED))
    p = c.kernel_plan(circ)
    assert p.kernel == "bitsliced" and "never freed" in p.reason


# --- kernel="auto" on repeated calls (issue 23) -------------------------------------------------

def _w1(seed):
    """A circuit of 2^22 points whose compile does not pay for one call (a seed per test: a
    kernel compiled by an earlier test stays loaded in this process)."""
    from benchmarks.bench_circuits import w1_circuit
    return w1_circuit(22, 64, seed=seed)


@needs_jit
def test_repeated_calls_switch_to_the_compiled_kernel_in_the_foreground(tmp_path, monkeypatch):
    monkeypatch.setenv("DEPTHSEP_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(dispatch, "_BACKGROUND", False)
    circ = _w1(34)
    plan0 = dispatch._plan_of(circ, finish=False)[0]
    assert plan0.kernel == "generic"         # the best kernel without a per-circuit compile
    # a setup worth 1.5 calls' savings: not repaid by one call, repaid by two
    est_now = float(plan0.reason.split(" ms generic depth-2")[0].rsplit(" ", 1)[1]) * 1e-3
    est_fused = float(plan0.reason.split(" ms compiled")[0].rsplit(" ", 1)[1]) * 1e-3
    assert est_fused < est_now
    monkeypatch.setattr(cg, "compile_seconds_estimate", lambda n: 1.5 * (est_now - est_fused))
    want = c.count_ones(circ, kernel="lowhigh")
    assert c.count_ones(circ) == want
    assert c.kernel_plan(circ).kernel == "generic"
    assert c.count_ones(circ) == want                      # second call: compiled, then run
    p = c.kernel_plan(circ)
    assert p.kernel == "fused" and "compiled in this process" in p.reason


# --- every kernel module goes through circuits._jit ----------------------------------------------

def test_every_kernel_uses_the_project_cache():
    offenders = []
    for pkg in ("circuits", "embeddings", "networks"):
        for path in (ROOT / pkg).rglob("*.py"):
            if path.name == "_jit.py":
                continue
            text = path.read_text()
            for bad in ("from numba import njit", "numba.njit(", "from numba import jit",
                        "@numba.jit", "@jit("):
                if bad in text:
                    offenders.append(f"{path.relative_to(ROOT)}: {bad}")
    assert not offenders, offenders
    assert "from numba import njit" in "from numba import njit, prange"     # the check can fire


# --- first run: serial kernels on threads, small transforms in numpy (issue 24) -----------------

def test_small_transforms_in_numpy_are_bit_identical_to_the_kernels(monkeypatch):
    from circuits.analysis import fwht
    rng = np.random.default_rng(50)
    for N in range(0, fwht._NUMPY_MAX_BITS + 1):
        for v in (rng.standard_normal(1 << N), rng.integers(-9, 9, 1 << N)):
            monkeypatch.setattr(fwht, "_NUMPY_MAX_BITS", 99)
            a = fwht.walsh_hadamard(v)
            monkeypatch.setattr(fwht, "_NUMPY_MAX_BITS", -1)
            b = fwht.walsh_hadamard(v)
            assert a.dtype == b.dtype and np.array_equal(a, b), N


@pytest.fixture
def two_free_cpus(monkeypatch):
    """Threaded paths taken whatever the load (numba's thread count permitting)."""
    from circuits.utils import _threads
    monkeypatch.setattr(_threads, "free_cpus", lambda: 2)
    if numba.get_num_threads() < 2:
        pytest.skip("one numba thread")


def test_threaded_ranges_equal_one_thread(monkeypatch, two_free_cpus):
    from embeddings import code, code_distance
    from networks.reduction import product, selfreduce
    from tests.test_embeddings import random_generator
    rng = np.random.default_rng(51)
    rows = np.stack([code._pack_rows(random_generator(rng, 9, 30)) for _ in range(3)])
    threaded = code._gray_min_table(rows, 9, 7, 0)
    monkeypatch.setattr(code_distance, "_THREADED_MESSAGES", 1 << 62)
    serial = code._gray_min_table(rows, 9, 7, 0)
    assert all(np.array_equal(a, b) for a, b in zip(threaded, serial))
    V = rng.standard_normal((64, 64))
    sh = np.array([[1, 2], [5, 3], [0, 7]], dtype=np.int64)
    G, prefix = selfreduce.twisted_sums(V, sh)                    # blocks of rows on threads
    part = selfreduce._Chunk(V, sh, 6)(0, 64)[0]                  # one serial call
    assert np.array_equal(G, part[0]) and np.array_equal(prefix, part[1])
    monkeypatch.setattr(product, "_THREADED_TERMS", 0)
    seen = np.zeros(1000, dtype=np.int64)

    def rows_kernel(lo, hi):
        seen[lo:hi] += 1
    product._rows_on_threads(rows_kernel, 1000, 1)
    assert (seen == 1).all()                                      # every row exactly once


def test_run_ranges_reraises_and_stops(two_free_cpus):
    from circuits.utils._threads import run_ranges
    done = []

    def fn(lo, hi):
        if lo == 3:
            raise ValueError("range 3")
        done.append(lo)

    with pytest.raises(ValueError, match="range 3"):
        run_ranges(fn, [(i, i + 1) for i in range(200)], 2)
    assert len(done) < 200


def test_free_cpus_counts_other_runnable_tasks(monkeypatch):
    from circuits.utils import _threads, parallel
    monkeypatch.setattr(parallel, "usable_cpus", lambda: 2)
    monkeypatch.setattr(_threads, "_other_runnable", lambda: 0)
    assert _threads.free_cpus() == 2
    monkeypatch.setattr(_threads, "_other_runnable", lambda: 1)
    assert _threads.free_cpus() == 1
    monkeypatch.setattr(_threads, "_other_runnable", lambda: 5)
    assert _threads.free_cpus() == 1
