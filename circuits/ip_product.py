"""IP_n as a THR o THR circuit from a small IP_k circuit: the sign-product construction.

Write ``(-1)^IP_n(x, y) = (-1)^IP_k(block) * prod_{i >= k} (1 - 2 x_i y_i)``.  The first factor is
sign-represented by any layered THR o THR circuit for IP_k with s hidden gates h_j and top gate
``[sum_j v_j h_j >= T]``: ``P = 2 (sum_j v_j h_j - T) + 1`` is odd, positive exactly where
IP_k = 1.  The second factor is exactly the sum over subsets S of the other pairs of
``(-2)^|S| AND_S``, ``AND_S = prod_{i in S} x_i y_i`` (one conjunction of 2|S| literals).  The
product ``P * prod(...)`` is an integer that is never 0, positive exactly where IP_n = 1, and a sum
of terms ``h_j AND AND_S`` -- and the AND of a threshold gate with a conjunction on other
variables is again one threshold gate: ``[w . z + M sum_{i in S} (x_i + y_i) >= t + 2 M |S|]``
with ``M = max_z (w . z - t) + 1`` (if the conjunction fails, its sum is at most 2|S| - 1 and
the M it loses exceeds anything ``w . z - t`` can make up).  So IP_n has a THR o THR circuit with

    (s + 1) * 2^(n - k) - 1 hidden gates

(the constant term becomes the top threshold).  With the least IP_k circuits proved by the
synthesis (IP_1: 1 gate, IP_2: 2, IP_3: 4) this is 2^n - 1, 3 * 2^(n-2) - 1 and 5 * 2^(n-3) - 1
gates, against n 2^(n-1) for :func:`~circuits.constructions.ip_depth2` -- still Theta(2^n):
the growth 2^(3n/4) ~ 1.682^n of Amano's construction (LATA 2020) is not reached by this one.
Every weight is an integer; the top weights are at most ``2 |v| 2^(n-k)`` in absolute value.
"""

from __future__ import annotations

import itertools

import numpy as np

from circuits.hypercube import check_n_bits
from circuits.threshold import ThresholdCircuit, ThresholdLayer
from circuits.utils.errors import InvalidArgumentError

__all__ = ["IP_BLOCKS", "ip_block", "ip_depth2_product", "ip_depth2_product_size"]

#: Least layered THR o THR circuits for IP_1, IP_2, IP_3 (inputs x_1..x_k, y_1..y_k), as
#: (hidden weights, hidden thresholds, top weights, top threshold).  IP_1 is the AND gate; the
#: IP_2 and IP_3 circuits were found by :func:`~circuits.analysis.decide_depth2` (plain model,
#: |w| <= 3 and |w| <= 9); 2 and 4 are the least sizes (IP_2 is not a threshold function; IP_3
#: has no 3-gate circuit over all integer weights, see the synthesis docs page).  The tests
#: re-verify each on the whole cube.
IP_BLOCKS = {
    1: ([[1, 1]], [2], [1], 1),
    2: ([[2, -3, 1, -3], [-2, 1, -3, 1]], [-3, -3], [-1, -1], -1),
    3: ([[-1, 2, 2, 7, 4, 4], [9, 8, -2, 9, 8, -7], [7, -5, -4, -2, -5, -4],
         [-4, 4, -5, -6, 3, -7]], [11, 18, -9, -11], [-3, 1, -3, -3], -5),
}


def ip_block(k: int) -> ThresholdCircuit:
    """The stored least THR o THR circuit for IP_k (k in :data:`IP_BLOCKS`).

    Parameters
    ----------
    k : int
        Bits per party of the block.

    Examples
    --------
    >>> ip_block(2).size
    2
    """
    if k not in IP_BLOCKS:
        raise InvalidArgumentError(f"no stored IP_k block for k = {k}; stored: {sorted(IP_BLOCKS)}"
                                   f" (pass your own circuit as block=)")
    hw, ht, v, top = IP_BLOCKS[k]
    return ThresholdCircuit((ThresholdLayer(np.array(hw, dtype=np.int64),
                                            np.array(ht, dtype=np.int64)),
                             ThresholdLayer(np.array([v], dtype=np.int64),
                                            np.array([top], dtype=np.int64))))


