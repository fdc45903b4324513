"""Covers of IP_k's ones by hyperplane sections: the blocks of :func:`circuits.ip_depth2_sections`.

A *hyperplane section* of the cube is a set ``S = {z in {0,1}^(2k) : w . z = u}`` (integer ``w``,
``u``).  If sections ``S_1..S_m`` all lie inside ``IP_k^{-1}(1)`` and together cover it, then

    P(z) = 1 - 2 sum_j [z in S_j]

is 1 where IP_k = 0 and at most -1 where IP_k = 1: an integer sign-representation of
``(-1)^IP_k`` with ``m + 1`` terms.  Products of such polynomials on disjoint blocks of pairs are
sign-representations again, and every product of sections on disjoint blocks is a section of
the whole cube (one linear form read in mixed radix), which is what makes the blocks
composable (see :mod:`circuits.ip_sections`).

:func:`pure_sections` enumerates every section with ``|w_i| <= max_weight`` that lies inside
``IP_k^{-1}(value)`` (forms up to IP_k's symmetries -- pair permutations and ``x_i <-> y_i`` --
then every image), and :func:`section_cover` picks the fewest of them covering the ones of
IP_k by a 0/1 program (HiGHS through :func:`scipy.optimize.milp`).  The least cover is least
*among the candidate sections*: a larger weight bound can only shrink it.
"""

from __future__ import annotations

import itertools
import time

import numpy as np

from circuits.hypercube import check_n_bits, points
from circuits.utils.errors import InvalidArgumentError
from circuits.utils.validation import check_int

__all__ = ["pure_sections", "section_cover", "is_section_cover"]


def _ip_points(k: int) -> tuple[np.ndarray, np.ndarray]:
    z = points(2 * k).astype(np.int64)                 # columns x_1..x_k, y_1..y_k
    ip = ((z[:, :k] * z[:, k:]).sum(axis=1) % 2).astype(np.int64)
    return z, ip


def _symmetry_maps(k: int) -> list[np.ndarray]:
    """IP_k's pair permutations times swaps, as index maps ``pi`` with ``w' = w[pi]``."""
    maps = []
    for perm in itertools.permutations(range(k)):
        for swap in itertools.product((0, 1), repeat=k):
            m = np.empty(2 * k, dtype=np.int64)
            for i, p in enumerate(perm):
                xi, yi = (k + p, p) if swap[i] else (p, k + p)
                m[i], m[k + i] = xi, yi
            maps.append(m)
    return maps


def _canonical_forms(k: int, max_weight: int):
    """One weight vector per orbit representative: pairs (w_x, w_y) with w_x >= w_y, sorted."""
    pairs = [(a, b) for a in range(-max_weight, max_weight + 1)
             for b in range(-max_weight, max_weight + 1) if a >= b]
    for combo in itertools.combinations_with_replacement(pairs, k):
        yield [c[0] for c in combo] + [c[1] for c in combo]


def pure_sections(k: int, max_weight: int, *, value: int = 1, min_size: int = 1,
                  chunk: int = 20000) -> list[tuple[tuple[int, ...], int, np.ndarray]]:
    """Every hyperplane section ``{w·z = u}`` with ``|w_i| <= max_weight`` inside IP_k = value.

    Parameters
    ----------
    k : int
        Pairs (IP_k has 2k inputs), 1 <= k <= 4.
    max_weight : int
        Largest absolute weight of the forms tried, 1 <= max_weight <= 8.
    value : int
        0 or 1: the sections must lie inside ``IP_k^{-1}(value)``.
    min_size : int
        Keep sections with at least this many points.
    chunk : int
        Forms evaluated at once (memory: chunk * 4^k int64 values).

    Returns
    -------
    list of (w, u, mask)
        One entry per distinct point set (the first form found), ``mask`` a bool array over
        the cube in :func:`circuits.hypercube.points` order.  Closed under IP_k's symmetries.

    Examples
    --------
    >>> len(pure_sections(1, 1))        # {x + y = 2} and {x = y = 1} under other names
    1
    """
    k = check_n_bits(k, name="k", minimum=1, maximum=4)
    max_weight = check_int(max_weight, name="max_weight", minimum=1, maximum=8)
    value = check_int(value, name="value", minimum=0, maximum=1)
    min_size = check_int(min_size, name="min_size", minimum=1)
    z, ip = _ip_points(k)
    target = ip == value
    n_pts = len(z)
    maps = _symmetry_maps(k)
    found: dict[bytes, tuple[tuple[int, ...], int, np.ndarray]] = {}
    forms = _canonical_forms(k, max_weight)
    while True:
        W = np.array(list(itertools.islice(forms, chunk)), dtype=np.int64)
        if W.size == 0:
            break
        V = W @ z.T
        V -= V.min(axis=1, keepdims=True)
        radix = int(V.max()) + 1
        key = (np.arange(len(W))[:, None] * radix + V).ravel()
        count = np.bincount(key, minlength=len(W) * radix)
        inside = np.bincount(key, weights=np.tile(target, len(W)), minlength=len(W) * radix)
        for hit in np.nonzero((count == inside) & (count >= min_size))[0]:
            r, level = divmod(int(hit), radix)
            w0 = W[r]
            u0 = int(level + (w0 @ z.T).min())
            for m in maps:
                w = w0[m]
                mask = (z @ w) == u0
                found.setdefault(np.packbits(mask).tobytes(), (tuple(int(v) for v in w), u0, mask))
    assert all(m.sum() >= min_size for _, _, m in found.values()) and n_pts == 4 ** k
    return list(found.values())


