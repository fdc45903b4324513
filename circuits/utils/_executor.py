"""The executor protocol under :mod:`circuits.utils.parallel` and its Dask backend
(:mod:`circuits.utils._dask`): chunk sizes and bounds, the count-and-first-index fold, the
usable CPUs and the optional-dependency check.  Both modules import it; neither imports the
other at import time.
"""

from __future__ import annotations

import os

from circuits.utils.errors import MissingDependencyError
from circuits.utils.slicing import _numba_threads
from circuits.utils.validation import check_int

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

_INSTALL_HINT = ("install it with  pip install -e '.[distributed]'  in the checkout (or  pip "
                 "install 'dask[distributed]'), or run locally by leaving client= unset")


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

class _ChunkCall:
    """Picklable ``(start, stop) -> fn(start, stop)`` run with a fixed numba thread count."""

    def __init__(self, fn, threads):
        self.fn = fn
        self.threads = threads

    def __call__(self, start, stop):
        with _numba_threads(self.threads):
            return self.fn(start, stop)
