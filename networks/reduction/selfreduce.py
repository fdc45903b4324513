"""Step 3 (THEORY §4.3–4.4): the XOR-shift self-reduction with the character twist.

For a value matrix V[a, b] = Ñ(x_{a,b}) = 1 - 2N(x_{a,b}) (rows = Alice) and shifts (r, s),

    T_{r,s}(a, b) = χ_s(a) χ_r(b) (-1)^{<r,s>} V[a ⊕ r, b ⊕ s],

and by the twist identity IP(a⊕r, b⊕s) = IP ⊕ <a,s> ⊕ <r,b> ⊕ <r,s> the average over uniform
(r, s) is ρ·H(a, b) with ρ = E_μ[H Ñ] — one margin for every input.  M_k averages k random
shifts; its margin min_{a,b} H·M_k is computed exactly over all 4^n pairs by a numba kernel that
also returns the margin of every prefix length (the least k that works, in one pass).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from circuits.utils.errors import DimensionError, ReductionError
from circuits.functions import inner_product_mod2
from circuits.hypercube import as_matrix
from circuits.utils.rng import as_rng
from circuits.utils.validation import check_real
from networks.reduction._common import frozen

__all__ = ["SelfReduction", "self_reduce", "twisted_sums", "exact_shift_average", "hoeffding_k",
           "ip_sign_matrix", "twist_sign", "synthetic_approximator", "random_shifts",
           "shifted_network", "value_matrix", "numerical_rank"]

#: Rows per chunk when the margin computation is split for run_chunks.
ROWS_PER_CHUNK = 64


def ip_sign_matrix(n: int) -> np.ndarray:
    """H[a, b] = (-1)^{IP(a, b)} as float64 (2^n, 2^n), rows = Alice.

    >>> ip_sign_matrix(1).tolist()
    [[1.0, 1.0], [1.0, -1.0]]
    """
    return np.ascontiguousarray(as_matrix(1.0 - 2.0 * inner_product_mod2(n), n))


def twist_sign(a, b, r, s):
    """χ_s(a) χ_r(b) (-1)^{<r,s>} = (-1)^{<a,s> + <r,b> + <r,s>} for integer arrays (int8 ±1).

    Together with the twist identity, H(a, b) = twist_sign(a, b, r, s) · H(a ⊕ r, b ⊕ s).

    >>> twist_sign(1, 0, 0, 1).tolist()          # <a, s> = 1
    -1
    """
    a, b, r, s = (np.asarray(v, dtype=np.int64) for v in (a, b, r, s))
    par = _parity(a & s) ^ _parity(r & b) ^ _parity(r & s)
    return (1 - 2 * par).astype(np.int8)


def _parity(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.uint64)
    return (np.bitwise_count(x) & 1).astype(np.int64)


def value_matrix(values, n: int) -> np.ndarray:
    """V[a, b] from values in cube order k = a + 2^n b (validated), C-contiguous float64."""
    v = np.asarray(values, dtype=np.float64)
    if v.ndim == 2:
        if v.shape != (1 << n, 1 << n):
            raise DimensionError(f"V must have shape (2^{n}, 2^{n}) = {(1 << n, 1 << n)}, got "
                                 f"{v.shape}")
        mat = v
    else:
        mat = as_matrix(v, n)
    if not np.isfinite(mat).all():
        raise ReductionError("V contains NaN or infinity; check the network's outputs")
    return np.ascontiguousarray(mat)


def _check_V(V) -> tuple[np.ndarray, int]:
    V = np.asarray(V, dtype=np.float64)
    if V.ndim != 2 or V.shape[0] != V.shape[1] or V.shape[0] & (V.shape[0] - 1) or V.shape[0] < 2:
        raise DimensionError(f"V must be a square (2^n, 2^n) matrix V[a, b] (rows = Alice), got "
                             f"shape {V.shape}; use value_matrix(values, n) for cube-order values")
    if not np.isfinite(V).all():
        raise ReductionError("V contains NaN or infinity; check the network's outputs")
    n = int(V.shape[0]).bit_length() - 1
    return np.ascontiguousarray(V), n


def random_shifts(n: int, k: int, *, seed=0) -> np.ndarray:
    """k i.i.d. uniform shifts (r, s) in F_2^n x F_2^n as int64 (k, 2)."""
    rng = as_rng(seed)
    return rng.integers(0, 1 << n, size=(int(k), 2), dtype=np.int64)


def _check_shifts(shifts, n: int) -> np.ndarray:
    sh = np.asarray(shifts)
    if sh.ndim != 2 or sh.shape[1] != 2:
        raise DimensionError(f"shifts must have shape (k, 2) (columns r, s), got {sh.shape}")
    if sh.shape[0] == 0:
        raise ReductionError("k = 0 shifts: the self-reduction needs k >= 1 copies")
    if not np.issubdtype(sh.dtype, np.integer) or sh.min() < 0 or sh.max() >= (1 << n):
        raise DimensionError(f"shifts must be integers in [0, 2^{n}), got min {sh.min()} max "
                             f"{sh.max()}")
    return np.ascontiguousarray(sh, dtype=np.int64)


class _Chunk:
    """Picklable chunk function for circuits.utils.parallel.run_chunks: rows [start, stop)."""

    def __init__(self, V, shifts, n):
        self.V, self.shifts, self.n = V, shifts, n

    def __call__(self, start, stop):
        from networks import _kernels

        G, prefix = _kernels._twisted_sums(self.V, self.shifts, self.n, start, stop, 1)
        return {start: (G, prefix[0])}


def _merge(acc: dict, part: dict) -> dict:
    out = dict(acc)
    out.update(part)
    return out


def twisted_sums(V, shifts, *, client=None, executor=None, progress: bool = False):
    """(G, prefix_margins): G = H ⊙ sum_j T_j (so M_k = H ⊙ G / k) and the margin of M_t for t = 1..k.

    Parameters
    ----------
    V : float64 (2^n, 2^n)
        V[a, b], rows = Alice.
    shifts : int (k, 2)
        Rows (r, s).
    client, executor : optional
        Passed to :func:`circuits.utils.parallel.run_chunks` (rows split into chunks); default: one
        call of the parallel numba kernel.
    """
    from networks import _kernels

    V, n = _check_V(V)
    sh = _check_shifts(shifts, n)
    size = 1 << n
    if client is None and executor is None and not progress:
        import numba

        blocks = min(size, 4 * numba.get_num_threads())      # prefix table is blocks x k
        from circuits.utils.parallel import deferred_sigint
        with deferred_sigint():  # a tuple of arrays must not be boxed under a pending Ctrl-C
            G, prefix = _kernels._twisted_sums(V, sh, n, 0, size, blocks)
        return G, prefix.min(axis=0)
    from circuits.utils.parallel import run_chunks

    parts = run_chunks(_Chunk(V, sh, n), size, combine=_merge, initial={}, executor=executor,
                       client=client, chunk_size=min(size, ROWS_PER_CHUNK), progress=progress,
                       desc="twisted shift sums")
    starts = sorted(parts)
    G = np.concatenate([parts[s][0] for s in starts], axis=0)
    prefix = np.min(np.stack([parts[s][1] for s in starts]), axis=0)
    return G, prefix


def exact_shift_average(V) -> np.ndarray:
    """The exact average of T_{r,s} over all 4^n shifts (equals ρ·H, THEORY §4.3); n <= 7."""
    V, n = _check_V(V)
    if n > 7:
        raise DimensionError(f"the exact average over all 4^n shifts costs 16^n; n = {n} > 7")
    grid = np.arange(1 << (2 * n), dtype=np.int64)
    shifts = np.stack([grid & ((1 << n) - 1), grid >> n], axis=1)
    G, _ = twisted_sums(V, shifts)
    return ip_sign_matrix(n) * G / shifts.shape[0]


def hoeffding_k(M: float, rho: float, n: int, *, delta: float = 0.5) -> int:
    """k = ⌈(32 M²/ρ²)(2n ln 2 + ln(2/δ))⌉ (THEORY §4.4): w.p. >= 1 - δ, H·M_k >= 3ρ/4 everywhere.

    >>> hoeffding_k(1.0, 1.0, 1)            # 32·(2 ln 2 + ln 4) = 88.7
    89
    """
    M = check_real(M, minimum=0, name="M")
    rho = check_real(rho, minimum=0, name="rho")
    delta = check_real(delta, minimum=0, name="delta")
    if delta >= 1:
        raise ReductionError(f"delta is a failure probability in (0, 1), got {delta}")
    return int(math.ceil((32.0 * M * M / (rho * rho)) * (2 * n * math.log(2) + math.log(2 / delta))))


def numerical_rank(A, *, rtol: float = 1e-9) -> int:
    """Number of singular values > rtol·σ_max (pitfall 8)."""
    s = np.linalg.svd(np.asarray(A, dtype=np.float64), compute_uv=False)
    if s.size == 0 or s[0] == 0:
        return 0
    return int((s > rtol * s[0]).sum())


@dataclass(frozen=True, eq=False)
class SelfReduction:
    """M_k and its exact margins over all 4^n pairs.

    Attributes
    ----------
    n, k : int
    shifts : int64 (k, 2)
        The shift sequence (r_j, s_j).
    M : float64 (2^n, 2^n)
        M_k[a, b] (rows = Alice).
    prefix_margins : float64 (k,)
        min_{a,b} H·M_t for t = 1..k (same shift sequence).
    rho : float
        ρ = E[H V] of the input matrix.
    M_emp : float
        max |V|.
    """

    n: int
    k: int
    shifts: np.ndarray = field(repr=False)
    M: np.ndarray = field(repr=False)
    prefix_margins: np.ndarray = field(repr=False)
    rho: float
    M_emp: float
    margin_before: float
    seconds: float
    steps: tuple = ()

    @property
    def margins(self) -> np.ndarray:
        """H·M_k for every pair (2^n, 2^n)."""
        return ip_sign_matrix(self.n) * self.M

    @property
    def min_margin(self) -> float:
        return float(self.prefix_margins[-1])

    @property
    def worst_pair(self) -> tuple[int, int]:
        """(a, b) with the smallest margin H·M_k."""
        idx = int(np.argmin(self.margins))
        return divmod(idx, 1 << self.n)

    @property
    def n_sign_errors(self) -> int:
        """#{(a, b): sign(M_k) != H} over all 4^n pairs (M_k = 0 counts as an error)."""
        return int((self.margins <= 0).sum())

    @property
    def sign_agrees_everywhere(self) -> bool:
        return self.n_sign_errors == 0

    @property
    def least_k(self) -> "int | None":
        """Smallest t with min H·M_t > 0 (None if no prefix works)."""
        ok = np.flatnonzero(self.prefix_margins > 0)
        return int(ok[0]) + 1 if ok.size else None

    @property
    def stable_k(self) -> "int | None":
        """Smallest t such that every prefix length >= t has a positive margin."""
        bad = np.flatnonzero(self.prefix_margins <= 0)
        if bad.size == 0:
            return 1
        return int(bad[-1]) + 2 if bad[-1] + 1 < self.k else None

    def hoeffding(self, *, delta: float = 0.5, M: "float | None" = None) -> int:
        """Hoeffding + union-bound k for this V (M_emp unless M is given)."""
        return hoeffding_k(self.M_emp if M is None else M, self.rho, self.n, delta=delta)

    def summary(self) -> str:
        return "\n".join(self.steps)

    def to_dict(self) -> dict:
        a, b = self.worst_pair
        return {"n": self.n, "k": self.k, "rho": self.rho, "M_emp": self.M_emp,
                "margin_before": self.margin_before, "min_margin": self.min_margin,
                "worst_pair": {"a": a, "b": b}, "n_sign_errors": self.n_sign_errors,
                "sign_agrees_everywhere": self.sign_agrees_everywhere,
                "least_k": self.least_k, "stable_k": self.stable_k,
                "seconds": self.seconds, "steps": list(self.steps)}


