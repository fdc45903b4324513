"""NP classes of threshold functions of up to 7 inputs, by a compiled weight enumeration.

Every threshold function is, up to negating and permuting inputs, a *regular positive* one
``[w . z >= t]`` with ``w_1 >= ... >= w_k >= 0``, whose table is unique in its NP class.
:func:`regular_threshold_tables` lists the tables of all such weight vectors with
``w_1 <= max_weight`` and every threshold (one compiled pass per weight vector: the points sorted
by ``w . z``, one table per distinct value).  The list is complete once ``max_weight`` reaches
the largest minimal weight; completeness is *checked*, not assumed: the number of threshold
functions the classes generate (:func:`count_from_tables`, orbit sizes ``2^r k! / prod |C|!``)
must equal the published count (OEIS A000609; A000609(7) = 8,378,070,864, Winder 1965), and a
missing class would make it smaller.  The naive twin is
:func:`~circuits.analysis.synthesis.weights.threshold_class_representatives` (k <= 6).
"""

from __future__ import annotations

import itertools
from math import factorial

import numpy as np

from circuits._jit import njit
from circuits.hypercube import check_n_bits, points

__all__ = ["regular_threshold_tables", "count_from_tables", "complete_tables",
           "largest_minimal_weight", "A000609"]

#: OEIS A000609: threshold functions of k = 0..8 inputs (Winder 1965; Muroga, Tsuboi, Baugh 1970).
A000609 = (2, 4, 14, 104, 1882, 94572, 15028134, 8378070864, 17561539552946)


@njit(cache=True, nogil=True)
def _tables_kernel(wvecs, P, out_lo, out_hi):  # pragma: no cover - compiled
    K = P.shape[0]
    k = P.shape[1]
    n_out = 0
    v = np.empty(K, dtype=np.int64)
    for m in range(wvecs.shape[0]):
        for z in range(K):
            acc = 0
            for i in range(k):
                acc += P[z, i] * wvecs[m, i]
            v[z] = acc
        order = np.argsort(-v, kind="mergesort")
        lo = np.uint64(0)
        hi = np.uint64(0)
        idx = 0
        while idx < K:
            val = v[order[idx]]
            while idx < K and v[order[idx]] == val:
                z = order[idx]
                if z < 64:
                    lo |= np.uint64(1) << np.uint64(z)
                else:
                    hi |= np.uint64(1) << np.uint64(z - 64)
                idx += 1
            out_lo[n_out] = lo
            out_hi[n_out] = hi
            n_out += 1
    return n_out


