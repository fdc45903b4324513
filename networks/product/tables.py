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
from dataclasses import dataclass

import numpy as np

from networks.product import _kernels
from networks.product.depth3 import _depth3_tables, depth3_parts, depth3_pass
from networks.product.parts import Depth2Parts, depth2_parts
from networks.product.support import (ProductSupport, _activation_code, check_table_memory,
                                      ip_signs, product_support)

__all__ = ["value_table", "SupportMetrics", "support_metrics", "quantised_tables",
           "original_tables"]


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


def _rows_on_threads(kernel, n_rows: int, terms: int, threshold: "int | None" = None) -> None:
    """``kernel(lo, hi)`` (a serial, GIL-free kernel over rows [lo, hi)) on every row, on
    threads for jobs of at least ``threshold`` terms (default :data:`_THREADED_TERMS`;
    :func:`circuits.utils._threads.run_ranges`, the thread count from the free CPUs); rows are
    independent, so the result does not depend on the threads."""
    from circuits.utils._threads import run_ranges, work_threads
    limit = _THREADED_TERMS if threshold is None else threshold
    threads = work_threads(n_rows) if terms >= limit else 1
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
