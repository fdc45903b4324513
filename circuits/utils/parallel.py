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

from circuits.utils.errors import (ClusterLostError, MissingDependencyError,
                                   RunTooLongError)
from circuits.utils.progress import progress_bar
from circuits.utils.validation import check_int

__all__ = ["run_chunks", "chunk_bounds", "combine_count_first", "require_distributed",
           "usable_cpus", "MissingDependencyError", "COUNT_FIRST_IDENTITY", "MIN_CHUNK_SIZE",
           "CHUNKS_PER_THREAD", "DEFAULT_MAX_SECONDS", "MAX_SECONDS_ENV", "SLICE_SECONDS",
           "resolve_max_seconds", "format_seconds", "numba_threading_layer", "deferred_sigint",
           "RunTooLongError",
           "ClusterLostError"]

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


# ---------------------------------------------------------------------------- time limits

#: Default limit (seconds) on the *estimated* time of a local run; ``DEPTHSEP_MAX_SECONDS``
#: overrides it (a number, or ``none`` for no limit), ``max_seconds=`` overrides both.
DEFAULT_MAX_SECONDS = 600.0
MAX_SECONDS_ENV = "DEPTHSEP_MAX_SECONDS"
#: Target wall time of one slice: a Ctrl-C (or a cancelled run) is honoured within about this.
SLICE_SECONDS = 0.15
#: A slice at least this long measures the rate used for the time estimate.
_CALIBRATION_SECONDS = 0.04
#: Items in the first slice of a run (grown or shrunk from measured times afterwards).
_FIRST_SLICE = 1 << 10
#: Slices above this many items are rounded to a multiple of it (the cube kernels' tile size).
_SLICE_ALIGN = 1 << 12


class _Default:
    def __repr__(self):
        return "<default>"


#: Sentinel for "use the default (environment variable, else DEFAULT_MAX_SECONDS)".
DEFAULT = _Default()


def resolve_max_seconds(max_seconds=DEFAULT) -> "float | None":
    """The time limit in force: ``max_seconds`` if given, else ``$DEPTHSEP_MAX_SECONDS``, else
    :data:`DEFAULT_MAX_SECONDS`.  ``None`` (or the variable set to ``none``) means no limit.

    >>> resolve_max_seconds(30)
    30.0
    >>> resolve_max_seconds(None) is None
    True
    """
    from circuits.utils.validation import check_real
    if max_seconds is DEFAULT:
        env = os.environ.get(MAX_SECONDS_ENV, "").strip()
        if not env:
            return DEFAULT_MAX_SECONDS
        if env.lower() in ("none", "inf", "off"):
            return None
        try:
            value = float(env)
        except ValueError:
            from circuits.utils.errors import InvalidArgumentError
            raise InvalidArgumentError(f"{MAX_SECONDS_ENV}={env!r} is not a number of seconds; "
                                       f"set it to e.g. 3600, or to 'none' for no limit") from None
        return check_real(value, name=MAX_SECONDS_ENV, minimum=0, what="seconds")
    return check_real(max_seconds, name="max_seconds", minimum=0, allow_none=True, allow_inf=True,
                      what="the limit on the estimated run time, in seconds")


def format_seconds(t: float) -> str:
    """A duration for humans: ``'0.4 s'``, ``'12 min'``, ``'3.1 h'``, ``'46 years'``.

    >>> [format_seconds(x) for x in (0.42, 95, 7200, 86400 * 400)]
    ['0.42 s', '1.6 min', '2 h', '1.1 years']
    """
    t = float(t)
    for unit, size in (("years", 365.25 * 86400), ("days", 86400), ("h", 3600), ("min", 60)):
        if t >= size * (1 if unit != "min" else 1.5):
            return f"{t / size:.2g} {unit}"
    return f"{t:.2g} s"


