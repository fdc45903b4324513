"""Slow, obviously correct twins for spectral / communication / bounds code.

Python ints and direct sums over the cube only (they double as overflow oracles).
"""

from fractions import Fraction


def popcount(k):
    return bin(k).count("1")


def chi(u, z):
    return -1 if popcount(u & z) % 2 else 1


def walsh(values):
    """W[u] = sum_z v[z] chi_u(z), O(4^N), Python numbers."""
    n = len(values)
    return [sum(v * chi(u, z) for z, v in enumerate(values)) for u in range(n)]


def walsh_of_table(table):
    return walsh([1 - 2 * int(b) for b in table])


def level_sums(table):
    N = len(table).bit_length() - 1
    w = walsh_of_table(table)
    out = [0] * (N + 1)
    for u, x in enumerate(w):
        out[popcount(u)] += x * x
    return out


def degree(table):
    w = walsh_of_table(table)
    nz = [popcount(u) for u, x in enumerate(w) if x != 0]
    return max(nz) if nz else -1


def influences(table):
    """Inf_i = P_x[f(x) != f(x ^ e_i)] as Fractions."""
    n = len(table)
    N = n.bit_length() - 1
    return [Fraction(sum(table[k] != table[k ^ (1 << i)] for k in range(n)), n) for i in range(N)]


def noise_sensitivity(table, delta):
    """P[f(x) != f(y)] by summing over all (x, y) pairs with weight delta^d (1-delta)^(N-d)."""
    n = len(table)
    N = n.bit_length() - 1
    delta = Fraction(delta)
    total = Fraction(0)
    for x in range(n):
        for y in range(n):
            if table[x] != table[y]:
                d = popcount(x ^ y)
                total += delta ** d * (1 - delta) ** (N - d)
    return total / n


def correlation(t1, t2):
    return Fraction(sum(1 if a == b else -1 for a, b in zip(t1, t2)), len(t1))


def ip_value(x, y):
    return popcount(x & y) % 2


def gate_counts(weights, threshold, n):
    """(|G|, |G & A_1|, sum H g) for g = [w . (x, y) >= t] over all 4^n points (x low bits)."""
    ones = ones1 = s = 0
    for k in range(1 << (2 * n)):
        z = [(k >> i) & 1 for i in range(2 * n)]
        g = sum(w * b for w, b in zip(weights, z)) >= threshold
        x, y = k & ((1 << n) - 1), k >> n
        ip = ip_value(x, y)
        if g:
            ones += 1
            ones1 += ip
            s += 1 - 2 * ip
    return ones, ones1, s


def rectangle_sum(M, X, Y):
    return sum(int(M[x][y]) for x in X for y in Y)


def hadamard_entry(x, y):
    return 1 - 2 * ip_value(x, y)


def least_int_at_least(pred, start=0):
    s = start
    while not pred(s):
        s += 1
    return s
