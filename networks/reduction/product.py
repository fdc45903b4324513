"""The product form of the hard instance's support (THEORY §4.8): value tables in O(w·4^n).

The support of μ₀ is the product set {x_{a,b} = (x^A(a), x^B(b))}, so every first-layer
pre-activation of a depth-2 network is α_i(a) + β_i(b) + b_i with α = X_A W_Aᵀ (2^n × w) and
β = X_B W_Bᵀ (2^n × w).  :func:`value_table` evaluates the network on all 4^n points from α and β
(a numba kernel, never the 4^n × d input array), and :func:`support_metrics` gives the exact MSE,
ρ = E_μ₀[H·Ñ] and accuracy with compensated sums.

Examples
--------
>>> from embeddings import HardInstance
>>> from networks import SigmaNetwork
>>> inst = HardInstance(3, seed=0)
>>> net = SigmaNetwork.random([inst.dim, 8, 1], "relu", seed=1)
>>> V = value_table(net, inst)
>>> V.shape, bool(np.allclose(V.T.reshape(-1), net(inst.support().points), atol=1e-12))
((8, 8), True)
"""

from __future__ import annotations

import math
import os
import weakref
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from circuits.analysis import sign_matrix
from circuits.utils.errors import DimensionError, ReductionError
from embeddings import HardInstance
from networks.reduction._common import Depth2Parts, depth2_parts, frozen
from networks.reduction import _kernels

__all__ = ["ProductSupport", "product_support", "ip_signs", "value_table", "SupportMetrics",
           "support_metrics", "check_table_memory", "chain_table", "staircase_table",
           "Depth3Parts", "depth3_parts", "depth3_pass"]

#: Largest n for which the (2^n, 2^n) tables are built (n = 13: 512 MiB per float64 table).
MAX_TABLE_BITS = 13


@lru_cache(maxsize=8)
def ip_signs(n: int) -> np.ndarray:
    """H[a, b] = (-1)^{IP(a, b)} as read-only int8 (2^n, 2^n), rows = Alice (computed once per n;
    :func:`circuits.sign_matrix` of "ip").

    >>> ip_signs(1).tolist()
    [[1, 1], [1, -1]]
    """
    H = sign_matrix("ip", int(n))
    H.setflags(write=False)
    return H


def check_table_memory(n: int, *, tables: float = 1.0, what: str = "value table") -> None:
    """Refuse (2^n, 2^n) float64 tables that would not fit in the available memory.

    ``tables`` is how many such tables the step holds at once.  The error gives the estimate and
    the ways forward (smaller n, a larger machine, or chunked/distributed work).
    """
    need = tables * 8.0 * 4.0 ** n
    try:
        avail = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):      # platform without sysconf: no check
        avail = math.inf
    if n > MAX_TABLE_BITS or need > 0.8 * avail:
        raise ReductionError(
            f"the {what} at n = {n} needs about {need / 2 ** 30:.2f} GiB ({tables:g} float64 "
            f"table(s) of 4^{n} entries) but {avail / 2 ** 30:.2f} GiB are available (limit "
            f"n <= {MAX_TABLE_BITS}); use a smaller n, a larger machine, or support_metrics(..., "
            f"store=False), which streams the rows without keeping the table")


@dataclass(frozen=True, eq=False)
class ProductSupport:
    """The support of μ₀ as a product set: Alice's and Bob's coordinates, the code bits.

    Attributes
    ----------
    n, m : int
        Bits per party and code length (d = 2m).
    XA, XB : float64 (2^n, m)
        x^A(a) and x^B(b): the support point x_{a,b} is (XA[a], XB[b]) (box centres for τ > 0).
    code_bits : uint8 (2^n, m)
        C(a): row a holds the code bits of message a (the integer circuit's inputs are
        (C(a), C(b))).
    """

    n: int
    m: int
    XA: np.ndarray = field(repr=False)
    XB: np.ndarray = field(repr=False)
    code_bits: np.ndarray = field(repr=False)

    @property
    def dim(self) -> int:
        return 2 * self.m

    @property
    def size(self) -> int:
        """2^n (messages per party)."""
        return 1 << self.n

    @property
    def H(self) -> np.ndarray:
        """int8 sign matrix of IP (shared, computed once per n)."""
        return ip_signs(self.n)


