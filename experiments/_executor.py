"""Where the cells of a table run: the ``--executor`` choice of ``depthsep separate`` (E23 and,
with ``--curriculum``, E25), shared by both commands."""

from __future__ import annotations

import contextlib


def cell_executor(choice: "str | None"):
    """The executor for ``--executor`` ``choice``: "threads" (the string, a thread pool chosen by
    the table), a spawn-context process pool with one worker per usable CPU for "processes", or
    None (cells run in this thread)."""
    if choice == "threads":
        return "threads"
    if choice == "processes":
        import concurrent.futures as cf
        import multiprocessing as mp

        from circuits.utils.parallel import usable_cpus

        # spawn, not fork: this process already runs numba's worker threads
        return cf.ProcessPoolExecutor(max_workers=usable_cpus(),
                                      mp_context=mp.get_context("spawn"))
    return None


@contextlib.contextmanager
def running_cells(choice: "str | None"):
    """:func:`cell_executor` for ``choice`` as a context: a process pool is shut down when the
    block ends, however it ends."""
    executor = cell_executor(choice)
    try:
        yield executor
    finally:
        if executor is not None and not isinstance(executor, str):
            executor.shutdown()
