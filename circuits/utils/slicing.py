"""Bounded slices: run-time estimates and limits, Ctrl-C between slices, the threading-layer guard.

:func:`circuits.utils.parallel.run_chunks` cuts every chunk into slices of about
:data:`SLICE_SECONDS` (sized from the previous slice's speed).  Between slices it checks for
Ctrl-C (deferred while a numba kernel runs: a SIGINT delivered inside a kernel that returns a
tuple of arrays used to crash the process), for a cancel flag set by the main thread, and for the
time limit: the first slice of at least 40 ms calibrates the speed, and a run estimated above
``max_seconds`` (default :data:`DEFAULT_MAX_SECONDS`, or the environment variable
:data:`MAX_SECONDS_ENV`) is refused with :class:`~circuits.utils.errors.RunTooLongError` before
the bulk of the work starts.  numba's ``workqueue`` threading layer aborts the process when
several threads launch parallel kernels at once; :func:`numba_threading_layer` tells which layer
runs, and every parallel kernel serialises its own launches there
(``circuits._jit.ParallelKernel``), whichever thread calls it.
"""

from __future__ import annotations

import os
import time
from contextlib import contextmanager



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

    def __init__(self, n_items, max_seconds, workers, desc, max_slice=None, first=None):
        import threading
        self.n_items = n_items
        self.max_seconds = max_seconds
        self.workers = max(1, workers)
        self.desc = desc
        self.max_slice = max_slice
        self.lock = threading.Lock()
        self.cancel = threading.Event()
        self.t0 = time.perf_counter()
        self.done = 0
        self.size = _FIRST_SLICE if first is None else first
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
    """The numba threading layer in use (``'omp'``, ``'tbb'`` or ``'workqueue'``; ``'none'``
    with ``NUMBA_DISABLE_JIT=1``, where kernels run as plain Python and no layer starts).

    numba picks it when the first parallel kernel runs; this runs a tiny one if none has.
    """
    global _LAYER
    if _LAYER is None:
        import numba
        if numba.config.DISABLE_JIT:
            return "none"
        try:
            _LAYER = numba.threading_layer()
        except ValueError:
            _parallel_probe()(4)
            _LAYER = numba.threading_layer()
    return _LAYER


def _parallel_probe():
    """A trivial parallel loop, compiled on first use: running it makes numba choose its
    threading layer."""
    from numba import prange

    from circuits._jit import njit

    @njit(cache=True, parallel=True)
    def probe(n):
        acc = 0
        for i in prange(n):
            acc += i
        return acc
    return probe


class _NoGuard:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


_NO_GUARD = _NoGuard()


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
