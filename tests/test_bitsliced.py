"""The bit-sliced kernel (circuits._kernels_bitsliced) against naive Python-int twins.

Whole-cube comparisons for small N: truth tables, counts and first counterexamples for every
target kind, exact ties, negative weights, zero rows, thresholds outside the reachable range,
depth 1 to 4, serial and parallel paths, unaligned [start, stop) slices; hypothesis picks random
small circuits.  The IP fast path (n >= LB) is checked on 2^24 points against the closed form
of #IP = 1 and against the low/high kernel (itself naive-twin tested in test_kernels.py).
"""

import numba
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import circuits as c
from circuits import _bitsliced_plan as bplan, _kernels_bitsliced as bits, dispatch, simulate
from circuits.utils.errors import InvalidCircuitError
from circuits.functions import ThresholdFunction, TruthTable
from circuits.threshold import ThresholdCircuit, ThresholdLayer
from tests import naive, naive_kernels

JIT_OFF = bool(numba.config.DISABLE_JIT)
needs_jit = pytest.mark.skipif(JIT_OFF, reason="whole-cube sweeps are too slow with the JIT off")
PATHS = ["serial", "parallel"]


def force_path(monkeypatch, path):
    monkeypatch.setattr(dispatch, "_SERIAL_BITS_WORK", 1 << 62 if path == "serial" else 0)


def random_circuit(rng, N, widths, *, wmax=8, mode="ties"):
    """Random layered circuit.  ``mode``: "ties" (t = w . z for a random z, so ties occur),
    "outside" (thresholds beyond the reachable range on both sides, mixed with ties),
    "wide" (thresholds uniform in a range wider than the reachable one)."""
    layers, n_in = [], N
    for g in list(widths) + [1]:
        W = rng.integers(-wmax, wmax + 1, size=(g, n_in))
        z = rng.integers(0, 2, size=(g, n_in))
        t = (W * z).sum(axis=1)
        if mode == "outside":
            pos = np.clip(W, 0, None).sum(axis=1)
            neg = np.clip(W, None, 0).sum(axis=1)
            pick = rng.integers(0, 4, size=g)
            t = np.where(pick == 0, pos + 1 + rng.integers(0, 50, size=g),
                         np.where(pick == 1, neg - rng.integers(0, 50, size=g),
                                  np.where(pick == 2, pos, t)))
        elif mode == "wide":
            t = rng.integers(-wmax * n_in - 3, wmax * n_in + 4, size=g)
        layers.append(ThresholdLayer(W, t))
        n_in = g
    return ThresholdCircuit(tuple(layers))


def naive_table(circuit):
    return naive.circuit_table(naive.layers_of(circuit), circuit.n_inputs)


BS = {"kernel": "bitsliced"}     # small cubes would go to the low/high kernel under "auto"


def assert_bitsliced(circuit):
    """The bit-sliced kernel applies (forcing it does not raise)."""
    assert c.kernel_plan(circuit, "bitsliced").kernel == "bitsliced"


# --- whole cube ---------------------------------------------------------------------------

@needs_jit
@pytest.mark.parametrize("N", [1, 3, 6, 9, 12, 13])
@pytest.mark.parametrize("widths", [(), (1,), (7,), (5, 4), (3, 4, 2)])
@pytest.mark.parametrize("mode", ["ties", "outside", "wide"])
@pytest.mark.parametrize("path", PATHS)
def test_truth_table_and_counts_match_naive(N, widths, mode, path, monkeypatch):
    force_path(monkeypatch, path)
    rng = np.random.default_rng(hash((N, widths, mode)) % 2**32)
    circ = random_circuit(rng, N, widths, mode=mode)
    assert_bitsliced(circ)
    ref = naive_table(circ)
    assert c.truth_table(circ, **BS).tolist() == ref
    assert c.count_ones(circ, **BS) == sum(ref)


