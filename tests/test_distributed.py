"""Dask backend: a 2-worker LocalCluster (processes) must give the local answer bit for bit.

One cluster is shared by the whole module (start-up costs ~2 s).  Chunk wrappers used to inject
failures live at module level so that worker processes can unpickle them.
"""

import logging
import os

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")

import circuits as c  # noqa: E402
from circuits.utils import _dask, parallel  # noqa: E402
from circuits.utils.parallel import run_chunks  # noqa: E402
from tests import naive  # noqa: E402


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None, silence_logs=logging.ERROR)
    cl = distributed.Client(cluster, set_as_default=False)
    try:
        cl.wait_for_workers(2, timeout=60)
        yield cl
    finally:
        cl.close()
        cluster.close()


def _random_depth2(seed, N, width=6):
    rng = np.random.default_rng(seed)
    W = rng.integers(-8, 9, size=(width, N))
    t = np.median(W, axis=1).astype(np.int64)  # thresholds near the medians, as in W1
    return c.ThresholdCircuit.depth2(W, t, rng.integers(-8, 9, size=width), 1)


def _add(a, b):
    return a + b


def _squares(start, stop):
    return sum(k * k + 1 for k in range(start, stop))


def _numba_threads(start, stop):
    import numba
    return {numba.get_num_threads()}


def _union(a, b):
    return a | b


