"""Weight bounds and NP classes of threshold functions: what makes a synthesis model complete.

Every threshold function of k inputs has an integer representation with ``|w_i| <= M(k)``.
:data:`MAX_TOTAL_WEIGHT` is the published largest minimal total weight (OEIS A003217; it bounds
every single weight too); for k <= 6 the sharper per-weight maxima are computed here exactly,
one MILP per NP class (:func:`max_minimal_weight` over :func:`threshold_class_representatives`,
whose count is checked against OEIS A000619).  :func:`weight_bound` returns the bound a model
uses for a gate of fan-in k and its source.
"""

from __future__ import annotations

import numpy as np

from circuits.hypercube import check_n_bits, points
from circuits.utils.errors import DepthsepError

__all__ = ["MAX_TOTAL_WEIGHT", "NP_CLASSES", "threshold_class_representatives",
           "count_threshold_functions_by_class", "count_threshold_n_classes",
           "max_minimal_weight", "weight_bound", "weight_bound_record"]

#: OEIS A003217: the largest minimal total weight of a threshold function of k inputs, k = 0..8
#: (Muroga 1971, p. 268; Muroga, Tsuboi, Baugh 1970).  Bounds every single weight too.
MAX_TOTAL_WEIGHT = (0, 1, 3, 5, 9, 17, 35, 79, 209)
#: Largest minimal max |w_i| for k = 0..7 inputs, computed here: k <= 6 by
#: :func:`max_minimal_weight` (one exact MILP per NP class of
#: :func:`threshold_class_representatives`; the tests recompute k <= 5, the slow test k = 6:
#: 1113 MILPs), k = 7 by :func:`~circuits.analysis.synthesis.classes.largest_minimal_weight`
#: (29,375 NP classes, complete against A000609(7); MILPs for the 480 classes that need a
#: first weight above 16, the 182 that need 18 confirmed by CP-SAT; slow test).
_MAX_SINGLE_WEIGHT = (0, 1, 1, 2, 3, 5, 9, 18)
#: OEIS A000619: NP classes (permutations and negations of inputs) of threshold functions of
#: exactly k variables, k = 0..6 (Muroga 1971); their partial sums count the classes of
#: functions of k inputs.
NP_CLASSES = (2, 1, 2, 5, 17, 92, 994)
#: Number of threshold functions of N = 0..5 inputs (OEIS A000609); strict gate order needs s
#: distinct ones (beyond N = 5 there are more than 64, the largest s accepted).
_N_THRESHOLD_FUNCTIONS = (2, 4, 14, 104, 1882, 94572)


def threshold_class_representatives(k: int) -> "list[np.ndarray]":
    """One truth table per NP class of threshold functions of k <= 6 inputs.

    Every threshold function becomes, by negating and permuting inputs, a *regular positive* one
    ``[w . z >= t]`` with ``w_1 >= w_2 >= ... >= w_k >= 0``, and that table is unique in its class.
    They are enumerated from all such weight vectors with ``w_1 <= _MAX_SINGLE_WEIGHT[k]`` and
    every threshold; the list is complete because its length equals the published number of
    classes (partial sums of OEIS A000619, :data:`NP_CLASSES`: 2, 3, 5, 10, 27, 119, 1113 for
    k = 0..6), which is checked here (a shortfall raises).

    Parameters
    ----------
    k : int
        Number of inputs, 0 <= k <= 6.

    Returns
    -------
    list of numpy.ndarray
        uint8 truth tables of length 2^k in cube order, in decreasing lexicographic order.

    Examples
    --------
    >>> [len(threshold_class_representatives(k)) for k in range(5)]
    [2, 3, 5, 10, 27]
    """
    import itertools

    k = check_n_bits(k, name="k", maximum=len(NP_CLASSES) - 1)
    P = points(k).astype(np.int64)
    wmax = max(1, _MAX_SINGLE_WEIGHT[k])
    seen = set()
    for w in itertools.combinations_with_replacement(range(wmax, -1, -1), k):
        v = P @ np.asarray(w, dtype=np.int64)
        for thr in range(0, int(sum(w)) + 2):
            seen.add((v >= thr).astype(np.uint8).tobytes())
    expected = sum(NP_CLASSES[:k + 1])
    if len(seen) != expected:
        raise DepthsepError(f"enumerated {len(seen)} NP classes of threshold functions of {k} "
                            f"inputs, the published count is {expected}; the weight range "
                            f"{wmax} is too small")
    return [np.frombuffer(b, dtype=np.uint8).copy() for b in sorted(seen, reverse=True)]


def count_threshold_functions_by_class(k: int) -> int:
    """Number of threshold functions of k <= 6 inputs (OEIS A000609), summed over NP classes.

    A regular positive representative g (:func:`threshold_class_representatives`) with r
    relevant inputs and classes C of mutually symmetric inputs (swapping two of them leaves g
    unchanged; the irrelevant inputs form one class) has ``2^r k! / prod |C|!`` distinct
    images under negating and permuting inputs: negating a relevant input makes g negative in
    it, and a permutation fixing a threshold function only permutes inputs of equal influence,
    which are symmetric.  Independent of the weight-based counter
    :func:`~circuits.analysis.count_threshold_functions` (E18), which stops at N = 5.

    Parameters
    ----------
    k : int
        Number of inputs, 0 <= k <= 6.

    Returns
    -------
    int
        The count: 2, 4, 14, 104, 1882, 94572, 15028134 for k = 0..6.

    Examples
    --------
    >>> [count_threshold_functions_by_class(k) for k in range(5)]
    [2, 4, 14, 104, 1882]
    """
    from math import factorial

    total = 0
    for relevant, stab in _class_orbits(k):
        total += (1 << relevant) * factorial(k) // stab
    return total


