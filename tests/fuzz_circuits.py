"""Random circuits over the whole int64 weight range, checked against the naive twin (issue 25).

Shared by the fast profile in tests/test_fuzz.py and the long one (``-m slow``); also runnable
as ``python -m tests.fuzz_circuits N_CASES SEED [--fused-every K]`` for the recorded long runs.
"""

import random
import sys
import time

import circuits as C
from circuits.threshold import INT64_MAX
from circuits.utils.errors import DepthsepError
from tests.naive import circuit_table

_SCALES = ("small", "medium", "huge", "edge")


def _row(rng, n, scale, budget):
    """n nonzero-or-zero ints and a threshold with sum |w| + |t| about ``budget`` (a Python int)."""
    if scale == "small":
        return [rng.randint(-3, 3) for _ in range(n)], rng.randint(-3, 3)
    if scale == "medium":
        m = 1 << 20
        return [rng.randint(-m, m) for _ in range(n)], rng.randint(-m, m)
    per = budget // (n + 1)
    if scale == "edge":       # powers of two and +-per: sums land exactly on / next to the bound
        vals = [per, -per, 1 << (per.bit_length() - 1), 0, 1, -1]
        return [rng.choice(vals) for _ in range(n)], rng.choice(vals)
    return [rng.randint(-per, per) for _ in range(n)], rng.randint(-per, per)


def random_layers(rng):
    """Random layer list ``[(W, t), ...]`` (Python ints); may exceed the int64 bound on purpose."""
    N = rng.randint(1, 9)
    depth = rng.randint(1, 3)
    sizes = [N] + [rng.randint(1, 4) for _ in range(depth - 1)] + [1]
    over = rng.random() < 0.05               # a few just over the bound: must be refused
    layers = []
    for a, b in zip(sizes, sizes[1:]):
        scale = rng.choice(_SCALES)
        budget = INT64_MAX + (rng.randint(1, 1 << 40) if over else -rng.randint(0, 3))
        rows = [_row(rng, a, scale, budget) for _ in range(b)]
        layers.append(([r for r, _ in rows], [t for _, t in rows]))
    return N, layers


def _exact_bound(layers):
    return max(sum(abs(w) for w in row) + abs(t) for W, T in layers for row, t in zip(W, T))


def check_case(rng, kernels, *, stats):
    """One random circuit: refused iff the exact bound is exceeded; else every kernel in
    ``kernels`` gives the naive twin's table and count (a kernel that does not apply may say so
    with our own error).  Returns a failure description or None."""
    N, layers = random_layers(rng)
    over = _exact_bound(layers) > INT64_MAX
    try:
        circ = C.ThresholdCircuit([C.ThresholdLayer(W, T) for W, T in layers])
    except DepthsepError:
        stats["refused"] += 1
        return None if over else f"legal circuit refused: {layers}"
    if over:
        return f"circuit over the int64 bound accepted: {layers}"
    want = circuit_table(layers, N)
    for kernel in kernels:
        try:
            got = C.truth_table(circ, kernel=kernel).tolist()
            ones = C.count_ones(circ, kernel=kernel)
        except DepthsepError as exc:
            if kernel in ("bitsliced", "fused") and "does not apply" in str(exc):
                stats[f"{kernel} not applicable"] += 1
                continue
            return f"kernel={kernel}: {type(exc).__name__}: {exc} on {layers}"
        except Exception as exc:  # noqa: BLE001 - a foreign exception is the failure reported
            return f"kernel={kernel}: foreign {type(exc).__name__}: {exc} on {layers}"
        if got != want or ones != sum(want):
            return f"kernel={kernel}: wrong bits on {layers}: {got} != {want}"
        stats[kernel] += 1
    # the same first-layer gate as a ThresholdFunction target (its own bound rule)
    W, T = layers[0]
    try:
        f = C.ThresholdFunction(W[0], T[0])
        gate = C.ThresholdCircuit.single_gate(W[0], T[0])
        same = C.truth_table(gate).tolist() == f.truth_table().tolist() \
            == circuit_table([([W[0]], [T[0]])], N)
    except Exception as exc:  # noqa: BLE001
        return f"ThresholdFunction({W[0]}, {T[0]}): {type(exc).__name__}: {exc}"
    if not same:
        return f"ThresholdFunction differs from its gate / the twin on {W[0]}, {T[0]}"
    stats["cases"] += 1
    return None


def run(n_cases, seed, *, fused_every=0, max_failures=5):
    from collections import Counter
    rng = random.Random(seed)
    stats, failures = Counter(), []
    t0 = time.perf_counter()
    for i in range(n_cases):
        kernels = ["lowhigh", "bitsliced", "auto"]
        if fused_every and i % fused_every == 0:
            kernels.append("fused")
        fail = check_case(rng, kernels, stats=stats)
        if fail:
            failures.append(fail)
            if len(failures) >= max_failures:
                break
    return stats, failures, time.perf_counter() - t0


if __name__ == "__main__":
    n, seed = int(sys.argv[1]), int(sys.argv[2])
    every = int(sys.argv[sys.argv.index("--fused-every") + 1]) if "--fused-every" in sys.argv else 0
    stats, failures, secs = run(n, seed, fused_every=every, max_failures=50)
    print(f"{n} generated, {dict(stats)}; {len(failures)} failures; {secs:.1f} s")
    for f in failures:
        print("FAIL", f[:500])
    sys.exit(1 if failures else 0)
