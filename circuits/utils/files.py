"""Result files: JSON only (never pickle), written atomically; PNG figures likewise.

:func:`write_json_atomic` writes to a temporary file in the target directory and renames it
into place with ``os.replace``, so an interrupted run never leaves a half-written file.
:func:`write_bytes_atomic` does the same for binary outputs such as PNG figures.

Results get the permissions of any other new file (``0666 & ~umask``, so 0644 under the usual
umask 022; an existing file keeps its mode).  The temporary file is ``.NAME.PID-XXXXXXXX.tmp``;
a process killed between creating and renaming it (SIGKILL, power loss) leaves it behind, and
the next atomic write to the same directory removes such leftovers: those whose writer process
is gone, and any of our temporary files older than a day.  A concurrent writer's temporary file
(its process is alive) is never touched.
"""

from __future__ import annotations

import json
import math
import os
import re
import tempfile
import time
from pathlib import Path

import numpy as np

__all__ = ["write_json_atomic", "write_bytes_atomic", "to_jsonable", "read_json", "savefig_atomic",
           "clean_stale_temp_files"]


#: Element types a list may hold to be copied as it is (checked at C speed with ``map(type, ...)``).
_PLAIN = frozenset({int, bool, str, type(None)})


def to_jsonable(obj):
    """Convert numpy scalars/arrays, tuples, Paths and dataclass-like objects to JSON types.

    Non-finite floats become the strings "inf", "-inf", "nan" (JSON has no such numbers).

    >>> to_jsonable({"a": np.int64(3), "b": np.arange(2), "c": float("inf")})
    {'a': 3, 'b': [0, 1], 'c': 'inf'}
    """
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        if set(map(type, obj)) <= _PLAIN:                # a circuit's rows: millions of ints
            return list(obj)
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        if obj.dtype.kind in "biu":
            return obj.tolist()
        return to_jsonable(obj.tolist())
    if isinstance(obj, (np.bool_, bool)):
        return bool(obj)
    if isinstance(obj, (np.integer, int)):
        return int(obj)
    if isinstance(obj, (np.floating, float)):
        f = float(obj)
        if math.isnan(f):
            return "nan"
        if math.isinf(f):
            return "inf" if f > 0 else "-inf"
        return f
    if isinstance(obj, Path):
        return str(obj)
    if obj is None or isinstance(obj, str):
        return obj
    to_dict = getattr(obj, "to_dict", None)
    if callable(to_dict):
        return to_jsonable(to_dict())
    raise TypeError(f"cannot convert {type(obj).__name__} to JSON; give it a to_dict() method")


#: Our temporary files: ``.NAME.PID-XXXXXXXX.tmp`` (``tempfile.mkstemp`` adds the 8 characters).
_TMP_RE = re.compile(r"^\..+\.(\d+)-[A-Za-z0-9_]{8}\.tmp$")
#: Temporary files of ours older than this are stale whoever wrote them (seconds).
_STALE_SECONDS = 3600.0


def _umask() -> int:
    """The process umask, read without changing it where the OS allows (Linux /proc).

    ``/proc/self/status`` describes the *calling thread*; the main thread's view (the
    process's, unless a thread changed its own) comes from ``/proc/<pid>/status``.
    """
    try:
        with open(f"/proc/{os.getpid()}/status") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)   # pragma: no cover - not Linux: the classic two-call dance
    os.umask(mask)
    return mask


def clean_stale_temp_files(directory, *, now: "float | None" = None) -> list:
    """Remove our leftover temporary files in ``directory``; returns the paths removed.

    A file is removed if it matches ``.NAME.PID-XXXXXXXX.tmp`` and was last modified more than
    ``_STALE_SECONDS`` (an hour) ago: by age only.  Whether process ``PID`` is alive says nothing
    (a writer in another PID namespace, a container or another machine sharing the directory,
    has a PID this process cannot see), so a fresh temp file is always kept.  Errors (a file
    removed meanwhile, no permission) are ignored.
    """
    now = time.time() if now is None else now
    removed = []
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return removed
    for entry in entries:
        m = _TMP_RE.match(entry.name)
        if m is None:
            continue
        try:
            if not entry.is_file(follow_symlinks=False):
                continue
            age = now - entry.stat(follow_symlinks=False).st_mtime
            if age > _STALE_SECONDS:
                os.unlink(entry.path)
                removed.append(Path(entry.path))
        except OSError:
            continue
    return removed


def write_bytes_atomic(path, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically (temp file in the same directory + os.replace).

    The file gets mode ``0666 & ~umask`` (an existing file keeps its mode); leftovers of
    killed writers in the directory are removed first (see :func:`clean_stale_temp_files`).
    """
    path = Path(path)
    if path.is_dir() or str(path).endswith(("/", os.sep)):
        from circuits.utils.errors import InvalidArgumentError

        raise InvalidArgumentError(f"path {str(path)!r} is a directory; give the path of a file "
                                   f"inside it (e.g. {str(path.joinpath('result.json'))!r})")
    path.parent.mkdir(parents=True, exist_ok=True)
    clean_stale_temp_files(path.parent)
    try:
        mode = path.stat().st_mode & 0o7777
    except OSError:
        mode = 0o666 & ~_umask()
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}-", suffix=".tmp",
                               dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fchmod(fh.fileno(), mode)
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return path


def write_json_atomic(path, obj, *, indent: int = 2) -> Path:
    """Serialise ``obj`` (via :func:`to_jsonable`) and write it to ``path`` atomically."""
    text = json.dumps(to_jsonable(obj), indent=indent, sort_keys=False, allow_nan=False)
    return write_bytes_atomic(path, (text + "\n").encode("utf-8"))


def read_json(path, *, max_bytes: "int | None" = None):
    """Read a JSON file through the shared document loader (size, nesting and syntax checked;
    see :mod:`circuits.utils.documents`); errors are ``InvalidArgumentError`` (a ``ValueError``)
    naming the file."""
    from circuits.utils.documents import MAX_DOCUMENT_BYTES, read_document
    from circuits.utils.errors import InvalidArgumentError
    return read_document(path, error=InvalidArgumentError,
                         max_bytes=MAX_DOCUMENT_BYTES if max_bytes is None else max_bytes)


def savefig_atomic(fig, path, **kwargs) -> Path:
    """Save a matplotlib figure as PNG atomically."""
    import io as _io

    buf = _io.BytesIO()
    fig.savefig(buf, format="png", **kwargs)
    return write_bytes_atomic(path, buf.getvalue())


