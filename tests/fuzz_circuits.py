"""Random circuits over the whole int64 weight range, checked against the naive twin (issue 25).

Shared by the fast profile in tests/test_reliability2.py and the long one (``slow``); also
runnable as ``python -m tests.fuzz_circuits N_CASES SEED [--fused-every K] [--kernels a,b]
[--scales small,medium]`` for the recorded long runs (docs/reliability.rst).  ``--scales``
restricts the weight scales drawn: ``small`` keeps every circuit in the bit-sliced kernels'
range, so a ``bitsliced,fused`` profile checks those kernels on (nearly) every case rather than
reporting "does not apply".
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


def random_layers(rng, scales=_SCALES):
    """Random layer list ``[(W, t), ...]`` (Python ints); may exceed the int64 bound on purpose
    (only when ``scales`` holds "huge" or "edge")."""
    N = rng.randint(1, 9)
    depth = rng.randint(1, 3)
    sizes = [N] + [rng.randint(1, 4) for _ in range(depth - 1)] + [1]
    over = rng.random() < 0.05 and bool({"huge", "edge"} & set(scales))  # must be refused
    layers = []
    for a, b in zip(sizes, sizes[1:]):
        scale = rng.choice(scales)
        budget = INT64_MAX + (rng.randint(1, 1 << 40) if over else -rng.randint(0, 3))
        rows = [_row(rng, a, scale, budget) for _ in range(b)]
        layers.append(([r for r, _ in rows], [t for _, t in rows]))
    return N, layers


def _exact_bound(layers):
    return max(sum(abs(w) for w in row) + abs(t) for W, T in layers for row, t in zip(W, T))


def check_case(rng, kernels, *, stats, scales=_SCALES):
    """One random circuit: refused iff the exact bound is exceeded; else every kernel in
    ``kernels`` gives the naive twin's table, count of ones and count of disagreements with a
    threshold-function target (a kernel that does not apply may say so with our own error).
    Returns a failure description or None."""
    N, layers = random_layers(rng, scales)
    over = _exact_bound(layers) > INT64_MAX
    try:
        circ = C.ThresholdCircuit([C.ThresholdLayer(W, T) for W, T in layers])
    except DepthsepError:
        stats["refused"] += 1
        return None if over else f"legal circuit refused: {layers}"
    if over:
        return f"circuit over the int64 bound accepted: {layers}"
    want = circuit_table(layers, N)
    # target: a random gate over the inputs, in the same scale as the circuit's first layer
    tw, tt = _row(rng, N, rng.choice(scales), INT64_MAX - rng.randint(0, 3))
    target = C.ThresholdFunction(tw, tt)
    diffs = [k for k, (a, b) in enumerate(zip(want, circuit_table([([tw], [tt])], N))) if a != b]
    for kernel in kernels:
        try:
            got = C.truth_table(circ, kernel=kernel).tolist()
            ones = C.count_ones(circ, kernel=kernel)
            dis = C.count_disagreements(circ, target, kernel=kernel)
        except DepthsepError as exc:
            if kernel in ("bitsliced", "fused", "generic") and "does not apply" in str(exc):
                stats[f"{kernel} not applicable"] += 1
                continue
            return f"kernel={kernel}: {type(exc).__name__}: {exc} on {layers}"
        except Exception as exc:  # noqa: BLE001 - a foreign exception is the failure reported
            return f"kernel={kernel}: foreign {type(exc).__name__}: {exc} on {layers}"
        if got != want or ones != sum(want):
            return f"kernel={kernel}: wrong bits on {layers}: {got} != {want}"
        if dis.count != len(diffs) or dis.index != (diffs[0] if diffs else -1):
            return (f"kernel={kernel}: disagreements with ThresholdFunction({tw}, {tt}): "
                    f"{dis.count} (first {dis.index}) != {len(diffs)} on {layers}")
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


DEFAULT_KERNELS = ("lowhigh", "bitsliced", "auto")


def run(n_cases, seed, *, fused_every=0, kernels=DEFAULT_KERNELS, scales=_SCALES,
        max_failures=5, progress_every=0):
    """``n_cases`` random circuits from ``seed``, each checked with every kernel in
    ``kernels`` (and with ``"fused"`` on every ``fused_every``-th case when that is > 0).
    Returns ``(stats, failures, seconds)``; ``stats[kernel]`` counts the cases that kernel
    checked, ``stats[kernel + " not applicable"]`` those it refused with "does not apply"."""
    from collections import Counter
    rng = random.Random(seed)
    stats, failures = Counter(), []
    t0 = time.perf_counter()
    for i in range(n_cases):
        ks = list(kernels)
        if fused_every and i % fused_every == 0 and "fused" not in ks:
            ks.append("fused")
        fail = check_case(rng, ks, stats=stats, scales=scales)
        if fail:
            failures.append(fail)
            if len(failures) >= max_failures:
                break
        if progress_every and (i + 1) % progress_every == 0:
            print(f"  {i + 1} cases, {time.perf_counter() - t0:.0f} s, {dict(stats)}, "
                  f"{len(failures)} failures", file=sys.stderr, flush=True)
    return stats, failures, time.perf_counter() - t0


def _option(argv, name, default):
    return argv[argv.index(name) + 1] if name in argv else default


def _batched(n, seed, batch, argv):
    """Run ``n`` cases as consecutive child processes of ``batch`` cases each (seeds
    ``seed * 10**6 + b``), one at a time: compiled fused kernels are never freed within a
    process (about 1.4 MiB each), so a long fused profile must not run in one process."""
    import json
    import os
    import subprocess
    from collections import Counter
    stats, failures, secs, rss = Counter(), [], 0.0, 0.0
    rest = [a for i, a in enumerate(argv) if a != "--batch" and (i == 0 or argv[i - 1] != "--batch")]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(Path(__file__).resolve().parents[1]), os.environ.get("PYTHONPATH", "")]))
    for b in range(-(-n // batch)):
        k = min(batch, n - b * batch)
        out = subprocess.run([sys.executable, "-m", "tests.fuzz_circuits", str(k),
                              str(seed * 10**6 + b), *rest, "--json"], capture_output=True,
                             text=True, env=env)
        line = [x for x in out.stdout.splitlines() if x.startswith("JSON ")]
        if out.returncode not in (0, 1) or not line:
            failures.append(f"batch {b}: exit {out.returncode}: {out.stderr[-500:]}")
            continue
        doc = json.loads(line[-1][5:])
        stats.update(doc["stats"])
        failures += doc["failures"]
        secs += doc["seconds"]
        rss = max(rss, doc["rss_mib"])
        print(f"  batch {b}: {sum(stats[x] for x in ('cases', 'refused'))} cases, {secs:.0f} s, "
              f"{dict(stats)}, {len(failures)} failures", file=sys.stderr, flush=True)
    return stats, failures, secs, rss


if __name__ == "__main__":
    import json
    import resource
    from pathlib import Path
    n, seed = int(sys.argv[1]), int(sys.argv[2])
    every = int(_option(sys.argv, "--fused-every", "0"))
    kernels = tuple(_option(sys.argv, "--kernels", ",".join(DEFAULT_KERNELS)).split(","))
    scales = tuple(_option(sys.argv, "--scales", ",".join(_SCALES)).split(","))
    assert set(scales) <= set(_SCALES), scales
    batch = int(_option(sys.argv, "--batch", "0"))
    if batch:
        stats, failures, secs, rss = _batched(n, seed, batch, [a for a in sys.argv[3:]
                                                               if a != "--json"])
    else:
        stats, failures, secs = run(n, seed, fused_every=every, kernels=kernels, scales=scales,
                                    max_failures=50, progress_every=int(_option(
                                        sys.argv, "--progress", "0")))
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if "--json" in sys.argv:
        print("JSON " + json.dumps({"stats": dict(stats), "failures": failures,
                                    "seconds": secs, "rss_mib": rss}))
    print(f"{n} generated (kernels {','.join(kernels)}, scales {','.join(scales)}), "
          f"{dict(stats)}; {len(failures)} failures; {secs:.1f} s; peak RSS {rss:.0f} MiB")
    for f in failures:
        print("FAIL", f[:500])
    sys.exit(1 if failures else 0)