def _unique_pairs(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    pairs = np.stack([lo, hi], axis=1)
    return np.unique(pairs, axis=0)


def regular_threshold_tables(k: int, max_weight: int, *, chunk: int = 20000) -> np.ndarray:
    """Tables of all regular positive threshold functions with first weight <= max_weight.

    Parameters
    ----------
    k : int
        Inputs, 0 <= k <= 7.
    max_weight : int
        Largest first weight enumerated.
    chunk : int
        Weight vectors per compiled call.

    Returns
    -------
    numpy.ndarray
        uint64 array of shape (classes, 2): the table's bits 0..63 and 64..127 (point z is bit
        z, cube order), sorted, one row per distinct table (the constant 0 included).

    Examples
    --------
    >>> [len(regular_threshold_tables(k, 3)) for k in range(5)]
    [2, 3, 5, 10, 27]
    """
    k = check_n_bits(k, name="k", maximum=7)
    P = points(k).astype(np.int64)
    K = P.shape[0]
    found = [np.zeros((1, 2), dtype=np.uint64)]                 # the constant 0 (t > sum w)
    gen = itertools.combinations_with_replacement(range(int(max_weight), -1, -1), k)
    while True:
        rows = list(itertools.islice(gen, chunk))
        if not rows:
            break
        block = np.array(rows, dtype=np.int64).reshape(len(rows), k)
        lo = np.empty(block.shape[0] * K, dtype=np.uint64)
        hi = np.empty_like(lo)
        used = _tables_kernel(block, P, lo, hi)
        found.append(_unique_pairs(lo[:used], hi[:used]))
        if len(found) > 16:
            found = [_unique_pairs(*np.concatenate(found).T)]
    allp = np.concatenate(found)
    return _unique_pairs(allp[:, 0], allp[:, 1])


def _bits(tables: np.ndarray, k: int) -> np.ndarray:
    """(classes, 2^k) bool array of the packed tables."""
    z = np.arange(min(1 << k, 64), dtype=np.uint64)
    parts = [(tables[:, :1] >> z) & np.uint64(1)]
    if k == 7:
        parts.append((tables[:, 1:] >> z) & np.uint64(1))
    return np.concatenate(parts, axis=1).astype(bool)


def count_from_tables(tables: np.ndarray, k: int) -> "tuple[int, list[int]]":
    """(number of threshold functions of k inputs, classes per number of relevant inputs).

    A regular positive table with r relevant inputs and blocks C of consecutive symmetric
    inputs (adjacent swaps that leave it unchanged; the irrelevant inputs are the last block)
    has ``2^r k! / prod |C|!`` images under negating and permuting inputs.

    Parameters
    ----------
    tables : numpy.ndarray
        Output of :func:`regular_threshold_tables`.
    k : int
        Inputs.

    Returns
    -------
    (int, list of int)
        The count (A000609(k) when the tables are complete) and the classes with exactly
        r = 0..k relevant inputs (OEIS A000619).
    """
    B = _bits(tables, k)
    idx = np.arange(1 << k)
    relevant = np.zeros(len(B), dtype=np.int64)
    for i in range(k):
        relevant += np.any(B != B[:, idx ^ (1 << i)], axis=1)
    sym = np.zeros((len(B), max(k - 1, 0)), dtype=bool)
    for j in range(k - 1):
        bi, bj = (idx >> j) & 1, (idx >> (j + 1)) & 1
        swapped = idx ^ ((bi ^ bj) << j) ^ ((bi ^ bj) << (j + 1))
        sym[:, j] = np.all(B == B[:, swapped], axis=1)
    total = 0
    for row in range(len(B)):
        stab, run = 1, 1
        for j in range(k - 1):
            run = run + 1 if sym[row, j] else 1
            stab *= run                     # multiplies in 1 * 2 * ... * |block|
        total += (1 << int(relevant[row])) * factorial(k) // stab
    per_r = [int(np.sum(relevant == r)) for r in range(k + 1)]
    return total, per_r


def complete_tables(k: int, max_weight: int) -> np.ndarray:
    """:func:`regular_threshold_tables`, raising unless they generate all A000609(k) functions.

    Parameters
    ----------
    k : int
        Inputs, 0 <= k <= 7.
    max_weight : int
        Largest first weight enumerated (20 suffices at k = 7).

    Returns
    -------
    numpy.ndarray
        The packed tables, one per NP class.
    """
    from circuits.utils.errors import DepthsepError

    tables = regular_threshold_tables(k, max_weight)
    total, _ = count_from_tables(tables, k)
    if total != A000609[k]:
        raise DepthsepError(f"weights up to {max_weight} give {total:,} threshold functions of {k} "
                            f"inputs, OEIS A000609 has {A000609[k]:,}: raise max_weight")
    return tables


def largest_minimal_weight(k: int, *, max_weight: int, screen: "int | None" = None,
                           progress: bool = False) -> dict:
    """The largest ``min max_i |w_i|`` over all threshold functions of k <= 7 inputs.

    The classes come from :func:`complete_tables` (checked against A000609).  Classes already
    produced by weight vectors with ``w_1 <= screen`` have a representation with every
    ``|w_i| <= screen``; every other class gets an exact MILP
    (:func:`~circuits.analysis._threshold_lp._milp_weights`, HiGHS, re-verified on all points),
    and each class at the maximum M is confirmed by CP-SAT: no integer weights with
    ``|w_i| <= M - 1``.

    Parameters
    ----------
    k : int
        Inputs, 0 <= k <= 7.
    max_weight : int
        Weight range of the complete enumeration.
    screen : int, optional
        Weight range below which no MILP is needed (default: none, every class gets one).
    progress : bool
        Show a progress bar over the MILPs.

    Returns
    -------
    dict
        ``value`` (M; with ``exact`` False only an upper bound: no MILP class reached
        ``screen``), ``classes``,
        ``milps``, ``histogram`` (MILP value -> classes) and ``argmax`` (tables as 0/1 lists).
    """
    from circuits.analysis._threshold_lp import _milp_weights, _verify_weights
    from circuits.utils.errors import DepthsepError
    from circuits.utils.progress import progress_bar

    tables = complete_tables(k, max_weight)
    todo = tables
    if screen is not None:
        known = {tuple(r) for r in regular_threshold_tables(k, screen).tolist()}
        todo = np.array([r for r in tables.tolist() if tuple(r) not in known], dtype=np.uint64)
        todo = todo.reshape(-1, 2)
    Z = points(k)
    hist: "dict[int, int]" = {}
    worst: "list[np.ndarray]" = []
    best = -1
    with progress_bar(len(todo), enabled=progress, desc=f"MILPs k={k}") as bar:
        for y in _bits(todo, k).astype(np.uint8):
            m = 0
            if not np.all(y == y[0]):
                w, t = _milp_weights(Z, y, "max")
                if not _verify_weights(Z, y, w, t):
                    raise DepthsepError("the MILP returned weights that fail the exact check")
                m = max(abs(x) for x in w)
            hist[m] = hist.get(m, 0) + 1
            if m > best:
                best, worst = m, [y]
            elif m == best:
                worst.append(y)
            bar.update(1)
    for y in worst:
        if best > 0 and _cp_sat_weights(y, k, best - 1) != "infeasible":
            raise DepthsepError(f"CP-SAT does not confirm that a class needs weight {best}")
    # screened classes need at most `screen`: the maximum is exact when a MILP class reaches it
    exact = screen is None or len(todo) == len(tables) or best >= screen
    value = best if exact else screen
    return {"value": int(value), "exact": bool(exact), "classes": int(len(tables)), "milps": int(len(todo)),
            "histogram": {str(a): b for a, b in sorted(hist.items())},
            "argmax": [y.tolist() for y in worst[:5]]}


def _cp_sat_weights(y: np.ndarray, k: int, bound: int) -> str:
    """Does a threshold representation with every |w_i|, and |t| within reach, <= bound exist?"""
    from circuits.analysis.synthesis.solver import _cp_model

    cp_model, _ = _cp_model()
    Z = points(k).astype(bool)
    m = cp_model.CpModel()
    w = [m.NewIntVar(-bound, bound, "") for _ in range(k)]
    t = m.NewIntVar(-k * bound - 1, k * bound + 1, "")
    for z in range(1 << k):
        e = sum(w[i] for i in range(k) if Z[z, i])
        m.Add(e >= t) if y[z] else m.Add(e <= t - 1)
    s = cp_model.CpSolver()
    s.parameters.num_workers = 1
    s.parameters.max_time_in_seconds = 120.0
    st = s.Solve(m)
    if st in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return "feasible"
    return "infeasible" if st == cp_model.INFEASIBLE else "unknown"
