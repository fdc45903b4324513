"""Slow, obviously correct twins of the kernels: Python ints and plain loops only.

Each twin doubles as an overflow oracle (Python ints never wrap).  Tests compare every numba
kernel with its twin on the whole cube for small N.
"""


def bit(k, i):
    return (k >> i) & 1


def ip_mod2(n):
    return [bin((k & ((1 << n) - 1)) & (k >> n)).count("1") % 2 for k in range(1 << 2 * n)]


def parity(N):
    return [bin(k).count("1") % 2 for k in range(1 << N)]


def majority(N):
    return [int(bin(k).count("1") >= (N + 1) // 2) for k in range(1 << N)]


def gate(weights, threshold, z):
    return int(sum(int(w) * int(b) for w, b in zip(weights, z)) >= int(threshold))


def circuit_value(layers, z):
    """layers: list of (weights rows, thresholds) as nested Python lists."""
    cur = list(z)
    for W, t in layers:
        cur = [gate(row, tt, cur) for row, tt in zip(W, t)]
    return cur[0]


def circuit_table(layers, N):
    return [circuit_value(layers, [bit(k, i) for i in range(N)]) for k in range(1 << N)]


def layers_of(circuit):
    return [(layer.weights.tolist(), layer.thresholds.tolist()) for layer in circuit.layers]


def circuit_table_int64(circuit):
    """The truth table of ``circuit`` by plain integer matrix products, layer by layer (numpy
    int64, for cubes too large for :func:`circuit_table`): the twin of the simulation kernels.
    Exact: every input of a gate is 0 or 1, so |w . z| <= sum |w| < 2^62, checked in Python
    ints before any product."""
    import numpy as np

    from circuits.hypercube import points

    for layer in circuit.layers:
        for row in layer.weights.tolist():
            assert sum(abs(int(w)) for w in row) < 1 << 62, "int64 could overflow"
    z = points(circuit.n_inputs).astype(np.int64)
    for layer in circuit.layers:
        z = (z @ np.asarray(layer.weights, dtype=np.int64).T
             >= np.asarray(layer.thresholds, dtype=np.int64)).astype(np.int64)
    return z[:, 0].astype(np.uint8)
