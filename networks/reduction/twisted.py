"""The twisted shift sums of the self-reduction (THEORY §4.3–4.4): G = H ⊙ Σ_j T_j over all 4^n
pairs and the margin of every prefix, by one numba pass (split into chunks for run_chunks on
request).  Used by :mod:`networks.reduction.selfreduce` and by the least-k search of
:mod:`networks.reduction.fwht`, both of which import it from here (no import circle).
"""

from __future__ import annotations

import numpy as np

from circuits.utils.errors import DimensionError, ReductionError

__all__ = ["twisted_sums"]

#: Rows per chunk when the margin computation is split for run_chunks.
ROWS_PER_CHUNK = 64


def _check_V(V) -> tuple[np.ndarray, int]:
    V = np.asarray(V, dtype=np.float64)
    if V.ndim != 2 or V.shape[0] != V.shape[1] or V.shape[0] & (V.shape[0] - 1) or V.shape[0] < 2:
        raise DimensionError(f"V must be a square (2^n, 2^n) matrix V[a, b] (rows = Alice), got "
                             f"shape {V.shape}; use value_matrix(values, n) for cube-order values")
    if not np.isfinite(V).all():
        raise ReductionError("V contains NaN or infinity; check the network's outputs")
    n = int(V.shape[0]).bit_length() - 1
    return np.ascontiguousarray(V), n


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

        G = np.zeros((stop - start, 1 << self.n), dtype=np.float64)
        prefix = np.full(self.shifts.shape[0], np.inf, dtype=np.float64)
        _kernels._twisted_sums(self.V, self.shifts, self.n, start, stop, G, prefix)
        return {start: (G, prefix)}


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
        from circuits.utils._threads import run_ranges, work_threads

        threads = work_threads(size) if size >= 64 else 1
        blocks = min(size, 4 * threads)                     # prefix table is blocks x k
        G = np.zeros((size, size), dtype=np.float64)
        prefix = np.full((blocks, sh.shape[0]), np.inf, dtype=np.float64)
        per = -(-size // blocks)

        def block(lo, hi):                   # rows [lo, hi): its rows of G, its prefix row
            _kernels._twisted_sums(V, sh, n, lo, hi, G[lo:hi], prefix[lo // per])

        run_ranges(block, [(lo, min(size, lo + per)) for lo in range(0, size, per)], threads)
        return G, prefix.min(axis=0)
    from circuits.utils.parallel import run_chunks

    parts = run_chunks(_Chunk(V, sh, n), size, combine=_merge, initial={}, executor=executor,
                       client=client, chunk_size=min(size, ROWS_PER_CHUNK), progress=progress,
                       desc="twisted shift sums")
    starts = sorted(parts)
    G = np.concatenate([parts[s][0] for s in starts], axis=0)
    prefix = np.min(np.stack([parts[s][1] for s in starts]), axis=0)
    return G, prefix
