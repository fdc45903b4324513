"""The R-cube variant (THEORY §2.5, the v1 setting): IP on cells of [0,1]^{2n}.

d = 2n, domain [0,1]^{2n}; bit 0 is the cell [0, 1/4] and bit 1 the cell [3/4, 1] of a
coordinate (the first n coordinates are Alice's x = a, the last n Bob's y = b); mu is uniform
on the 4^n product cells; ``f = min{1, 2 dist(x, Z_0)}`` equals IP on the cells and is
2-Lipschitz (cells of different labels are >= 1/2 apart).  The diameter is sqrt(2n), the
loophole the unit-ball version removes.  XOR shifts act by the affine reflections
``x_j -> 1 - x_j``.
"""

from __future__ import annotations

import numpy as np

from circuits.utils.errors import DimensionError
from circuits.hypercube import bits_of, check_n_bits
from embeddings.base import as_bits, as_points
from embeddings.instance import MAX_INSTANCE_BITS
from embeddings.pair import PairInstance

__all__ = ["CubeInstance", "CELL_WIDTH"]

#: Width of each cell: bit 0 -> [0, 1/4], bit 1 -> [3/4, 1].
CELL_WIDTH = 0.25


def _cell_sqdist(x: np.ndarray):
    """Squared distances of each coordinate to the cell of bit 0 and of bit 1."""
    e0 = np.maximum(np.maximum(x - CELL_WIDTH, -x), 0.0)
    e1 = np.maximum(np.maximum((1 - CELL_WIDTH) - x, x - 1.0), 0.0)
    return e0 * e0, e1 * e1


def _subset_sums(e0: np.ndarray, e1: np.ndarray) -> np.ndarray:
    """T[i, a] = sum_j (e1[i, j] if bit j of a else e0[i, j]), by doubling (no subtraction)."""
    N, n = e0.shape
    T = np.zeros((N, 1 << n), dtype=np.float64)
    width = 1
    T[:, 0] = 0.0
    for j in range(n):
        # indices a < 2^j hold the sums over bits < j; bit j = 0 keeps them, bit j = 1 is new
        T[:, width: 2 * width] = T[:, :width] + e1[:, j: j + 1]
        T[:, :width] += e0[:, j: j + 1]
        width *= 2
    return T


