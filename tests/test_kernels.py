"""Fast circuit kernels (circuits._kernels via circuits.simulate) against naive Python-int twins.

Every comparison is on the whole cube for small N.  Circuits are random with many exact ties
(thresholds equal to w . z for a random z), weights up to 2^20 and magnitudes exactly at the
int16 / int32 switching bounds, so every working-dtype path and every tile geometry runs.
"""

import functools
import os
import subprocess
import sys

import numba
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import circuits as c
from circuits import _lowhigh_args, dispatch, simulate
from circuits.utils.errors import DimensionError, InvalidCircuitError
from circuits.functions import ThresholdFunction, TruthTable
from circuits.threshold import ThresholdCircuit, ThresholdLayer
from tests import naive, naive_kernels

JIT_OFF = bool(numba.config.DISABLE_JIT)


def by_jit(jit_on, jit_off):
    """Sizes of a whole-cube sweep: the full list compiled, a smaller one as plain Python.

    With ``NUMBA_DISABLE_JIT=1`` the kernels run as Python, so the same sweeps run at smaller N
    (the pure-Python path is exercised, not skipped)."""
    return jit_off if JIT_OFF else jit_on


def random_circuit(rng, N, widths, *, wmax=8, ties=True):
    """Random layered circuit; with ``ties`` every threshold is hit exactly by some input."""
    layers, n_in = [], N
    for g in list(widths) + [1]:
        W = rng.integers(-wmax, wmax + 1, size=(g, n_in))
        if ties:
            z = rng.integers(0, 2, size=(g, n_in))
            t = (W * z).sum(axis=1)
        else:
            t = rng.integers(-wmax * n_in // 2, wmax * n_in // 2 + 1, size=g)
        layers.append(ThresholdLayer(W, t))
        n_in = g
    return ThresholdCircuit(tuple(layers))


def scaled_to_bound(circuit, bound):
    """Same gates with layer 0 rescaled so its pre-activation bound is exactly ``bound``."""
    first = circuit.layers[0]
    W = [[int(w) for w in row] for row in first.weights.tolist()]
    t = [int(v) for v in first.thresholds.tolist()]
    j = max(range(len(W)), key=lambda r: sum(abs(w) for w in W[r]) + abs(t[r]))
    # put the slack into one weight of the widest gate so that gate's bound is exactly `bound`
    row_bound = sum(abs(w) for w in W[j]) + abs(t[j])
    i = max(range(len(W[j])), key=lambda col: abs(W[j][col]))
    W[j][i] = (abs(W[j][i]) + bound - row_bound) * (1 if W[j][i] >= 0 else -1)
    layer = ThresholdLayer(W, t)
    assert layer.preactivation_bound == bound
    return ThresholdCircuit((layer,) + circuit.layers[1:])


PATHS = ["serial", "parallel"]


@pytest.fixture(autouse=True)
def lowhigh_kernel(monkeypatch):
    """These tests are about the low/high kernel, so "auto" means it here; the bit-sliced kernel
    has its own twins in tests/test_bitsliced.py."""
    orig = simulate._plan_of

    def pinned(circuit, kernel="auto", **kw):
        return orig(circuit, "lowhigh" if kernel == "auto" else kernel, **kw)

    monkeypatch.setattr(simulate, "_plan_of", pinned)


def force_path(monkeypatch, path):
    """Send every job to the serial block functions or to the parallel (prange) kernels."""
    limit = 1 << 62 if path == "serial" else 0
    monkeypatch.setattr(simulate, "_SERIAL_CUBE_WORK", limit)
    monkeypatch.setattr(simulate, "_SERIAL_ROWS_WORK", limit)


def naive_table(circuit):
    return naive.circuit_table(naive.layers_of(circuit), circuit.n_inputs)


# --- working dtype ------------------------------------------------------------------------

@pytest.mark.parametrize("bound", [0, 1, 32767, 32768, 2**31 - 1, 2**31, 2**62, 2**63 - 1])
def test_work_dtype_is_the_narrowest_that_holds_the_bound(bound):
    assert str(dispatch.work_dtype(bound)) == naive_kernels.work_dtype_name(bound)


def test_work_dtype_refuses_beyond_int64():
    with pytest.raises(InvalidCircuitError, match="exceeds int64"):
        dispatch.work_dtype(2**63)


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("bound, dtype", [(32767, "int16"), (32768, "int32"), (2**31 - 1, "int32"),
                                          (2**31, "int64"), (2**62 + 5, "int64")])
def test_each_dtype_path_exact_at_the_switching_bound(bound, dtype, path, monkeypatch):
    force_path(monkeypatch, path)
    rng = np.random.default_rng(bound % 1000)
    for widths in [(5,), (4, 3)]:
        circ = scaled_to_bound(random_circuit(rng, 7, widths), bound)
        wflat, tflat, sizes, _ = simulate._circuit_kernel_args(circ)
        assert str(wflat.dtype) == dtype and str(tflat.dtype) == dtype
        ref = naive_table(circ)
        assert c.truth_table(circ).tolist() == ref
        assert c.count_ones(circ) == sum(ref)
        assert c.evaluate(circ, c.points(7)).tolist() == ref


def _int16_limit_rows(sign):
    """Gates on N = 3 inputs with pre-activation bound sum |w| + |t| = 32767 (one: 32766).

    Stored values w . x - t reach sign * 32767 (through the weights or through the threshold),
    and every gate but the constant one has a threshold that some input hits exactly.
    """
    s = sign
    return [([s * 16384, s * 16383, 0], 0),
            ([s * 32767, 0, 0], 0),
            ([s * 8192, s * 8191, s * 16384], 0),
            ([s * 8192, s * 8191, 0], s * 16383),          # tie at the top end, x = (1, 1, *)
            ([0, s * 16383, 0], -s * 16384),               # constant gate: the limit via -t
            ([s * 16384, -s * 16383, 0], 0)]


_INT16_LIMIT_OUT = ([8192, 4096, -8191, -8191, 0, -4096], 1)     # bound 32766 + 1 = 32767


@pytest.mark.parametrize("low_bits", [None, 1])
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("sign", [1, -1])
def test_values_at_the_int16_limit_both_signs(sign, path, low_bits, monkeypatch):
    """Partial sums reach +32767 / -32767 exactly in int16, with ties, in every kernel path.

    ``low_bits=1`` splits the 3 inputs so the high-bit columns (cb) carry the limit values too.
    """
    force_path(monkeypatch, path)
    if low_bits is not None:
        monkeypatch.setattr(_lowhigh_args, "_MAX_LOW_BITS", low_bits)
        monkeypatch.setattr(_lowhigh_args, "_MIN_LOW_BITS", 0)
    rows = _int16_limit_rows(sign)
    cube = [[naive.bit(k, i) for i in range(3)] for k in range(8)]
    stored = [[sum(w * b for w, b in zip(row, x)) - t for x in cube] for row, t in rows]
    # the data are really at the limit and really tie (so this test cannot go vacuous)
    assert max(sign * v for vals in stored for v in vals) == 32767
    assert all(0 in vals for vals in stored[:4] + stored[5:])
    for row, t in rows:
        gate = ThresholdCircuit.single_gate(row, t)
        assert gate.layers[0].preactivation_bound <= 32767
        assert str(simulate._circuit_kernel_args(gate)[0].dtype) == "int16"
        assert c.truth_table(gate).tolist() == naive_table(gate), (row, t)
    hidden = ThresholdLayer([row for row, _ in rows], [t for _, t in rows])
    out = ThresholdLayer([_INT16_LIMIT_OUT[0]], [_INT16_LIMIT_OUT[1]])
    assert hidden.preactivation_bound == out.preactivation_bound == 32767
    hidden_values = [[naive.gate(row, t, x) for row, t in rows] for x in cube]
    assert any(sum(w * b for w, b in zip(_INT16_LIMIT_OUT[0], h)) == _INT16_LIMIT_OUT[1]
               for h in hidden_values)                       # the output gate ties too
    circ = ThresholdCircuit((hidden, out))
    assert str(simulate._circuit_kernel_args(circ)[0].dtype) == "int16"
    ref = naive_table(circ)
    assert 0 < sum(ref) < 8
    assert c.truth_table(circ).tolist() == ref
    assert c.count_ones(circ) == sum(ref)
    assert c.evaluate(circ, c.points(3)).tolist() == ref
    assert c.evaluate_indices(circ, np.arange(8)).tolist() == ref


def test_output_layer_bound_alone_selects_the_dtype():
    hidden = ThresholdLayer([[1, 1], [1, -1], [0, 1]], [1, 0, 1])
    out = ThresholdLayer([[40000, -40000, 1]], [1])
    circ = ThresholdCircuit((hidden, out))
    assert str(simulate._circuit_kernel_args(circ)[0].dtype) == "int32"
    assert c.truth_table(circ).tolist() == naive_table(circ)


# --- whole-cube agreement -----------------------------------------------------------------

@pytest.mark.parametrize("N", by_jit([1, 2, 5, 8, 11], [1, 2, 5, 8]))
@pytest.mark.parametrize("widths", [(), (1,), (6,), (5, 4), (3, 4, 2)])
@pytest.mark.parametrize("wmax", [8, 2**20])
@pytest.mark.parametrize("path", PATHS)
def test_truth_table_and_counts_match_naive(N, widths, wmax, path, monkeypatch):
    force_path(monkeypatch, path)
    rng = np.random.default_rng(1000 * N + 10 * len(widths) + (wmax > 8))
    circ = random_circuit(rng, N, widths, wmax=wmax)
    ref = naive_table(circ)
    assert c.truth_table(circ).tolist() == ref
    assert c.count_ones(circ) == sum(ref)


@pytest.mark.parametrize("low_bits", [1, 2, 3])
@pytest.mark.parametrize("widths", [(4,), (3, 3)])
@pytest.mark.parametrize("path", PATHS)
def test_small_tiles_many_high_values(monkeypatch, low_bits, widths, path):
    """Tiles of 2^L points with L < N: the high block is nonzero and tiles are many."""
    force_path(monkeypatch, path)
    monkeypatch.setattr(_lowhigh_args, "_MAX_LOW_BITS", low_bits)   # where _low_bits reads them
    monkeypatch.setattr(_lowhigh_args, "_MIN_LOW_BITS", 0)
    rng = np.random.default_rng(low_bits)
    for N in (1, low_bits, low_bits + 1, 9):
        circ = random_circuit(rng, N, widths, wmax=50)
        assert simulate._circuit_kernel_args(circ)[3] == min(N, low_bits)
        ref = naive_table(circ)
        assert c.truth_table(circ).tolist() == ref
        assert c.count_disagreements(circ, "parity").count == sum(
            a != b for a, b in zip(ref, naive.parity(N)))


def test_small_jobs_stay_serial_and_large_ones_go_parallel(monkeypatch):
    calls = []
    real_run, real_block = simulate._kernels._cube_run, simulate._kernels._cube_block
    monkeypatch.setattr(simulate._kernels, "_cube_run",
                        lambda *a: calls.append("parallel") or real_run(*a))
    monkeypatch.setattr(simulate._kernels, "_cube_block",
                        lambda *a: calls.append("serial") or real_block(*a))
    circ = random_circuit(np.random.default_rng(1), 6, (3,))
    c.count_ones(circ)
    monkeypatch.setattr(simulate, "_SERIAL_CUBE_WORK", 0)
    c.count_ones(circ)
    # (with the JIT off the parallel kernel is Python and calls the patched block function too)
    assert calls[:2] == ["serial", "parallel"]


def test_low_bits_shrink_for_wide_first_layers():
    rng = np.random.default_rng(0)
    narrow = random_circuit(rng, 20, (8,))
    wide = random_circuit(rng, 20, (2000,), wmax=1)
    assert simulate._circuit_kernel_args(narrow)[3] == dispatch._MAX_LOW_BITS
    low = simulate._circuit_kernel_args(wide)[3]
    assert dispatch._MIN_LOW_BITS <= low < dispatch._MAX_LOW_BITS
    assert 2000 * 2 << low <= dispatch._LOW_TABLE_BYTES
    assert simulate._circuit_kernel_args(random_circuit(rng, 3, (5,)))[3] == 3   # L = N < 12


def test_low_table_matches_twin():
    from circuits import _kernels
    rng = np.random.default_rng(3)
    W = rng.integers(-9, 10, size=(4, 6))
    t = rng.integers(-9, 10, size=4)
    for L in range(0, 7):
        P = _kernels._low_table(W.ravel().astype(np.int32), t.astype(np.int32), 6, 4, L)
        assert P.dtype == np.int32 and P.tolist() == naive_kernels.low_table(W.tolist(), t.tolist(), L)


# --- counting against targets, on arbitrary index ranges ------------------------------------

def _targets(N, rng):
    table = rng.integers(0, 2, size=1 << N).astype(np.uint8)
    w = rng.integers(-3, 4, size=N)
    out = [("const", c.Constant(N, 1), 1, None), ("parity", "parity", None, None),
           ("majority", "majority", None, None), ("table", TruthTable(table), None, table),
           ("table", table, None, table), ("linear", ThresholdFunction(w, 1), (w, 1), None)]
    if N % 2 == 0:
        out.append(("ip", "ip", None, None))
    return out


@pytest.mark.parametrize("N", by_jit([2, 6, 9, 10], [2, 6, 9]))
@pytest.mark.parametrize("path", PATHS)
def test_disagreements_match_naive_for_every_target_kind(N, path, monkeypatch):
    force_path(monkeypatch, path)
    rng = np.random.default_rng(N)
    circ = random_circuit(rng, N, (5,), wmax=20)
    values = naive_table(circ)
    for kind, target, params, table in _targets(N, rng):
        tv = [naive_kernels.target_value(kind, k, N, params, table) for k in range(1 << N)]
        count, first = naive_kernels.count_first(values, tv, 0, 1 << N)
        got = c.count_disagreements(circ, target)
        assert (got.count, got.index) == (count, first), kind
        if first >= 0:
            assert got.counterexample.tolist() == [naive.bit(first, i) for i in range(N)]


@pytest.mark.parametrize("widths", [(6,), (4, 5)])
@pytest.mark.parametrize("path", PATHS)
def test_chunks_at_unaligned_ranges(monkeypatch, widths, path):
    """The (count, first) unit of work on [start, stop) ranges that cut tiles anywhere."""
    force_path(monkeypatch, path)
    monkeypatch.setattr(_lowhigh_args, "_MAX_LOW_BITS", 4)
    N = by_jit(10, 8)
    rng = np.random.default_rng(len(widths))
    circ = random_circuit(rng, N, widths, wmax=9)
    values = naive_table(circ)
    spec = c.InnerProductMod2(N // 2)._spec()
    tv = [naive_kernels.target_value("ip", k, N) for k in range(1 << N)]
    packed = simulate._circuit_kernel_args(circ)
    top = 1 << N
    bounds = [(0, top), (0, 1), (5, 6), (3, 17), (15, 16), (16, 48), (17, top - 24),
              (top - 1, top), (7, 7)] + [tuple(sorted(rng.integers(0, top + 1, size=2)))
                                         for _ in range(20)]
    for start, stop in bounds:
        start, stop = int(start), int(stop)
        assert simulate._disagree_chunk(packed, spec, start, stop) == \
            naive_kernels.count_first(values, tv, start, stop), (start, stop)


def test_chunked_run_equals_single_run():
    rng = np.random.default_rng(11)
    N = by_jit(14, 8)
    circ = random_circuit(rng, N, (7,))
    whole = c.count_disagreements(circ, "ip")
    assert whole.count > 0                      # a first index to find in every chunking
    for chunk_bits in by_jit((3, 9, 13), (2, 5, 7)):
        got = c.count_disagreements(circ, "ip", chunk_bits=chunk_bits)
        assert (got.count, got.index) == (whole.count, whole.index)


# --- evaluate / evaluate_indices ------------------------------------------------------------

@pytest.mark.parametrize("N", by_jit([1, 3, 7, 10], [1, 3, 7]))
@pytest.mark.parametrize("widths", [(), (4,), (6, 3), (2, 5, 3)])
@pytest.mark.parametrize("path", PATHS)
def test_evaluate_on_the_whole_cube_and_on_subsets(N, widths, path, monkeypatch):
    force_path(monkeypatch, path)
    rng = np.random.default_rng(N + 7 * len(widths))
    circ = random_circuit(rng, N, widths, wmax=2**20)
    ref = np.array(naive_table(circ), dtype=np.uint8)
    bits = c.points(N)
    assert c.evaluate(circ, bits).tolist() == ref.tolist()
    assert c.evaluate(circ, bits.astype(bool)).tolist() == ref.tolist()
    assert c.evaluate(circ, bits.astype(np.float64)).tolist() == ref.tolist()
    k = rng.integers(0, 1 << N, size=(3, 37))
    assert c.evaluate_indices(circ, k).tolist() == ref[k].tolist()
    assert c.evaluate(circ, bits[k[0]]).tolist() == ref[k[0]].tolist()
    assert c.evaluate_indices(circ, np.arange(1 << N)).tolist() == ref.tolist()


@functools.lru_cache(maxsize=None)
def _wide_case():
    """1500 gates in layer 1 (the rows tile shrinks below 1024 points) and its naive table."""
    circ = random_circuit(np.random.default_rng(5), 6, (1500, 5), wmax=3)
    return circ, naive_table(circ)


@pytest.mark.parametrize("path", PATHS)
def test_evaluate_wide_circuit_many_tiles(path, monkeypatch):
    """A wide circuit; batch sizes that cut the last tile anywhere; depth-3 cube path too."""
    force_path(monkeypatch, path)
    circ, ref = _wide_case()
    ref = np.array(ref, dtype=np.uint8)
    rng = np.random.default_rng(6)
    for m in (1, 17, 511, 513, 1500):
        k = rng.integers(0, 64, size=m)
        assert c.evaluate_indices(circ, k).tolist() == ref[k].tolist()
    assert c.evaluate_indices(circ, np.arange(64)).tolist() == c.truth_table(circ).tolist() \
        == ref.tolist()


def test_evaluate_single_row_and_empty_batch():
    xor = ThresholdCircuit.depth2([[1, 1], [1, 1]], [1, 2], [1, -1], 1)
    assert c.evaluate(xor, [1, 0]).tolist() == [1]
    assert c.evaluate(xor, np.zeros((0, 2))).tolist() == []
    assert c.evaluate_indices(xor, np.zeros((0,), dtype=np.int64)).tolist() == []
    assert c.evaluate_indices(xor, 3).tolist() == 0 and c.evaluate_indices(xor, 3).shape == ()


def test_evaluate_errors_name_the_problem():
    xor = ThresholdCircuit.depth2([[1, 1], [1, 1]], [1, 2], [1, -1], 1)
    with pytest.raises(DimensionError, match=r"shape \(n_points, 2\)"):
        c.evaluate(xor, np.zeros((4, 3)))
    with pytest.raises(InvalidCircuitError, match="only 0 and 1, found 2"):
        c.evaluate(xor, [[0, 2]])
    with pytest.raises(InvalidCircuitError, match="only 0 and 1"):
        c.evaluate(xor, [[0.5, 1]])
    with pytest.raises(InvalidCircuitError, match="numeric"):
        c.evaluate(xor, np.array([["a", "b"]]))
    with pytest.raises(DimensionError, match=r"\[0, 2\^2\).*found 4"):
        c.evaluate_indices(xor, [0, 4])
    with pytest.raises(DimensionError, match="found -1"):
        c.evaluate_indices(xor, [-1])
    with pytest.raises(DimensionError, match="found"):
        c.evaluate_indices(xor, np.array([2**64 - 1], dtype=np.uint64))
    with pytest.raises(TypeError, match="integer point indices"):
        c.evaluate_indices(xor, [0.0, 1.0])
    big = ThresholdCircuit.single_gate(np.ones(63, dtype=np.int64), 1)
    with pytest.raises(DimensionError, match="N <= 62"):
        c.evaluate_indices(big, [0])
    with pytest.raises(TypeError, match="ThresholdCircuit"):
        c.evaluate("not a circuit", [[0, 1]])


# --- property-based --------------------------------------------------------------------------

@st.composite
def small_circuits(draw):
    N = draw(st.integers(1, 6))
    depth = draw(st.integers(1, 3))
    big = draw(st.sampled_from([3, 200, 2**20, 2**40]))
    layers, n_in = [], N
    for layer in range(depth):
        g = 1 if layer == depth - 1 else draw(st.integers(1, 4))
        W = draw(st.lists(st.lists(st.integers(-big, big), min_size=n_in, max_size=n_in),
                          min_size=g, max_size=g))
        # thresholds: either a tie (w . z for a drawn z) or arbitrary
        t = []
        for row in W:
            z = draw(st.lists(st.integers(0, 1), min_size=n_in, max_size=n_in))
            tie = sum(w * b for w, b in zip(row, z))
            t.append(draw(st.sampled_from([tie, tie + 1, tie - 1, 0])))
        layers.append(ThresholdLayer(W, t))
        n_in = g
    return ThresholdCircuit(tuple(layers))


@settings(max_examples=by_jit(60, 20), deadline=None)
@given(small_circuits())
def test_property_all_kernels_agree_with_naive(circ):
    ref = naive_table(circ)
    N = circ.n_inputs
    for path in PATHS:
        with pytest.MonkeyPatch.context() as mp:
            force_path(mp, path)
            assert c.truth_table(circ).tolist() == ref
            assert c.evaluate(circ, c.points(N)).tolist() == ref
            assert c.evaluate_indices(circ, np.arange(1 << N)).tolist() == ref
            got = c.count_disagreements(circ, "parity")
            assert (got.count, got.index) == naive_kernels.count_first(ref, naive.parity(N), 0,
                                                                        1 << N)


# --- JIT off: a tiny subset runs as plain Python -----------------------------------------------

_JIT_OFF_SCRIPT = """
import numpy as np, circuits as c
from circuits.threshold import ThresholdCircuit, ThresholdLayer
from tests import naive
rng = np.random.default_rng(0)
W = rng.integers(-40000, 40001, size=(3, 4)); z = rng.integers(0, 2, size=(3, 4))
hidden = ThresholdLayer(W, (W * z).sum(1))
for circ in (ThresholdCircuit((hidden, ThresholdLayer([[2, -1, 1]], [1]))),
             ThresholdCircuit((hidden, ThresholdLayer([[1, 1, 1], [1, -1, 0]], [1, 0]),
                               ThresholdLayer([[1, 1]], [2])))):
    ref = naive.circuit_table(naive.layers_of(circ), 4)
    assert c.truth_table(circ).tolist() == ref
    assert c.count_ones(circ) == sum(ref)
    assert c.count_disagreements(circ, "ip").count == sum(a != b for a, b in zip(ref, naive.ip_mod2(2)))
    assert c.evaluate(circ, c.points(4)).tolist() == ref
    assert c.evaluate_indices(circ, np.arange(16)).tolist() == ref
print("jit-off ok")
"""


def test_tiny_subset_with_the_jit_disabled():
    if JIT_OFF:
        exec(compile(_JIT_OFF_SCRIPT, "<jit-off>", "exec"), {})
        return
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    res = subprocess.run([sys.executable, "-W", "ignore::RuntimeWarning", "-c", _JIT_OFF_SCRIPT],
                         cwd=root, env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    assert "jit-off ok" in res.stdout


def test_function_truth_tables_over_several_thread_ranges_match_naive():
    """BooleanFunction.truth_table runs ranges of 2^16 on threads (serial kernel
    ``_table_target_range``): on 2^18 points every kind agrees with a pure-Python twin, and a
    shifted start (``start`` != 0) reads the right indices."""
    from circuits import functions as F
    from circuits import _kernels

    k = np.arange(1 << 18)
    pop = np.array([bin(int(v)).count("1") for v in k])
    ip = np.array([bin(int(v) & int(v) >> 9 & 511).count("1") & 1 for v in k])
    kind, params, table = F.InnerProductMod2(9)._spec()
    assert _kernels._table_target(kind, params, table, 0, 1 << 18).tolist() == ip.tolist()
    assert F.Parity(18).truth_table().tolist() == (pop & 1).tolist()
    assert F.Majority(18).truth_table().tolist() == (pop >= 9).astype(int).tolist()
    kind, params, table = F.Parity(18)._spec()
    assert _kernels._table_target(kind, params, table, 5, 70000).tolist() == (pop[5:70000] & 1).tolist()
    assert F.Parity(18).truth_table().tolist() != F.Majority(18).truth_table().tolist()


@pytest.mark.parametrize("n", range(1, 10))
def test_inner_product_table_by_numpy_equals_the_kernel_table(n):
    """inner_product_mod2 (numpy slices, nothing to compile) against the kernel's IP target."""
    from circuits import _kernels as _kernels_mod
    from circuits import functions as F

    kind, params, table = F.InnerProductMod2(n)._spec()
    kernel = _kernels_mod._table_target(kind, params, table, 0, 1 << (2 * n))
    assert F.inner_product_mod2(n).tolist() == kernel.tolist()
    assert F.InnerProductMod2(n).truth_table().tolist() == kernel.tolist()
    assert F.inner_product_mod2(n).tolist() != F.Parity(2 * n).truth_table().tolist()
