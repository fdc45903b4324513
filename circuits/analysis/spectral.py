"""Walsh–Hadamard transform and Fourier analysis of Boolean functions, exact by default.

**Normalisation (stated once; THEORY.md §1.1).** For F: {0,1}^N -> {+-1} (a 0/1 function f
enters as F = (-1)^f = 1 - 2f) the *Walsh value* is the unnormalised sum

    W_F(u) = sum_z F(z) chi_u(z),      chi_u(z) = (-1)^popcount(u & z),

and the *Fourier coefficient* is F^(u) = 2^-N W_F(u), so that F = sum_u F^(u) chi_u and
(Parseval) sum_u F^(u)^2 = 1.  The transform :func:`walsh_hadamard` computes W = H v for any
vector v of length 2^N with H[u, z] = chi_u(z) (the Sylvester matrix, ``scipy.linalg.hadamard``);
applying it twice gives 2^N v.  Frequencies u use the cube convention of
:mod:`circuits.hypercube` (bit i of u = (u >> i) & 1).

**Exactness.** Integer transforms are exact: the wrapper proves max|v| * 2^N fits the working
dtype (int32 or int64) before it runs and refuses (or widens) otherwise.  Walsh values of Boolean
functions are integers (|W| <= 2^N) and are returned as int64; normalised coefficients are
W / 2^N, exact in float64.  Correlations, influences and level weights are computed from integer
counts.

A function ``f`` may be given as a truth table (0/1, length 2^N, cube order), a
:class:`~circuits.functions.BooleanFunction` or a :class:`~circuits.threshold.ThresholdCircuit`
(evaluated exhaustively with :func:`circuits.simulate.truth_table`).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from numbers import Integral, Real
from typing import NamedTuple

import numpy as np

from circuits.analysis import _kernels_spectral as _ks
from circuits.utils.errors import DimensionError, InvalidCircuitError
from circuits.functions import BooleanFunction, TruthTable, as_boolean_function, as_truth_table
from circuits.hypercube import check_n_bits, points
from circuits.threshold import ThresholdCircuit, as_int64_array

__all__ = [
    "walsh_hadamard", "walsh_hadamard_", "WalshSpectrum", "walsh_spectrum",
    "fourier_coefficients", "degree", "spectral_norm", "influences", "total_influence",
    "noise_sensitivity", "Correlation", "correlation", "GateCorrelation", "gate_ip_correlation",
]

#: Largest transform length exponent accepted (indices are int64; memory decides before this).
MAX_TRANSFORM_BITS = 40
_INT32_MAX = (1 << 31) - 1
_INT64_MAX = (1 << 63) - 1
#: Working set per thread for the blocked transform (bytes): L2-resident blocks.
_BLOCK_BYTES = 1 << 18
#: Least contiguous bytes per row segment in the strip sweeps (cache lines fetched together).
_MIN_ROW_BYTES = 256


# ----------------------------------------------------------------------------------------------
# the transform
# ----------------------------------------------------------------------------------------------

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


def _run_transform(v: np.ndarray, N: int) -> None:
    """Blocked in-place transform of a validated C-contiguous float64/int32/int64 array.

    Plan: passes below ``lo`` inside L2-sized contiguous blocks, then the remaining passes in
    as few sweeps as fit the per-thread buffer budget (two sweeps over memory for 2^24 and
    2^26 values).  Threads (numba's thread count) own disjoint blocks / strips.
    """
    if N == 0:
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


# ----------------------------------------------------------------------------------------------
# Boolean functions given as tables, functions or circuits
# ----------------------------------------------------------------------------------------------

def _is_circuit(f) -> bool:
    return isinstance(f, ThresholdCircuit) or hasattr(f, "to_threshold_circuit")


def _table_of(f, *, name: str = "f", allow_large: bool = False) -> np.ndarray:
    """uint8 truth table of a circuit, BooleanFunction or 0/1 array (validated)."""
    if _is_circuit(f):
        from circuits.simulate import truth_table
        return truth_table(f, allow_large=allow_large)
    if isinstance(f, BooleanFunction):
        return f.truth_table(allow_large=allow_large)
    if isinstance(f, str):
        raise TypeError(f"{name}: a named function needs its size; pass e.g. "
                        f"circuits.InnerProductMod2(n) or circuits.Parity(N) instead of {f!r}")
    return as_truth_table(f, name=name)


def _signs_int(table: np.ndarray) -> np.ndarray:
    """(-1)^f as int32 (N <= 30, exact transform) or int64."""
    dt = np.int32 if table.shape[0] <= (1 << 30) else np.int64
    s = np.empty(table.shape[0], dtype=dt)
    np.multiply(table, dt(-2), out=s)          # two passes: 1 - 2 f
    s += 1
    return s


@dataclass(frozen=True, eq=False)
class WalshSpectrum:
    """The exact Walsh spectrum of a Boolean function and the quantities derived from it.

    Attributes
    ----------
    n_inputs : int
        N.
    walsh : numpy.ndarray
        int64 Walsh values W_F(u) of F = (-1)^f, u in cube order (read-only).
    level_sums : tuple of int
        ``level_sums[k] = sum_{|u| = k} W_F(u)^2`` (exact; they add up to 4^N).

    Examples
    --------
    >>> s = walsh_spectrum([0, 1, 1, 0])          # XOR of two bits
    >>> s.walsh.tolist(), s.degree, s.spectral_norm
    ([0, 0, 0, 4], 2, 1.0)
    >>> s.level_weights.tolist(), s.total_influence
    ([0.0, 0.0, 1.0], 2.0)
    """

    n_inputs: int
    walsh: np.ndarray
    level_sums: tuple
    l1_walsh: int
    degree: int

    @property
    def coefficients(self) -> np.ndarray:
        """Normalised Fourier coefficients F^(u) = W_F(u) / 2^N (float64, exact)."""
        return self.walsh / float(1 << self.n_inputs)

    @property
    def level_weights(self) -> np.ndarray:
        """W^k = sum_{|u| = k} F^(u)^2 as float64 (the exact values are ``level_sums / 4^N``)."""
        return np.array([float(Fraction(s, 1 << (2 * self.n_inputs))) for s in self.level_sums])

    @property
    def spectral_norm(self) -> float:
        """The Fourier L1 norm sum_u |F^(u)| (= l1_walsh / 2^N, exact dyadic value)."""
        return float(Fraction(self.l1_walsh, 1 << self.n_inputs))

    @property
    def total_influence(self) -> float:
        """I(f) = sum_u |u| F^(u)^2 (exact dyadic rational, returned as float)."""
        return float(self.total_influence_exact)

    @property
    def total_influence_exact(self) -> Fraction:
        return Fraction(sum(k * s for k, s in enumerate(self.level_sums)), 1 << (2 * self.n_inputs))

    def influences(self) -> np.ndarray:
        """Inf_i(f) = sum_{u : u_i = 1} F^(u)^2 for i < N (float64; exact dyadic values)."""
        N = self.n_inputs
        sq = self.walsh.astype(np.int64) ** 2
        out = np.empty(N, dtype=np.float64)
        for i in range(N):
            part = int(sq.reshape(-1, 2, 1 << i)[:, 1, :].sum(dtype=np.int64))
            out[i] = float(Fraction(part, 1 << (2 * N)))
        return out

    def noise_sensitivity(self, delta):
        """NS_delta(f) = P[f(x) != f(y)], y = x with each bit flipped independently w.p. delta.

        NS_delta = 1/2 - 1/2 sum_k (1 - 2 delta)^k W^k.  A ``Fraction`` (or int) delta gives an
        exact ``Fraction``; a float delta gives a float.
        """
        if isinstance(delta, bool) or not isinstance(delta, Real):
            raise TypeError(f"delta must be a real number in [0, 1], got {type(delta).__name__}")
        if not 0 <= delta <= 1:
            raise ValueError(f"delta must lie in [0, 1], got {delta}")
        if isinstance(delta, (Integral, Fraction)):
            rho = 1 - 2 * Fraction(delta)
            stab = sum(rho ** k * Fraction(s, 1 << (2 * self.n_inputs))
                       for k, s in enumerate(self.level_sums))
            return Fraction(1, 2) - stab / 2
        rho = 1.0 - 2.0 * float(delta)
        stab = sum(rho ** k * float(w) for k, w in enumerate(self.level_weights))
        return 0.5 - 0.5 * stab

    def __repr__(self) -> str:
        return (f"WalshSpectrum(n_inputs={self.n_inputs}, degree={self.degree}, "
                f"spectral_norm={self.spectral_norm:.6g})")


def walsh_spectrum(f, *, allow_large: bool = False) -> WalshSpectrum:
    """The exact Walsh spectrum of ``f`` (table, BooleanFunction or circuit) with its statistics.

    Computes W_F = H (-1)^f once (int32 transform, exact for N <= 30) and the exact level sums,
    Fourier L1 norm and degree in one pass.

    Examples
    --------
    >>> from circuits.functions import InnerProductMod2
    >>> s = walsh_spectrum(InnerProductMod2(2))       # IP is bent: every |W| = 2^n
    >>> sorted(set(abs(s.walsh).tolist())), s.degree
    ([4], 4)
    """
    table = _table_of(f, allow_large=allow_large)
    N = table.shape[0].bit_length() - 1
    w = _signs_int(table)
    _run_transform(w, N)
    walsh = w.astype(np.int64)
    walsh.setflags(write=False)
    if N > 31:
        raise DimensionError(f"walsh_spectrum needs N <= 31 (exact int64 level sums), got N = {N}")
    levels, l1, deg = _ks._spectrum_stats(walsh, N)
    return WalshSpectrum(N, walsh, tuple(int(x) for x in levels), int(l1), int(deg))


def fourier_coefficients(f, *, normalized: bool = False, allow_large: bool = False) -> np.ndarray:
    """Walsh values W_F(u) of F = (-1)^f (exact int64), or F^(u) = W_F(u)/2^N with ``normalized``.

    Examples
    --------
    >>> fourier_coefficients([0, 0, 0, 1]).tolist()            # AND_2 = (1 - (-1)^{z0 z1}) / 2
    [2, 2, 2, -2]
    >>> fourier_coefficients([0, 0, 0, 1], normalized=True).tolist()
    [0.5, 0.5, 0.5, -0.5]
    """
    table = _table_of(f, allow_large=allow_large)
    N = table.shape[0].bit_length() - 1
    w = _signs_int(table)
    _run_transform(w, N)
    if normalized:
        return w / float(1 << N)
    return w.astype(np.int64)


def degree(f, *, allow_large: bool = False) -> int:
    """Fourier degree: the largest |u| with F^(u) != 0.

    >>> from circuits.functions import Parity, Majority
    >>> degree(Parity(5)), degree(Majority(3))
    (5, 3)
    """
    return walsh_spectrum(f, allow_large=allow_large).degree


def spectral_norm(f, *, allow_large: bool = False) -> float:
    """Fourier L1 norm sum_u |F^(u)| (1 for characters, 2^(N/2) for bent functions).

    >>> from circuits.functions import InnerProductMod2
    >>> spectral_norm(InnerProductMod2(3))
    8.0
    """
    return walsh_spectrum(f, allow_large=allow_large).spectral_norm


def influences(f, *, allow_large: bool = False) -> np.ndarray:
    """Inf_i(f) = P_x[f(x) != f(x xor e_i)] for every i < N, from exact integer counts.

    Returned as float64 (count / 2^N, exact).  Equals sum_{u_i = 1} F^(u)^2
    (:meth:`WalshSpectrum.influences`), which the tests check.

    Examples
    --------
    >>> influences([0, 0, 0, 1]).tolist()          # AND_2: each bit is pivotal w.p. 1/2
    [0.5, 0.5]
    """
    table = _table_of(f, allow_large=allow_large)
    N = table.shape[0].bit_length() - 1
    out = np.empty(N, dtype=np.float64)
    for i in range(N):
        pairs = table.reshape(-1, 2, 1 << i)
        differ = int(np.count_nonzero(pairs[:, 0, :] != pairs[:, 1, :]))
        out[i] = float(Fraction(2 * differ, 1 << N))
    return out


def total_influence(f, *, allow_large: bool = False) -> float:
    """Total influence I(f) = sum_i Inf_i(f) = sum_u |u| F^(u)^2 (exact dyadic value).

    >>> from circuits.functions import Parity
    >>> total_influence(Parity(4))
    4.0
    """
    return float(sum(Fraction(x) for x in influences(f, allow_large=allow_large)))


def noise_sensitivity(f, delta, *, allow_large: bool = False):
    """NS_delta(f) = P[f(x) != f(y)] with y = x, each bit flipped independently w.p. ``delta``.

    Computed from the exact level weights: NS = 1/2 - 1/2 sum_k (1 - 2 delta)^k W^k.
    A ``Fraction`` delta gives an exact Fraction.

    Examples
    --------
    >>> from fractions import Fraction
    >>> from circuits.functions import Parity
    >>> noise_sensitivity(Parity(2), Fraction(1, 4))    # odd number of flips: 2 * 1/4 * 3/4
    Fraction(3, 8)
    """
    return walsh_spectrum(f, allow_large=allow_large).noise_sensitivity(delta)


# ----------------------------------------------------------------------------------------------
# correlations
# ----------------------------------------------------------------------------------------------

class Correlation(NamedTuple):
    """E_unif[(-1)^f (-1)^g] with the integer counts it comes from.

    ``value = (agreements - disagreements) / n_points``; :attr:`exact` is the Fraction.
    """

    value: float
    agreements: int
    disagreements: int
    n_points: int

    @property
    def exact(self) -> Fraction:
        return Fraction(self.agreements - self.disagreements, self.n_points)


def _n_inputs_of(f):
    if _is_circuit(f):
        c = f if isinstance(f, ThresholdCircuit) else f.to_threshold_circuit()
        return c.n_inputs
    if isinstance(f, BooleanFunction):
        return f.n_inputs
    if isinstance(f, str):
        return None
    t = np.asarray(f)
    if t.ndim != 1 or t.shape[0] == 0 or t.shape[0] & (t.shape[0] - 1):
        raise DimensionError(f"a truth table must be 1-D with a power-of-two length, got shape {t.shape}")
    return t.shape[0].bit_length() - 1


def correlation(f, g, *, client=None, executor=None, return_counts: bool = False):
    """Exact correlation E_{z uniform}[(-1)^f(z) (-1)^g(z)] = 1 - 2 d / 2^N, d = #{f != g}.

    Parameters
    ----------
    f, g : ThresholdCircuit, BooleanFunction, truth table, or a name ("ip", "parity",
        "majority", "and", "or") for one of them
        Must have the same number of inputs N.  When one of them is a circuit the count
        streams through :func:`circuits.count_disagreements` (no table, any N up to 62), and
        ``client`` / ``executor`` are forwarded to it (Dask or concurrent.futures).
    return_counts : bool
        Return a :class:`Correlation` ``(value, agreements, disagreements, n_points)`` instead
        of the float.

    Returns
    -------
    float or Correlation
        The value is computed from the integer count d as ``(2^N - 2d) / 2^N``: an integer
        divided by a power of two, hence *exact* in float64 for N <= 52 (the numerator has at most
        53 bits).  For larger N use ``return_counts=True`` and ``.exact``.

    Examples
    --------
    >>> from circuits.constructions import ip_depth3
    >>> correlation(ip_depth3(3), "ip")
    1.0
    >>> correlation([0, 0, 0, 1], [0, 1, 0, 1])          # AND vs z0: agree on 3 of 4 points
    0.5
    >>> correlation("ip", [0] * 16, return_counts=True).disagreements  # #IP_2 = 1: A006516(2)
    6
    """
    nf, ng = _n_inputs_of(f), _n_inputs_of(g)
    if nf is None and ng is None:
        raise TypeError("at least one of f, g must be a circuit, BooleanFunction or truth table "
                        "(names like 'ip' need the other argument to fix N)")
    if nf is not None and ng is not None and nf != ng:
        raise DimensionError(f"f has {nf} inputs but g has {ng}; both must be functions on the same cube")
    N = nf if nf is not None else ng
    if not _is_circuit(f) and _is_circuit(g):
        f, g = g, f
    if _is_circuit(f):
        from circuits.simulate import count_disagreements
        if _is_circuit(g):
            from circuits.simulate import truth_table
            g = TruthTable(truth_table(g))
        d = count_disagreements(f, g, client=client, executor=executor).count
    else:
        tf = as_boolean_function(f, N).truth_table()
        tg = as_boolean_function(g, N).truth_table()
        d = int(np.count_nonzero(tf != tg))
    n_points = 1 << N
    value = (n_points - 2 * d) / n_points
    if return_counts:
        return Correlation(value, n_points - d, d, n_points)
    return value


@dataclass(frozen=True)
class GateCorrelation:
    """How a single gate g = [alpha(x) + beta(y) >= t] on 2n inputs correlates with IP_n (§1.2).

    Counts are exact integers over all 4^n points (x = low n bits, y = high n bits).

    Attributes
    ----------
    n : int
    n_ones : int
        |G|, G = g^-1(1).
    n_ones_ip1 : int
        |G intersect A_1|, A_1 = IP^-1(1).
    sum_hg : int
        sum_{x,y} H(x, y) g(x, y) = |G & A_0| - |G & A_1|  (H = (-1)^IP).
    k_values : int
        K_g = min(#values of alpha over {0,1}^n, #values of beta over {0,1}^n).
    """

    n: int
    n_ones: int
    n_ones_ip1: int
    sum_hg: int
    k_values: int

    @property
    def n_ip1(self) -> int:
        """|A_1| = 2^(2n-1) - 2^(n-1)."""
        return (1 << (2 * self.n - 1)) - (1 << (self.n - 1))

    @property
    def n_ip0(self) -> int:
        """|A_0| = 2^(2n-1) + 2^(n-1)."""
        return (1 << (2 * self.n - 1)) + (1 << (self.n - 1))

    @property
    def advantage(self) -> Fraction:
        """P_1(g) - P_0(g) = P[g = 1 | IP = 1] - P[g = 1 | IP = 0], exact."""
        g1 = self.n_ones_ip1
        g0 = self.n_ones - g1
        return Fraction(g1, self.n_ip1) - Fraction(g0, self.n_ip0)

    @property
    def correlation(self) -> float:
        """E[(-1)^g (-1)^IP] = (sum_z H - 2 sum_z H g) / 4^n, exact in float64 (n <= 26)."""
        return ((1 << self.n) - 2 * self.sum_hg) / float(1 << (2 * self.n))

    @property
    def c_g(self) -> float:
        """The gate-lemma constant min(n + 1, sqrt(K_g))."""
        return min(float(self.n + 1), float(np.sqrt(self.k_values)))

    @property
    def lemma_bound(self) -> float:
        """c_g 2^(3n/2), the gate lemma's bound on |sum H g|."""
        return self.c_g * 2.0 ** (1.5 * self.n)

    @property
    def respects_lemma(self) -> bool:
        """Exact check of |sum H g| <= c_g 2^(3n/2): sum_hg^2 <= min((n+1)^2, K) 2^(3n)."""
        return self.sum_hg ** 2 <= min((self.n + 1) ** 2, self.k_values) << (3 * self.n)


def gate_ip_correlation(weights, threshold) -> GateCorrelation:
    """Exact correlation data of the gate [w . z >= t] (z = (x, y), 2n inputs) with IP_n.

    Integer weights and threshold are evaluated exactly by streaming over all 4^n points
    (:func:`circuits.count_ones`, :func:`circuits.count_disagreements`; n <= 16).  Real (non-integer)
    weights are accepted too: the gate is then [alpha(x) + beta(y) >= t] with alpha, beta
    evaluated in float64 over {0,1}^n (n <= 12), which defines the gate being analysed.

    Returns
    -------
    GateCorrelation
        Counts, ``advantage`` (P_1 - P_0 as a Fraction), ``correlation``, K_g, c_g and the
        exact gate-lemma check ``respects_lemma``.

    Examples
    --------
    >>> r = gate_ip_correlation([1, 1], 2)          # n = 1: g = x AND y = IP_1
    >>> r.advantage, r.sum_hg, r.correlation
    (Fraction(1, 1), -1, 1.0)
    """
    w = np.asarray(weights)
    if w.ndim != 1 or w.shape[0] == 0 or w.shape[0] % 2:
        raise DimensionError(f"weights must be a 1-D array of even length 2n (x weights, then y "
                             f"weights), got shape {w.shape}")
    n = w.shape[0] // 2
    integral = (w.dtype.kind in "biu" or (w.dtype.kind == "f" and np.isfinite(w).all()
                                           and np.array_equal(w, np.round(w))))
    t_int = isinstance(threshold, Integral) or (isinstance(threshold, Real) and float(threshold).is_integer())
    if w.dtype.kind not in "biuf":
        raise InvalidCircuitError(f"weights must be real numbers, got dtype {w.dtype}")
    if w.dtype.kind == "f" and not np.isfinite(w).all():
        raise InvalidCircuitError("weights must be finite")
    if integral and t_int:
        from circuits.simulate import count_disagreements, count_ones
        n = check_n_bits(n, name="n (the gate is evaluated on all 4^n points)", minimum=1,
                         maximum=16)
        wi = as_int64_array(w, name="weights", ndim=1)
        gate = ThresholdCircuit.single_gate(wi, int(threshold))
        ones = count_ones(gate)
        d = count_disagreements(gate, "ip").count
        n_ip1 = (1 << (2 * n - 1)) - (1 << (n - 1))
        g1 = (ones + n_ip1 - d) // 2
        pts = points(n).astype(np.int64)
        alpha = pts @ wi[:n]
        beta = pts @ wi[n:]
    else:
        n = check_n_bits(n, name="n (real weights are evaluated as a 2^n x 2^n matrix)",
                         minimum=1, maximum=12)
        pts = points(n).astype(np.float64)
        wf = w.astype(np.float64)
        alpha = pts @ wf[:n]
        beta = pts @ wf[n:]
        G = (alpha[:, None] + beta[None, :]) >= float(threshold)
        from circuits.hypercube import as_matrix
        from circuits.functions import inner_product_mod2
        ip = as_matrix(inner_product_mod2(n), n).astype(bool)
        ones = int(np.count_nonzero(G))
        g1 = int(np.count_nonzero(G & ip))
    k_values = min(np.unique(alpha).size, np.unique(beta).size)
    return GateCorrelation(n, int(ones), int(g1), int(ones) - 2 * int(g1), int(k_values))
