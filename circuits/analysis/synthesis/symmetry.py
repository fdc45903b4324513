"""Symmetry breaking for the synthesis models: which symmetries exist and how they are posted.

``"complement"`` (top weights >= 0), ``"order"`` (hidden truth tables sorted) and
``"function"`` (lex-leader over f's own signed input permutations, :func:`function_symmetries`);
the soundness argument for any subset is in :mod:`circuits.analysis.synthesis.model`.
"""

from __future__ import annotations

import numpy as np

from circuits.analysis.threshold_functions import _table
from circuits.hypercube import points
from circuits.utils.errors import InvalidArgumentError

__all__ = ["SYMMETRIES", "DEFAULT_SYMMETRY", "function_symmetries"]

#: Largest N the synthesis models accept (256-point models).
MAX_SYNTH_BITS = 8
SYMMETRIES = ("complement", "order", "function")
#: What ``symmetry=True`` switches on: the measured fastest set (``benchmarks/bench_least.py``:
#: breaking f's own group as well made CP-SAT no faster on PAR_5 and IP_3, see BENCHMARKS.md).
DEFAULT_SYMMETRY = ("complement", "order")


def _check_symmetry(symmetry) -> tuple:
    if symmetry is True:
        return DEFAULT_SYMMETRY
    if symmetry in (False, None):
        return ()
    if symmetry == "all":
        return SYMMETRIES
    sym = (symmetry,) if isinstance(symmetry, str) else tuple(symmetry)
    bad = [s for s in sym if s not in SYMMETRIES]
    if bad:
        raise InvalidArgumentError(f"symmetry must be True (the default {DEFAULT_SYMMETRY}), "
                                   f"False, 'all' or a subset of {SYMMETRIES}, got {bad!r}")
    return sym


def function_symmetries(truth_table) -> "list[tuple[np.ndarray, bool]]":
    """Signed coordinate permutations that map f to f or to 1 - f (a subset of f's group).

    Tests every transposition, single and pair negation, transposition of a negated pair,
    product of two disjoint transpositions and (N even) the swap of the two halves (x <-> y for
    IP).  For parity that includes generators of all permutations and negations, for IP_n of the
    pair permutations and the x <-> y swaps; any subset of the group is sound for lex-leader
    breaking (see :func:`decide_depth2`).

    Parameters
    ----------
    truth_table : array_like of 0/1, length 2^N, N <= 8
        The function f in cube order.

    Returns
    -------
    list of (numpy.ndarray, bool)
        ``(pi, flip)``: point ``k`` goes to point ``pi[k]`` and ``f[pi] == f ^ flip``; a gate
        table ``h`` is mapped to ``h[pi] ^ flip``.

    Examples
    --------
    >>> from circuits.functions import parity, inner_product_mod2
    >>> len(function_symmetries(parity(3)))      # 3 swaps, 3 + 3 negations, 3 (ij) n_i n_j
    12
    >>> len(function_symmetries(inner_product_mod2(2)))
    5
    """
    t, n = _table(truth_table, max_bits=MAX_SYNTH_BITS, what="function_symmetries")
    Z = points(n).astype(np.int64)
    weights = (1 << np.arange(n, dtype=np.int64))
    cands = []
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    ident = list(range(n))

    def swap(perm, i, j):
        perm = list(perm)
        perm[i], perm[j] = perm[j], perm[i]
        return perm
    for i, j in pairs:
        cands.append((swap(ident, i, j), ()))
        cands.append((ident, (i, j)))
        cands.append((swap(ident, i, j), (i, j)))
    cands += [(ident, (i,)) for i in range(n)]
    for a, (i, j) in enumerate(pairs):
        for (k, m) in pairs[a + 1:]:
            if len({i, j, k, m}) == 4:
                cands.append((swap(swap(ident, i, j), k, m), ()))
    if n >= 2 and n % 2 == 0:
        h = n // 2
        cands.append(([(i + h) % n for i in range(n)], ()))
    out, seen = [], set()
    for perm, neg in cands:
        zz = Z[:, perm].copy()
        for i in neg:
            zz[:, i] ^= 1
        pi = zz @ weights
        key = pi.tobytes()
        if key in seen or np.array_equal(pi, np.arange(pi.size)):
            continue
        for flip in (False, True):
            if np.array_equal(t[pi], t ^ np.uint8(flip)):
                seen.add(key)
                out.append((pi, flip))
                break
    return out


def _lex_geq(m, a, b) -> None:
    """Post ``a >=_lex b`` (position 0 most significant) for two lists of CP-SAT literals."""
    eq = m.NewConstant(1)
    for x, y in zip(a, b):
        if x is y:                       # equal position: the prefix stays equal
            continue
        m.AddBoolOr([eq.Not(), x, y.Not()])              # equal so far -> x >= y
        nxt = m.NewBoolVar("")
        m.AddBoolOr([eq.Not(), x, y, nxt])               # equal so far and x == y -> still equal
        m.AddBoolOr([eq.Not(), x.Not(), y.Not(), nxt])
        eq = nxt
