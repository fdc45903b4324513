"""Compiling a circuit's kernel in a child process while the generic kernel serves (private).

``kernel="auto"`` on repeated counting calls of a circuit whose compiled kernel
(``circuits._bitsliced_codegen``) is not in the kernel cache: the kernel is compiled by a
separate Python process, so the calling process keeps running the generic depth-2 (or the
interpreted) kernel meanwhile.  A thread would not do: numba's compiler holds the GIL, and the
calls made meanwhile ran 3x slower (BENCHMARKS.md, "Public counting path").  The child writes
the generated source and numba's cache files the way a foreground compile does (both
atomically: ``write_bytes_atomic``, and numba's own temporary file and ``os.replace``), so a
reader never sees a partial file; once it has exited successfully, the next call loads the
kernel from the cache (about 20 ms) and runs it.

When (:func:`child_due`, from the third counting call, ``circuits.dispatch._BACKGROUND_AFTER``):
the child takes one of the machine's cores for the compile, so the calls made meanwhile lose
about a 1/cores share of their speed.  In mode "auto" (the default) the child therefore starts
once the time the compiled kernel would have saved on the calls so far covers the compile
divided by the usable cores -- the rent-or-buy rule with the child's cost in place of the
compile's; "eager" starts it at once.  On the 2-core benchmark machine an eager child made the
calls meanwhile 1.5-2x slower for the 3-7 s of its compile (W1, W3), so over a thousand W1
calls it cost more than it saved (BENCHMARKS.md, "With an empty kernel cache").

Rules: at most one child per kernel key, ``MAX_CHILDREN`` at a time (a call that finds the
slot taken simply tries again on its next call) and ``MAX_STARTS`` per process (a child's
compile is wasted when its circuit is not counted again: a bound on that waste); children are reaped by :func:`status` (a
non-blocking ``waitpid``), and any still running when the process exits are terminated
(``atexit``), so none is left behind (a child stopped before numba has saved the kernel removes
the source it wrote, so that no later process takes the kernel for cached); a child that fails (any exit status but 0, or a kernel
that did not reach the cache directory) is recorded and never retried for that key: the
foreground rule then applies as without children.  Results never depend on the child: every
kernel is exact, and the compiled one is used only through the same cache a foreground compile
writes.  The child is a fresh interpreter (``subprocess``, not ``fork``): it works the same under
any ``multiprocessing`` start method and inherits no threads.
"""

from __future__ import annotations

import atexit
import os
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

__all__ = ["MAX_CHILDREN", "MAX_STARTS", "MODES", "available", "busy", "child_due", "mode_from_env", "mode_of",
           "running", "start", "status", "stop_all"]

MAX_CHILDREN = 1            # compiling children at a time (each holds one core for ~1-2 s)
MAX_STARTS = 8              # children one process starts in all: a sweep that counts many
                            # circuits a few times each wastes at most this many compiles
_STOPPED_WAIT_S = 5.0       # at exit: how long a terminated child may take before it is killed

_RUNNING: dict = {}         # key -> (Popen, path of the source handed over)
_DONE: dict = {}            # key -> "ready" or the reason it failed
_STARTED: list = [0]        # children started by this process
_LOCK = threading.Lock()
_ATEXIT: list = []


#: Modes of the child compile: never, when it pays over the cores, from the third call.
MODES = ("off", "auto", "eager")


def mode_from_env() -> str:
    """The mode ``DEPTHSEP_BACKGROUND_COMPILE`` names: "0" or "off" switch the child off,
    "eager" starts it from the third call, anything else (or unset) is "auto"."""
    value = os.environ.get("DEPTHSEP_BACKGROUND_COMPILE", "auto").strip().lower()
    return "off" if value in ("0", "off") else "eager" if value == "eager" else "auto"


def mode_of(value) -> str:
    """``value`` checked as a mode ("off", "auto", "eager"; True and False, as a test may set
    ``circuits.dispatch._BACKGROUND``, read as "eager" and "off")."""
    if value is True or value is False:
        return "eager" if value else "off"
    if value not in MODES:
        raise ValueError(f"circuits.dispatch._BACKGROUND must be one of {MODES}, got {value!r}")
    return value


def child_due(mode: str, uses: int, gain_ns: float, setup_ns: float) -> bool:
    """Whether the child compile is due at call ``uses`` (module docstring): always in "eager"
    mode; in "auto" once ``uses * gain_ns`` (the predicted time the compiled kernel would have
    saved so far) covers ``setup_ns`` (the compile) over the usable cores."""
    if mode == "eager":
        return True
    from circuits.utils._executor import usable_cpus

    return uses * gain_ns * max(1, usable_cpus()) >= setup_ns


def available() -> bool:
    """Whether a child process can be started (a Python executable is known)."""
    exe = sys.executable
    return bool(exe) and os.path.exists(exe)


