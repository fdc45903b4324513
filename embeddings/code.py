"""Systematic linear-code embedding of {0,1}^n into the sphere of radius 1/sqrt(2) in R^m.

THEORY §2.1.  A generator ``G = [I_n | P]`` over F_2 maps a message a (n bits, cube order) to
the codeword ``C(a) = a G mod 2`` (m bits; bits 0..n-1 are a itself), and

    Phi(a)_j = (2 C(a)_j - 1) / sqrt(2 m),     ||Phi(a)||^2 = 1/2,
    ||Phi(a) - Phi(a')||^2 = (2/m) d_H(C(a), C(a')) >= 2 d_C / m.

The parity part P is chosen by a seeded search (best of ``tries`` random draws) maximising the
minimum distance d_C, which is **certified** by enumerating all 2^n codewords in Gray-code order
(one generator row XORed per step, numba).  Because the code is linear,
``Phi(a XOR r) = (1 - 2 C(r)) * Phi(a)``: XOR shifts act as coordinate sign flips.  The
certification, the distance bound of random codes and the packed codewords are
:mod:`embeddings.code_distance` (re-exported here).
"""

from __future__ import annotations

import math

import numpy as np

from circuits.utils.errors import DimensionError
from circuits.hypercube import bits_of, check_exhaustive, check_n_bits
from circuits.utils.progress import progress_bar
from circuits.utils.rng import as_rng
from embeddings import _kernels
from embeddings.base import as_bits, as_points
# the certified minimum distance and the packed codewords (re-exported: defined here before)
from embeddings.code_distance import (MAX_CODE_BITS, MAX_CODE_LENGTH,  # noqa: F401
                                      _check_generator, _gray_min, _gray_min_many,
                                      _gray_min_table, _pack_rows, _unpack_words,
                                      certified_min_distance, random_code_distance_bound)

__all__ = ["CodeEmbedding", "certified_min_distance", "random_code_distance_bound",
           "MAX_CODE_BITS", "MAX_CODE_LENGTH", "code_bits", "code_rows"]


#: Bytes of codeword tables / distance tables a wrapper materialises per chunk.
_CHUNK_BYTES = 1 << 25
#: Searches with tries * 2^n at most this many codewords run as one batched kernel call.
_BATCH_WORK = 1 << 22


def code_bits(generator, a) -> np.ndarray:
    """C(a) = aG mod 2 for messages ``a`` (int array, entries in [0, 2^n)): uint8 of shape
    ``a.shape + (m,)``.

    Without any 2^n table: the message is cut into bytes and C(a) is the XOR of one row of a
    256-entry table per byte (C is linear over F₂), each table built from 8 generator rows.
    """
    g = np.asarray(generator, dtype=np.int64)
    n, m = g.shape
    a = np.asarray(a, dtype=np.int64)
    shape = a.shape
    a = a.reshape(-1)
    out = np.zeros((a.size, m), dtype=np.uint8)
    byte = np.arange(256, dtype=np.int64)
    for lo in range(0, n, 8):
        k = min(8, n - lo)
        bits = (byte[: 1 << k, None] >> np.arange(k, dtype=np.int64)) & 1
        table = ((bits @ g[lo: lo + k]) & 1).astype(np.uint8)       # (2^k, m)
        out ^= table[(a >> lo) & ((1 << k) - 1)]
    return out.reshape(shape + (m,))


def code_rows(generator, a) -> np.ndarray:
    """Φ(a) = (2C(a) − 1)/√(2m) for messages ``a``: float64 of shape ``a.shape + (m,)``,
    via :func:`code_bits`.

    >>> from embeddings import CodeEmbedding
    >>> e = CodeEmbedding(5, seed=0, tries=3)
    >>> bool(np.array_equal(code_rows(e.generator, np.arange(32)), e.embed_indices(np.arange(32))))
    True
    """
    m = np.shape(generator)[1]
    s = 1.0 / math.sqrt(2 * m)
    return code_bits(generator, a) * (2.0 * s) - s


