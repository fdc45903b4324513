"""Private numba kernels of the reduction: neuron-wise chains (binary search over sorted
thresholds).  The product-form kernels (value tables, training passes) live in
:mod:`networks.product._kernels` and are re-exported here for existing callers.  Never
``fastmath``.
"""


from circuits._jit import njit

from networks.product._kernels import (ACT_CODES, _dsigma, _neumaier, _row_values,  # noqa: F401
                                       _sigma, _train_pairs, _train_pass, _value_table)


@njit(cache=True, nogil=True)
def _count_le(t, lo, hi, x):
    """#{j in [lo, hi): t[j] <= x} for t ascending on [lo, hi) (binary search)."""
    a = lo
    b = hi
    while a < b:
        mid = (a + b) >> 1
        if t[mid] <= x:
            a = mid + 1
        else:
            b = mid
    return a - lo


@njit(cache=True, nogil=True)
def _count_lt(t, lo, hi, x):
    """#{j in [lo, hi): t[j] < x} for t ascending on [lo, hi)."""
    a = lo
    b = hi
    while a < b:
        mid = (a + b) >> 1
        if t[mid] < x:
            a = mid + 1
        else:
            b = mid
    return a - lo


@njit(cache=True, nogil=True)
def _chain_table(PA, PB, up_off, up_t, up_cum, dn_off, dn_t, dn_cum, base, out, a_lo, a_hi):
    """Neuron-wise staircase / threshold-chain evaluation on all pairs (a, b).

    Group g (a neuron, or one weight row of a circuit) has the shared pre-activation
    P = PA[a, g] + PB[b, g].  Its "up" gates fire iff P >= t (thresholds up_t[up_off[g]:
    up_off[g+1]] ascending) and the fired ones are a prefix: their weight is
    up_cum[up_off[g] + g + cnt] with cnt = #{t <= P} (cumulative sums, one leading 0 per group).
    Its "down" gates fire iff P <= t (dn_t ascending): the fired ones are a suffix starting at
    j = #{t < P}; dn_cum[dn_off[g] + g + j] holds the suffix sum from j.
    out[a, b] = base + sum over groups.  Exact for integer P / weights (int64).  Serial over
    the rows a_lo <= a < a_hi (the caller runs ranges of rows on threads).
    """
    size_b = PB.shape[0]
    G = PA.shape[1]
    for a in range(a_lo, a_hi):
        for b in range(size_b):
            tot = base
            for g in range(G):
                P = PA[a, g] + PB[b, g]
                lo = up_off[g]
                hi = up_off[g + 1]
                if hi > lo:
                    tot += up_cum[lo + g + _count_le(up_t, lo, hi, P)]
                lo = dn_off[g]
                hi = dn_off[g + 1]
                if hi > lo:
                    tot += dn_cum[lo + g + _count_lt(dn_t, lo, hi, P)]
            out[a, b] = tot
