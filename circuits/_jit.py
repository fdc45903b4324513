"""The ``njit`` every kernel module uses, and where compiled kernels are cached (private).

Why not numba's own ``cache=True``: numba puts a function's cache next to its source
(``__pycache__`` of the installed package) whenever that directory is writable, and reads
``NUMBA_CACHE_DIR`` only when ``numba.core.config`` is first imported.  After a non-editable
install and a first run, those ``__pycache__`` folders survived ``pip install -e`` and shadowed
the editable packages as namespace packages.  Here every kernel's cache is found by
one locator, whatever was imported first:

* ``$NUMBA_CACHE_DIR`` when set (read from the environment when the kernel module is
  imported), else ``<depthsep cache>/numba``, where the depthsep cache
  is ``$DEPTHSEP_CACHE_DIR``, else ``$XDG_CACHE_HOME/depthsep``, else ``~/.cache/depthsep``
  (the root the compiled circuit kernels use too, ``kernels/``), with numba's per-source-folder
  subdirectories.  Nothing is ever written next to the installed modules.
* A cache directory that cannot be created or written, or that is not safe (below), turns
  caching off for the kernels concerned: they compile in each process and the import never
  fails (one warning says why).
* Safe means owned by this user and writable by nobody else (not by others, and not by a group
  other than the user's own): the cache holds machine code and pickles that are loaded and run.
  Entries are checked the same way before they are read.  The root above the per-source-folder
  directories may also be a shared sticky directory (``NUMBA_CACHE_DIR=/tmp``).
* A cache entry that cannot be read back (truncated, garbage, a pickle of the wrong shape, a
  directory or a foreign file in its place, an index pointing at a missing data file, ...) is
  removed and the kernel recompiled and saved again: damage costs one compile, never a failed
  run.  A save that fails (disk full, the directory made read-only meanwhile) only warns.

The decorator has numba's signature (``njit``, ``njit(sig)``, ``njit(**options)``,
``cache=True``); with ``NUMBA_DISABLE_JIT=1`` it returns the Python function, as numba does.

Parallel kernels from any thread.  numba's ``workqueue`` threading layer,
the one it falls back to when neither tbb nor an OpenMP runtime is installed (and the one
``NUMBA_THREADING_LAYER=workqueue`` or ``forksafe`` on Linux select), aborts the whole process
("Concurrent access has been detected", exit 134) when two Python threads launch
``parallel=True`` kernels at the same time, e.g. a user calling ``count_ones`` from a thread
pool.  ``njit(parallel=True)`` therefore returns a :class:`ParallelKernel`: the compiled kernel
behind one process-wide lock that every launch takes until numba reports a thread-safe layer
(``omp`` or ``tbb``; the layer is known after the first launch), after which launches go
straight to the kernel.  The other option, running a serial twin of the kernel in a thread that
finds the lock taken, was measured slower on two cores (``benchmarks/bench_workqueue.py``; the
twin also costs a second compile) and is not used.
"""

from __future__ import annotations

import inspect
import os
import shutil
import stat
import tempfile
import threading
import warnings
from pathlib import Path
from typing import Any

import numba
import numba.core.dispatcher
from numba.core import caching as _nc

__all__ = ["njit", "cache_root", "numba_cache_root", "safe_directory", "safe_file",
           "cache_path_of", "CacheWarning", "ParallelKernel", "launch_guard_active", "compiled_once"]


class CacheWarning(RuntimeWarning):
    """A kernel cache could not be used (compiled kernels are then not kept between runs)."""


_WARNED: set = set()
_WARN_LOCK = threading.Lock()


def _warn_once(key, message: str) -> None:
    with _WARN_LOCK:
        if key in _WARNED:
            return
        _WARNED.add(key)
    warnings.warn(message, CacheWarning, stacklevel=3)


def cache_root() -> Path:
    """The depthsep cache: ``$DEPTHSEP_CACHE_DIR``, else ``$XDG_CACHE_HOME/depthsep``, else
    ``~/.cache/depthsep`` (read from the environment at each call)."""
    root = os.environ.get("DEPTHSEP_CACHE_DIR")
    if not root:
        xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        root = os.path.join(xdg, "depthsep")
    return Path(root)


def numba_cache_root() -> Path:
    """Where numba's cache files of depthsep's kernels go: ``$NUMBA_CACHE_DIR`` when set, else
    ``cache_root() / "numba"``."""
    # the environment, not numba.config.CACHE_DIR: numba re-reads its config from the
    # environment at each compile, so the attribute may be stale
    user = os.environ.get("NUMBA_CACHE_DIR", "")
    return Path(user) if user else cache_root() / "numba"


def _unsafe_reason(st, what: str, path) -> "str | None":
    """Why a directory or file with stat ``st`` must not be trusted (None: it may)."""
    uid = os.geteuid()
    if st.st_uid != uid:
        return f"{what} {path} is owned by uid {st.st_uid}, not by this user (uid {uid})"
    if st.st_mode & stat.S_IWOTH:
        return f"{what} {path} is writable by every user (mode {stat.filemode(st.st_mode)})"
    if st.st_mode & stat.S_IWGRP and st.st_gid != os.getgid():
        return (f"{what} {path} is writable by group {st.st_gid}, which is not this user's own "
                f"group (mode {stat.filemode(st.st_mode)})")
    return None


