"""The generic depth-2 bit-sliced kernel (circuits._kernels_generic) against naive twins.

Whole cube for small N: counts and first counterexamples for every target kind, exact ties,
negative weights, thresholds outside the reachable range, serial and threaded paths, masks of
fewer lanes, unaligned slices.  Wide output gates exercise every block size of the counter
(16, 8 and 4 planes) and every high counter bit (h0 .. h7) against an exact integer evaluation
(numpy int64 products, itself checked against the Python-int twin on small cases).  Negative
controls: a counter one bit too short and a wrong padding plane are caught.
"""

import numba
import numpy as np
import pytest

import circuits as c
from circuits import _kernels_generic as gen, dispatch, simulate
from circuits.functions import ThresholdFunction, TruthTable
from circuits.threshold import ThresholdCircuit, ThresholdLayer
from circuits.utils.errors import InvalidCircuitError
from tests import naive, naive_kernels
from tests.test_bitsliced import force_path, naive_table, random_circuit

JIT_OFF = bool(numba.config.DISABLE_JIT)
needs_jit = pytest.mark.skipif(JIT_OFF, reason="whole-cube sweeps are too slow with the JIT off")
GE = {"kernel": "generic"}


def int_table(circuit):
    """Exact outputs on the whole cube with numpy int64 (sums are far below 2^63 here)."""
    N = circuit.n_inputs
    k = np.arange(1 << N, dtype=np.int64)
    z = ((k[:, None] >> np.arange(N)) & 1).astype(np.int64)
    for layer in circuit.layers:
        W = np.asarray(layer.weights, dtype=np.int64)
        t = np.asarray(layer.thresholds, dtype=np.int64)
        z = (z @ W.T >= t).astype(np.int64)
    return z[:, 0].tolist()


def wide_circuit(rng, N, width, *, wmax=8, odd=False, l1max=8):
    """Depth 2, ``width`` hidden gates, output weights in [-wmax, wmax] (all odd if ``odd``:
    column 0 then holds every hidden gate) and an output threshold near the median."""
    W1 = rng.integers(-l1max, l1max + 1, size=(width, N))
    if width > 300:                     # sparse layer 1, so the mask table stays small
        W1 = W1 * (rng.random((width, N)) < 0.2)
    z = rng.integers(0, 2, size=(width, N))
    t1 = (W1 * z).sum(axis=1)
    v = rng.integers(-wmax, wmax + 1, size=width)
    if odd:
        v = np.where(v % 2 == 0, v + 1, v)
    h = (((np.arange(1 << N)[:, None] >> np.arange(N)) & 1) @ W1.T >= t1)
    t2 = int(np.median(h @ v))
    return ThresholdCircuit((ThresholdLayer(W1, t1), ThresholdLayer(v[None, :], [t2])))


def test_int_table_equals_the_python_int_twin():
    rng = np.random.default_rng(0)
    for widths in [(3,), (5, 2)]:
        circ = random_circuit(rng, 7, widths)
        assert int_table(circ) == naive_table(circ)


@needs_jit
@pytest.mark.parametrize("N", [1, 6, 13])
@pytest.mark.parametrize("width", [1, 7, 20])
@pytest.mark.parametrize("mode", ["ties", "outside", "wide"])
def test_counts_and_first_ones_match_naive(N, width, mode, monkeypatch):
    rng = np.random.default_rng(hash((N, width, mode, "generic")) % 2**32)
    for _ in range(20):                 # a circuit whose output gate is not constant
        circ = random_circuit(rng, N, (width,), mode=mode)
        if not isinstance(gen.generic_data(circ, 0), str):
            break
    else:
        pytest.skip("no non-constant output gate drawn")
    ref = naive_table(circ)
    zero = c.Constant(N, 0)
    for path in ("serial", "parallel"):
        force_path(monkeypatch, path)
        res = c.count_disagreements(circ, zero, **GE)
        assert (res.count, res.index) == naive_kernels.count_first(ref, [0] * (1 << N), 0, 1 << N)
        assert c.count_ones(circ, **GE) == sum(ref)


