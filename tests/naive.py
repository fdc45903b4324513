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