class _Meter:
    """Shared state of one run: items done, the calibrated rate, a cancel flag and the verdict.

    Slices report ``(items, seconds)``; the first slice of each thread is skipped (it may
    include JIT compilation).  Once a slice of at least ``_CALIBRATION_SECONDS`` has run, the
    rate of the whole run is estimated as ``workers * items/second`` of that slice, and a run
    whose estimate exceeds ``max_seconds`` is refused (``error`` is set and the run cancelled).
    """

    def __init__(self, n_items, max_seconds, workers, desc, max_slice=None):
        import threading
        import time
        self.n_items = n_items
        self.max_seconds = max_seconds
        self.workers = max(1, workers)
        self.desc = desc
        self.max_slice = max_slice
        self.lock = threading.Lock()
        self.cancel = threading.Event()
        self.t0 = time.perf_counter()
        self.done = 0
        self.size = _FIRST_SLICE
        self.estimate = None        # (seconds, rate) once calibrated
        self.error = None

    def next_size(self, size: int, dt: float) -> int:
        factor = 16.0 if dt < 1e-4 else min(16.0, max(0.25, SLICE_SECONDS / dt))
        new = max(1, int(size * factor))
        if new > _SLICE_ALIGN:
            new -= new % _SLICE_ALIGN
        if self.max_slice is not None:
            new = min(new, self.max_slice)
        return new

    def record(self, items: int, dt: float, warm: bool) -> None:
        import time
        with self.lock:
            self.done += items
            if self.estimate is not None or not warm or dt < _CALIBRATION_SECONDS:
                return
            rate = self.workers * items / dt
            elapsed = time.perf_counter() - self.t0
            total = elapsed + (self.n_items - self.done) / rate
            self.estimate = (total, rate)
            if self.max_seconds is not None and total > self.max_seconds:
                from circuits.utils.errors import RunTooLongError
                what = self.desc or f"this run over {self.n_items:,} items"
                self.error = RunTooLongError(
                    f"{what} would take about "
                    f"{format_seconds(total)} here (measured {rate:.3g} items/s after "
                    f"{elapsed:.2f} s), above the limit max_seconds={self.max_seconds:g}. "
                    f"Ways forward: spread it over a Dask cluster (client=...), pass a larger "
                    f"max_seconds= (or max_seconds=None to run it anyway), or set the "
                    f"environment variable {MAX_SECONDS_ENV}; a smaller instance may answer "
                    f"the question too",
                    estimate_seconds=total, max_seconds=self.max_seconds, n_items=self.n_items,
                    rate=rate)
                self.cancel.set()


class _Cancelled(Exception):
    """Raised inside a worker thread when its run was cancelled (never escapes run_chunks)."""


@contextmanager
def _deferred_sigint():
    """In the main thread, hold a SIGINT that arrives during the body until the body returns.

    numba-compiled functions run without the GIL; a Ctrl-C that arrives meanwhile is handled by
    Python when the function re-enters the interpreter to box its return value.  numba's boxing
    of a tuple of arrays does not check for the KeyboardInterrupt raised there and hands back a
    tuple with a NULL slot, which segfaults as soon as it is unpacked (exit 139).  Deferring the
    signal to the end of the call makes the return value whole, then raises KeyboardInterrupt.
    Outside the main thread (where Python never runs signal handlers) this does nothing.
    """
    import signal
    import threading
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGINT)
    if not callable(previous):   # SIG_IGN / SIG_DFL: nothing of Python's runs, nothing to defer
        yield
        return
    caught = []
    signal.signal(signal.SIGINT, lambda signum, frame: caught.append(frame))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if caught:
        previous(signal.SIGINT, caught[0])


#: Public name: wrap a call of a numba function that returns a tuple of arrays
#: (``with deferred_sigint(): a, b = kernel(...)``) so a Ctrl-C cannot corrupt its result.
deferred_sigint = _deferred_sigint