def safe_directory(path, *, create: bool = True) -> "str | None":
    """Make sure ``path`` is a directory this user may cache code in; returns None if so, else
    the reason it may not (created with mode 0700 if absent and ``create``).

    It must be a directory (a symlink is followed), owned by this user, writable by nobody else
    (see the module docstring) and writable by this process.
    """
    path = Path(path)
    try:
        if create and not path.exists():
            path.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = path.stat()
    except OSError as exc:
        return f"cannot create or read the cache directory {path}: {exc.strerror or exc}"
    if not stat.S_ISDIR(st.st_mode):
        return f"the cache path {path} is not a directory"
    why = _unsafe_reason(st, "the cache directory", path)
    if why is not None:
        return why
    if not os.access(path, os.W_OK | os.X_OK):
        return f"the cache directory {path} is not writable"
    return None


def _sticky(path) -> bool:
    """An existing directory with the sticky bit (``/tmp``): others cannot rename or remove the
    entries we own in it, so it may hold our (checked) cache directory."""
    try:
        st = os.stat(path)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and bool(st.st_mode & stat.S_ISVTX)


def safe_file(path) -> "str | None":
    """None if ``path`` is a regular file of this user that nobody else may write (or absent),
    else the reason it must not be read."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"cannot stat {path}: {exc.strerror or exc}"
    if not stat.S_ISREG(st.st_mode):
        return f"{path} is not a regular file"
    return _unsafe_reason(st, "the cache entry", path)


def cache_path_of(py_file) -> Path:
    """The directory numba's cache files of the functions defined in ``py_file`` go to."""
    return numba_cache_root() / _nc._CacheLocator.get_suitable_cache_subpath(str(py_file))


# --- numba's cache, located and guarded ---------------------------------------------------------

_Base: Any = getattr(_nc, "UserProvidedCacheLocator", None) or _nc._UserProvidedCacheLocator
_ImplBase: Any = _nc.CompileResultCacheImpl


class _Locator(_Base):
    """numba's user-provided-directory locator, on :func:`numba_cache_root` (read when the
    kernel is decorated), for any source file; refuses unsafe directories."""

    def __init__(self, py_func, py_file):
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        self._cache_path = str(cache_path_of(py_file))

    def ensure_cache_path(self):
        path = Path(self._cache_path)
        why = None if _sticky(path.parent) else safe_directory(path.parent)
        if why is None:                      # the root (may be a sticky shared one, as /tmp),
            why = safe_directory(path)       # then the per-source-folder directory
        if why is not None:
            raise _UnsafeCache(why)
        tempfile.TemporaryFile(dir=path).close()

    @classmethod
    def from_function(cls, py_func, py_file):
        if not os.path.exists(py_file):
            return None
        self = cls(py_func, py_file)
        try:
            self.ensure_cache_path()
        except _UnsafeCache as exc:
            _warn_once(self._cache_path, f"depthsep: not caching compiled kernels: {exc}; set "
                                         f"DEPTHSEP_CACHE_DIR (or NUMBA_CACHE_DIR) to a private "
                                         f"directory")
            return None
        except OSError as exc:
            _warn_once(self._cache_path, f"depthsep: not caching compiled kernels: the cache "
                                         f"directory {self._cache_path} is not usable ({exc})")
            return None
        return self


class _UnsafeCache(Exception):
    """A cache directory or entry that must not be used (see :func:`safe_directory`).  Not an
    ``OSError``: numba's loader skips an ``OSError`` on a data file without repairing it."""


class _Impl(_ImplBase):
    _locator_classes = [_Locator]


class _CacheFile(_nc.IndexDataCacheFile):
    """numba's index + data files, each checked (regular, ours, writable by nobody else)
    before it is read."""

    def _check(self, path):
        why = safe_file(path)
        if why is not None:
            raise _UnsafeCache(why)

    def _load_index(self):
        self._check(self._index_path)
        return super()._load_index()

    def _load_data(self, name):
        self._check(self._data_path(name))
        return super()._load_data(name)


