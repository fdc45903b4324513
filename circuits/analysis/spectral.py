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

import numpy as np

from circuits.analysis import _kernels_spectral as _ks
from circuits.analysis.fwht import _run_transform
from circuits.utils.errors import DimensionError
from circuits.functions import BooleanFunction, as_truth_table
from circuits.threshold import ThresholdCircuit

__all__ = [
    "WalshSpectrum", "walsh_spectrum", "fourier_coefficients", "degree", "spectral_norm",
    "influences", "total_influence", "noise_sensitivity",
]


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


_PARAMETERS = {
    "{f}": """f : array_like, BooleanFunction, ThresholdCircuit or DagCircuit
    The function: a 0/1 truth table of length 2^N in cube order, a function object or a
    circuit.""",
    "{allow_large}": """allow_large : bool
    Allow materialising more than 2^24 values (default False: refuse, with a message giving
    the memory estimate).""",
}


def _shared_parameters(fn):
    """Write the numpydoc entries of the parameters every function here shares into ``fn``'s
    docstring, where a line holds only ``{f}`` or ``{allow_large}`` (indented as that line)."""
    if fn.__doc__ is None:               # python -OO
        return fn
    lines = []
    for line in fn.__doc__.splitlines():
        text = _PARAMETERS.get(line.strip())
        if text is None:
            lines.append(line)
        else:
            indent = line[:len(line) - len(line.lstrip())]
            lines.extend(indent + t for t in text.splitlines())
    fn.__doc__ = "\n".join(lines)
    return fn


def _walsh_int(f, allow_large: bool):
    """(W, N): the Walsh values of (-1)^f as int32 (N <= 30) or int64, transformed in place."""
    table = _table_of(f, allow_large=allow_large)
    N = table.shape[0].bit_length() - 1
    w = _signs_int(table)
    _run_transform(w, N)
    return w, N


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
        """Total influence as an exact Fraction (sum_u |u| W(u)^2 / 4^N)."""
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

        Parameters
        ----------
        delta : float
            Flip probability, 0 <= delta <= 1.
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


@_shared_parameters
def walsh_spectrum(f, *, allow_large: bool = False) -> WalshSpectrum:
    """The exact Walsh spectrum of ``f`` (table, BooleanFunction or circuit) with its statistics.

    Computes W_F = H (-1)^f once (int32 transform, exact for N <= 30) and the exact level sums,
    Fourier L1 norm and degree in one pass.

    Parameters
    ----------
    {f}
    {allow_large}

    Examples
    --------
    >>> from circuits.functions import InnerProductMod2
    >>> s = walsh_spectrum(InnerProductMod2(2))       # IP is bent: every |W| = 2^n
    >>> sorted(set(abs(s.walsh).tolist())), s.degree
    ([4], 4)
    """
    w, N = _walsh_int(f, allow_large)
    walsh = w.astype(np.int64)
    walsh.setflags(write=False)
    if N > 31:
        raise DimensionError(f"walsh_spectrum needs N <= 31 (exact int64 level sums), got N = {N}")
    from circuits.utils.parallel import deferred_sigint
    with deferred_sigint():      # a tuple of arrays must not be boxed under a pending Ctrl-C
        levels, l1, deg = _ks._spectrum_stats(walsh, N)
    return WalshSpectrum(N, walsh, tuple(int(x) for x in levels), int(l1), int(deg))


@_shared_parameters
def fourier_coefficients(f, *, normalized: bool = False, allow_large: bool = False) -> np.ndarray:
    """Walsh values W_F(u) of F = (-1)^f (exact int64), or F^(u) = W_F(u)/2^N with ``normalized``.

    Parameters
    ----------
    {f}
    normalized : bool
        Return F^(u) = W_F(u) / 2^N (float64) instead of the int64 Walsh values.
    {allow_large}

    Examples
    --------
    >>> fourier_coefficients([0, 0, 0, 1]).tolist()            # AND_2 = (1 - (-1)^{z0 z1}) / 2
    [2, 2, 2, -2]
    >>> fourier_coefficients([0, 0, 0, 1], normalized=True).tolist()
    [0.5, 0.5, 0.5, -0.5]
    """
    w, N = _walsh_int(f, allow_large)
    if normalized:
        return w / float(1 << N)
    return w.astype(np.int64)


@_shared_parameters
def degree(f, *, allow_large: bool = False) -> int:
    """Fourier degree: the largest |u| with F^(u) != 0.

    Parameters
    ----------
    {f}
    {allow_large}

    Examples
    --------
    >>> from circuits.functions import Parity, Majority
    >>> degree(Parity(5)), degree(Majority(3))
    (5, 3)
    """
    return walsh_spectrum(f, allow_large=allow_large).degree


@_shared_parameters
def spectral_norm(f, *, allow_large: bool = False) -> float:
    """Fourier L1 norm sum_u |F^(u)| (1 for characters, 2^(N/2) for bent functions).

    Parameters
    ----------
    {f}
    {allow_large}

    Examples
    --------
    >>> from circuits.functions import InnerProductMod2
    >>> spectral_norm(InnerProductMod2(3))
    8.0
    """
    return walsh_spectrum(f, allow_large=allow_large).spectral_norm


@_shared_parameters
def influences(f, *, allow_large: bool = False) -> np.ndarray:
    """Inf_i(f) = P_x[f(x) != f(x xor e_i)] for every i < N, from exact integer counts.

    Returned as float64 (count / 2^N, exact).  Equals sum_{u_i = 1} F^(u)^2
    (:meth:`WalshSpectrum.influences`), which the tests check.

    Parameters
    ----------
    {f}
    {allow_large}

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


@_shared_parameters
def total_influence(f, *, allow_large: bool = False) -> float:
    """Total influence I(f) = sum_i Inf_i(f) = sum_u |u| F^(u)^2 (exact dyadic value).

    Parameters
    ----------
    {f}
    {allow_large}

    Examples
    --------
    >>> from circuits.functions import Parity
    >>> total_influence(Parity(4))
    4.0
    """
    return float(sum(Fraction(x) for x in influences(f, allow_large=allow_large)))


@_shared_parameters
def noise_sensitivity(f, delta, *, allow_large: bool = False):
    """NS_delta(f) = P[f(x) != f(y)] with y = x, each bit flipped independently w.p. ``delta``.

    Computed from the exact level weights: NS = 1/2 - 1/2 sum_k (1 - 2 delta)^k W^k.
    A ``Fraction`` delta gives an exact Fraction.

    Parameters
    ----------
    {f}
    delta : float
        Flip probability, 0 <= delta <= 1.
    {allow_large}

    Examples
    --------
    >>> from fractions import Fraction
    >>> from circuits.functions import Parity
    >>> noise_sensitivity(Parity(2), Fraction(1, 4))    # odd number of flips: 2 * 1/4 * 3/4
    Fraction(3, 8)
    """
    return walsh_spectrum(f, allow_large=allow_large).noise_sensitivity(delta)