def _run_sliced(fn, start, stop, combine, initial, meter, guard):
    """Fold ``fn`` over [start, stop) in slices of about SLICE_SECONDS, checking for cancellation
    (and, in the main thread, for Ctrl-C) between slices."""
    import time
    acc = initial
    s = start
    size = meter.size
    warm = False
    while s < stop:
        if meter.cancel.is_set():
            raise _Cancelled
        e = min(stop, s + size)
        t = time.perf_counter()
        with guard, _deferred_sigint():
            part = fn(s, e)
        dt = time.perf_counter() - t
        acc = combine(acc, part)
        meter.record(e - s, dt, warm)
        if meter.error is not None:
            raise _Cancelled
        warm = True
        size = meter.size = meter.next_size(e - s, dt)
        s = e
    return acc


class _SlicedCall:
    """``(start, stop) -> fold of fn over slices`` for a thread pool (shares the run's meter)."""

    def __init__(self, fn, threads, combine, initial, meter, guard):
        self.fn, self.threads, self.combine, self.initial = fn, threads, combine, initial
        self.meter, self.guard = meter, guard

    def __call__(self, start, stop):
        with _numba_threads(self.threads):
            return _run_sliced(self.fn, start, stop, self.combine, self.initial, self.meter,
                               self.guard)


# ---------------------------------------------------------------------------- threading layer

_LAYER = None


def numba_threading_layer() -> str:
    """The numba threading layer in use (``'omp'``, ``'tbb'`` or ``'workqueue'``).

    numba picks it when the first parallel kernel runs; this runs a tiny one if none has.
    """
    global _LAYER
    if _LAYER is None:
        import numba
        try:
            _LAYER = numba.threading_layer()
        except ValueError:
            from circuits import _kernels
            _kernels._parallel_probe(4)
            _LAYER = numba.threading_layer()
    return _LAYER


class _NoGuard:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


_NO_GUARD = _NoGuard()
_WORKQUEUE_LOCK = None


def _parallel_guard():
    """A lock serialising chunk calls when numba's ``workqueue`` layer is in use.

    The workqueue layer aborts the whole process (exit 134) when two threads launch parallel
    kernels at the same time; omp and tbb allow it.  Under workqueue every chunk run from a
    thread pool or a multi-threaded Dask worker takes this lock first.
    """
    global _WORKQUEUE_LOCK
    if numba_threading_layer() != "workqueue":
        return _NO_GUARD
    if _WORKQUEUE_LOCK is None:
        import threading
        _WORKQUEUE_LOCK = threading.Lock()
    return _WORKQUEUE_LOCK


_WARNED_WORKQUEUE = False


def _warn_workqueue():
    global _WARNED_WORKQUEUE
    if not _WARNED_WORKQUEUE:
        import warnings
        warnings.warn("numba runs on its 'workqueue' threading layer, which aborts the process "
                      "when several threads launch parallel kernels at once; executor='threads' "
                      "therefore runs its chunks one at a time, each on all numba threads.  "
                      "Install tbb (pip install tbb) or an OpenMP runtime for concurrent "
                      "chunks", RuntimeWarning, stacklevel=4)
        _WARNED_WORKQUEUE = True


# ---------------------------------------------------------------------------- public runner

