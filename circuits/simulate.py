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

from circuits import _kernels
from circuits.errors import DimensionError, InvalidCircuitError
from circuits.functions import BooleanFunction, as_boolean_function
from circuits.hypercube import bits_of, check_exhaustive, check_n_bits
from circuits.progress import progress_bar
from circuits.threshold import ThresholdCircuit

__all__ = ["truth_table", "count_ones", "count_disagreements", "evaluate", "Disagreements"]

_BLOCK = 1 << 12  # points per parallel block inside a kernel call


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
        return self.count == 0


def _as_circuit(circuit) -> ThresholdCircuit:
    if isinstance(circuit, ThresholdCircuit):
        return circuit
    to_layered = getattr(circuit, "to_threshold_circuit", None)
    if to_layered is not None:
        return to_layered()
    raise TypeError(f"circuit must be a ThresholdCircuit (or have .to_threshold_circuit()), got "
                    f"{type(circuit).__name__}")


def _circuit_kernel_args(c: ThresholdCircuit):
    return c.packed()


def _disagree_chunk(packed, spec, start: int, stop: int):
    """Count and first mismatch on [start, stop): one idempotent unit of work (picklable)."""
    wflat, tflat, sizes = packed
    kind, params, table = spec
    counts, first = _kernels._disagree_layered(wflat, tflat, sizes, start, stop, _BLOCK,
                                               kind, params, table)
    hits = first[first >= 0]
    return int(counts.sum()), (int(hits.min()) if hits.size else -1)


def _run(fn, n_points: int, *, executor=None, client=None, chunk_bits=None, progress=False):
    """Exact (count, first) over chunks of [0, n_points): see :func:`circuits.parallel.run_chunks`."""
    from circuits.parallel import COUNT_FIRST_IDENTITY, combine_count_first, run_chunks
    chunk = None if chunk_bits is None else 1 << check_n_bits(chunk_bits, name="chunk_bits")
    return run_chunks(fn, n_points, combine=combine_count_first, initial=COUNT_FIRST_IDENTITY,
                      executor=executor, client=client, chunk_size=chunk, progress=progress)


class _ChunkFn:
    """Picklable closure: ``fn(start, stop) -> (count, first)`` for executors and Dask."""

    def __init__(self, packed, spec):
        self.packed = packed
        self.spec = spec

    def __call__(self, start, stop):
        return _disagree_chunk(self.packed, self.spec, start, stop)


def count_disagreements(circuit, target, *, client=None, executor=None, chunk_bits=None,
                        progress: bool = False) -> Disagreements:
    """Exact number of points of {0,1}^N where ``circuit`` differs from ``target``.

    Parameters
    ----------
    circuit : ThresholdCircuit
    target : "ip", "parity", "majority", "and", "or", BooleanFunction or truth table
        Named targets and function objects are computed on the fly (no table is built).
    client, executor : optional
        A ``dask.distributed.Client`` or any ``concurrent.futures.Executor`` to spread chunks.

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
    fn = _ChunkFn(_circuit_kernel_args(c), f._spec())
    count, first = _run(fn, 1 << n, executor=executor, client=client, chunk_bits=chunk_bits,
                        progress=progress)
    cex = bits_of(first, n) if first >= 0 else None
    return Disagreements(int(count), cex, int(first), 1 << n)


def count_ones(circuit, *, client=None, executor=None, chunk_bits=None, progress: bool = False) -> int:
    """Exact number of points of {0,1}^N where the circuit outputs 1 (streams; O(1) memory).

    >>> from circuits.constructions import parity_depth2
    >>> count_ones(parity_depth2(5))
    16
    """
    c = _as_circuit(circuit)
    from circuits.functions import Constant
    res = count_disagreements(c, Constant(c.n_inputs, 0), client=client, executor=executor,
                              chunk_bits=chunk_bits, progress=progress)
    return res.count


def truth_table(circuit, *, allow_large: bool = False) -> np.ndarray:
    """The circuit's outputs on every point of {0,1}^N as uint8, in cube order.

    >>> from circuits.threshold import ThresholdCircuit
    >>> truth_table(ThresholdCircuit.single_gate([2, 1], 2)).tolist()
    [0, 1, 0, 1]
    """
    c = _as_circuit(circuit)
    n = check_exhaustive(c.n_inputs, allow_large=allow_large, what="truth_table()")
    wflat, tflat, sizes = _circuit_kernel_args(c)
    return _kernels._table_layered(wflat, tflat, sizes, 0, 1 << n, _BLOCK)


def evaluate(circuit, bits) -> np.ndarray:
    """Circuit outputs (uint8) on a batch of points given as bit rows of shape (n_points, N)."""
    c = _as_circuit(circuit)
    return c.evaluate(bits)