class CodeEmbedding:
    """Systematic linear-code embedding ``Phi: {0,1}^n -> S(0, 1/sqrt 2) in R^m`` (THEORY §2.1).

    Parameters
    ----------
    n : int
        Message bits, 1 <= n <= MAX_CODE_BITS (= 32; certification enumerates 2^n codewords).
    m : int, optional
        Code length, n <= m <= MAX_CODE_LENGTH; default 4n.
    seed : int, Generator or None
        Seed of the generator search (:func:`circuits.utils.as_rng`).
    tries : int
        Number of random parity parts P drawn; the one with the largest certified minimum
        distance wins (the first one on ties).  Draw t uses the t-th block of the random
        stream, so a search with fewer tries is a prefix of a longer one.
    progress : bool
        Show a progress bar over the tries.

    Attributes
    ----------
    n_bits, dim : int
        n and m.
    generator : uint8 (n, m), read-only
        ``G = [I | P]``.
    min_distance : int
        Certified minimum distance d_C (exhaustive over all 2^n codewords).
    min_weight_message : int
        A message index e with ``|C(e)| = d_C`` (the witness).

    Examples
    --------
    >>> e = CodeEmbedding(4, seed=0)
    >>> e.dim, e.min_distance, e.generator[:, :4].tolist() == [[1, 0, 0, 0], [0, 1, 0, 0],
    ...                                                        [0, 0, 1, 0], [0, 0, 0, 1]]
    (16, 7, True)
    >>> x = e([[1, 0, 0, 0]])                      # Phi(a) for a = e_0
    >>> round(float((x ** 2).sum()), 12), e.decode(x).tolist()
    (0.5, [[1, 0, 0, 0]])
    """

    def __init__(self, n: int, m: "int | None" = None, seed=0, tries: int = 200, *,
                 progress: bool = False):
        n = check_n_bits(n, minimum=1, maximum=1 << 30)
        if n > MAX_CODE_BITS:
            raise DimensionError(
                f"n = {n} exceeds MAX_CODE_BITS = {MAX_CODE_BITS}: certifying the minimum distance "
                f"enumerates all 2^n codewords (2^{MAX_CODE_BITS} steps already take tens of "
                f"seconds per try); use n <= {MAX_CODE_BITS}")
        if m is None:
            m = 4 * n
        if isinstance(m, bool) or not isinstance(m, (int, np.integer)):
            raise TypeError(f"m must be an int or None, got {type(m).__name__}")
        m = int(m)
        if m < n:
            raise DimensionError(f"m must be >= n = {n} (a systematic code contains the message), "
                                 f"got m = {m}; use m = 4 * n (the default) or larger")
        if m > MAX_CODE_LENGTH:
            raise DimensionError(f"m = {m} exceeds MAX_CODE_LENGTH = {MAX_CODE_LENGTH}")
        if isinstance(tries, bool) or not isinstance(tries, (int, np.integer)) or tries < 1:
            raise ValueError(f"tries must be a positive int, got {tries!r}")
        rng = as_rng(seed)
        r = m - n
        ceiling = r + 1                      # Singleton bound d_C <= m - n + 1
        best, best_p = 0, None
        eye = np.eye(n, dtype=np.uint8)
        if (1 << n) * int(tries) <= _BATCH_WORK:
            # small codes: draw every P, enumerate all of them in one parallel kernel call
            ps = [rng.integers(0, 2, size=(n, r), dtype=np.uint8) for _ in range(int(tries))]
            rows = _pack_rows(np.stack([np.hstack([eye, p]) for p in ps]))
            weights = _gray_min_many(rows, n)
            best_p = ps[int(np.argmax(weights))]       # the first try attaining the maximum
        else:
            # large codes: one try at a time, abandoning a try once it cannot beat the best
            with progress_bar(int(tries), enabled=progress, desc=f"code search n={n} m={m}") as bar:
                for _ in range(int(tries)):
                    p = rng.integers(0, 2, size=(n, r), dtype=np.uint8)
                    d, _ = _gray_min(_pack_rows(np.hstack([eye, p])), n, best)
                    if d > best:
                        best, best_p = d, p
                    bar.update(1)
                    if best >= ceiling:
                        break
        self._setup(np.hstack([eye, best_p]))
        self._seed = seed if isinstance(seed, (int, np.integer)) or seed is None else "generator"
        self._tries = int(tries)

    @classmethod
    def from_generator(cls, generator) -> "CodeEmbedding":
        """The embedding of a given systematic generator ``[I_n | P]`` (no search; certified).

        Examples
        --------
        >>> e = CodeEmbedding.from_generator([[1, 0, 1, 1], [0, 1, 1, 0]])
        >>> e.min_distance, e.codewords().tolist()          # codeword masks, bit j = coordinate j
        (2, [0, 13, 6, 11])
        """
        g = _check_generator(generator)
        n = g.shape[0]
        if not np.array_equal(g[:, :n], np.eye(n, dtype=np.uint8)):
            raise DimensionError("generator must be systematic, [I_n | P]: its first n columns "
                                 "must be the identity (the decoder reads the message there)")
        obj = cls.__new__(cls)
        obj._setup(g)
        obj._seed = None
        obj._tries = 0
        return obj

    def _setup(self, g: np.ndarray) -> None:
        g = np.ascontiguousarray(g, dtype=np.uint8)
        g.setflags(write=False)
        self._g = g
        self._n, self._m = g.shape
        self._rows = _pack_rows(g)
        self._rows.setflags(write=False)
        self._scale = 1.0 / math.sqrt(2 * self._m)
        d, e = _gray_min(self._rows, self._n, 0)      # the certification: full enumeration
        if d == 0:  # impossible for [I | P]; kept as a guard
            raise DimensionError("the code is not injective")
        self._d = d
        self._witness = e
        self._words = None

    # ------------------------------------------------------------------ properties
    @property
    def n_bits(self) -> int:
        return self._n

    @property
    def n(self) -> int:
        return self._n

    @property
    def dim(self) -> int:
        return self._m

    @property
    def m(self) -> int:
        return self._m

    @property
    def generator(self) -> np.ndarray:
        """``G = [I_n | P]``, uint8 (n, m), read-only."""
        return self._g

    @property
    def seed(self):
        return self._seed

    @property
    def tries(self) -> int:
        return self._tries

    @property
    def min_distance(self) -> int:
        """Certified minimum distance d_C of the code."""
        return self._d

    @property
    def relative_distance(self) -> float:
        """``d_C / m`` (tends to H_2^{-1}(1 - n/m) ~ 0.2145 at rate 1/4, the GV bound)."""
        return self._d / self._m

    @property
    def min_weight_message(self) -> int:
        """A message index e (cube order) with ``|C(e)| = d_C``."""
        return self._witness

    @property
    def radius(self) -> float:
        """Norm of every image, 1/sqrt(2)."""
        return 1 / math.sqrt(2)

    @property
    def scale(self) -> float:
        """Absolute value of every coordinate, ``1/sqrt(2m)``."""
        return self._scale

    @property
    def min_euclidean_distance(self) -> float:
        """``sqrt(2 d_C / m)``: the smallest distance between two images."""
        return math.sqrt(2 * self._d / self._m)

    # ------------------------------------------------------------------ codewords
    def encode(self, bits) -> np.ndarray:
        """Codeword bits ``C(a) = a G mod 2`` of each row of ``bits``: uint8 ``(N, m)``."""
        a = as_bits(bits, self._n)
        return ((a.astype(np.int64) @ self._g.astype(np.int64)) & 1).astype(np.uint8)

    def codeword_words(self, *, allow_large: bool = False) -> np.ndarray:
        """All 2^n codewords as uint64 words, shape ``(2^n, ceil(m/64))``, read-only, cube order.

        Bit j of the codeword is bit ``j & 63`` of word ``j >> 6``.
        """
        if self._words is None:
            W = self._rows.shape[1]
            check_exhaustive(self._n, allow_large=allow_large, bytes_per_point=8 * W,
                             what="the codeword table")
            words = np.zeros((1 << self._n, W), dtype=np.uint64)
            for i in range(self._n):                     # doubling: C(a + 2^i) = C(a) ^ row_i
                words[1 << i: 2 << i] = words[: 1 << i] ^ self._rows[i]
            words.setflags(write=False)
            self._words = words
        return self._words

    def codewords(self, *, allow_large: bool = False) -> np.ndarray:
        """All 2^n codewords as uint64 masks (bit j = coordinate j), index a in cube order.

        Only for m <= 64 (one word per codeword); use :meth:`codeword_words` beyond.
        """
        if self._m > 64:
            raise DimensionError(f"m = {self._m} > 64 does not fit a uint64 mask; use "
                                 f"codeword_words(), which returns ceil(m/64) words per codeword")
        return self.codeword_words(allow_large=allow_large)[:, 0]

    def weight_distribution(self, *, allow_large: bool = False) -> np.ndarray:
        """``A[w]`` = number of codewords of weight w, w = 0..m (int64; exhaustive).

        Examples
        --------
        >>> e = CodeEmbedding(4, seed=0)
        >>> A = e.weight_distribution()
        >>> int(A.sum()), int(A[0]), int(np.flatnonzero(A[1:])[0]) + 1 == e.min_distance
        (16, 1, True)
        """
        words = self.codeword_words(allow_large=allow_large)
        wt = np.bitwise_count(words).sum(axis=1, dtype=np.int64)
        return np.bincount(wt, minlength=self._m + 1).astype(np.int64)

    # ------------------------------------------------------------------ the map
    def __call__(self, bits) -> np.ndarray:
        """``Phi(a) = (2 C(a) - 1) / sqrt(2m)`` for each row a of ``bits``: float64 ``(N, m)``."""
        c = self.encode(bits)
        return np.where(c == 1, self._scale, -self._scale)

    def embed_indices(self, a_idx) -> np.ndarray:
        """``Phi(a)`` for message indices ``a_idx`` (cube order): float64 ``(N, m)``."""
        a = np.atleast_1d(np.asarray(a_idx, dtype=np.int64))
        return self(bits_of(a, self._n).reshape(-1, self._n))

    def affine(self) -> None:
        """``None``: the code bits are parities mod 2, not affine in the message bits over R."""
        return None

    def sign_flip(self, r) -> np.ndarray:
        """``1 - 2 C(r)`` as float64 (m,) of +-1: ``Phi(a XOR r) = sign_flip(r) * Phi(a)``.

        ``r`` is a message index (int) or a row of n bits.

        Examples
        --------
        >>> e = CodeEmbedding(3, seed=1, tries=5)
        >>> bool(np.array_equal(e.embed_indices(5 ^ 3), e.sign_flip(3) * e.embed_indices(5)))
        True
        """
        if np.ndim(r) == 0:
            rb = bits_of(int(r), self._n)
        else:
            rb = as_bits(r, self._n, name="r")[0]
        return 1.0 - 2.0 * self.encode(rb)[0].astype(np.float64)

    # ------------------------------------------------------------------ decoding
    def decode(self, points, method: str = "round") -> np.ndarray:
        """Message bits of points of R^m: uint8 ``(N, n)``.

        ``method="round"`` reads the systematic coordinates, ``a_i = [x_i > 0]`` (exact on the
        images and on every box of the box distribution, THEORY §2.4).  ``method="nearest"``
        returns the nearest codeword ``argmax_a <x, Phi(a)>`` (robust to noise of norm below
        half the minimum distance; ties go to the smallest index), enumerating all 2^n codewords.
        """
        x = as_points(points, self._m)
        if method == "round":
            return (x[:, : self._n] > 0).astype(np.uint8)
        if method == "nearest":
            return bits_of(self.nearest(x), self._n).reshape(-1, self._n)
        raise ValueError(f"method must be 'round' or 'nearest', got {method!r}")

    def nearest(self, points) -> np.ndarray:
        """Index (cube order) of the nearest image ``Phi(a)`` to each point: int64 ``(N,)``."""
        x = as_points(points, self._m)
        words = self.codeword_words()
        out = np.empty(x.shape[0], dtype=np.int64)
        step = max(1, _CHUNK_BYTES // (8 << self._n))
        for lo in range(0, x.shape[0], step):
            t = _kernels._sqdist_table(words, x[lo: lo + step], self._scale, 0.0)
            out[lo: lo + step] = np.argmin(t, axis=1)
        return out

    def distance_table(self, points, *, centre: "float | None" = None,
                       half_width: float = 0.0) -> np.ndarray:
        """``T[i, a]``: squared distance from point i to ``Phi(a)`` (or to the box around it).

        With ``centre`` (default ``1/sqrt(2m)``) the codeword a is the point with coordinates
        ``+-centre``; with ``half_width = h > 0`` the distance is to the cube of half-width h
        around it.  Computed coordinate by coordinate (no cancellation): exactly 0 on the images.
        Shape ``(N, 2^n)`` float64.
        """
        x = as_points(points, self._m)
        c = self._scale if centre is None else float(centre)
        check_exhaustive(self._n, bytes_per_point=8.0 * max(1, x.shape[0]),
                         what="distance_table")
        return _kernels._sqdist_table(self.codeword_words(), x, c, float(half_width))

    # ------------------------------------------------------------------ misc
    def to_dict(self) -> dict:
        """JSON-ready description: sizes, seed, certified distance and the generator rows."""
        return {"n": self._n, "m": self._m, "seed": self._seed, "tries": self._tries,
                "min_distance": self._d, "relative_distance": self.relative_distance,
                "min_weight_message": self._witness,
                "generator": ["".join(map(str, row)) for row in self._g.tolist()]}

    def __repr__(self) -> str:
        return (f"CodeEmbedding(n={self._n}, m={self._m}, seed={self._seed!r}, "
                f"tries={self._tries}, min_distance={self._d})")
