"""Truth tables as files: the one reader (:func:`load_truth_table`) with its checks, and the
``.npy`` / JSON byte-level parsers it shares with the network loaders.  Re-exported by
:mod:`circuits.io`; kept apart from the circuit documents there."""

from __future__ import annotations

import re
from pathlib import Path

from circuits.utils.documents import _short

#: Default size limit of a file read by the loaders of :mod:`circuits.io` (64 MiB).
MAX_FILE_BYTES = 1 << 26


def load_truth_table(path, *, max_bytes: int = MAX_FILE_BYTES):
    """Read a truth table (cube order, see :mod:`circuits.hypercube`) from a file.

    Parameters
    ----------
    path : str or Path
        ``.npy``: a 1-D numeric or boolean array (read with ``allow_pickle=False``);
        ``.json``: a list of 0/1 or an object with a ``"truth_table"`` list;
        anything else: text of ``0``/``1`` characters, whitespace and commas ignored
        (``0110`` is XOR).  Entry k is f at the point whose bit i is ``(k >> i) & 1``.
    max_bytes : int
        Refuse larger files before reading them.

    Returns
    -------
    numpy.ndarray
        uint8 0/1 table of length 2^N.

    Raises
    ------
    InvalidCircuitError
        Unreadable content, values other than 0/1, or a length that is not a power of two;
        the message starts with the file name.
    FileNotFoundError
        If the file does not exist.

    Examples
    --------
    >>> import tempfile, os
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = os.path.join(d, "xor.txt")
    ...     _ = open(p, "w").write("0 1 1 0\\n")
    ...     load_truth_table(p).tolist()
    [0, 1, 1, 0]
    """
    import numpy as np

    from circuits.functions import as_truth_table
    from circuits.utils.errors import InvalidCircuitError

    from circuits.utils.documents import read_regular_file

    path = Path(path)
    where = f"{path}: "
    raw = read_regular_file(path, error=InvalidCircuitError, max_bytes=max_bytes)
    suffix = path.suffix.lower()
    try:
        if suffix == ".npy":
            values = read_npy_bytes(raw, where=where, error=InvalidCircuitError)
        elif suffix == ".json":
            values = _json_truth_table(raw, where)
        else:
            text = raw.decode("utf-8")
            chars = [ch for ch in text if not (ch.isspace() or ch == ",")]
            bad = next((ch for ch in chars if ch not in "01"), None)
            if bad is not None:
                raise ValueError(f"a text truth table holds only the characters 0 and 1 (whitespace "
                                 f"and commas are ignored), found {bad!r}")
            values = np.frombuffer("".join(chars).encode("ascii"), dtype=np.uint8) - ord("0")
        return as_truth_table(values, name=str(path))
    except InvalidCircuitError:
        raise
    except (ValueError, UnicodeDecodeError, EOFError, TypeError, OverflowError,
            MemoryError) as exc:
        raise InvalidCircuitError(f"{where}not a truth table ({type(exc).__name__}: {exc})") \
            from None


#: JSON whitespace (RFC 8259: space, tab, line feed, carriage return).
_JSON_SPACE = b" \t\n\r"
#: ``{"truth_table": [...]}`` and nothing else (the list holds no brackets, braces or strings).
_TABLE_OBJECT = re.compile(rb'\A[ \t\n\r]*\{[ \t\n\r]*"truth_table"[ \t\n\r]*:[ \t\n\r]*'
                           rb'(\[[^\[\]{}"]*\])[ \t\n\r]*\}[ \t\n\r]*\Z')
#: A truth-table JSON that is not one of the two plain shapes is parsed generically, and only
#: up to this many JSON values (a few fields next to a short table).
MAX_GENERIC_TABLE_VALUES = 4096
MAX_GENERIC_TABLE_BYTES = 1 << 20


def json_table_shape(raw: bytes) -> bool:
    """Whether the JSON bytes ``raw`` have one of the two plain truth-table shapes (a list, or
    ``{"truth_table": [...]}`` alone), which :func:`load_truth_table` reads without building a
    Python object per entry.  Decided from the bytes alone (nothing is parsed)."""
    return raw.lstrip(_JSON_SPACE).startswith(b"[") or _TABLE_OBJECT.match(raw) is not None


