"""Chunked execution of index-range computations: serially, on any executor, or on a Dask cluster.

The exhaustive routines of depthsep (``count_ones``, ``count_disagreements``, correlations,
the self-reduction's margin) all have the same shape: a *pure* function ``fn(start, stop)``
computes a partial result on the index range ``[start, stop)`` of the cube, and partial results
are folded together with an exact, associative and commutative ``combine``.  :func:`run_chunks`
runs that shape anywhere:

* ``executor=None`` (default): in the calling thread.  A numba kernel then uses all of numba's
  threads inside one call, which is the fastest path on one machine.
* ``executor="threads"``: a local :class:`~concurrent.futures.ThreadPoolExecutor` (one thread per
  usable core, numba kernels run one thread each).  Any other
  :class:`concurrent.futures.Executor` instance plugs in the same way.
* ``client=`` a ``dask.distributed.Client`` (or a scheduler address such as
  ``"tcp://10.0.0.1:8786"``), or ``executor="dask"`` for the current default client: every chunk
  is an independent Dask task, so the computation scales past one machine.

Failure handling.  Chunks are pure functions of ``(start, stop)``, so recomputing one gives the
same answer: when a Dask worker dies mid-run, the scheduler re-runs its unfinished tasks on the
surviving workers (up to ``distributed.scheduler.allowed-failures`` times), and a task that raised
is retried ``retries`` times.  Every chunk has its own Dask key and exactly one future, and each
future's result is folded in exactly once, so no chunk is lost or counted twice.  A chunk
function that pickles to more than 256 KiB (say, one holding a large truth table) is shipped
once, as the result of its own task that every chunk depends on; being a task rather than
scattered data, it is recomputed if the worker holding it dies.

Numba threads.  Dask runs ``nthreads`` tasks at once on every worker.  If each of them also ran a
numba kernel on all of the machine's cores, the cores would be oversubscribed.  Before a chunk
runs on a worker, its numba thread count is set (thread-locally, with
:func:`numba.set_num_threads`) to ``max(1, cores of that host // Dask threads on that host)``; with
the usual one Dask thread per core this is 1, and parallelism comes from the chunks.  The
cores and threads are probed with one ``client.run`` and the plan is reused for a minute (a worker
that joins in between runs its chunks on one numba thread).  Pass ``numba_threads=`` to override
it.  Several threads of one process then launch numba parallel
kernels at the same time; numba's ``omp`` and ``tbb`` threading layers allow that, its fallback
``workqueue`` layer does not (``numba.threading_layer()`` tells which one runs; use Dask workers
with one thread each, or install ``tbb``, if it says ``workqueue``).

Dask is an optional extra: ``pip install 'depthsep[distributed]'``.  Without it everything except
the Dask backend works, and asking for the Dask backend raises :class:`MissingDependencyError`
with the install command.
"""

from __future__ import annotations

import concurrent.futures as cf
import os
import uuid
from contextlib import contextmanager
from typing import Any, Callable

from circuits.utils.errors import DepthsepError, MissingDependencyError
from circuits.utils.progress import progress_bar
from circuits.utils.validation import check_int

__all__ = ["run_chunks", "chunk_bounds", "combine_count_first", "require_distributed",
           "usable_cpus", "MissingDependencyError", "COUNT_FIRST_IDENTITY", "MIN_CHUNK_SIZE",
           "CHUNKS_PER_THREAD"]

#: Smallest default chunk (points); below this, per-task overhead dominates a numba kernel call.
MIN_CHUNK_SIZE = 1 << 16
#: Default number of chunks per executor thread / Dask thread (load balance vs. task overhead).
CHUNKS_PER_THREAD = 8
#: Default chunk count when only a progress bar (no executor) asks for chunks.
_PROGRESS_CHUNKS = 64
#: Upper bound on the default number of chunks (scheduler overhead grows with the task count).
_MAX_DEFAULT_CHUNKS = 4096
#: Identity of :func:`combine_count_first`: no disagreement, no counterexample.
COUNT_FIRST_IDENTITY = (0, -1)

_INSTALL_HINT = ("install it with  pip install 'depthsep[distributed]'  (or  pip install "
                 "'dask[distributed]'), or run locally by leaving client= unset")