@needs_jit
@pytest.mark.parametrize("N", [4, 10, 14])
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("kernel", ["bitsliced", "fused"])
def test_disagreements_match_naive_for_every_target_kind(N, path, kernel, monkeypatch):
    """Both bit-sliced kernels (interpreted and compiled) against the naive twins."""
    force_path(monkeypatch, path)
    rng = np.random.default_rng(N)
    circ = random_circuit(rng, N, (6,), wmax=3)
    values = naive_table(circ)
    table = rng.integers(0, 2, size=1 << N).astype(np.uint8)
    lw = rng.integers(-4, 5, size=N)
    targets = {
        "ip": (c.InnerProductMod2(N // 2), naive.ip_mod2(N // 2)),
        "parity": ("parity", naive.parity(N)),
        "majority": ("majority", naive.majority(N)),
        "table": (TruthTable(table), table.tolist()),
        "linear": (ThresholdFunction(lw, 1), [naive_kernels.target_value("linear", k, N, (lw, 1))
                                              for k in range(1 << N)]),
        "const1": (c.Constant(N, 1), [1] * (1 << N)),
        "itself": (TruthTable(np.array(values, dtype=np.uint8)), values),
    }
    for name, (target, ref) in targets.items():
        res = c.count_disagreements(circ, target, kernel=kernel)
        count, first = naive_kernels.count_first(values, ref, 0, 1 << N)
        assert (res.count, res.index) == (count, first), name
        if first >= 0:
            assert res.counterexample.tolist() == [naive.bit(first, i) for i in range(N)]
        else:
            assert res.counterexample is None


@needs_jit
@pytest.mark.parametrize("path", PATHS)
def test_unaligned_slices_of_the_high_block(path, monkeypatch):
    """Chunks [start, stop) that cut planes anywhere (the unit a Ctrl-C-able runner slices)."""
    force_path(monkeypatch, path)
    rng = np.random.default_rng(7)
    N = 15                                           # 8 planes of 4096 points
    circ = random_circuit(rng, N, (9, 3), wmax=4)
    values = naive_table(circ)
    target = rng.integers(0, 2, size=1 << N).astype(np.uint8)
    plan = simulate._plan_of(circ, "bitsliced")[1]
    spec = TruthTable(target)._spec()
    cuts = sorted({0, 1 << N, *rng.integers(0, 1 << N, size=12).tolist(), 4096, 4095, 4097})
    for start, stop in zip(cuts[:-1], cuts[1:]):
        got = simulate._disagree_chunk(plan, spec, start, stop)
        assert got == naive_kernels.count_first(values, target.tolist(), start, stop)
    assert simulate._disagree_chunk(plan, spec, 5, 5) == (0, -1)


@needs_jit
def test_chunked_and_executor_runs_equal_one_run():
    from concurrent.futures import ThreadPoolExecutor
    circ = random_circuit(np.random.default_rng(3), 16, (12,), wmax=5)
    def key(res):
        return res.count, res.index

    one = key(c.count_disagreements(circ, "parity", **BS))
    assert one[0] > 0
    assert key(c.count_disagreements(circ, "parity", chunk_bits=13, **BS)) == one
    with ThreadPoolExecutor(2) as ex:
        assert key(c.count_disagreements(circ, "parity", executor=ex, chunk_bits=14, **BS)) == one
    assert key(c.count_disagreements(circ, "parity", kernel="lowhigh")) == one


@needs_jit
def test_depth3_ip_circuits_and_a_broken_copy():
    for n in range(1, 7):
        assert c.count_disagreements(c.ip_depth3(n), "ip", **BS).count == 0
    # break one AND gate at a tie: h_0 = [x_0 + y_0 >= 1] (an OR)
    circ = c.ip_depth3(5)
    W1 = circ.layers[0].weights.copy()
    t1 = circ.layers[0].thresholds.copy()
    t1[0] = 1
    broken = ThresholdCircuit((ThresholdLayer(W1, t1),) + circ.layers[1:])
    values = naive_table(broken)
    res = c.count_disagreements(broken, "ip", **BS)
    assert (res.count, res.index) == naive_kernels.count_first(values, naive.ip_mod2(5), 0, 1 << 10)
    assert res.count > 0                          # negative control: the check can fail


@needs_jit
def test_ip_fast_path_on_2_24_points():
    """n = 12 >= LB: the target plane is built from the 64-entry parity table."""
    n = 12
    zero = ThresholdCircuit.single_gate(np.zeros(2 * n, dtype=np.int64), 1)   # constant 0
    assert_bitsliced(zero)
    res = c.count_disagreements(zero, "ip", **BS)
    assert res.count == 2 ** (n - 1) * (2 ** n - 1)          # OEIS A006516
    k = res.index                                            # smallest k with IP = 1
    assert k == (1 << n) + 1 and bin((k & ((1 << n) - 1)) & (k >> n)).count("1") % 2 == 1
    assert c.count_disagreements(c.ip_depth3(n), "ip", **BS).count == 0
    # a perturbed circuit: same count and first counterexample as the low/high kernel
    rng = np.random.default_rng(12)
    circ = random_circuit(rng, 2 * n, (10,), wmax=2)
    a = c.count_disagreements(circ, "ip", kernel="bitsliced")
    b = c.count_disagreements(circ, "ip", kernel="lowhigh")
    assert (a.count, a.index) == (b.count, b.index)
    z = [naive.bit(a.index, i) for i in range(2 * n)]
    assert naive.circuit_value(naive.layers_of(circ), z) != sum(z[i] * z[n + i] for i in range(n)) % 2
    p1 = c.count_disagreements(circ, "parity", kernel="bitsliced")
    p2 = c.count_disagreements(circ, "parity", kernel="lowhigh")
    assert (p1.count, p1.index) == (p2.count, p2.index)


@needs_jit
def test_depth1_and_zero_rows_and_single_gate_complements():
    # a layer-2 gate reading one layer-1 gate with both signs (plane and complement plane)
    hidden = ThresholdLayer([[1, 2, -1, 0], [0, 0, 0, 0], [3, -3, 1, 1]], [1, 0, 2])
    out = ThresholdLayer([[2, -1, -3], [-2, 5, 1]], [0, 1])
    top = ThresholdLayer([[1, -1]], [0])
    for circ in [ThresholdCircuit((hidden, out, top)),
                 ThresholdCircuit.single_gate([3, -2, 0, 1, 1], 1),
                 ThresholdCircuit.single_gate([0, 0, 0], 0),
                 ThresholdCircuit.single_gate([0, 0, 0], 1)]:
        assert_bitsliced(circ)
        assert c.truth_table(circ, **BS).tolist() == naive_table(circ)


@needs_jit
def test_huge_thresholds_and_sums_near_the_limits():
    # thresholds far outside the reachable range are normalised exactly (no int64 overflow)
    big = 2**62
    hidden = ThresholdLayer([[1, -1, 2], [1, 1, 1], [2, 0, -1]], [big, -big, 1])
    circ = ThresholdCircuit((hidden, ThresholdLayer([[1, 1, -1]], [1])))
    assert_bitsliced(circ)
    assert c.truth_table(circ, **BS).tolist() == naive_table(circ)
    # large top-layer weights are fine for the adders (K bits), small masks
    top = ThresholdLayer([[2**40, -(2**40) + 1, 3]], [2])
    circ = ThresholdCircuit((ThresholdLayer([[1, 1, 0], [0, 1, -1], [1, 0, 1]], [1, 0, 2]), top))
    assert_bitsliced(circ)
    assert c.truth_table(circ, **BS).tolist() == naive_table(circ)


# --- dispatch -----------------------------------------------------------------------------

def test_kernel_plan_says_which_and_why(tmp_path, monkeypatch):
    monkeypatch.setenv("DEPTHSEP_CACHE_DIR", str(tmp_path))     # no compiled kernel cached
    small = random_circuit(np.random.default_rng(0), 10, (4,))
    plan = c.kernel_plan(small)
    assert plan.kernel == "lowhigh" and "too small to pay for the masks" in plan.reason
    big = random_circuit(np.random.default_rng(0), 24, (64,))
    plan = c.kernel_plan(big)
    assert plan.kernel == "generic" and "mask table" in plan.reason and plan.mask_bytes > 0
    assert "estimated" in plan.reason and "generic depth-2" in plan.reason
    deep = random_circuit(np.random.default_rng(0), 24, (64, 3))     # no generic kernel
    plan = c.kernel_plan(deep)
    assert plan.kernel == "bitsliced" and "no generic kernel (not a depth-2" in plan.reason
    large = ThresholdCircuit.depth2(np.full((4, 20), 2**20), [2**21] * 4, [1, 1, 1, 1], 2)
    plan = c.kernel_plan(large)
    assert plan.kernel == "lowhigh" and "bytes >" in plan.reason
    assert c.kernel_plan(small, "lowhigh").kernel == "lowhigh"
    with pytest.raises(InvalidCircuitError, match="kernel='bitsliced' does not apply"):
        c.kernel_plan(large, "bitsliced")
    with pytest.raises(ValueError, match="kernel must be one of"):
        c.count_ones(small, kernel="fast")
    huge_top = ThresholdCircuit.depth2([[1, 0], [0, 1]], [1, 1], [2**62, 1], 1)
    assert c.kernel_plan(huge_top).kernel == "lowhigh"
    assert c.kernel_plan(c.ip_depth3(18)).kernel == "fused"     # 2^36 points pay a compile


@needs_jit
def test_large_weight_circuits_fall_back_and_stay_exact():
    rng = np.random.default_rng(5)
    W = rng.integers(-15, 16, size=(6, 11)) * (1 << 16) + rng.integers(-8, 9, size=(6, 11))
    z = rng.integers(0, 2, size=W.shape)
    circ = ThresholdCircuit.depth2(W, (W * z).sum(axis=1), rng.integers(-3, 4, size=6), 0)
    assert c.kernel_plan(circ).kernel == "lowhigh"
    assert c.truth_table(circ).tolist() == naive_table(circ)


def test_plan_pickles_for_executors_and_dask():
    import pickle
    circ = random_circuit(np.random.default_rng(2), 9, (3,))
    plan = simulate._plan_of(circ, "bitsliced")[1]
    again = pickle.loads(pickle.dumps(plan))
    spec = c.Constant(9, 0)._spec()
    assert simulate._disagree_chunk(again, spec, 0, 512) == simulate._disagree_chunk(plan, spec, 0, 512)


@pytest.mark.parametrize("mask_bits", [12, 10, 9])
def test_layer1_masks_match_their_definition(mask_bits):
    """Mask i of gate j holds lane a iff s_j(a) >= lo_j + i, s_j over the low ``mask_bits``
    bits, and ``sub[s, j]`` is gate j's sum over lane bits mask_bits .. 11 set as in s (the
    naive twins of _layer1_masks and build)."""
    rng = np.random.default_rng(4)
    circ = random_circuit(rng, 13, (3,), wmax=3)
    plan = bplan.finish(bplan.build(circ, mask_bits))
    L1 = min(13, mask_bits)
    mw = 1 << (mask_bits - 6)
    assert plan.mask_bytes == bplan.mask_table_bytes(circ, mask_bits) == plan.masks.size * 8
    for j, (row, t) in enumerate(_layer1_gates(circ)):
        lo = sum(v for v in row[:L1] if v < 0)
        moff, mlen, cbase = plan.l1[j]
        assert cbase == t - lo
        for i in range(0, mlen, 7):
            words = plan.masks[moff + i * mw: moff + (i + 1) * mw]
            for a in rng.integers(0, 64 * mw, size=40).tolist():
                s = sum(row[b] * naive.bit(a, b) for b in range(L1))
                assert (int(words[a >> 6]) >> (a & 63)) & 1 == int(s >= lo + i)
        for sv in range(plan.sub.shape[0]):
            assert plan.sub[sv, j] == sum(row[b] * naive.bit(sv, b - mask_bits)
                                          for b in range(mask_bits, bits.LB))


def test_mask_bits_out_of_range_are_refused():
    circ = random_circuit(np.random.default_rng(4), 13, (3,))
    for mb in (5, 13):
        with pytest.raises(ValueError, match="mask_bits"):
            bplan.build(circ, mb)
    with pytest.raises(ValueError, match="compiled kernel only"):
        bplan.finish(bplan.build(circ, 10)).args()


def _layer1_gates(circ):
    """The layer-1 gates of a depth-2 plan in build order (complements for negative weights)."""
    first = circ.layers[0]
    v = circ.layers[1].weights[0].tolist()
    out = []
    for j, w in enumerate(v):
        if w == 0:
            continue
        row = first.weights[j].tolist()
        t = int(first.thresholds[j])
        if w < 0:
            row, t = [-x for x in row], 1 - t
        pos = sum(x for x in row if x > 0)
        neg = sum(x for x in row if x < 0)
        out.append((row, min(max(t, neg), pos + 1)))
    return out


# --- hypothesis ---------------------------------------------------------------------------

@st.composite
def small_circuits(draw):
    N = draw(st.integers(1, 8))
    depth = draw(st.integers(1, 3))
    widths = [draw(st.integers(1, 5)) for _ in range(depth - 1)]
    wmax = draw(st.sampled_from([1, 3, 9]))
    layers, n_in = [], N
    for g in widths + [1]:
        W = draw(st.lists(st.lists(st.integers(-wmax, wmax), min_size=n_in, max_size=n_in),
                          min_size=g, max_size=g))
        reach = wmax * n_in
        t = draw(st.lists(st.integers(-reach - 2, reach + 2), min_size=g, max_size=g))
        layers.append(ThresholdLayer(W, t))
        n_in = g
    return ThresholdCircuit(tuple(layers))


@needs_jit
@settings(max_examples=150, deadline=None)
@given(small_circuits(), st.integers(0, 2**31 - 1))
def test_property_random_small_circuits_match_naive(circ, seed):
    assert_bitsliced(circ)
    ref = naive_table(circ)
    assert c.truth_table(circ, **BS).tolist() == ref
    N = circ.n_inputs
    target = np.random.default_rng(seed).integers(0, 2, size=1 << N).astype(np.uint8)
    res = c.count_disagreements(circ, TruthTable(target), **BS)
    assert (res.count, res.index) == naive_kernels.count_first(ref, target.tolist(), 0, 1 << N)


@needs_jit
def test_negative_control_a_threshold_off_by_one_is_caught():
    """The twin comparison is sensitive: moving one threshold at an exact tie changes the table."""
    circ = c.parity_depth2(7)
    first = circ.layers[0]
    t = first.thresholds.copy()
    t[0] += 1
    moved = ThresholdCircuit((ThresholdLayer(first.weights, t),) + circ.layers[1:])
    assert naive_table(moved) != naive_table(circ)
    assert c.truth_table(moved, **BS).tolist() == naive_table(moved)
    assert c.truth_table(moved, **BS).tolist() != c.truth_table(circ, **BS).tolist()


@pytest.mark.slow
@needs_jit
def test_ip16_on_2_32_points():
    res = c.count_disagreements(c.ip_depth3(16), "ip")
    assert res.count == 0 and res.n_points == 2**32


@needs_jit
def test_plan_is_built_once_per_circuit_object():
    circ = random_circuit(np.random.default_rng(8), 12, (5,))
    a = c.count_disagreements(circ, "parity", **BS)
    plan = dispatch._PLANS[circ]
    b = c.count_disagreements(circ, "ip", **BS)
    assert dispatch._PLANS[circ] is plan
    assert (a.count, a.index) == naive_kernels.count_first(naive_table(circ), naive.parity(12), 0,
                                                           1 << 12)
    assert (b.count, b.index) == naive_kernels.count_first(naive_table(circ), naive.ip_mod2(6), 0,
                                                           1 << 12)


def test_tiny_circuits_also_with_the_jit_disabled():
    """Runs as plain Python under NUMBA_DISABLE_JIT=1 too (the kernels' pure-Python twin run)."""
    rng = np.random.default_rng(21)
    for widths in [(), (3,), (2, 2)]:
        circ = random_circuit(rng, 4, widths, wmax=3)
        ref = naive_table(circ)
        assert c.truth_table(circ, **BS).tolist() == ref
        res = c.count_disagreements(circ, "parity", **BS)
        assert (res.count, res.index) == naive_kernels.count_first(ref, naive.parity(4), 0, 16)
