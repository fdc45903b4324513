"""The Walsh–Hadamard transform W = H v, exact for integer input (THEORY.md §1.1).

H[u, z] = chi_u(z) = (-1)^popcount(u & z) is the Sylvester matrix (``scipy.linalg.hadamard``);
applying the transform twice gives 2^N v.  Frequencies u use the cube convention of
:mod:`circuits.hypercube`.  Integer transforms are exact: the wrapper proves max|v| * 2^N fits
the working dtype (int32 or int64) before it runs and refuses (or widens) otherwise.  The
kernels are :mod:`circuits.analysis._kernels_spectral`; spectra of Boolean functions built on
this transform are :mod:`circuits.analysis.spectral`.
"""

from __future__ import annotations

import numpy as np

from circuits.analysis import _kernels_spectral as _ks
from circuits.utils.errors import DimensionError, InvalidCircuitError
from circuits.hypercube import check_n_bits

__all__ = ["walsh_hadamard", "walsh_hadamard_", "MAX_TRANSFORM_BITS"]

#: Largest transform length exponent accepted (indices are int64; memory decides before this).
MAX_TRANSFORM_BITS = 40
_INT32_MAX = (1 << 31) - 1
_INT64_MAX = (1 << 63) - 1
#: Working set per thread for the blocked transform (bytes): L2-resident blocks.
_BLOCK_BYTES = 1 << 18
#: Least contiguous bytes per row segment in the strip sweeps (cache lines fetched together).
_MIN_ROW_BYTES = 256



def _length_bits(n_values: int, name: str) -> int:
    if n_values == 0 or n_values & (n_values - 1):
        lower = 1 << max(0, n_values.bit_length() - 1)
        raise DimensionError(f"{name} must have a power-of-two length 2^N, got length {n_values}; "
                             f"pad with zeros to {lower * 2} or truncate to {lower}")
    return check_n_bits(n_values.bit_length() - 1, name=f"log2(len({name}))",
                        maximum=MAX_TRANSFORM_BITS)


def _max_abs_int(v: np.ndarray) -> int:
    if v.size == 0:
        return 0
    return max(abs(int(v.max())), abs(int(v.min())))


_POOL = None
_POOL_SIZE = 0
#: Arrays shorter than this are transformed by one thread (dispatch costs more than it saves).
_PARALLEL_MIN = 1 << 16


def _pool(n_threads: int):
    """A lazily created, process-wide thread pool for the nogil kernels."""
    global _POOL, _POOL_SIZE
    if _POOL is None or _POOL_SIZE != n_threads:
        from concurrent.futures import ThreadPoolExecutor
        if _POOL is not None:
            _POOL.shutdown(wait=True)
        _POOL = ThreadPoolExecutor(max_workers=n_threads, thread_name_prefix="depthsep-fwht")
        _POOL_SIZE = n_threads
    return _POOL


