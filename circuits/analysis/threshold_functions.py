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

from dataclasses import dataclass

import numpy as np

from circuits.analysis._threshold_lp import (Summability, _decide, _milp_weights,
                                             _unate_certificate, _verify_weights)
from circuits.utils.errors import DepthsepError, DimensionError, InvalidCircuitError
from circuits.functions import ThresholdFunction, as_truth_table
from circuits.hypercube import points
from circuits.threshold import ThresholdCircuit

__all__ = [
    "ThresholdTest", "Summability",
    "is_threshold_function", "minimal_weights", "chow_parameters", "threshold_gate",
    "MAX_LP_BITS", "MAX_MILP_BITS",
]

#: Largest N for which :func:`is_threshold_function` builds the 2^N-row LP (about 17 MB at 16).
MAX_LP_BITS = 16
#: Largest N for which :func:`minimal_weights` runs the exact MILP.
MAX_MILP_BITS = 6


# --------------------------------------------------------------------------- result types
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
        """JSON-ready dict of the test result and its certificate."""
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

    Parameters
    ----------
    truth_table : array_like
        0/1 truth table of length 2^N in cube order.

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

    Parameters
    ----------
    truth_table : array_like
        0/1 truth table of length 2^N in cube order.

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