def self_reduce(V, *, k: "int | None" = None, shifts=None, seed=0, delta: float = 0.5,
                k_max: "int | None" = None, client=None, executor=None,
                progress: bool = False) -> SelfReduction:
    """Average k twisted XOR shifts of V and compute the margin exactly over all 4^n pairs.

    Parameters
    ----------
    V : array (2^n, 2^n)
        V[a, b] = Ñ(x_{a,b}) (rows = Alice); see :func:`value_matrix`.
    k : int, optional
        Number of copies; default the Hoeffding + union-bound k with M_emp = max|V|
        (THEORY §4.4, pitfall 9).
    shifts : int (k, 2), optional
        Explicit shifts (r_j, s_j) instead of random ones.
    seed : int, Generator or None
        For the random shifts.
    delta : float
        Failure probability used by the default k.
    k_max : int, optional
        Cap on the default k (the margins of all prefixes are exact anyway; the certificate then
        omits the Hoeffding link).
    client, executor : optional
        Split the computation with :func:`circuits.utils.parallel.run_chunks`.
    progress : bool
        Progress bar (implies chunked execution).

    Returns
    -------
    SelfReduction

    Raises
    ------
    ReductionError
        k = 0 / k < 1, default k requested while ρ <= 0, NaN in V.
    DimensionError
        V not square with power-of-two side; bad shifts.

    Examples
    --------
    >>> H = ip_sign_matrix(2)
    >>> red = self_reduce(0.5 * H, k=3, seed=0)        # V = ρH: every copy has margin ρ
    >>> round(red.min_margin, 12), red.sign_agrees_everywhere
    (0.5, True)
    """
    V, n = _check_V(V)
    H = ip_sign_matrix(n)
    rho = float(np.mean(H * V))
    M_emp = float(np.abs(V).max())
    if shifts is None:
        if k is None:
            if rho <= 0:
                raise ReductionError(f"ρ = E[H V] = {rho:.4g} <= 0: no k makes sign(M_k) = H; "
                                     f"pass k= explicitly to inspect M_k anyway")
            k = hoeffding_k(M_emp, rho, n, delta=delta)
            if k_max is not None:
                k = min(k, int(k_max))
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
            raise TypeError(f"k must be an int, got {type(k).__name__}")
        if k < 1:
            raise ReductionError(f"k must be >= 1 copies, got k = {k}")
        shifts = random_shifts(n, int(k), seed=seed)
    sh = _check_shifts(shifts, n)
    t0 = time.perf_counter()
    G, prefix = twisted_sums(V, sh, client=client, executor=executor, progress=progress)
    seconds = time.perf_counter() - t0
    kk = sh.shape[0]
    M = H * G / kk
    before = float((H * V).min())
    red = SelfReduction(n=n, k=kk, shifts=frozen(sh, np.int64), M=frozen(M, np.float64),
                        prefix_margins=frozen(prefix, np.float64), rho=rho, M_emp=M_emp,
                        margin_before=before, seconds=seconds)
    a, b = red.worst_pair
    lines = (
        f"self-reduction (THEORY §4.3): k = {kk} twisted XOR shifts over all {4 ** n} pairs "
        f"({seconds:.3f} s)",
        f"  ρ = E[H·V] = {rho:.4g}, M_emp = max|V| = {M_emp:.4g}; margin min H·V = {before:.4g} -> "
        f"min H·M_k = {red.min_margin:.4g} at (a, b) = ({a}, {b})",
        f"  sign(M_k) = H on {4 ** n - red.n_sign_errors}/{4 ** n} pairs; least k with a positive "
        f"margin = {red.least_k}, positive for all k >= {red.stable_k}",
    )
    object.__setattr__(red, "steps", lines)
    return red