_SUPPORTS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def product_support(instance) -> ProductSupport:
    """The :class:`ProductSupport` of an :class:`embeddings.HardInstance` (built once per instance
    and remembered); a ProductSupport passes through.

    Raises
    ------
    TypeError
        ``instance`` is neither a HardInstance nor a ProductSupport.
    """
    if isinstance(instance, ProductSupport):
        return instance
    if not isinstance(instance, HardInstance):
        raise TypeError(f"instance must be an embeddings.HardInstance (or a ProductSupport), got "
                        f"{type(instance).__name__}")
    cached = _SUPPORTS.get(instance)
    if cached is not None:
        return cached
    n, m = instance.n, instance.m
    if m > 62:
        raise DimensionError(f"code length m = {m} > 62 cannot be decoded into int64 bit rows")
    idx = np.arange(1 << n, dtype=np.int64)
    XA = instance.points_of(idx)[:, :m]                     # x_{a,0}: Alice part = x^A(a)
    XB = instance.points_of(idx << n)[:, m:]                # x_{0,b}: Bob part = x^B(b)
    words = np.asarray(instance.embedding.codewords(), dtype=np.int64)
    bits = ((words[:, None] >> np.arange(m, dtype=np.int64)) & 1).astype(np.uint8)
    sup = ProductSupport(n=n, m=m, XA=frozen(XA, np.float64), XB=frozen(XB, np.float64),
                         code_bits=frozen(bits, np.uint8))
    _SUPPORTS[instance] = sup
    return sup


def _activation_code(act) -> int:
    """The kernel code of a built-in activation, or -1 (numpy fallback)."""
    from networks.activations import ACTIVATIONS

    code = _kernels.ACT_CODES.get(act.name, -1)
    return code if code >= 0 and ACTIVATIONS.get(act.name) is act else -1


def _parts_tables(parts: Depth2Parts, sup: ProductSupport):
    """(A, B, c): α = X_A W_Aᵀ, β = X_B W_Bᵀ (both (2^n, w)) and the biases."""
    m = sup.m
    A = np.ascontiguousarray(sup.XA @ parts.W[:, :m].T)
    B = np.ascontiguousarray(sup.XB @ parts.W[:, m:].T)
    return A, B, np.ascontiguousarray(parts.b)


