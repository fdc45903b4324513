"""Known threshold-circuit constructions (THEORY.md §1.4), each verified exhaustively in the tests."""

from __future__ import annotations

import numpy as np

from circuits.hypercube import check_n_bits
from circuits.threshold import ThresholdCircuit, ThresholdLayer

__all__ = ["parity_depth2", "ip_depth3", "ip_depth2", "majority_gate", "alternating_top"]


def alternating_top(n_gates: int) -> ThresholdLayer:
    """Output layer ``[sum_j (-1)^(j+1) g_j >= 1]`` over ``n_gates`` hidden gates g_1..g_s.

    With g_j = [S >= j] for a count S this outputs S mod 2.
    """
    v = np.array([1 if j % 2 == 1 else -1 for j in range(1, n_gates + 1)], dtype=np.int64)
    return ThresholdLayer(v.reshape(1, -1), [1])


def parity_depth2(n_inputs: int) -> ThresholdCircuit:
    """PARITY_N as a depth-2 circuit with N hidden gates: g_j = [sum z >= j], j = 1..N.

    Parameters
    ----------
    n_inputs : int
        Number of inputs N.

    Examples
    --------
    >>> c = parity_depth2(4); (c.depth, c.size)
    (2, 4)
    """
    N = check_n_bits(n_inputs, name="n_inputs", minimum=1)
    hidden = ThresholdLayer(np.ones((N, N), dtype=np.int64), np.arange(1, N + 1))
    return ThresholdCircuit((hidden, alternating_top(N)))


def ip_depth3(n: int) -> ThresholdCircuit:
    """IP_n as a depth-3 circuit: 2n hidden gates and one output gate (THEORY §1.4).

    h_i = [x_i + y_i >= 2]; g_j = [sum h_i >= j], j = 1..n; out = [sum_j (-1)^(j+1) g_j >= 1].
    ``size`` counts hidden gates (2n), as for every circuit; ``n_gates`` = 2n + 1 includes the
    output gate.

    Parameters
    ----------
    n : int
        Bits per party, 1 <= n <= 31 (the circuit has N = 2n inputs).

    Returns
    -------
    ThresholdCircuit
        Depth 3, weights in {-1, 1}, computing IP_n on all 4^n inputs.

    Examples
    --------
    >>> c = ip_depth3(3); (c.depth, c.size, c.n_gates, c.n_inputs)
    (3, 6, 7, 6)
    """
    n = check_n_bits(n, name="n", minimum=1, maximum=31)
    w1 = np.zeros((n, 2 * n), dtype=np.int64)
    for i in range(n):
        w1[i, i] = 1
        w1[i, n + i] = 1
    and_layer = ThresholdLayer(w1, np.full(n, 2))
    count_layer = ThresholdLayer(np.ones((n, n), dtype=np.int64), np.arange(1, n + 1))
    return ThresholdCircuit((and_layer, count_layer, alternating_top(n)))


def ip_depth2(n: int) -> ThresholdCircuit:
    """IP_n as a depth-2 MAJ o MAJ circuit with n 2^(n-1) hidden gates, bottom weights <= n + 1.

    For a in {0,1}^n and j = 1..|a|::

        g_{a,j} = [(n+1)(sum_{a_i=1} x_i - sum_{a_i=0} x_i) + sum_{a_i=1} y_i >= (n+1)|a| + j]
                = [x = a] [|a & y| >= j];  out = [sum_{a,j} (-1)^(j+1) g_{a,j} >= 1].

    Parameters
    ----------
    n : int
        Bits per party, 1 <= n <= 20 (N = 2n inputs).

    Examples
    --------
    >>> c = ip_depth2(3); (c.depth, c.size, c.max_abs_weight)
    (2, 12, 4)
    """
    n = check_n_bits(n, name="n", minimum=1, maximum=20)
    rows, thr, top = [], [], []
    for a in range(1 << n):
        bits = [(a >> i) & 1 for i in range(n)]
        ones = sum(bits)
        for j in range(1, ones + 1):
            w = np.zeros(2 * n, dtype=np.int64)
            for i, b in enumerate(bits):
                w[i] = (n + 1) if b else -(n + 1)
                w[n + i] = 1 if b else 0
            rows.append(w)
            thr.append((n + 1) * ones + j)
            top.append(1 if j % 2 == 1 else -1)
    hidden = ThresholdLayer(np.array(rows), np.array(thr))
    return ThresholdCircuit((hidden, ThresholdLayer(np.array([top]), [1])))


def majority_gate(n_inputs: int) -> ThresholdCircuit:
    """MAJ_N as a single gate [sum z >= ceil(N/2)].

    Parameters
    ----------
    n_inputs : int
        Number of inputs N.

    """
    N = check_n_bits(n_inputs, name="n_inputs", minimum=1)
    return ThresholdCircuit.single_gate(np.ones(N, dtype=np.int64), (N + 1) // 2)
