"""Lower-bound witnesses for the largest minimal per-gate weight, checked by two solvers.

The largest minimal ``max_i |w_i|`` over threshold functions of k inputs is computed exactly
here for k <= 7 (:mod:`~circuits.analysis.synthesis.weights`, :mod:`~circuits.analysis.synthesis.classes`:
0, 1, 1, 2, 3, 5, 9, 18).  At k = 8 the enumeration is out of reach and the model uses the
published largest minimal *total* weight 209 (OEIS A003217; Muroga, Tsuboi, Baugh 1970), which
bounds every single weight.  What can be proved here at k = 8 is a lower bound: one threshold
function whose every integer realisation has a weight of absolute value >= W.
:func:`check_weight_witness` proves such a claim for a given weight vector with two independent
solvers: the exact MILP (HiGHS, ``mip_rel_gap = 0``; its optimum re-verified on every point)
and CP-SAT deciding that no integer weights within ``[-(W - 1), W - 1]`` realise the table.

:data:`WITNESS_8` was found by a local search over positive weight vectors (each step an exact
MILP of the function's minimal max weight), so it shows that 8-input gates need weights of at
least its value; it is not claimed to be the largest.
"""

from __future__ import annotations

import numpy as np

from circuits.hypercube import points
from circuits.utils.errors import DepthsepError, InvalidArgumentError

__all__ = ["WITNESS_8", "check_weight_witness"]

#: (weights, threshold, W): ``[w·z >= t]`` on 8 inputs needs some |w_i| >= W in every integer
#: realisation (both solvers of :func:`check_weight_witness`; a test re-proves it).
WITNESS_8 = ((39, 23, 14, 9, 8, 5, 10, 3), 50, 39)


def check_weight_witness(weights, threshold: int, claimed: int, *, time_limit: float = 120.0,
                         num_workers: int = 1) -> dict:
    """Prove that ``[w·z >= t]`` needs a weight of absolute value >= ``claimed``.

    Parameters
    ----------
    weights : sequence of int
        A realisation of the threshold function (k = len(weights) <= 10 inputs).
    threshold : int
        Its threshold t.
    claimed : int
        The claimed least ``max_i |w_i|`` over all integer realisations.
    time_limit : float
        Seconds for CP-SAT ("unknown" when it runs out: then ``proved`` is False).
    num_workers : int
        CP-SAT threads.

    Returns
    -------
    dict
        ``k``, ``table`` (0/1 string in cube order), ``milp`` (the MILP's least max |w_i| and its
        weights), ``cpsat_below`` (CP-SAT's status for ``|w_i| <= claimed - 1``:
        "infeasible" proves the bound), ``proved`` (both agree with ``claimed``).

    Raises
    ------
    DepthsepError
        If either solver contradicts ``claimed`` (a realisation with smaller weights exists,
        or the MILP's optimum differs).
    """
    from circuits.analysis._threshold_lp import _milp_weights, _verify_weights
    from circuits.analysis.synthesis.solver import _cp_model

    w = np.asarray(weights, dtype=np.int64)
    k = int(w.size)
    if w.ndim != 1 or not 1 <= k <= 10:
        raise InvalidArgumentError(f"weights must be a list of 1 to 10 integers, got {weights!r}")
    claimed = int(claimed)
    if claimed < 1:
        raise InvalidArgumentError(f"claimed must be a positive integer, got {claimed}")
    Z = points(k).astype(np.int64)
    y = (Z @ w >= int(threshold)).astype(np.uint8)
    if y.min() == y.max():
        raise InvalidArgumentError("the weights and threshold give a constant function; a "
                                   "witness must be a non-constant threshold function")
    sol = _milp_weights(Z, y, "max")
    if sol is None or not _verify_weights(Z, y, *sol):
        raise DepthsepError("the MILP returned no weights that pass the exact check; please "
                            "report")
    milp = int(np.abs(np.asarray(sol[0])).max())
    cp_model, version = _cp_model()
    m = cp_model.CpModel()
    b = claimed - 1
    W = [m.NewIntVar(-b, b, f"w{i}") for i in range(k)]
    T = m.NewIntVar(-(k * b + 1), k * b + 1, "t")
    for z, v in zip(Z, y):
        s = sum(W[i] for i in range(k) if z[i])
        if v:
            m.Add(s >= T)
        else:
            m.Add(s <= T - 1)
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = float(time_limit)
    solver.parameters.num_workers = int(num_workers)
    st = solver.Solve(m)
    below = {cp_model.INFEASIBLE: "infeasible", cp_model.OPTIMAL: "feasible",
             cp_model.FEASIBLE: "feasible"}.get(st, "unknown")
    if milp != claimed or below == "feasible":
        raise DepthsepError(f"the witness claim {claimed} fails: the MILP's least max |w_i| is "
                            f"{milp}, CP-SAT within |w_i| <= {b}: {below}")
    return {"k": k, "table": "".join(map(str, y.tolist())), "claimed": claimed,
            "milp": {"value": milp, "weights": [int(v) for v in sol[0]],
                     "threshold": int(sol[1])},
            "cpsat_below": below, "cpsat_version": version,
            "proved": below == "infeasible"}
