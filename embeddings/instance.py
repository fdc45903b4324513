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
from dataclasses import dataclass, field

import numpy as np

from circuits.utils.errors import DimensionError
from circuits.hypercube import bits_of, check_exhaustive, check_n_bits, split_index
from circuits.utils.progress import progress_bar
from circuits.utils.rng import as_rng
from embeddings import _kernels
from embeddings.base import NORM_ATOL, ProductEmbedding, as_points
from embeddings.code import MAX_CODE_BITS, CodeEmbedding

__all__ = ["HardInstance", "PairInstance", "Support", "InstanceSummary", "LipschitzReport",
           "uniform_ball", "MAX_TAU", "MAX_INSTANCE_BITS"]

#: Largest box noise radius (THEORY §2.2; the depth-3 net and the margins assume tau <= 0.15).
MAX_TAU = 0.15
#: Largest n for an instance: f_d enumerates 2^n codewords per party per point and the support
#: has 4^n points indexed by int64.
MAX_INSTANCE_BITS = 20
_CHUNK_BYTES = 1 << 25


@dataclass(frozen=True, eq=False)
class Support:
    """Points of R^d with their pair bits and labels, in matching order.

    Attributes
    ----------
    points : float64 (N, d)
        Support points (tau = 0), box centres (``support()`` with tau > 0) or samples.
    bits : uint8 (N, 2n)
        Bits of (a, b) in cube order: columns 0..n-1 are a (Alice), n..2n-1 are b (Bob).
    labels : uint8 (N,)
        ``IP(a, b)``.
    indices : int64 (N,)
        Cube index ``k = a + 2^n b`` of each row.
    """

    points: np.ndarray
    bits: np.ndarray
    labels: np.ndarray
    indices: "np.ndarray | None" = None

    def __len__(self) -> int:
        return int(self.points.shape[0])

    def __iter__(self):                       # allows ``X, Z, y = support`` unpacking
        return iter((self.points, self.bits, self.labels))


@dataclass(frozen=True)
class InstanceSummary:
    """The numbers describing a hard instance: ``str()`` is a table, ``to_dict()`` JSON-ready."""

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


@dataclass(frozen=True, eq=False)
class LipschitzReport:
    """Outcome of :meth:`HardInstance.check_lipschitz`.

    ``max_ratio[kind]`` is ``max |f(x) - f(x')| / (L ||x - x'||)`` over the pairs of that kind
    (<= 1 up to rounding iff the Lipschitz bound holds); ``worst`` holds the worst pair overall.
    """

    lipschitz_constant: float
    n_pairs: dict
    max_ratio: dict
    worst: tuple = field(default=())
    atol: float = NORM_ATOL

    @property
    def ok(self) -> bool:
        return all(r <= 1 + 1e-9 for r in self.max_ratio.values())

    def to_dict(self) -> dict:
        return {"lipschitz_constant": self.lipschitz_constant, "n_pairs": dict(self.n_pairs),
                "max_ratio": dict(self.max_ratio), "ok": self.ok}


