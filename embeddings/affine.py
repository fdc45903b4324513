"""The scaled-cube embedding: the naive, affine map of {0,1}^n onto a sphere.

``z -> radius * (2z - 1) / sqrt(n)``.  Its points are only ``2 radius / sqrt(n)`` apart, so any
Lipschitz extension of IP over the pair embedding needs a Lipschitz constant of order sqrt(n)
(THEORY §2, "Why a code"); :class:`embeddings.CodeEmbedding` fixes this.
"""

from __future__ import annotations

import math

import numpy as np

from circuits.utils.errors import DimensionError
from circuits.hypercube import bits_of, check_n_bits, signs
from embeddings.base import as_bits, as_points

__all__ = ["ScaledCube"]

#: Largest number of bits (the embedding itself has no exponential cost).
MAX_CUBE_BITS = 1 << 16


class ScaledCube:
    """Affine embedding ``z -> radius (2z - 1) / sqrt(n)`` of {0,1}^n onto the sphere of radius r.

    Parameters
    ----------
    n : int
        Number of bits (= dimension).
    radius : float
        Radius of the image sphere, in (0, 1]; the default 1/sqrt(2) lets two copies form a pair
        embedding in the unit ball (:class:`embeddings.ProductEmbedding`).

    Examples
    --------
    >>> e = ScaledCube(2, radius=1.0)
    >>> [[round(v, 4) for v in row] for row in e([[0, 1], [1, 1]]).tolist()]
    [[-0.7071, 0.7071], [0.7071, 0.7071]]
    >>> A, b = e.affine()
    >>> round(float(A[0, 0]), 4), round(float(b[0]), 4)
    (1.4142, -0.7071)
    >>> e.decode([[-0.1, 0.3]]).tolist()
    [[0, 1]]
    """

    def __init__(self, n: int, radius: float = 1 / math.sqrt(2)):
        self._n = check_n_bits(n, minimum=1, maximum=MAX_CUBE_BITS)
        r = float(radius)
        if not 0 < r <= 1:
            raise DimensionError(f"radius must lie in (0, 1] so that images stay in the unit ball, "
                                 f"got {radius!r}")
        self._radius = r
        self._scale = r / math.sqrt(self._n)

    @property
    def n_bits(self) -> int:
        return self._n

    @property
    def dim(self) -> int:
        return self._n

    @property
    def radius(self) -> float:
        """Norm of every image point."""
        return self._radius

    @property
    def min_distance(self) -> int:
        """Minimum Hamming distance of the underlying code (the identity code: 1)."""
        return 1

    @property
    def min_euclidean_distance(self) -> float:
        """``2 radius / sqrt(n)``: distance of images of bit vectors differing in one bit."""
        return 2 * self._scale

    def __call__(self, bits) -> np.ndarray:
        z = as_bits(bits, self._n)
        return (2.0 * z - 1.0) * self._scale

    def embed_indices(self, k) -> np.ndarray:
        """Images of the points with cube indices ``k`` (int array)."""
        return self(bits_of(np.atleast_1d(k), self._n))

    def affine(self):
        """``(A, b)`` with ``embed(z) = A z + b``: ``A = (2r / sqrt n) I``, ``b = -(r / sqrt n) 1``."""
        return np.eye(self._n) * (2 * self._scale), np.full(self._n, -self._scale)

    def decode(self, points_) -> np.ndarray:
        """Bits by rounding: ``z_i = [x_i > 0]`` (exact on images and anywhere in the orthant)."""
        x = as_points(points_, self._n)
        return (x > 0).astype(np.uint8)

    def sign_flip(self, r) -> np.ndarray:
        """``(1 - 2r)`` as float64: ``embed(z XOR r) = sign_flip(r) * embed(z)``."""
        rb = bits_of(int(r), self._n) if np.ndim(r) == 0 else as_bits(r, self._n, name="r")[0]
        return signs(rb).astype(np.float64)

    def __repr__(self) -> str:
        return f"ScaledCube(n={self._n}, radius={self._radius!r})"