def _table_numpy(A, B, c, scale, parts, n, store, V, stats, rows=None):
    """Fallback for activations without a kernel code: blocks of rows, O(rows·2^n·w) memory."""
    act = parts.activation
    size, w = A.shape
    rows = rows or max(1, (1 << 21) // max(1, size * w))
    H = ip_signs(n)
    ip = (H < 0)
    for a0 in range(0, size, rows):
        a1 = min(size, a0 + rows)
        Z = scale * (A[a0:a1, None, :] + B[None, :, :]) + c
        val = act(Z) @ parts.u + parts.u0
        if store:
            V[a0:a1] = val
        nt = 1.0 - 2.0 * val
        for j, a in enumerate(range(a0, a1)):
            stats[a, 0] = math.fsum((H[a] * nt[j]).tolist())
            stats[a, 1] = math.fsum(((val[j] - ip[a]) ** 2).tolist())
            stats[a, 2] = int(((val[j] >= 0.5) == ip[a]).sum())
            stats[a, 3] = math.fsum((nt[j] ** 2).tolist())


#: Jobs below this many (row, column, neuron) terms run in the calling thread (~1 ms).
_THREADED_TERMS = 1 << 20


def _rows_on_threads(kernel, n_rows: int, terms: int) -> None:
    """``kernel(lo, hi)`` (a serial, GIL-free kernel over rows [lo, hi)) on every row, on
    threads for large jobs (:func:`circuits.utils._threads.run_ranges`, the thread count from
    the free CPUs); rows are independent, so the result does not depend on the threads."""
    from circuits.utils._threads import run_ranges, work_threads
    threads = work_threads(n_rows) if terms >= _THREADED_TERMS else 1
    if threads == 1:
        kernel(0, n_rows)
        return
    per = max(1, -(-n_rows // (4 * threads)))
    run_ranges(kernel, [(lo, min(n_rows, lo + per)) for lo in range(0, n_rows, per)], threads)


def _tables(A, B, c, scale, parts: Depth2Parts, n: int, store: bool):
    size = A.shape[0]
    V = np.empty((size, size) if store else (1, 1), dtype=np.float64)
    stats = np.zeros((size, 4), dtype=np.float64)
    code = _activation_code(parts.activation)
    if code >= 0:
        Bt = np.ascontiguousarray(B.T)
        args = (A, Bt, c, float(scale), parts.u, float(parts.u0), code, n, store, V, stats)
        _rows_on_threads(lambda lo, hi: _kernels._value_table(*args, lo, hi), size,
                         size * A.shape[1] * Bt.shape[1])
    else:
        _table_numpy(A, B, c, scale, parts, n, store, V, stats)
    return (V if store else None), stats


# ------------------------------------------------------------------------ depth 3 in product form
@dataclass(frozen=True, eq=False)
class Depth3Parts:
    """A depth-3 σ-network N(x) = v0 + Σ_j v_j σ(Σ_i W2[j, i] σ(<w_i, x> + b1_i) + b2_j) as plain
    float64 arrays: W1 (w1, d), b1 (w1,), W2 (w2, w1), b2 (w2,), v (w2,), v0, activation."""

    W1: np.ndarray
    b1: np.ndarray
    W2: np.ndarray
    b2: np.ndarray
    v: np.ndarray
    v0: float
    activation: object

    @property
    def widths(self) -> tuple:
        return int(self.W1.shape[0]), int(self.W2.shape[0])


def depth3_parts(network, *, dim: "int | None" = None, name: str = "network") -> Depth3Parts:
    """Read a depth-3 :class:`networks.SigmaNetwork` (dims [d, w1, w2, 1]) into
    :class:`Depth3Parts`; TypeError / ReductionError / DimensionError as :func:`depth2_parts`."""
    layers = getattr(network, "layers", None)
    act = getattr(network, "activation", None)
    if layers is None or act is None or not hasattr(network, "depth"):
        raise TypeError(f"{name} must be a networks.SigmaNetwork, got {type(network).__name__}")
    if network.depth != 3:
        raise ReductionError(f"{name} must have depth 3 (two hidden layers) here, got depth "
                             f"{network.depth} with hidden widths {tuple(network.widths)}")
    l1, l2, out = layers
    parts = Depth3Parts(W1=frozen(l1.weights, np.float64), b1=frozen(l1.bias, np.float64),
                        W2=frozen(l2.weights, np.float64), b2=frozen(l2.bias, np.float64),
                        v=frozen(out.weights[0], np.float64), v0=float(out.bias[0]),
                        activation=act)
    if dim is not None and parts.W1.shape[1] != int(dim):
        raise DimensionError(
            f"{name} has input dimension {parts.W1.shape[1]} but the embedding has dimension d = "
            f"2m = {int(dim)}; build it with dims [{int(dim)}, w1, w2, 1]")
    return parts


#: Elements of the widest (pairs × width) array one depth-3 tile holds (float64: 2 MiB; measured
#: faster than 16 MiB tiles at n = 10, T2: the tile's arrays stay in cache).
DEPTH3_TILE_ELEMENTS = 1 << 18


def _deriv(act, Z):
    """σ'(Z) as a float64 array of Z's shape (derivative functions may return bools/scalars)."""
    D = act.derivative_function(Z)
    return np.broadcast_to(np.asarray(D, dtype=np.float64), Z.shape)


def depth3_pass(A, Bc, W2, b2, v, v0, act, Y, *, grad: bool = True, V=None, rows=None,
                check=None, threads=None):
    """Forward (and backward) of a depth-3 net on all pairs (a, b), tiles of rows of a.

    z1(a, b) = A[a] + Bc[b] (Bc = β + b1, both (2^n, w1)); h1 = σ(z1); z2 = W2 h1 + b2;
    N = v·σ(z2) + v0.  Each tile holds ``rows`` × 2^n pairs (about DEPTH3_TILE_ELEMENTS elements
    of the widest layer), never the 4^n × d input; the second layer is a BLAS matmul over the
    tile.  Everything is float64; the loss rows are compensated sums (math.fsum).

    With ``Y`` (targets, (2^n, 2^n)) and ``grad``: returns ``(loss, Qa, Qb, dW2, db2, dv, dv0)``
    where g = 2(N - Y)/#pairs, Qa[a, i] = Σ_b dL/dz1_i(a, b), Qb[b, i] = Σ_a dL/dz1_i(a, b) (so
    dW1 = [Qaᵀ X_A, Qbᵀ X_B], db1 = Σ_a Qa).  With ``V`` (a (2^n, 2^n) array) the values are
    written there.  ``check(fraction of the rows done)`` is called between tiles (time limits;
    a Ctrl-C lands between tiles in any case).  ``threads`` tiles are computed at once (default
    numba's thread count), BLAS on one thread each; the tiles are combined in order.
    """
    size, w1 = A.shape
    nb = Bc.shape[0]
    w2 = W2.shape[0]
    total = float(size * nb)
    if rows is None:
        rows = max(1, DEPTH3_TILE_ELEMENTS // max(1, nb * max(w1, w2)))
    want = grad and Y is not None
    W2T = np.ascontiguousarray(W2.T)

    def tile(a0, a1):
        Z1 = (A[a0:a1, None, :] + Bc[None, :, :]).reshape(-1, w1)
        H1 = act.function(Z1)
        Z2 = H1 @ W2T
        Z2 += b2
        H2 = act.function(Z2)
        N = H2 @ v + v0
        if V is not None:
            V[a0:a1] = N.reshape(a1 - a0, nb)
        if Y is None:
            return None
        r = N - Y[a0:a1].reshape(-1)
        part = [math.fsum((r * r).tolist())]
        if want:
            g = (2.0 / total) * r
            dZ2 = _deriv(act, Z2) * g[:, None] * v                 # dL/dz2, (pairs, w2)
            dZ1 = ((dZ2 @ W2) * _deriv(act, Z1)).reshape(a1 - a0, nb, w1)   # dL/dz1
            part += [math.fsum(g.tolist()), g @ H2, dZ2.T @ H1, dZ2.sum(axis=0),
                     dZ1.sum(axis=1), dZ1.sum(axis=0)]
        return part

    if want:
        Qa = np.empty((size, w1))
        Qb = np.zeros((nb, w1))
        dW2 = np.zeros((w2, w1))
        db2 = np.zeros(w2)
        dv = np.zeros(w2)
    loss_parts, g_parts = [], []
    bounds = [(a0, min(size, a0 + rows)) for a0 in range(0, size, rows)]
    for (a0, a1), part in zip(bounds, _tiles_in_order(tile, bounds, threads, check, size)):
        if part is None:
            continue
        loss_parts.append(part[0])
        if want:
            g_parts.append(part[1])
            dv += part[2]
            dW2 += part[3]
            db2 += part[4]
            Qa[a0:a1] = part[5]
            Qb += part[6]
    loss = math.fsum(loss_parts) / total if Y is not None else None
    if not want:
        return loss
    return loss, Qa, Qb, dW2, db2, dv, math.fsum(g_parts)


def _depth3_threads() -> int:
    """Tiles in flight: one per core (numba's thread count, which the trainers lower to 1 for
    small epochs), each BLAS call on one thread."""
    import numba

    return max(1, int(numba.get_num_threads()))


def _tiles_in_order(tile, bounds, threads, check, size):
    """Yield tile(a0, a1) for each bound in order, computing up to ``threads`` tiles at once
    (numpy and BLAS release the GIL; BLAS pinned to one thread meanwhile).  Results are combined
    by the caller in tile order, so the sums never depend on scheduling.  Between tiles: the
    ``check`` callback and (in the main thread) Ctrl-C; pending tiles are cancelled on error."""
    threads = _depth3_threads() if threads is None else max(1, int(threads))
    if threads == 1 or len(bounds) == 1:
        for a0, a1 in bounds:
            if check is not None and a0 > 0:
                check(a0 / size)
            yield tile(a0, a1)
        return
    from concurrent.futures import ThreadPoolExecutor

    try:
        from threadpoolctl import threadpool_limits
        limits = threadpool_limits(limits=1, user_api="blas")
    except ImportError:                                 # optional: only a speed matter
        import contextlib
        limits = contextlib.nullcontext()
    pool = ThreadPoolExecutor(max_workers=threads)
    try:
        with limits:
            pending = []
            it = iter(bounds)
            for b in it:
                pending.append((b, pool.submit(tile, *b)))
                if len(pending) > threads:
                    break
            while pending:
                (a0, a1), fut = pending.pop(0)
                res = fut.result()
                if check is not None and a1 < size:
                    check(a1 / size)
                nxt = next(it, None)
                if nxt is not None:
                    pending.append((nxt, pool.submit(tile, *nxt)))
                yield res
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _depth3_tables(parts: Depth3Parts, sup: ProductSupport):
    m = sup.m
    A = np.ascontiguousarray(sup.XA @ parts.W1[:, :m].T)
    Bc = np.ascontiguousarray(sup.XB @ parts.W1[:, m:].T + parts.b1)
    return A, Bc


def value_table(net, instance) -> np.ndarray:
    """V[a, b] = N(x_{a,b}) for every pair: float64 (2^n, 2^n), rows = Alice (``a``).

    ``V.T.reshape(-1)`` lists the values in the support's cube order (index a + 2^n·b), i.e.
    ``net(instance.support().points)`` up to float rounding (a different summation order).
    Built from α = X_A W_Aᵀ and β = X_B W_Bᵀ by a numba kernel in O(2^n·m·w + 4^n·w) time and
    O(2^n·w) memory beyond the table.

    Parameters
    ----------
    net : networks.SigmaNetwork
        Depth 2 or 3, input dimension d = 2m of the instance.  Depth 3 (dims [d, w1, w2, 1]):
        first layer in product form, the second layer a float64 BLAS matmul over tiles of rows
        (:func:`depth3_pass`), O(2^n·m·w1 + 4^n·w1·w2) time, O(tile) memory beyond the table.
    instance : embeddings.HardInstance (or ProductSupport)

    Raises
    ------
    ReductionError
        The table would not fit in memory (the message gives the estimate), depth other than
        2 or 3.
    DimensionError
        Input dimension different from the instance's d.
    """
    sup = product_support(instance)
    if getattr(net, "depth", None) == 3:
        p3 = depth3_parts(net, dim=sup.dim)
        check_table_memory(sup.n)
        A, Bc = _depth3_tables(p3, sup)
        V = np.empty((sup.size, sup.size))
        depth3_pass(A, Bc, p3.W2, p3.b2, p3.v, p3.v0, p3.activation, None, grad=False, V=V)
        return V
    parts = depth2_parts(net, dim=sup.dim)
    check_table_memory(sup.n)
    A, B, c = _parts_tables(parts, sup)
    V, _ = _tables(A, B, c, 1.0, parts, sup.n, True)
    return V


@dataclass(frozen=True)
class SupportMetrics:
    """Exact averages over the 4^n support points (compensated sums).

    ``mse`` = E(N - IP)², ``rho`` = E[H·Ñ] with Ñ = 1 - 2N, ``accuracy`` = P([N >= 1/2] = IP),
    ``second_moment`` = E[Ñ²] (so Var(H·Ñ) = second_moment - rho²), ``max_abs`` = max |Ñ| (only
    when the table was kept, else nan).
    """

    n: int
    mse: float
    rho: float
    accuracy: float
    second_moment: float
    max_abs: float

    @property
    def gamma(self) -> float:
        """γ = 1/4 - MSE."""
        return 0.25 - self.mse

    @property
    def variance(self) -> float:
        """σ² = Var_μ₀(H·Ñ) = E[Ñ²] - ρ² (the variance in Bernstein's k, THEORY §4.8)."""
        return max(self.second_moment - self.rho ** 2, 0.0)

    def to_dict(self) -> dict:
        return {"n": self.n, "mse": self.mse, "gamma": self.gamma, "rho": self.rho,
                "accuracy": self.accuracy, "second_moment": self.second_moment,
                "variance": self.variance, "max_abs": self.max_abs}


def _metrics(n: int, stats: np.ndarray, V: "np.ndarray | None") -> SupportMetrics:
    total = float(4 ** n)
    return SupportMetrics(
        n=n, rho=math.fsum(stats[:, 0].tolist()) / total,
        mse=math.fsum(stats[:, 1].tolist()) / total,
        accuracy=float(stats[:, 2].sum()) / total,
        second_moment=math.fsum(stats[:, 3].tolist()) / total,
        max_abs=float(np.abs(1.0 - 2.0 * V).max()) if V is not None else math.nan)


def support_metrics(net, instance, *, store: bool = False):
    """(:class:`SupportMetrics`, V or None): exact MSE, ρ, accuracy of a depth-2 net on μ₀.

    With ``store=False`` the rows are streamed and no (2^n, 2^n) table is kept (any n whose
    4^n·w work is affordable).
    """
    sup = product_support(instance)
    parts = depth2_parts(net, dim=sup.dim)
    if store:
        check_table_memory(sup.n)
    A, B, c = _parts_tables(parts, sup)
    V, stats = _tables(A, B, c, 1.0, parts, sup.n, store)
    return _metrics(sup.n, stats, V), V


def quantised_tables(alpha: np.ndarray, beta: np.ndarray, unit: float, parts: Depth2Parts,
                     n: int):
    """(V_q, metrics) of the quantised network: pre-activation unit·(α + β) + b_i with exact
    integers α, β (|α + β| < 2^53, so α + β is exact in float64)."""
    check_table_memory(n)
    A = np.ascontiguousarray(alpha.T, dtype=np.float64)
    B = np.ascontiguousarray(beta.T, dtype=np.float64)
    V, stats = _tables(A, B, np.ascontiguousarray(parts.b), unit, parts, n, True)
    return V, _metrics(n, stats, V)


def original_tables(parts: Depth2Parts, sup: ProductSupport):
    """(V, metrics) of the network itself on the support."""
    check_table_memory(sup.n)
    A, B, c = _parts_tables(parts, sup)
    V, stats = _tables(A, B, c, 1.0, parts, sup.n, True)
    return V, _metrics(sup.n, stats, V)


# ------------------------------------------------------------------------ neuron-wise chains
def _pack(groups_t, groups_v, dtype, *, suffix: bool):
    """Concatenate per-group ascending thresholds and their cumulative (or suffix) weights."""
    off = [0]
    ts, cums = [], []
    for t, v in zip(groups_t, groups_v):
        t = np.asarray(t)
        v = np.asarray(v, dtype=dtype)
        order = np.argsort(t, kind="stable")
        t, v = t[order], v[order]
        ts.append(t)
        if suffix:
            cums.append(np.concatenate([np.cumsum(v[::-1])[::-1], np.zeros(1, dtype)]))
        else:
            cums.append(np.concatenate([np.zeros(1, dtype), np.cumsum(v)]))
        off.append(off[-1] + t.shape[0])
    t_all = np.concatenate(ts) if ts else np.zeros(0)
    c_all = np.concatenate(cums) if cums else np.zeros(0, dtype)
    return np.asarray(off, dtype=np.int64), t_all, c_all.astype(dtype)


def chain_table(PA, PB, up, down, base, *, integer: bool) -> np.ndarray:
    """out[a, b] = base + sum_g (sum of v over up gates of g with P >= t + over down gates with
    P <= t), P = PA[a, g] + PB[b, g]: every group's gates share one pre-activation, so the fired
    gates are counted by binary search over its sorted thresholds (THEORY §4.8).

    Parameters
    ----------
    PA, PB : (2^n, G) int64 (``integer=True``) or float64
    up, down : list of G pairs (thresholds, weights) per group (possibly empty arrays)
    base : int or float
    integer : bool
        Exact int64 arithmetic (thresholds, P and weights integers) or float64.
    """
    dtype = np.int64 if integer else np.float64
    PA = np.ascontiguousarray(PA, dtype=dtype)
    PB = np.ascontiguousarray(PB, dtype=dtype)
    G = PA.shape[1]
    if PB.shape[1] != G or len(up) != G or len(down) != G:
        raise DimensionError(f"PA, PB and the gate lists must agree on the number of groups, got "
                             f"{PA.shape[1]}, {PB.shape[1]}, {len(up)}, {len(down)}")
    up_off, up_t, up_c = _pack([t for t, _ in up], [v for _, v in up], dtype, suffix=False)
    dn_off, dn_t, dn_c = _pack([t for t, _ in down], [v for _, v in down], dtype, suffix=True)
    out = np.empty((PA.shape[0], PB.shape[0]), dtype=dtype)
    args = (PA, PB, up_off, up_t.astype(dtype), up_c, dn_off, dn_t.astype(dtype), dn_c,
            dtype(base), out)
    _rows_on_threads(lambda lo, hi: _kernels._chain_table(*args, lo, hi), PA.shape[0],
                     PA.shape[0] * PB.shape[0] * max(1, G))
    return out


def staircase_table(st, instance) -> np.ndarray:
    """N_stair[a, b] of a real-weight :class:`networks.reduction.Staircase` on every pair, in
    product form (each neuron's gates share z_i = α_i(a) + β_i(b) + b_i; binary search over its
    sorted thresholds), without the 4^n × d input array."""
    sup = product_support(instance)
    parts = st.network
    A, B, c = _parts_tables(parts, sup)
    w = parts.width
    up, down = [], []
    weights = st.top_weight
    for i in range(w):
        sel = st.neuron == i
        d = st.direction[sel]
        up.append((st.theta[sel][d > 0], weights[sel][d > 0]))
        down.append((st.theta[sel][d < 0], weights[sel][d < 0]))
    return chain_table(A, B + c, up, down, float(st.base), integer=False)
