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
``workqueue`` layer does not, and there every parallel kernel takes a process-wide lock for its
launch (``circuits._jit.ParallelKernel``), so concurrent chunks are safe but their kernels run
one at a time (``numba.threading_layer()`` tells which layer runs; use Dask workers with one
thread each, or install ``tbb``, if it says ``workqueue``).

Dask is an optional extra: ``pip install -e '.[distributed]'`` in the checkout.  Without it
everything except the Dask backend works, and asking for the Dask backend raises :class:`MissingDependencyError`
with the install command.
"""

from __future__ import annotations

import concurrent.futures as cf
from typing import Any, Callable

from circuits.utils.errors import (ClusterLostError, MissingDependencyError,
                                   RunTooLongError)
from circuits.utils.progress import progress_bar
from circuits.utils.slicing import (DEFAULT, DEFAULT_MAX_SECONDS, MAX_SECONDS_ENV, SLICE_SECONDS,
                                    _Cancelled, _Meter, _NO_GUARD, _run_sliced, _SlicedCall, _warn_workqueue,
                                    deferred_sigint, format_seconds, numba_threading_layer,
                                    resolve_max_seconds)
# the executor protocol shared with the Dask backend (circuits.utils._dask imports it too, so
# neither module imports the other at import time)
from circuits.utils._executor import (_INSTALL_HINT, _MAX_DEFAULT_CHUNKS, _PROGRESS_CHUNKS,  # noqa: F401
                                      CHUNKS_PER_THREAD, COUNT_FIRST_IDENTITY, MIN_CHUNK_SIZE,
                                      _ChunkCall, _check_count, _default_chunk_size, chunk_bounds,
                                      combine_count_first, require_distributed, usable_cpus)

__all__ = ["run_chunks", "chunk_bounds", "combine_count_first", "require_distributed",
           "usable_cpus", "MissingDependencyError", "COUNT_FIRST_IDENTITY", "MIN_CHUNK_SIZE",
           "CHUNKS_PER_THREAD", "DEFAULT_MAX_SECONDS", "MAX_SECONDS_ENV", "SLICE_SECONDS",
           "resolve_max_seconds", "format_seconds", "numba_threading_layer", "deferred_sigint",
           "RunTooLongError",
           "ClusterLostError"]

def _check_numba_threads(numba_threads):
    if numba_threads is None or numba_threads == "auto":
        return numba_threads
    return _check_count(numba_threads, "numba_threads", 1)


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
        from circuits.utils._dask import _run_dask

        return _run_dask(fn, n_items, combine, initial, client, chunk_size, progress, desc,
                         retries, numba_threads, timeout)
    if executor is None:
        meter = _Meter(n_items, limit, 1, desc, max_slice=chunk_size, first=_first_slice(fn))
        return _run_serial(fn, chunk_bounds(n_items, chunk_size or n_items), combine, initial,
                           progress, desc, meter)
    if executor == "threads":
        workers = usable_cpus()
        threads = 1 if numba_threads == "auto" else numba_threads
        if workers > 1 and numba_threading_layer() == "workqueue":
            _warn_workqueue()
            workers, threads = 1, None
        size = chunk_size or _default_chunk_size(n_items, workers)
        meter = _Meter(n_items, limit, workers, desc, max_slice=chunk_size,
                       first=_first_slice(fn))
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
        meter = _Meter(n_items, limit, workers or 1, desc, max_slice=chunk_size,
                       first=_first_slice(fn))
        task = _SlicedCall(fn, threads, combine, initial, meter, _NO_GUARD)
    else:
        task = _ChunkCall(fn, threads)
    return _run_executor(task, chunk_bounds(n_items, size), combine, initial, executor, progress,
                         desc, meter)


def _first_slice(fn) -> "int | None":
    """Size of a run's first slice: ``fn.first_slice`` when the callable carries one (kernels
    that work in tiles of thousands of items start with a few tiles instead of 1024 items)."""
    n = getattr(fn, "first_slice", None)
    return int(n) if isinstance(n, int) and not isinstance(n, bool) and n >= 1 else None


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
    where, futures = {}, []
    acc = initial
    n_items = bounds[-1][1] if bounds else 0
    try:
        # submitted inside the try: a Ctrl-C (or a refusal) while chunks are still being
        # submitted cancels the ones already queued and stops the running ones (issue 25)
        for s, e in bounds:
            fut = executor.submit(task, s, e)
            where[fut] = (s, e)
            futures.append(fut)
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
