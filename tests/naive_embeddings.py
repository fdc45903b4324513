"""Slow, obviously correct twins of the embeddings kernels (Python ints and plain loops).

Each twin recomputes from the definitions of THEORY §2 without sharing code with the library:
codewords from the generator rows by XOR of Python ints, distances coordinate by coordinate,
minima by brute force over every pair.
"""

import math


def codeword(generator, a):
    """C(a) as a Python int mask (bit j = coordinate j): XOR of the rows of the set bits of a."""
    word = 0
    for i, row in enumerate(generator):
        if (a >> i) & 1:
            word ^= sum(int(bit) << j for j, bit in enumerate(row))
    return word


def min_distance(generator):
    """(d, {messages of weight d}) over the non-zero messages, by brute force."""
    n = len(generator)
    weights = {a: bin(codeword(generator, a)).count("1") for a in range(1, 1 << n)}
    d = min(weights.values())
    return d, {a for a, w in weights.items() if w == d}


def embed(generator, a, scale):
    """Phi(a) as a list of floats: +scale on codeword bit 1, -scale on 0."""
    m = len(generator[0])
    c = codeword(generator, a)
    return [scale if (c >> j) & 1 else -scale for j in range(m)]


def sqdist_table(generator, X, centre, half):
    """T[i][a] = sum_j max(|x_j - c_j(a)| - half, 0)^2 with c_j(a) = +-centre."""
    n, m = len(generator), len(generator[0])
    out = []
    for x in X:
        row = []
        for a in range(1 << n):
            c = codeword(generator, a)
            acc = 0.0
            for j in range(m):
                cj = centre if (c >> j) & 1 else -centre
                e = abs(float(x[j]) - cj) - half
                if e > 0:
                    acc += e * e
            row.append(acc)
        out.append(row)
    return out


def min_over_label(U, V, label):
    """[min over (a, b) with popcount(a & b) % 2 == label of U[i][a] + V[i][b]] (inf if none)."""
    out = []
    for u, v in zip(U, V):
        best = math.inf
        for a in range(len(u)):
            for b in range(len(v)):
                if bin(a & b).count("1") % 2 == label:
                    best = min(best, float(u[a]) + float(v[b]))
        out.append(best)
    return out


def ip(k, n):
    return bin((k & ((1 << n) - 1)) & (k >> n)).count("1") % 2


def hard_boxes(generator, tau):
    """[(lo, hi, label)] for every pair k = a + 2^n b of the box distribution mu_tau."""
    n, m = len(generator), len(generator[0])
    s = 1 / math.sqrt(2 * m)
    c, h = s / (1 + tau), tau * s / (1 + tau)
    boxes = []
    for k in range(1 << 2 * n):
        a, b = k & ((1 << n) - 1), k >> n
        ca, cb = codeword(generator, a), codeword(generator, b)
        centre = [c if (ca >> j) & 1 else -c for j in range(m)] + \
                 [c if (cb >> j) & 1 else -c for j in range(m)]
        boxes.append(([v - h for v in centre], [v + h for v in centre], ip(k, n)))
    return boxes


def cube_boxes(n):
    """[(lo, hi, label)] of the cells of the R-cube variant."""
    boxes = []
    for k in range(1 << 2 * n):
        lo = [0.75 if (k >> j) & 1 else 0.0 for j in range(2 * n)]
        boxes.append((lo, [v + 0.25 for v in lo], ip(k, n)))
    return boxes


def box_distance(x, lo, hi):
    return math.sqrt(sum(max(0.0, l - v, v - h) ** 2 for v, l, h in zip(x, lo, hi)))


def distance_to_label(boxes, x, label):
    """Brute-force distance of x to the union of the boxes with that label."""
    return min(box_distance(x, lo, hi) for lo, hi, lab in boxes if lab == label)


def boxes_gap(boxes):
    """Brute-force distance between the label-0 and the label-1 boxes."""
    best = math.inf
    for lo0, hi0, l0 in boxes:
        if l0:
            continue
        for lo1, hi1, l1 in boxes:
            if not l1:
                continue
            d2 = sum(max(0.0, a - d, c - b) ** 2 for a, b, c, d in zip(lo0, hi0, lo1, hi1))
            best = min(best, d2)
    return math.sqrt(best)
