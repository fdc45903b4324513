"""circuits.utils.parallel: the generic chunk runner on one machine (no Dask needed here).

The Dask backend is tested in tests/test_distributed.py against a LocalCluster.
"""

import subprocess
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

import numba
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import circuits as c
from circuits.utils import _dask, parallel
from circuits.utils.errors import DepthsepError, DimensionError
from circuits.utils.parallel import (COUNT_FIRST_IDENTITY, MissingDependencyError, chunk_bounds,
                               combine_count_first, run_chunks)
from tests import naive


def _add(a, b):
    return a + b


class _Record:
    """fn(start, stop) that remembers every range it was called with (thread-safe)."""

    def __init__(self, value=lambda k: k * k + 1):
        self.calls = []
        self.lock = threading.Lock()
        self.value = value

    def __call__(self, start, stop):
        with self.lock:
            self.calls.append((start, stop))
        return sum(self.value(k) for k in range(start, stop))


def _squares(start, stop):  # module level: picklable for process pools
    return sum(k * k + 1 for k in range(start, stop))


def _numba_threads_seen(start, stop):
    return {numba.get_num_threads()}


def _count_first_of(table):
    def fn(start, stop):
        hits = [k for k in range(start, stop) if table[k]]
        return len(hits), (hits[0] if hits else -1)
    return fn


# ------------------------------------------------------------------ chunk bounds and combine

@pytest.mark.parametrize("n, size", [(0, 1), (1, 1), (10, 3), (10, 10), (10, 11), (1 << 20, 1 << 16)])
def test_chunk_bounds_tile_the_range_exactly_once(n, size):
    bounds = chunk_bounds(n, size)
    covered = [k for s, e in bounds for k in range(s, e)] if n < 1000 else None
    if covered is not None:
        assert covered == list(range(n))
    assert all(0 < e - s <= size for s, e in bounds)
    assert all(bounds[i][1] == bounds[i + 1][0] for i in range(len(bounds) - 1))
    assert (bounds[0][0], bounds[-1][1]) == (0, n) if n else bounds == []


@pytest.mark.parametrize("bad, err", [(-1, ValueError), (1.5, TypeError), (True, TypeError)])
def test_chunk_bounds_rejects_bad_sizes(bad, err):
    with pytest.raises(err, match="n_items"):
        chunk_bounds(bad, 4)
    with pytest.raises((ValueError, TypeError), match="chunk_size"):
        chunk_bounds(10, 0 if bad == -1 else bad)


@given(st.lists(st.tuples(st.integers(0, 50), st.integers(-1, 100)), min_size=1, max_size=6))
@settings(max_examples=60, deadline=None)
def test_combine_count_first_is_order_free(parts):
    parts = [(cnt, first) for cnt, first in parts]
    ref_count = sum(p[0] for p in parts)
    hits = [p[1] for p in parts if p[1] >= 0]
    ref_first = min(hits) if hits else -1
    for order in (parts, parts[::-1], sorted(parts)):
        acc = COUNT_FIRST_IDENTITY
        for p in order:
            acc = combine_count_first(acc, p)
        assert acc == (ref_count, ref_first)
        assert isinstance(acc[0], int) and isinstance(acc[1], int)


# ------------------------------------------------------------------ run_chunks, local paths

@given(n=st.integers(0, 3000), size=st.integers(1, 700),
       mode=st.sampled_from([None, "threads", "pool"]))
@settings(max_examples=40, deadline=None)
def test_run_chunks_equals_direct_fold(n, size, mode):
    fn = _Record()
    expect = sum(k * k + 1 for k in range(n))
    if mode == "pool":
        with ThreadPoolExecutor(3) as ex:
            got = run_chunks(fn, n, combine=_add, initial=0, executor=ex, chunk_size=size)
    else:
        got = run_chunks(fn, n, combine=_add, initial=0, executor=mode, chunk_size=size)
    assert got == expect
    # every point ran exactly once: the calls tile [0, n) without gaps or overlaps, and each lies
    # inside one chunk (a chunk may be cut into time-bounded slices when the machine is slow)
    calls = sorted(fn.calls)
    assert (calls[0][0], calls[-1][1]) == (0, n) if n else calls == []
    assert all(a[1] == b[0] for a, b in zip(calls, calls[1:]))
    chunks = chunk_bounds(n, size)
    assert all(any(lo <= s and e <= hi for lo, hi in chunks) for s, e in calls)
    assert {lo for lo, _ in chunks} <= {s for s, _ in calls}


def test_serial_default_is_one_call_and_empty_range_calls_nothing():
    fn = _Record()
    assert run_chunks(fn, 1000, combine=_add, initial=0) == sum(k * k + 1 for k in range(1000))
    assert fn.calls == [(0, 1000)]
    fn = _Record()
    sentinel = object()
    assert run_chunks(fn, 0, combine=_add, initial=sentinel, executor="threads") is sentinel
    assert fn.calls == []


