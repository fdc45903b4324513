"""Least layered THR o THR o THR circuits: the least first layer and the least total size.

A depth-3 circuit with hidden layers of s1 and s2 gates computes f only if f is a function of
the first layer's outputs (two points with the same first-layer pattern get the same value), so
its first layer alone must *determine* f.  Conversely, if s1 threshold gates determine f, f is
``g(h_1, ..., h_s1)`` for a partial function g of s1 bits, and g has a THR o THR circuit with at
most s1 hidden gates when s1 <= 4 (the largest least depth-2 size over all functions of k
inputs is k for k = 1, 2, 3, 4: parity, computed by the NPN catalogues of
:mod:`~circuits.analysis.synthesis.catalogue`; a partial function needs no more gates than any
total extension).  So "some s2 works with s1 first-layer gates" is decided by the single
decision (s1, s1), and adding a second-layer gate never hurts (give it top weight 0).

:func:`least_depth3` uses this to find, with :func:`~circuits.analysis.synthesis.depth3.decide_depth3`:

* ``first``: the least s1 such that some THR o THR o THR circuit has s1 first-layer gates, and
  ``second``: the least s2 at that s1;
* ``total``: the least s1 + s2 over all layerings (at most the depth-2 size + 1: the depth-2
  circuit with its top gate copied through one second-layer gate).

Refutations here are CP-SAT's alone (the second solver has no depth-3 model); the enumerator
twin :func:`first_layer_by_enumeration` recomputes ``first`` (when it is at most 2) and the
``second`` at s1 = 2 from all pairs of threshold functions of N <= 4 inputs.
"""

from __future__ import annotations

import numpy as np

from circuits.analysis.synthesis.depth3 import decide_depth3
from circuits.analysis.synthesis.symmetry import MAX_SYNTH_BITS
from circuits.analysis.threshold_functions import _table
from circuits.utils.errors import InvalidArgumentError

__all__ = ["least_depth3", "first_layer_by_enumeration"]

#: Largest first layer for which (s1, s1) decides "some s2 works" (the least depth-2 size of
#: every function of k <= 4 inputs is at most k).
MAX_FIRST = 4


def least_depth3(truth_table, depth2_size: int, *, time_limit: float = 30.0,
                 num_workers: int = 1) -> dict:
    """Least first layer, least second layer at it, and least total size of THR o THR o THR.

    Parameters
    ----------
    truth_table : array_like of 0/1, length 2^N
        The function f in cube order.
    depth2_size : int
        f's least THR o THR hidden size (proved; e.g. from :func:`least_depth2`).  Depth 3 with
        layers (depth2_size, 1) always works, so it bounds both searches.
    time_limit : float
        Seconds per decision.
    num_workers : int
        CP-SAT threads.

    Returns
    -------
    dict
        ``first``, ``second``, ``total`` (int, or None when a decision ran out of time),
        ``total_layers`` (the (s1, s2) found at the least total), ``decided`` (every decision
        needed was decided), ``claims`` (each decision: sizes, status, seconds) and ``solver``.
    """
    t, n = _table(truth_table, max_bits=MAX_SYNTH_BITS, what="least_depth3")
    d2 = int(depth2_size)
    if d2 < 1:
        raise InvalidArgumentError(f"depth2_size must be a proved least THR o THR size >= 1, "
                                   f"got {depth2_size!r}")
    claims: "list[dict]" = []
    cache: "dict[tuple, str]" = {}

    def decide(s1: int, s2: int) -> str:
        if (s1, s2) not in cache:
            c, _ = decide_depth3(t, (s1, s2), time_limit=time_limit, num_workers=num_workers)
            cache[(s1, s2)] = c.status
            claims.append({"sizes": [s1, s2], "status": c.status, "wall_s": c.wall_s,
                           "complete": c.complete})
        return cache[(s1, s2)]

    decided = True
    first = None
    for s1 in range(1, min(d2, MAX_FIRST + 1)):
        st = decide(s1, s1)
        if st == "feasible":
            first = s1
            break
        if st == "unknown":
            decided = False
            break
    if first is None and decided:
        first = d2 if decide(d2, 1) == "feasible" else None
    second = None
    if first is not None:
        for s2 in range(1, first + 1):
            st = decide(first, s2)
            if st == "feasible":
                second = s2
                break
            if st == "unknown":
                decided = False
                break
    total, layers = None, None
    if first is not None:
        for size in range(first + 1, d2 + 2):
            statuses = {(s1, size - s1): decide(s1, size - s1) for s1 in range(first, size)}
            found = [k for k, v in statuses.items() if v == "feasible"]
            if found:
                total, layers = size, list(min(found))
                break
            if "unknown" in statuses.values():
                decided = False
                break
    return {"first": first, "second": second, "total": total, "total_layers": layers,
            "decided": decided and None not in (first, second, total), "claims": claims,
            "solver": "CP-SAT (decide_depth3); refutations not confirmed by a second solver"}


def first_layer_by_enumeration(truth_table) -> dict:
    """The enumerator twin for N <= 4: the least first layer if it is 1 or 2, by brute force.

    One threshold gate determines f iff f is a threshold function or a constant; two determine
    it iff some pair of threshold functions (all of them,
    :func:`~circuits.analysis.threshold_search.all_threshold_functions`) splits the cube into
    cells on which f is constant.  At s1 = 2 the least second layer is 1 when some such pair
    leaves a partial function of the 2 bits that extends to a threshold function (all but
    XOR / XNOR seen on all four cells), else 2.

    Parameters
    ----------
    truth_table : array_like of 0/1, length 2^N, N <= 4
        The function f in cube order.

    Returns
    -------
    dict
        ``first``: 1, 2, or None (more than 2); ``second``: the least s2 at s1 = first (1 at
        s1 = 1; None when first is None).
    """
    from circuits.analysis.threshold_search import all_threshold_functions

    t, n = _table(truth_table, max_bits=4, what="first_layer_by_enumeration")
    if n > 4:
        raise InvalidArgumentError(f"first_layer_by_enumeration enumerates pairs of threshold "
                                   f"functions of N <= 4 inputs, got N = {n}")
    thr = all_threshold_functions(n).astype(np.int64)            # (M, 2^n)
    if t.min() == t.max() or any(np.array_equal(t, g) for g in thr):
        return {"first": 1, "second": 1}
    first_found, one_gate = False, False
    for lo in range(0, thr.shape[0], 128):                        # chunks of first gates
        cell = thr[lo:lo + 128, None, :] * 2 + thr[None, :, :]    # (m, M, 2^n): cell 0..3
        ones = np.stack([((cell == c) & (t == 1)).any(axis=2) for c in range(4)], axis=2)
        zeros = np.stack([((cell == c) & (t == 0)).any(axis=2) for c in range(4)], axis=2)
        good = ~(ones & zeros).any(axis=2)                        # f constant on every cell
        if not good.any():
            continue
        first_found = True
        # the partial g on the cells (a, b) needs 2 gates iff all four cells occur and g is
        # XOR or XNOR of (a, b); otherwise it extends to a threshold function of 2 bits
        full = (ones | zeros).all(axis=2)
        xor = ones[..., 1] & ones[..., 2] & zeros[..., 0] & zeros[..., 3]
        xnor = zeros[..., 1] & zeros[..., 2] & ones[..., 0] & ones[..., 3]
        if (good & ~(full & (xor | xnor))).any():
            one_gate = True
            break
    if not first_found:
        return {"first": None, "second": None}
    return {"first": 2, "second": 1 if one_gate else 2}
