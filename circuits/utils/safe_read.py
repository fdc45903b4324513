"""Reading untrusted files: one helper for every loader (issue 25 items 4-5).

:func:`read_regular_file` refuses anything but a regular file *before opening it* (a FIFO would
block ``open`` forever, ``/dev/zero`` behind a symlink never ends), opens without blocking,
checks the opened descriptor again (the path may be swapped between ``stat`` and ``open``) and
reads at most ``max_bytes + 1`` bytes.  :func:`load_npy` and :func:`load_npz` then read numpy
files from those bytes with every size decided *before* any array is allocated: the zip
directory's entry count and declared uncompressed sizes, then each ``.npy`` header's dtype and
shape (``prod(shape) * itemsize`` must fit the budget and match the member's size).  A zip bomb
or a header that declares 10^12 elements is refused with the caller's error class, naming the
file and the member.
"""

from __future__ import annotations

import io
import os
import stat
import zipfile
import zlib
from pathlib import Path

import numpy as np

__all__ = ["read_regular_file", "check_regular_file", "load_npy", "load_npz"]

#: At most this many arrays in one ``.npz`` file.
MAX_NPZ_MEMBERS = 4096

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"))


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def check_regular_file(path, *, error, what: str = "file") -> os.stat_result:
    """``os.stat(path)`` (symlinks followed) if it is a regular file, else ``error``.

    ``FileNotFoundError`` passes through for a missing path (the loaders document it).
    """
    path = Path(path)
    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode):
        raise error(f"{path}: is {_kind(st.st_mode)}, not a regular {what}; give the path of a "
                    f"saved {what}")
    return st


def read_regular_file(path, *, error, max_bytes: int, what: str = "file") -> bytes:
    """The bytes of the regular file ``path``, at most ``max_bytes`` of them.

    Raises ``error`` (naming the path) for a directory, FIFO, device or socket (checked before
    opening, and again on the opened descriptor), a file above ``max_bytes`` (checked from
    ``stat`` before reading, and by a read capped at ``max_bytes + 1``) and an unreadable file;
    ``FileNotFoundError`` for a missing path.
    """
    path = Path(path)
    st = check_regular_file(path, error=error, what=what)
    if st.st_size > max_bytes:
        raise error(f"{path}: file has {st.st_size:,} bytes, above max_bytes={max_bytes:,}; pass "
                    f"a larger max_bytes if the file is trusted")
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise error(f"{path}: cannot be read ({exc.strerror or exc})") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):          # swapped between stat and open
            raise error(f"{path}: is {_kind(mode)}, not a regular {what}")
        chunks, left = [], max_bytes + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 24))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    except OSError as exc:
        raise error(f"{path}: cannot be read ({exc.strerror or exc})") from None
    finally:
        os.close(fd)
    raw = b"".join(chunks)
    if len(raw) > max_bytes:
        raise error(f"{path}: more than max_bytes={max_bytes:,} bytes (the file grew while being "
                    f"read); pass a larger max_bytes if it is trusted")
    return raw


