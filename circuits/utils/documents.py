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
                  max_depth: int = MAX_DOCUMENT_DEPTH, max_values: "int | None" = None,
                  arrays: bool = False):
    """Read and parse the JSON document at ``path`` within the limits (see the module notes).

    Parameters
    ----------
    path : str or Path
    error : type
        The error class raised for every problem (e.g. ``InvalidCircuitError``); messages
        start with the path.
    max_bytes, max_depth, max_values : int
        Size, nesting and value-count limits (``max_values=None``: only the size bounds it).
    arrays : bool
        Large numeric arrays as numpy arrays (see :func:`parse_document`).

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
                          max_values=max_values, arrays=arrays)


def _structure(raw: bytes, blanked: "bytes | None" = None) -> "tuple[int, int]":
    """(maximum nesting depth, upper bound on the number of JSON values) of ``raw``.

    Strings are blanked first (a bracket or comma inside a string does not count).  The
    count bound is ``commas + opening brackets + 1``: every value but the first of a container
    follows a comma.  Works block by block, so the extra memory is O(_SCAN_BLOCK).
    """
    if blanked is None:
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


#: In ``arrays=True`` mode, numeric arrays (a list of numbers, or a list of equal-length lists
#: of numbers) of at least this many bytes are read straight into numpy arrays.
ARRAY_MIN_BYTES = 1 << 14
#: Bytes of an array's text converted per step (bounds the Python objects alive at once).
_ARRAY_CHUNK = 1 << 20
_NUM = rb"[0-9eE+\-.,\s]"
_ARRAY_1D = re.compile(rb"\[" + _NUM + rb"*\]")
# a 2-D candidate runs from "[[" to the next "]]"; it is one when only numbers, separators and
# alternating brackets lie between (single-character repeats only: no regex stack per row)
_START_2D = re.compile(rb"\[\s*\[")
_END_2D = re.compile(rb"\]\s*\]")
_FLAT = re.compile(rb"[0-9eE+\-.,\s\[\]]*")
_PLACEHOLDER = "\x00depthsep-array-"


def _blank_strings(raw: bytes) -> bytes:
    """``raw`` with every JSON string's content replaced by ``x`` (same length)."""
    if b'"' not in raw:
        return raw
    return _STRING.sub(lambda m: b'"' + b"x" * (len(m.group()) - 2) + b'"', raw)


def _numbers(text: bytes, where: str, error):
    """The JSON numbers in ``text`` (a comma-separated run, no brackets) as a Python list."""
    try:
        values = json.loads(b"[" + text + b"]", parse_constant=_no_constants,
                            parse_float=_finite_float)
    except (ValueError, RecursionError) as exc:
        raise error(f"{where}not valid JSON in a numeric array ({exc})") from None
    return values


_INT_TYPES = (np.int8, np.int16, np.int32, np.int64)


def _fit(out: np.ndarray, block: np.ndarray) -> np.ndarray:
    """``out``, widened (a copy) when ``block``'s integers do not fit its dtype."""
    if out.dtype == np.float64 or not block.size:
        return out
    lo, hi = int(block.min()), int(block.max())
    for t in _INT_TYPES:
        if np.iinfo(t).min <= lo and hi <= np.iinfo(t).max:
            break
    return out.astype(t) if np.dtype(t).itemsize > out.dtype.itemsize else out


def _block(values, dtype, where: str, error) -> np.ndarray:
    try:
        return np.array(values, dtype=np.float64 if dtype == np.float64 else np.int64)
    except (OverflowError, ValueError, TypeError) as exc:
        raise error(f"{where}a numeric array holds a number out of range or of another shape "
                    f"({exc})") from None


def _array_of(raw: bytes, a: int, b: int, two_d: bool, where: str, error) -> np.ndarray:
    """Read the numeric array ``raw[a:b]`` (JSON text) into numpy, ``_ARRAY_CHUNK`` bytes at a
    time, without copying the text: float64 when a token has a fraction or exponent, else the
    smallest integer dtype that holds every entry (exact; beyond int64 is an error).  A 2-D
    array must be rectangular."""
    is_float = any(raw.find(c, a, b) >= 0 for c in (b".", b"e", b"E"))
    a1, b1 = raw.index(b"[", a) + 1, raw.rindex(b"]", a, b)
    out = np.empty(0, dtype=np.float64 if is_float else np.int8)
    if not two_d:
        count = raw.count(b",", a1, b1) + 1
        out = np.empty(count, dtype=out.dtype)
        pos = a1
        filled = 0
        while pos < b1:
            end = raw.find(b",", min(pos + _ARRAY_CHUNK, b1), b1)
            end = b1 if end < 0 else end
            blk = _block(_numbers(raw[pos:end], where, error), out.dtype, where, error)
            if blk.ndim != 1 or filled + blk.shape[0] > count:
                raise error(f"{where}not valid JSON in a numeric array")
            out = _fit(out, blk)
            out[filled:filled + blk.shape[0]] = blk
            filled += blk.shape[0]
            pos = end + 1
        if filled != count:
            raise error(f"{where}not valid JSON in a numeric array")
        return out
    rows = raw.count(b"[", a1, b1)
    pos, filled, cols = raw.index(b"[", a1), 0, None
    while pos < b1:
        end = raw.find(b"]", min(pos + _ARRAY_CHUNK, b1), b1)
        end = b1 if end < 0 else end + 1
        values = _numbers(raw[pos:end], where, error)
        if cols is None:
            cols = len(values[0]) if values else 0
            out = np.empty((rows, cols), dtype=out.dtype)
        bad = next((k for k, r in enumerate(values) if len(r) != cols), None)
        if bad is not None:
            raise error(f"{where}a numeric array's rows differ in length (row {filled + bad} "
                        f"has {len(values[bad])} entries, row 0 has {cols})")
        blk = _block(values, out.dtype, where, error).reshape(len(values), cols)
        del values
        if filled + blk.shape[0] > rows:
            raise error(f"{where}not valid JSON in a numeric array")
        out = _fit(out, blk)
        out[filled:filled + blk.shape[0]] = blk
        filled += blk.shape[0]
        nxt = raw.find(b"[", end, b1)
        pos = b1 if nxt < 0 else nxt
    if filled != rows:
        raise error(f"{where}not valid JSON in a numeric array")
    return out