def _class_orbits(k: int):
    """(r, prod |C|!) per NP class representative of :func:`threshold_class_representatives`:
    its number of relevant inputs and the order of its input-permutation stabiliser (classes
    C of mutually symmetric inputs, the irrelevant inputs forming one class)."""
    k = check_n_bits(k, name="k", maximum=len(NP_CLASSES) - 1)
    from math import factorial

    idx = np.arange(1 << k)
    out = []
    for g in threshold_class_representatives(k):
        relevant = sum(1 for i in range(k) if not np.array_equal(g, g[idx ^ (1 << i)]))
        classes: "list[list[int]]" = []
        for i in range(k):
            for c in classes:
                j = c[0]
                bi, bj = (idx >> i) & 1, (idx >> j) & 1
                swapped = idx ^ ((bi ^ bj) << i) ^ ((bi ^ bj) << j)
                if np.array_equal(g[swapped], g):
                    c.append(i)
                    break
            else:
                classes.append([i])
        stab = 1
        for c in classes:
            stab *= factorial(len(c))
        out.append((relevant, stab))
    return out


def count_threshold_n_classes(k: int) -> int:
    """Number of N-classes (equivalence under negating inputs) of threshold functions of
    **exactly** k relevant inputs (OEIS A002079: 2, 1, 2, 9, 96, 2690, 226360 for k = 0..6).

    Every threshold function is N-equivalent to exactly one positive one (negate the inputs it
    decreases in), so the N-classes are the positive threshold functions; those of one NP class
    with regular positive representative g are its k!/prod |C|! input permutations (the same
    stabiliser as in :func:`count_threshold_functions_by_class`).  The sum runs over the
    representatives with all k inputs relevant.

    Parameters
    ----------
    k : int
        Number of inputs, 0 <= k <= 6.

    Returns
    -------
    int
        The count of classes of functions of exactly k relevant inputs.

    Examples
    --------
    >>> [count_threshold_n_classes(k) for k in range(6)]
    [2, 1, 2, 9, 96, 2690]
    """
    from math import factorial

    return sum(factorial(k) // stab for relevant, stab in _class_orbits(k) if relevant == k)


def max_minimal_weight(k: int) -> int:
    """Largest ``min max_i |w_i|`` over all threshold functions of k <= 6 inputs, by exact MILP.

    ``max_i |w_i|`` of a minimal representation does not change under negating or permuting
    inputs, so one MILP per NP class (:func:`threshold_class_representatives`) covers all
    threshold functions of k inputs.

    Parameters
    ----------
    k : int
        Number of inputs, 0 <= k <= 6 (k = 6: 1113 MILPs, about 10 s).

    Returns
    -------
    int
        The least W such that every threshold function of k inputs has integer weights with
        ``|w_i| <= W``.

    Examples
    --------
    >>> [max_minimal_weight(k) for k in range(5)]
    [0, 1, 1, 2, 3]
    """
    from circuits.analysis.threshold_functions import minimal_weights

    k = check_n_bits(k, name="k", maximum=len(NP_CLASSES) - 1)
    best = 0
    for row in threshold_class_representatives(k):
        r = minimal_weights(row, objective="max")
        best = max(best, int(np.abs(r.weights).max()) if r.weights.size else 0)
    return best


def weight_bound(k: int) -> "tuple[int, str]":
    """A weight bound that every threshold function of k inputs meets, and its source.

    Parameters
    ----------
    k : int
        Fan-in (number of inputs of the gate), 0 <= k <= 8.

    Returns
    -------
    (int, str)
        The bound W (every threshold function of k inputs has integer weights with |w_i| <= W)
        and where it comes from: "proven here: ..." for k <= 7 (the largest minimal max |w_i|,
        computed by this library, see :data:`_MAX_SINGLE_WEIGHT`), "published: ..." for k = 8
        (the largest minimal *total* weight 209, OEIS A003217, Muroga, Tsuboi, Baugh 1970;
        Muroga 1971, p. 268; a total bounds every single weight).
    """
    k = check_n_bits(k, name="fan-in", maximum=len(MAX_TOTAL_WEIGHT) - 1)
    if k < len(_MAX_SINGLE_WEIGHT):
        return max(1, _MAX_SINGLE_WEIGHT[k]), ("proven here: max minimal |w_i|, computed by MILP "
                                               "(k <= 6; k = 7 by enumeration of the NP classes)")
    return MAX_TOTAL_WEIGHT[k], ("published: OEIS A003217 max minimal total weight (Muroga, "
                                 "Tsuboi, Baugh 1970; Muroga 1971)")


def weight_bound_record(k: int) -> dict:
    """:func:`weight_bound` as a record for result files: ``fan_in``, ``bound``, ``source`` and
    ``proven_here`` (True where this library computed the bound, False where it is published).

    Parameters
    ----------
    k : int
        Fan-in, 0 <= k <= 8.

    Returns
    -------
    dict
        ``fan_in``, ``bound``, ``source``, ``proven_here``.

    Examples
    --------
    >>> weight_bound_record(7)["bound"], weight_bound_record(7)["proven_here"]
    (18, True)
    >>> weight_bound_record(8)["bound"], weight_bound_record(8)["proven_here"]
    (209, False)
    """
    bound, source = weight_bound(k)
    return {"fan_in": int(k), "bound": bound, "source": source,
            "proven_here": source.startswith("proven here")}