def require_distributed():
    """Import and return ``dask.distributed``, or say how to install it.

    Raises
    ------
    MissingDependencyError
        If ``dask.distributed`` cannot be imported (also an ``ImportError``).

    Examples
    --------
    >>> require_distributed().__name__   # doctest: +SKIP
    'distributed'
    """
    try:
        import distributed
    except ImportError as exc:
        raise MissingDependencyError(
            f"the Dask backend (client=...) needs dask.distributed, which could not be imported "
            f"({exc}); {_INSTALL_HINT}") from None
    return distributed


def usable_cpus() -> int:
    """Number of CPUs this process may run on (affinity-aware where the OS says so).

    >>> usable_cpus() >= 1
    True
    """
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def combine_count_first(acc, part):
    """Combine two ``(count, first)`` pairs: counts add, ``first`` is the smallest index >= 0.

    ``first = -1`` means "no hit".  Associative and commutative, with identity
    :data:`COUNT_FIRST_IDENTITY` ``(0, -1)``; exact (Python ints).

    Examples
    --------
    >>> combine_count_first((3, 17), (2, 5))
    (5, 5)
    >>> combine_count_first((0, -1), (4, 9))
    (4, 9)
    >>> combine_count_first((4, 9), (0, -1))
    (4, 9)
    """
    c1, f1 = acc
    c2, f2 = part
    f1, f2 = int(f1), int(f2)
    if f1 < 0:
        first = f2
    elif f2 < 0:
        first = f1
    else:
        first = min(f1, f2)
    return int(c1) + int(c2), first


def _check_count(value, name: str, minimum: int) -> int:
    return check_int(value, name=name, minimum=minimum)


def chunk_bounds(n_items: int, chunk_size: int) -> list[tuple[int, int]]:
    """Cut ``[0, n_items)`` into consecutive ranges of ``chunk_size`` (the last may be shorter).

    Examples
    --------
    >>> chunk_bounds(10, 4)
    [(0, 4), (4, 8), (8, 10)]
    >>> chunk_bounds(0, 4)
    []
    """
    n_items = _check_count(n_items, "n_items", 0)
    chunk_size = _check_count(chunk_size, "chunk_size", 1)
    return [(s, min(n_items, s + chunk_size)) for s in range(0, n_items, chunk_size)]


