"""The hard instance: the distribution mu on the unit ball of R^d and the Lipschitz target f_d.

THEORY §2.  With the code embedding Phi of :class:`embeddings.CodeEmbedding` (n bits into
R^m), the support points are ``x_{a,b} = (Phi(a), Phi(b))`` in R^d, d = 2m, indexed in cube
order ``k = a + 2^n b`` (a = Alice = low bits, coordinates [0, m); b = Bob, [m, 2m)), with
label ``IP(a, b) = popcount(a & b) mod 2``.

* mu_0 is uniform on the 4^n points; mu_tau (0 < tau <= 0.15) is uniform on the boxes
  ``(x_{a,b} + xi) / (1 + tau)``, xi uniform on ``(tau / sqrt(2m)) [-1, 1]^d``; every box point
  lies in the unit ball and keeps the signs of its centre.
* ``f_d(x) = min{1, dist(x, Z_0) / delta*}`` (Z_0 = points or boxes of label 0) equals the label
  on the support and is ``1/delta*``-Lipschitz on all of R^d, with
  ``delta*_tau = sqrt(2 d_C / m) (1 - tau) / (1 + tau)``, attained by a witness pair.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from circuits.utils.errors import DimensionError
from circuits.hypercube import bits_of, check_n_bits, split_index
from circuits.utils.rng import uniform_ball
from embeddings import _kernels
from embeddings.base import ProductEmbedding, as_points
from embeddings.code import MAX_CODE_BITS, CodeEmbedding
from embeddings.pair import PairInstance, Support

__all__ = ["HardInstance", "InstanceSummary", "MAX_TAU", "MAX_INSTANCE_BITS"]

#: Largest box noise radius (THEORY §2.2; the depth-3 net and the margins assume tau <= 0.15).
MAX_TAU = 0.15
#: Largest n for an instance: f_d enumerates 2^n codewords per party per point and the support
#: has 4^n points indexed by int64.
MAX_INSTANCE_BITS = 20


@dataclass(frozen=True)
class InstanceSummary:
    """The numbers describing a hard instance: ``str()`` is the table of
    :meth:`HardInstance.summary`, ``to_dict()`` the record of :meth:`HardInstance.to_dict`."""

    n: int
    m: int
    d: int
    tau: float
    seed: object
    tries: int
    min_distance: int
    relative_distance: float
    delta_star: float
    lipschitz_constant: float
    support_size: int
    label_one_fraction: float
    best_constant_mse: float

    def to_dict(self) -> dict:
        return {f: getattr(self, f) for f in self.__dataclass_fields__}

    def __str__(self) -> str:
        rows = [("n (bits per party)", self.n), ("m (code length)", self.m),
                ("d (dimension)", self.d), ("tau (box radius)", self.tau),
                ("seed / tries", f"{self.seed} / {self.tries}"),
                ("d_C (certified)", self.min_distance),
                ("d_C / m", f"{self.relative_distance:.4f}"),
                ("delta*", f"{self.delta_star:.6f}"),
                ("Lipschitz L = 1/delta*", f"{self.lipschitz_constant:.6f}"),
                ("support size 4^n", self.support_size),
                ("P(label = 1)", f"{self.label_one_fraction:.6f}"),
                ("best constant MSE", f"{self.best_constant_mse:.6f}")]
        w = max(len(k) for k, _ in rows)
        return "\n".join(f"{k:<{w}}  {v}" for k, v in rows)


class HardInstance(PairInstance):
    """The hard distribution mu_tau and the target f_d for n bits per party (THEORY §2).

    Parameters
    ----------
    n : int
        Bits per party, 1 <= n <= MAX_INSTANCE_BITS (= 20).
    m : int, optional
        Code length per party (default 4n); d = 2m.
    tau : float
        Box radius: 0 (discrete mu_0) or 0 < tau <= MAX_TAU = 0.15 (boxes mu_tau).
    seed, tries
        Passed to :class:`CodeEmbedding` (the generator search).

    Notes
    -----
    ``support()`` returns the 4^n points ``x_{a,b}`` for tau = 0 and the box centres
    ``x_{a,b} / (1 + tau)`` for tau > 0; :meth:`sample` draws from mu_tau itself.

    Examples
    --------
    >>> inst = HardInstance(2, seed=0)
    >>> inst.dim, inst.embedding.min_distance
    (16, 5)
    >>> X, bits, y = inst.support()
    >>> X.shape, y.tolist()                        # k = a + 4 b; IP(a, b)
    ((16, 16), [0, 0, 0, 0, 0, 1, 0, 1, 0, 0, 1, 1, 0, 1, 1, 0])
    >>> [round(v, 12) for v in inst.target(X[:4]).tolist()], round(inst.lipschitz_constant, 4)
    ([0.0, 0.0, 0.0, 0.0], 0.8944)
    """

    def __init__(self, n: int, m: "int | None" = None, tau: float = 0.0, seed=0,
                 tries: int = 200, *, progress: bool = False):
        n = check_n_bits(n, minimum=1, maximum=1 << 30)
        if n > MAX_INSTANCE_BITS:
            raise DimensionError(
                f"n = {n} exceeds MAX_INSTANCE_BITS = {MAX_INSTANCE_BITS}: the support has 4^n "
                f"points indexed by int64 and f_d tabulates all 2^n codewords of each party per "
                f"point; use n <= {MAX_INSTANCE_BITS} (CodeEmbedding alone goes to "
                f"n = {MAX_CODE_BITS})")
        if isinstance(tau, bool) or not isinstance(tau, (int, float, np.integer, np.floating)):
            raise TypeError(f"tau must be a float, got {type(tau).__name__}")
        tau = float(tau)
        if not (tau == 0.0 or 0.0 < tau <= MAX_TAU):
            raise DimensionError(
                f"tau must be 0 (discrete mu_0) or lie in (0, {MAX_TAU}] (boxes), got {tau!r}: "
                f"the label gap shrinks to delta*_0 (1 - tau)/(1 + tau) and the depth-3 net of "
                f"THEORY §3.2 needs margin 1 - 2 tau; use 0 <= tau <= MAX_TAU = {MAX_TAU}")
        self._embedding = CodeEmbedding(n, m, seed=seed, tries=tries, progress=progress)
        self._n = n
        self._m = self._embedding.m
        self._tau = tau
        s = self._embedding.scale
        self._centre = s / (1.0 + tau)               # |coordinate| of a box centre
        self._half = tau * s / (1.0 + tau)           # box half-width
        dc, m = self._embedding.min_distance, self._m
        self._delta = math.sqrt(2 * dc / m) * (1.0 - tau) / (1.0 + tau)

    # ------------------------------------------------------------------ sizes
    @property
    def m(self) -> int:
        """Code length per party."""
        return self._m

    @property
    def dim(self) -> int:
        """d = 2m."""
        return 2 * self._m

    @property
    def tau(self) -> float:
        return self._tau

    @property
    def embedding(self) -> CodeEmbedding:
        """The per-party code embedding Phi."""
        return self._embedding

    @property
    def pair_embedding(self) -> ProductEmbedding:
        """``(a, b) -> (Phi(a), Phi(b))`` on 2n bits (the mu_0 support points)."""
        return ProductEmbedding(self._embedding, self._embedding)

    @property
    def half_width(self) -> float:
        """Half-width of each box, ``tau / (sqrt(2m) (1 + tau))`` (0 for mu_0)."""
        return self._half

    @property
    def delta_star(self) -> float:
        """``dist(Z_0, Z_1) = sqrt(2 d_C / m) (1 - tau) / (1 + tau)``."""
        return self._delta

    # ------------------------------------------------------------------ hooks
    def _support_points(self, k: np.ndarray) -> np.ndarray:
        a, b = split_index(k, self._n)
        c = self._centre
        enc = self._embedding.encode
        ca = np.where(enc(bits_of(a, self._n).reshape(-1, self._n)) == 1, c, -c)
        cb = np.where(enc(bits_of(b, self._n).reshape(-1, self._n)) == 1, c, -c)
        return np.hstack([ca, cb])

    def _box(self, k: np.ndarray):
        c = self._support_points(k)
        return c - self._half, c + self._half

    def _clip_sample(self, x: np.ndarray) -> np.ndarray:
        # removes only rounding-level excess: |x_j| <= 1/sqrt(2m) keeps ||x|| <= 1
        s = self._embedding.scale
        return np.clip(x, -s, s)

    def _domain_sample(self, k: int, g) -> np.ndarray:
        return uniform_ball(k, self.dim, seed=g)

    def _tables(self, x: np.ndarray):
        m = self._m
        words = self._embedding.codeword_words()
        U = _kernels._sqdist_table(words, np.ascontiguousarray(x[:, :m]), self._centre, self._half)
        V = _kernels._sqdist_table(words, np.ascontiguousarray(x[:, m:]), self._centre, self._half)
        return U, V

    def _witness_pairs(self):
        e = self._embedding.min_weight_message
        b = 1 << (int(e).bit_length() - 1)        # a unit vector with <e, b> = 1
        return 0 + (b << self._n), e + (b << self._n)   # IP(0, b) = 0, IP(e, b) = 1

    # ------------------------------------------------------------------ the instance
    def sample(self, k: int, rng=None, *, seed=None) -> Support:
        """Draw ``k`` i.i.d. points from mu_tau (uniform pair; uniform in its box if tau > 0).

        ``rng`` (or ``seed``) is anything :func:`circuits.utils.as_rng` accepts.  Every point has norm
        at most 1 and the signs of its centre, so :meth:`decode` recovers its pair.

        Examples
        --------
        >>> inst = HardInstance(3, tau=0.1, seed=0)
        >>> s = inst.sample(500, seed=1)
        >>> bool((np.linalg.norm(s.points, axis=1) <= 1 + 1e-12).all())
        True
        >>> bool((inst.decode(s.points) == s.bits).all())
        True
        """
        return super().sample(k, rng, seed=seed)

    def target(self, points, *, one_lipschitz: bool = False, progress: bool = False) -> np.ndarray:
        """``f_d(x) = min{1, dist(x, Z_0) / delta*}`` for each row: float64 ``(N,)``.

        Equal to the label on the support (to rounding), ``1/delta*``-Lipschitz on R^d (pitfall
        5 of THEORY §7: not 1-Lipschitz).  ``one_lipschitz=True`` returns ``delta* f_d`` instead
        (labels {0, delta*}, exactly 1-Lipschitz).

        Examples
        --------
        >>> inst = HardInstance(2, seed=0)
        >>> S = inst.support()
        >>> bool(np.allclose(inst.target(S.points), S.labels, atol=1e-12, rtol=0))
        True
        """
        return super().target(points, one_lipschitz=one_lipschitz, progress=progress)

    def decode(self, points, method: str = "round") -> np.ndarray:
        """Pair bits ``(a, b)`` of each point, uint8 ``(N, 2n)`` (THEORY §2.4).

        ``"round"``: ``a_i = [x_i > 0]``, ``b_i = [x_{m+i} > 0]`` (exact on the support of
        mu_tau); ``"nearest"``: nearest codeword on each side.
        """
        x = as_points(points, self.dim)
        m = self._m
        return np.hstack([self._embedding.decode(x[:, :m], method),
                          self._embedding.decode(x[:, m:], method)])

    def delta_star_witness(self):
        """A pair ``(x0, x1)`` of label-0 and label-1 support points at distance exactly delta*.

        ``(0, b)`` and ``(e, b)`` with e the minimum-weight message and ``<e, b> = 1``; for
        tau > 0 the points are on the facing sides of the two boxes.  Returns
        ``(x0, x1, k0, k1)``.

        Examples
        --------
        >>> inst = HardInstance(3, seed=0)
        >>> x0, x1, k0, k1 = inst.delta_star_witness()
        >>> abs(float(np.linalg.norm(x0 - x1)) - inst.delta_star) < 1e-12
        True
        >>> inst.labels_of([k0, k1]).tolist()
        [0, 1]
        """
        return super().delta_star_witness()

    def shift_signs(self, r, s) -> np.ndarray:
        """Diagonal of ``R_{r,s} = diag((-1)^C(r), (-1)^C(s))``: float64 (d,) of +-1.

        ``x_{a XOR r, b XOR s} = R_{r,s} x_{a,b}`` (and likewise for boxes, with the noise
        reflected).  ``r``, ``s`` are message indices or rows of n bits.

        Examples
        --------
        >>> inst = HardInstance(2, seed=0)
        >>> k, r, s = 1 + 4 * 2, 3, 1                     # (a, b) = (1, 2) -> (1^3, 2^1) = (2, 3)
        >>> bool(np.array_equal(inst.points_of(2 + 4 * 3)[0],
        ...                     inst.shift_signs(r, s) * inst.points_of(k)[0]))
        True
        """
        return np.concatenate([self._embedding.sign_flip(r), self._embedding.sign_flip(s)])

    def summary(self) -> str:
        """Sizes, certified distance, delta*, L, support size and the best constant MSE, as a
        printable table (``to_dict()`` gives the same numbers JSON-ready).

        Examples
        --------
        >>> print(HardInstance(4, seed=0).summary())            # doctest: +NORMALIZE_WHITESPACE
        n (bits per party)      4
        m (code length)         16
        d (dimension)           32
        tau (box radius)        0.0
        seed / tries            0 / 200
        d_C (certified)         7
        d_C / m                 0.4375
        delta*                  0.935414
        Lipschitz L = 1/delta*  1.069045
        support size 4^n        256
        P(label = 1)            0.468750
        best constant MSE       0.249023
        """
        return str(self._record())

    def _record(self) -> InstanceSummary:
        e = self._embedding
        return InstanceSummary(n=self._n, m=self._m, d=self.dim, tau=self._tau, seed=e.seed,
                               tries=e.tries, min_distance=e.min_distance,
                               relative_distance=e.relative_distance, delta_star=self._delta,
                               lipschitz_constant=self.lipschitz_constant,
                               support_size=self.support_size,
                               label_one_fraction=self.label_one_fraction,
                               best_constant_mse=self.best_constant_mse)

    def to_dict(self, *, generator: bool = True) -> dict:
        """The numbers of :meth:`summary` (JSON-ready), plus the generator rows unless
        ``generator=False``."""
        out = self._record().to_dict()
        if generator:
            out["generator"] = self._embedding.to_dict()["generator"]
        return out

    def __repr__(self) -> str:
        return (f"HardInstance(n={self._n}, m={self._m}, tau={self._tau}, "
                f"seed={self._embedding.seed!r}, min_distance={self._embedding.min_distance})")
