"""Two-party instances: the machinery :class:`~embeddings.HardInstance` and
:class:`~embeddings.CubeInstance` share (THEORY §2).

A :class:`PairInstance` describes, for each pair ``k = a + 2^n b`` (cube order, a = Alice = low
bits), an axis-aligned box of R^d labelled ``IP(a, b)``; from that it provides the support
(built once, read-only), sampling, the exact distance to each label class, the target f_d, the
projections and the Lipschitz check.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from circuits.utils.errors import DimensionError
from circuits.functions import inner_product_mod2, ip_values
from circuits.hypercube import bits_of, check_exhaustive, index_of
from circuits.utils.progress import progress_bar
from circuits.utils.rng import as_rng
from embeddings import _kernels
from embeddings.base import NORM_ATOL, as_points

__all__ = ["PairInstance", "Support", "LipschitzReport"]

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


def _read_only(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    a.setflags(write=False)
    return a


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
        return ip_values(self._check_indices(k), self._n)

    def ip_table(self) -> np.ndarray:
        """``IP(a, b)`` for all 4^n pairs in cube order (uint8, read-only), computed once.

        The same array as ``support().labels``, without the 4^n points: 4^n bytes, so it exists
        wherever those fit in memory even when the points do not.
        """
        table = self.__dict__.get("_ip_table_cache")
        if table is None:
            table = _read_only(inner_product_mod2(self._n, allow_large=True))
            self._ip_table_cache = table
        return table

    def _support_chunk(self, k: np.ndarray) -> Support:
        return Support(points=self._support_points(k),
                       bits=bits_of(k, 2 * self._n).reshape(-1, 2 * self._n),
                       labels=self.labels_of(k), indices=k)

    def support(self, *, allow_large: bool = False) -> Support:
        """All 4^n support points (or box centres), with bits and labels, in cube order.

        Built once per instance and cached (an instance is immutable); the arrays are
        read-only, so copy before modifying (``X = support.points.copy()``).  ``labels`` is
        :meth:`ip_table`.

        Raises
        ------
        DimensionError
            When 4^n rows do not fit (see :func:`circuits.hypercube.check_exhaustive`); use
            :meth:`iter_support` to stream.
        """
        cached = self.__dict__.get("_support_cache")
        if cached is not None:
            return cached
        check_exhaustive(2 * self._n, allow_large=allow_large,
                         bytes_per_point=8 * self.dim + 2 * self._n + 9,
                         what="support() (use iter_support(chunk=...) to stream)")
        k = np.arange(self.support_size, dtype=np.int64)
        sup = Support(points=_read_only(self._support_points(k)),
                      bits=_read_only(bits_of(k, 2 * self._n).reshape(-1, 2 * self._n)),
                      labels=self.ip_table(), indices=_read_only(k))
        self._support_cache = sup
        return sup

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
                from circuits.utils.parallel import deferred_sigint
                with deferred_sigint():   # tuple of arrays: see circuits.utils.parallel
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
        return ip_values(index_of(self.decode(points)), self._n)

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
        >>> from embeddings import HardInstance
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
