"""THEORY.md's formulas and quoted reference numbers, used as the *expected* side of the table.

Formulas are computed (A006516, the IP nonlinearity, MAJ's singleton coefficient); numbers THEORY
quotes (code distances, Daniely tails, width-bound logs, A000609, random-feature widths) are
compared with, never used as "measured".

Examples
--------
>>> [a006516(n) for n in range(6)]
[0, 1, 6, 28, 120, 496]
>>> ip_nonlinearity(4) == a006516(4)
True
"""

from __future__ import annotations

import math

__all__ = ["A000609", "CODE_DISTANCE", "DANIELY_TAIL", "DANIELY_WIDTH_LOG2", "RF_WIDTHS",
           "SES_T4_LIPSCHITZ", "PARITY_MINIMA", "a006516", "ip_nonlinearity", "maj_singleton"]

A000609 = (2, 4, 14, 104, 1882, 94572)                       # §6, N = 0..5
CODE_DISTANCE = {4: 7, 6: 8, 8: 10, 10: 12, 12: 14}          # §2.1 / E5, T = 200, m = 4n
DANIELY_TAIL = {3: 0.4953, 4: 0.4999}                        # E13; 0.5000 for d >= 5
DANIELY_WIDTH_LOG2 = {10: -10.64, 15: -5.26, 20: 1.60, 25: 9.51, 30: 18.24, 40: 37.59, 60: 81.80}
RF_WIDTHS = {2: 8, 3: 64, 4: 256, 5: 1024, 6: 4096}          # E20 random-feature baseline
SES_T4_LIPSCHITZ = 2.0                                        # E17
PARITY_MINIMA = {2: 2, 3: 3}                                  # E19


def a006516(n: int) -> int:
    """#{(x, y): IP_n = 1} = 2^{n-1}(2^n - 1) (OEIS A006516, THEORY §1.1)."""
    return (1 << (n - 1)) * ((1 << n) - 1) if n > 0 else 0


def ip_nonlinearity(n: int) -> int:
    """NL(IP_n) = 2^{2n-1} - 2^{n-1} (IP is bent)."""
    return (1 << (2 * n - 1)) - (1 << (n - 1))


def maj_singleton(N: int) -> float:
    """|F̂({i})| of MAJ_N (odd N) = C(N-1, (N-1)/2) / 2^{N-1}."""
    return math.comb(N - 1, (N - 1) // 2) / 2 ** (N - 1)