def _alternate(buf: bytes, a: int, b: int) -> bool:
    """Whether the brackets of ``buf[a:b]`` are ``[ ] [ ] ... [ ]`` (rows, none nested)."""
    v = np.frombuffer(buf, dtype=np.uint8, count=b - a, offset=a)
    br = v[(v == 0x5B) | (v == 0x5D)]
    return (br.shape[0] % 2 == 0 and bool(np.all(br[0::2] == 0x5B))
            and bool(np.all(br[1::2] == 0x5D)))


def _extract_arrays(raw: bytes, blanked: bytes, where: str, error) -> "tuple[bytes, list]":
    """(``raw`` with each large numeric array replaced by a placeholder string, the arrays);
    ``blanked`` is ``raw`` with its strings blanked (:func:`_blank_strings`)."""
    spans = []
    pos = 0
    while True:
        m = _START_2D.search(blanked, pos)
        e = _END_2D.search(blanked, m.end()) if m else None
        if e is None:
            break
        a, b = m.start(), e.end()
        if b - a >= ARRAY_MIN_BYTES and _FLAT.fullmatch(blanked, a, b) and _alternate(
                blanked, m.end() - 1, e.start() + 1):
            spans.append((a, b, True))
        pos = b
    taken = sorted(spans)
    gaps, prev = [], 0
    for a, b, _ in taken:
        gaps.append((prev, a))
        prev = b
    gaps.append((prev, len(blanked)))
    for a, b in gaps:
        for m in _ARRAY_1D.finditer(blanked, a, b):
            if m.end() - m.start() >= ARRAY_MIN_BYTES:
                spans.append((m.start(), m.end(), False))
    del blanked
    if not spans:
        return raw, []
    spans.sort()
    parts, arrays, prev = [], [], 0
    for a, b, two_d in spans:
        parts.append(raw[prev:a])
        parts.append(json.dumps(f"{_PLACEHOLDER}{len(arrays)}").encode())
        arrays.append(_array_of(raw, a, b, two_d, where, error))
        prev = b
    parts.append(raw[prev:])
    return b"".join(parts), arrays


def _put_arrays(value, arrays: list):
    """``value`` with every placeholder string replaced by its array (in place for containers)."""
    stack = [value]
    while stack:
        v = stack.pop()
        items = v.items() if isinstance(v, dict) else enumerate(v) if isinstance(v, list) else ()
        for k, x in items:
            if isinstance(x, str) and x.startswith(_PLACEHOLDER):
                tail = x[len(_PLACEHOLDER):]
                if tail.isdigit() and int(tail) < len(arrays):
                    v[k] = arrays[int(tail)]
            elif isinstance(x, (dict, list)):
                stack.append(x)
    if isinstance(value, str) and value.startswith(_PLACEHOLDER):
        tail = value[len(_PLACEHOLDER):]
        if tail.isdigit() and int(tail) < len(arrays):
            return arrays[int(tail)]
    return value


def _no_constants(name):
    raise ValueError(f"{name} is not allowed (JSON has no NaN/Infinity)")


def _finite_float(token):
    value = float(token)
    if not math.isfinite(value):
        raise ValueError(f"number {token[:20]} overflows a float")
    return value


def parse_document(raw, *, where: str = "", error=DepthsepError,
                   max_depth: int = MAX_DOCUMENT_DEPTH, max_values: "int | None" = None,
                   arrays: bool = False):
    """Parse JSON ``raw`` (bytes or str) after the UTF-8, depth and value-count checks.

    With ``arrays=True`` every numeric array of at least :data:`ARRAY_MIN_BYTES` bytes (a list
    of numbers, or a rectangular list of lists of numbers) comes back as a numpy array (the
    smallest integer dtype holding its entries when all are integer tokens, else float64),
    read a block at a time: the
    working memory stays a few bytes per byte of input instead of the 25-45 of one Python
    object per number (network and circuit documents are read this way).

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
    if arrays:
        del text                                    # checked; the parse below works on bytes
    blanked = _blank_strings(raw) if arrays else None     # same length: positions agree
    deepest, values = _structure(raw, blanked)
    if deepest > max_depth:
        raise error(f"{where}JSON nested {deepest} deep, above max_depth={max_depth}; this is not a "
                    f"depthsep document")
    if max_values is not None and values > max_values:
        raise error(f"{where}holds up to {values:,} JSON values, above the limit of "
                    f"{max_values:,} for this kind of document; raise the loader's size limits "
                    f"if the file is trusted")

    found = []
    if arrays:
        text, found = _extract_arrays(raw, blanked, where, error)
        del blanked
    try:
        doc = json.loads(text, parse_constant=_no_constants, parse_float=_finite_float)
        return _put_arrays(doc, found) if found else doc
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

