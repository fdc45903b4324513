"""GIL-free serial kernels on Python threads, with a thread count chosen from the free CPUs.

Several kernels used to be numba ``prange`` loops.  On the shared 2-vCPU machines a busy second
core made OpenMP's static schedule (each thread one fixed share, the others spinning at the
barrier) wait for the slow share: ``CodeEmbedding(20)`` ran 2.7x slower on numba's two threads
than on one.  A ``prange`` kernel also compiles about twice as slowly as its serial
body (``embeddings._kernels._gray_min_weight``: 1.35 vs 0.66 s), which the first run of every
command pays.  Here the kernel is serial over a range and releases the GIL (``nogil``); ranges
are taken in turn from a shared list by the calling thread and the helpers of one persistent
pool, so a thread that is starved of CPU simply takes fewer ranges.

The thread count (:func:`work_threads`) is ``numba.get_num_threads()`` (the user's cap:
``NUMBA_NUM_THREADS`` or ``numba.set_num_threads``), lowered to the CPUs that are free right
now: the usable CPUs minus the other runnable tasks (``/proc/loadavg``'s instantaneous count,
else the 1-minute load average), never below one.
"""

from __future__ import annotations

import os
import threading

__all__ = ["free_cpus", "work_threads", "run_ranges", "helper_pool"]

_HELPERS: list = []            # [ThreadPoolExecutor, workers]: one pool, reused across calls
_HELPERS_LOCK = threading.Lock()


def helper_pool(workers: int):
    """A pool of at least ``workers`` threads that only ever runs kernel ranges (which never
    wait on anything), so sharing it between concurrent callers cannot deadlock."""
    from concurrent.futures import ThreadPoolExecutor
    with _HELPERS_LOCK:
        if not _HELPERS or _HELPERS[1] < workers:
            old = _HELPERS[0] if _HELPERS else None
            _HELPERS[:] = [ThreadPoolExecutor(workers, thread_name_prefix="depthsep-bits"),
                           workers]
            if old is not None:
                old.shutdown(wait=False)
        return _HELPERS[0]


def _own_running() -> int:
    """Threads of this process that are running or runnable now (the caller included)."""
    n = 0
    for task in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{task}/stat") as fh:
                if fh.read().rsplit(")", 1)[1].split()[0] == "R":
                    n += 1
        except (OSError, IndexError):
            continue
    return max(1, n)


def _other_runnable() -> float:
    """Runnable tasks of other processes: ``/proc/loadavg`` field 4 is "running/total" at this
    instant, minus this process's own running threads (the caller, helpers finishing a range,
    numba's spinning OpenMP threads); else the 1-minute load average minus one."""
    try:
        with open("/proc/loadavg") as fh:
            running = int(fh.read().split()[3].split("/")[0])
        return max(0, running - _own_running())
    except (OSError, ValueError, IndexError):
        try:
            return max(0.0, os.getloadavg()[0] - 1.0)
        except (OSError, AttributeError):   # pragma: no cover - no load figures
            return 0.0


def free_cpus() -> int:
    """CPUs this process may use that no other runnable task wants right now (at least 1).

    >>> free_cpus() >= 1
    True
    """
    from circuits.utils._executor import usable_cpus
    return max(1, int(usable_cpus() - _other_runnable() + 0.5))


def work_threads(max_useful: int) -> int:
    """Threads for a job of ``max_useful`` independent ranges: numba's thread count (the user's
    cap), the free CPUs (:func:`free_cpus`) and ``max_useful``, at least 1."""
    import numba
    return max(1, min(numba.get_num_threads(), free_cpus(), int(max_useful)))


def run_ranges(fn, bounds, threads: int) -> None:
    """``fn(lo, hi)`` for every ``(lo, hi)`` in ``bounds``, on ``threads`` threads (the caller
    one of them) taking ranges in order from a shared list; the first exception is re-raised in
    the caller after every thread stopped."""
    it = iter(bounds)
    lock = threading.Lock()
    failed: list = []

    def worker():
        while not failed:
            with lock:
                b = next(it, None)
            if b is None:
                return
            try:
                fn(*b)
            except BaseException as exc:
                failed.append(exc)
                raise

    threads = max(1, min(int(threads), len(bounds)))
    futs = [helper_pool(threads - 1).submit(worker) for _ in range(threads - 1)]
    try:
        worker()
    finally:
        for f in futs:
            try:
                f.result()
            except BaseException:
                pass
    if failed:
        raise failed[0]
