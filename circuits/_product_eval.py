"""A layered depth-2 threshold circuit on a product set of inputs, by numpy, exactly.

The inputs are the pairs (L[a], R[b]) of two bit matrices (a circuit over a hard instance's
code bits: L = R = the codewords' bits).  The hidden gates are grouped by their weight row up
to sign (a trained network's staircase gives a few rows with many thresholds each).  For a group
with row key = (k_A, k_B), the pre-activation is p = <k_A, L[a]> + <k_B, R[b]> and gate j of
the group fires iff s_j p >= t_j (s_j = ±1); over the group's thresholds sorted once, the
weighted count of firing gates is a cumulative sum read at a binary-search position.  Integers
throughout (int64; every partial sum lies within the circuit's pre-activation bound < 2^63,
checked when the circuit was built).  No compiled kernel is involved: ``depthsep check`` and
the reduction's cross-check of its neuron-wise kernels use it.
"""

from __future__ import annotations

import numpy as np


def _groups(circuit, mL: int, mR: int):
    """Per group of rows equal up to sign: (key, up (sorted t, cumulative v), down (...))."""
    bottom, top = circuit.layers
    W = np.asarray(bottom.weights, dtype=np.int64)
    if circuit.depth != 2 or W.shape[1] != mL + mR or top.n_gates != 1:
        raise ValueError(f"need a depth-2 circuit on {mL} + {mR} inputs with one output gate, "
                         f"got depth {circuit.depth} on {W.shape[1]} inputs")
    t = np.asarray(bottom.thresholds, dtype=np.int64)
    v = np.asarray(top.weights, dtype=np.int64)[0]
    nz = W != 0
    first = np.where(nz.any(axis=1), nz.argmax(axis=1), 0)
    sign = np.where(W[np.arange(W.shape[0]), first] < 0, -1, 1)
    keys, inv = _unique_rows(W * sign[:, None])
    out = []
    for g in range(keys.shape[0]):
        sel = inv == g
        up, down = sel & (sign > 0), sel & (sign < 0)
        # up: fires iff p >= t_j; down: -p >= t_j, i.e. p <= u_j with u_j = -t_j
        tu, vu = t[up], v[up]
        o = np.argsort(tu, kind="stable")
        ud, vd = -t[down], v[down]
        q = np.argsort(ud, kind="stable")
        out.append((keys[g], tu[o], np.concatenate([[0], np.cumsum(vu[o])]),
                    ud[q], np.concatenate([[0], np.cumsum(vd[q])])))
    return out, int(np.asarray(top.thresholds)[0])


def _unique_rows(K):
    """(distinct rows, index of each row's distinct row): by a 64-bit hash of each row (integer
    arithmetic modulo 2^64), verified row by row; np.unique(axis=0) on a hash collision
    (sorting rows as a whole took a second for 40 000 rows of 48)."""
    mult = np.random.default_rng(0x5EED).integers(1, 1 << 62, size=K.shape[1], dtype=np.int64)
    with np.errstate(over="ignore"):
        h = (K * mult).sum(axis=1)
    _, first, inv = np.unique(h, return_index=True, return_inverse=True)
    inv = np.asarray(inv).ravel()
    keys = K[first]
    if not (K == keys[inv]).all():                    # a collision: the slow, exact way
        keys, inv = np.unique(K, axis=0, return_inverse=True)
        inv = np.asarray(inv).ravel()
    return keys, inv


def _dot(bits, key):
    """<key, bits[r]> for every row, exactly (float64 BLAS when the sums stay below 2^52)."""
    if int(np.abs(key).sum()) < 1 << 52:
        return (np.asarray(bits, dtype=np.float64) @ key.astype(np.float64)).astype(np.int64)
    return np.asarray(bits, dtype=np.int64) @ key


def _weighted_fired(p, tu, cu, ud, cd):
    """Σ v_j over the group's gates that fire at pre-activation(s) ``p``."""
    s = cu[np.searchsorted(tu, p, side="right")]             # up gates with t_j <= p
    return s + (cd[-1] - cd[np.searchsorted(ud, p, side="left")])   # down gates with u_j >= p


def depth2_product_bits(circuit, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """uint8 table out[a, b] of a layered depth-2 ``circuit`` at the inputs (left[a], right[b]).

    Parameters
    ----------
    circuit : circuits.ThresholdCircuit
        Depth 2, ``left.shape[1] + right.shape[1]`` inputs, one output gate.
    left, right : (#a, mL) and (#b, mR) arrays of 0/1
        The two halves of the inputs.

    Returns
    -------
    numpy.ndarray
        uint8, shape (#a, #b).
    """
    mL, mR = left.shape[1], right.shape[1]
    groups, t_out = _groups(circuit, mL, mR)
    S = np.zeros((left.shape[0], right.shape[0]), dtype=np.int64)
    for key, tu, cu, ud, cd in groups:
        p = _dot(left, key[:mL])[:, None] + _dot(right, key[mL:])[None, :]
        S += _weighted_fired(p, tu, cu, ud, cd)
    return (S >= t_out).astype(np.uint8)


def depth2_pair_bits(circuit, left: np.ndarray, right: np.ndarray, a, b) -> np.ndarray:
    """uint8 outputs of a layered depth-2 ``circuit`` at the inputs (left[a_i], right[b_i]).

    Parameters
    ----------
    circuit : circuits.ThresholdCircuit
        As for :func:`depth2_product_bits`.
    left, right : arrays of 0/1
        The two halves of the inputs.
    a, b : arrays of int
        The pairs, of one length.

    Returns
    -------
    numpy.ndarray
        uint8, shape (len(a),).
    """
    a, b = np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)
    L, R = np.asarray(left)[a], np.asarray(right)[b]
    groups, t_out = _groups(circuit, L.shape[1], R.shape[1])
    S = np.zeros(a.shape[0], dtype=np.int64)
    mL = L.shape[1]
    for key, tu, cu, ud, cd in groups:
        S += _weighted_fired(_dot(L, key[:mL]) + _dot(R, key[mL:]), tu, cu, ud, cd)
    return (S >= t_out).astype(np.uint8)
