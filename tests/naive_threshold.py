"""Slow, obviously correct twins for threshold functions and DAG circuits (pure Python ints).

Nothing here uses LPs, numpy linear algebra or the library's kernels: threshold functions are
found by enumerating small integer weights, DAGs are evaluated gate by gate with Python ints.
"""

from itertools import product


def bit(k, i):
    return (k >> i) & 1


def table_of(weights, threshold, n):
    return tuple(int(sum(w * bit(k, i) for i, w in enumerate(weights)) >= threshold)
                 for k in range(1 << n))


def brute_threshold_functions(n, wmax):
    """{table: (min sum|w|, min max|w|)} over all integer (w, t) with |w_i| <= wmax."""
    found = {}
    for w in product(range(-wmax, wmax + 1), repeat=n):
        sums = [sum(wi * bit(k, i) for i, wi in enumerate(w)) for k in range(1 << n)]
        s1, smax = sum(abs(v) for v in w), max((abs(v) for v in w), default=0)
        lo = -sum(abs(v) for v in w)
        for t in range(lo, -lo + 2):
            tab = tuple(int(s >= t) for s in sums)
            old = found.get(tab)
            if old is None:
                found[tab] = (s1, smax)
            else:
                found[tab] = (min(old[0], s1), min(old[1], smax))
    return found


def all_tables(n):
    return [tuple((code >> k) & 1 for k in range(1 << n)) for code in range(1 << (1 << n))]


def chow(table, n):
    F = [1 - 2 * v for v in table]
    return [sum(F)] + [sum(F[k] * (1 - 2 * bit(k, i)) for k in range(1 << n)) for i in range(n)]


def is_monotone(table, n):
    return all(table[k] <= table[k | (1 << i)] for k in range(1 << n) for i in range(n))


def check_summability(table, n, cert):
    """True iff the certificate proves `table` is not threshold (exact Python ints)."""
    ones, om, zeros, zm = (list(map(int, a)) for a in cert)
    if not ones or not zeros or min(om) <= 0 or min(zm) <= 0 or sum(om) != sum(zm):
        return False
    if any(table[k] != 1 for k in ones) or any(table[k] != 0 for k in zeros):
        return False
    lhs = [sum(m * bit(k, i) for k, m in zip(ones, om)) for i in range(n)]
    rhs = [sum(m * bit(k, i) for k, m in zip(zeros, zm)) for i in range(n)]
    return lhs == rhs


def dag_table(n_inputs, gates, output):
    """Truth table of a DAG given as [(name, type, inputs, weights, threshold)], gates in any order."""
    spec = {g[0]: g for g in gates}
    out = []
    for k in range(1 << n_inputs):
        memo = {}

        def val(ref):
            if isinstance(ref, tuple):
                return bit(k, ref[1])
            if ref not in memo:
                _, typ, ins, w, t = spec[ref]
                vals = [val(r) for r in ins]
                s = sum(vals)
                if typ == "AND":
                    memo[ref] = int(s == len(vals))
                elif typ == "OR":
                    memo[ref] = int(s >= 1)
                elif typ == "NOT":
                    memo[ref] = 1 - vals[0]
                elif typ == "MAJ":
                    memo[ref] = int(2 * s >= len(vals))
                elif typ == "XOR":
                    memo[ref] = s % 2
                else:
                    memo[ref] = int(sum(a * b for a, b in zip(w, vals)) >= t)
            return memo[ref]

        out.append(val(output))
    return out


def layered_table(circuit):
    """Truth table of a ThresholdCircuit, layer by layer with Python ints."""
    n = circuit.n_inputs
    out = []
    for k in range(1 << n):
        z = [bit(k, i) for i in range(n)]
        for layer in circuit.layers:
            z = [int(sum(int(w) * v for w, v in zip(row, z)) >= int(t))
                 for row, t in zip(layer.weights.tolist(), layer.thresholds.tolist())]
        out.append(z[0])
    return out