def test_progress_chunks_a_serial_run(capsys):
    fn = _Record()
    n = 5 * parallel.MIN_CHUNK_SIZE + 3
    fn.value = lambda k: 1
    assert run_chunks(fn, n, combine=_add, initial=0, progress=True, desc="ones") == n
    # time-bounded slices tile the range once; the bar counts points (with an ETA)
    assert fn.calls[0][0] == 0 and fn.calls[-1][1] == n and len(fn.calls) > 1
    assert all(a[1] == b[0] for a, b in zip(fn.calls, fn.calls[1:]))
    assert "ones" in capsys.readouterr().err


def test_default_chunking_on_executors_balances_work():
    fn = _Record(value=lambda k: 1)
    n = 3 * parallel.MIN_CHUNK_SIZE * parallel.CHUNKS_PER_THREAD * parallel.usable_cpus()
    assert run_chunks(fn, n, combine=_add, initial=0, executor="threads") == n
    n_chunks = parallel.CHUNKS_PER_THREAD * parallel.usable_cpus()
    size = n // n_chunks
    # each call (a time-bounded slice) lies inside one default chunk, and every chunk ran
    assert all(s // size == (e - 1) // size for s, e in fn.calls)
    assert {s // size for s, _ in fn.calls} == set(range(n_chunks))
    assert sum(e - s for s, e in fn.calls) == n


def test_completion_order_does_not_matter():
    # chunks finish in reverse order; an elementwise min/max fold still gives the exact answer
    def fn(start, stop):
        time.sleep(0.002 * (10 - start // 10))
        vals = np.arange(start, stop, dtype=np.int64)
        return np.array([vals.min(), -vals.max(), (vals % 7 == 3).sum()])

    def combine(a, b):
        return np.array([min(a[0], b[0]), min(a[1], b[1]), a[2] + b[2]])

    init = np.array([np.iinfo(np.int64).max, np.iinfo(np.int64).max, 0])
    with ThreadPoolExecutor(4) as ex:
        got = run_chunks(fn, 100, combine=combine, initial=init, executor=ex, chunk_size=10)
    assert got.tolist() == [0, -99, sum(1 for k in range(100) if k % 7 == 3)]


def test_process_pool_executor():
    with ProcessPoolExecutor(2) as ex:
        got = run_chunks(_squares, 5000, combine=_add, initial=0, executor=ex, chunk_size=777)
    assert got == sum(k * k + 1 for k in range(5000))


def test_chunk_error_propagates_and_cancels_queued_chunks():
    started = []

    def fn(start, stop):
        started.append(start)
        if start == 0:
            raise ArithmeticError("chunk 0 failed")
        time.sleep(0.01)
        return 1

    with ThreadPoolExecutor(1) as ex:
        with pytest.raises(ArithmeticError, match="chunk 0 failed"):
            run_chunks(fn, 1000, combine=_add, initial=0, executor=ex, chunk_size=10)
    assert len(started) < 100   # the 99 queued chunks were cancelled, not run


# ------------------------------------------------------------------ numba thread budget

def test_numba_threads_per_chunk_and_restored():
    before = numba.get_num_threads()
    union = lambda a, b: a | b  # noqa: E731
    got = run_chunks(_numba_threads_seen, 64, combine=union, initial=set(), executor="threads",
                     chunk_size=4)
    assert got == {1}          # one numba thread per chunk: the pool already fills the cores
    got = run_chunks(_numba_threads_seen, 64, combine=union, initial=set(), executor="threads",
                     chunk_size=4, numba_threads=2)
    assert got == {min(2, numba.config.NUMBA_NUM_THREADS)}
    with ThreadPoolExecutor(1) as ex:
        got = run_chunks(_numba_threads_seen, 8, combine=union, initial=set(), executor=ex,
                         chunk_size=4)
    assert got == {max(1, min(parallel.usable_cpus(), numba.config.NUMBA_NUM_THREADS))}
    got = run_chunks(_numba_threads_seen, 8, combine=union, initial=set(), chunk_size=4)
    assert got == {before}     # serial path leaves numba alone
    assert numba.get_num_threads() == before


# ------------------------------------------------------------------ exhaustive counts

@pytest.mark.parametrize("executor", [None, "threads"])
@pytest.mark.parametrize("chunk_bits", [None, 3, 7])
def test_count_disagreements_on_executors_match_naive(executor, chunk_bits):
    rng = np.random.default_rng(17)
    N = 9
    W = rng.integers(-8, 9, size=(5, N))
    t = rng.integers(-4, 5, size=5)
    circ = c.ThresholdCircuit.depth2(W, t, rng.integers(-8, 9, size=5), 1)
    ref = naive.circuit_table(naive.layers_of(circ), N)
    for target, tref in [("parity", naive.parity(N)), ("majority", naive.majority(N))]:
        diff = [k for k in range(1 << N) if ref[k] != tref[k]]
        got = c.count_disagreements(circ, target, executor=executor, chunk_bits=chunk_bits)
        assert (got.count, got.index) == (len(diff), diff[0] if diff else -1)
    assert c.count_ones(circ, executor=executor, chunk_bits=chunk_bits) == sum(ref)


def test_generic_counts_with_table_fold():
    table = np.random.default_rng(3).integers(0, 2, size=4096).astype(bool)
    hits = np.flatnonzero(table)
    got = run_chunks(_count_first_of(table), table.size, combine=combine_count_first,
                     initial=COUNT_FIRST_IDENTITY, executor="threads", chunk_size=100)
    assert got == (hits.size, int(hits[0]))


# ------------------------------------------------------------------ bad input

def test_bad_arguments_are_named():
    with pytest.raises(TypeError, match="fn must be callable"):
        run_chunks(3, 10, combine=_add, initial=0)
    with pytest.raises(TypeError, match="combine must be callable"):
        run_chunks(_squares, 10, combine=None, initial=0)
    with pytest.raises(ValueError, match="n_items must be >= 0"):
        run_chunks(_squares, -1, combine=_add, initial=0)
    with pytest.raises(ValueError, match="chunk_size must be >= 1"):
        run_chunks(_squares, 10, combine=_add, initial=0, chunk_size=0)
    with pytest.raises(ValueError, match="either client= .* or executor="):
        run_chunks(_squares, 10, combine=_add, initial=0, executor="threads", client="tcp://x:1")
    with pytest.raises(ValueError, match="'threads', 'dask'"):
        run_chunks(_squares, 10, combine=_add, initial=0, executor="thread")
    with pytest.raises(TypeError, match="concurrent.futures.Executor"):
        run_chunks(_squares, 10, combine=_add, initial=0, executor=object())
    with pytest.raises(ValueError, match="numba_threads must be >= 1"):
        run_chunks(_squares, 10, combine=_add, initial=0, executor="threads", numba_threads=0)
    with pytest.raises(ValueError, match="retries must be >= 0"):
        run_chunks(_squares, 10, combine=_add, initial=0, retries=-1)
    with pytest.raises(DimensionError, match="chunk_bits"):
        c.count_ones(c.parity_depth2(3), executor="threads", chunk_bits=-1)


def _block_distributed(monkeypatch):
    # simulate an environment without the optional extra: `import distributed` raises ImportError
    monkeypatch.setitem(sys.modules, "distributed", None)


def test_missing_dask_says_how_to_install(monkeypatch):
    _block_distributed(monkeypatch)
    circ = c.parity_depth2(4)
    for kwargs in ({"client": "tcp://127.0.0.1:8786"}, {"client": object()}, {"executor": "dask"}):
        with pytest.raises(MissingDependencyError, match=r"pip install -e '\.\[distributed\]'"):
            c.count_ones(circ, **kwargs)
    with pytest.raises(ImportError):      # also an ImportError, and one of ours
        parallel.require_distributed()
    assert issubclass(MissingDependencyError, DepthsepError)
    # everything else keeps working without Dask
    assert c.count_ones(circ) == c.count_ones(circ, executor="threads", chunk_bits=2) == 8


def test_importing_the_library_does_not_import_dask():
    code = ("import sys, circuits, circuits.utils.parallel, circuits.simulate; "
            "bad = [m for m in ('dask', 'distributed', 'tqdm') if m in sys.modules]; "
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=str(_root()))


def _root():
    from pathlib import Path
    return Path(__file__).resolve().parents[1]


class _FakeClient:
    """Just enough of a Dask client for the numba thread budget (no cluster needed)."""

    def __init__(self, probes, nthreads=None):
        self.probes, self._nthreads, self.id = probes, nthreads or {}, object()

    def run(self, fn):
        if isinstance(self.probes, Exception):
            raise self.probes
        return self.probes

    def nthreads(self):
        return self._nthreads


def test_thread_budget_shares_each_host_between_its_dask_threads():
    probes = {"tcp://a": ("h1", 8, 2), "tcp://b": ("h1", 8, 2),   # 8 cores, 4 Dask threads
              "tcp://c": ("h2", 4, 1),                             # 4 cores, 1 Dask thread
              "tcp://d": ("h3", 2, 4)}                             # fewer cores than threads
    plan, total = _dask._probe_thread_plan(_FakeClient(probes), "auto")
    assert plan == {"tcp://a": 2, "tcp://b": 2, "tcp://c": 4, "tcp://d": 1, "default": 1}
    assert total == 9
    plan, total = _dask._probe_thread_plan(_FakeClient(probes), 3)
    assert plan == {"default": 3} and total == 9
    # probing failed (a worker vanished): one numba thread per chunk, scheduler's thread count
    lost = _FakeClient(OSError("worker gone"), nthreads={"tcp://a": 2, "tcp://c": 1})
    assert _dask._probe_thread_plan(lost, "auto") == ({"default": 1}, 3)
    # the plan is probed once and then reused for the same client
    fake = _FakeClient(probes)
    first = _dask._dask_thread_plan(fake, "auto")
    fake.probes = {}
    assert _dask._dask_thread_plan(fake, "auto") == first
