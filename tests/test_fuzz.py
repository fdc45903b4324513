"""Fuzzers that stay (issue 25): random circuits over the whole weight range against the naive
twin for every kernel choice, and hostile files against every loader and CLI file command.

Fast profiles run by default (a few seconds); the long ones (``DEPTHSEP_FUZZ_CASES``, default
10,000 cases each) are marked slow: ``python -m pytest -q --runslow tests/test_fuzz.py``.
Each case is reproducible from its seed (printed on failure).
"""

import os
import random
import time

import pytest

import circuits as C
from circuits.analysis import walsh_spectrum
from circuits.threshold import INT64_MAX
from circuits.utils.errors import DepthsepError, InvalidCircuitError

from tests.naive import circuit_table

KERNELS = ["lowhigh", "bitsliced", "fused", "auto"]
LONG_CASES = int(os.environ.get("DEPTHSEP_FUZZ_CASES", "10000"))


# ------------------------------------------------------------------ random circuits

def _random_gate(r: random.Random, n_in: int, small: bool = False):
    """One gate ``(row, t)`` with ``sum |w| + |t| <= 2^63 - 1``, over the whole range.

    The scale of the bound is drawn log-uniformly up to 2^63 - 1 (with extra mass at the edge),
    then spread over the inputs and the threshold, so tiny, moderate and near-int64 gates all
    occur; some weights are zero.
    """
    e = r.randint(1, 10) if small else r.choice([r.randint(1, 8), r.randint(1, 63), 63, 63])
    budget = r.randint(1, (1 << e) - 1) if e < 63 else INT64_MAX - r.randint(0, 3)
    cuts = sorted(r.randint(0, budget) for _ in range(n_in))
    parts = [b - a for a, b in zip([0] + cuts, cuts + [budget])]   # n_in + 1 parts, sum = budget
    row = [p * r.choice((1, -1)) if r.random() > 0.15 else 0 for p in parts[:n_in]]
    t = parts[n_in] * r.choice((1, -1))
    if r.random() < 0.3:           # a threshold near the middle of the reachable sums
        lo = sum(v for v in row if v < 0)
        hi = sum(v for v in row if v > 0)
        room = INT64_MAX - sum(abs(v) for v in row)
        t = max(-room, min(room, r.randint(lo, hi) if hi > lo else lo))
    return row, t


def random_circuit(seed: int):
    """``(ThresholdCircuit, (weights, threshold) of a random target ThresholdFunction)``."""
    r = random.Random(seed)
    N = r.randint(1, 9)
    small = r.random() < 0.5       # half the circuits in the bit-sliced kernels' range
    depth = r.choice([1, 2, 2, 3, 3, 4])
    widths = [r.randint(1, 5) for _ in range(depth - 1)] + [1]
    layers, n_in = [], N
    for width in widths:
        gates = [_random_gate(r, n_in, small) for _ in range(width)]
        if width > 1 and r.random() < 0.3:          # shared rows (the bit-sliced plan groups them)
            gates[1] = (gates[0][0], gates[1][1] if abs(gates[1][1]) + sum(
                abs(v) for v in gates[0][0]) <= INT64_MAX else gates[0][1])
        layers.append(([g[0] for g in gates], [g[1] for g in gates]))
        n_in = width
    if r.random() < 0.2:            # one huge gate somewhere in an otherwise small circuit
        li = r.randrange(len(layers))
        W, t = layers[li]
        W[0], t[0] = _random_gate(r, len(W[0]))
    circuit = C.ThresholdCircuit([C.ThresholdLayer(W, t) for W, t in layers])
    return circuit, _random_gate(r, N)


def check_circuit_case(seed: int, kernel: str):
    """Compare every counting and table entry point with the Python-int twin; returns
    "ok" or "not applicable" (a forced kernel refusing with our own error)."""
    c, (tw, tt) = random_circuit(seed)
    layers = [(l.weights.tolist(), l.thresholds.tolist()) for l in c.layers]
    truth = circuit_table(layers, c.n_inputs)
    target = [int(sum(w * ((k >> i) & 1) for i, w in enumerate(tw)) >= tt)
              for k in range(1 << c.n_inputs)]
    try:
        table = C.truth_table(c, kernel=kernel).tolist()
        ones = C.count_ones(c, kernel=kernel)
        dis = C.count_disagreements(c, C.ThresholdFunction(tw, tt), kernel=kernel)
        if kernel == "auto":
            C.kernel_plan(c)
            spec = walsh_spectrum(c)
            assert int(spec.walsh[0]) == (1 << c.n_inputs) - 2 * sum(truth)
    except InvalidCircuitError as exc:
        if kernel != "auto" and "does not apply" in str(exc):
            return "not applicable"
        raise
    assert table == truth, f"seed {seed} kernel {kernel}: truth table differs"
    assert ones == sum(truth), f"seed {seed} kernel {kernel}: count_ones {ones} != {sum(truth)}"
    wrong = sum(a != b for a, b in zip(truth, target))
    assert dis.count == wrong, f"seed {seed} kernel {kernel}: disagreements {dis.count} != {wrong}"
    return "ok"


def _run_circuits(seeds, kernel):
    outcomes = {"ok": 0, "not applicable": 0}
    for s in seeds:
        outcomes[check_circuit_case(s, kernel)] += 1
    return outcomes


@pytest.mark.parametrize("kernel", KERNELS)
def test_fuzz_circuits_fast(kernel):
    out = _run_circuits(range(60), kernel)
    assert out["ok"] > 0


@pytest.mark.slow
@pytest.mark.parametrize("kernel", KERNELS)
def test_fuzz_circuits_long(kernel):
    t0 = time.perf_counter()
    out = _run_circuits(range(1000, 1000 + LONG_CASES), kernel)
    print(f"\ncircuit fuzz kernel={kernel}: {LONG_CASES} cases, {out}, "
          f"{time.perf_counter() - t0:.1f} s")
