"""circuits._simd (eight-word vectors of the compiled kernels) against numpy, word by word.

Each operation is compiled into a small kernel that applies it to every aligned group of eight
words of random arrays (plus all-zero, all-one and single-bit words) and compared with its
numpy definition (the carry as ``vcarry(vsum3(x, y, z), y, z)`` against the majority of x, y,
z); the AVX-512 ``vpternlogq`` path and the portable path are both checked (the
portable one by compiling with ``HAS_TERNLOG`` off), and a wrong truth table is shown to fail.
"""

import numba
import numpy as np
import pytest

from circuits import _simd

JIT_OFF = bool(numba.config.DISABLE_JIT)
M64 = np.uint64(0xFFFFFFFFFFFFFFFF)


def _words(seed, n=8 * (4 if JIT_OFF else 32)):
    rng = np.random.default_rng(seed)
    w = rng.integers(0, 2**64, size=n, dtype=np.uint64)
    w[:8] = 0
    w[8:16] = M64
    w[16:24] = np.uint64(1) << np.arange(8, dtype=np.uint64)
    return w


def _majority(a, b, c):
    out = np.zeros_like(a)
    for r in range(64):
        bit = np.uint64(1) << np.uint64(r)
        votes = ((a & bit) != 0).astype(int) + ((b & bit) != 0) + ((c & bit) != 0)
        out |= np.where(votes >= 2, bit, np.uint64(0))
    return out


def _popcounts(a):
    return sum(bin(int(x)).count("1") for x in a)


def _kernels():
    """Python functions over whole arrays, jitted unless the JIT is off."""
    from circuits._simd import vand, vcarry, vload, vnot, vor, vpop, vsplat, vsum3, vxor

    def apply3(a, b, c, op_id):
        """Per aligned group: the population count of op(a, b, c) restricted to each single bit
        position of each word is read back, so the result is compared bit for bit."""
        n = a.shape[0]
        out = np.zeros(n, dtype=np.uint64)
        probe = np.zeros(8, dtype=np.uint64)
        for i in range(0, n, 8):
            x = vload(a, np.uint64(i))
            y = vload(b, np.uint64(i))
            z = vload(c, np.uint64(i))
            if op_id == 0:
                r = vsum3(x, y, z)
            elif op_id == 1:
                r = vcarry(vsum3(x, y, z), y, z)
            elif op_id == 2:
                r = vxor(x, y)
            elif op_id == 3:
                r = vand(x, y)
            elif op_id == 4:
                r = vor(x, y)
            elif op_id == 5:
                r = vnot(x)
            else:
                r = vsplat(a[i])
            for k in range(8):
                for bitpos in range(64):
                    probe[:] = 0
                    probe[k] = np.uint64(1) << np.uint64(bitpos)
                    if vpop(vand(r, vload(probe, np.uint64(0)))) > 0:
                        out[i + k] |= np.uint64(1) << np.uint64(bitpos)
        return out

    def pops(a):
        n = a.shape[0]
        out = np.zeros(n // 8, dtype=np.int64)
        for i in range(0, n, 8):
            out[i // 8] = vpop(vload(a, np.uint64(i)))
        return out

    if JIT_OFF:
        return apply3, pops
    return numba.njit(apply3), numba.njit(pops)


OPS = {0: lambda a, b, c: a ^ b ^ c, 1: _majority, 2: lambda a, b, c: a ^ b,
       3: lambda a, b, c: a & b, 4: lambda a, b, c: a | b, 5: lambda a, b, c: a ^ M64,
       6: lambda a, b, c: np.repeat(a[::8], 8)}


@pytest.mark.parametrize("ternlog", [True, False])
def test_vector_operations_equal_their_numpy_definitions(ternlog, monkeypatch):
    if ternlog and not _simd.HAS_TERNLOG:
        pytest.skip("this CPU (or the JIT-off run) has no AVX-512 vpternlogq")
    monkeypatch.setattr(_simd, "HAS_TERNLOG", ternlog)       # read when a kernel compiles
    apply3, pops = _kernels()
    a, b, c = _words(1), _words(2), _words(3)
    for op_id, ref in OPS.items():
        assert np.array_equal(apply3(a, b, c, op_id), ref(a, b, c)), op_id
    assert pops(a).tolist() == [_popcounts(a[i:i + 8]) for i in range(0, a.size, 8)]


@pytest.mark.skipif(JIT_OFF, reason="the planted bug is in the compiled intrinsic")
def test_negative_control_a_wrong_truth_table_is_caught(monkeypatch):
    """vcarry with truth table 0x8F (one input pattern flipped) must fail the check."""
    wrong = _simd._ternary(0x8F, lambda bd, a, b, c: bd.not_(bd.or_(bd.or_(a, b), c)))
    monkeypatch.setattr(_simd, "vcarry", wrong)
    apply3, _ = _kernels()
    a, b, c = _words(1), _words(2), _words(3)
    assert not np.array_equal(apply3(a, b, c, 1), _majority(a, b, c))
