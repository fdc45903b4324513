"""Counting and searching threshold circuits: monotone and threshold functions of N <= 5 inputs
(OEIS A000372 and A000609, THEORY E18) and the least layered THR o THR circuit for a small
function (E19).  Every function is decided exactly by
:func:`circuits.analysis.threshold_functions.is_threshold_function`.
"""

from __future__ import annotations

import itertools
import math
from typing import NamedTuple

import numpy as np

from circuits.analysis._threshold_lp import _decide
from circuits.analysis.threshold_functions import _table
from circuits.utils.errors import DepthsepError, DimensionError
from circuits.hypercube import check_n_bits, points
from circuits.utils.progress import progress_bar
from circuits.threshold import ThresholdCircuit

__all__ = ["Depth2Size", "monotone_functions", "all_threshold_functions",
           "count_threshold_functions", "min_depth2_size"]

#: Largest N for the enumerations (:func:`threshold_functions`, :func:`count_threshold_functions`).
MAX_ENUM_BITS = 5
#: Largest N for :func:`min_depth2_size`.
MAX_SEARCH_BITS = 4



class Depth2Size(NamedTuple):
    """Result of :func:`min_depth2_size`.

    ``size`` is the least number of hidden gates of a layered THR o THR circuit computing f
    (``None`` if it exceeds ``max_size``), ``circuit`` a verified witness, ``n_checked`` the
    number of hidden-gate sets examined.
    """

    size: "int | None"
    circuit: "ThresholdCircuit | None"
    n_checked: int


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

    Parameters
    ----------
    n : int
        Number of inputs, 0 <= n <= 5.
    progress : bool
        Show a progress bar (stderr; off by default).

    Examples
    --------
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

    Every decision is certified exactly (integer weights or a summability certificate).

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
