"""The compiled (fused) bit-sliced kernel (circuits._bitsliced_codegen) against naive twins.

Two levels.  (1) The generated straight-line code, executed as plain Python on Python ints for
random mask words, against a per-lane evaluation of the same layered circuit from its layer-1
outputs: no numba, so large and deep circuits are cheap, and planted mutations of the adder and
the comparison are shown to be caught.  (2) The compiled kernel on the whole cube for small N:
counts and first counterexamples (every target kind: tests/test_bitsliced.py runs both
bit-sliced kernels), exact ties, negative weights, thresholds outside the reachable range,
depth 1 to 4, serial and threaded paths, unaligned slices; hypothesis picks random small
circuits.  Plus the kernel cache and the dispatch.
"""

import os

import numba
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import circuits as c
from circuits import _bitsliced_cache as kc, _bitsliced_codegen as cg, _bitsliced_plan as bplan, simulate
from circuits.functions import TruthTable
from circuits.threshold import ThresholdCircuit, ThresholdLayer
from circuits.utils.errors import InvalidCircuitError
from tests import naive, naive_kernels
from tests.test_bitsliced import force_path, naive_table, random_circuit, small_circuits

JIT_OFF = bool(numba.config.DISABLE_JIT)
needs_jit = pytest.mark.skipif(JIT_OFF, reason="whole-cube sweeps are too slow with the JIT off")
FU = {"kernel": "fused"}
M64 = (1 << 64) - 1


# --- (1) the generated code as Python, on Python ints ------------------------------------------

#: The vector operations of circuits._simd on one word (Python ints), by their definitions.
PY_VECTOR_OPS = {
    "vload": lambda arr, i: arr[i],
    "vxor": lambda a, b: a ^ b,
    "vand": lambda a, b: a & b,
    "vor": lambda a, b: a | b,
    "vnot": lambda a: ~a & M64,
    "vsum3": lambda a, b, c: a ^ b ^ c,
    # lane by lane: b where b = c, else not s (the carry of a full adder with sum s)
    "vcarry": lambda s, b, c: sum(1 << r for r in range(64)
                                  if (((b >> r) & 1) if (b >> r) & 1 == (c >> r) & 1
                                      else 1 - ((s >> r) & 1))),
}

def run_generated(circuit, words):
    """Execute the generated word-loop statements with Python ints: ``words[p]`` is the word
    of layer-1 plane p; returns the output word."""
    l1, jobs, out_ref = bplan.netlist(circuit)
    lines, planes, out = cg._plane_code(l1, jobs, out_ref)
    env = {"ONES": M64, "ZERO": 0, "masks": words, "v": 0, **PY_VECTOR_OPS}
    env.update({f"o{p}": p for p in planes})
    for line in lines:
        name, expr = line.split(" = ", 1)
        env[name] = eval(expr, {}, env) & M64
    return env[out] & M64 if out not in ("ONES", "ZERO") else env[out]


def lane_reference(circuit, words):
    """The same output word lane by lane: layer-1 gate j's output in lane r is bit r of the
    word of its plane (the complement plane where the builder made one), then layers >= 2 by
    integer dot products and ``>=``."""
    l1, _, _ = bplan.netlist(circuit)
    plane_of = {key: i for key, i in l1.index.items()}
    out = 0
    for r in range(64):
        z = []
        for j in range(circuit.layers[0].n_gates):
            if (j, False) in plane_of:
                z.append((words[plane_of[(j, False)]] >> r) & 1)
            elif (j, True) in plane_of:
                z.append(1 - ((words[plane_of[(j, True)]] >> r) & 1))
            else:
                z.append(0)                                  # never read (weight 0)
        for layer in circuit.layers[1:]:
            z = [naive.gate(row, int(t), z) for row, t in zip(layer.weights.tolist(),
                                                             layer.thresholds.tolist())]
        out |= z[0] << r
    return out


