"""Catalogues of least THR o THR sizes: all NPN classes of 4-input functions, the symmetric
functions of 5 and 6 inputs.

The least number of hidden gates of a layered THR o THR circuit is invariant under negating
inputs (negate the hidden weights' columns), permuting inputs, and negating the output
(negate the top gate), so one representative per NPN class settles the class.  For 4 inputs
there are 222 classes (:func:`npn_classes`, counted here from all 65,536 functions under the
768 transformations; the count is checked).  Symmetric functions of n inputs are given by their
value on each Hamming weight; negating the output and negating all inputs (weight k -> n - k)
keep the size, which leaves :func:`symmetric_classes`.

:func:`catalogue` runs :func:`~circuits.analysis.synthesis.least.least_depth2` on each
representative (refutations confirmed by the second solver), then the least weight range
``W`` at which a circuit of that least size exists (``max_weight = 1, 2, ...``), and, with
``direct=True``, the least size when the inputs may also feed the top gate.
"""

from __future__ import annotations

import itertools
import time

import numpy as np

from circuits.hypercube import check_n_bits, points
from circuits.threshold import ThresholdCircuit, ThresholdLayer
from circuits.utils.errors import DepthsepError

__all__ = ["npn_classes", "symmetric_classes", "symmetric_circuit", "catalogue", "direct_row"]

#: The classical counts of NPN classes of Boolean functions of n = 0..5 inputs.
NPN_COUNTS = (1, 2, 4, 14, 222, 616126)


def _transforms(n: int) -> "list[np.ndarray]":
    """Point maps of every input permutation and negation (2^n n! of them)."""
    Z = points(n).astype(np.int64)
    w = 1 << np.arange(n, dtype=np.int64)
    out = []
    for perm in itertools.permutations(range(n)):
        for neg in range(1 << n):
            zz = Z[:, list(perm)] ^ ((neg >> np.arange(n)) & 1)
            out.append(zz @ w)
    return out


def npn_classes(n: int) -> "list[np.ndarray]":
    """One truth table per NPN class of n <= 4 input functions (the smallest code of each).

    Parameters
    ----------
    n : int
        Inputs, 0 <= n <= 4.

    Returns
    -------
    list of numpy.ndarray
        uint8 tables in cube order, sorted by code; 1, 2, 4, 14, 222 of them (checked).

    Examples
    --------
    >>> [len(npn_classes(n)) for n in range(4)]
    [1, 2, 4, 14]
    """
    n = check_n_bits(n, name="n", maximum=4)
    K = 1 << n
    codes = np.arange(1 << K, dtype=np.int64)
    bits = (codes[:, None] >> np.arange(K)) & 1
    weights = 1 << np.arange(K, dtype=np.int64)
    best = codes.copy()
    full = (1 << K) - 1
    for pi in _transforms(n):
        img = bits[:, pi] @ weights
        np.minimum(best, img, out=best)
        np.minimum(best, full ^ img, out=best)
    reps = np.unique(best)
    if len(reps) != NPN_COUNTS[n]:
        raise DepthsepError(f"found {len(reps)} NPN classes of {n}-input functions, the published "
                            f"count is {NPN_COUNTS[n]}")
    return [((int(c) >> np.arange(K)) & 1).astype(np.uint8) for c in reps]


def symmetric_classes(n: int) -> "list[tuple[str, np.ndarray]]":
    """Symmetric functions of n inputs up to output negation and input negation.

    Returns
    -------
    list of (str, numpy.ndarray)
        ``(values, table)``: ``values`` is f's value on Hamming weight 0..n as a 0/1 string,
        the smallest of its class (constants excluded).
    """
    n = check_n_bits(n, name="n", minimum=1, maximum=8)
    hw = points(n).sum(axis=1)
    seen, out = set(), []
    for code in range(1 << (n + 1)):
        v = [(code >> k) & 1 for k in range(n + 1)]
        forms = {tuple(v), tuple(1 - x for x in v), tuple(v[::-1]), tuple(1 - x for x in v[::-1])}
        key = min(forms)
        if key in seen or len(set(v)) == 1:
            continue
        seen.add(key)
        out.append(("".join(map(str, key)), np.array(key, dtype=np.uint8)[hw]))
    return out


def symmetric_circuit(values) -> "ThresholdCircuit":
    """The n-gate THR o THR circuit of a symmetric function (an upper bound on its least size).

    Hidden gates ``[sum z >= k]`` for k = 1..n; the top gate reads their prefix sums
    ``P(w) = sum_{k <= w} v_k``, chosen as f's value on Hamming weight w (or 1 - f's when f is 1
    on weight 0, with the top gate negated), so every weight is in {-1, 0, 1}.

    Parameters
    ----------
    values : sequence of 0/1, length n + 1
        f's value on Hamming weight 0..n.

    Returns
    -------
    ThresholdCircuit
        Re-verified on the whole cube.
    """
    from circuits.analysis.synthesis.solver import verify_witness

    vals = [int(x) for x in values]
    n = len(vals) - 1
    flip = vals[0] == 1
    p = [1 - x if flip else x for x in vals]
    v = np.array([[p[k] - p[k - 1] for k in range(1, n + 1)]], dtype=np.int64)
    hidden = ThresholdLayer(np.ones((n, n), dtype=np.int64), np.arange(1, n + 1, dtype=np.int64))
    top = ThresholdLayer(-v, np.array([0], dtype=np.int64)) if flip else \
        ThresholdLayer(v, np.array([1], dtype=np.int64))
    circ = ThresholdCircuit((hidden, top))
    verify_witness(circ, np.array(vals, dtype=np.uint8)[points(n).sum(axis=1)])
    return circ


