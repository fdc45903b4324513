"""The ``Embedding`` protocol, shared validation, the product of two embeddings, and the contract.

An embedding maps bit vectors of {0,1}^n (cube order, :mod:`circuits.hypercube`) to points of
the closed unit ball of R^dim.  Every embedding in this package

* has ``n_bits`` and ``dim``;
* is callable on a ``(N, n_bits)`` array of 0/1 values and returns float64 ``(N, dim)`` rows of
  Euclidean norm at most 1;
* has ``affine()`` returning ``(A, b)`` with ``embed(z) = z @ A.T + b`` when the map is affine in
  the bits over R, and ``None`` otherwise (the code embedding: its bits are parities mod 2).

:func:`check_embedding` is the contract, run over every embedding on the whole cube.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import numpy as np

from circuits.utils.errors import DimensionError
from circuits.hypercube import MAX_EXHAUSTIVE_BITS, check_n_bits, points

__all__ = ["Embedding", "ProductEmbedding", "ContractReport", "check_embedding", "as_bits",
           "as_points", "ip_lipschitz_bound", "NORM_ATOL"]

#: Absolute tolerance for norms and distances (THEORY §5, E5: exact to 1e-12).
NORM_ATOL = 1e-12


@runtime_checkable
class Embedding(Protocol):
    """Structural type of an embedding of {0,1}^n_bits into the unit ball of R^dim.

    Examples
    --------
    >>> from embeddings import ScaledCube, CodeEmbedding
    >>> code = CodeEmbedding(3, seed=0, tries=2)
    >>> isinstance(ScaledCube(3), Embedding), isinstance(code, Embedding)
    (True, True)
    """

    @property
    def n_bits(self) -> int: ...

    @property
    def dim(self) -> int: ...

    def __call__(self, bits) -> np.ndarray: ...

    def affine(self) -> "tuple[np.ndarray, np.ndarray] | None": ...


def as_bits(bits, n: int, *, name: str = "bits") -> np.ndarray:
    """Validate a batch of bit rows and return it as a C-contiguous uint8 ``(N, n)`` array.

    A single row of length n is accepted and returned with shape ``(1, n)``.

    Raises
    ------
    DimensionError
        On a wrong shape or a value other than 0 and 1.

    Examples
    --------
    >>> as_bits([1, 0, 1], 3).tolist()
    [[1, 0, 1]]
    """
    b = np.asarray(bits)
    if b.ndim == 1 and b.shape[0] == n:
        b = b[None, :]
    if b.ndim != 2 or b.shape[1] != n:
        raise DimensionError(f"{name} must have shape (n_points, {n}) (one row of {n} bits per "
                             f"point), got shape {b.shape}; use circuits.hypercube.points({n}) "
                             f"or .reshape(-1, {n})")
    if b.dtype == bool:
        b = b.astype(np.uint8)
    if b.size and not np.isin(b, (0, 1)).all():
        bad = b[~np.isin(b, (0, 1))].ravel()[0]
        raise DimensionError(f"{name} must contain only 0 and 1, found {bad!r}; convert signs "
                             f"with (1 - s) // 2")
    return np.ascontiguousarray(b, dtype=np.uint8)


def as_points(points_, dim: int, *, name: str = "points") -> np.ndarray:
    """Validate a batch of points of R^dim; return a C-contiguous float64 ``(N, dim)`` array.

    Examples
    --------
    >>> as_points([0.5, 0.0], 2).shape
    (1, 2)
    """
    x = np.asarray(points_, dtype=np.float64) if not isinstance(points_, np.ndarray) else points_
    if x.ndim == 1 and x.shape[0] == dim:
        x = x[None, :]
    if x.ndim != 2 or x.shape[1] != dim:
        raise DimensionError(f"{name} must have shape (n_points, {dim}), got shape {x.shape}; "
                             f"pass one row of {dim} coordinates per point")
    if not np.issubdtype(x.dtype, np.number) or np.issubdtype(x.dtype, np.complexfloating):
        raise TypeError(f"{name} must be real numbers, got dtype {x.dtype}")
    x = np.ascontiguousarray(x, dtype=np.float64)
    if x.size and not np.isfinite(x).all():
        raise DimensionError(f"{name} must be finite; found NaN or inf in row "
                             f"{int(np.argwhere(~np.isfinite(x))[0, 0])}")
    return x


def _affine_eval(affine, bits: np.ndarray) -> np.ndarray:
    A, b = affine
    return bits.astype(np.float64) @ np.asarray(A, dtype=np.float64).T + np.asarray(b, np.float64)


class ProductEmbedding:
    """The pair embedding ``(z1, z2) -> (first(z1), second(z2))`` on n1 + n2 bits.

    The first ``first.n_bits`` bits (low bits in cube order: Alice) go to coordinates
    ``[0, first.dim)``, the rest (Bob) to ``[first.dim, first.dim + second.dim)``.  The image
    lies in the unit ball when both factors map into the ball of radius 1/sqrt(2) (checked at
    construction from their ``radius``).  It is affine iff both factors are.

    Examples
    --------
    >>> from embeddings import ScaledCube
    >>> e = ProductEmbedding(ScaledCube(1), ScaledCube(1))
    >>> (e.n_bits, e.dim)
    (2, 2)
    >>> [round(v, 4) for v in e([[1, 0]])[0].tolist()]      # x = 1 (Alice), y = 0 (Bob)
    [0.7071, -0.7071]
    """

    def __init__(self, first, second):
        for name, e in (("first", first), ("second", second)):
            if not isinstance(e, Embedding):
                raise TypeError(f"{name} must be an Embedding (n_bits, dim, __call__, affine), got "
                                f"{type(e).__name__}")
            r = getattr(e, "radius", None)
            if r is None or r > 1 / math.sqrt(2) + NORM_ATOL:
                raise DimensionError(
                    f"{name} must map into the ball of radius 1/sqrt(2) so that the pair lies in "
                    f"the unit ball; its radius is {r}. Rescale it (e.g. ScaledCube(n, radius="
                    f"2**-0.5))")
        self.first = first
        self.second = second

    @property
    def n_bits(self) -> int:
        return self.first.n_bits + self.second.n_bits

    @property
    def dim(self) -> int:
        return self.first.dim + self.second.dim

    @property
    def radius(self) -> float:
        return math.hypot(self.first.radius, self.second.radius)

    def __call__(self, bits) -> np.ndarray:
        z = as_bits(bits, self.n_bits)
        n1 = self.first.n_bits
        return np.hstack([self.first(z[:, :n1]), self.second(z[:, n1:])])

    def affine(self):
        f, s = self.first.affine(), self.second.affine()
        if f is None or s is None:
            return None
        (A1, b1), (A2, b2) = f, s
        A = np.zeros((self.dim, self.n_bits))
        A[: self.first.dim, : self.first.n_bits] = A1
        A[self.first.dim:, self.first.n_bits:] = A2
        return A, np.concatenate([b1, b2])

    def decode(self, points_) -> np.ndarray:
        """Bits of each point: both factors' decoders side by side (uint8 ``(N, n_bits)``)."""
        x = as_points(points_, self.dim)
        d1 = self.first.dim
        return np.hstack([self.first.decode(x[:, :d1]), self.second.decode(x[:, d1:])])

    def __repr__(self) -> str:
        return f"ProductEmbedding({self.first!r}, {self.second!r})"