def synthetic_approximator(n: int, *, noise: float = 0.35, flip: float = 0.12, seed=0) -> np.ndarray:
    """The §4.4 test approximator: V = 1 - 2g, g = IP + noise·N(0,1), a fraction ``flip`` of
    entries replaced by 1 - IP.  Returns V[a, b] (rows = Alice).
    """
    rng = as_rng(seed)
    ip = as_matrix(inner_product_mod2(n), n).astype(np.float64)
    g = ip + noise * rng.standard_normal(ip.shape)
    mask = rng.random(ip.shape) < flip
    g[mask] = 1.0 - ip[mask]
    return np.ascontiguousarray(1.0 - 2.0 * g)


def shifted_network(network, instance, r: int, s: int):
    """N∘R_{r,s}: the depth-2 network with hidden weights w_i ↦ R_{r,s} w_i (THEORY §4.3).

    Its value at x_{a,b} equals N(x_{a⊕r, b⊕s}) because R_{r,s} x_{a,b} = x_{a⊕r,b⊕s} and
    R_{r,s} is a symmetric ±1 diagonal.
    """
    from networks.reduction._common import depth2_parts

    parts = depth2_parts(network, dim=instance.dim)
    flip = np.asarray(instance.shift_signs(r, s), dtype=np.float64)
    from networks.sigma import DenseLayer, SigmaNetwork

    return SigmaNetwork([DenseLayer(parts.W * flip[None, :], parts.b),
                         DenseLayer(parts.u[None, :], [parts.u0])], activation=parts.activation)