class _Cache(_nc.FunctionCache):
    """numba's per-function cache on :class:`_Locator`; a damaged or foreign entry is removed
    (and the kernel recompiled), a failed save only warns."""

    _impl_class = _Impl

    def __init__(self, py_func):
        super().__init__(py_func)
        self._cache_file = _CacheFile(self._cache_path, self._impl.filename_base,
                                      self._impl.locator.get_source_stamp())

    def load_overload(self, sig, target_context):
        try:
            return super().load_overload(sig, target_context)
        except Exception as exc:          # any damage: drop this function's entries, recompile
            self._discard()
            _warn_once(("load", self._cache_path, self._impl.filename_base),
                       f"depthsep: a damaged or foreign compiled-kernel cache entry "
                       f"({self._impl.filename_base} in {self._cache_path}: "
                       f"{type(exc).__name__}: {exc}) was removed; the kernel is recompiled")
            return None

    def save_overload(self, sig, data):
        try:
            super().save_overload(sig, data)
        except Exception as exc:
            _warn_once(("save", self._cache_path),
                       f"depthsep: could not save a compiled kernel in {self._cache_path} "
                       f"({type(exc).__name__}: {exc}); it will be compiled again next run")

    def _discard(self):
        """Remove this function's index and data files (whatever they are)."""
        base = self._impl.filename_base
        try:
            entries = list(os.scandir(self._cache_path))
        except OSError:
            return
        for entry in entries:
            if not (entry.name == base + ".nbi" or
                    (entry.name.startswith(base + ".") and entry.name.endswith(".nbc"))):
                continue
            try:
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.path)
                else:
                    os.unlink(entry.path)
            except OSError:
                pass


def _install_cache(disp) -> None:
    try:
        disp._cache = _Cache(disp.py_func)
    except RuntimeError:                  # no usable directory: compile in each process
        pass


# --- parallel kernels: one launch at a time unless the threading layer is thread-safe ----------

#: numba's threading layers that allow concurrent launches from several Python threads
THREAD_SAFE_LAYERS = frozenset({"omp", "tbb"})
_LAUNCH_LOCK = threading.Lock()
_LAYER_SAFE: "list[bool | None]" = [None]        # None: no parallel launch yet in this process


def _layer_is_safe() -> "bool | None":
    """True/False once numba has started a threading layer (thread-safe or not), else None."""
    if _LAYER_SAFE[0] is None:
        try:
            layer = numba.threading_layer()
        except ValueError:                # no parallel kernel has run yet
            return None
        _LAYER_SAFE[0] = layer in THREAD_SAFE_LAYERS
    return _LAYER_SAFE[0]


def launch_guard_active() -> bool:
    """Whether parallel kernel launches are serialised in this process (the layer is not known
    to be thread-safe: ``workqueue``, or no parallel kernel has run yet)."""
    return _layer_is_safe() is not True


class ParallelKernel:
    """A ``parallel=True`` kernel that any number of Python threads may call at once.

    Calls go to the numba dispatcher (attribute ``dispatcher``; every other attribute, e.g.
    ``py_func`` or ``signatures``, is the dispatcher's) under a process-wide lock while the
    threading layer is not known to be thread-safe (module docstring).  Only Python code may
    call it (a jitted caller would need the dispatcher itself).
    """

    def __init__(self, dispatcher):
        self.dispatcher = dispatcher
        self.__wrapped__ = dispatcher
        for attr in ("__module__", "__name__", "__qualname__", "__doc__"):
            setattr(self, attr, getattr(dispatcher.py_func, attr, None))

    def __call__(self, *args, **kwargs):
        if _LAYER_SAFE[0]:
            return self.dispatcher(*args, **kwargs)
        with _LAUNCH_LOCK:
            if _layer_is_safe():
                pass                      # learnt meanwhile (another thread's first launch)
            return self.dispatcher(*args, **kwargs)

    def __getattr__(self, name):
        if name == "dispatcher":          # not set yet (unpickling): no recursion
            raise AttributeError(name)
        return getattr(self.dispatcher, name)

    def __reduce__(self):                 # by reference, as numba pickles its dispatchers
        return _kernel_by_name, (self.__module__, self.__qualname__)

    def __repr__(self):
        return f"ParallelKernel({self.dispatcher!r})"


def _kernel_by_name(module: str, qualname: str):
    import importlib
    obj: Any = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def njit(*args, cache: bool = False, **options):
    """``numba.njit`` with depthsep's cache (module docstring) instead of numba's for
    ``cache=True``.  Same forms: ``@njit``, ``@njit(**options)``, ``@njit(sig, **options)``."""
    if len(args) == 1 and inspect.isfunction(args[0]):
        return njit(cache=cache, **options)(args[0])
    sigs = args[0] if args else None
    if sigs is not None and not isinstance(sigs, list):
        sigs = [sigs]

    def wrap(fn):
        disp = numba.njit(**options)(fn)
        if not isinstance(disp, numba.core.dispatcher.Dispatcher):
            return disp                   # NUMBA_DISABLE_JIT: the Python function
        if cache:
            _install_cache(disp)
        if sigs is not None:
            from numba.core import typeinfer
            with typeinfer.register_dispatcher(disp):
                for sig in sigs:
                    disp.compile(sig)
                disp.disable_compile()
        return ParallelKernel(disp) if options.get("parallel") else disp

    return wrap


def compiled_once(dispatcher, signature, lock: threading.Lock):
    """``dispatcher`` compiled for ``signature`` (from numba's cache after the first time) and
    closed to other signatures, so a call with other argument types fails instead of compiling
    again; the dispatcher itself with the JIT off.  Thread-safe: ``lock`` guards the compile."""
    if not numba.config.DISABLE_JIT and not dispatcher.signatures:
        with lock:
            if not dispatcher.signatures:
                dispatcher.compile(signature)
                dispatcher.disable_compile()
    return dispatcher
