"""Ctrl-C during a long run: the first keeps the work, the second exits at once.

:func:`second_interrupt_exits` turns the first SIGINT into the usual ``KeyboardInterrupt`` (the
run stops, saves what finished and skips slow extras such as figures) and makes any further
SIGINT end the process at once with status 130, whatever it is doing (a figure under load, a
kernel that does not check for signals).  Results are written atomically
(:mod:`circuits.utils.files`), so an exit at any moment leaves no half-written file.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading

__all__ = ["second_interrupt_exits"]


@contextlib.contextmanager
def second_interrupt_exits(message: str = "interrupted again: exiting now"):
    """Within the block, a second SIGINT exits the process at once (status 130).

    Nothing is changed outside the main thread, or when SIGINT is ignored (a background job
    keeps ignoring it) or handled by someone else: only Python's default handler is replaced,
    and it is put back at the end of the block.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGINT)
    if previous is not signal.default_int_handler:
        yield
        return
    seen = []

    def handler(signum, frame):
        if seen:
            try:
                os.write(sys.stderr.fileno(), (message + "\n").encode())
            except (OSError, ValueError):
                pass
            os._exit(130)
        seen.append(signum)
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
