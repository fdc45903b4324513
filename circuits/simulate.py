"""Exhaustive evaluation of threshold circuits over the whole hypercube.

Public wrappers validate, pick the kernel and combine exact integer partial results; the
kernels in ``circuits._kernels`` only loop.  Counting routines stream: memory beyond the
requested output is O(chunk), never the 2^N x N bit matrix nor the 2^N x w pre-activations.

Chunked execution: the index range [0, 2^N) is cut into chunks, each chunk runs the same
numba kernel, and integer partial results are summed.  Locally one call uses numba's thread
pool; with ``executor=`` (any ``concurrent.futures.Executor``) or ``client=`` (a
``dask.distributed.Client``) chunks are submitted as independent, idempotent tasks.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from circuits import _bitsliced_plan as _bplan, _kernels, _kernels_bitsliced as _bits
from circuits.dispatch import (_as_circuit, _bits_run, _circuit_kernel_args, _plan_of,
                               _readonly, _wire_slots)
from circuits.utils.errors import DimensionError
from circuits.functions import as_boolean_function
from circuits.hypercube import as_bit_rows, bits_of, check_exhaustive, check_n_bits
from circuits.utils.parallel import DEFAULT

__all__ = ["truth_table", "count_ones", "count_disagreements", "evaluate", "evaluate_indices",
           "Disagreements"]

class Disagreements(NamedTuple):
    """Result of :func:`count_disagreements`: exact count and the first counterexample.

    ``counterexample`` is the uint8 bit vector of the smallest index k where the circuit and
    the target differ (``None`` if they agree everywhere); ``index`` is that k (or -1).
    """

    count: int
    counterexample: "np.ndarray | None"
    index: int
    n_points: int

    @property
    def agrees(self) -> bool:
        """True iff the circuit equals the target on every input."""
        return self.count == 0


_NO_PARAMS = _readonly(np.zeros(1, dtype=np.int64))
_NO_TABLE = _readonly(np.zeros(1, dtype=np.uint8))
_NO_OUT = np.zeros(1, dtype=np.uint8)   # never written: only truth-table mode writes ``out``
_NO_INDICES = np.zeros(1, dtype=np.int64)

# Jobs below these sizes run in the calling thread: entering numba's parallel region costs more
# than they do (tens of ms on a busy machine).  Cube work counts, per point, the layer-1 gates
# plus the wires of layers >= 2 (the low/high split makes layer-1 wires nearly free); rows work
# counts every wire.  Both thresholds are about 5 ms of one core.  Tests set them to 0 (always
# parallel) and to a huge value (always serial) to run both paths.
_SERIAL_CUBE_WORK = 1 << 28
_SERIAL_ROWS_WORK = 1 << 25



def _cube(wflat, tflat, sizes, geom, params, table, out):
    """Run the cube kernel on [start, stop) = geom[1:3]: serial for small jobs, else parallel.

    Returns ``(count, first)`` (meaningless in truth-table mode, ``geom[3] < 0``).
    """
    low, start, stop = int(geom[0]), int(geom[1]), int(geom[2])
    if stop <= start:
        return 0, -1
    if (stop - start) * (int(sizes[1]) + _wire_slots(sizes, 1)) < _SERIAL_CUBE_WORK:
        n_in, g1 = int(sizes[0]), int(sizes[1])
        P = _kernels._low_table(wflat, tflat, n_in, g1, low)
        WhT = _kernels._high_columns(wflat, n_in, g1, low)
        count, first = _kernels._cube_block(wflat, tflat, sizes, P, WhT, geom, start >> low,
                                            ((stop - 1) >> low) + 1, params, table, out)
        return int(count), int(first)
    nb = min(((stop - 1) >> low) + 1 - (start >> low), 64)
    counts = np.zeros(nb, dtype=np.int64)
    first = np.full(nb, -1, dtype=np.int64)
    _kernels._cube_run(wflat, tflat, sizes, geom, params, table, out, counts, first)
    hits = first[first >= 0]
    return int(counts.sum()), (int(hits.min()) if hits.size else -1)


def _rows(wflat, tflat, sizes, bits, idx, out):
    """Run the rows kernel on ``out.shape[0]`` points: serial for small jobs, else on threads.

    Large jobs are cut into tile-aligned ranges that ``numba.get_num_threads()`` Python threads
    (:func:`circuits.utils._threads.run_ranges`, thread count from the free CPUs) take in turn, each running the
    serial, GIL-free ``_rows_block`` on its range (each range writes only its slice of
    ``out``).  This replaced a ``prange`` kernel: a first run then compiles the serial block
    only (the parallel variant cost 2.3 s of the main job's first run, the block 1.1 s)."""
    from circuits.utils._threads import run_ranges, work_threads
    m = out.shape[0]
    tile = int(_kernels._rows_tile_len(sizes))
    n_tiles = -(-m // tile)
    threads = 1 if m * _wire_slots(sizes) < _SERIAL_ROWS_WORK else work_threads(n_tiles)
    if threads == 1:
        _kernels._rows_block(wflat, tflat, sizes, bits, idx, out, 0, m)
        return
    n_chunks = min(n_tiles, 4 * threads)
    bounds = [(min(m, (i * n_tiles // n_chunks) * tile),
               min(m, ((i + 1) * n_tiles // n_chunks) * tile)) for i in range(n_chunks)]
    run_ranges(lambda lo, hi: _kernels._rows_block(wflat, tflat, sizes, bits, idx, out, lo, hi),
               bounds, threads)


def _disagree_chunk(packed, spec, start: int, stop: int):
    """Count and first mismatch on [start, stop): one idempotent unit of work (picklable)."""
    if isinstance(packed, _bplan.Plan):
        return _bits_run(packed, spec, start, stop, _NO_OUT)
    wflat, tflat, sizes, low = packed
    kind, params, table = spec
    geom = np.array([low, start, stop, kind], dtype=np.int64)
    params = _readonly(np.ascontiguousarray(params, dtype=np.int64))
    table = _readonly(np.ascontiguousarray(table, dtype=np.uint8))
    return _cube(wflat, tflat, sizes, geom, params, table, _NO_OUT)


def _run(fn, n_points: int, *, executor=None, client=None, chunk_bits=None, progress=False,
         desc=None, max_seconds=DEFAULT, timeout=120.0):
    """Exact (count, first) over chunks of [0, n_points): see :func:`circuits.utils.parallel.run_chunks`."""
    from circuits.utils.parallel import COUNT_FIRST_IDENTITY, combine_count_first, run_chunks
    chunk = None if chunk_bits is None else 1 << check_n_bits(chunk_bits, name="chunk_bits")
    return run_chunks(fn, n_points, combine=combine_count_first, initial=COUNT_FIRST_IDENTITY,
                      executor=executor, client=client, chunk_size=chunk, progress=progress,
                      desc=desc, max_seconds=max_seconds, timeout=timeout)


class _ChunkFn:
    """Picklable closure: ``fn(start, stop) -> (count, first)`` for executors and Dask.

    ``first_slice``: the bit-sliced kernels work in planes of 4096 points and run a plane in
    microseconds, so a run starts with 64 planes rather than the runner's default 1024 points
    (fewer calls on a cube of a few milliseconds; Ctrl-C stays within a slice)."""

    def __init__(self, packed, spec):
        self.packed = packed
        self.spec = spec
        self.first_slice = 64 * _bits.LANES if isinstance(packed, _bplan.Plan) else None

    def __call__(self, start, stop):
        return _disagree_chunk(self.packed, self.spec, start, stop)


def count_disagreements(circuit, target, *, client=None, executor=None, chunk_bits=None,
                        progress: bool = False, max_seconds=DEFAULT,
                        timeout: "float | None" = 120.0, kernel: str = "auto") -> Disagreements:
    """Exact number of points of {0,1}^N where ``circuit`` differs from ``target``.

    Parameters
    ----------
    circuit : ThresholdCircuit
    target : "ip", "parity", "majority", "and", "or", BooleanFunction or truth table
        Named targets and function objects are computed on the fly (no table is built).
    client, executor : optional
        A ``dask.distributed.Client`` or any ``concurrent.futures.Executor`` to spread chunks.
    chunk_bits : int, optional
        Chunks of 2^chunk_bits points (default chosen from N).
    progress : bool
        Show a progress bar over points, with an ETA (stderr; off by default).
    max_seconds : float or None
        Refuse (:class:`~circuits.utils.errors.RunTooLongError`, with the estimate) a local run
        estimated, from a fraction of a second of calibration on this circuit, to take longer.
        Default ``$DEPTHSEP_MAX_SECONDS`` or 600; ``None``: no limit.  See
        :func:`circuits.utils.parallel.run_chunks`.
    timeout : float or None
        Dask only: seconds without any worker or scheduler before giving up
        (:class:`~circuits.utils.errors.ClusterLostError`).
    kernel : {"auto", "fused", "generic", "bitsliced", "lowhigh"}
        Exhaustive kernel; ``"auto"`` picks as :func:`~circuits.dispatch.kernel_plan` says
        (results are identical).
        Either way the cube is walked in slices, so Ctrl-C raises ``KeyboardInterrupt`` within
        about 0.2 s.

    Returns
    -------
    Disagreements
        ``(count, counterexample, index, n_points)``.

    Examples
    --------
    >>> from circuits.constructions import ip_depth3
    >>> count_disagreements(ip_depth3(3), "ip").count
    0
    """
    c = _as_circuit(circuit)
    n = check_n_bits(c.n_inputs, name="circuit.n_inputs")
    f = as_boolean_function(target, n)
    fn = _ChunkFn(_plan_of(c, kernel, counting=True)[1], f._spec())
    count, first = _run(fn, 1 << n, executor=executor, client=client, chunk_bits=chunk_bits,
                        progress=progress, desc=f"count_disagreements on 2^{n} points",
                        max_seconds=max_seconds, timeout=timeout)
    cex = bits_of(first, n) if first >= 0 else None
    return Disagreements(int(count), cex, int(first), 1 << n)


def count_ones(circuit, *, client=None, executor=None, chunk_bits=None, progress: bool = False,
               max_seconds=DEFAULT, timeout: "float | None" = 120.0, kernel: str = "auto") -> int:
    """Exact number of points of {0,1}^N where the circuit outputs 1 (streams; O(1) memory).

    Parameters
    ----------
    circuit : ThresholdCircuit or DagCircuit
        The circuit.
    client : dask.distributed.Client, optional
        Spread the chunks over a Dask cluster (counts are added exactly).
    executor : concurrent.futures.Executor, optional
        Spread the chunks over an executor.
    chunk_bits : int, optional
        Chunks of 2^chunk_bits points (default chosen from N).
    progress : bool
        Show a progress bar over points, with an ETA (stderr; off by default).
    max_seconds : float or None
        Limit on the estimated run time, as in :func:`count_disagreements`.
    timeout : float or None
        Dask only, as in :func:`count_disagreements`.
    kernel : {"auto", "fused", "generic", "bitsliced", "lowhigh"}
        Exhaustive kernel, as in :func:`count_disagreements`.

    Examples
    --------
    >>> from circuits.constructions import parity_depth2
    >>> count_ones(parity_depth2(5))
    16
    """
    c = _as_circuit(circuit)
    from circuits.functions import Constant
    res = count_disagreements(c, Constant(c.n_inputs, 0), client=client, executor=executor,
                              chunk_bits=chunk_bits, progress=progress, max_seconds=max_seconds,
                              timeout=timeout, kernel=kernel)
    return res.count


class _TableFn:
    """``fn(start, stop)``: writes the circuit's outputs on [start, stop) into ``out``."""

    def __init__(self, packed, out):
        self.packed, self.out = packed, out

    def __call__(self, start, stop):
        if isinstance(self.packed, _bplan.Plan):
            _bits_run(self.packed, (-1, _NO_PARAMS, _NO_TABLE), start, stop, self.out[start:stop])
            return
        wflat, tflat, sizes, low = self.packed
        geom = np.array([low, start, stop, -1], dtype=np.int64)
        _cube(wflat, tflat, sizes, geom, _NO_PARAMS, _NO_TABLE, self.out[start:stop])


def _nothing(acc, part):
    return None


def truth_table(circuit, *, allow_large: bool = False, progress: bool = False,
                max_seconds=DEFAULT, kernel: str = "auto") -> np.ndarray:
    """The circuit's outputs on every point of {0,1}^N as uint8, in cube order.

    Runs in slices (Ctrl-C within ~0.2 s).

    Parameters
    ----------
    circuit : ThresholdCircuit or DagCircuit
        The circuit.
    allow_large : bool
        Allow materialising more than 2^24 values (default False: refuse, with a message giving
        the memory estimate).
    progress : bool
        Show a progress bar over points, with an ETA.
    max_seconds : float or None
        Limit on the estimated run time, as in :func:`count_disagreements`.
    kernel : {"auto", "fused", "generic", "bitsliced", "lowhigh"}
        Exhaustive kernel, as in :func:`count_disagreements`.

    Examples
    --------
    >>> from circuits.threshold import ThresholdCircuit
    >>> truth_table(ThresholdCircuit.single_gate([2, 1], 2)).tolist()
    [0, 1, 0, 1]
    """
    c = _as_circuit(circuit)
    n = check_exhaustive(c.n_inputs, allow_large=allow_large, what="truth_table()")
    from circuits.utils.parallel import run_chunks
    out = np.empty(1 << n, dtype=np.uint8)
    run_chunks(_TableFn(_plan_of(c, kernel)[1], out), 1 << n, combine=_nothing, initial=None,
               progress=progress, desc=f"truth_table of 2^{n} points", max_seconds=max_seconds)
    return out


def evaluate(circuit, bits) -> np.ndarray:
    """Circuit outputs (uint8) on a batch of points given as bit rows of shape (n_points, N).

    Exact integer arithmetic in the working dtype of :func:`_circuit_kernel_args`; a numba
    kernel evaluates tiles of points layer by layer, in parallel.

    Parameters
    ----------
    circuit : ThresholdCircuit
    bits : array_like of 0/1, shape (n_points, N) or (N,)
        Bit i of a point is column i (the cube convention of :mod:`circuits.hypercube`).

    Returns
    -------
    numpy.ndarray
        uint8 of shape (n_points,).

    Raises
    ------
    DimensionError
        If ``bits`` does not have N columns.
    InvalidCircuitError
        If ``bits`` holds values other than 0 and 1.

    Examples
    --------
    >>> from circuits.threshold import ThresholdCircuit
    >>> xor = ThresholdCircuit.depth2([[1, 1], [1, 1]], [1, 2], [1, -1], 1)
    >>> evaluate(xor, [[0, 0], [1, 0], [0, 1], [1, 1]]).tolist()
    [0, 1, 1, 0]
    """
    c = _as_circuit(circuit)
    z = as_bit_rows(bits, c.n_inputs)
    if z.shape[0] == 0:
        return np.zeros(0, dtype=np.uint8)
    wflat, tflat, sizes, _ = _circuit_kernel_args(c)
    out = np.empty(z.shape[0], dtype=np.uint8)
    _rows(wflat, tflat, sizes, z, _NO_INDICES, out)
    return out


def evaluate_indices(circuit, k) -> np.ndarray:
    """Circuit outputs (uint8) at cube points given by their indices ``k`` (bit i = (k >> i) & 1).

    Parameters
    ----------
    circuit : ThresholdCircuit
        With N <= 62 inputs (indices are int64).
    k : array_like of int
        Point indices in [0, 2^N), any shape.

    Returns
    -------
    numpy.ndarray
        uint8 of the same shape as ``k``.

    Raises
    ------
    DimensionError
        If the circuit has more than 62 inputs or an index lies outside [0, 2^N).
    TypeError
        If ``k`` is not an integer array.

    Examples
    --------
    >>> from circuits.threshold import ThresholdCircuit
    >>> evaluate_indices(ThresholdCircuit.single_gate([2, 1], 2), [0, 1, 2, 3]).tolist()
    [0, 1, 0, 1]
    """
    c = _as_circuit(circuit)
    n = c.n_inputs
    if n > 62:
        raise DimensionError(f"evaluate_indices needs N <= 62 inputs (int64 indices), the circuit "
                             f"has {n}; pass bit rows to evaluate() instead")
    arr = np.asarray(k)
    if arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.integer):
        raise TypeError(f"k must hold integer point indices, got dtype {arr.dtype}; use "
                        f"circuits.index_of(bits) to turn bit rows into indices")
    if arr.dtype == np.uint64 and arr.size and arr.max() > np.iinfo(np.int64).max:
        raise DimensionError(f"k must lie in [0, 2^{n}), found {int(arr.max())}")
    flat = np.ascontiguousarray(arr, dtype=np.int64).reshape(-1)
    if flat.size and (flat.min() < 0 or flat.max() >= (1 << n)):
        bad = flat[(flat < 0) | (flat >= (1 << n))][0]
        raise DimensionError(f"k must lie in [0, 2^{n}) for a circuit with {n} inputs, found "
                             f"{int(bad)}")
    out = np.empty(flat.size, dtype=np.uint8)
    if flat.size:
        wflat, tflat, sizes, _ = _circuit_kernel_args(c)
        _rows(wflat, tflat, sizes, np.zeros((0, n), dtype=np.uint8), flat, out)
    return out.reshape(arr.shape)