def _json_truth_table(raw: bytes, where: str):
    """The 0/1 entries of a truth-table JSON, read straight from its bytes.

    The two shapes the loader documents, a list ``[0, 1, ...]`` (``true``/``false`` allowed)
    and an object ``{"truth_table": [...]}``, are checked and converted by numpy on the bytes:
    no Python object per entry is ever built, and the working memory is a few bytes per byte
    of the file (json.loads of 1 MB of ``[[], [], ...]`` or ``[{}, ...]`` took 43-67 MiB, so
    the 64 MiB the loader admits could take about 4 GiB).  Any other shape (an object with
    further fields) goes through the generic parser, bounded to
    :data:`MAX_GENERIC_TABLE_VALUES` values by the structure scan before parsing.
    """
    import numpy as np

    from circuits.utils.documents import _structure, parse_document
    from circuits.utils.errors import InvalidCircuitError

    body = raw.lstrip(_JSON_SPACE)
    if not body.startswith(b"["):
        m = _TABLE_OBJECT.match(raw)
        if m is None:                       # another shape: a small generic document only
            count = None if len(raw) > MAX_GENERIC_TABLE_BYTES else _structure(raw)[1]
            if count is None or count > MAX_GENERIC_TABLE_VALUES:
                held = (f"{len(raw):,} bytes" if count is None else
                        f"up to {count:,} JSON values")
                raise ValueError(
                    f"a truth-table JSON is a list of 0/1 or an object {{\"truth_table\": "
                    f"[...]}}; other shapes are read only up to {MAX_GENERIC_TABLE_VALUES} JSON "
                    f"values in {MAX_GENERIC_TABLE_BYTES:,} bytes, and this one holds {held}")
            doc = parse_document(raw, where=where, error=InvalidCircuitError, max_depth=2,
                                 max_values=MAX_GENERIC_TABLE_VALUES)
            if isinstance(doc, dict):
                if "truth_table" not in doc:
                    raise ValueError("a JSON object needs a 'truth_table' field (a list of 0/1)")
                doc = doc["truth_table"]
            if not isinstance(doc, list):
                raise ValueError(f"expected a list of 0/1, got {type(doc).__name__}")
            bad = next((k for k, v in enumerate(doc) if type(v) not in (int, bool)
                        or v not in (0, 1)), None)
            if bad is not None:
                raise ValueError(f"truth_table[{bad}] = {_short(doc[bad])} is not 0 or 1")
            return np.fromiter((int(v) for v in doc), dtype=np.uint8, count=len(doc))
        body = m.group(1)
    # one token per entry: true/false become 1/0 (a string or any other token stays invalid)
    if b"t" in body or b"f" in body:
        body = body.replace(b"true", b"1").replace(b"false", b"0")
    b = np.frombuffer(body, dtype=np.uint8)
    keep = np.ones(256, dtype=bool)
    keep[list(_JSON_SPACE)] = False
    b = b[keep[b]]
    if b.shape[0] < 2 or b[0] != ord("[") or b[-1] != ord("]"):
        raise ValueError("not valid JSON (the list of 0/1 is not closed by ']', or text follows "
                         "it)")
    inner = b[1:-1]
    if inner.shape[0] == 0:
        return np.zeros(0, dtype=np.uint8)
    digits, commas = inner[0::2], inner[1::2]
    # first offenders by argmax (no index arrays: every slot of a hostile file may be bad)
    bad_digit = (digits != ord("0")) & (digits != ord("1"))
    first_digit = int(bad_digit.argmax()) if bad_digit.any() else None
    del bad_digit
    bad_comma = commas != ord(",")
    first_comma = int(bad_comma.argmax()) if bad_comma.any() else None
    del bad_comma
    if inner.shape[0] % 2 == 0 or first_digit is not None or first_comma is not None:
        # the first entry that is not a single 0/1 token: entry k starts at inner[2k]
        # (a bad comma slot j means entry j ran on; an even length, a missing last entry)
        cands = [inner.shape[0] // 2] if inner.shape[0] % 2 == 0 else []
        cands += [k for k in (first_digit, first_comma) if k is not None]
        k = min(cands)
        tail = inner[2 * k: 2 * k + 64].tobytes()
        token = tail.split(b",", 1)[0].decode("utf-8", "replace")
        raise ValueError(f"truth_table[{k}] = {_short(token) if token else 'nothing'} is not "
                         f"0 or 1")
    return digits - np.uint8(ord("0"))


def read_npy_bytes(raw: bytes, *, where: str, error, max_elements: "int | None" = None):
    """The array in the ``.npy`` bytes ``raw``, its header checked before any allocation.

    The declared shape and dtype must describe exactly the bytes present (no object dtype,
    no pickles); a header declaring more data than the file holds is refused before numpy
    allocates it.  Every problem raises ``error`` (message starting with ``where``).
    """
    import io as _pyio

    import numpy as np
    from numpy.lib import format as _npf

    fh = _pyio.BytesIO(raw)
    try:
        version = _npf.read_magic(fh)
        if version == (1, 0):
            shape, fortran, dtype = _npf.read_array_header_1_0(fh, max_header_size=1 << 16)
        elif version in ((2, 0), (3, 0)):
            shape, fortran, dtype = _npf.read_array_header_2_0(fh, max_header_size=1 << 16)
        else:
            raise ValueError(f"unsupported .npy version {version}")
    except Exception as exc:    # numpy raises ValueError, SyntaxError, TypeError, ... here
        raise error(f"{where}not a .npy array (header: {type(exc).__name__}: {exc})") from None
    if dtype.hasobject or dtype.itemsize == 0:
        raise error(f"{where}.npy dtype {dtype} is not a plain numeric dtype")
    count = 1
    for d in shape:
        count *= int(d)
    if max_elements is not None and count > max_elements:
        raise error(f"{where}.npy declares {count:,} elements, above {max_elements:,}")
    need = count * dtype.itemsize
    have = len(raw) - fh.tell()
    if need != have:
        raise error(f"{where}.npy header declares shape {shape} of {dtype} ({need:,} bytes) but "
                    f"the file holds {have:,} data bytes")
    try:
        arr = np.frombuffer(raw, dtype=dtype, count=count, offset=fh.tell())
        return arr.reshape(shape, order="F" if fortran else "C").copy()
    except (ValueError, TypeError, MemoryError) as exc:
        raise error(f"{where}not a readable .npy array ({type(exc).__name__}: {exc})") from None
