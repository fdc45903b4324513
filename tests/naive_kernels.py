"""Naive twins of the circuit kernels in ``circuits._kernels`` (Python ints, plain loops).

``tests/naive.py`` holds the shared twins (gate, circuit value, IP, parity, majority); this
module adds the pieces specific to the fast cube kernels: the low-block table, the working
dtype rule, a generic target evaluator and the (count, first) reduction over an index range.
"""

from tests import naive


def layer_bound(weights, thresholds):
    """max_j sum_i |w_ji| + |t_j| with Python ints (twin of ThresholdLayer.preactivation_bound)."""
    return max(sum(abs(int(w)) for w in row) + abs(int(t)) for row, t in zip(weights, thresholds))


def work_dtype_name(bound):
    """Narrowest of int16 / int32 / int64 whose maximum is >= bound."""
    for name, bits in (("int16", 16), ("int32", 32), ("int64", 64)):
        if bound <= (1 << (bits - 1)) - 1:
            return name
    raise OverflowError(bound)


def low_table(weights, thresholds, L):
    """P[j][a] = sum_{i < L} W[j][i] * bit_i(a) - t[j] for every a in [0, 2^L)."""
    return [[sum(int(row[i]) * naive.bit(a, i) for i in range(L)) - int(t) for a in range(1 << L)]
            for row, t in zip(weights, thresholds)]


def target_value(kind, k, N, params=None, table=None):
    """Target bit at index k for the named kinds used by the tests."""
    bits = [naive.bit(k, i) for i in range(N)]
    if kind == "const":
        return int(params)
    if kind == "ip":
        n = N // 2
        return sum(bits[i] * bits[n + i] for i in range(n)) % 2
    if kind == "parity":
        return sum(bits) % 2
    if kind == "majority":
        return int(sum(bits) >= (N + 1) // 2)
    if kind == "table":
        return int(table[k])
    if kind == "linear":
        weights, threshold = params
        return int(sum(int(w) * b for w, b in zip(weights, bits)) >= int(threshold))
    raise ValueError(kind)


def count_first(circuit_values, target_values, start, stop):
    """(number of k in [start, stop) with circuit != target, smallest such k or -1)."""
    diff = [k for k in range(start, stop) if circuit_values[k] != target_values[k]]
    return len(diff), (diff[0] if diff else -1)