def _read_npy(fp, *, where: str, error, budget: int, size: "int | None"):
    """One array from the ``.npy`` stream ``fp`` after its header is checked against ``budget``
    (bytes) and, when known, the stream's ``size``.  Returns ``(array, nbytes)``."""
    fmt = np.lib.format
    try:
        version = fmt.read_magic(fp)
        if version == (1, 0):
            shape, fortran, dtype = fmt.read_array_header_1_0(fp)
        elif version in ((2, 0), (3, 0)):
            shape, fortran, dtype = fmt.read_array_header_2_0(fp)
        else:
            raise ValueError(f"unsupported .npy format version {version}")
    except Exception as exc:     # noqa: BLE001 - numpy's header parser of untrusted bytes raises
        # ValueError, SyntaxError, tokenize.TokenError, MemoryError, zlib.error, ...: all one story
        raise error(f"{where}not a .npy array (bad header: {type(exc).__name__}: "
                    f"{str(exc)[:200]})") from None
    if dtype.hasobject:
        raise error(f"{where}holds Python objects (dtype {dtype}); only numeric arrays are read "
                    f"(no pickle)")
    if not all(type(d) is int and d >= 0 for d in shape):
        raise error(f"{where}bad .npy header: shape {shape!r:.80} is not a tuple of sizes")
    count = 1
    for d in shape:
        count *= d
    nbytes = count * dtype.itemsize
    if nbytes > budget:
        raise error(f"{where}declares shape {tuple(shape)} of {dtype} = {nbytes:,} bytes, above the "
                    f"limit of {budget:,} bytes; raise max_bytes if the file is trusted")
    if size is not None and fp.tell() + nbytes != size:
        raise error(f"{where}declares {nbytes:,} bytes of data (shape {tuple(shape)}, {dtype}) but "
                    f"holds {size - fp.tell():,}; the file is truncated or corrupt")
    try:
        data = fp.read(nbytes)
    except (OSError, EOFError, zipfile.BadZipFile, zlib.error, ValueError) as exc:
        raise error(f"{where}cannot be read ({str(exc)[:200]})") from None
    if len(data) != nbytes:
        raise error(f"{where}holds {len(data):,} bytes of data, the header declares {nbytes:,}; "
                    f"the file is truncated")
    arr = np.frombuffer(data, dtype=dtype)
    if fortran:
        arr = arr.reshape(tuple(shape)[::-1]).T
    else:
        arr = arr.reshape(tuple(shape))
    return np.array(arr), nbytes


def load_npy(raw: bytes, *, where: str, error, max_bytes: int) -> np.ndarray:
    """The array in the ``.npy`` bytes ``raw`` (header checked before reading the data)."""
    arr, _ = _read_npy(io.BytesIO(raw), where=where, error=error, budget=max_bytes, size=len(raw))
    return arr


def load_npz(raw: bytes, *, where: str, error, max_bytes: int,
             max_members: int = MAX_NPZ_MEMBERS) -> dict:
    """``{name: array}`` from the ``.npz`` bytes ``raw``, every size decided before reading.

    The zip directory must list at most ``max_members`` ``.npy`` members whose declared
    uncompressed sizes sum to at most ``max_bytes``; each member's ``.npy`` header must declare
    exactly its size; decompression never yields more than the declared size (``zipfile``
    stops there and checks the CRC).
    """
    try:
        zf = zipfile.ZipFile(io.BytesIO(raw))
        infos = zf.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError, OSError,
            NotImplementedError, IndexError, KeyError) as exc:
        raise error(f"{where}not a readable .npz file (zip directory: {str(exc)[:200]})") from None
    with zf:
        if len(infos) > max_members:
            raise error(f"{where}holds {len(infos):,} zip members, above the limit of "
                        f"{max_members:,}")
        total = sum(int(i.file_size) for i in infos)
        if total > max_bytes:
            raise error(f"{where}declares {total:,} uncompressed bytes, above max_bytes="
                        f"{max_bytes:,}; raise max_bytes if the file is trusted")
        out = {}
        budget = max_bytes
        for info in infos:
            name = info.filename
            loc = f"{where}member {name[:80]!r}: "
            if not name.endswith(".npy") or info.is_dir():
                raise error(f"{loc}an .npz file holds only .npy arrays")
            key = name[:-4]
            if key in out:
                raise error(f"{loc}appears twice in the zip directory")
            try:
                fp = zf.open(info)
            except (zipfile.BadZipFile, NotImplementedError, RuntimeError, ValueError, OSError,
                    EOFError, zlib.error) as exc:
                raise error(f"{loc}cannot be opened ({str(exc)[:200]})") from None
            with fp:
                arr, nbytes = _read_npy(fp, where=loc, error=error, budget=budget,
                                        size=int(info.file_size))
                try:
                    if fp.read(1):
                        raise error(f"{loc}holds data after the array")
                except (zipfile.BadZipFile, zlib.error, EOFError, OSError) as exc:
                    raise error(f"{loc}is corrupt ({str(exc)[:200]})") from None
            budget -= nbytes
            out[key] = arr
    return out
