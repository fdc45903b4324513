"""Private numba kernels of the networks package (the reduction's hot loops).

Wrappers in :mod:`networks.reduction` validate; kernels only loop.  Conventions: a value matrix
``V[a, b]`` has rows = Alice (``a``, low n bits of the cube index) and columns = Bob (``b``), the
orientation of :func:`circuits.hypercube.as_matrix`.  Inner products mod 2 are read from a parity
table ``par[c] = popcount(c) & 1`` (built here, 2^n bytes), so ``<c, b> mod 2 = par[c & b]``.
Parallel loops write only their own rows / blocks, so results never depend on scheduling.
Never ``fastmath``.
"""

import numpy as np

from circuits._jit import njit


@njit(cache=True, nogil=True)
def _parity_table(n):
    """par[c] = popcount(c) & 1 for c < 2^n (Gray-style doubling, exact)."""
    size = np.int64(1) << n
    par = np.zeros(size, dtype=np.int8)
    half = np.int64(1)
    while half < size:
        for c in range(half):
            par[c + half] = 1 - par[c]
        half <<= 1
    return par


@njit(cache=True, nogil=True)
def _twisted_sums(V, shifts, n, a_start, a_stop, G, prefix):
    """Twisted shift sums and per-prefix margins for the rows ``a_start <= a < a_stop``.

    For every row a in the range and every column b, with ``T_j(a, b) =
    chi_{s_j}(a) chi_{r_j}(b) (-1)^{<r_j, s_j>} V[a ^ r_j, b ^ s_j]`` (THEORY §4.3) this writes

    * ``G[a - a_start, b] = H(a, b) * sum_{j < k} T_j(a, b)`` (so ``M_k = H * G / k``), using
      ``H(a, b) chi_{r}(b) = (-1)^{<a ^ r, b>}`` (``G``: zeros, (a_stop - a_start, 2^n));
    * ``prefix[t] = min over the rows a and all b of H(a, b) M_{t+1}(a, b)``, the margin of
      every prefix length t + 1 = 1..k in one pass (``prefix``: +inf, length k).

    ``shifts`` is int64 (k, 2): columns r (Alice shift), s (Bob shift).  Serial over its rows:
    ``networks.reduction.selfreduce.twisted_sums`` runs blocks of rows on threads, each block
    with its own rows of G and its own ``prefix`` row.
    """
    size = np.int64(1) << n
    par = _parity_table(n)
    n_rows = a_stop - a_start
    k = shifts.shape[0]
    for row in range(n_rows):
        a = a_start + row
        g = G[row]
        for j in range(k):
            r = shifts[j, 0]
            s = shifts[j, 1]
            ar = a ^ r
            # chi_s(a) (-1)^{<r, s>} = (-1)^{<a ^ r, s>}
            sa = 1.0 - 2.0 * par[ar & s]
            src = V[ar]
            for b in range(size):
                if par[ar & b]:
                    g[b] -= sa * src[b ^ s]
                else:
                    g[b] += sa * src[b ^ s]
            mn = g[0]
            for b in range(1, size):
                mn = min(mn, g[b])
            # min(g) / (j+1) == min(g / (j+1)): rounding is monotone, division exact-order
            val = mn * (1.0 / (j + 1))
            if val < prefix[j]:
                prefix[j] = val