def _split(n_items: int, n_parts: int):
    per = -(-n_items // n_parts)
    return [(i, min(n_items, i + per)) for i in range(0, n_items, per)]


#: Transforms of at most 2^_NUMPY_MAX_BITS values run as numpy passes: the numba kernels then
#: need not be compiled in a process that only transforms small arrays (their compile took
#: 2.1 s of the main job's 14 s first run), and numpy's passes cost well under a millisecond.
_NUMPY_MAX_BITS = 12


def _numpy_transform(v: np.ndarray, N: int) -> None:
    """In-place transform by numpy passes p = 0 .. N-1, each a + b, a - b: the same operations in
    the same order as the numba kernels (their radix-8 and radix-4 steps are passes in
    increasing order), so float64 results are bit-identical and integer ones exact (bounded)."""
    for p in range(N):
        x = v.reshape(-1, 2, 1 << p)
        a = x[:, 0, :].copy()
        x[:, 0, :] += x[:, 1, :]
        np.subtract(a, x[:, 1, :], out=x[:, 1, :])


def _run_transform(v: np.ndarray, N: int) -> None:
    """Blocked in-place transform of a validated C-contiguous float64/int32/int64 array.

    Plan: passes below ``lo`` inside L2-sized contiguous blocks, then the remaining passes in
    as few sweeps as fit the per-thread buffer budget (two sweeps over memory for 2^24 and
    2^26 values).  Threads (numba's thread count) own disjoint blocks / strips.
    """
    if N == 0:
        return
    if N <= _NUMPY_MAX_BITS:
        _numpy_transform(v, N)
        return
    from numba import get_num_threads
    n_threads = max(1, get_num_threads()) if v.shape[0] >= _PARALLEL_MIN else 1
    budget_bits = max(3, (_BLOCK_BYTES // v.itemsize).bit_length() - 1)   # elements per block
    lo = min(N, budget_bits)
    steps = [("blocks", lo, 0, 0, v.shape[0] >> lo)]
    grouped = v.dtype.kind == "i"           # see _kernels_spectral._fwht8_run
    p = lo
    min_width = max(8, _MIN_ROW_BYTES // v.itemsize)   # contiguous values per row segment
    cap = 1024 // v.itemsize
    while p < N:
        rest = N - p
        max_k = max(1, budget_bits - (min_width.bit_length() - 1))
        n_sweeps = -(-rest // max_k)
        k = -(-rest // n_sweeps)
        width = min(1 << p, max(min_width, 1 << max(0, budget_bits - k)), cap)
        steps.append(("strips", p, k, width, (v.shape[0] >> (p + k)) * ((1 << p) // width)))
        p += k
    if n_threads == 1:
        for kind, a, k, width, n_items in steps:
            if kind == "blocks":
                _ks._fwht_blocks(v, a, 0, n_items, grouped)
            else:
                buf = np.empty((1 << k) * width, dtype=v.dtype)
                _ks._fwht_strips(v, a, k, width, 0, n_items, buf)
        return
    pool = _pool(n_threads)
    for kind, a, k, width, n_items in steps:
        parts = _split(n_items, n_threads)
        if kind == "blocks":
            futs = [pool.submit(_ks._fwht_blocks, v, a, s, e, grouped) for s, e in parts]
        else:
            futs = [pool.submit(_ks._fwht_strips, v, a, k, width, s, e,
                                np.empty((1 << k) * width, dtype=v.dtype)) for s, e in parts]
        for f in futs:
            f.result()


def _check_int_bound(max_abs: int, N: int, dtype, name: str) -> None:
    bound = max_abs << N
    limit = _INT32_MAX if np.dtype(dtype) == np.int32 else _INT64_MAX
    if bound > limit:
        raise InvalidCircuitError(
            f"{name}: the transform could overflow {np.dtype(dtype).name}: max|v| * 2^N = "
            f"{max_abs} * 2^{N} = {bound} > {limit}; use dtype=np.int64 (exact up to 2^63 - 1) or "
            f"dtype=np.float64 (exact only while all partial sums stay below 2^53)")


def walsh_hadamard_(values: np.ndarray) -> np.ndarray:
    """In-place unnormalised Walsh–Hadamard transform ``values <- H values``; returns ``values``.

    Parameters
    ----------
    values : numpy.ndarray
        Writable, C-contiguous, 1-D, length 2^N, dtype float64, int32 or int64.  Integer arrays
        are transformed only when ``max|values| * 2^N`` provably fits the dtype (int32 is exact
        for +-1 input up to N = 30).

    Raises
    ------
    DimensionError
        Length not a power of two, or not 1-D.
    InvalidCircuitError
        Integer overflow would be possible (the message gives the bound and the fix).
    TypeError
        Not a writable C-contiguous ndarray of a supported dtype.

    Examples
    --------
    >>> v = np.array([1, 0, 0, 0], dtype=np.int64)   # delta at z = 0: all Walsh values 1
    >>> walsh_hadamard_(v).tolist()
    [1, 1, 1, 1]
    >>> walsh_hadamard_(v).tolist()                  # applying twice gives 2^N v
    [4, 0, 0, 0]
    """
    if not isinstance(values, np.ndarray):
        raise TypeError(f"values must be a numpy.ndarray for the in-place transform, got "
                        f"{type(values).__name__}; use walsh_hadamard(values) for a new array")
    if values.ndim != 1:
        raise DimensionError(f"values must be 1-dimensional (length 2^N), got shape {values.shape}")
    if values.dtype not in (np.float64, np.int32, np.int64):
        raise TypeError(f"values must have dtype float64, int32 or int64 for the in-place "
                        f"transform, got {values.dtype}; use walsh_hadamard(values) instead")
    if not values.flags.c_contiguous or not values.flags.writeable:
        raise TypeError("values must be writable and C-contiguous; pass np.ascontiguousarray(values) "
                        "or use walsh_hadamard(values), which returns a new array")
    N = _length_bits(values.shape[0], "values")
    if values.dtype != np.float64:
        _check_int_bound(_max_abs_int(values), N, values.dtype, "values")
    _run_transform(values, N)
    return values


def walsh_hadamard(values, *, dtype=None) -> np.ndarray:
    """Unnormalised Walsh–Hadamard transform ``W = H v`` of a length-2^N vector (a new array).

    ``W[u] = sum_z v[z] (-1)^popcount(u & z)``; ``H = scipy.linalg.hadamard(2^N)``; applying the
    transform twice gives ``2^N v``.  Divide by 2^N for Fourier coefficients (module docstring).

    Parameters
    ----------
    values : array_like
        1-D, length 2^N (any N up to memory).
    dtype : {None, numpy.int32, numpy.int64, numpy.float64}, optional
        Working and result dtype.  By default the *dtype family* is kept: floating input gives
        float64; integer (and bool) input gives int32 when the input is at most 32 bits wide and
        ``max|v| * 2^N < 2^31`` (so +-1 input is int32 up to N = 30), otherwise int64 when
        ``max|v| * 2^N < 2^63``.  An explicit integer dtype is used only when that bound proves it
        exact; otherwise an error says which dtype to use.

    Returns
    -------
    numpy.ndarray
        The transform, exact for integer dtypes.

    Raises
    ------
    DimensionError
        Not 1-D or length not a power of two.
    InvalidCircuitError
        Integer overflow would be possible; non-finite floats.

    Examples
    --------
    >>> walsh_hadamard([1, -1, -1, 1]).tolist()       # chi_3 = (-1)^(z0 + z1): all weight on u = 3
    [0, 0, 0, 4]
    >>> walsh_hadamard(np.array([1.0, 2.0])).tolist()
    [3.0, -1.0]
    >>> walsh_hadamard(np.array([1, -1], dtype=np.int32)).dtype.name
    'int32'
    """
    v = np.asarray(values)
    if v.ndim != 1:
        raise DimensionError(f"values must be 1-dimensional (length 2^N), got shape {v.shape}")
    N = _length_bits(v.shape[0], "values")
    kind = v.dtype.kind
    if kind not in "biuf":
        raise InvalidCircuitError(f"values must be numeric (bool, integer or float), got dtype {v.dtype}")
    if dtype is not None:
        dtype = np.dtype(dtype)
        if dtype not in (np.int32, np.int64, np.float64):
            raise TypeError(f"dtype must be numpy.int32, numpy.int64 or numpy.float64, got {dtype}")
    if kind == "f":
        if v.size and not np.isfinite(v.max() - v.min()):
            raise InvalidCircuitError("values contain NaN or infinity; the transform needs finite values")
        if dtype is not None and dtype != np.float64:
            if v.size and not np.array_equal(v, np.round(v)):
                raise InvalidCircuitError(f"values are not integers, so dtype={dtype.name} would "
                                          f"truncate them; use dtype=np.float64")
            max_abs = int(np.abs(v).max()) if v.size else 0
            _check_int_bound(max_abs, N, dtype, "values")
            work = dtype
        else:
            work = np.dtype(np.float64)
    else:
        max_abs = _max_abs_int(v)
        if dtype is None:
            if v.dtype.itemsize <= 4 and kind != "u" or v.dtype.itemsize < 4:
                work = np.dtype(np.int32) if (max_abs << N) <= _INT32_MAX else np.dtype(np.int64)
            else:
                work = np.dtype(np.int64)
        else:
            work = dtype
        if work != np.float64:
            _check_int_bound(max_abs, N, work, "values")
    out = np.array(v, dtype=work, order="C", copy=True)
    _run_transform(out, N)
    return out