def ip_lipschitz_bound(embedding) -> float:
    """Smallest Lipschitz constant of any extension of IP_n over ``ProductEmbedding(e, e)``.

    For an injective embedding ``e`` of {0,1}^n with minimum pairwise distance delta, the pair
    points of different IP labels are at least delta apart and some pair is exactly delta
    apart (flip a minimising difference e on Alice's side against a Bob input b with
    <e, b> = 1), so the answer is exactly 1/delta (achieved by min{1, dist(x, Z_0)/delta}).
    The scaled cube gives sqrt(n/2) (the blow-up), a good code O(1) (THEORY §2).

    Examples
    --------
    >>> from embeddings import ScaledCube
    >>> [round(ip_lipschitz_bound(ScaledCube(n)), 4) for n in (2, 8, 32)]
    [1.0, 2.0, 4.0]
    """
    delta = float(embedding.min_euclidean_distance)
    if delta <= 0:
        raise DimensionError("the embedding is not injective (minimum distance 0)")
    return 1.0 / delta


@dataclass(frozen=True)
class ContractReport:
    """Outcome of :func:`check_embedding` (``ok`` is True iff ``failures`` is empty)."""

    name: str
    n_points: int
    max_norm: float
    affine_max_error: "float | None"
    decode_mismatches: "int | None"
    failures: tuple = field(default=())

    @property
    def ok(self) -> bool:
        return not self.failures


