"""Step 3 (THEORY §4.3–4.4): the XOR-shift self-reduction with the character twist.

For a value matrix V[a, b] = Ñ(x_{a,b}) = 1 - 2N(x_{a,b}) (rows = Alice) and shifts (r, s),

    T_{r,s}(a, b) = χ_s(a) χ_r(b) (-1)^{<r,s>} V[a ⊕ r, b ⊕ s],

and by the twist identity IP(a⊕r, b⊕s) = IP ⊕ <a,s> ⊕ <r,b> ⊕ <r,s> the average over uniform
(r, s) is ρ·H(a, b) with ρ = E_μ[H Ñ] — one margin for every input.  M_k averages k random
shifts; its margin min_{a,b} H·M_k is computed exactly over all 4^n pairs by a numba kernel that
also returns the margin of every prefix length (the least k that works, in one pass); for larger k
the margins come from the FWHT convolution of :mod:`networks.reduction.fwht` (THEORY §4.8).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from circuits.utils.errors import DimensionError, ReductionError
from circuits.functions import inner_product_mod2
from circuits.hypercube import as_matrix
from circuits.utils.rng import as_rng
from networks.reduction._common import frozen
from networks.reduction.concentration import bernstein_k, hoeffding_k
from networks.reduction.fwht import LeastK, ShiftConvolution, ShiftSequence, least_working_k
from networks.reduction.twisted import (ROWS_PER_CHUNK, _Chunk, _check_shifts,  # noqa: F401
                                        _check_V, _merge, twisted_sums)
from networks.reduction.product import check_table_memory, ip_signs

__all__ = ["SelfReduction", "self_reduce", "twisted_sums", "exact_shift_average", "twist_sign",
           "synthetic_approximator", "random_shifts", "shifted_network", "value_matrix"]

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


def random_shifts(n: int, k: int, *, seed=0) -> np.ndarray:
    """k i.i.d. uniform shifts (r, s) in F_2^n x F_2^n as int64 (k, 2): the first k rows of
    :class:`networks.reduction.fwht.ShiftSequence` for an integer seed (so every prefix used by
    :func:`self_reduce` is the same sequence), else drawn from the Generator."""
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        return ShiftSequence(n, seed=int(seed), length=int(k)).rows(0, int(k))
    rng = as_rng(seed)
    return rng.integers(0, 1 << n, size=(int(k), 2), dtype=np.int64)


def exact_shift_average(V) -> np.ndarray:
    """The exact average of T_{r,s} over all 4^n shifts (equals ρ·H, THEORY §4.3); n <= 7."""
    V, n = _check_V(V)
    if n > 7:
        raise DimensionError(f"the exact average over all 4^n shifts costs 16^n; n = {n} > 7")
    grid = np.arange(1 << (2 * n), dtype=np.int64)
    shifts = np.stack([grid & ((1 << n) - 1), grid >> n], axis=1)
    G, _ = twisted_sums(V, shifts)
    return ip_signs(n) * G / shifts.shape[0]


#: Longest prefix examined by the least-k search by default (streamed, never stored).
SEARCH_MAX = 1 << 30

from circuits.utils.slicing import DEFAULT as _DEFAULT  # noqa: E402  (max_seconds sentinel)

#: M_k keeps its explicit shift list only up to this k (beyond, regenerate from the sequence).
KEEP_SHIFTS = 1 << 16


@dataclass(frozen=True, eq=False)
class SelfReduction:
    """M_k and its exact margins over all 4^n pairs, the copy bounds and the least working k.

    Attributes
    ----------
    n, k : int
        k = the number of copies used (``k_rule`` says how it was chosen).
    sequence : ShiftSequence
        The shift sequence; M_k uses its first k rows (``shifts`` lists them for k <= 2^16).
    M : float64 (2^n, 2^n)
        M_k[a, b] (rows = Alice).
    rho, M_emp, variance : float
        ρ = E[H V], max |V| and σ² = Var(H·V) of the input table.
    least : LeastK
        The least k with min H·M_k > 0 on the same sequence, and how it was found.
    hoeffding_k, bernstein_k : int
        Copies for min H·M_k >= 3ρ/4 w.p. >= 1 - δ (THEORY §4.4 / §4.8), with M_emp.
    hoeffding_k_positive, bernstein_k_positive : int
        The same bounds for margin > 0 only (what the least working k measures).
    """

    n: int
    k: int
    k_rule: str
    delta: float
    sequence: ShiftSequence = field(repr=False)
    M: np.ndarray = field(repr=False)
    rho: float
    M_emp: float
    variance: float
    margin_before: float
    min_margin: float
    n_sign_errors: int
    worst_pair: tuple
    least: LeastK = field(repr=False)
    hoeffding_k: "int | None"
    bernstein_k: "int | None"
    hoeffding_k_positive: "int | None"
    bernstein_k_positive: "int | None"
    seconds: float
    steps: tuple = ()

    @property
    def shifts(self) -> np.ndarray:
        """The k shifts (r_j, s_j) of M_k as int64 (k, 2) (regenerated; k <= KEEP_SHIFTS)."""
        if self.k > KEEP_SHIFTS:
            raise ReductionError(f"k = {self.k} shifts are not listed (> {KEEP_SHIFTS}); use "
                                 f".sequence.rows(start, stop) for a range")
        return self.sequence.rows(0, self.k)

    @property
    def margins(self) -> np.ndarray:
        """H·M_k for every pair (2^n, 2^n)."""
        return ip_signs(self.n) * self.M

    @property
    def prefix_margins(self) -> np.ndarray:
        """min H·M_t for t = 1..min(k, k_direct) (the exact prefix scan of the same sequence;
        ``prefix_margins[-1]`` is the margin of M_k whenever k <= k_direct)."""
        return self.least.direct_margins[:self.k]

    @property
    def sign_agrees_everywhere(self) -> bool:
        return self.n_sign_errors == 0

    @property
    def least_k(self) -> "int | None":
        """Least k with min H·M_k > 0 on this shift sequence (see ``least.method``)."""
        return self.least.k

    def summary(self) -> str:
        return "\n".join(self.steps)

    def to_dict(self) -> dict:
        a, b = self.worst_pair
        return {"n": self.n, "k": self.k, "k_rule": self.k_rule, "delta": self.delta,
                "rho": self.rho, "M_emp": self.M_emp, "variance": self.variance,
                "margin_before": self.margin_before, "min_margin": self.min_margin,
                "worst_pair": {"a": a, "b": b}, "n_sign_errors": self.n_sign_errors,
                "sign_agrees_everywhere": self.sign_agrees_everywhere,
                "least_k": self.least_k, "least_k_search": self.least.to_dict(),
                "hoeffding_k": self.hoeffding_k, "bernstein_k": self.bernstein_k,
                "hoeffding_k_positive": self.hoeffding_k_positive,
                "bernstein_k_positive": self.bernstein_k_positive,
                "seconds": self.seconds, "steps": list(self.steps)}


def _copy_bounds(rho, M_emp, variance, n, delta):
    if rho <= 0:
        return None, None, None, None
    return (hoeffding_k(M_emp, rho, n, delta=delta), bernstein_k(variance, M_emp, rho, n, delta=delta),
            hoeffding_k(M_emp, rho, n, delta=delta, target=0.0),
            bernstein_k(variance, M_emp, rho, n, delta=delta, target=0.0))


def _choose_k(k, k_rule, bounds, rho, k_max):
    if k is None:
        if rho <= 0:
            raise ReductionError(f"ρ = E[H V] = {rho:.4g} <= 0: no k makes sign(M_k) = H; "
                                 f"pass k= explicitly to inspect M_k anyway")
        if k_rule not in ("bernstein", "hoeffding"):
            raise ReductionError(f"k_rule must be 'bernstein' or 'hoeffding', got {k_rule!r}")
        k = bounds[1] if k_rule == "bernstein" else bounds[0]
        if k_max is not None:
            k = min(k, int(k_max))
        return int(k), k_rule + (f" (capped at k_max = {k_max})" if k_max is not None
                                 and k == int(k_max) else "")
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise TypeError(f"k must be an int, got {type(k).__name__}")
    if k < 1:
        raise ReductionError(f"k must be >= 1 copies, got k = {k}")
    return int(k), "given"


def _sequence(shifts, k, k_rule, bounds, rho, k_max, search_max, seed, n):
    """The shift sequence (explicit or streamed from ``seed``), the k used and its rule."""
    if shifts is not None:
        arr = _check_shifts(shifts, n)
        k, rule = _choose_k(arr.shape[0] if k is None else k, k_rule, bounds, rho, k_max)
        if k > arr.shape[0]:
            raise ReductionError(f"k = {k} exceeds the {arr.shape[0]} shifts given")
        return ShiftSequence.of(arr, n), k, rule
    k, rule = _choose_k(k, k_rule, bounds, rho, k_max)
    cap = search_max if search_max is not None else min(
        SEARCH_MAX, max(k, 4 * (bounds[3] or 0), 256))
    length = max(k, int(cap))
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool):
        return ShiftSequence.of(random_shifts(n, length, seed=seed), n), k, rule
    return ShiftSequence(n, seed=int(seed), length=length), k, rule


def _check_stream_time(seq, k: int, max_seconds) -> None:
    """Estimate-and-refuse for the streamed shift sequence (``len(seq)`` shifts at worst: k and
    the least-k search), measured on its first 2·BLOCK shifts."""
    from circuits.utils.errors import RunTooLongError
    from circuits.utils.slicing import MAX_SECONDS_ENV, format_seconds, resolve_max_seconds
    from networks.reduction.fwht import BLOCK

    limit = resolve_max_seconds(max_seconds)
    total = len(seq)
    if limit is None or seq._array is not None or total <= 8 * BLOCK:
        return
    t0 = time.perf_counter()
    seq.histogram(2 * BLOCK)
    rate = 2 * BLOCK / max(time.perf_counter() - t0, 1e-9)
    estimate = total / rate
    if estimate > limit:
        raise RunTooLongError(
            f"the self-reduction would stream {total:,} shifts (k = {k:,} copies and the "
            f"least-k search) in about {format_seconds(estimate)} here (measured {rate:.3g} "
            f"shifts/s on the first {2 * BLOCK:,}), above the limit max_seconds={limit:g}. "
            f"Ways forward: a smaller k (--k; the least working k is usually far below the "
            f"Bernstein k), a larger max_seconds= (None to run anyway), or the environment "
            f"variable {MAX_SECONDS_ENV}", estimate_seconds=estimate, max_seconds=limit,
            n_items=total, rate=rate)


def self_reduce(V, *, k: "int | None" = None, shifts=None, seed=0, delta: float = 0.5,
                k_rule: str = "bernstein", k_max: "int | None" = None,
                search_max: "int | None" = None, client=None, executor=None,
                progress: bool = False, max_seconds=_DEFAULT) -> SelfReduction:
    """Average k twisted XOR shifts of V and compute the margin exactly over all 4^n pairs.

    Parameters
    ----------
    V : array (2^n, 2^n)
        V[a, b] = Ñ(x_{a,b}) (rows = Alice); see :func:`value_matrix`.
    k : int, optional
        Number of copies; default the Bernstein k (``k_rule="bernstein"``, THEORY §4.8) or the
        Hoeffding k (``"hoeffding"``, §4.4) for min H·M_k >= 3ρ/4 w.p. >= 1 - δ, with
        M_emp = max|V| and σ² = Var(H·V) measured on the table.
    shifts : int (K, 2), optional
        An explicit shift sequence (r_j, s_j); M_k uses its first k rows (all if k is None).
    seed : int, Generator or None
        For the random shifts.
    delta : float
        Failure probability of the copy bounds.
    k_max : int, optional
        Cap on the default k.
    search_max : int, optional
        Longest prefix examined by the least-k search (default max(k, 4·Bernstein k for
        margin > 0, 256), at most SEARCH_MAX).
    client, executor : optional
        Split the direct prefix scan with :func:`circuits.utils.parallel.run_chunks`.
    progress : bool
        Progress bar (implies chunked execution of the direct scan).
    max_seconds : float or None
        Limit on the estimated time of streaming the shift sequence (k copies and the least-k
        search beyond them); default ``$DEPTHSEP_MAX_SECONDS`` or 600 s, as the exhaustive
        kernels.  The rate is measured on the first 2^21 shifts before the rest is drawn.

    Returns
    -------
    SelfReduction

    Raises
    ------
    ReductionError
        k < 1, default k requested while ρ <= 0, NaN in V.
    RunTooLongError
        Streaming the shifts would take longer than ``max_seconds`` (e.g. k = 10^11).
    DimensionError
        V not square with power-of-two side; bad shifts.

    Examples
    --------
    >>> from networks.reduction import ip_signs
    >>> red = self_reduce(0.5 * ip_signs(2), k=3, seed=0)   # V = ρH: every copy has margin ρ
    >>> round(red.min_margin, 12), red.sign_agrees_everywhere, red.least_k
    (0.5, True, 1)
    """
    V, n = _check_V(V)
    check_table_memory(n, tables=5, what="self-reduction (U, its transform, a work table, M_k)")
    H = ip_signs(n)
    U = H * V
    rho = float(np.mean(U))
    M_emp = float(np.abs(V).max())
    variance = max(float(np.mean(U * U)) - rho * rho, 0.0)
    bounds = _copy_bounds(rho, M_emp, variance, n, delta)
    t0 = time.perf_counter()
    seq, k, rule = _sequence(shifts, k, k_rule, bounds, rho, k_max, search_max, seed, n)
    _check_stream_time(seq, k, max_seconds)
    conv = ShiftConvolution(U)
    least = least_working_k(V, seq, conv=conv, client=client, executor=executor,
                            progress=progress)
    margins = conv.table_of_histogram(seq.histogram(k), k)
    seconds = time.perf_counter() - t0
    idx = int(np.argmin(margins))
    red = SelfReduction(
        n=n, k=k, k_rule=rule, delta=float(delta), sequence=seq,
        M=frozen(H * margins, np.float64), rho=rho, M_emp=M_emp, variance=variance,
        margin_before=float(U.min()), min_margin=float(margins.flat[idx]),
        n_sign_errors=int((margins <= 0).sum()), worst_pair=divmod(idx, 1 << n), least=least,
        hoeffding_k=bounds[0], bernstein_k=bounds[1], hoeffding_k_positive=bounds[2],
        bernstein_k_positive=bounds[3], seconds=seconds)
    object.__setattr__(red, "steps", _steps(red))
    return red


def _steps(red: SelfReduction) -> tuple:
    a, b = red.worst_pair
    size = 4 ** red.n
    lk = red.least
    how = {"prefix scan": f"exact scan of every k <= {lk.k_direct}",
           "doubling + prefix scan": "FWHT doubling, then an exact scan of every prefix up to "
                                     "the first working one",
           "doubling + bisection": f"no k <= {lk.k_direct} works (exact scan); FWHT doubling + "
                                   f"bisection: margin(k-1) <= 0 < margin(k)",
           "none": f"no working prefix up to k = {lk.k_searched}"}[lk.method]
    return (
        f"self-reduction (THEORY §4.3, §4.8): M_k = average of k = {red.k} copies ({red.k_rule}), "
        f"each the network at a shifted input multiplied by parities χ_s(a)χ_r(b)(-1)^<r,s> of "
        f"the input bits (not itself a network of width k·w); all {size} pairs by FWHT "
        f"({red.seconds:.3f} s)",
        f"  ρ = E[H·V] = {red.rho:.4g}, σ² = Var(H·V) = {red.variance:.4g}, M_emp = max|V| = "
        f"{red.M_emp:.4g}; margin min H·V = {red.margin_before:.4g} -> min H·M_k = "
        f"{red.min_margin:.4g} at (a, b) = ({a}, {b})",
        f"  copies for H·M_k >= 3ρ/4 w.p. >= 1-δ (δ = {red.delta:g}): Hoeffding {red.hoeffding_k}, "
        f"Bernstein {red.bernstein_k}; for margin > 0: Hoeffding {red.hoeffding_k_positive}, "
        f"Bernstein {red.bernstein_k_positive}",
        f"  sign(M_k) = H on {size - red.n_sign_errors}/{size} pairs; least working k = "
        f"{red.least_k} ({how})",
    )


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