def _check_block(block: ThresholdCircuit) -> int:
    if not isinstance(block, ThresholdCircuit) or block.depth != 2 \
            or block.layers[1].n_gates != 1:
        raise InvalidArgumentError("block must be a layered THR o THR ThresholdCircuit (depth 2, "
                                   "one output gate) computing IP_k; use ip_block(k)")
    N = block.n_inputs
    if N % 2:
        raise InvalidArgumentError(f"block must have 2k inputs (x_1..x_k, y_1..y_k), got {N}")
    return N // 2


def ip_depth2_product_size(n: int, k: int, s: int) -> int:
    """Hidden gates of :func:`ip_depth2_product` for IP_n from an s-gate IP_k block (before
    terms with coefficient 0 are dropped): ``(s + 1) 2^(n - k) - 1``.

    >>> [ip_depth2_product_size(n, 2, 2) for n in (4, 5, 6)]
    [11, 23, 47]
    """
    return (s + 1) * (1 << (n - k)) - 1


def ip_depth2_product(n: int, block: "ThresholdCircuit | int" = 2) -> ThresholdCircuit:
    """IP_n as a THR o THR circuit: an IP_k circuit times the exact expansion of the other pairs.

    Parameters
    ----------
    n : int
        Bits per party, 1 <= n <= 20 (N = 2n inputs).
    block : ThresholdCircuit or int
        A layered THR o THR circuit computing IP_k on its 2k inputs (x_1..x_k, y_1..y_k), with
        k <= n, or k itself for the stored least circuit :func:`ip_block` (default 2).

    Returns
    -------
    ThresholdCircuit
        Depth 2 with ``(s + 1) 2^(n-k) - 1`` hidden gates at most (see the module docstring);
        pairs 1..k feed the block's gates, the other pairs the conjunctions.

    Examples
    --------
    >>> from circuits import truth_table, inner_product_mod2
    >>> c = ip_depth2_product(4)
    >>> c.size, bool((truth_table(c) == inner_product_mod2(4)).all())
    (11, True)
    """
    n = check_n_bits(n, name="n", minimum=1, maximum=20)
    if not isinstance(block, ThresholdCircuit):
        block = ip_block(int(block))
    k = _check_block(block)
    if k > n:
        raise InvalidArgumentError(f"the block computes IP_{k}, more pairs than n = {n}; pass a "
                                   f"block with k <= n")
    hid, top = block.layers
    bw = np.asarray(hid.weights, dtype=np.int64)
    bt = np.asarray(hid.thresholds, dtype=np.int64)
    v = np.asarray(top.weights[0], dtype=np.int64)
    T = int(top.thresholds[0])
    # P = 2 (sum v h - T) + 1 > 0 exactly where IP_k = 1; the product with the rest's exact
    # (+-1) expansion is positive exactly where IP_n = 1: [sum terms >= 1 - constant]
    cols = list(range(k)) + [n + i for i in range(k)]
    M = np.maximum(np.maximum(bw, 0).sum(axis=1) - bt + 1, 1)     # AND-forcing weight per gate
    rows, thr, tw = [], [], []
    constant = 0
    for size in range(n - k + 1):
        for S in itertools.combinations(range(k, n), size):
            c = (-2) ** size
            for j in range(bw.shape[0]):
                if v[j] == 0:
                    continue
                w = np.zeros(2 * n, dtype=np.int64)
                w[cols] = bw[j]
                for i in S:
                    w[i] = w[n + i] = M[j]
                rows.append(w)
                thr.append(int(bt[j]) + 2 * int(M[j]) * size)
                tw.append(2 * int(v[j]) * c)
            if size == 0:
                constant = (1 - 2 * T) * c
            elif 1 - 2 * T != 0:
                w = np.zeros(2 * n, dtype=np.int64)
                for i in S:
                    w[i] = w[n + i] = 1
                rows.append(w)
                thr.append(2 * size)
                tw.append((1 - 2 * T) * c)
    hidden = ThresholdLayer(np.array(rows, dtype=np.int64), np.array(thr, dtype=np.int64))
    out = ThresholdLayer(np.array([tw], dtype=np.int64), np.array([1 - constant], dtype=np.int64))
    return ThresholdCircuit((hidden, out))
