"""Exact correlations: of two Boolean functions (E[(-1)^f (-1)^g] from an integer count of
disagreements) and of one threshold gate with IP_n (the counts behind the gate lemma, §1.2).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from numbers import Integral, Real
from typing import NamedTuple

import numpy as np

from circuits.utils.parallel import DEFAULT as _DEFAULT_LIMIT
from circuits.analysis.spectral import _is_circuit
from circuits.utils.errors import DimensionError, InvalidCircuitError
from circuits.functions import BooleanFunction, TruthTable, as_boolean_function
from circuits.hypercube import check_n_bits, points
from circuits.threshold import ThresholdCircuit, as_int64_array

__all__ = ["Correlation", "correlation", "correlation_counts", "GateCorrelation",
           "gate_ip_correlation"]


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
        """The correlation as an exact Fraction 1 - 2d/2^N."""
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


def correlation(f, g, *, client=None, executor=None, max_seconds=_DEFAULT_LIMIT,
                progress: bool = False) -> float:
    """Exact correlation E_{z uniform}[(-1)^f(z) (-1)^g(z)] = 1 - 2 d / 2^N, d = #{f != g}.

    Parameters
    ----------
    f, g : ThresholdCircuit, BooleanFunction, truth table, or a name ("ip", "parity",
        "majority", "and", "or") for one of them
        Must have the same number of inputs N.  When one of them is a circuit the count
        streams through :func:`circuits.count_disagreements` (no table, any N up to 62), and
        ``client`` / ``executor`` are forwarded to it (Dask or concurrent.futures).
    client : dask.distributed.Client, optional
        Spread the chunks over a Dask cluster (counts are added exactly).
    executor : concurrent.futures.Executor, optional
        Spread the chunks over an executor.
    max_seconds, progress
        Also forwarded to :func:`circuits.count_disagreements`: the limit on the estimated run
        time (default ``$DEPTHSEP_MAX_SECONDS`` or 600 s, ``None`` for none) and a progress bar.

    Returns
    -------
    float
        Computed from the integer count d as ``(2^N - 2d) / 2^N``: an integer divided by a
        power of two, hence *exact* in float64 for N <= 52 (the numerator has at most 53 bits).
        For larger N, or for the counts themselves, use :func:`correlation_counts`.

    Examples
    --------
    >>> from circuits.constructions import ip_depth3
    >>> correlation(ip_depth3(3), "ip")
    1.0
    >>> correlation([0, 0, 0, 1], [0, 1, 0, 1])          # AND vs z0: agree on 3 of 4 points
    0.5
    """
    return correlation_counts(f, g, client=client, executor=executor, max_seconds=max_seconds,
                              progress=progress).value


def correlation_counts(f, g, *, client=None, executor=None, max_seconds=_DEFAULT_LIMIT,
                       progress: bool = False) -> Correlation:
    """:func:`correlation` with the integer counts it comes from: a :class:`Correlation`
    ``(value, agreements, disagreements, n_points)``; ``.exact`` is the Fraction.

    Parameters
    ----------
    f : ThresholdCircuit, BooleanFunction, array_like or str
        A circuit, a function object, a truth table or a name ("ip", "parity", ...).
    g : ThresholdCircuit, BooleanFunction, array_like or str
        The same kinds; f and g have the same number of inputs N.
    client : dask.distributed.Client, optional
        Spread the chunks over a Dask cluster (counts are added exactly).
    executor : concurrent.futures.Executor, optional
        Spread the chunks over an executor.
    max_seconds : float or None
        Limit on the estimated run time when a circuit is involved (default
        ``$DEPTHSEP_MAX_SECONDS`` or 600 s, ``None`` for none); see
        :func:`circuits.count_disagreements`.
    progress : bool
        Show a progress bar over points, with an ETA.

    Examples
    --------
    >>> correlation_counts("ip", [0] * 16).disagreements  # #IP_2 = 1: A006516(2)
    6
    >>> correlation_counts([0, 0, 0, 1], [0, 1, 0, 1]).exact
    Fraction(1, 2)
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
        d = count_disagreements(f, g, client=client, executor=executor,
                                max_seconds=max_seconds, progress=progress).count
    else:
        tf = as_boolean_function(f, N).truth_table()
        tg = as_boolean_function(g, N).truth_table()
        d = int(np.count_nonzero(tf != tg))
    n_points = 1 << N
    return Correlation((n_points - 2 * d) / n_points, n_points - d, d, n_points)


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

    Parameters
    ----------
    weights : array_like of int
        The gate's 2n integer weights (x first, then y).
    threshold : int
        The gate's threshold t; the gate fires iff w . z >= t.

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