def _least_weight(t, size: int, time_limit: float, num_workers: int, cap: int) -> dict:
    """Smallest W <= cap with a circuit of ``size`` hidden gates and every |w| <= W."""
    from circuits.analysis.synthesis.model import decide_depth2

    tried = []
    for w in range(1, cap + 1):
        claim, circ = decide_depth2(t, size, max_weight=w, time_limit=time_limit,
                                    num_workers=num_workers)
        tried.append(claim.status)
        if claim.status == "feasible":
            return {"least_weight": w, "decided": all(s != "unknown" for s in tried),
                    "circuit_max_weight": int(circ.max_abs_weight)}
    return {"least_weight": None, "decided": False, "tried": tried}


def _depth3_row(t, size: int, time_limit: float, num_workers: int) -> dict:
    """least_depth3 of one table, with the enumerator's first layer next to it (N <= 4)."""
    from circuits.analysis.synthesis.least3 import first_layer_by_enumeration, least_depth3

    d3 = least_depth3(t, size, time_limit=time_limit, num_workers=num_workers)
    if int(t.size).bit_length() - 1 <= 4:
        e = first_layer_by_enumeration(t)
        d3["enumerator"] = e
        if d3["first"] is not None:
            # the enumerator sees first layers of 1 or 2 gates ("None": more than 2); a
            # disagreement is recorded in the row and counted by the catalogue's summary
            want = d3["first"] if d3["first"] <= 2 else None
            d3["enumerator_agrees"] = e["first"] == want and (
                want is None or e["second"] == d3["second"])
    return d3


def direct_row(t, *, lower: int = 1, max_size: int = 8, time_limit: float = 20.0,
               num_workers: int = 1) -> dict:
    """The least size with input-to-top wires: CP-SAT, each refutation checked by the second
    solver where the top gate's fan-in s + N is at most 8 (``refutations_confirmed``)."""
    from circuits.analysis.synthesis.least import least_depth2

    d = least_depth2(t, lower=lower, max_size=max_size, time_limit=time_limit, direct=True,
                     num_workers=num_workers, cross_check=False)
    return {"size": d.size, "lower": d.lower, "upper": d.upper,
            "refutations_confirmed": d.refutations_confirmed,
            "claims": [{"size": c.size, "status": c.status, "wall_s": c.wall_s,
                        "second": (c.second or {}).get("verdict"),
                        "second_wall_s": (c.second or {}).get("wall_s")} for c in d.claims]}


def catalogue(functions, *, time_limit: float = 20.0, num_workers: int = 1,
              max_size: int = 8, weights: bool = True, direct: bool = False,
              depth3: bool = False, progress: bool = True, on_row=None) -> "list[dict]":
    """Least THR o THR size (and least weights, and the size with direct wires) of each table.

    Parameters
    ----------
    functions : iterable of (str, array_like)
        Names and truth tables.
    time_limit : float
        Seconds per decision (both solvers).
    num_workers : int
        CP-SAT threads.
    max_size : int
        Largest hidden size tried.
    weights : bool
        Also find the least weight range of a least-size circuit.
    direct : bool
        Also the least size with input-to-top wires (:func:`direct_row`: refutations
        confirmed by the second solver where the top gate's fan-in is at most 8).
    depth3 : bool
        Also the least THR o THR o THR layers
        (:func:`~circuits.analysis.synthesis.least3.least_depth3`: least first layer, least
        second layer at it, least total; CP-SAT), checked against the enumerator twin
        :func:`~circuits.analysis.synthesis.least3.first_layer_by_enumeration` for N <= 4.
    progress : bool
        One line per function on stderr.
    on_row : callable, optional
        Called with the rows so far after each function (to save partial results).

    Returns
    -------
    list of dict
        One row per function: ``name``, ``table`` (0/1 string), ``size``, ``lower``, ``upper``,
        ``refutations_confirmed``, ``disagreements``, ``weight`` (dict or None),
        ``direct`` (dict or None), ``depth3`` (dict or None), ``seconds``.
    """
    import sys

    from circuits.analysis.synthesis.least import least_depth2

    rows = []
    for name, table in functions:
        t = np.asarray(table, dtype=np.uint8)
        t0 = time.perf_counter()
        r = least_depth2(t, max_size=max_size, time_limit=time_limit, num_workers=num_workers,
                         quick_time=min(time_limit, 60.0))
        row = {"name": name, "table": "".join(map(str, t.tolist())), "size": r.size,
               "lower": r.lower, "upper": r.upper,
               "refutations_confirmed": r.refutations_confirmed,
               "disagreements": list(r.disagreements), "weight": None, "direct": None,
               "depth3": None,
               "claims": [{"size": c.size, "status": c.status, "wall_s": c.wall_s,
                           "enumerator": c.cross_checked,
                           "second": (c.second or {}).get("verdict")} for c in r.claims]}
        if weights and r.size is not None:
            row["weight"] = _least_weight(t, r.size, time_limit, num_workers,
                                          cap=max(1, int(r.circuit.max_abs_weight)))
        if direct:
            row["direct"] = direct_row(t, max_size=max_size, time_limit=time_limit,
                                       num_workers=num_workers)
        if depth3 and r.size is not None:
            row["depth3"] = _depth3_row(t, r.size, time_limit, num_workers)
        row["seconds"] = round(time.perf_counter() - t0, 3)
        rows.append(row)
        if on_row is not None:
            on_row(rows)
        if progress:
            size = r.size if r.size is not None else f"between {r.lower} and {r.upper or '?'}"
            print(f"catalogue {name}: size {size} ({row['seconds']:.1f} s)", file=sys.stderr,
                  flush=True)
    return rows
