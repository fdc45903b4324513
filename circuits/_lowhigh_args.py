"""Arguments of the low/high circuit kernels (``circuits._kernels``): the working dtype the
weight bound proves safe and the low block's size (private; re-exported by
``circuits.dispatch``)."""

from __future__ import annotations

import numpy as np

from circuits.threshold import ThresholdCircuit
from circuits.utils.errors import InvalidCircuitError

__all__ = ["work_dtype"]


# Working dtypes in increasing width; a circuit runs in the first one that holds +-B (see below).
_WORK_DTYPES = (np.dtype(np.int16), np.dtype(np.int32), np.dtype(np.int64))
_MAX_LOW_BITS = 12          # at most 2^12 points per tile (the low block)
_MIN_LOW_BITS = 6           # at least 2^6 points per tile, however wide layer 1 is
_LOW_TABLE_BYTES = 1 << 19  # the (g_1, 2^L) low table P should stay L2-resident
_TILE_BYTES = 1 << 20       # per-block byte tiles of a layer >= 3


def work_dtype(bound: int) -> np.dtype:
    """Narrowest integer dtype that holds every value in [-bound, bound] (int16, int32 or int64).

    Examples
    --------
    >>> [str(work_dtype(b)) for b in (32767, 32768, 2**31 - 1, 2**31)]
    ['int16', 'int32', 'int32', 'int64']
    """
    for dt in _WORK_DTYPES:
        if bound <= np.iinfo(dt).max:
            return dt
    raise InvalidCircuitError(f"pre-activation bound {bound} exceeds int64; scale the weights down")


def _low_bits(c: ThresholdCircuit, itemsize: int) -> int:
    """Bits L of the low block: 2^L points per tile, sized so the low table stays in cache."""
    n = c.n_inputs
    g1 = c.layers[0].n_gates
    wide = max([layer.n_gates for layer in c.layers[1:-1]], default=0)
    low = min(n, _MAX_LOW_BITS)
    while low > min(n, _MIN_LOW_BITS) and (g1 * itemsize << low > _LOW_TABLE_BYTES
                                           or 2 * wide << low > _TILE_BYTES):
        low -= 1
    return low


def _circuit_kernel_args(c: ThresholdCircuit):
    """``(wflat, tflat, sizes, L)`` for the circuit kernels, weights cast to the working dtype.

    Exactness: let B = ``c.preactivation_bound`` = max over layers and gates of
    sum_i |w_i| + |t|.  Every number a kernel stores in the working dtype is a weight, a
    threshold, a partial sum of one gate's weights minus (0 or) its threshold, or minus a
    partial sum; each has magnitude <= B.  The working dtype is the narrowest of int16 / int32 /
    int64 whose maximum is >= B, so no stored value can overflow (a circuit with B > 2^63 - 1
    is refused when it is built).  Comparisons are integer comparisons: ties are exact.
    """
    wflat, tflat, sizes = c.packed()
    dt = work_dtype(c.preactivation_bound)
    return (np.ascontiguousarray(wflat, dtype=dt), np.ascontiguousarray(tflat, dtype=dt),
            np.ascontiguousarray(sizes, dtype=np.int64), _low_bits(c, dt.itemsize))


def _readonly(a: np.ndarray) -> np.ndarray:
    """A read-only view, so every call hands numba the same array type (one compiled kernel)."""
    v = a.view()
    v.setflags(write=False)
    return v


def _wire_slots(sizes, first: int = 0) -> int:
    return int(sum(int(sizes[i]) * int(sizes[i + 1]) for i in range(first, len(sizes) - 1)))