def uniform_ball(k: int, dim: int, seed=None, *, radius: float = 1.0) -> np.ndarray:
    """``k`` points uniform in the ball of radius ``radius`` in R^dim (float64 ``(k, dim)``).

    Examples
    --------
    >>> x = uniform_ball(1000, 5, seed=0)
    >>> x.shape, bool((np.linalg.norm(x, axis=1) <= 1).all())
    ((1000, 5), True)
    """
    rng = as_rng(seed)
    k = int(k)
    dim = check_n_bits(dim, name="dim", minimum=1, maximum=1 << 20)
    g = rng.standard_normal((k, dim))
    norms = np.linalg.norm(g, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    r = radius * rng.random((k, 1)) ** (1.0 / dim)
    return g / norms * r


class PairInstance:
    """Common machinery of the two-party instances (:class:`HardInstance`, ``CubeInstance``).

    A subclass describes, for each pair ``k = a + 2^n b``, an axis-aligned box
    ``[lo(k), hi(k)]`` of R^d (a single point when lo = hi) whose label is ``IP(a, b)``, and the
    per-party tables ``U[i, a]`` / ``V[i, b]`` of squared distances from point i to the boxes of
    Alice's and Bob's halves.  Everything else is shared: support iteration, sampling (uniform in
    the box of a uniform pair), ``dist(x, Z_label)`` by an exact pruned search over the pairs,
    ``f_d = min{1, dist(x, Z_0) / delta*}``, projections and the Lipschitz check.
    """

    _n: int

    # ---- hooks (subclasses) ---------------------------------------------------
    @property
    def dim(self) -> int:  # pragma: no cover - abstract
        raise NotImplementedError

    @property
    def delta_star(self) -> float:  # pragma: no cover - abstract
        raise NotImplementedError

    def _box(self, k: np.ndarray):  # pragma: no cover - abstract
        """(lo, hi) float64 (N, d) of the boxes of pairs k."""
        raise NotImplementedError

    def _support_points(self, k: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def _tables(self, x: np.ndarray):  # pragma: no cover - abstract
        """(U, V) float64 (N, 2^n): squared distances of the halves of x to each party's boxes."""
        raise NotImplementedError

    def _clip_sample(self, x: np.ndarray) -> np.ndarray:
        return x

    def _domain_sample(self, k: int, g) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def decode(self, points, method: str = "round") -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    # ---- sizes ------------------------------------------------------------------
    @property
    def n(self) -> int:
        """Bits per party."""
        return self._n

    @property
    def support_size(self) -> int:
        """4^n."""
        return 1 << (2 * self._n)

    @property
    def lipschitz_constant(self) -> float:
        """``1/delta*``: the certified Lipschitz constant of :meth:`target` (THEORY §2.3)."""
        return 1.0 / self.delta_star

    @property
    def label_one_fraction(self) -> float:
        """``P_mu(IP = 1) = 1/2 - 2^(-n-1)``."""
        return 0.5 - 2.0 ** (-self._n - 1)

    @property
    def best_constant_mse(self) -> float:
        """``min_c E_mu (c - f)^2 = p (1 - p) = 1/4 - 4^(-n-1)``."""
        return 0.25 - 4.0 ** (-self._n - 1)

    # ---- support ----------------------------------------------------------------
    def points_of(self, k) -> np.ndarray:
        """Support points (box centres for boxes) of the cube indices k: float64 ``(N, d)``."""
        return self._support_points(self._check_indices(k))

    def labels_of(self, k) -> np.ndarray:
        """``IP(a, b)`` of cube indices ``k = a + 2^n b`` as uint8."""
        k = self._check_indices(k)
        a, b = split_index(k, self._n)
        return (np.bitwise_count(a & b) & 1).astype(np.uint8)

    def _support_chunk(self, k: np.ndarray) -> Support:
        return Support(points=self._support_points(k),
                       bits=bits_of(k, 2 * self._n).reshape(-1, 2 * self._n),
                       labels=self.labels_of(k), indices=k)

    def support(self, *, allow_large: bool = False) -> Support:
        """All 4^n support points (or box centres), with bits and labels, in cube order.

        Raises
        ------
        DimensionError
            When 4^n rows do not fit (see :func:`circuits.hypercube.check_exhaustive`); use
            :meth:`iter_support` to stream.
        """
        check_exhaustive(2 * self._n, allow_large=allow_large,
                         bytes_per_point=8 * self.dim + 2 * self._n + 9,
                         what="support() (use iter_support(chunk=...) to stream)")
        return self._support_chunk(np.arange(self.support_size, dtype=np.int64))

    def iter_support(self, chunk: int = 1 << 16, *, progress: bool = False):
        """Yield the support in cube order as :class:`Support` chunks of at most ``chunk`` rows."""
        if isinstance(chunk, bool) or not isinstance(chunk, (int, np.integer)) or chunk < 1:
            raise ValueError(f"chunk must be a positive int, got {chunk!r}")
        chunk = int(chunk)
        total = self.support_size
        with progress_bar(total, enabled=progress, desc="support", unit="pt") as bar:
            for lo in range(0, total, chunk):
                k = np.arange(lo, min(total, lo + chunk), dtype=np.int64)
                yield self._support_chunk(k)
                bar.update(len(k))

    def sample(self, k: int, rng=None, *, seed=None) -> Support:
        """Draw ``k`` i.i.d. points of mu: a uniform pair, then a uniform point of its box.

        ``rng`` (or ``seed``) is anything :func:`circuits.utils.as_rng` accepts.
        """
        if rng is not None and seed is not None:
            raise TypeError("pass either rng or seed, not both")
        g = as_rng(rng if rng is not None else seed)
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 0:
            raise ValueError(f"k must be a non-negative int, got {k!r}")
        idx = g.integers(0, self.support_size, size=int(k), dtype=np.int64)
        out = self._support_chunk(idx)
        lo, hi = self._box(idx)
        if np.any(hi > lo):
            pts = self._clip_sample(np.clip(g.uniform(lo, hi), lo, hi))
            out = Support(points=pts, bits=out.bits, labels=out.labels, indices=out.indices)
        return out

    # ---- geometry ---------------------------------------------------------------
    def distance(self, points, label: int = 0, *, progress: bool = False):
        """Distance to Z_label (points or boxes of that label) and the nearest pair's index.

        Evaluates ``dist^2 = min_{IP(a, b) = label} U(a) + V(b)`` where ``U(a)`` is the squared
        distance of the Alice half of x to Alice's box a (computed coordinate by coordinate, so
        exactly 0 inside it) and V likewise: O(2^n m) per point for the tables and an exact
        pruned search over the 4^n pairs (O(4^n) in the worst case, far less in practice).

        Returns
        -------
        (dist, k) : float64 (N,), int64 (N,)
        """
        if label not in (0, 1):
            raise ValueError(f"label must be 0 or 1, got {label!r}")
        x = as_points(points, self.dim)
        out = np.empty(x.shape[0], dtype=np.float64)
        arg = np.empty(x.shape[0], dtype=np.int64)
        step = max(1, _CHUNK_BYTES // (16 << self._n))
        with progress_bar(x.shape[0], enabled=progress, desc="distance", unit="pt") as bar:
            for lo in range(0, x.shape[0], step):
                U, V = self._tables(x[lo: lo + step])
                v, a = _kernels._min_over_label(U, V, np.int64(label))
                out[lo: lo + step] = np.sqrt(v)
                arg[lo: lo + step] = a
                bar.update(U.shape[0])
        return out, arg

    def target(self, points, *, one_lipschitz: bool = False, progress: bool = False) -> np.ndarray:
        """``f_d(x) = min{1, dist(x, Z_0) / delta*}`` for each row: float64 ``(N,)``.

        Equal to the label on the support (to rounding), ``1/delta*``-Lipschitz on R^d.  With
        ``one_lipschitz=True`` returns ``delta* f_d = min{delta*, dist(x, Z_0)}`` instead: exactly
        1-Lipschitz, labels {0, delta*} (THEORY §7, pitfall 5).
        """
        dist, _ = self.distance(points, 0, progress=progress)
        if one_lipschitz:
            return np.minimum(self.delta_star, dist)
        return np.minimum(1.0, dist / self.delta_star)

    def project(self, points, label: int = 0):
        """Nearest point of Z_label to each point: ``(nearest float64 (N, d), dist, k)``."""
        x = as_points(points, self.dim)
        dist, k = self.distance(x, label)
        lo, hi = self._box(k)
        return np.clip(x, lo, hi), dist, k

    def rounded_label(self, points) -> np.ndarray:
        """``IP(dec(x))`` (uint8): equals f_d on the support, discontinuous elsewhere."""
        z = self.decode(points)
        n = self._n
        return ((z[:, :n] & z[:, n:]).sum(axis=1) & 1).astype(np.uint8)

    def delta_star_witness(self):
        """A label-0 point and a label-1 point of the support at distance exactly delta*.

        Returns ``(x0, x1, k0, k1)``: the points and their pairs' cube indices.
        """
        k0, k1 = self._witness_pairs()
        lo, hi = self._box(np.array([k0, k1], dtype=np.int64))
        # facing corners: in each coordinate take the point of each interval closest to the other
        # where the intervals overlap, a common point (the middle of the overlap)
        mid = (np.maximum(lo[0], lo[1]) + np.minimum(hi[0], hi[1])) / 2
        x0 = np.where(hi[0] < lo[1], hi[0], np.where(lo[0] > hi[1], lo[0], mid))
        x1 = np.clip(x0, lo[1], hi[1])
        return x0, x1, int(k0), int(k1)

    def _witness_pairs(self):  # pragma: no cover - abstract
        raise NotImplementedError

    # ---- checks -----------------------------------------------------------------
    def check_lipschitz(self, n_pairs: int = 2000, seed=0) -> LipschitzReport:
        """Check ``|f(x) - f(x')| <= L ||x - x'||`` on sampled pairs of three kinds.

        * ``"near"``: samples of mu with Gaussian noise of size about delta*, each paired with a
          small perturbation of itself and with another noisy sample;
        * ``"domain"``: independent random points of the domain (the unit ball, or the cube),
          and close pairs among them;
        * ``"adversarial"``: a label-1 sample and its nearest point of Z_0 (ratio 1 when their
          distance is delta*), the delta* witness pair, and points along the segment between.

        Examples
        --------
        >>> r = HardInstance(3, seed=0).check_lipschitz(200, seed=1)
        >>> r.ok, sorted(r.max_ratio)
        (True, ['adversarial', 'domain', 'near'])
        """
        g = as_rng(seed)
        L = self.lipschitz_constant
        n_pairs = int(n_pairs)
        if n_pairs < 1:
            raise ValueError(f"n_pairs must be >= 1, got {n_pairs}")
        d = self.dim
        delta = self.delta_star
        pairs = {}
        s = self.sample(n_pairs, g).points
        x = s + g.standard_normal(s.shape) * (delta / math.sqrt(d))
        xp = x + g.standard_normal(s.shape) * (0.05 * delta / math.sqrt(d))
        y = self.sample(n_pairs, g).points
        pairs["near"] = (np.vstack([x, x]), np.vstack([xp, y]))
        u = self._domain_sample(n_pairs, g)
        v = self._domain_sample(n_pairs, g)
        w = u + g.standard_normal(u.shape) * (0.02 / math.sqrt(d))
        pairs["domain"] = (np.vstack([u, u]), np.vstack([v, w]))
        ones = self.sample(4 * n_pairs, g)
        x1 = ones.points[ones.labels == 1][:n_pairs]
        near0, _, _ = self.project(x1, 0)
        w0, w1, _, _ = self.delta_star_witness()
        t = np.linspace(0.0, 1.0, 33)[:, None]
        seg = (1 - t) * w0 + t * w1
        pairs["adversarial"] = (np.vstack([x1, w0[None], seg[:-1]]),
                                np.vstack([near0, w1[None], seg[1:]]))
        ratios, counts, worst, worst_r = {}, {}, (), -1.0
        for kind, (p, q) in pairs.items():
            fp, fq = self.target(p), self.target(q)
            dist = np.linalg.norm(p - q, axis=1)
            ok = dist > 0
            r = np.abs(fp - fq)[ok] / (L * dist[ok])
            ratios[kind] = float(r.max()) if r.size else 0.0
            counts[kind] = int(ok.sum())
            if r.size and r.max() > worst_r:
                i = int(np.flatnonzero(ok)[np.argmax(r)])
                worst_r, worst = float(r.max()), (kind, p[i], q[i])
        return LipschitzReport(lipschitz_constant=L, n_pairs=counts, max_ratio=ratios, worst=worst)

    # ---- helpers ----------------------------------------------------------------
    def _check_indices(self, k) -> np.ndarray:
        k = np.atleast_1d(np.asarray(k))
        if k.ndim != 1 or not (np.issubdtype(k.dtype, np.integer) or k.size == 0):
            raise DimensionError(f"k must be a 1-D array of integer cube indices, got dtype "
                                 f"{k.dtype} shape {k.shape}")
        k = k.astype(np.int64)
        if k.size and (k.min() < 0 or k.max() >= self.support_size):
            raise DimensionError(f"cube indices must lie in [0, 4^{self._n}) = [0, "
                                 f"{self.support_size}), got min {k.min()} max {k.max()}")
        return k


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
        return uniform_ball(k, self.dim, g)

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

    def summary(self) -> InstanceSummary:
        """Sizes, certified distance, delta*, L, support size and the best constant MSE.

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
        e = self._embedding
        return InstanceSummary(n=self._n, m=self._m, d=self.dim, tau=self._tau, seed=e.seed,
                               tries=e.tries, min_distance=e.min_distance,
                               relative_distance=e.relative_distance, delta_star=self._delta,
                               lipschitz_constant=self.lipschitz_constant,
                               support_size=self.support_size,
                               label_one_fraction=self.label_one_fraction,
                               best_constant_mse=self.best_constant_mse)

    def to_dict(self) -> dict:
        """Summary plus the generator rows (JSON-ready)."""
        out = self.summary().to_dict()
        out["generator"] = self._embedding.to_dict()["generator"]
        return out

    def __repr__(self) -> str:
        return (f"HardInstance(n={self._n}, m={self._m}, tau={self._tau}, "
                f"seed={self._embedding.seed!r}, min_distance={self._embedding.min_distance})")
