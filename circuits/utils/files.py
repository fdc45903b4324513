"""Result files: JSON only (never pickle), written atomically; PNG figures likewise.

:func:`write_json_atomic` writes to a temporary file in the target directory and renames it
into place with ``os.replace``, so an interrupted run never leaves a half-written file.
:func:`write_bytes_atomic` does the same for binary outputs such as PNG figures.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from pathlib import Path

import numpy as np

__all__ = ["write_json_atomic", "write_bytes_atomic", "to_jsonable", "read_json", "savefig_atomic"]


def to_jsonable(obj):
    """Convert numpy scalars/arrays, tuples, Paths and dataclass-like objects to JSON types.

    Non-finite floats become the strings "inf", "-inf", "nan" (JSON has no such numbers).

    >>> to_jsonable({"a": np.int64(3), "b": np.arange(2), "c": float("inf")})
    {'a': 3, 'b': [0, 1], 'c': 'inf'}
    """
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
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


def write_bytes_atomic(path, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically (temp file in the same directory + os.replace)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
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


def read_json(path):
    """Read a JSON file, with a clear error naming the file on malformed content."""
    path = Path(path)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from None


def savefig_atomic(fig, path, **kwargs) -> Path:
    """Save a matplotlib figure as PNG atomically."""
    import io as _io

    buf = _io.BytesIO()
    fig.savefig(buf, format="png", **kwargs)
    return write_bytes_atomic(path, buf.getvalue())