def run_chunks(fn: Callable[[int, int], Any], n_items: int, *, combine: Callable[[Any, Any], Any],
               initial: Any, executor=None, client=None, chunk_size: int | None = None,
               progress: bool = False, desc: str | None = None, retries: int = 2,
               numba_threads="auto", max_seconds=DEFAULT, timeout: "float | None" = 120.0):
    """Fold ``combine`` over ``fn(start, stop)`` for chunks covering ``[0, n_items)``.

    Parameters
    ----------
    fn : callable ``(start, stop) -> partial``
        Must be a pure function of the range (same answer whenever and wherever it is called:
        chunks may be recomputed after a failure, and locally a chunk is cut into slices).
        For process pools and Dask it must be picklable: a module-level function or an
        instance of a module-level class, not a lambda.
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
        ``None`` runs in the calling thread; ``"threads"`` uses a local thread pool with one
        thread per usable core; ``"dask"`` uses the current default Dask client; an
        ``Executor`` instance (thread pool, process pool, a Dask ``client.get_executor()``,
        ...) is used as given.
    client : dask.distributed.Client or str, optional
        A Dask client or a scheduler address (``"tcp://host:8786"``).  Chunks become Dask tasks
        with ``retries`` retries; see the module notes on failures and numba threads.
    chunk_size : int, optional
        Items per chunk (and at most this many per call of ``fn``).  Default: at least
        :data:`MIN_CHUNK_SIZE`, about ``CHUNKS_PER_THREAD`` chunks per executor thread (or
        Dask worker thread); in the calling thread, one chunk.
    progress : bool
        Show a tqdm bar over the items done, with an ETA.
    desc : str, optional
        Label of the progress bar and of a refusal message.
    retries : int
        Dask only: how often a chunk whose task *raised* is resubmitted (a chunk whose worker
        *died* is rescheduled by Dask itself).
    numba_threads : "auto", int or None
        Numba threads for each chunk run on an executor or Dask worker.  ``"auto"``: cores per
        concurrently running chunk (see module notes); ``None``: leave numba's setting alone.
        Ignored when ``executor`` and ``client`` are both ``None``.
    max_seconds : float or None
        Limit on the estimated run time of a local run (calling thread or thread pool).  The
        estimate comes from the first slices (a fraction of a second); beyond the limit the
        run stops with :class:`~circuits.utils.errors.RunTooLongError`, which carries the
        estimate.  Default: ``$DEPTHSEP_MAX_SECONDS``, else :data:`DEFAULT_MAX_SECONDS`
        (10 minutes); ``None`` means no limit.  Not applied on Dask (the cluster is the way
        forward) nor on process pools.
    timeout : float or None
        Dask only: seconds the run may go without any worker, or without contact with the
        scheduler, before it fails with :class:`~circuits.utils.errors.ClusterLostError`
        (``None``: wait forever).  A slow chunk on a live worker never times out.

    Returns
    -------
    The folded result ``combine(...combine(initial, p1)..., pk)``.

    Raises
    ------
    ValueError
        If both ``executor`` and ``client`` are given, or ``executor`` is an unknown string.
    TypeError
        If ``fn``/``combine`` are not callable or ``executor``/``client`` have the wrong type.
    RunTooLongError
        If the estimated time exceeds ``max_seconds``.
    ClusterLostError
        If the Dask scheduler, or every worker for ``timeout`` seconds, is lost mid-run.  No
        partial result is ever returned.
    MissingDependencyError
        If the Dask backend is requested and ``dask.distributed`` is not installed.
    KeyboardInterrupt
        On Ctrl-C, within about :data:`SLICE_SECONDS` locally: work runs in slices of that
        length, and worker threads stop at the next slice boundary.

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
    limit = resolve_max_seconds(max_seconds)
    if timeout is not None:
        from circuits.utils.validation import check_real
        timeout = check_real(timeout, name="timeout", minimum=0,
                             what="seconds without a Dask worker before giving up")
    if client is not None and executor is not None:
        raise ValueError("pass either client= (Dask) or executor=, not both")
    if isinstance(executor, str):
        if executor == "dask":
            executor, client = None, require_distributed().get_client()
        elif executor != "threads":
            raise ValueError(f"executor must be None, 'threads', 'dask' or a "
                             f"concurrent.futures.Executor, got {executor!r}")
    if executor is not None and not isinstance(executor, str) and not callable(
            getattr(executor, "submit", None)):
        raise TypeError(f"executor must be None, 'threads', 'dask' or a concurrent.futures."
                        f"Executor (with .submit), got {type(executor).__name__}; for a Dask "
                        f"cluster pass client=")
    if n_items == 0:
        return initial
    if client is not None:
        return _run_dask(fn, n_items, combine, initial, client, chunk_size, progress, desc,
                         retries, numba_threads, timeout)
    if executor is None:
        meter = _Meter(n_items, limit, 1, desc, max_slice=chunk_size)
        return _run_serial(fn, chunk_bounds(n_items, chunk_size or n_items), combine, initial,
                           progress, desc, meter)
    if executor == "threads":
        workers = usable_cpus()
        threads = 1 if numba_threads == "auto" else numba_threads
        if workers > 1 and numba_threading_layer() == "workqueue":
            _warn_workqueue()
            workers, threads = 1, None
        size = chunk_size or _default_chunk_size(n_items, workers)
        meter = _Meter(n_items, limit, workers, desc, max_slice=chunk_size)
        task = _SlicedCall(fn, threads, combine, initial, meter, _NO_GUARD)
        pool = cf.ThreadPoolExecutor(max_workers=workers, thread_name_prefix="depthsep")
        try:
            return _run_executor(task, chunk_bounds(n_items, size), combine, initial, pool,
                                 progress, desc, meter)
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
    workers = getattr(executor, "_max_workers", None)  # set by the stdlib pools
    if numba_threads == "auto":
        threads = max(1, usable_cpus() // workers) if isinstance(workers, int) else None
    else:
        threads = numba_threads
    size = chunk_size or _default_chunk_size(n_items, workers or usable_cpus())
    meter = None
    if isinstance(executor, cf.ThreadPoolExecutor):   # shared memory: slice, meter, cancel
        meter = _Meter(n_items, limit, workers or 1, desc, max_slice=chunk_size)
        task = _SlicedCall(fn, threads, combine, initial, meter, _parallel_guard())
    else:
        task = _ChunkCall(fn, threads)
    return _run_executor(task, chunk_bounds(n_items, size), combine, initial, executor, progress,
                         desc, meter)


def _bar(n_items, progress, desc):
    return progress_bar(n_items, enabled=progress, desc=desc, unit="pt", unit_scale=True)


def _run_serial(fn, bounds, combine, initial, progress, desc, meter):
    acc = initial
    with _bar(meter.n_items, progress, desc) as bar:
        call = _Ticking(fn, bar) if progress else fn
        for s, e in bounds:
            try:
                part = _run_sliced(call, s, e, combine, initial, meter, _NO_GUARD)
            except _Cancelled:
                raise meter.error from None
            acc = combine(acc, part)
    return acc


class _Ticking:
    """``fn`` that advances a progress bar by the items of every call."""

    def __init__(self, fn, bar):
        self.fn, self.bar = fn, bar

    def __call__(self, start, stop):
        out = self.fn(start, stop)
        self.bar.update(stop - start)
        return out


def _run_executor(task, bounds, combine, initial, executor, progress, desc, meter=None):
    where = {executor.submit(task, s, e): (s, e) for s, e in bounds}
    futures = list(where)
    acc = initial
    n_items = bounds[-1][1] if bounds else 0
    try:
        with _bar(n_items, progress, desc) as bar:
            pending = set(futures)
            shown = 0
            while pending:
                # wait with a timeout, so Ctrl-C and a refusal are seen within ~0.1 s
                done, pending = cf.wait(pending, timeout=0.1, return_when=cf.FIRST_COMPLETED)
                if meter is not None and meter.error is not None:
                    raise meter.error
                for fut in done:
                    acc = combine(acc, fut.result())
                    if meter is None:
                        s, e = where[fut]
                        bar.update(e - s)
                if meter is not None:
                    bar.update(meter.done - shown)
                    shown = meter.done
    except _Cancelled:  # pragma: no cover - only after meter.error, handled above
        raise meter.error from None
    finally:
        if meter is not None:   # running chunks stop at their next slice boundary
            meter.cancel.set()
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
    with _numba_threads(threads), _parallel_guard():
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
              numba_threads, timeout):
    require_distributed()
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
        try:
            return _fold_dask(client, futures, combine, initial, progress, desc, timeout)
        finally:
            try:
                client.cancel([f for f in futures if not f.done()] + extra)
            except Exception:  # pragma: no cover - the scheduler is gone: nothing to cancel
                pass
    finally:
        if owned:
            client.close()


#: Seconds one finished chunk's result may take to arrive before the health checks run again.
_GATHER_SECONDS = 10.0


def _fold_dask(client, futures, combine, initial, progress, desc, timeout):
    """Fold finished chunks as they complete; never fold anything but a chunk's own result.

    A future that ends cancelled or lost (the scheduler went away, or someone cancelled the
    run) raises :class:`ClusterLostError` naming what was lost and how far the run got; so does
    a run that has had no worker, or no scheduler connection, for ``timeout`` seconds.  A task
    that raised re-raises its own exception (after Dask's retries).
    """
    import time
    distributed = require_distributed()
    total = len(futures)
    pending = {f.key for f in futures}
    done = 0
    acc = initial
    address = getattr(getattr(client, "scheduler", None), "address", None) or "the scheduler"
    stalled_since = None

    def lost(what):
        return ClusterLostError(
            f"{what}; {done} of {total} chunks had finished ({100.0 * done / total:.0f}%), and "
            f"no partial result is returned.  Restart the cluster (or pass another client=) "
            f"and run again; the chunks are pure, so a re-run gives the exact answer",
            done=done, total=total)

    ac = distributed.as_completed(futures, loop=client.loop)
    with progress_bar(total, enabled=progress, desc=desc, unit="chunk") as bar:
        while pending:
            batch = ac.next_batch(block=False) if ac.has_ready() else []
            for fut in batch:
                if fut.key not in pending:  # pragma: no cover - defensive: never fold twice
                    continue
                status = fut.status
                if status == "finished":
                    try:
                        # bounded: a result whose worker just died makes Dask recompute it,
                        # and gather would wait for that forever if no worker is left
                        part = fut.result(timeout=_GATHER_SECONDS)
                    except (OSError, TimeoutError):  # CommClosedError, or still recomputing
                        ac.add(fut)                  # wait for it again (timeout below)
                        continue
                elif status == "error":
                    fut.result()            # the task's own exception, after its retries
                    raise lost(f"chunk {fut.key} failed without an exception")  # pragma: no cover
                elif status in ("lost", "pending"):
                    # its result was lost with a worker after it finished: the scheduler
                    # recomputes it once a worker is there (else the timeout below fires)
                    ac.add(fut)
                    continue
                else:
                    state = getattr(client, "status", "unknown")
                    if state != "running":
                        raise lost(f"lost the Dask scheduler at {address} (client status "
                                   f"{state!r}): chunk {fut.key} ended {status!r}") from None
                    raise lost(f"chunk {fut.key} ended {status!r} on the Dask cluster at "
                               f"{address} (cancelled by the scheduler or another client)")
                pending.discard(fut.key)
                acc = combine(acc, part)
                done += 1
                bar.update(1)
                stalled_since = None
            if not pending:
                break
            if timeout is not None:
                healthy = getattr(client, "status", "running") == "running"
                if healthy:
                    try:
                        healthy = bool(client.scheduler_info().get("workers"))
                    except Exception:  # pragma: no cover - no scheduler identity yet/anymore
                        healthy = False
                now = time.monotonic()
                if healthy:
                    stalled_since = None
                elif stalled_since is None:
                    stalled_since = now
                elif now - stalled_since > timeout:
                    state = getattr(client, "status", "unknown")
                    what = (f"no Dask worker connected to {address} for {timeout:g} s "
                            f"(timeout={timeout:g})" if state == "running" else
                            f"no contact with the Dask scheduler at {address} for {timeout:g} s "
                            f"(timeout={timeout:g}, client status {state!r})")
                    raise lost(what)
            if not batch:
                time.sleep(0.05)
    return acc