@needs_jit
@pytest.mark.parametrize("N", [4, 10, 14])
@pytest.mark.parametrize("path", ["serial", "parallel"])
def test_disagreements_match_naive_for_every_target_kind(N, path, monkeypatch):
    force_path(monkeypatch, path)
    rng = np.random.default_rng(N + 100)
    circ = wide_circuit(rng, N, 6, wmax=3)
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
        res = c.count_disagreements(circ, target, **GE)
        count, first = naive_kernels.count_first(values, ref, 0, 1 << N)
        assert (res.count, res.index) == (count, first), name
        if first >= 0:
            assert res.counterexample.tolist() == [naive.bit(first, i) for i in range(N)]


@needs_jit
@pytest.mark.parametrize("width, wmax, odd, nh", [
    (40, 8, False, 2), (23, 1, True, 1), (130, 3, True, 4), (600, 1, True, 6), (2100, 1, True, 8)])
def test_wide_output_gates_use_every_block_and_counter_bit(width, wmax, odd, nh):
    """16-, 8- and 4-plane blocks and the high counter bits h0 .. h7 (column counts up to
    2100 < 2^12) against the exact integer evaluation."""
    rng = np.random.default_rng(width)
    N = 13
    circ = wide_circuit(rng, N, width, wmax=wmax, odd=odd, l1max=1 if width > 1000 else 8)
    data = gen.generic_data(circ, 0)
    assert int(data[2][2]) == nh
    ref = int_table(circ)
    res = c.count_disagreements(circ, c.Constant(N, 0), **GE)
    assert (res.count, res.index) == naive_kernels.count_first(ref, [0] * (1 << N), 0, 1 << N)


@needs_jit
@pytest.mark.parametrize("mask_bits", [12, 10, 9])
def test_masks_of_fewer_lanes_match_naive(mask_bits, monkeypatch):
    monkeypatch.setattr(dispatch, "_FUSED_MASK_BITS", mask_bits)
    rng = np.random.default_rng(mask_bits)
    circ = wide_circuit(rng, 15, 24, wmax=5)
    ref = int_table(circ)
    plan = simulate._plan_of(circ, "generic")[1]
    assert plan.generic is not None and plan.mask_bits == mask_bits
    res = c.count_disagreements(circ, "parity", **GE)
    assert (res.count, res.index) == naive_kernels.count_first(ref, naive.parity(15), 0, 1 << 15)


@needs_jit
def test_unaligned_slices_and_first_counterexamples():
    rng = np.random.default_rng(17)
    N = 15
    circ = wide_circuit(rng, N, 17, wmax=4)
    values = int_table(circ)
    target = rng.integers(0, 2, size=1 << N).astype(np.uint8)
    plan = simulate._plan_of(circ, "generic")[1]
    spec = TruthTable(target)._spec()
    cuts = sorted({0, 1 << N, *rng.integers(0, 1 << N, size=12).tolist(), 4096, 4095, 4097})
    for start, stop in zip(cuts[:-1], cuts[1:]):
        got = simulate._disagree_chunk(plan, spec, start, stop)
        assert got == naive_kernels.count_first(values, target.tolist(), start, stop)


@needs_jit
def test_negative_controls_short_counter_and_wrong_padding_are_caught():
    """The counter's high bits and the zero padding plane matter: a spec with one high bit
    fewer, or padding with a real plane, changes the count on a circuit built to need them."""
    N = 13
    W1 = np.zeros((130, N), dtype=np.int64)                 # hidden gate j copies x_(j mod N),
    W1[np.arange(130), np.arange(130) % N] = 1              # so every lane's count reaches
    circ = ThresholdCircuit((ThresholdLayer(W1, [1] * 130),  # 10 popcount(x): up to 130
                             ThresholdLayer(np.ones((1, 130), dtype=np.int64), [62])))
    plan = simulate._plan_of(circ, "generic")[1]
    inp, cstart, spec = plan.generic
    assert int(spec[2]) == 4                                # 130 < 2^8: ones .. eights, h0 .. h3
    ref = int_table(circ)
    want = naive_kernels.count_first(ref, [0] * (1 << N), 0, 1 << N)
    zero = c.Constant(N, 0)._spec()
    assert simulate._disagree_chunk(plan, zero, 0, 1 << N) == want
    short = spec.copy()
    short[2] -= 1
    short.setflags(write=False)
    bad = plan.with_generic((inp, cstart, short))
    assert simulate._disagree_chunk(bad, zero, 0, 1 << N) != want
    pad = int(inp.max())                                    # the zero plane's index
    assert (inp == pad).any()
    wrong = np.where(inp == pad, inp[0], inp)
    wrong.setflags(write=False)
    bad = plan.with_generic((wrong, cstart, spec))
    assert simulate._disagree_chunk(bad, zero, 0, 1 << N) != want


