"""B: a kernel call on a 200k-gate circuit, with the pre-activation bound cached at construction.

Ours: ``circuits.evaluate_indices(circuit, k)`` for 4 points of a depth-2 circuit with 200,000
hidden gates on N = 16 inputs (weights in [-50, 50]); the exact bound max_j sum_i |w_ji| + |t_j|
is computed once when the circuit is built.
Baseline (the behaviour before issue 10): the same call preceded by the bound as it was computed
on every kernel call, a Python-int loop over every gate of every layer.

Timed A B A B ... (interleaved), median of >= 3 repeats; both bounds must agree.

Usage: python benchmarks/bench_bound.py [--gates 200000] [--repeats 5] [--out DIR]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import interleaved, machine_info  # noqa: E402
import circuits as c  # noqa: E402
from circuits.utils.files import write_json_atomic  # noqa: E402


def python_int_bound(circuit) -> int:
    """The per-call bound before issue 10: Python ints, one gate at a time."""
    bound = 0
    for layer in circuit.layers:
        for row, t in zip(layer.weights.tolist(), layer.thresholds.tolist()):
            bound = max(bound, sum(abs(v) for v in row) + abs(t))
    return bound


def main(argv=None) -> int:
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--gates", type=int, default=200_000, help="hidden gates; default 200000")
    p.add_argument("--inputs", type=int, default=16, help="circuit inputs N; default 16")
    p.add_argument("--repeats", type=int, default=5, help="interleaved repeats (>= 3); default 5")
    p.add_argument("--out", type=Path, default=Path("benchmarks"), help="where results_bound.json goes")
    args = p.parse_args(argv)
    rng = np.random.default_rng(0)
    W = rng.integers(-50, 51, (args.gates, args.inputs))
    t = rng.integers(-100, 101, args.gates)
    v = rng.integers(-3, 4, args.gates)
    t0 = time.perf_counter()
    circ = c.ThresholdCircuit.depth2(W, t, v, 0)
    build = time.perf_counter() - t0
    k = np.arange(4)
    c.evaluate_indices(circ, k)                      # compile outside the timings
    assert python_int_bound(circ) == circ.preactivation_bound
    res = interleaved({"cached": lambda: c.evaluate_indices(circ, k),
                       "per_call_python_bound": lambda: (python_int_bound(circ),
                                                         c.evaluate_indices(circ, k))},
                      repeats=args.repeats)
    ours, base = res["cached"], res["per_call_python_bound"]
    ratio = base.median / ours.median
    load = os.getloadavg()[0]
    print(f"B  {args.gates} gates, N = {args.inputs}: evaluate_indices (4 points) "
          f"{ours.summary(1e3, 'ms')} vs per-call Python bound {base.summary(1e3, 'ms')}: "
          f"{ratio:.1f}x; construction {build:.3f} s; load {load:.2f}")
    write_json_atomic(args.out / "results_bound.json", {
        "workload": "B", "gates": args.gates, "inputs": args.inputs, "bound": circ.preactivation_bound,
        "construction_seconds": build, "cached": ours.to_dict() | {"result": None},
        "per_call_python_bound": base.to_dict() | {"result": None}, "ratio": ratio,
        "load_1min": load, "machine": machine_info()})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
