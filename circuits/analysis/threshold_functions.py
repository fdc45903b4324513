"""Threshold-function recognition, minimal integer weights, Chow parameters and small circuits.

A Boolean function f: {0,1}^N -> {0,1} is a *threshold function* iff there are integers w, t
with ``f(z) = [w . z >= t]`` (the gate rule of :mod:`circuits.threshold`).  Over the integers,
``w . z < t`` is ``w . z <= t - 1``, so f is threshold iff the *margin-1* linear program of
THEORY.md section 1.5 is feasible::

    w . z - t >= 0    for z in f^{-1}(1)
    w . z - t <= -1   for z in f^{-1}(0)

Every answer of this module is certified in exact integer arithmetic, whatever the LP solver
did in floating point:

* **yes** comes with integer ``(w, t)`` that is re-checked on every point (Python-int bound,
  then int64 products);
* **no** comes with a *summability certificate*: integer multiplicities ``a_z >= 0`` on true
  points and ``b_z >= 0`` on false points with ``sum a_z = sum b_z > 0`` and
  ``sum a_z z = sum b_z z`` exactly.  Such multisets cannot exist for a threshold function
  (summing ``w . z`` gives ``>= t sum a`` on one side and ``<= (t - 1) sum b`` on the other),
  so the certificate proves the answer.  Non-unate functions get a 2-summable certificate
  without any LP.

Floats never decide: the LP only proposes, exact integers dispose.  If neither certificate can
be verified (it never happened in our tests) a :class:`~circuits.utils.errors.DepthsepError` is
raised instead of a guess.

Conventions
-----------
* Truth tables are in cube order (``circuits.hypercube``): entry k is f(bits of k).
* Chow parameters are the degree-0 and degree-1 unnormalised Walsh coefficients of
  ``F = (-1)^f = 1 - 2f`` (THEORY.md section 1.1): ``c_0 = sum_z F(z)``,
  ``c_i = sum_z F(z) (-1)^{z_i}``.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import NamedTuple

import numpy as np

from circuits.utils.errors import DepthsepError, DimensionError, InvalidCircuitError
from circuits.functions import ThresholdFunction, as_truth_table
from circuits.hypercube import check_n_bits, points
from circuits.utils.progress import progress_bar
from circuits.threshold import INT64_MAX, ThresholdCircuit

__all__ = [
    "ThresholdTest", "Summability", "Depth2Size",
    "is_threshold_function", "minimal_weights", "chow_parameters", "threshold_gate",
    "all_threshold_functions", "monotone_functions", "count_threshold_functions", "min_depth2_size",
    "MAX_LP_BITS", "MAX_MILP_BITS",
]

#: Largest N for which :func:`is_threshold_function` builds the 2^N-row LP (about 17 MB at 16).
MAX_LP_BITS = 16
#: Largest N for which :func:`minimal_weights` runs the exact MILP.
MAX_MILP_BITS = 6
#: Largest N for the enumerations (:func:`threshold_functions`, :func:`count_threshold_functions`).
MAX_ENUM_BITS = 5
#: Largest N for :func:`min_depth2_size`.
MAX_SEARCH_BITS = 4

_DENOMINATORS = (1, 2, 6, 12, 60, 420, 840, 10**4, 10**6, 10**9)


# --------------------------------------------------------------------------- result types
class Summability(NamedTuple):
    """Exact proof that a (partial) function is *not* threshold.

    ``sum_j ones_mult[j] * z[ones[j]] == sum_j zeros_mult[j] * z[zeros[j]]`` and
    ``sum(ones_mult) == sum(zeros_mult) > 0``, where ``ones`` index true points and ``zeros``
    false points (cube indices for a full truth table, row indices for a partial one).
    """

    ones: np.ndarray
    ones_mult: np.ndarray
    zeros: np.ndarray
    zeros_mult: np.ndarray

    @property
    def order(self) -> int:
        """k of "k-summable": the common total multiplicity."""
        return int(self.ones_mult.sum())


@dataclass(frozen=True, eq=False)
class ThresholdTest:
    """Result of :func:`is_threshold_function`; truthy iff the function is threshold.

    Attributes
    ----------
    is_threshold : bool
    weights : int64 array of shape (N,) or None
        Integer weights w with ``f(z) = [w . z >= threshold]``, verified on every point.
    threshold : int or None
    n_inputs : int
    certificate : Summability or None
        For a non-threshold function, the exact summability certificate.

    Examples
    --------
    >>> ok, w, t = is_threshold_function([0, 0, 0, 1])       # AND of two bits
    >>> ok, w.tolist(), t
    (True, [1, 1], 2)
    >>> bool(is_threshold_function([0, 1, 1, 0]))             # XOR is not
    False
    """

    is_threshold: bool
    weights: "np.ndarray | None"
    threshold: "int | None"
    n_inputs: int
    certificate: "Summability | None" = None

    def __bool__(self) -> bool:
        return bool(self.is_threshold)

    def __iter__(self):
        return iter((self.is_threshold, self.weights, self.threshold))

    def gate(self) -> ThresholdCircuit:
        """The depth-1 :class:`ThresholdCircuit` ``[w . z >= t]`` (its ``layers[0]`` is a gate row)."""
        self._require()
        return ThresholdCircuit.single_gate(self.weights, self.threshold)

    def function(self) -> ThresholdFunction:
        """The :class:`~circuits.functions.ThresholdFunction` with these weights."""
        self._require()
        return ThresholdFunction(self.weights, self.threshold)

    def to_dict(self) -> dict:
        d = {"is_threshold": bool(self.is_threshold), "n_inputs": int(self.n_inputs),
             "weights": None if self.weights is None else [int(v) for v in self.weights],
             "threshold": None if self.threshold is None else int(self.threshold)}
        if self.certificate is not None:
            d["certificate"] = {k: [int(v) for v in getattr(self.certificate, k)]
                                for k in Summability._fields}
        return d

    def _require(self):
        if not self.is_threshold:
            raise InvalidCircuitError("the function is not a threshold function, so it has no gate; "
                                      "build a depth-2 circuit instead (see min_depth2_size)")

    def __repr__(self) -> str:
        if self.is_threshold:
            return (f"ThresholdTest(is_threshold=True, weights={[int(v) for v in self.weights]}, "
                    f"threshold={self.threshold})")
        order = self.certificate.order if self.certificate is not None else "?"
        return f"ThresholdTest(is_threshold=False, n_inputs={self.n_inputs}, summable_order={order})"


class Depth2Size(NamedTuple):
    """Result of :func:`min_depth2_size`.

    ``size`` is the least number of hidden gates of a layered THR o THR circuit computing f
    (``None`` if it exceeds ``max_size``), ``circuit`` a verified witness, ``n_checked`` the
    number of hidden-gate sets examined.
    """

    size: "int | None"
    circuit: "ThresholdCircuit | None"
    n_checked: int


# --------------------------------------------------------------------------- validation
def _table(truth_table, *, max_bits: int, what: str) -> "tuple[np.ndarray, int]":
    if isinstance(truth_table, (str, bytes)):
        raise TypeError(f"truth_table must be an array of 0/1, got {type(truth_table).__name__}")
    t = as_truth_table(truth_table, name="truth_table")
    n = int(t.shape[0]).bit_length() - 1
    if n > max_bits:
        raise DimensionError(f"{what} handles N <= {max_bits} inputs, got a table of length 2^{n}; "
                             f"the method's cost grows like 2^N (LP rows) or worse")
    return t, n


# --------------------------------------------------------------------------- exact checks
def _verify_weights(Z: np.ndarray, y: np.ndarray, w: "list[int]", t: int) -> bool:
    """Exactly check ``y == [Z w >= t]`` (bound in Python ints, then int64 products)."""
    if sum(abs(v) for v in w) + abs(t) > INT64_MAX:
        return False
    if Z.shape[1] == 0:
        return bool(np.all(y == (0 >= t)))
    s = Z.astype(np.int64) @ np.asarray(w, dtype=np.int64)
    return bool(np.array_equal((s >= t).astype(np.uint8), y))


def _verify_summable(Z: np.ndarray, y: np.ndarray, cert: Summability) -> bool:
    if cert.ones.size == 0 or cert.zeros.size == 0:
        return False
    if np.any(cert.ones_mult <= 0) or np.any(cert.zeros_mult <= 0):
        return False
    if not (np.all(y[cert.ones] == 1) and np.all(y[cert.zeros] == 0)):
        return False
    a = [int(v) for v in cert.ones_mult]
    b = [int(v) for v in cert.zeros_mult]
    if sum(a) != sum(b):
        return False
    za = Z[cert.ones].astype(object)
    zb = Z[cert.zeros].astype(object)
    lhs = [sum(m * int(r[i]) for m, r in zip(a, za)) for i in range(Z.shape[1])]
    rhs = [sum(m * int(r[i]) for m, r in zip(b, zb)) for i in range(Z.shape[1])]
    return lhs == rhs


def _scale_to_integers(x: np.ndarray):
    """Yield candidate integer vectors proportional to rational approximations of ``x``."""
    seen = []
    for den in _DENOMINATORS:
        fr = [Fraction(float(v)).limit_denominator(den) for v in x]
        lcm = 1
        for f in fr:
            lcm = lcm * f.denominator // math.gcd(lcm, f.denominator)
        ints = [int(f * lcm) for f in fr]
        g = 0
        for v in ints:
            g = math.gcd(g, v)
        if g > 1:
            ints = [v // g for v in ints]
        if ints not in seen:
            seen.append(ints)
            yield ints


# --------------------------------------------------------------------------- LP / MILP
def _lp_matrices(Z: np.ndarray, y: np.ndarray):
    """Margin-1 constraints ``A [w, t] <= b`` (rows: true points then false points)."""
    Zf = Z.astype(np.float64)
    ones = y == 1
    n_pts = Z.shape[0]
    A = np.empty((n_pts, Z.shape[1] + 1))
    A[:, :-1] = np.where(ones[:, None], -Zf, Zf)
    A[:, -1] = np.where(ones, 1.0, -1.0)
    b = np.where(ones, 0.0, -1.0)
    return A, b


def _abs_rows(n: int):
    """Rows encoding ``|w_i| <= u_i`` for variables ``[w (n), t, u (n)]``."""
    eye = np.eye(n)
    top = np.hstack([eye, np.zeros((n, 1)), -eye])
    bot = np.hstack([-eye, np.zeros((n, 1)), -eye])
    return np.vstack([top, bot])


def _lp_weights(Z: np.ndarray, y: np.ndarray):
    """Solve the margin-1 LP minimising sum |w|; returns the float vertex ``[w, t]`` or None."""
    from scipy.optimize import linprog

    n = Z.shape[1]
    A, b = _lp_matrices(Z, y)
    A = np.hstack([A, np.zeros((A.shape[0], n))])
    A = np.vstack([A, _abs_rows(n)])
    b = np.concatenate([b, np.zeros(2 * n)])
    c = np.concatenate([np.zeros(n + 1), np.ones(n)])
    bounds = [(None, None)] * (n + 1) + [(0, None)] * n
    res = linprog(c, A_ub=A, b_ub=b, bounds=bounds, method="highs-ds")
    if res.status == 2:
        return None
    if res.status != 0:
        raise DepthsepError(f"threshold LP failed ({res.message}); please report this table")
    return res.x[: n + 1]


def _milp_weights(Z: np.ndarray, y: np.ndarray, objective: str = "sum"):
    """Exact integer (w, t) minimising sum|w| (or max|w|), then |t|; None if infeasible."""
    from scipy.optimize import Bounds, LinearConstraint, milp

    n = Z.shape[1]
    A, b = _lp_matrices(Z, y)
    n_var = 2 * n + 2          # [w (n), t, u (n), v]: u_i >= |w_i| (sum) / u_0 >= |w_i| (max); v >= |t|
    rows = [np.hstack([A, np.zeros((A.shape[0], n + 1))])]
    lbs = [np.full(A.shape[0], -np.inf)]
    ubs = [b]
    eye = np.eye(n)
    if objective == "sum":
        U = eye
    else:
        U = np.zeros((n, n))
        U[:, 0] = 1.0
    for sgn in (1.0, -1.0):
        rows.append(np.hstack([sgn * eye, np.zeros((n, 1)), -U, np.zeros((n, 1))]))
        lbs.append(np.full(n, -np.inf))
        ubs.append(np.zeros(n))
        tv = np.zeros((1, n_var))
        tv[0, n] = sgn
        tv[0, -1] = -1.0
        rows.append(tv)
        lbs.append(np.array([-np.inf]))
        ubs.append(np.array([0.0]))
    M = np.vstack(rows)
    lb = np.concatenate(lbs)
    ub = np.concatenate(ubs)
    bounds = Bounds(np.r_[np.full(n + 1, -np.inf), np.zeros(n + 1)], np.full(n_var, np.inf))
    c1 = np.zeros(n_var)
    if objective == "sum":
        c1[n + 1: 2 * n + 1] = 1.0
    else:
        c1[n + 1] = 1.0
    opts = {"mip_rel_gap": 0.0}
    integrality = np.ones(n_var)
    cons = LinearConstraint(M, lb, ub)
    # An integer point from the LP vertex bounds the optimum, so one MILP with objective
    # K * (weight objective) + |t| is lexicographic: for a non-constant f the best |t| is at
    # most sum|w| <= n max|w|, hence K = (bound on that) + 2 makes one unit of the weight
    # objective outweigh any change of |t|.
    x_lp = _lp_weights(Z, y)
    if x_lp is None:
        return None
    start = next((v for v in _scale_to_integers(x_lp) if _verify_weights(Z, y, v[:n], v[n])), None)
    if start is not None:
        w0 = [abs(v) for v in start[:n]]
        K = (sum(w0) if objective == "sum" else n * max(w0)) + 2
        c = K * c1
        c[-1] = 1.0
        res = milp(c, constraints=cons, integrality=integrality, bounds=bounds, options=opts)
        if res.status != 0 or res.x is None:
            raise DepthsepError(f"threshold MILP failed ({res.message}); please report this table")
        x = res.x
    else:  # two stages: the weight objective, then |t| with the weight objective fixed
        res = milp(c1, constraints=cons, integrality=integrality, bounds=bounds, options=opts)
        if res.status == 2:
            return None
        if res.status != 0 or res.x is None:
            raise DepthsepError(f"threshold MILP failed ({res.message}); please report this table")
        best = round(float(res.fun))
        fix = LinearConstraint(c1[None, :], -np.inf, best + 0.5)
        c2 = np.zeros(n_var)
        c2[-1] = 1.0
        res2 = milp(c2, constraints=[cons, fix], integrality=integrality, bounds=bounds, options=opts)
        x = res2.x if res2.status == 0 and res2.x is not None else res.x
    return [int(round(v)) for v in x[:n]], int(round(x[n]))


def _summability(Z: np.ndarray, y: np.ndarray) -> "Summability | None":
    """Certificate of non-threshold: a 2-summable pair from non-unateness, else from the dual LP."""
    from scipy.optimize import linprog

    ones = np.flatnonzero(y == 1)
    zeros = np.flatnonzero(y == 0)
    A = np.hstack([Z[ones].T.astype(np.float64), -Z[zeros].T.astype(np.float64)])
    A = np.vstack([A, np.r_[np.ones(ones.size), np.zeros(zeros.size)],
                   np.r_[np.zeros(ones.size), np.ones(zeros.size)]])
    b = np.r_[np.zeros(Z.shape[1]), 1.0, 1.0]
    res = linprog(np.zeros(A.shape[1]), A_eq=A, b_eq=b, bounds=(0, None), method="highs-ds")
    if res.status != 0:
        return None
    x = np.where(res.x > 1e-9, res.x, 0.0)
    for ints in _scale_to_integers(x):
        a = np.asarray(ints[: ones.size], dtype=np.int64)
        bb = np.asarray(ints[ones.size:], dtype=np.int64)
        cert = Summability(ones[a > 0], a[a > 0], zeros[bb > 0], bb[bb > 0])
        if _verify_summable(Z, y, cert):
            return cert
    return None


def _unate_certificate(table: np.ndarray, n: int) -> "Summability | None":
    """2-summable certificate if the full table is not unate in some variable (no LP needed)."""
    idx = np.arange(table.shape[0], dtype=np.int64)
    for i in range(n):
        lo = idx[((idx >> i) & 1) == 0]
        hi = lo | (1 << i)
        up = np.flatnonzero((table[lo] == 0) & (table[hi] == 1))
        down = np.flatnonzero((table[lo] == 1) & (table[hi] == 0))
        if up.size and down.size:
            z, zp = lo[up[0]], lo[down[0]]          # f(z)=0,f(z+e)=1 ; f(z')=1,f(z'+e)=0
            # (z + e) + z' == z + (z' + e)
            return Summability(np.array([z | (1 << i), zp]), np.array([1, 1]),
                               np.array([z, zp | (1 << i)]), np.array([1, 1]))
    return None


def _decide(Z: np.ndarray, y: np.ndarray, *, integer: str = "scale", table_n: "int | None" = None):
    """Core decision on the point set Z with labels y.  Returns (is_threshold, w, t, certificate)."""
    n = Z.shape[1]
    if np.all(y == 1) or np.all(y == 0):
        return True, [0] * n, (0 if y.size and y[0] == 1 else 1), None
    if table_n is not None:
        cert = _unate_certificate(y, table_n)
        if cert is not None:
            return False, None, None, cert
    if integer == "milp":
        sol = _milp_weights(Z, y)
        if sol is not None and _verify_weights(Z, y, *sol):
            return True, sol[0], sol[1], None
        if sol is not None:
            raise DepthsepError("the MILP returned weights that fail the exact check; please report")
    else:
        x = _lp_weights(Z, y)
        if x is not None:
            for ints in _scale_to_integers(x):
                if _verify_weights(Z, y, ints[:n], ints[n]):
                    return True, ints[:n], ints[n], None
            sol = _milp_weights(Z, y)
            if sol is not None and _verify_weights(Z, y, *sol):
                return True, sol[0], sol[1], None
            raise DepthsepError("LP feasible but no integer weights verified; please report this table")
    cert = _summability(Z, y)
    if cert is None:
        raise DepthsepError("the LP says 'not threshold' but no exact summability certificate was "
                            "found; please report this table")
    return False, None, None, cert


def _result(n: int, decided) -> ThresholdTest:
    ok, w, t, cert = decided
    if not ok:
        return ThresholdTest(False, None, None, n, cert)
    arr = np.asarray(w, dtype=np.int64).reshape(n)
    arr.setflags(write=False)
    return ThresholdTest(True, arr, int(t), n, None)


# --------------------------------------------------------------------------- public API
def is_threshold_function(truth_table, *, minimal: "bool | None" = None) -> ThresholdTest:
    """Decide whether a truth table is a threshold function, with exact integer weights.

    Parameters
    ----------
    truth_table : array_like of 0/1, length 2^N (cube order), N <= ``MAX_LP_BITS`` (16)
    minimal : bool, optional
        Return the weights minimising ``sum |w_i|`` (then ``|t|``) by an exact MILP.  Default:
        True for N <= ``MAX_MILP_BITS`` (6), otherwise the LP vertex minimising ``sum |w_i|``
        scaled to integers (still exact, not necessarily minimal).

    Returns
    -------
    ThresholdTest
        Truthy iff threshold; unpacks as ``(is_threshold, weights, threshold)``.  Weights are
        verified on all 2^N points; a "no" carries an exact :class:`Summability` certificate.

    Raises
    ------
    DimensionError
        Length not a power of two, or N > 16.
    InvalidCircuitError
        Entries other than 0 and 1.

    Examples
    --------
    >>> from circuits.functions import majority
    >>> ok, w, t = is_threshold_function(majority(3))
    >>> ok, w.tolist(), t
    (True, [1, 1, 1], 2)
    >>> res = is_threshold_function([0, 1, 1, 0])           # XOR: (1,0)+(0,1) = (0,0)+(1,1)
    >>> res.is_threshold, res.certificate.order
    (False, 2)

    Notes
    -----
    THEORY.md section 1.5 (margin-1 LP, scipy HiGHS; integer weights by MILP or scaling).
    Constants are threshold functions (``w = 0``, ``t = 0`` or ``1``).
    """
    t, n = _table(truth_table, max_bits=MAX_LP_BITS, what="is_threshold_function")
    if minimal is None:
        minimal = n <= MAX_MILP_BITS
    Z = points(n)
    return _result(n, _decide(Z, t, integer="milp" if minimal else "scale", table_n=n))


def minimal_weights(truth_table, *, objective: str = "sum") -> ThresholdTest:
    """Integer weights of smallest total ``sum |w_i|`` (or largest ``max |w_i|``), N <= 6.

    Parameters
    ----------
    truth_table : array_like of 0/1, length 2^N with N <= ``MAX_MILP_BITS``
    objective : {"sum", "max"}
        Minimise ``sum_i |w_i|`` (default) or ``max_i |w_i|``; ties are broken by the smallest
        ``|t|``.  Solved exactly by ``scipy.optimize.milp`` (HiGHS, ``mip_rel_gap=0``) and
        re-verified on every point.

    Returns
    -------
    ThresholdTest
        ``is_threshold`` False (with a certificate) if the table is not threshold.

    Examples
    --------
    >>> from circuits.functions import ThresholdFunction
    >>> tt = ThresholdFunction([7, 7, 14], 14).truth_table()      # needlessly large weights
    >>> r = minimal_weights(tt)
    >>> r.weights.tolist(), r.threshold
    ([1, 1, 2], 2)
    """
    if objective not in ("sum", "max"):
        raise ValueError(f"objective must be 'sum' or 'max', got {objective!r}")
    t, n = _table(truth_table, max_bits=MAX_MILP_BITS, what="minimal_weights")
    Z = points(n)
    if np.all(t == t[0]):
        return _result(n, _decide(Z, t))
    cert = _unate_certificate(t, n)
    if cert is not None:
        return ThresholdTest(False, None, None, n, cert)
    sol = _milp_weights(Z, t, objective)
    if sol is None:
        return _result(n, _decide(Z, t))
    if not _verify_weights(Z, t, *sol):
        raise DepthsepError("the MILP returned weights that fail the exact check; please report")
    return _result(n, (True, sol[0], sol[1], None))


def chow_parameters(truth_table) -> np.ndarray:
    """Chow parameters ``[c_0, c_1, ..., c_N]`` (int64) of a 0/1 truth table.

    ``c_0 = sum_z F(z)`` and ``c_i = sum_z F(z) (-1)^{z_i}`` with ``F = 1 - 2 f``: the
    unnormalised Walsh coefficients at the empty set and the singletons.  By Chow's theorem a
    threshold function is the only Boolean function with its Chow parameters.

    Examples
    --------
    >>> chow_parameters([0, 0, 0, 1]).tolist()          # AND: F = (1, 1, 1, -1)
    [2, 2, 2]
    """
    t, n = _table(truth_table, max_bits=62, what="chow_parameters")
    F = 1 - 2 * t.astype(np.int64)
    out = np.empty(n + 1, dtype=np.int64)
    out[0] = F.sum()
    idx = np.arange(t.shape[0], dtype=np.int64)
    for i in range(n):
        out[i + 1] = np.where(((idx >> i) & 1) == 0, F, -F).sum()
    return out


def threshold_gate(truth_table) -> ThresholdCircuit:
    """A single-gate :class:`ThresholdCircuit` computing the table, with minimal weights.

    Its ``layers[0]`` (a one-row :class:`~circuits.threshold.ThresholdLayer`) or
    ``(weights, threshold)`` can be inserted directly into a larger circuit.

    Raises
    ------
    InvalidCircuitError
        If the table is not a threshold function.

    Examples
    --------
    >>> g = threshold_gate([0, 1, 1, 1])                # OR
    >>> g.layers[0].weights.tolist(), g.layers[0].thresholds.tolist()
    ([[1, 1]], [1])
    """
    t, n = _table(truth_table, max_bits=MAX_LP_BITS, what="threshold_gate")
    if n == 0:
        raise DimensionError("threshold_gate needs at least one input (a table of length >= 2)")
    res = is_threshold_function(t)
    if not res:
        raise InvalidCircuitError(
            f"the table is not a threshold function ({res.certificate.order}-summable: see "
            f"is_threshold_function(...).certificate); use min_depth2_size for a depth-2 circuit")
    return res.gate()


# --------------------------------------------------------------------------- enumeration
def _codes_to_tables(codes: np.ndarray, n: int) -> np.ndarray:
    k = np.arange(1 << n, dtype=np.uint64)
    return ((codes.astype(np.uint64)[:, None] >> k) & np.uint64(1)).astype(np.uint8)


def _tables_to_codes(tables: np.ndarray) -> np.ndarray:
    k = np.arange(tables.shape[1], dtype=np.uint64)
    return (tables.astype(np.uint64) << k).sum(axis=1, dtype=np.uint64)


def monotone_functions(n: int) -> np.ndarray:
    """All monotone Boolean functions of ``n <= 5`` inputs as uint8 tables (Dedekind numbers).

    Built recursively: f is monotone iff its two halves (last input 0 / 1) are monotone and
    ``f_0 <= f_1`` pointwise.

    >>> [monotone_functions(n).shape[0] for n in range(5)]
    [2, 3, 6, 20, 168]
    """
    n = check_n_bits(n, name="n", maximum=MAX_ENUM_BITS)
    codes = np.array([0, 1], dtype=np.uint64)
    for m in range(n):
        half = np.uint64(1 << m)
        f0, f1 = np.meshgrid(codes, codes, indexing="ij")
        ok = (f0 & ~f1) == 0
        codes = (f0[ok] | (f1[ok] << half)).astype(np.uint64)
        codes.sort()
    return _codes_to_tables(codes, n)


_THRESHOLD_CODES: dict = {}      # n -> sorted uint64 table codes (computed once per process)


def all_threshold_functions(n: int, *, progress: bool = False) -> np.ndarray:
    """All threshold functions of ``n <= 5`` inputs as uint8 tables (rows sorted by table code).

    Every threshold function is a monotone threshold function with some inputs negated (flip
    the sign of each negative weight), so we decide each monotone function exactly
    (:func:`is_threshold_function`) and close the positive ones under input negations.

    >>> all_threshold_functions(2).shape
    (14, 4)
    """
    n = check_n_bits(n, name="n", maximum=MAX_ENUM_BITS)
    if n not in _THRESHOLD_CODES:
        mono = monotone_functions(n)
        Z = points(n)
        keep = []
        with progress_bar(mono.shape[0], enabled=progress, desc=f"threshold functions N={n}") as bar:
            for row in mono:
                if _decide(Z, row, table_n=n)[0]:
                    keep.append(row)
                bar.update(1)
        base = np.array(keep, dtype=np.uint8)
        idx = np.arange(1 << n, dtype=np.int64)
        allt = np.concatenate([base[:, idx ^ s] for s in range(1 << n)])
        _THRESHOLD_CODES[n] = np.unique(_tables_to_codes(allt))
    codes = _THRESHOLD_CODES[n]
    return _codes_to_tables(codes, n)


def count_threshold_functions(n: int, *, method: str = "monotone", progress: bool = False) -> int:
    """Number of threshold functions of ``n`` inputs (OEIS A000609: 2, 4, 14, 104, 1882, 94572).

    Parameters
    ----------
    n : int
        0 <= n <= 5 for ``method="monotone"``, n <= 4 for ``"exhaustive"``.
    method : {"monotone", "exhaustive"}
        ``"monotone"``: decide the Dedekind-many monotone functions and close under input
        negations (168 LPs at n = 4, under a second).  ``"exhaustive"``: decide all
        2^(2^n) tables (non-unate ones by an exact 2-summability certificate, the rest by LP);
        an independent cross-check.
    progress : bool
        Show a progress bar.

    Every decision is certified exactly (integer weights or a summability certificate).

    Examples
    --------
    >>> [count_threshold_functions(n) for n in range(4)]
    [2, 4, 14, 104]
    """
    if method == "monotone":
        return int(all_threshold_functions(n, progress=progress).shape[0])
    if method != "exhaustive":
        raise ValueError(f"method must be 'monotone' or 'exhaustive', got {method!r}")
    n = check_n_bits(n, name="n", maximum=4)
    size = 1 << n
    codes = np.arange(1 << size, dtype=np.uint64)
    tables = _codes_to_tables(codes, n)
    idx = np.arange(size, dtype=np.int64)
    unate = np.ones(tables.shape[0], dtype=bool)
    for i in range(n):
        lo = idx[((idx >> i) & 1) == 0]
        hi = lo | (1 << i)
        a, b = tables[:, lo], tables[:, hi]
        unate &= np.all(a <= b, axis=1) | np.all(a >= b, axis=1)
    Z = points(n)
    count = 0
    cand = np.flatnonzero(unate)
    with progress_bar(cand.size, enabled=progress, desc=f"exhaustive N={n}") as bar:
        for j in cand:
            count += bool(_decide(Z, tables[j], table_n=n)[0])
            bar.update(1)
    return int(count)


# --------------------------------------------------------------------------- depth-2 search
def min_depth2_size(truth_table, max_size: int, *, max_candidates: int = 10**7,
                    progress: bool = False) -> Depth2Size:
    """Least number of hidden gates of a layered THR o THR circuit computing f (N <= 4).

    Exhaustive over sets of hidden gates: s hidden threshold functions g_1..g_s work iff
    (i) equal hidden patterns imply equal f, and (ii) f, as a partial function of the
    pattern ``(g_1(z), ..., g_s(z))``, is threshold on the patterns that occur (THEORY.md
    section 1.5).  Hidden gates are taken up to complement (the top gate can negate a
    weight) and never constant; every top-gate decision is certified exactly and the
    returned circuit is re-verified on the whole cube.

    Parameters
    ----------
    truth_table : array_like of 0/1, length 2^N, 1 <= N <= 4
    max_size : int
        Largest number of hidden gates to try.
    max_candidates : int
        Refuse searches that could examine more hidden-gate sets than this.
    progress : bool

    Returns
    -------
    Depth2Size
        ``(size, circuit, n_checked)``; ``size`` is None when more than ``max_size`` gates
        are needed.

    Examples
    --------
    >>> from circuits.functions import parity
    >>> [min_depth2_size(parity(n), 3).size for n in (2, 3)]
    [2, 3]
    """
    t, n = _table(truth_table, max_bits=MAX_SEARCH_BITS, what="min_depth2_size")
    if n == 0:
        raise DimensionError("min_depth2_size needs N >= 1 inputs (a table of length >= 2)")
    max_size = check_n_bits(max_size, name="max_size", minimum=1, maximum=6)
    allf = all_threshold_functions(n)
    reps = allf[(allf[:, 0] == 0) & (allf.max(axis=1) == 1)]     # up to complement, non-constant
    n_reps = reps.shape[0]
    worst = sum(math.comb(n_reps, s) for s in range(1, max_size + 1))
    if worst > max_candidates:
        raise DimensionError(
            f"min_depth2_size(N={n}, max_size={max_size}) could examine {worst} hidden-gate sets "
            f"(> max_candidates={max_candidates}); lower max_size or raise max_candidates")
    ones = t == 1
    cache: dict = {}
    checked = 0
    with progress_bar(worst, enabled=progress, desc="depth-2 search") as bar:
        for s in range(1, max_size + 1):
            combos = itertools.combinations(range(n_reps), s)
            while True:
                chunk = np.fromiter(itertools.chain.from_iterable(itertools.islice(combos, 1 << 15)),
                                    dtype=np.int64)
                if chunk.size == 0:
                    break
                chunk = chunk.reshape(-1, s)
                codes = np.zeros((chunk.shape[0], t.shape[0]), dtype=np.int64)
                for j in range(s):
                    codes |= reps[chunk[:, j]].astype(np.int64) << j
                bitsets = np.left_shift(np.uint64(1), codes.astype(np.uint64))
                m1 = np.bitwise_or.reduce(np.where(ones, bitsets, np.uint64(0)), axis=1)
                m0 = np.bitwise_or.reduce(np.where(ones, np.uint64(0), bitsets), axis=1)
                good = np.flatnonzero((m1 & m0) == 0)
                for g in good:
                    key = (int(m1[g]), int(m0[g]))
                    if key not in cache:
                        cache[key] = _top_gate(key, s)
                    if cache[key] is not None:
                        checked += int(g) + 1
                        circuit = _build_depth2(reps[chunk[g]], cache[key], t, n)
                        return Depth2Size(s, circuit, checked)
                checked += chunk.shape[0]
                bar.update(chunk.shape[0])
    return Depth2Size(None, None, checked)


def _top_gate(key, s: int):
    """Integer (v, s0) of a top gate for the partial function given by pattern bitsets, or None."""
    m1, m0 = key
    pats = [p for p in range(1 << s) if (m1 >> p) & 1 or (m0 >> p) & 1]
    Z = ((np.asarray(pats, dtype=np.int64)[:, None] >> np.arange(s)) & 1).astype(np.uint8)
    y = np.array([(m1 >> p) & 1 for p in pats], dtype=np.uint8)
    ok, w, thr, _ = _decide(Z, y, integer="milp")
    return (w, thr) if ok else None


def _build_depth2(hidden_tables: np.ndarray, top, target: np.ndarray, n: int) -> ThresholdCircuit:
    from circuits.simulate import truth_table as _tt

    W, T = [], []
    Z = points(n)
    for row in hidden_tables:
        ok, w, thr, _ = _decide(Z, row, integer="milp")
        if not ok:  # pragma: no cover - rows come from threshold_functions
            raise DepthsepError("internal error: a hidden gate is not threshold")
        W.append(w)
        T.append(thr)
    c = ThresholdCircuit.depth2(W, T, top[0], top[1])
    if not np.array_equal(_tt(c), target):
        raise DepthsepError("internal error: the depth-2 witness fails the exhaustive check")
    return c