def is_section_cover(k: int, sections) -> bool:
    """Whether every ``(w, u)`` cuts a section inside IP_k's ones and together they cover them.

    Parameters
    ----------
    k : int
        Pairs.
    sections : sequence of (w, u)
        Integer forms of length 2k (x_1..x_k, y_1..y_k) and levels.

    Examples
    --------
    >>> is_section_cover(1, [((1, 1), 2)]), is_section_cover(1, [((1, 0), 1)])
    (True, False)
    """
    k = check_n_bits(k, name="k", minimum=1, maximum=10)
    z, ip = _ip_points(k)
    covered = np.zeros(len(z), dtype=bool)
    for w, u in sections:
        w = np.asarray(w, dtype=np.int64)
        if w.shape != (2 * k,):
            raise InvalidArgumentError(f"a section's form must have 2k = {2 * k} weights, got "
                                       f"shape {w.shape}")
        s = (z @ w) == int(u)
        if (ip[s] != 1).any():
            return False
        covered |= s
    return bool(covered[ip == 1].all())


def section_cover(k: int, max_weight: int, *, min_size: int = 1,
                  time_limit: float = 120.0) -> dict:
    """The fewest hyperplane sections (``|w_i| <= max_weight``) inside IP_k's ones covering them.

    Parameters
    ----------
    k : int
        Pairs, 1 <= k <= 4.
    max_weight : int
        Weight bound of the candidate forms (see :func:`pure_sections`).
    min_size : int
        Drop candidate sections with fewer points (faster; can only make the cover larger,
        and infeasible if some point is left in no candidate).
    time_limit : float
        Seconds for the 0/1 program.

    Returns
    -------
    dict
        ``sections`` (list of (w, u)), ``count``, ``status`` ("optimal": least among the
        candidates; "feasible": a cover, not proved least; "infeasible"; "unknown"),
        ``candidates``, ``max_weight``, ``min_size``, ``wall_s``.

    Examples
    --------
    >>> section_cover(2, 3)["count"]
    2
    """
    from scipy.optimize import Bounds, LinearConstraint, milp

    t0 = time.perf_counter()
    cands = pure_sections(k, max_weight, value=1, min_size=min_size)
    _, ip = _ip_points(k)
    ones = np.nonzero(ip == 1)[0]
    out = {"k": k, "max_weight": max_weight, "min_size": min_size, "candidates": len(cands),
           "sections": [], "count": None}
    A = np.array([m[ones] for _, _, m in cands], dtype=np.float64).T if cands else None
    if A is None or not A.any(axis=1).all():
        out.update(status="infeasible", wall_s=round(time.perf_counter() - t0, 2))
        return out
    res = milp(np.ones(A.shape[1]), constraints=LinearConstraint(A, lb=1.0),
               integrality=np.ones(A.shape[1]), bounds=Bounds(0, 1),
               options={"time_limit": float(time_limit), "disp": False})
    if res.x is None:
        out.update(status="unknown", wall_s=round(time.perf_counter() - t0, 2))
        return out
    chosen = [cands[i] for i in np.nonzero(res.x > 0.5)[0]]
    sections = [(list(w), u) for w, u, _ in chosen]
    if not is_section_cover(k, sections):           # re-checked in integers, not trusted
        raise AssertionError("the 0/1 program returned a set that is not a cover")
    out.update(sections=sections, count=len(sections),
               status="optimal" if res.status == 0 else "feasible",
               wall_s=round(time.perf_counter() - t0, 2))
    return out
