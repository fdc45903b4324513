"""Private numba kernel of the gate lemma: exhaustive branch and bound for the largest
Σ_{g = 1} H over Ferrers (threshold-gate) sets of the ±1 IP matrix H.

A column order fixes the gate up to the rows' cut-offs, and each row then takes its best prefix
(never below 0, the empty prefix), so the value of an order is Σ_a max(0, max_k prefix_a(k)).
The search builds orders column by column.  Bound at a node: each row's final best prefix is at
most max(best so far, current prefix + number of +1 entries of the row among the unplaced
columns); a node whose bound is ≤ the incumbent is cut (a strictly better order cannot lie below
it).  Symmetry: the all-ones column 0 goes first (moving it forward raises every prefix), and
with the columns placed so far spanning span(e_1, …, e_d) the next column is either one of the
unplaced vectors of that span or the single representative e_{d+1} of all vectors outside it
(the linear maps fixing the span pointwise act transitively outside it and, with the inverse
transpose on the rows, leave H and the family of Ferrers sets unchanged).
Naive twin: :func:`networks.separation.gate_lemma.gate_maximum_naive` (every column order,
tests/test_gate_lemma.py).  Never fastmath.
"""

import numpy as np

from circuits._jit import njit


@njit(cache=True, nogil=True)
def _branch(Hm, order, depth, dim, used, s, m, pos, inc, best_order, nodes):
    N = Hm.shape[0]
    nodes[0] += 1
    bound = 0
    total = 0
    for a in range(N):
        v = s[a] + pos[a]
        bound += m[a] if m[a] > v else v
        total += m[a]
    if total > inc[0]:                       # the current prefix is itself a gate
        inc[0] = total
        for i in range(N):
            best_order[i] = order[i] if i < depth else -1
    if bound <= inc[0] or depth == N:
        return
    span = 1 << dim
    for b in range(N):
        if used[b]:
            continue
        if b >= span and b != span:          # outside the span: only its representative
            continue
        new_dim = dim + 1 if b == span else dim
        used[b] = True
        order[depth] = b
        ms = m.copy()
        ss = s.copy()
        ps = pos.copy()
        for a in range(N):
            s[a] += Hm[a, b]
            if Hm[a, b] > 0:
                pos[a] -= 1
            if s[a] > m[a]:
                m[a] = s[a]
        _branch(Hm, order, depth + 1, new_dim, used, s, m, pos, inc, best_order, nodes)
        s[:] = ss
        m[:] = ms
        pos[:] = ps
        used[b] = False
        order[depth] = -1


def branch_and_bound(Hm, incumbent):
    """(best value, best column order (−1 padded), nodes) over all column orders whose value
    exceeds ``incumbent``; returns ``incumbent`` itself when none does."""
    N = Hm.shape[0]
    dim = 0
    while (1 << dim) < N:
        dim += 1
    order = np.full(N, -1, np.int64)
    best_order = np.full(N, -1, np.int64)
    used = np.zeros(N, np.bool_)
    s = np.zeros(N, np.int64)
    m = np.zeros(N, np.int64)
    pos = np.sum(Hm > 0, axis=1).astype(np.int64)
    inc = np.array([incumbent], np.int64)
    nodes = np.zeros(1, np.int64)
    # column 0 (all ones) first
    used[0] = True
    order[0] = 0
    for a in range(N):
        s[a] += Hm[a, 0]
        pos[a] -= 1
        m[a] = max(m[a], s[a])
    _branch(Hm, order, 1, 0, used, s, m, pos, inc, best_order, nodes)
    return int(inc[0]), best_order, int(nodes[0])