def random_words(rng, circuit):
    l1, _, _ = bplan.netlist(circuit)
    """Random 64-lane words for the layer-1 planes, a gate's complement plane the complement
    of its plane (as in the mask table), and 0 for the zero plane."""
    n_gates = circuit.layers[0].n_gates
    gate_words = [(int(a) << 32) | int(b) for a, b in
                  zip(rng.integers(0, 2**32, size=n_gates), rng.integers(0, 2**32, size=n_gates))]
    words = [0] * (len(l1.gates) + 1)
    for (j, complement), i in l1.index.items():
        words[i] = (~gate_words[j] & M64) if complement else gate_words[j]
    return words


@pytest.mark.parametrize("widths", [(1,), (7,), (64,), (256,), (5, 4), (12, 6, 3)])
@pytest.mark.parametrize("wmax", [1, 8, 100])
@pytest.mark.parametrize("mode", ["ties", "outside", "wide"])
def test_generated_code_equals_lane_by_lane_evaluation(widths, wmax, mode):
    rng = np.random.default_rng(hash((widths, wmax, mode)) % 2**32)
    circ = random_circuit(rng, 14, widths, wmax=wmax, mode=mode)
    for _ in range(3):
        words = random_words(rng, circ)
        assert run_generated(circ, words) == lane_reference(circ, words)


def test_generated_code_for_a_depth1_circuit_is_the_mask_plane():
    circ = ThresholdCircuit.single_gate([3, -2, 1], 1)
    words = [0x0123456789ABCDEF, 0]
    assert run_generated(circ, words) == 0x0123456789ABCDEF


def _broken_full_adder(self, x, y, z):
    s, k = self.fresh(), self.fresh()
    self.lines.append(f"{s} = vsum3({x}, {y}, {z})")
    self.lines.append(f"{k} = vand({x}, {y})")         # wrong carry: misses x z and y z
    return s, k


@pytest.mark.parametrize("mutation", ["carry", "tie", "complement"])
def test_negative_controls_planted_generator_bugs_are_caught(mutation, monkeypatch):
    """Each mutation of the generator must make the lane-by-lane comparison fail."""
    if mutation == "carry":
        monkeypatch.setattr(cg._Emitter, "full_adder", _broken_full_adder)
    elif mutation == "tie":                                # [S' > T'] instead of [S' >= T']
        real = cg._compare
        monkeypatch.setattr(cg, "_compare",
                            lambda em, b, K, tp: real(em, b, K, tp + 1 if tp > 0 else tp))
    else:                                                  # a negative weight read uncomplemented
        monkeypatch.setattr(cg, "_gate", lambda em, prev, g, neg: prev[(g, False)])
    rng = np.random.default_rng(11)
    caught = 0
    for _ in range(10):
        circ = random_circuit(rng, 14, (12, 6), wmax=8)
        words = random_words(rng, circ)
        caught += run_generated(circ, words) != lane_reference(circ, words)
    assert caught > 0


def test_streaming_counters_use_at_most_one_adder_per_input_plane():
    """The adder reduces P input planes with at most P full or half adders (no padding)."""
    circ = random_circuit(np.random.default_rng(5), 14, (64,), wmax=8)
    l1, jobs, _ = bplan.netlist(circ)
    lines, _, _ = cg._plane_code(l1, jobs, None)
    adders = sum(1 for line in lines if "vsum3(" in line or "vxor(" in line)
    assert adders <= cg.input_planes(circ)


# --- (2) the compiled kernel on the whole cube ------------------------------------------------

@needs_jit
@pytest.mark.parametrize("N", [1, 6, 13])
@pytest.mark.parametrize("widths", [(), (1,), (7,), (5, 4), (3, 4, 2)])
@pytest.mark.parametrize("mode", ["ties", "outside", "wide"])
def test_counts_and_first_ones_match_naive(N, widths, mode, monkeypatch):
    rng = np.random.default_rng(hash((N, widths, mode, "fused")) % 2**32)
    circ = random_circuit(rng, N, widths, mode=mode)
    ref = naive_table(circ)
    zero = c.Constant(N, 0)
    for path in ("serial", "parallel"):
        force_path(monkeypatch, path)
        res = c.count_disagreements(circ, zero, **FU)
        assert (res.count, res.index) == naive_kernels.count_first(ref, [0] * (1 << N), 0, 1 << N)
    assert c.truth_table(circ, **FU).tolist() == ref      # truth tables: interpreted planes


