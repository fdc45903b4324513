"""IP_n as a THR o THR circuit of growth 2^(3n/4) ~ 1.682^n: products of hyperplane sections.

**Blocks.**  For k pairs, :data:`IP_SECTION_BLOCKS` stores hyperplane sections
``S_j = {z : w_j . z = u_j}`` of {0,1}^(2k) that lie inside ``IP_k^{-1}(1)`` and cover it (a
cover found by :func:`circuits.analysis.synthesis.sections.section_cover`; the tests re-check
every block on the whole cube).  Then ``P_k(z) = 1 - 2 sum_j [z in S_j]`` is 1 where IP_k = 0
and at most -1 where IP_k = 1.  Stored: IP_1 with 1 section, IP_2 with 2, IP_3 with 4 and IP_4
with 7, each least among the candidate sections of its search: ``|w_i| <= 1, 3, 4, 5`` (IP_4:
sections of at least 10 points; 71,316 candidates).

**Product.**  Split the n pairs into blocks of 4 (and one block of n mod 4).  The product
``P = prod_b P_b`` is never 0 and has the sign of ``(-1)^IP_n``.  Expanded, it is a sum over one
choice per block (the constant or one section) of ``(-2)^(sections chosen)`` times the
indicator of an intersection of sections on disjoint blocks -- itself a section: with
``e_b = w_b . z_b - min(w_b . z_b)`` in ``[0, r_b)``, the form ``Lambda = sum_b R_b e_b`` (mixed
radix, ``R_b`` the product of the radices of the later blocks) equals
``U = sum_b R_b (u_b - min)`` exactly when every ``w_b . z_b = u_b``.  So every term is
``[Lambda >= U] - [Lambda >= U + 1]``, two threshold gates, and ``[Lambda >= U + 1]`` is the
lexicographic successor, written on the shortest prefix of blocks (shared by many terms, and a
constant where it is trivially 0 or 1).  The top gate is ``[-P >= 1]``.  Hence IP_n has a
THR o THR circuit with at most

    2 (prod_b (m_b + 1) - 1)  hidden gates,  m_b = 7 for each block of 4 pairs,

that is ``O(8^(n/4)) = O(2^(3n/4))``.  This is the growth of Amano's bound (K. Amano, LATA 2020,
LNCS 12038, 235-247); his construction itself could not be read here, so this one is not
claimed to be his.  Hidden gates at n = 4..8: 14, 22, 46, 78, 126 (``2 (8^q - 1)`` at n = 4q),
against 9, 19, 39, 79, 159 for the sign product (:func:`circuits.ip_depth2_product`, IP_3
block): larger up to n = 6, smaller from n = 7 on.

**Exactness.**  Every weight and threshold is an integer.  A hidden gate's weights are
``R_b w`` with ``R_b`` a product of block radices ``r_b`` (the largest ``max w.z - min w.z``
of a block's sections, plus 1: 25 for the IP_4 block), so a bottom pre-activation is below
``5 * 8 * prod_b r_b`` in absolute value (1.5e7 at n = 20, far inside int64).  A top weight is
a sum of the ``(-2)^r`` of the terms that share its gate, at most ``2 prod_b (2 m_b + 1)`` in
absolute value (measured: 32 at n = 20).
"""

from __future__ import annotations

import itertools

import numpy as np

from circuits.hypercube import check_n_bits
from circuits.threshold import ThresholdCircuit, ThresholdLayer

__all__ = ["IP_SECTION_BLOCKS", "ip_depth2_sections", "ip_depth2_sections_size",
           "section_blocks"]

#: Hyperplane sections ``(w, u)`` (w over x_1..x_k, y_1..y_k) inside IP_k^{-1}(1) covering it:
#: ``section_cover(k, W)`` with W = 1, 3, 4 and 5 (``min_size=10`` for k = 4), stored so that the
#: construction needs no solver; the tests re-verify each block on the whole cube.
IP_SECTION_BLOCKS: dict[int, tuple[tuple[tuple[int, ...], int], ...]] = {
    1: (((-1, -1), -2),),
    2: (((-3, -3, -3, -3), -9), ((-2, -1, -2, -3), -4)),
    3: (((-2, -4, -2, -2, -4, -2), -10), ((-4, 0, -2, -4, -3, -2), -8),
        ((-2, -3, -3, -4, -3, -3), -9), ((1, 2, -1, 1, -4, -1), -2)),
    4: (((-2, -3, -4, -2, -2, -5, -4, -2), -10), ((-3, -3, -2, -4, -3, -3, -2, -4), -11),
        ((-4, -3, -2, 3, -4, -3, -2, 3), -8), ((-3, 3, -4, -2, -3, 3, -4, -2), -8),
        ((-2, -4, 3, -3, -2, -4, 3, -3), -8), ((3, -2, -3, -4, 3, -2, -3, -4), -8),
        ((-3, -2, -3, -2, -3, -2, -3, -2), -9)),
}