class CubeInstance(PairInstance):
    """IP on the cells ``([0,1/4] u [3/4,1])^{2n}`` of the unit cube (THEORY §2.5).

    Parameters
    ----------
    n : int
        Bits per party (d = 2n), 1 <= n <= MAX_INSTANCE_BITS.

    Notes
    -----
    ``support()`` returns the 4^n cube vertices (bits as coordinates; each vertex lies in its
    cell), :meth:`sample` draws uniformly from the cells, and :meth:`target` is
    ``min{1, 2 dist(x, Z_0)}`` with ``delta* = 1/2``.

    Examples
    --------
    >>> c = CubeInstance(2)
    >>> c.dim, c.lipschitz_constant
    (4, 2.0)
    >>> S = c.support()
    >>> S.points[5].tolist(), int(S.labels[5])          # k = 5: a = 1, b = 1
    ([1.0, 0.0, 1.0, 0.0], 1)
    >>> c.target([[0.8, 0.1, 0.9, 0.2], [0.5, 0.1, 0.9, 0.2]]).tolist()
    [1.0, 0.5]
    """

    def __init__(self, n: int):
        n = check_n_bits(n, minimum=1, maximum=1 << 30)
        if n > MAX_INSTANCE_BITS:
            raise DimensionError(f"n = {n} exceeds MAX_INSTANCE_BITS = {MAX_INSTANCE_BITS} (the "
                                 f"support has 4^n cells and f tabulates 2^n cells per party)")
        self._n = n

    @property
    def dim(self) -> int:
        """d = 2n."""
        return 2 * self._n

    @property
    def delta_star(self) -> float:
        """1/2: cells of different labels differ in a coordinate, [0, 1/4] vs [3/4, 1]."""
        return 1.0 - 2 * CELL_WIDTH

    # ------------------------------------------------------------------ hooks
    def _support_points(self, k: np.ndarray) -> np.ndarray:
        return bits_of(k, 2 * self._n).reshape(-1, 2 * self._n).astype(np.float64)

    def _box(self, k: np.ndarray):
        z = self._support_points(k)
        lo = np.where(z == 1, 1.0 - CELL_WIDTH, 0.0)
        return lo, lo + CELL_WIDTH

    def _domain_sample(self, k: int, g) -> np.ndarray:
        return g.random((k, self.dim))

    def _tables(self, x: np.ndarray):
        n = self._n
        e0, e1 = _cell_sqdist(x)
        return _subset_sums(e0[:, :n], e1[:, :n]), _subset_sums(e0[:, n:], e1[:, n:])

    def _witness_pairs(self):
        n = self._n
        return 0 + (1 << n), 1 + (1 << n)          # (a, b) = (0, e_0) and (e_0, e_0)

    # ------------------------------------------------------------------ the instance
    def decode(self, points, method: str = "round") -> np.ndarray:
        """Bits ``round(x_j) = [x_j > 1/2]`` of each coordinate, uint8 ``(N, 2n)``."""
        if method != "round":
            raise ValueError(f"the cube instance decodes by rounding only (method='round'), "
                             f"got {method!r}")
        x = as_points(points, self.dim)
        return (x > 0.5).astype(np.uint8)

    def shift_affine(self, r, s):
        """``(signs, offset)`` with ``x -> signs * x + offset`` the XOR shift by ``(r, s)``.

        Flipped coordinates are reflected, ``x_j -> 1 - x_j``; this maps the cell of (a, b) onto
        the cell of (a XOR r, b XOR s).  ``r``, ``s`` are message indices or rows of n bits.

        Examples
        --------
        >>> sg, off = CubeInstance(1).shift_affine(1, 0)
        >>> sg.tolist(), off.tolist()
        ([-1.0, 1.0], [1.0, 0.0])
        """
        flips = np.concatenate([self._bits(r, "r"), self._bits(s, "s")]).astype(np.float64)
        return 1.0 - 2.0 * flips, flips

    def _bits(self, r, name):
        if np.ndim(r) == 0:
            return bits_of(int(r), self._n)
        return as_bits(r, self._n, name=name)[0]

    def summary(self) -> str:
        """The describing numbers as a printable table (``to_dict()`` gives them JSON-ready).

        >>> print(CubeInstance(2).summary())       # doctest: +NORMALIZE_WHITESPACE
        n (bits per party)      2
        d (dimension)           4
        delta*                  0.500000
        Lipschitz L = 1/delta*  2.000000
        support size 4^n        16
        P(label = 1)            0.375000
        best constant MSE       0.234375
        diameter                2.000000
        """
        d = self.to_dict()
        rows = [("n (bits per party)", d["n"]), ("d (dimension)", d["d"]),
                ("delta*", f"{d['delta_star']:.6f}"),
                ("Lipschitz L = 1/delta*", f"{d['lipschitz_constant']:.6f}"),
                ("support size 4^n", d["support_size"]),
                ("P(label = 1)", f"{d['label_one_fraction']:.6f}"),
                ("best constant MSE", f"{d['best_constant_mse']:.6f}"),
                ("diameter", f"{d['diameter']:.6f}")]
        w = max(len(k) for k, _ in rows)
        return "\n".join(f"{k:<{w}}  {v}" for k, v in rows)

    def to_dict(self) -> dict:
        """The describing numbers (JSON-ready dict)."""
        return {"n": self._n, "d": self.dim, "delta_star": self.delta_star,
                "lipschitz_constant": self.lipschitz_constant, "support_size": self.support_size,
                "label_one_fraction": self.label_one_fraction,
                "best_constant_mse": self.best_constant_mse, "diameter": float(np.sqrt(self.dim))}

    def __repr__(self) -> str:
        return f"CubeInstance(n={self._n})"