@needs_jit
def test_unaligned_slices_and_first_counterexamples_in_every_lane():
    """Chunks that cut planes anywhere; first differences in many words and lane positions
    (the bisection over a word's lanes)."""
    rng = np.random.default_rng(17)
    N = 15
    circ = random_circuit(rng, N, (9, 3), wmax=4)
    values = naive_table(circ)
    plan = simulate._plan_of(circ, "fused")[1]
    assert plan.code is not None
    for trial in range(4):
        target = np.array(values, dtype=np.uint8)
        flips = rng.integers(0, 1 << N, size=1 + trial * 3)
        target[flips] ^= 1                                  # sparse, so firsts fall anywhere
        spec = TruthTable(target)._spec()
        cuts = sorted({0, 1 << N, *rng.integers(0, 1 << N, size=10).tolist(), 4096, 4095, 4097,
                       *flips.tolist(), *(flips + 1).tolist()})
        for start, stop in zip(cuts[:-1], cuts[1:]):
            got = simulate._disagree_chunk(plan, spec, start, min(stop, 1 << N))
            assert got == naive_kernels.count_first(values, target.tolist(), start,
                                                    min(stop, 1 << N))
    assert simulate._disagree_chunk(plan, spec, 5, 5) == (0, -1)


@needs_jit
def test_ip_circuits_deep_circuits_and_a_broken_copy():
    for n in (1, 3, 6, 12):                      # n = 12: the IP fast path on 2^24 points
        assert c.count_disagreements(c.ip_depth3(n), "ip", **FU).count == 0
    circ = c.ip_depth3(5)
    t1 = circ.layers[0].thresholds.copy()
    t1[0] = 1                                    # one AND gate becomes an OR
    broken = ThresholdCircuit((ThresholdLayer(circ.layers[0].weights, t1),) + circ.layers[1:])
    res = c.count_disagreements(broken, "ip", **FU)
    assert (res.count, res.index) == naive_kernels.count_first(naive_table(broken),
                                                               naive.ip_mod2(5), 0, 1 << 10)
    assert res.count > 0                          # negative control: the check can fail


@needs_jit
def test_agrees_with_both_other_kernels_on_a_w1_style_circuit():
    from benchmarks.bench_circuits import w1_circuit
    circ = w1_circuit(20, 64, seed=4)
    for target in (c.Constant(20, 0), "ip", "parity"):
        got = {k: c.count_disagreements(circ, target, kernel=k) for k in
               ("fused", "bitsliced", "lowhigh")}
        assert len({(r.count, r.index) for r in got.values()}) == 1, target


@needs_jit
@settings(max_examples=30, deadline=None)
@given(small_circuits(), st.integers(0, 2**31 - 1))
def test_property_random_small_circuits_match_naive(circ, seed):
    N = circ.n_inputs
    values = naive_table(circ)
    table = np.random.default_rng(seed).integers(0, 2, size=1 << N).astype(np.uint8)
    res = c.count_disagreements(circ, TruthTable(table), **FU)
    assert (res.count, res.index) == naive_kernels.count_first(values, table.tolist(), 0, 1 << N)