def section_blocks(n: int) -> list[int]:
    """Pairs per block of the product for IP_n: fours, then the rest (n mod 4) if any.

    >>> section_blocks(4), section_blocks(7)
    ([4], [4, 3])
    """
    n = check_n_bits(n, name="n", minimum=1, maximum=20)
    return [4] * (n // 4) + ([n % 4] if n % 4 else [])


def _block_data(n: int):
    """Per block: columns of its inputs and per section (weights, digit, capacity, minimum)."""
    out, first = [], 0
    for k in section_blocks(n):
        cols = np.array([first + i for i in range(k)] + [n + first + i for i in range(k)])
        secs = []
        for w, u in IP_SECTION_BLOCKS[k]:
            w = np.asarray(w, dtype=np.int64)
            lo, hi = int(np.minimum(w, 0).sum()), int(np.maximum(w, 0).sum())
            secs.append((w, int(u) - lo, hi - lo, lo))
        radix = max(s[2] for s in secs) + 1
        out.append((cols, secs, radix))
        first += k
    return out


def _successor(digits: list, blocks) -> "list | None":
    """The lexicographic successor of a digit tuple inside the box of its sections (None: none)."""
    digits = list(digits)
    while digits:
        b, j, d = digits[-1]
        if d + 1 <= blocks[b][1][j][2]:
            digits[-1] = (b, j, d + 1)
            return digits
        digits.pop()
    return None


def _strip(digits) -> tuple:
    """Drop trailing zero digits: ``e >= 0`` always holds for the least significant blocks."""
    digits = list(digits)
    while digits and digits[-1][2] == 0:
        digits.pop()
    return tuple(digits)


def _expansion(n: int):
    """The product polynomial as {gate key: coefficient} and a constant.

    A key is a tuple of (block, section, digit), most significant first; it stands for the gate
    ``[sum_b R_b e_b >= sum_b R_b digit_b]`` over those blocks; the empty key is the constant 1.
    """
    blocks = _block_data(n)
    coef: dict[tuple, int] = {}
    constant = 0
    for choice in itertools.product(*[range(len(b[1]) + 1) for b in blocks]):
        chosen = [(b, c - 1, blocks[b][1][c - 1][1]) for b, c in enumerate(choice) if c]
        c_term = (-2) ** len(chosen)
        if not chosen:
            constant += c_term
            continue
        for key, sign in ((_strip(chosen), 1), (_successor(chosen, blocks), -1)):
            if key is None:                                 # [Lambda >= U + 1] is never true
                continue
            key = _strip(key)
            if not key:
                constant += sign * c_term                   # a gate that is always 1
            else:
                coef[key] = coef.get(key, 0) + sign * c_term
    return blocks, {k: v for k, v in coef.items() if v}, constant


def ip_depth2_sections_size(n: int) -> int:
    """Hidden gates of :func:`ip_depth2_sections` (distinct gates with a nonzero top weight).

    >>> [ip_depth2_sections_size(n) for n in (4, 5, 6, 7, 8)]
    [14, 22, 46, 78, 126]
    """
    return len(_expansion(n)[1])


def ip_depth2_sections(n: int) -> ThresholdCircuit:
    """IP_n as a THR o THR circuit with ``O(2^(3n/4))`` hidden gates (module docstring).

    Parameters
    ----------
    n : int
        Bits per party, 1 <= n <= 20 (N = 2n inputs).

    Returns
    -------
    ThresholdCircuit
        Depth 2; hidden gates read only the pairs of the blocks they name; the top gate is
        ``[-P >= 1]`` for the product polynomial P.

    Examples
    --------
    >>> from circuits import truth_table, inner_product_mod2
    >>> c = ip_depth2_sections(4)
    >>> c.size, bool((truth_table(c) == inner_product_mod2(4)).all())
    (14, True)
    """
    n = check_n_bits(n, name="n", minimum=1, maximum=20)
    blocks, coef, constant = _expansion(n)
    rows, thr, top = [], [], []
    for key, a in sorted(coef.items()):
        w = np.zeros(2 * n, dtype=np.int64)
        t, R = 0, 1
        for b, j, d in reversed(key):                       # least significant block first
            cols, secs, radix = blocks[b]
            wj, _, _, lo = secs[j]
            w[cols] += R * wj
            t += R * (d + lo)
            R *= radix
        rows.append(w)
        thr.append(t)
        top.append(-a)
    hidden = ThresholdLayer(np.array(rows, dtype=np.int64), np.array(thr, dtype=np.int64))
    out = ThresholdLayer(np.array([top], dtype=np.int64), np.array([1 + constant], dtype=np.int64))
    return ThresholdCircuit((hidden, out))
