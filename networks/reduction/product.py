"""The product form as the reduction uses it (THEORY §4.8): the support, value tables and exact
metrics come from :mod:`networks.product` (re-exported here), the neuron-wise chains of threshold
gates (:func:`chain_table`, :func:`staircase_table`) are the reduction's own.
"""

from __future__ import annotations

import numpy as np

from circuits.utils.errors import DimensionError
from networks.product import _kernels as _product_kernels  # noqa: F401
from networks.product.depth3 import (DEPTH3_TILE_ELEMENTS, Depth3Parts, _deriv,  # noqa: F401
                                     _depth3_tables, _depth3_threads, _tiles_in_order,
                                     depth3_parts, depth3_pass)
from networks.product.support import (MAX_TABLE_BITS, ProductSupport, _activation_code,  # noqa: F401
                                      check_table_memory, ip_signs, product_support)
from networks.product import tables as _product_tables
from networks.product.tables import (SupportMetrics, _metrics, _parts_tables,  # noqa: F401
                                     _table_numpy, _tables, original_tables,
                                     quantised_tables, support_metrics, value_table)
from networks.reduction import _kernels

#: Chain tables below this many (row, column, group) terms run in the calling thread.
_THREADED_TERMS = _product_tables._THREADED_TERMS


def _rows_on_threads(kernel, n_rows: int, terms: int) -> None:
    """:func:`networks.product.tables._rows_on_threads` with this module's threshold."""
    _product_tables._rows_on_threads(kernel, n_rows, terms, threshold=_THREADED_TERMS)


__all__ = ["ProductSupport", "product_support", "ip_signs", "value_table", "SupportMetrics",
           "support_metrics", "check_table_memory", "chain_table", "staircase_table",
           "Depth3Parts", "depth3_parts", "depth3_pass"]


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