def check_embedding(embedding, *, max_bits: int = 16, atol: float = NORM_ATOL,
                    raise_on_failure: bool = True) -> ContractReport:
    """Run the embedding contract on the whole cube {0,1}^n_bits.

    Checks: the output is float64 of shape ``(2^n, dim)``; every image lies in the closed unit
    ball (norm <= 1 + atol); ``affine()`` is ``None`` or an ``(A, b)`` that reproduces the map to
    ``atol``; if the embedding has ``decode``, it inverts the map exactly.

    Parameters
    ----------
    embedding : Embedding
    max_bits : int
        Refuse embeddings with more bits than this (the check is exhaustive).
    atol : float
        Absolute tolerance for norms and the affine form.
    raise_on_failure : bool
        Raise ``AssertionError`` listing the failures instead of returning a failing report.

    Examples
    --------
    >>> from embeddings import ScaledCube
    >>> r = check_embedding(ScaledCube(4))
    >>> r.ok, r.n_points, round(r.max_norm, 6)
    (True, 16, 0.707107)
    """
    if not isinstance(embedding, Embedding):
        raise TypeError(f"embedding must implement the Embedding protocol (n_bits, dim, "
                        f"__call__, affine), got {type(embedding).__name__}")
    n = check_n_bits(embedding.n_bits, name="embedding.n_bits",
                     maximum=min(max_bits, MAX_EXHAUSTIVE_BITS))
    z = points(n)
    failures = []
    X = embedding(z)
    if not isinstance(X, np.ndarray) or X.dtype != np.float64 or X.shape != (1 << n, embedding.dim):
        failures.append(f"output must be float64 of shape {(1 << n, embedding.dim)}, got "
                        f"{getattr(X, 'dtype', type(X))} {getattr(X, 'shape', None)}")
        X = np.asarray(X, dtype=np.float64).reshape(1 << n, -1)
    norms = np.linalg.norm(X, axis=1)
    max_norm = float(norms.max())
    if max_norm > 1 + atol:
        failures.append(f"image outside the unit ball: max norm {max_norm!r} at point "
                        f"{int(norms.argmax())}")
    aff = embedding.affine()
    aff_err = None
    if aff is not None:
        aff_err = float(np.abs(_affine_eval(aff, z) - X).max())
        if aff_err > atol:
            failures.append(f"affine form disagrees with __call__ by {aff_err!r}")
    dec_bad = None
    if hasattr(embedding, "decode"):
        back = np.asarray(embedding.decode(X))
        dec_bad = int((back.reshape(z.shape) != z).any(axis=1).sum())
        if dec_bad:
            failures.append(f"decode(embed(z)) != z on {dec_bad} points")
    report = ContractReport(name=repr(embedding), n_points=1 << n, max_norm=max_norm,
                            affine_max_error=aff_err, decode_mismatches=dec_bad,
                            failures=tuple(failures))
    if raise_on_failure and failures:
        raise AssertionError(f"{report.name} breaks the embedding contract: " + "; ".join(failures))
    return report
