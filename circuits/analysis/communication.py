"""The communication-matrix view: sign matrices, rectangles, discrepancy, norms and rank.

A function f of (x, y) in {0,1}^n x {0,1}^n (x = low n bits = Alice = rows, y = high n bits =
Bob = columns; :mod:`circuits.hypercube`) has the sign matrix M[x, y] = (-1)^f(x, y).  For IP_n
this is the Sylvester–Hadamard matrix H = ``scipy.linalg.hadamard(2^n)``.

A *rectangle* is X x Y with X a set of rows and Y a set of columns.  Under the uniform measure
on all p q entries its discrepancy is |sum_{X x Y} M| / (p q).  Lindsey's lemma (THEORY.md §1.2)
bounds |sum_{X x Y} M| <= sqrt(|X| |Y|) ||M||_2, which is sqrt(|X| |Y| 2^n) for H; hence
disc(IP) <= 2^(-n/2).  :func:`max_discrepancy_search` looks for rectangles that come close.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from circuits.utils.errors import DimensionError, InvalidCircuitError
from circuits.functions import as_boolean_function
from circuits.hypercube import as_matrix, check_n_bits
from circuits.utils.progress import progress_bar
from circuits.utils.rng import as_rng

__all__ = ["sign_matrix", "rectangle_sum", "discrepancy", "DiscrepancySearch",
           "max_discrepancy_search", "matrix_spectral_norm", "numerical_rank"]

#: Sign matrices are materialised: 4^n entries.  n <= 13 gives a 64 MiB int8 matrix.
MAX_MATRIX_BITS = 13


def sign_matrix(f, n: "int | None" = None) -> np.ndarray:
    """The 2^n x 2^n sign matrix M[x, y] = (-1)^f(x, y) (int8; rows = Alice = low bits).

    Parameters
    ----------
    f : truth table of length 4^n, BooleanFunction or ThresholdCircuit on 2n inputs, or a name
        ("ip", "parity", "majority", "and", "or"; then ``n`` is required)
    n : int, optional
        Bits per party; inferred from ``f`` when possible (and checked if given).

    Examples
    --------
    >>> sign_matrix("ip", 1).tolist()
    [[1, 1], [1, -1]]
    >>> sign_matrix([0, 1, 0, 0]).tolist()   # f = 1 only at k = 1: x = 1, y = 0 -> row 1, col 0
    [[1, 1], [-1, 1]]
    """
    from circuits.analysis.correlation import _n_inputs_of
    from circuits.analysis.spectral import _table_of
    N = _n_inputs_of(f)
    if N is None:
        if n is None:
            raise TypeError(f"sign_matrix({f!r}) needs n (bits per party), e.g. sign_matrix('ip', 4)")
        N = 2 * check_n_bits(n, name="n", maximum=MAX_MATRIX_BITS)
        f = as_boolean_function(f, N)
    if N % 2:
        raise DimensionError(f"f must have an even number 2n of inputs (x then y), got {N}")
    if n is not None and 2 * n != N:
        raise DimensionError(f"n = {n} bits per party but f has {N} inputs (expected {2 * n})")
    n = check_n_bits(N // 2, name="n", maximum=MAX_MATRIX_BITS)
    table = _table_of(f)
    m = as_matrix(table, n)
    return np.ascontiguousarray(1 - 2 * m.astype(np.int8))


def _as_matrix2d(M, name: str = "M") -> np.ndarray:
    A = np.asarray(M)
    if A.ndim != 2 or 0 in A.shape:
        raise DimensionError(f"{name} must be a non-empty 2-D matrix, got shape {A.shape}")
    if A.dtype.kind not in "biuf":
        raise InvalidCircuitError(f"{name} must be numeric, got dtype {A.dtype}")
    if A.dtype.kind == "f" and not np.isfinite(A).all():
        raise InvalidCircuitError(f"{name} contains NaN or infinity")
    return A


def _as_index_set(S, size: int, name: str) -> np.ndarray:
    """Rows/columns given as a boolean mask of length ``size`` or distinct integer indices."""
    a = np.asarray(S)
    if a.ndim != 1:
        raise DimensionError(f"{name} must be a 1-D boolean mask or index list, got shape {a.shape}")
    if a.dtype == np.bool_:
        if a.shape[0] != size:
            raise DimensionError(f"{name} is a boolean mask of length {a.shape[0]}, but the matrix "
                                 f"has {size} along this axis")
        return np.flatnonzero(a)
    if a.size == 0:
        return np.zeros(0, dtype=np.int64)
    if a.dtype.kind not in "iu":
        raise DimensionError(f"{name} must be a boolean mask or integer indices, got dtype {a.dtype}")
    a = a.astype(np.int64)
    if a.min() < 0 or a.max() >= size:
        raise DimensionError(f"{name} has indices outside [0, {size}): min {a.min()}, max {a.max()}")
    if np.unique(a).size != a.size:
        raise DimensionError(f"{name} has repeated indices; a rectangle uses each row/column once "
                             f"(use np.unique({name}))")
    return a


def rectangle_sum(M, X, Y):
    """sum_{x in X, y in Y} M[x, y], exact (Python int) for integer matrices.

    ``X`` / ``Y`` are boolean masks or lists of distinct indices of rows / columns.

    Parameters
    ----------
    M : array_like
        A real p x q matrix (rows = Alice).
    X : array_like of int or bool
        Row set: indices into the rows of M, or a boolean mask.
    Y : array_like of int or bool
        Column set, likewise.

    Examples
    --------
    >>> H = sign_matrix("ip", 2)
    >>> rectangle_sum(H, [0, 1, 2, 3], [0])        # a column of ones
    4
    >>> rectangle_sum(H, [1, 3], [1, 3])           # IP(1,1) = IP(1,3) = IP(3,1) = 1, IP(3,3) = 0
    -2
    """
    A = _as_matrix2d(M)
    xs = _as_index_set(X, A.shape[0], "X")
    ys = _as_index_set(Y, A.shape[1], "Y")
    if xs.size == 0 or ys.size == 0:
        return 0
    sub = A[np.ix_(xs, ys)]
    if A.dtype.kind == "f":
        return float(sub.sum())
    if A.dtype.kind == "u" and A.dtype.itemsize == 8:
        return int(sum(int(v) for v in sub.ravel().tolist()))
    bound = max(abs(int(sub.max())), abs(int(sub.min()))) * sub.size
    if bound >= 1 << 63:
        return int(sum(int(v) for v in sub.ravel().tolist()))
    return int(sub.sum(dtype=np.int64))


def discrepancy(M, X, Y, *, exact: bool = False):
    """Discrepancy of the rectangle X x Y under the uniform measure on all p q entries:
    |sum_{X x Y} M| / (p q).

    ``exact=True`` returns a Fraction (integer matrices).

    Parameters
    ----------
    M : array_like
        A real p x q matrix (rows = Alice).
    X : array_like of int or bool
        Row set: indices into the rows of M, or a boolean mask.
    Y : array_like of int or bool
        Column set, likewise.
    exact : bool
        Return a Fraction (exact for integer matrices) instead of a float.

    Examples
    --------
    >>> H = sign_matrix("ip", 2)
    >>> discrepancy(H, [0, 1, 2, 3], [0], exact=True)
    Fraction(1, 4)
    """
    A = _as_matrix2d(M)
    s = rectangle_sum(A, X, Y)
    total = A.shape[0] * A.shape[1]
    if exact:
        if isinstance(s, float):
            raise TypeError("exact=True needs an integer matrix")
        return Fraction(abs(s), total)
    return abs(s) / total


def matrix_spectral_norm(M) -> float:
    """Largest singular value ||M||_2 (float64 LAPACK SVD; relative accuracy ~1e-15).

    Parameters
    ----------
    M : array_like
        A real p x q matrix (rows = Alice).

    Examples
    --------
    >>> round(matrix_spectral_norm(sign_matrix("ip", 4)), 9)    # ||H_{2^n}|| = 2^(n/2)
    4.0
    """
    from scipy.linalg import svdvals
    A = _as_matrix2d(M).astype(np.float64)
    return float(svdvals(A, check_finite=False)[0])


def numerical_rank(M, rtol: float = 1e-9) -> int:
    """Number of singular values sigma_i > rtol * sigma_max (THEORY.md pitfall 8).

    The tolerance is *relative* to the largest singular value (default 1e-9); a zero matrix
    has rank 0.  Exact rank is not computable in floating point; this is the stated convention.

    Parameters
    ----------
    M : array_like
        A real p x q matrix (rows = Alice).
    rtol : float
        Singular values above rtol * sigma_max count (default 1e-9).

    Examples
    --------
    >>> numerical_rank(sign_matrix("ip", 3))            # Hadamard matrices have full rank
    8
    >>> numerical_rank(np.ones((4, 5)))
    1
    """
    from scipy.linalg import svdvals
    if not (0 < rtol < 1):
        raise ValueError(f"rtol must lie in (0, 1), got {rtol}")
    A = _as_matrix2d(M).astype(np.float64)
    s = svdvals(A, check_finite=False)
    if s.size == 0 or s[0] == 0:
        return 0
    return int(np.count_nonzero(s > rtol * s[0]))


@dataclass(frozen=True, eq=False)
class DiscrepancySearch:
    """Best rectangle found by :func:`max_discrepancy_search`.

    Attributes
    ----------
    rows, cols : numpy.ndarray
        Sorted int64 indices of X and Y.
    rect_sum : int or float
        sum_{X x Y} M (exact for integer matrices).
    discrepancy : float
        |rect_sum| / (p q).
    lindsey_bound : float
        sqrt(|X| |Y|) ||M||_2 (= sqrt(|X| |Y| 2^n) for the Hadamard matrix).
    ratio : float
        |rect_sum| / lindsey_bound (<= 1 by Lindsey's lemma).
    n_starts : int
    history : list of float
        Best |rect_sum| after each start.
    """

    rows: np.ndarray
    cols: np.ndarray
    rect_sum: object
    discrepancy: float
    lindsey_bound: float
    ratio: float
    n_starts: int
    history: list = field(default_factory=list)


def max_discrepancy_search(M, *, n_starts: int = 16, max_iter: int = 100, seed=0,
                           progress: bool = False) -> DiscrepancySearch:
    """Adversarial search for a rectangle X x Y with large |sum_{X x Y} M|.

    Alternating best responses from random starts: given Y, the X maximising the signed sum is
    {x : (M 1_Y)_x > 0}; given X, Y = {y : (1_X^T M)_y > 0}.  Each step never decreases the
    sum, so each start ends in a local optimum; starts alternate between maximising the sum of
    M and of -M.  Reports the best rectangle and its ratio to Lindsey's bound
    sqrt(|X||Y|) ||M||_2.

    Parameters
    ----------
    M : 2-D array (typically a +-1 sign matrix)
    n_starts, max_iter : int
    seed : int, Generator or None
    progress : bool

    Examples
    --------
    >>> r = max_discrepancy_search(sign_matrix("ip", 3), n_starts=4, seed=0)
    >>> bool(r.ratio <= 1 + 1e-12), r.n_starts
    (True, 4)
    """
    A = _as_matrix2d(M)
    if isinstance(n_starts, bool) or not isinstance(n_starts, int) or n_starts < 1:
        raise ValueError(f"n_starts must be a positive int, got {n_starts!r}")
    if isinstance(max_iter, bool) or not isinstance(max_iter, int) or max_iter < 1:
        raise ValueError(f"max_iter must be a positive int, got {max_iter!r}")
    p, q = A.shape
    if A.dtype.kind != "f":
        bound = max(abs(int(A.max())), abs(int(A.min()))) * p * q
        if bound >= 1 << 53:
            raise InvalidCircuitError(f"M's entries are too large for an exact float64 search "
                                      f"(max|M| p q = {bound} >= 2^53); scale M down")
    F = A.astype(np.float64)
    rng = as_rng(seed)
    best = (-1.0, None, None)
    history = []
    with progress_bar(n_starts, enabled=progress, desc="rectangle search") as bar:
        for s in range(n_starts):
            sgn = 1.0 if s % 2 == 0 else -1.0
            y = rng.random(q) < 0.5
            if not y.any():
                y[rng.integers(q)] = True
            cur = -np.inf
            x = np.zeros(p, dtype=bool)
            for _ in range(max_iter):
                r = sgn * (F @ y.astype(np.float64))
                x = r > 0
                if not x.any():
                    x[int(np.argmax(r))] = True
                c = sgn * (x.astype(np.float64) @ F)
                y_new = c > 0
                if not y_new.any():
                    y_new[int(np.argmax(c))] = True
                val = float(c[y_new].sum())
                if val <= cur:
                    break
                cur, y = val, y_new
            if abs(cur) > best[0]:
                best = (abs(cur), np.flatnonzero(x), np.flatnonzero(y))
            history.append(best[0])
            bar.update(1)
    _, rows, cols = best
    rs = rectangle_sum(A, rows, cols)
    lind = float(np.sqrt(rows.size * cols.size)) * matrix_spectral_norm(F)
    return DiscrepancySearch(rows=rows, cols=cols, rect_sum=rs, discrepancy=abs(rs) / (p * q),
                             lindsey_bound=lind, ratio=abs(rs) / lind if lind > 0 else 0.0,
                             n_starts=n_starts, history=history)


#: ``circuits.analysis.communication.spectral_norm`` is the matrix 2-norm (exported from the package as
#: ``matrix_spectral_norm`` to keep it apart from the Fourier L1 norm ``circuits.analysis.spectral_norm``).
spectral_norm = matrix_spectral_norm
