"""The Dask backend of :func:`circuits.utils.parallel.run_chunks` (optional extra ``distributed``).

Every chunk is its own task with its own key and exactly one future; only a finished chunk's own
result reaches ``combine``, and a lost scheduler, a cancelled chunk or no worker within
``timeout`` seconds raises :class:`~circuits.utils.errors.ClusterLostError` (never a partial
result).  See :mod:`circuits.utils.parallel` for the numba-thread plan and failure handling.
"""

from __future__ import annotations

import time
import uuid
from concurrent.futures import CancelledError

from circuits.utils.errors import ClusterLostError
from circuits.utils._executor import (_default_chunk_size, chunk_bounds, require_distributed,
                                      usable_cpus)
from circuits.utils.progress import progress_bar
from circuits.utils.slicing import _numba_threads

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
        if getattr(client, "status", "running") != "running":
            raise _SchedulerGone from None       # not a worker: the scheduler is gone
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
    with _numba_threads(threads):     # parallel kernels guard their own launches
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


class _SchedulerGone(Exception):
    """The client lost its scheduler while the run was being set up."""


def _setup_lost(client, exc, n_items) -> ClusterLostError:
    address = getattr(getattr(client, "scheduler", None), "address", None) or "the scheduler"
    why = "" if isinstance(exc, _SchedulerGone) else f": {type(exc).__name__}: {exc}"
    return ClusterLostError(
        f"lost the Dask scheduler at {address} before the run over {n_items:,} items started "
        f"(client status {getattr(client, 'status', 'unknown')!r}{why}); no partial result is "
        f"returned.  Restart the cluster (or pass another client=) and run again",
        done=0, total=0)


def _run_dask(fn, n_items, combine, initial, client, chunk_size, progress, desc, retries,
              numba_threads, timeout):
    require_distributed()
    client, owned = _as_client(client)
    try:
        # issue 25: a scheduler killed just before or as the run starts made the set-up calls
        # raise CommClosedError/OSError after Dask's connect timeout (30 s by default), once
        # for the probe and again for its fallback; now one ClusterLostError, at once when the
        # client already knows, else after that one timeout
        try:
            if getattr(client, "status", "running") != "running":
                raise _SchedulerGone
            if numba_threads is None:
                plan, total = {"default": None}, max(1, sum(client.nthreads().values()))
            else:
                plan, total = _dask_thread_plan(client, numba_threads)
        except (OSError, TimeoutError, _SchedulerGone) as exc:
            raise _setup_lost(client, exc, n_items) from None
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
            # not when the scheduler is gone: cancel would wait Dask's connect timeout (30 s by
            # default) to reach it before the ClusterLostError could be reported
            if getattr(client, "status", "running") == "running":
                try:
                    client.cancel([f for f in futures if not f.done()] + extra)
                except Exception:  # pragma: no cover - lost meanwhile: nothing to cancel
                    pass
    finally:
        if owned:
            client.close()


def _cancelled(client, fut, status, address) -> str:
    """What to say about a chunk that ended cancelled (or whose status is ``status`` but whose
    result turned out cancelled: the future was cancelled between the status check and
    ``.result()``)."""
    state = getattr(client, "status", "unknown")
    if state != "running":
        return (f"lost the Dask scheduler at {address} (client status {state!r}): chunk "
                f"{fut.key} ended {status!r}, then cancelled")
    return (f"chunk {fut.key} was cancelled on the Dask cluster at {address} (status {status!r}; "
            f"cancelled by the scheduler or another client)")


#: Seconds one finished chunk's result may take to arrive before the health checks run again.
_GATHER_SECONDS = 10.0


def _fold_dask(client, futures, combine, initial, progress, desc, timeout):
    """Fold finished chunks as they complete; never fold anything but a chunk's own result.

    A future that ends cancelled or lost (the scheduler went away, or someone cancelled the
    run) raises :class:`ClusterLostError` naming what was lost and how far the run got; so does
    a run that has had no worker, or no scheduler connection, for ``timeout`` seconds.  A task
    that raised re-raises its own exception (after Dask's retries).
    """
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
                    except CancelledError:           # cancelled between the check and here
                        raise lost(_cancelled(client, fut, "finished", address)) from None
                    except (OSError, TimeoutError):  # CommClosedError, or still recomputing
                        ac.add(fut)                  # wait for it again (timeout below)
                        continue
                elif status == "error":
                    try:
                        fut.result()        # the task's own exception, after its retries
                    except CancelledError:  # cancelled after the status check
                        raise lost(_cancelled(client, fut, "error", address)) from None
                    raise lost(f"chunk {fut.key} failed without an exception")  # pragma: no cover
                elif status in ("lost", "pending"):
                    # its result was lost with a worker after it finished: the scheduler
                    # recomputes it once a worker is there (else the timeout below fires)
                    ac.add(fut)
                    continue
                else:
                    raise lost(_cancelled(client, fut, status, address))
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
