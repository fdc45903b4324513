"""Circuit documents: versioned JSON files for threshold and DAG circuits (never pickle).

Loading validates every field and size limit before building the circuit.  The atomic writers
live in :mod:`circuits.utils.files`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from circuits._table_io import (MAX_FILE_BYTES, MAX_GENERIC_TABLE_BYTES,  # noqa: F401
                                MAX_GENERIC_TABLE_VALUES, json_table_shape, load_truth_table,
                                read_npy_bytes)
from circuits.utils.documents import _short
from circuits.utils.files import write_json_atomic


# ---------------------------------------------------------------------------------------------
# Circuits as JSON files
# ---------------------------------------------------------------------------------------------
#: The ``"format"`` field of a circuit document.
CIRCUIT_FORMAT = "depthsep.circuit"
#: The document version this library writes and reads.
CIRCUIT_VERSION = 1
#: Default size limits applied when loading (each overridable by keyword).  64 MiB of JSON
#: parse to at most ~0.6 GB of Python objects; a file at the weight limit needs a larger
#: ``max_bytes`` (>= 2 bytes per weight).
MAX_CIRCUIT_INPUTS = 1 << 16
MAX_CIRCUIT_GATES = 1 << 20
MAX_CIRCUIT_WEIGHTS = 1 << 26

_INT64_MAX = (1 << 63) - 1

__all__ = ["save_circuit", "load_circuit", "circuit_to_dict", "circuit_from_dict",
           "load_truth_table", "CIRCUIT_FORMAT", "CIRCUIT_VERSION"]


def circuit_to_dict(circuit) -> dict:
    """The JSON document of a :class:`~circuits.threshold.ThresholdCircuit` or
    :class:`~circuits.graph.DagCircuit` (plain Python ints; exact beyond 2^53).

    Layered::

        {"format": "depthsep.circuit", "version": 1, "kind": "layered", "n_inputs": N,
         "layers": [{"weights": [[...], ...], "thresholds": [...]}, ...]}

    DAG::

        {"format": "depthsep.circuit", "version": 1, "kind": "dag", "n_inputs": N,
         "output": "name", "gates": [{"name": ..., "type": "AND", "inputs": [["x", 0], "g"]},
                                     {"name": ..., "type": "THR", "inputs": [...],
                                      "weights": [...], "threshold": t}, ...]}

    Parameters
    ----------
    circuit : ThresholdCircuit or DagCircuit
        The circuit to describe.

    Examples
    --------
    >>> from circuits.threshold import ThresholdCircuit
    >>> circuit_to_dict(ThresholdCircuit.single_gate([1, 1], 2))["layers"]
    [{'weights': [[1, 1]], 'thresholds': [2]}]
    """
    from circuits.graph import DagCircuit
    from circuits.threshold import ThresholdCircuit

    head = {"format": CIRCUIT_FORMAT, "version": CIRCUIT_VERSION}
    if isinstance(circuit, ThresholdCircuit):
        return {**head, "kind": "layered", "n_inputs": circuit.n_inputs,
                "layers": [{"weights": layer.weights.tolist(), "thresholds": layer.thresholds.tolist()}
                           for layer in circuit.layers]}
    if isinstance(circuit, DagCircuit):
        return {**head, "kind": "dag", **circuit.to_dict()}
    raise TypeError(f"circuit must be a ThresholdCircuit or a DagCircuit, got {type(circuit).__name__}")


def save_circuit(circuit, path) -> Path:
    """Write ``circuit`` to ``path`` as JSON (atomically, via :func:`write_json_atomic`).

    Parameters
    ----------
    circuit : ThresholdCircuit or DagCircuit
        The circuit to write.
    path : str or Path
        Destination file (written atomically).

    Examples
    --------
    >>> import tempfile, os
    >>> from circuits.threshold import ThresholdCircuit
    >>> c = ThresholdCircuit.depth2([[1, 1], [1, 1]], [1, 2], [1, -1], 1)
    >>> with tempfile.TemporaryDirectory() as d:
    ...     load_circuit(save_circuit(c, os.path.join(d, "xor.json"))).equals(c)
    True
    """
    return write_json_atomic(path, circuit_to_dict(circuit), indent=None)


class _Doc:
    """Validation helpers that name the offending location in the document."""

    def __init__(self, where: str):
        self.where = where

    def fail(self, msg: str):
        from circuits.utils.errors import InvalidCircuitError

        raise InvalidCircuitError(f"{self.where}{msg}")

    def integer(self, v, loc: str) -> int:
        if isinstance(v, bool) or not isinstance(v, int):
            self.fail(f"{loc} must be a JSON integer, got {type(v).__name__} {_short(v)}")
        if abs(v) > _INT64_MAX:
            self.fail(f"{loc} = {_short(v)} is beyond int64 (|v| > 2^63 - 1)")
        return v

    def listof(self, v, loc: str, *, max_len: int, min_len: int = 0, limit: "str | None" = None) -> list:
        if not isinstance(v, list):
            self.fail(f"{loc} must be a JSON array, got {type(v).__name__} {_short(v)}")
        if min_len == max_len and len(v) != min_len:
            self.fail(f"{loc} must have exactly {min_len} entries, got {len(v)}")
        if len(v) < min_len:
            self.fail(f"{loc} must have at least {min_len} entries, got {len(v)}")
        if len(v) > max_len:
            if limit:
                self.fail(f"{loc} has {len(v)} entries, above {limit}={max_len}; raise {limit} if "
                          f"the file is trusted")
            self.fail(f"{loc} must have at most {max_len} entries, got {len(v)}")
        return v

    def obj(self, v, loc: str, required: tuple, optional: tuple = ()) -> dict:
        if not isinstance(v, dict):
            self.fail(f"{loc} must be a JSON object, got {type(v).__name__} {_short(v)}")
        for key in required:
            if key not in v:
                self.fail(f"{loc} is missing the field {key!r}")
        extra = sorted(str(k) for k in v if k not in required and k not in optional)
        if extra:
            self.fail(f"{loc} has unknown field(s) {extra[:5]}; expected {list(required + optional)}")
        return v


def _int64_rows(rows, width: int):
    """``rows`` (a list of lists of ``width`` JSON integers, each within ±(2^63 - 1)) as an int64
    array, checked at C speed; None when anything differs (the caller then walks the values one
    by one to name the first bad one).  A circuit of 40 000 gates on 48 inputs loads in a
    fraction of a second instead of seconds."""
    import itertools

    import numpy as np

    if type(rows) is not list or set(map(type, rows)) != {list} or set(map(len, rows)) != {width}:
        return None
    if set(map(type, itertools.chain.from_iterable(rows))) != {int}:
        return None                                # bools, floats, strings, nested lists
    try:
        arr = np.array(rows, dtype=np.int64)
    except (OverflowError, ValueError):
        return None
    if arr.size and int(arr.min()) < -_INT64_MAX:  # -2^63 fits int64 but not the format
        return None
    return arr


def circuit_from_dict(doc, *, where: str = "circuit document: ", max_inputs: int = MAX_CIRCUIT_INPUTS,
                      max_gates: int = MAX_CIRCUIT_GATES, max_weights: int = MAX_CIRCUIT_WEIGHTS):
    """Validate a circuit document (see :func:`circuit_to_dict`) and build the circuit.

    Everything is checked before any array is built: format and version, field names and JSON
    types (integers must be JSON integers, not floats or booleans), shapes and layer chaining,
    int64 range and the pre-activation bound, and size limits (``max_inputs``, ``max_gates``,
    ``max_weights`` = total weights) so that a hostile file cannot exhaust memory.  Unknown
    fields are refused, except a top-level ``"metadata"`` entry, which is accepted and ignored.

    Parameters
    ----------
    doc : dict
        A parsed circuit document.
    where : str
        Prefix of every error message (e.g. the file name).
    max_inputs : int
        Refuse more inputs.
    max_gates : int
        Refuse more gates.
    max_weights : int
        Refuse more weights in total.

    Raises
    ------
    InvalidCircuitError
        For every problem, with a message naming the field (e.g. ``layers[1].weights[0][3]``).

    Examples
    --------
    >>> circuit_from_dict({"format": "depthsep.circuit", "version": 1, "kind": "layered",
    ...                    "n_inputs": 2, "layers": [{"weights": [[1, 1]], "thresholds": [1]}]})
    ThresholdCircuit(n_inputs=2, depth=1, gates=1, bound=3)
    >>> circuit_from_dict({"format": "depthsep.circuit", "version": 2})
    Traceback (most recent call last):
    ...
    circuits.utils.errors.InvalidCircuitError: circuit document: unsupported version 2; this depthsep reads version 1 (upgrade depthsep to read newer files)
    """
    from circuits.utils.errors import InvalidCircuitError

    from circuits.utils.documents import check_header

    d = _Doc(where)
    check_header(doc, format=CIRCUIT_FORMAT, version=CIRCUIT_VERSION, where=where,
                 error=InvalidCircuitError, what="circuit document",
                 optional=("kind", "n_inputs", "layers", "output", "gates", "metadata"))
    kind = doc.get("kind")
    if kind not in ("layered", "dag"):
        d.fail(f"'kind' must be 'layered' or 'dag', got {_short(kind)}")
    try:
        if kind == "layered":
            return _layered_from_doc(d, doc, max_inputs, max_gates, max_weights)
        return _dag_from_doc(d, doc, max_inputs, max_gates, max_weights)
    except InvalidCircuitError as exc:
        msg = str(exc)
        if msg.startswith(where):
            raise
        raise InvalidCircuitError(f"{where}{msg}") from None


def _n_inputs(d: _Doc, doc, max_inputs: int) -> int:
    n = d.integer(doc["n_inputs"], "'n_inputs'")
    if not 1 <= n <= max_inputs:
        d.fail(f"'n_inputs' must be between 1 and {max_inputs}, got {n}")
    return n


def _layered_from_doc(d: _Doc, doc, max_inputs, max_gates, max_weights):
    from circuits.threshold import ThresholdCircuit, ThresholdLayer

    d.obj(doc, "the document", ("format", "version", "kind", "n_inputs", "layers"), ("metadata",))
    n_in = _n_inputs(d, doc, max_inputs)
    layers = d.listof(doc["layers"], "'layers'", max_len=max_gates, min_len=1, limit="max_gates")
    total_gates = total_weights = 0
    built = []
    for li, layer in enumerate(layers):
        loc = f"layers[{li}]"
        d.obj(layer, loc, ("weights", "thresholds"))
        if isinstance(layer["weights"], np.ndarray) or isinstance(layer["thresholds"], np.ndarray):
            rows, thr = _layer_arrays(d, layer, loc, n_in)      # a large layer, read as arrays
        else:
            rows, thr = None, None
        rows = rows if rows is not None else d.listof(
            layer["weights"], f"{loc}.weights", max_len=max_gates, min_len=1, limit="max_gates")
        total_gates += len(rows)
        total_weights += len(rows) * n_in
        if total_gates > max_gates:
            d.fail(f"{loc}: more than {max_gates} gates in total; raise max_gates if the file is trusted")
        if total_weights > max_weights:
            d.fail(f"{loc}: more than {max_weights} weights in total; raise max_weights if the file "
                   f"is trusted")
        if thr is None:
            thr = layer["thresholds"]
            fast = _int64_rows(rows, n_in), _int64_rows([thr], len(rows))
            if fast[0] is None or fast[1] is None:     # something is off: find it, name it
                for j, row in enumerate(rows):
                    d.listof(row, f"{loc}.weights[{j}]", max_len=n_in, min_len=n_in)
                    for i, v in enumerate(row):
                        d.integer(v, f"{loc}.weights[{j}][{i}]")
                thr = d.listof(thr, f"{loc}.thresholds", max_len=len(rows), min_len=len(rows))
                for j, v in enumerate(thr):
                    d.integer(v, f"{loc}.thresholds[{j}]")
            else:
                rows, thr = fast[0], fast[1][0]
        elif len(thr) != len(rows):
            d.fail(f"{loc}.thresholds must have exactly {len(rows)} entries, got {len(thr)}")
        if li == len(layers) - 1 and len(rows) != 1:
            d.fail(f"{loc}: the output layer must have exactly one gate, got {len(rows)}")
        try:
            built.append(ThresholdLayer(rows, thr))
        except ValueError as exc:
            d.fail(f"{loc}: {exc}")
        n_in = len(rows)
    return ThresholdCircuit(tuple(built))


def _int64_array(d: _Doc, value, loc: str, ndim: int):
    """A layer field as an int64 array: a numpy array from the document reader (integers only:
    a float array means a non-integer token), or a small list checked entry by entry."""
    if isinstance(value, np.ndarray):
        if not np.issubdtype(value.dtype, np.integer):
            d.fail(f"{loc} must hold JSON integers within int64, got a non-integer number")
        if value.ndim != ndim:
            d.fail(f"{loc} must be a {'list of rows' if ndim == 2 else 'list'} of integers")
        return value
    if ndim == 1:
        d.listof(value, loc, max_len=1 << 62)
        return np.array([d.integer(v, f"{loc}[{j}]") for j, v in enumerate(value)],
                        dtype=np.int64)
    d.listof(value, loc, max_len=1 << 62, min_len=1)
    width = len(value[0]) if isinstance(value[0], list) else -1
    for j, row in enumerate(value):
        d.listof(row, f"{loc}[{j}]", max_len=max(width, 0), min_len=max(width, 0))
        for i, v in enumerate(row):
            d.integer(v, f"{loc}[{j}][{i}]")
    return np.array(value, dtype=np.int64)


def _layer_arrays(d: _Doc, layer, loc: str, n_in: int):
    """(weights, thresholds) of a layer that the reader returned (partly) as arrays."""
    rows = _int64_array(d, layer["weights"], f"{loc}.weights", 2)
    thr = _int64_array(d, layer["thresholds"], f"{loc}.thresholds", 1)
    if rows.shape[0] == 0:
        d.fail(f"{loc}.weights must have at least 1 entries, got 0")
    if rows.shape[1] != n_in:
        d.fail(f"{loc}.weights[0] must have exactly {n_in} entries, got {rows.shape[1]}")
    for name, a in (("weights", rows), ("thresholds", thr)):    # the lists' rule: |v| <= 2^63 - 1
        if a.dtype == np.int64 and a.size and bool(np.any(a == np.iinfo(np.int64).min)):
            d.fail(f"{loc}.{name} holds -2^63, beyond int64 (|v| > 2^63 - 1)")
    return rows, thr


def _dag_from_doc(d: _Doc, doc, max_inputs, max_gates, max_weights):
    from circuits.graph import DagCircuit, DagGate

    d.obj(doc, "the document", ("format", "version", "kind", "n_inputs", "output", "gates"), ("metadata",))
    n = _n_inputs(d, doc, max_inputs)
    output = doc["output"]
    if not isinstance(output, str):
        d.fail(f"'output' must be a gate name (a string), got {_short(output)}")
    gates = d.listof(doc["gates"], "'gates'", max_len=max_gates, min_len=1, limit="max_gates")
    total = 0
    built = []
    for gi, g in enumerate(gates):
        loc = f"gates[{gi}]"
        is_thr = isinstance(g, dict) and isinstance(g.get("type"), str) and g["type"].upper() == "THR"
        if is_thr:
            d.obj(g, loc, ("name", "type", "inputs", "weights", "threshold"))
        else:
            d.obj(g, loc, ("name", "type", "inputs"))
        if not isinstance(g["name"], str) or not g["name"]:
            d.fail(f"{loc}.name must be a non-empty string, got {_short(g['name'])}")
        if not isinstance(g["type"], str):
            d.fail(f"{loc}.type must be a string, got {_short(g['type'])}")
        ins = d.listof(g["inputs"], f"{loc}.inputs", max_len=max_weights, min_len=1,
                       limit="max_weights")
        total += len(ins)
        if total > max_weights:
            d.fail(f"{loc}: more than {max_weights} wires in total; raise max_weights if trusted")
        refs = []
        for ri, r in enumerate(ins):
            if isinstance(r, str):
                refs.append(r)
            elif isinstance(r, list) and len(r) == 2 and r[0] == "x":
                i = d.integer(r[1], f"{loc}.inputs[{ri}][1]")
                if not 0 <= i < n:
                    d.fail(f"{loc}.inputs[{ri}] reads input {i} but n_inputs = {n}")
                refs.append(("x", i))
            else:
                d.fail(f"{loc}.inputs[{ri}] must be a gate name or [\"x\", i], got {_short(r)}")
        weights = threshold = None
        if is_thr:
            weights = d.listof(g["weights"], f"{loc}.weights", max_len=len(refs), min_len=len(refs))
            for wi, v in enumerate(weights):
                d.integer(v, f"{loc}.weights[{wi}]")
            threshold = d.integer(g["threshold"], f"{loc}.threshold")
        try:
            built.append(DagGate(g["name"], g["type"], refs, weights, threshold))
        except ValueError as exc:
            d.fail(f"{loc}: {exc}")
    try:
        return DagCircuit(n, built, output)
    except ValueError as exc:
        d.fail(str(exc))


def load_circuit(path, *, max_bytes: int = MAX_FILE_BYTES, **limits):
    """Read a circuit written by :func:`save_circuit`, validating everything.

    Parameters
    ----------
    path : str or Path
    max_bytes : int
        Refuse larger files before reading them.
    **limits
        ``max_inputs``, ``max_gates``, ``max_weights`` for :func:`circuit_from_dict`.

    Returns
    -------
    ThresholdCircuit or DagCircuit

    Raises
    ------
    InvalidCircuitError
        Bad JSON, bad UTF-8, NaN/Infinity, too large, or any problem of
        :func:`circuit_from_dict`; the message starts with the file name.
    FileNotFoundError
        If the file does not exist.
    """
    path = Path(path)
    return circuit_from_dict(read_circuit_document(path, max_bytes=max_bytes, **limits),
                             where=f"{path}: ", **limits)


def read_circuit_document(path, *, max_bytes: int = MAX_FILE_BYTES, **limits):
    """The parsed JSON document of a circuit file, with the size limits of :func:`load_circuit`
    but before its field-by-field validation (so a caller can read the header, such as
    ``n_inputs`` and ``metadata``, and refuse work before building the circuit; pass the
    document to :func:`circuit_from_dict` next)."""
    from circuits.utils.documents import read_document
    from circuits.utils.errors import InvalidCircuitError

    path = Path(path)
    max_weights = limits.get("max_weights", MAX_CIRCUIT_WEIGHTS)
    max_gates = limits.get("max_gates", MAX_CIRCUIT_GATES)
    # a DAG wire ["x", i] is 3 JSON values, a gate ~8 plus its weights: anything beyond this
    # many values is refused before a single Python object is built
    max_values = 4 * int(max_weights) + 8 * int(max_gates) + 4096
    return read_document(path, error=InvalidCircuitError, max_bytes=max_bytes,
                         max_values=max_values, arrays=True)