@needs_jit
@pytest.mark.parametrize("mask_bits", [9, 10, 11])
def test_masks_of_fewer_lanes_match_naive(mask_bits, monkeypatch):
    """Sub-plane masks (``_fused_block``): every target kind, N below, between and above the
    mask and plane bits, unaligned slices, serial and threaded paths; truth tables still
    come from the interpreted planes."""
    from circuits import dispatch
    monkeypatch.setattr(dispatch, "_FUSED_MASK_BITS", mask_bits)
    rng = np.random.default_rng(mask_bits)
    for N, widths, mode in ((6, (5,), "ties"), (10, (7, 3), "wide"), (11, (9,), "outside"),
                            (14, (12, 4), "ties"), (15, (16,), "wide")):
        circ = random_circuit(rng, N, widths, wmax=6, mode=mode)
        values = naive_table(circ)
        plan = simulate._plan_of(circ, "fused")[1]
        assert plan.mask_bits == mask_bits and plan.code is not None
        table = rng.integers(0, 2, size=1 << N).astype(np.uint8)
        targets = [c.Constant(N, 0), TruthTable(table)] + (["parity"] if N > 1 else [])
        if N % 2 == 0:
            targets.append("ip")
        for target in targets:
            ref_t = (naive.parity(N) if target == "parity" else
                     naive.ip_mod2(N // 2) if target == "ip" else
                     [0] * (1 << N) if isinstance(target, c.Constant) else table.tolist())
            for path in ("serial", "parallel"):
                force_path(monkeypatch, path)
                res = c.count_disagreements(circ, target, **FU)
                assert (res.count, res.index) == naive_kernels.count_first(values, ref_t, 0,
                                                                           1 << N), (N, target)
        spec = TruthTable(table)._spec()
        cuts = sorted({0, 1 << N, *rng.integers(0, 1 << N, size=6).tolist()})
        for start, stop in zip(cuts[:-1], cuts[1:]):
            assert (simulate._disagree_chunk(plan, spec, start, stop)
                    == naive_kernels.count_first(values, table.tolist(), start, stop))
        assert c.truth_table(circ, **FU).tolist() == values


@needs_jit
def test_negative_control_sub_plane_sums_are_needed(monkeypatch):
    """With the sub-plane partial sums zeroed (every sub-plane read as sub-plane 0) the counts
    must go wrong: the check can fail."""
    from circuits import dispatch
    monkeypatch.setattr(dispatch, "_FUSED_MASK_BITS", 9)
    rng = np.random.default_rng(3)
    wrong = 0
    for _ in range(3):
        circ = random_circuit(rng, 14, (8,), wmax=6)
        plan = simulate._plan_of(circ, "fused")[1]
        broken = plan.with_code(plan.code)
        broken.sub = np.zeros_like(plan.sub)
        broken.sub.setflags(write=False)
        spec = c.Constant(14, 0)._spec()
        wrong += simulate._disagree_chunk(broken, spec, 0, 1 << 14) != \
            simulate._disagree_chunk(plan, spec, 0, 1 << 14)
    assert wrong > 0


def test_mask_bits_follow_the_table_size(monkeypatch):
    """The compiled kernel's masks shrink until the table fits ``_FUSED_TABLE_BYTES``."""
    from benchmarks.bench_circuits import w1_circuit
    from circuits import dispatch
    circ = w1_circuit(26, 256, seed=2)                     # W2: 6.4 MiB at 4096 lanes
    assert bplan.mask_table_bytes(circ, 12) > dispatch._FUSED_TABLE_BYTES
    mb = dispatch._fused_mask_bits(circ)
    assert bplan.mask_table_bytes(circ, mb) <= dispatch._FUSED_TABLE_BYTES
    assert mb == 9 or bplan.mask_table_bytes(circ, mb + 1) > dispatch._FUSED_TABLE_BYTES
    small = random_circuit(np.random.default_rng(1), 13, (5,))
    assert dispatch._fused_mask_bits(small) == 12
    assert "lanes" in c.kernel_plan(circ, "fused").reason


# --- the kernel cache ---------------------------------------------------------------------------

def test_key_depends_on_every_weight_and_threshold():
    circ = random_circuit(np.random.default_rng(2), 8, (4,))
    key = kc.circuit_key(circ)
    assert key == kc.circuit_key(random_circuit(np.random.default_rng(2), 8, (4,)))
    for li in range(2):
        W = [layer.weights.copy() for layer in circ.layers]
        t = [layer.thresholds.copy() for layer in circ.layers]
        W[li][0, 0] += 1
        assert kc.circuit_key(ThresholdCircuit(tuple(ThresholdLayer(a, b) for a, b in
                                                     zip(W, circ_t(circ))))) != key
        t[li][0] += 1
        assert kc.circuit_key(ThresholdCircuit(tuple(ThresholdLayer(a, b) for a, b in
                                                     zip(circ_w(circ), t)))) != key


def circ_w(circ):
    return [layer.weights for layer in circ.layers]


def circ_t(circ):
    return [layer.thresholds for layer in circ.layers]


@needs_jit
def test_cache_files_are_written_whole_found_again_and_pruned(tmp_path, monkeypatch):
    monkeypatch.setenv("DEPTHSEP_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(kc, "MAX_FILES", 2)
    rng = np.random.default_rng(8)
    keys = []
    for _ in range(3):
        circ = random_circuit(rng, 13, (3,))
        key = kc.circuit_key(circ)
        assert kc.state(key) == "absent"
        c.count_ones(circ, **FU)
        path = tmp_path / "kernels" / f"_depthsep_fused_{key}.py"
        assert path.read_text() == cg.source(circ)           # whole, not partial
        assert kc.state(key) == "loaded"
        keys.append(key)
        os.utime(path, (1e9 + len(keys), 1e9 + len(keys)))   # distinct ages
    files = sorted(p.name for p in (tmp_path / "kernels").glob("_depthsep_fused_*.py"))
    assert len(files) == 2 and f"_depthsep_fused_{keys[0]}.py" not in files
    assert not list((tmp_path / "kernels").glob(".*.tmp"))


@needs_jit
def test_unwritable_cache_directory_falls_back_to_a_temporary_one(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")        # mkdir below it fails, also for root
    monkeypatch.setenv("DEPTHSEP_CACHE_DIR", str(blocker / "cache"))
    from circuits import _bitsliced_cache

    # the fallback is remembered for the process: give it a fresh list so later tests (the
    # child-compile ones) still see a usable cache directory
    monkeypatch.setattr(_bitsliced_cache, "_TEMP_DIR", [])
    circ = random_circuit(np.random.default_rng(9), 13, (5,))
    assert c.count_ones(circ, **FU) == sum(naive_table(circ))
    assert _bitsliced_cache._TEMP_DIR        # the temporary directory was used


# --- dispatch -----------------------------------------------------------------------------------

def test_kernel_plan_reports_the_compiled_kernel_and_its_cost(tmp_path, monkeypatch):
    monkeypatch.setenv("DEPTHSEP_CACHE_DIR", str(tmp_path))
    p = c.kernel_plan(c.ip_depth3(18))                       # 2^36 points: worth compiling
    assert p.kernel == "fused" and p.adder_inputs > 0
    assert "compile" in p.reason and "low/high" in p.reason
    assert c.kernel_plan(c.ip_depth3(4)).kernel == "lowhigh"  # 256 points
    small = random_circuit(np.random.default_rng(1), 13, (5,))
    assert c.kernel_plan(small, "fused").kernel == "fused"
    assert "requested with kernel='fused'" in c.kernel_plan(small, "fused").reason


def test_fused_refuses_large_weights_and_oversized_trees(tmp_path, monkeypatch):
    monkeypatch.setenv("DEPTHSEP_CACHE_DIR", str(tmp_path))
    big = ThresholdCircuit.single_gate([2**40] * 30, 1)
    with pytest.raises(InvalidCircuitError, match="kernel='fused' does not apply"):
        c.kernel_plan(big, "fused")
    monkeypatch.setattr(cg, "MAX_INPUTS", 3)
    circ = c.ip_depth3(18)
    with pytest.raises(InvalidCircuitError, match="adder inputs"):
        c.kernel_plan(circ, "fused")
    assert c.kernel_plan(circ).kernel == "bitsliced"          # auto: the interpreted program


@needs_jit
def test_auto_uses_a_cached_kernel(tmp_path, monkeypatch):
    monkeypatch.setenv("DEPTHSEP_CACHE_DIR", str(tmp_path))
    from benchmarks.bench_circuits import w1_circuit
    circ = w1_circuit(22, 64, seed=12)
    before = c.kernel_plan(circ)
    assert before.kernel == "generic"     # 2^22 points: masks pay, a per-circuit compile not
    c.count_ones(circ, **FU)
    after = c.kernel_plan(circ)
    assert after.kernel == "fused" and "compiled in this process" in after.reason
    assert c.count_ones(circ) == c.count_ones(circ, kernel="lowhigh")


def test_tiny_circuits_also_with_the_jit_disabled():
    """Runs in the NUMBA_DISABLE_JIT=1 suite too: the generated plane function and the driver
    as plain Python."""
    circ = random_circuit(np.random.default_rng(21), 6, (3, 2))
    values = naive_table(circ)
    res = c.count_disagreements(circ, "parity", **FU)
    assert (res.count, res.index) == naive_kernels.count_first(values, naive.parity(6), 0, 64)
