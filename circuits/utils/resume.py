"""Resume files: what a long experiment keeps of its finished cells, and the lock on its output.

An experiment that runs cell after cell keeps every finished cell in a *resume file* in its
output directory (``separate``: ``cells.jsonl``, one JSON line per cell; ``separate-sampled``:
``sampled.json``, one document rewritten atomically).  Running the same command again continues
where the last run stopped.  This module is the one way those files are read and written:

* **regular files only**: the file is opened with ``O_NOFOLLOW | O_NONBLOCK`` and checked with
  ``fstat``; a symbolic link, FIFO, device or directory in its place is never read or appended
  to (a link planted in the output directory cannot redirect the appender outside it);
* **size-capped** (:data:`MAX_RESUME_BYTES`) before reading, and every line/document parsed by
  :func:`circuits.utils.documents.parse_document` (bounded depth and value count);
* **each row checked against its key**: the row's own fields must name the same cell as its key,
  and a SHA-256 checksum of the key, the settings that produced the row and the row itself
  (:func:`row_checksum`) must match.  The checksum detects a changed value, a truncated or
  corrupted row and rows swapped between keys; it is not a signature (someone who can write
  the file can also recompute it);
* **never silent loss**: a file that cannot be used as a whole (not a regular file, too large,
  not UTF-8 JSON) or that holds rejected rows is *moved aside* to ``NAME.unusable-STAMP``
  (:func:`move_aside`) with a message naming both paths, and only then is a fresh file started;
* :func:`lock_output_dir` holds an exclusive lock on the *resolved real path* of the output
  directory for the whole run, however the directory was named (a relative path, a symbolic
  link, the default), so two runs on one directory cannot interleave their cells.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat as _stat
import sys
import threading
import time
from pathlib import Path

from circuits.utils.errors import DepthsepError

__all__ = ["MAX_RESUME_BYTES", "UnusableResumeFile", "row_checksum", "read_resume_file",
           "move_aside", "load_jsonl", "append_jsonl", "lock_output_dir", "LOCK_NAME"]

#: Largest resume file read (bytes); a full ``separate --full`` table is about 1 MB.
MAX_RESUME_BYTES = 1 << 26
#: Largest JSON values per line of a JSON-lines resume file (a row has a few dozen).
MAX_LINE_VALUES = 4096
#: Name of the lock file in a locked output directory.
LOCK_NAME = ".depthsep.lock"


class UnusableResumeFile(DepthsepError):
    """A resume file that cannot be used as a whole (the message says why)."""


def row_checksum(key, row, settings=None) -> str:
    """SHA-256 (hex) of the canonical JSON of ``[key, settings, row]``.

    ``row`` is taken in its JSON form (:func:`circuits.utils.files.to_jsonable`), so the
    checksum of a row as written equals that of the row read back (floats round-trip exactly).

    >>> row_checksum("k", {"a": 1}) == row_checksum("k", {"a": 1.0})
    False
    >>> len(row_checksum("k", {"a": 1}, {"lr": 0.1}))
    64
    """
    from circuits.utils.files import to_jsonable

    text = json.dumps([to_jsonable(key), to_jsonable(settings), to_jsonable(row)],
                      sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def read_resume_file(path, *, max_bytes: int = MAX_RESUME_BYTES) -> "bytes | None":
    """The bytes of the resume file ``path``, or ``None`` when nothing is there.

    Raises :class:`UnusableResumeFile` for a symbolic link (never followed), anything but a
    regular file, a file above ``max_bytes``, or one that cannot be read.
    """
    from circuits.utils.documents import read_regular_file

    path = Path(path)
    if not os.path.lexists(path):
        return None
    try:
        return read_regular_file(path, error=UnusableResumeFile, max_bytes=max_bytes,
                                 follow_symlinks=False)
    except FileNotFoundError:                       # removed meanwhile
        return None


def move_aside(path, reason: str, *, stream=None) -> Path:
    """Rename ``path`` (a file, link, FIFO, ... : the entry itself, never its target) to
    ``NAME.unusable-YYYYmmddTHHMMSS[-k]`` next to it and say so on ``stream`` (stderr).
    Returns the new path."""
    path = Path(path)
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    for k in range(1000):
        dest = path.with_name(f"{path.name}.unusable-{stamp}" + (f"-{k}" if k else ""))
        if not os.path.lexists(dest):
            break
    os.rename(path, dest)
    print(f"warning: {path}: {reason}; moved aside to {dest} (nothing in it was used; move it "
          f"back once repaired)", file=sys.stderr if stream is None else stream, flush=True)
    return dest


def load_jsonl(path, *, check_row=None, max_bytes: int = MAX_RESUME_BYTES) -> dict:
    """The finished rows ``{key: row}`` of the JSON-lines resume file ``path`` (``{}`` if none).

    Every line is ``{"key": str, "row": {...}, "sum": row_checksum(key, row)}``.  A line is used
    only when it parses, its checksum matches (a line of an earlier depthsep, without ``"sum"``,
    is checked against its key only, with a note), and ``check_row(key, row)`` (if given) returns
    ``None``; otherwise it returns the reason.  The last line may be cut short by a kill: it is
    dropped quietly (that cell is recomputed).  Any other rejected line, or an unusable file,
    moves the file aside (:func:`move_aside`); the good lines are written back atomically, so
    the file again holds only verified rows and nothing was dropped without a message.
    """
    from circuits.utils.documents import parse_document
    from circuits.utils.files import write_bytes_atomic

    if path is None:
        return {}
    path = Path(path)
    try:
        raw = read_resume_file(path, max_bytes=max_bytes)
    except UnusableResumeFile as exc:
        move_aside(path, str(exc).removeprefix(f"{path}: "))
        return {}
    if raw is None:
        return {}
    lines = raw.split(b"\n")
    cut = lines[-1] != b""                           # no newline at the end: a killed writer
    done, good, rejected, legacy = {}, [], [], []
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            rec = parse_document(line, error=UnusableResumeFile, max_depth=8,
                                 max_values=MAX_LINE_VALUES)
            why = _check_line(rec, check_row, legacy)
        except UnusableResumeFile as exc:
            why = str(exc)
        if why is None:
            if rec["key"] in done and done[rec["key"]] != rec["row"]:
                why = f"a second, different row for key {rec['key'][:80]}"
            else:
                done[rec["key"]] = rec["row"]
                good.append(line)
                continue
        if cut and i == len(lines) - 1 and line.startswith(b'{"key":'):
            continue                                 # the line a kill cut short: recomputed
        rejected.append(f"line {i + 1}: {why}")
    if legacy:
        print(f"note: {path}: {len(legacy)} line(s) written by an earlier depthsep without a "
              f"checksum were checked against their keys only", file=sys.stderr, flush=True)
    if rejected:
        aside = move_aside(path, f"{len(rejected)} line(s) failed their checks ({rejected[0]}"
                                 f"{'; ...' if len(rejected) > 1 else ''})")
        write_bytes_atomic(path, b"".join(x + b"\n" for x in good))
        print(f"  kept the {len(good)} verified line(s) in {path}; the rejected cells are "
              f"recomputed (the original is {aside})", file=sys.stderr, flush=True)
    return done


def _check_line(rec, check_row, legacy: list) -> "str | None":
    if not isinstance(rec, dict) or set(rec) not in ({"key", "row", "sum"}, {"key", "row"}):
        return "not an object with exactly the fields key, row, sum"
    key, row, total = rec["key"], rec["row"], rec.get("sum")
    if not isinstance(key, str) or not isinstance(row, dict):
        return "key must be a string and row an object"
    if total is None:
        legacy.append(key)            # written before checksums: checked against its key only
    elif total != row_checksum(key, row):
        return f"checksum mismatch for key {key[:80]} (the row was changed or belongs elsewhere)"
    return None if check_row is None else check_row(key, row)


def append_jsonl(path, key: str, row: dict) -> None:
    """Append one verified line ``{"key", "row", "sum"}`` to the resume file ``path``.

    The file is opened with ``O_NOFOLLOW`` (a symbolic link in its place is refused, never
    followed) and must be a regular file; a line cut by a kill gets its newline first.
    """
    from circuits.utils.files import to_jsonable

    row = to_jsonable(row)
    line = json.dumps({"key": key, "row": row, "sum": row_checksum(key, row)},
                      separators=(",", ":"), allow_nan=False).encode("utf-8") + b"\n"
    flags = (os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
             | getattr(os, "O_CLOEXEC", 0))
    try:
        fd = os.open(path, flags, 0o666)
    except OSError as exc:
        raise UnusableResumeFile(f"{path}: cannot append a finished cell ({exc.strerror or exc}"
                                 f"{'; it is a symbolic link' if os.path.islink(path) else ''})"
                                 ) from None
    try:
        if not _stat.S_ISREG(os.fstat(fd).st_mode):
            raise UnusableResumeFile(f"{path}: is not a regular file; finished cells are not "
                                     f"appended to it")
        end = os.lseek(fd, 0, os.SEEK_END)
        if end:
            os.lseek(fd, end - 1, os.SEEK_SET)
            if os.read(fd, 1) != b"\n":
                line = b"\n" + line                  # start on a fresh line after a cut one
            os.lseek(fd, 0, os.SEEK_END)
        os.write(fd, line)
        os.fsync(fd)
    finally:
        os.close(fd)


# ------------------------------------------------------------------------------- the lock
_held: dict = {}                                     # real path -> [fd, count]
_held_guard = threading.Lock()


@contextlib.contextmanager
def lock_output_dir(path, *, option: str = "--out"):
    """Hold an exclusive lock on the output directory ``path`` for the ``with`` block.

    The lock is a POSIX record lock on ``LOCK_NAME`` inside the directory's *resolved real
    path*, so every way of naming the directory (relative, through a symbolic link, the
    default) meets the same lock; the kernel drops it when the process ends, however it ends.
    Nested use in one process is allowed (counted).  A second process is refused at once with
    a :class:`DepthsepError` naming ``option``.  Without ``fcntl`` (not POSIX) nothing is locked.
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield Path(path)
        return
    real = os.path.realpath(path)
    os.makedirs(real, exist_ok=True)
    with _held_guard:
        entry = _held.get(real)
        if entry is not None:
            entry[1] += 1
        else:
            lock = os.path.join(real, LOCK_NAME)
            flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(
                os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)
            try:
                fd = os.open(lock, flags, 0o644)
            except OSError as exc:
                raise DepthsepError(f"{option} {path}: cannot create the lock file {lock} "
                                    f"({exc.strerror or exc}); remove whatever is in its place"
                                    ) from None
            try:
                if not _stat.S_ISREG(os.fstat(fd).st_mode):
                    raise DepthsepError(f"{option} {path}: {lock} is not a regular file; remove it")
                fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                raise DepthsepError(
                    f"{option} {path}: another depthsep run is writing to this directory "
                    f"({real}); wait for it to finish or give another {option}") from None
            except BaseException:
                os.close(fd)
                raise
            _held[real] = [fd, 1]
    try:
        yield Path(path)
    finally:
        with _held_guard:
            entry = _held[real]
            entry[1] -= 1
            if entry[1] == 0:
                del _held[real]
                os.close(entry[0])                   # closing drops the record lock
