"""The one loader for every saved depthsep object (circuits, σ-networks, result records).

A saved object is a JSON *document*: a top-level object with a ``"format"`` string, an integer
``"version"`` and the fields of that format.  :func:`read_document` reads one from a file and
:func:`parse_document` from bytes; both refuse hostile or broken input with the caller's error
class (a :class:`~circuits.utils.errors.DepthsepError`), in this order, each step bounded:

1. **size** from ``stat`` before reading (O(1) memory), and a read capped at ``max_bytes + 1``
   (a file that grows, a FIFO or ``/dev/zero`` cannot outrun the check);
2. **UTF-8** text;
3. **structure** from one scan of the bytes, strings blanked, *before* any Python object is
   built: nesting depth at most ``max_depth`` (so no ``RecursionError``, however deep) and at
   most ``max_values`` JSON values (so the parse of an accepted file is bounded);
4. **JSON** syntax, without NaN/Infinity and with finite floats only;
5. **header** (:func:`check_header`): a JSON object, the exact ``format``, a ``version`` that
   is a JSON integer equal to the supported one (``true`` and ``1.0`` are refused), no unknown
   top-level fields.

The loaders then validate their own fields.  Nothing but the caller's error class (and
``FileNotFoundError`` for a missing path) leaves these functions: tests/test_documents.py fuzzes
both loaders with >= 10^4 mutated files each.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np

from circuits.utils.errors import DepthsepError

__all__ = ["read_document", "parse_document", "check_header", "read_regular_file",
           "MAX_DOCUMENT_BYTES", "MAX_DOCUMENT_DEPTH"]

#: Default size limit of a document file (bytes); loaders take ``max_bytes=``.
MAX_DOCUMENT_BYTES = 1 << 27
#: Default nesting limit (arrays/objects inside each other); our formats need at most 5.
MAX_DOCUMENT_DEPTH = 32
#: Bytes scanned per step of the structure check (bounds its working memory).
_SCAN_BLOCK = 1 << 20
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)


def _short(v, n: int = 60) -> str:
    text = repr(v)
    return text if len(text) <= n else text[: n - 3] + "..."


def read_regular_file(path, *, error=DepthsepError, max_bytes: int = MAX_DOCUMENT_BYTES,
                      follow_symlinks: bool = True) -> bytes:
    """The bytes of the regular file at ``path``, at most ``max_bytes`` of them.

    The one way every loader reads a file.  The path is opened non-blocking (a FIFO cannot
    block the open) and ``fstat`` of the opened descriptor decides: anything but a regular
    file (FIFO, socket, device such as ``/dev/zero`` behind a symlink, directory) is refused
    before a byte is read; so is a file larger than ``max_bytes``; the read itself is capped at
    ``max_bytes + 1`` (a file that grows while read cannot outrun the check).  With
    ``follow_symlinks=False`` the last component is opened with ``O_NOFOLLOW`` and a symbolic
    link is refused (resume files: a link planted in an output directory is never read).

    Raises ``error`` (message starting with the path) for every problem except a missing path,
    which raises ``FileNotFoundError``.
    """
    import os
    import stat as _stat
    path = Path(path)
    where = f"{path}: "
    try:
        flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
        if not follow_symlinks:
            flags |= getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise FileNotFoundError(f"no file at {path}") from None
    except IsADirectoryError:
        raise error(f"{where}is a directory, not a file; give the path of a file") from None
    except OSError as exc:
        if not follow_symlinks and os.path.islink(path):
            raise error(f"{where}is a symbolic link; this file is only read when it is a "
                        f"regular file (links are not followed)") from None
        raise error(f"{where}cannot be opened ({exc.strerror or exc})") from None
    try:
        st = os.fstat(fd)
        if _stat.S_ISDIR(st.st_mode):
            raise error(f"{where}is a directory, not a file; give the path of a file")
        if not _stat.S_ISREG(st.st_mode):
            raise error(f"{where}is not a regular file (a FIFO, socket or device); copy the "
                        f"content to a regular file first")
        if st.st_size > max_bytes:
            raise error(f"{where}file has {st.st_size:,} bytes, above max_bytes={max_bytes:,}; "
                        f"pass a larger max_bytes if the file is trusted")
        chunks, left = [], max_bytes + 1
        while left > 0:
            try:
                b = os.read(fd, min(left, 1 << 24))
            except OSError as exc:
                raise error(f"{where}cannot be read ({exc.strerror or exc})") from None
            if not b:
                break
            chunks.append(b)
            left -= len(b)
    finally:
        os.close(fd)
    raw = b"".join(chunks)
    if len(raw) > max_bytes:
        raise error(f"{where}more than max_bytes={max_bytes:,} bytes (the file grew while being "
                    f"read); pass a larger max_bytes if it is trusted")
    return raw


def read_document(path, *, error=DepthsepError, max_bytes: int = MAX_DOCUMENT_BYTES,
                  max_depth: int = MAX_DOCUMENT_DEPTH, max_values: "int | None" = None):
    """Read and parse the JSON document at ``path`` within the limits (see the module notes).

    Parameters
    ----------
    path : str or Path
    error : type
        The error class raised for every problem (e.g. ``InvalidCircuitError``); messages
        start with the path.
    max_bytes, max_depth, max_values : int
        Size, nesting and value-count limits (``max_values=None``: only the size bounds it).

    Returns
    -------
    The parsed JSON value (its header is checked by :func:`check_header`).

    Raises
    ------
    error
        Too large, not a regular file, not UTF-8, too deep, too many values, not JSON.
    FileNotFoundError
        If nothing exists at ``path``.
    """
    from circuits.utils.validation import check_int
    max_bytes = check_int(max_bytes, name="max_bytes", minimum=1)
    path = Path(path)
    where = f"{path}: "
    raw = read_regular_file(path, error=error, max_bytes=max_bytes)
    return parse_document(raw, where=where, error=error, max_depth=max_depth,
                          max_values=max_values)


def _structure(raw: bytes) -> "tuple[int, int]":
    """(maximum nesting depth, upper bound on the number of JSON values) of ``raw``.

    Strings are blanked first (a bracket or comma inside a string does not count).  The
    count bound is ``commas + opening brackets + 1``: every value but the first of a container
    follows a comma.  Works block by block, so the extra memory is O(_SCAN_BLOCK).
    """
    blanked = _STRING.sub(b'""', raw) if b'"' in raw else raw
    buf = np.frombuffer(blanked, dtype=np.uint8)
    depth = 0
    deepest = 0
    values = 1
    for s in range(0, buf.shape[0], _SCAN_BLOCK):
        b = buf[s:s + _SCAN_BLOCK]
        opens = (b == 0x5B) | (b == 0x7B)           # [ {
        closes = (b == 0x5D) | (b == 0x7D)          # ] }
        step = opens.astype(np.int32) - closes.astype(np.int32)
        run = np.cumsum(step, dtype=np.int64) + depth
        if run.shape[0]:
            deepest = max(deepest, int(run.max()))
            depth = int(run[-1])
        values += int(np.count_nonzero(b == 0x2C)) + int(np.count_nonzero(opens))
    return deepest, values


def parse_document(raw, *, where: str = "", error=DepthsepError,
                   max_depth: int = MAX_DOCUMENT_DEPTH, max_values: "int | None" = None):
    """Parse JSON ``raw`` (bytes or str) after the UTF-8, depth and value-count checks.

    >>> parse_document(b'{"a": [1, 2.5]}')
    {'a': [1, 2.5]}
    >>> parse_document(b"[" * 100 + b"]" * 100, where="x.json: ")
    Traceback (most recent call last):
    ...
    circuits.utils.errors.DepthsepError: x.json: JSON nested 100 deep, above max_depth=32; this is not a depthsep document
    """
    if isinstance(raw, str):
        raw = raw.encode("utf-8", errors="surrogatepass")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{where}not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    deepest, values = _structure(raw)
    if deepest > max_depth:
        raise error(f"{where}JSON nested {deepest} deep, above max_depth={max_depth}; this is not a "
                    f"depthsep document")
    if max_values is not None and values > max_values:
        raise error(f"{where}holds up to {values:,} JSON values, above the limit of "
                    f"{max_values:,} for this kind of document; raise the loader's size limits "
                    f"if the file is trusted")

    def _no_constants(name):
        raise ValueError(f"{name} is not allowed (JSON has no NaN/Infinity)")

    def _finite_float(token):
        value = float(token)
        if not math.isfinite(value):
            raise ValueError(f"number {token[:20]} overflows a float")
        return value

    try:
        return json.loads(text, parse_constant=_no_constants, parse_float=_finite_float)
    except json.JSONDecodeError as exc:
        raise error(f"{where}not valid JSON ({exc.msg} at line {exc.lineno}, column "
                    f"{exc.colno})") from None
    except RecursionError:  # pragma: no cover - the depth check above comes first
        raise error(f"{where}JSON nested too deeply") from None
    except ValueError as exc:  # NaN/Infinity, float overflow, int with too many digits
        raise error(f"{where}not valid JSON ({exc})") from None


def check_header(doc, *, format: str, version: int, where: str = "", error=DepthsepError,
                 required=(), optional=(), what: str = "document") -> dict:
    """Check a parsed document's header and top-level field names; return it.

    ``doc`` must be a JSON object whose ``"format"`` equals ``format`` and whose ``"version"``
    is a JSON integer (not a bool, not a float) equal to ``version``; every key must be
    ``"format"``, ``"version"``, in ``required`` (all present) or in ``optional``.

    >>> check_header({"format": "x", "version": 1, "a": 2}, format="x", version=1,
    ...              required=("a",))
    {'format': 'x', 'version': 1, 'a': 2}
    >>> check_header({"format": "x", "version": True}, format="x", version=1)
    Traceback (most recent call last):
    ...
    circuits.utils.errors.DepthsepError: 'version' must be an integer (this depthsep reads 1), got True
    """
    if not isinstance(doc, dict):
        raise error(f"{where}the {what} must be a JSON object, got {type(doc).__name__} "
                    f"{_short(doc)}")
    fmt = doc.get("format")
    if not isinstance(fmt, str) or fmt != format:
        raise error(f"{where}'format' must be {format!r}, got {_short(fmt)}; this is not a "
                    f"depthsep {what} file")
    v = doc.get("version")
    if type(v) is not int:
        raise error(f"{where}'version' must be an integer (this depthsep reads {version}), got "
                    f"{_short(v)}")
    if v != version:
        raise error(f"{where}unsupported version {v}; this depthsep reads version {version} "
                    f"(upgrade depthsep to read newer files)")
    for key in required:
        if key not in doc:
            raise error(f"{where}the {what} is missing the field {key!r}")
    known = {"format", "version", *required, *optional}
    extra = sorted(str(k) for k in doc if k not in known)
    if extra:
        shown = [k if len(k) <= 30 else k[:27] + "..." for k in extra[:5]]
        raise error(f"{where}the {what} has unknown field(s) {shown}; "
                    f"expected {sorted(known)}")
    return doc