class _KillMidRun(distributed.WorkerPlugin):
    """Worker plugin: the first worker to start its ``after``-th depthsep chunk exits abruptly.

    It dies holding the results of the chunks it finished and with tasks assigned, the way a
    machine is lost.  A marker file created with O_EXCL makes sure exactly one process dies,
    once (the restarted worker and the survivor see the marker and carry on).
    """

    name = "depthsep-test-kill-mid-run"

    def __init__(self, marker, after=3):
        self.marker, self.after, self.started = str(marker), after, 0

    def transition(self, key, start, finish, **kwargs):
        if finish != "executing" or not str(key).startswith("depthsep-chunk-"):
            return
        self.started += 1
        if self.started < self.after:
            return
        try:
            fd = os.open(self.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            return
        os.write(fd, f"{os.getpid()} {self.started}".encode())
        os.close(fd)
        os._exit(17)


class _FailOnce:
    """Chunk wrapper whose first call raises (transient error); Dask retries the task."""

    def __init__(self, fn, marker):
        self.fn, self.marker = fn, str(marker)

    def __call__(self, start, stop):
        try:
            fd = os.open(self.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            return self.fn(start, stop)
        os.close(fd)
        raise OSError("transient failure in a chunk")


class _AlwaysFail:
    def __call__(self, start, stop):
        raise ArithmeticError(f"chunk [{start}, {stop}) is broken")


def _local(circ, target):
    return c.count_disagreements(circ, target)


def _same(a, b):
    assert (a.count, a.index, a.n_points) == (b.count, b.index, b.n_points)
    if a.counterexample is None:
        assert b.counterexample is None
    else:
        assert a.counterexample.dtype == b.counterexample.dtype
        assert a.counterexample.tolist() == b.counterexample.tolist()


# ------------------------------------------------------------------ same answers as local

@pytest.mark.parametrize("chunk_bits", [None, 7])
def test_count_disagreements_on_cluster_matches_local_and_naive(client, chunk_bits):
    N = 10
    circ = _random_depth2(1, N)
    ref = naive.circuit_table(naive.layers_of(circ), N)
    table = np.random.default_rng(2).integers(0, 2, size=1 << N).astype(np.uint8)
    targets = ["ip", "parity", "majority", table, c.Constant(N, 0)]
    for target in targets:
        local = _local(circ, target)
        remote = c.count_disagreements(circ, target, client=client, chunk_bits=chunk_bits)
        _same(remote, local)
    diff = [k for k in range(1 << N) if ref[k] != table[k]]
    remote = c.count_disagreements(circ, table, client=client, chunk_bits=chunk_bits)
    assert (remote.count, remote.index) == (len(diff), diff[0] if diff else -1)
    assert c.count_ones(circ, client=client, chunk_bits=chunk_bits) == sum(ref) \
        == c.count_ones(circ)


def test_constructions_on_cluster(client):
    for circ, target in [(c.ip_depth3(6), "ip"), (c.ip_depth3(6), "parity"),
                         (c.parity_depth2(12), "parity"), (c.majority_gate(13), "and")]:
        _same(c.count_disagreements(circ, target, client=client), _local(circ, target))
    assert c.count_disagreements(c.ip_depth3(6), "ip", client=client).agrees


def test_larger_cube_many_chunks_with_progress(client):
    circ = _random_depth2(5, 18, width=16)
    local = _local(circ, "ip")
    remote = c.count_disagreements(circ, "ip", client=client, chunk_bits=12, progress=True)
    _same(remote, local)   # 64 chunks folded in completion order


def test_large_chunk_function_is_sent_once(client):
    # a 2^19-point truth table pickles to > 256 KiB: fn travels as one task result, which
    # every chunk task depends on, instead of riding inside each of the 32 tasks
    N = 19
    circ = _random_depth2(8, N, width=8)
    table = np.random.default_rng(9).integers(0, 2, size=1 << N).astype(np.uint8)
    from distributed.protocol import pickle as dask_pickle
    assert len(dask_pickle.dumps(table)) > _dask._INLINE_FN_BYTES
    _same(c.count_disagreements(circ, table, client=client, chunk_bits=14), _local(circ, table))


def test_executor_forms_of_dask(client):
    circ = _random_depth2(3, 12)
    local = _local(circ, "parity")
    _same(c.count_disagreements(circ, "parity", executor=client.get_executor(), chunk_bits=8),
          local)
    addr = client.scheduler.address          # a scheduler address opens (and closes) a client
    _same(c.count_disagreements(circ, "parity", client=addr, chunk_bits=8), local)
    with distributed.Client(addr):           # executor="dask": the current default client
        _same(c.count_disagreements(circ, "parity", executor="dask", chunk_bits=8), local)


def test_generic_fold_with_array_combine(client):
    got = run_chunks(_squares, 20000, combine=_add, initial=0, client=client, chunk_size=1234)
    assert got == sum(k * k + 1 for k in range(20000))
    assert run_chunks(_squares, 0, combine=_add, initial=7, client=client) == 7


def test_numba_threads_on_workers(client):
    got = run_chunks(_numba_threads, 64, combine=_union, initial=set(), client=client,
                     chunk_size=4)
    # two single-thread workers on one host: cores // 2 numba threads per chunk (at least 1)
    cores = max(client.run(parallel.usable_cpus).values())
    import numba
    assert got == {max(1, min(cores // 2, numba.config.NUMBA_NUM_THREADS))}
    got = run_chunks(_numba_threads, 64, combine=_union, initial=set(), client=client,
                     chunk_size=4, numba_threads=1)
    assert got == {1}


@pytest.mark.slow
@pytest.mark.parametrize("N", [24, 26])
def test_large_cubes_on_cluster_match_local(client, N):
    circ = _random_depth2(N, N, width=32)
    for target in ("ip", "majority"):
        _same(c.count_disagreements(circ, target, client=client), _local(circ, target))
    assert c.count_ones(circ, client=client) == c.count_ones(circ)


def test_bad_client_type(client):
    with pytest.raises(TypeError, match="dask.distributed.Client or a scheduler address"):
        c.count_ones(c.parity_depth2(3), client=object())


# ------------------------------------------------------------------ failures

def test_chunk_that_keeps_failing_raises(client):
    with pytest.raises(ArithmeticError, match="is broken"):
        run_chunks(_AlwaysFail(), 1000, combine=_add, initial=0, client=client, chunk_size=100,
                   retries=1)


def test_transient_error_is_retried(client, tmp_path):
    marker = tmp_path / "failed-once"
    got = run_chunks(_FailOnce(_squares, marker), 5000, combine=_add, initial=0, client=client,
                     chunk_size=500, retries=2)
    assert marker.exists() and got == sum(k * k + 1 for k in range(5000))


def test_worker_killed_mid_run_still_exact(client, tmp_path, monkeypatch):
    # force the harder path: the chunk function is itself a task result that may sit on the
    # worker that dies (the decision is taken in this process, so monkeypatching reaches it)
    monkeypatch.setattr(_dask, "_INLINE_FN_BYTES", 0)
    N = 16
    circ = _random_depth2(11, N, width=12)
    local_ip, local_ones = _local(circ, "ip"), c.count_ones(circ)
    marker = tmp_path / "killed"
    client.register_plugin(_KillMidRun(marker), name=_KillMidRun.name)
    try:
        remote = c.count_disagreements(circ, "ip", client=client, chunk_bits=10)  # 64 chunks
        assert marker.exists(), "no worker was killed: the test did not exercise a failure"
        assert c.count_ones(circ, client=client, chunk_bits=10) == local_ones
    finally:
        client.unregister_worker_plugin(_KillMidRun.name)
    _same(remote, local_ip)
    pid = int(marker.read_text().split()[0])
    assert pid != os.getpid()
    assert pid not in client.run(os.getpid).values()   # that process is gone for good


# ------------------------------------------------------------------ losing the cluster

def _slow_squares(start, stop):
    import time
    time.sleep(0.1)
    return sum(k * k + 1 for k in range(start, stop))


def _free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class _Cluster:
    """A scheduler and one nanny-less worker as separate processes, so either can be killed."""

    def __init__(self, tmp_path):
        import subprocess
        import sys
        import time
        self.port = _free_port()
        self.address = f"tcp://127.0.0.1:{self.port}"
        here = os.path.dirname(os.path.abspath(__file__))
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.dirname(here), here]))
        log = open(tmp_path / "cluster.log", "w")
        self.scheduler = subprocess.Popen(
            [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
             "--port", str(self.port), "--no-dashboard"], stdout=log, stderr=log, env=env)
        self.worker = subprocess.Popen(
            [sys.executable, "-m", "distributed.cli.dask_worker", self.address, "--no-nanny",
             "--nthreads", "1", "--no-dashboard"], stdout=log, stderr=log, env=env)
        deadline = time.monotonic() + 60
        while True:
            try:
                self.client = distributed.Client(self.address, timeout=5, set_as_default=False)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)
        self.client.wait_for_workers(1, timeout=60)

    def kill_later(self, proc, delay):
        import threading
        threading.Timer(delay, proc.kill).start()

    def close(self):
        for p in (self.worker, self.scheduler):
            p.kill()
            p.wait()
        try:
            self.client.close(timeout=2)
        except Exception:
            pass


def test_losing_the_scheduler_is_a_clear_error_never_a_partial_result(tmp_path):
    import time
    cl = _Cluster(tmp_path)
    try:
        cl.kill_later(cl.scheduler, 2.0)
        t = time.monotonic()
        with pytest.raises(parallel.ClusterLostError) as info:
            run_chunks(_slow_squares, 100_000, combine=_add, initial=0, client=cl.client,
                       chunk_size=500, timeout=10)       # 200 chunks of 0.1 s on one thread
        assert time.monotonic() - t < 60
    finally:
        cl.close()
    err = info.value
    msg = str(err)
    assert "scheduler" in msg and "no partial result" in msg
    assert err.total == 200 and 0 <= err.done < 200 and f"{err.done} of 200" in msg


def test_losing_every_worker_times_out_with_a_clear_error(tmp_path):
    import time
    cl = _Cluster(tmp_path)
    try:
        cl.kill_later(cl.worker, 3.0)
        t = time.monotonic()
        with pytest.raises(parallel.ClusterLostError, match=r"no Dask worker .*timeout=3") as info:
            run_chunks(_slow_squares, 100_000, combine=_add, initial=0, client=cl.client,
                       chunk_size=500, timeout=3)
        waited = time.monotonic() - t
    finally:
        cl.close()
    assert waited < 40
    assert 0 <= info.value.done < 200 and info.value.total == 200


@pytest.mark.parametrize("numba_threads", ["auto", None])
def test_a_scheduler_dead_before_the_run_is_cluster_lost_not_a_comm_error(tmp_path,
                                                                          numba_threads):
    # issue 25 item 10: killed just before run_chunks (the client had not noticed yet), the
    # set-up calls raised CommClosedError / OSError("Timed out trying to connect") after Dask's
    # connect timeout, twice over (probe, then its fallback): 30 s with a default client
    import time
    cl = _Cluster(tmp_path)
    try:
        cl.scheduler.kill()
        cl.scheduler.wait()
        t = time.monotonic()
        with pytest.raises(parallel.ClusterLostError, match="before the run") as info:
            run_chunks(_slow_squares, 100_000, combine=_add, initial=0, client=cl.client,
                       chunk_size=500, timeout=10, numba_threads=numba_threads)
        waited = time.monotonic() - t
    finally:
        cl.close()
    assert "no partial result" in str(info.value)
    assert waited < 8, waited       # at most one connect timeout of this client (5 s)


def test_a_scheduler_killed_mid_run_is_reported_without_waiting_for_it(tmp_path):
    # the clean-up cancelled the remaining chunks on the dead scheduler first, waiting for a
    # connect timeout before the ClusterLostError came out
    import threading
    import time
    cl = _Cluster(tmp_path)
    killed = []
    try:
        run_chunks(_squares, 10, combine=_add, initial=0, client=cl.client)   # warm, probed

        def kill():
            killed.append(time.monotonic())
            cl.scheduler.kill()
        threading.Timer(0.3, kill).start()
        with pytest.raises(parallel.ClusterLostError):
            run_chunks(_slow_squares, 100_000, combine=_add, initial=0, client=cl.client,
                       chunk_size=500, timeout=10)
        reported = time.monotonic() - killed[0]
    finally:
        cl.close()
    assert reported < 3, reported    # the client's connect timeout is 5 s


def test_a_cancelled_chunk_is_never_folded_as_a_result(client):
    # someone else cancels the run's tasks: the fold must stop with an error naming the chunk,
    # not pass FutureCancelledError objects to combine as if they were results
    import threading
    folded = []

    def combine(acc, part):
        folded.append(part)
        assert isinstance(part, int), f"combine got {type(part).__name__}"
        return acc + part

    def cancel_soon():
        import time
        deadline = time.monotonic() + 60
        keys = []
        while not keys and time.monotonic() < deadline:   # wait until the run has submitted
            time.sleep(0.2)
            keys = [k for k in list(client.futures) if str(k).startswith("depthsep-chunk-")]
        time.sleep(0.5)
        client.cancel([distributed.Future(k, client) for k in keys], force=True)

    threading.Thread(target=cancel_soon, daemon=True).start()
    with pytest.raises(parallel.ClusterLostError, match="cancelled"):
        run_chunks(_slow_squares, 40_000, combine=combine, initial=0, client=client,
                   chunk_size=500, timeout=10)
    assert all(isinstance(p, int) for p in folded)


@pytest.mark.parametrize("status", ["finished", "error"])
def test_a_chunk_cancelled_between_status_and_result_raises_cluster_lost(client, monkeypatch,
                                                                        status):
    # the race seen under load, made deterministic: a chunk's status reads "finished" (or
    # "error"), and the future is cancelled before .result() returns; the documented
    # ClusterLostError must come out, never a raw FutureCancelledError or a folded value
    from distributed.client import FutureCancelledError
    real = distributed.Future.result
    calls = []

    def racing_result(self, *args, **kwargs):
        if str(self.key).startswith("depthsep-chunk-") and not calls:
            calls.append(self.key)
            real(self, *args, **kwargs)             # it really had finished ...
            raise FutureCancelledError(self.key, "cancelled")   # ... then was cancelled
        return real(self, *args, **kwargs)

    monkeypatch.setattr(distributed.Future, "result", racing_result)
    if status == "error":
        monkeypatch.setattr(distributed.Future, "status", property(
            lambda self: "error" if str(self.key).startswith("depthsep-chunk-") and not calls
            else self._state.status))
    folded = []
    with pytest.raises(parallel.ClusterLostError, match="cancelled") as info:
        run_chunks(_squares, 4000, combine=lambda a, p: folded.append(p) or a, initial=0,
                   client=client, chunk_size=500, timeout=10)
    assert calls and info.value.total == 8 and info.value.done == len(folded) < 8