def _default_chunk_size(n_items: int, n_threads: int) -> int:
    n_chunks = min(_MAX_DEFAULT_CHUNKS, CHUNKS_PER_THREAD * max(1, n_threads))
    return max(MIN_CHUNK_SIZE, -(-n_items // n_chunks))


# ---------------------------------------------------------------------------- numba threads

@contextmanager
def _numba_threads(k):
    """Run the body with ``k`` numba threads in this thread (``None``: leave numba alone)."""
    if k is None:
        yield
        return
    import numba
    k = max(1, min(int(k), numba.config.NUMBA_NUM_THREADS))
    old = numba.get_num_threads()
    if old == k:
        yield
        return
    numba.set_num_threads(k)
    try:
        yield
    finally:
        numba.set_num_threads(old)


class _ChunkCall:
    """Picklable ``(start, stop) -> fn(start, stop)`` run with a fixed numba thread count."""

    def __init__(self, fn, threads):
        self.fn = fn
        self.threads = threads

    def __call__(self, start, stop):
        with _numba_threads(self.threads):
            return self.fn(start, stop)


def _check_numba_threads(numba_threads):
    if numba_threads is None or numba_threads == "auto":
        return numba_threads
    return _check_count(numba_threads, "numba_threads", 1)


# ---------------------------------------------------------------------------- public runner

def run_chunks(fn: Callable[[int, int], Any], n_items: int, *, combine: Callable[[Any, Any], Any],
               initial: Any, executor=None, client=None, chunk_size: int | None = None,
               progress: bool = False, desc: str | None = None, retries: int = 2,
               numba_threads="auto"):
    """Fold ``combine`` over ``fn(start, stop)`` for chunks covering ``[0, n_items)``.

    Parameters
    ----------
    fn : callable ``(start, stop) -> partial``
        Must be a pure function of the range (same answer whenever and wherever it is called:
        chunks may be recomputed after a failure).  For process pools and Dask it must be
        picklable: a module-level function or an instance of a module-level class, not a lambda.
    n_items : int
        Size of the index space, e.g. ``2**N`` for the hypercube.
    combine : callable ``(acc, partial) -> acc``
        Folds a partial result into the accumulator.  Contract: **associative and commutative**,
        with ``initial`` as identity, because partial results arrive in order of completion,
        which varies from run to run.  It should not mutate its arguments (return a new value,
        e.g. ``np.minimum(acc, part)``).  Use exact types (Python ints, integer arrays, min/max)
        so that results are bit for bit reproducible; floating-point sums are not associative.
    initial
        The identity of ``combine``; returned unchanged when ``n_items == 0``.
    executor : None, "threads", "dask" or concurrent.futures.Executor, optional
        ``None`` runs the chunks in the calling thread (one chunk unless ``chunk_size`` or
        ``progress`` asks for more); ``"threads"`` uses a local thread pool with one thread per
        usable core; ``"dask"`` uses the current default Dask client; an ``Executor`` instance
        (thread pool, process pool, a Dask ``client.get_executor()``, ...) is used as given.
    client : dask.distributed.Client or str, optional
        A Dask client or a scheduler address (``"tcp://host:8786"``).  Chunks become Dask tasks
        with ``retries`` retries; see the module notes on failures and numba threads.
    chunk_size : int, optional
        Items per chunk.  Default: at least :data:`MIN_CHUNK_SIZE`, about
        ``CHUNKS_PER_THREAD`` chunks per executor thread (or Dask worker thread).
    progress : bool
        Show a tqdm bar over chunks done.
    desc : str, optional
        Label of the progress bar.
    retries : int
        Dask only: how often a chunk whose task *raised* is resubmitted (a chunk whose worker
        *died* is rescheduled by Dask itself).
    numba_threads : "auto", int or None
        Numba threads for each chunk run on an executor or Dask worker.  ``"auto"``: cores per
        concurrently running chunk (see module notes); ``None``: leave numba's setting alone.
        Ignored when ``executor`` and ``client`` are both ``None``.

    Returns
    -------
    The folded result ``combine(...combine(initial, p1)..., pk)``.

    Raises
    ------
    ValueError
        If both ``executor`` and ``client`` are given, or ``executor`` is an unknown string.
    TypeError
        If ``fn``/``combine`` are not callable or ``executor``/``client`` have the wrong type.
    MissingDependencyError
        If the Dask backend is requested and ``dask.distributed`` is not installed.

    Examples
    --------
    Count the odd numbers in [0, 1000) in chunks of 64, locally and on a thread pool:

    >>> def odd(start, stop):
    ...     return sum(k & 1 for k in range(start, stop))
    >>> add = lambda a, b: a + b
    >>> run_chunks(odd, 1000, combine=add, initial=0, chunk_size=64)
    500
    >>> run_chunks(odd, 1000, combine=add, initial=0, chunk_size=64, executor="threads")
    500

    ``combine`` may be any associative and commutative fold, e.g. an elementwise minimum:

    >>> import numpy as np
    >>> def low(start, stop):
    ...     return np.array([start % 3, stop % 5])
    >>> run_chunks(low, 10, combine=np.minimum, initial=np.array([9, 9]),
    ...            chunk_size=3).tolist()
    [0, 0]
    """
    if not callable(fn):
        raise TypeError(f"fn must be callable as fn(start, stop), got {type(fn).__name__}")
    if not callable(combine):
        raise TypeError(f"combine must be callable as combine(acc, partial), got "
                        f"{type(combine).__name__}")
    n_items = _check_count(n_items, "n_items", 0)
    if chunk_size is not None:
        chunk_size = _check_count(chunk_size, "chunk_size", 1)
    retries = _check_count(retries, "retries", 0)
    numba_threads = _check_numba_threads(numba_threads)
    if client is not None and executor is not None:
        raise ValueError("pass either client= (Dask) or executor=, not both")
    if isinstance(executor, str):
        if executor == "dask":
            executor, client = None, require_distributed().get_client()
        elif executor != "threads":
            raise ValueError(f"executor must be None, 'threads', 'dask' or a "
                             f"concurrent.futures.Executor, got {executor!r}")
    if n_items == 0:
        return initial
    if client is not None:
        return _run_dask(fn, n_items, combine, initial, client, chunk_size, progress, desc,
                         retries, numba_threads)
    if executor is None:
        if chunk_size is None:
            chunk_size = n_items if not progress else max(
                MIN_CHUNK_SIZE, -(-n_items // _PROGRESS_CHUNKS))
        return _run_serial(fn, chunk_bounds(n_items, chunk_size), combine, initial, progress, desc)
    if executor == "threads":
        workers = usable_cpus()
        threads = 1 if numba_threads == "auto" else numba_threads
        size = chunk_size or _default_chunk_size(n_items, workers)
        with cf.ThreadPoolExecutor(max_workers=workers, thread_name_prefix="depthsep") as pool:
            return _run_executor(_ChunkCall(fn, threads), chunk_bounds(n_items, size), combine,
                                 initial, pool, progress, desc)
    if not callable(getattr(executor, "submit", None)):
        raise TypeError(f"executor must be None, 'threads', 'dask' or a concurrent.futures."
                        f"Executor (with .submit), got {type(executor).__name__}; for a Dask "
                        f"cluster pass client=")
    workers = getattr(executor, "_max_workers", None)  # set by the stdlib pools
    if numba_threads == "auto":
        threads = max(1, usable_cpus() // workers) if isinstance(workers, int) else None
    else:
        threads = numba_threads
    size = chunk_size or _default_chunk_size(n_items, workers or usable_cpus())
    return _run_executor(_ChunkCall(fn, threads), chunk_bounds(n_items, size), combine, initial,
                         executor, progress, desc)


def _run_serial(fn, bounds, combine, initial, progress, desc):
    acc = initial
    with progress_bar(len(bounds), enabled=progress and len(bounds) > 1, desc=desc,
                      unit="chunk") as bar:
        for s, e in bounds:
            acc = combine(acc, fn(s, e))
            bar.update(1)
    return acc


def _run_executor(task, bounds, combine, initial, executor, progress, desc):
    futures = [executor.submit(task, s, e) for s, e in bounds]
    acc = initial
    try:
        with progress_bar(len(futures), enabled=progress, desc=desc, unit="chunk") as bar:
            for fut in cf.as_completed(futures):
                acc = combine(acc, fut.result())
                bar.update(1)
    finally:
        for fut in futures:  # after an error or an interrupt, do not leave work queued
            fut.cancel()
    return acc


# ---------------------------------------------------------------------------- Dask backend

def _as_client(client):
    """Return ``(client, owned)``; a scheduler address opens a client we must close."""
    distributed = require_distributed()
    if isinstance(client, str):
        return distributed.Client(client, set_as_default=False), True
    if not isinstance(client, distributed.Client):
        raise TypeError(f"client must be a dask.distributed.Client or a scheduler address such as "
                        f"'tcp://host:8786', got {type(client).__name__}; for a concurrent.futures "
                        f"executor pass executor= instead")
    if getattr(client, "asynchronous", False):
        raise TypeError("client is asynchronous; run_chunks needs a synchronous "
                        "dask.distributed.Client (Client(..., asynchronous=False))")
    return client, False


def _probe_worker(dask_worker=None):
    """Run on each worker by ``client.run``: (host name, usable cores, Dask threads)."""
    import socket
    return socket.gethostname(), usable_cpus(), int(dask_worker.state.nthreads)


#: Seconds a probed thread plan is reused for the same client (saves a round trip per call).
#: A stale plan only affects speed: a worker missing from it runs chunks on one numba thread.
_PLAN_TTL = 60.0
_PLAN_CACHE: dict = {}


def _dask_thread_plan(client, numba_threads):
    """Return ``(per-worker numba threads, total Dask threads)``, probed at most every minute."""
    import time
    key = (getattr(client, "id", id(client)), numba_threads)
    hit = _PLAN_CACHE.get(key)
    if hit is not None and time.monotonic() - hit[0] < _PLAN_TTL:
        return hit[1], hit[2]
    plan, total = _probe_thread_plan(client, numba_threads)
    if len(_PLAN_CACHE) > 64:
        _PLAN_CACHE.clear()
    _PLAN_CACHE[key] = (time.monotonic(), plan, total)
    return plan, total


def _probe_thread_plan(client, numba_threads):
    """Ask every worker for its host, usable cores and Dask threads; budget numba threads."""
    try:
        probes = client.run(_probe_worker)
    except Exception:  # a worker vanished while probing: fall back to the scheduler's view
        probes = {}
    if not probes:
        nthreads = client.nthreads()
        total = max(1, sum(nthreads.values()))
        plan = {"default": 1 if numba_threads == "auto" else numba_threads}
        return plan, total
    per_host_threads: dict = {}
    per_host_cpus: dict = {}
    for host, cpus, nthreads in probes.values():
        per_host_threads[host] = per_host_threads.get(host, 0) + nthreads
        per_host_cpus[host] = max(per_host_cpus.get(host, 1), cpus)
    total = max(1, sum(p[2] for p in probes.values()))
    if numba_threads == "auto":
        plan = {addr: max(1, per_host_cpus[h] // max(1, per_host_threads[h]))
                for addr, (h, _, _) in probes.items()}
        plan["default"] = 1  # workers that join (or are restarted) later
    else:
        plan = {"default": numba_threads}
    return plan, total


def _dask_chunk(start, stop, *, fn, plan):
    """One Dask task: ``fn(start, stop)`` with this worker's numba thread budget."""
    threads = plan.get("default")
    if len(plan) > 1:
        from distributed import get_worker
        try:
            threads = plan.get(get_worker().address, threads)
        except ValueError:  # pragma: no cover - not on a worker
            pass
    with _numba_threads(threads):
        return fn(start, stop)


def _payload(fn):
    return fn


#: Dask: a chunk function whose pickle is larger than this is sent once (as a task result)
#: instead of inside every chunk task.
_INLINE_FN_BYTES = 1 << 18


def _pickled_size(fn) -> int:
    from distributed.protocol import pickle as dask_pickle  # cloudpickle fallback, as Dask does
    try:
        return len(dask_pickle.dumps(fn))
    except Exception:  # let Dask raise its own, more precise serialisation error later
        return 0


def _run_dask(fn, n_items, combine, initial, client, chunk_size, progress, desc, retries,
              numba_threads):
    distributed = require_distributed()
    client, owned = _as_client(client)
    try:
        if numba_threads is None:
            plan, total = {"default": None}, max(1, sum(client.nthreads().values()))
        else:
            plan, total = _dask_thread_plan(client, numba_threads)
        bounds = chunk_bounds(n_items, chunk_size or _default_chunk_size(n_items, total))
        token = uuid.uuid4().hex
        extra = []
        if _pickled_size(fn) > _INLINE_FN_BYTES:
            # a large fn (e.g. holding a truth table) travels once, as the result of a task
            # (not scattered data): if the worker holding it dies, the scheduler recomputes it
            # from the task spec instead of failing the run.  Small fns ride inside each task,
            # which saves a dependency hop per chunk.
            fn = client.submit(_payload, fn, key=f"depthsep-fn-{token}", pure=False,
                               retries=retries)
            extra.append(fn)
        keys = [f"depthsep-chunk-{token}-{i}" for i in range(len(bounds))]
        futures = client.map(_dask_chunk, [s for s, _ in bounds], [e for _, e in bounds],
                             fn=fn, plan=plan, key=keys, retries=retries, pure=False)
        pending = set(keys)
        acc = initial
        try:
            with progress_bar(len(futures), enabled=progress, desc=desc, unit="chunk") as bar:
                for fut, part in distributed.as_completed(futures, with_results=True,
                                                          loop=client.loop):
                    if fut.key not in pending:  # pragma: no cover - defensive: never fold twice
                        continue
                    pending.discard(fut.key)
                    acc = combine(acc, part)
                    bar.update(1)
            if pending:  # pragma: no cover - as_completed yields every future exactly once
                raise DepthsepError(f"{len(pending)} chunks never completed on the Dask cluster")
        finally:
            client.cancel([f for f in futures if not f.done()] + extra)
        return acc
    finally:
        if owned:
            client.close()