def test_shapes_the_generic_kernel_refuses():
    rng = np.random.default_rng(3)
    deep = random_circuit(rng, 8, (4, 3))
    assert "depth-2" in gen.generic_data(deep, 0)
    const = ThresholdCircuit((ThresholdLayer(np.ones((3, 8), dtype=np.int64), [1, 2, 3]),
                              ThresholdLayer(np.ones((1, 3), dtype=np.int64), [-5])))
    assert "constant" in gen.generic_data(const, 0)
    huge = ThresholdCircuit((ThresholdLayer(np.ones((4100, 8), dtype=np.int64), [1] * 4100),
                             ThresholdLayer(np.ones((1, 4100), dtype=np.int64), [7])))
    assert "2^12" in gen.generic_data(huge, 0)
    with pytest.raises(InvalidCircuitError, match="generic"):
        c.kernel_plan(deep, "generic")


@needs_jit
def test_auto_serves_w1_style_circuits_on_the_generic_kernel(tmp_path, monkeypatch):
    """In a process that has compiled nothing for the circuit, ``auto`` runs a 2^20-point
    depth-2 circuit on the generic kernel (no per-circuit compile) and says why."""
    monkeypatch.setenv("DEPTHSEP_CACHE_DIR", str(tmp_path))
    from benchmarks.bench_circuits import w1_circuit
    circ = w1_circuit(20, 64, seed=11)
    p = c.kernel_plan(circ)
    assert p.kernel == "generic", p.reason
    assert "generic depth-2" in p.reason
    assert c.count_ones(circ) == c.count_ones(circ, kernel="lowhigh")


@needs_jit
def test_a_cached_circuit_kernel_replaces_the_generic_one_in_a_fresh_process(tmp_path,
                                                                             monkeypatch):
    """With the circuit's compiled kernel on disk, a process that has not loaded the generic
    kernel loads the compiled one instead (either way one cache load); once the generic kernel
    is loaded, the load of a compiled kernel must be repaid as before."""
    monkeypatch.setenv("DEPTHSEP_CACHE_DIR", str(tmp_path))
    from benchmarks.bench_circuits import w1_circuit
    from circuits import _bitsliced_cache as kc
    circ = w1_circuit(20, 64, seed=13)
    assert c.kernel_plan(circ).kernel == "generic"
    want = c.count_ones(circ, kernel="fused")            # compiled and cached on disk
    kc._LOADED.pop(dispatch._FACTS[circ][0])             # as in a later process: "cached"
    monkeypatch.setattr(gen, "loaded", lambda: True)
    assert c.kernel_plan(circ).kernel == "generic"
    monkeypatch.setattr(gen, "loaded", lambda: False)
    p = c.kernel_plan(circ)
    assert p.kernel == "fused" and "replaces the generic kernel's" in p.reason
    assert c.count_ones(circ) == want == c.count_ones(circ, kernel="lowhigh")


def _own_llvm(fn, sig) -> str:
    """LLVM IR of ``fn`` compiled afresh (no cache: numba does not show cached code)."""
    disp = numba.njit(nogil=True)(fn)
    disp.compile(sig)
    return "".join(disp.inspect_llvm().values())


@needs_jit
def test_the_bitsliced_drivers_compile_no_error_formatting():
    """A slice assignment (``keep[:] = rm``) makes numba compile its shape-mismatch message
    (string formatting: about 2-3 s of the generic kernel's first compile on a new machine); the
    generic and the compiled kernels' drivers copy planes with loops.  Control: a slice
    assignment shows."""
    from circuits import _kernels_fused as fused

    def sliced(a, b):
        a[:] = b
        return a[0]

    mark = "raise_with_shape_context"
    arr = numba.types.uint64[::1]
    assert mark in _own_llvm(sliced, (arr, arr))
    assert mark not in _own_llvm(fused._fused_block.py_func, fused._FUSED_SIG)
    assert mark not in _own_llvm(gen._generic_block.py_func, gen._SIG)