def _reap_locked(key):
    entry = _RUNNING.get(key)
    if entry is None:
        return
    proc, path = entry
    rc = proc.poll()
    if rc is None:
        return
    del _RUNNING[key]
    _unlink(path)
    _DONE[key] = "ready" if rc == 0 else f"the compiling child exited with status {rc}"


def status(key: str) -> "str | None":
    """``None`` (no child for ``key``), ``"running"``, ``"ready"`` (the kernel and numba's
    cache files are in the cache directory) or the reason the child failed (a sentence)."""
    with _LOCK:
        _reap_locked(key)
        if key in _RUNNING:
            return "running"
        return _DONE.get(key)


def running() -> int:
    """Children still running (each reaped first if it has exited)."""
    with _LOCK:
        for key in list(_RUNNING):
            _reap_locked(key)
        return len(_RUNNING)


def busy() -> bool:
    """Whether a child may still be running (no lock, no reaping: for a kernel's thread count;
    :func:`status` reaps)."""
    return bool(_RUNNING)


def _unlink(path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


# The child imports this very package (a kernel compiled against other library code must never
# reach the cache under this key): its root goes first on sys.path unless it is there already
# (an installed package: nothing is moved before the standard library), and the child checks
# where ``circuits`` came from before it compiles anything.
_CHILD_CODE = (
    "import sys\n"
    "root = sys.argv[1]\n"
    "if root not in sys.path:\n"
    "    sys.path.insert(0, root)\n"
    "from circuits._background import _child_main\n"
    "sys.exit(_child_main(sys.argv[2:], root))\n")


def _package_root() -> str:
    return str(Path(__file__).resolve().parent.parent)


def start(key: str, src: str) -> bool:
    """Start a child that compiles the kernel ``src`` under ``key`` into the kernel cache.

    Returns False (nothing started) if a child for ``key`` exists or existed, if
    ``MAX_CHILDREN`` are running, if this process has started ``MAX_STARTS`` children, or if
    the child cannot be started."""
    with _LOCK:
        for k in list(_RUNNING):
            _reap_locked(k)
        if (key in _RUNNING or key in _DONE or len(_RUNNING) >= MAX_CHILDREN
                or _STARTED[0] >= MAX_STARTS or not available()):
            return False
        fd, path = tempfile.mkstemp(prefix="depthsep-kernel-", suffix=".py")    # mode 0600
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(src.encode())
            proc = subprocess.Popen(
                [sys.executable, "-c", _CHILD_CODE, _package_root(), key, path],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                close_fds=True)
        except Exception as exc:         # cannot start: the foreground rule applies
            _unlink(path)
            _DONE[key] = f"the compiling child could not start ({type(exc).__name__}: {exc})"
            return False
        _RUNNING[key] = (proc, path)
        _STARTED[0] += 1
        if not _ATEXIT:
            atexit.register(stop_all)
            _ATEXIT.append(True)
        return True


def stop_all() -> None:
    """Terminate the running children and reap them (at exit; also for tests)."""
    with _LOCK:
        entries = list(_RUNNING.items())
        _RUNNING.clear()
    for key, (proc, path) in entries:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(_STOPPED_WAIT_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        _unlink(path)
        with _LOCK:
            _DONE.setdefault(key, "stopped before it finished")


class _Stopped(BaseException):
    """SIGTERM in the child (the caller's :func:`stop_all`)."""


def _stop(signum, frame):
    raise _Stopped


def _child_main(argv, root=None) -> int:
    """The child: compile (or load) the kernel of the source at ``argv[1]`` under the key
    ``argv[0]`` and the compiled kernels' driver; 0 only if the kernel's numba cache files are
    in the kernel cache directory (a later load there is then a cache hit).  5: this module is
    not the caller's (``root``: the caller's package root).

    Stopped (SIGTERM, or Ctrl-C) before numba's cache files are written, the child removes the
    kernel source it wrote: a source without its compiled code would make a later process
    expect a cache load and compile in its first call instead."""
    key, path = argv
    if root is not None and _package_root() != str(Path(root).resolve()):
        _unlink(path)
        return 5
    try:
        src = Path(path).read_text()
    finally:
        _unlink(path)
    from circuits import _bitsliced_cache as _cache, _kernels_fused as _fused
    source = _cache.cache_dir() / f"_depthsep_fused_{key}.py"
    existed = os.path.lexists(source)

    previous = signal.signal(signal.SIGTERM, _stop)
    try:
        _cache.load(key, src)
        _fused.fused_block()
    except (_Stopped, KeyboardInterrupt):
        if not existed and not _cache.indexed(key):
            _unlink(source)
        os._exit(143)                    # the compiling thread may still run: no clean exit
    finally:
        signal.signal(signal.SIGTERM, previous)
    if _cache._TEMP_DIR:               # the cache directory was not usable: nothing to share
        return 3
    return 0 if _cache.indexed(key) else 4
