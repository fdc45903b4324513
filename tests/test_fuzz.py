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

KERNELS = ["lowhigh", "bitsliced", "fused", "generic", "auto"]
LONG_CASES = int(os.environ.get("DEPTHSEP_FUZZ_CASES", "10000"))
#: kernel="fused" compiles one kernel per distinct circuit (about a second each, and compiled
#: code is never freed within a process): its long profile runs 1/20 of the cases.
FUSED_LONG_CASES = int(os.environ.get("DEPTHSEP_FUZZ_FUSED_CASES", str(max(1, LONG_CASES // 20))))


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
    n = FUSED_LONG_CASES if kernel == "fused" else LONG_CASES
    t0 = time.perf_counter()
    out = _run_circuits(range(1000, 1000 + n), kernel)
    print(f"\ncircuit fuzz kernel={kernel}: {n} cases, {out}, "
          f"{time.perf_counter() - t0:.1f} s")


# ------------------------------------------------------------------ hostile files

def _seed_files(tmp):
    """Valid files of every kind a loader reads: ``{name: (suffix, bytes)}``."""
    import io as _io
    import json

    import numpy as np

    from circuits.io import save_circuit
    from networks.interop import save_state_dict
    from networks.sigma import SigmaNetwork

    circ = C.ThresholdCircuit.depth2([[1, -2, 3], [2, 2, -1]], [1, 2], [1, -1], 1)
    save_circuit(circ, tmp / "c.json")
    dag = C.DagCircuit(3, [C.DagGate("a", "AND", [("x", 0), ("x", 1)]),
                           C.DagGate("o", "THR", ["a", ("x", 2)], weights=[2, -1], threshold=1)],
                       output="o")
    save_circuit(dag, tmp / "d.json")
    net = SigmaNetwork.random([3, 4, 1], seed=0)
    net.save(tmp / "n.json")
    save_state_dict(net, tmp / "w.npz")
    buf = _io.BytesIO()
    np.save(buf, np.array([0, 1, 1, 0, 1, 0, 0, 1], dtype=np.uint8))
    comp = _io.BytesIO()
    np.savez_compressed(comp, **{"0.weight": np.ones((4, 3)), "0.bias": np.zeros(4),
                                 "2.weight": np.ones((1, 4)), "2.bias": np.zeros(1)})
    return {
        "circuit": (".json", (tmp / "c.json").read_bytes()),
        "dag": (".json", (tmp / "d.json").read_bytes()),
        "network": (".json", (tmp / "n.json").read_bytes()),
        "npz": (".npz", (tmp / "w.npz").read_bytes()),
        "npz_deflated": (".npz", comp.getvalue()),
        "table_json": (".json", json.dumps({"truth_table": [0, 1, 1, 0]}).encode()),
        "table_txt": (".txt", b"0110 1001\n"),
        "table_npy": (".npy", buf.getvalue()),
    }


_SPLICE = [b"\x00", b"\xff", b"[", b"]", b"{", b"}", b'"', b",", b"-", b"9" * 30, b"1e999",
           b"NaN", b"true", b"null", b"\\u0000", b"\xc3\x28", b"PK\x03\x04", b"PK\x01\x02",
           b"\x93NUMPY", b"{'descr': '|O', 'fortran_order': False, 'shape': (3,), }",
           b"(99999999999, 99999999999)", b"-9223372036854775808", b"9223372036854775807",
           b"4611686018427387904", b'"shape": (', b"'<f8'", b"'<U999999'"]


def mutate(data: bytes, r: random.Random) -> bytes:
    """A random corruption of ``data``: flips, cuts, splices, duplications, size fields."""
    b = bytearray(data)
    for _ in range(r.choice([1, 1, 2, 3, 8])):
        op = r.randrange(7)
        if not b:
            b += r.choice(_SPLICE)
            continue
        i = r.randrange(len(b))
        if op == 0:
            b[i] ^= 1 << r.randrange(8)
        elif op == 1:
            b[i] = r.randrange(256)
        elif op == 2:
            del b[i:i + r.randint(1, 64)]
        elif op == 3:
            b[i:i] = r.choice(_SPLICE)
        elif op == 4:
            b = b[:i]
        elif op == 5:
            j = r.randrange(len(b))
            b[i:i] = b[j:j + r.randint(1, 256)] * r.randint(1, 50)
        else:                    # a 4-byte little-endian field (zip sizes, offsets) set big
            b[i:i + 4] = r.choice([0xFFFFFFFF, 0x7FFFFFFF, 1 << 30, 0]).to_bytes(4, "little")
    return bytes(b)


def _loaders():
    from circuits.io import load_circuit, load_truth_table
    from circuits.utils.documents import read_document
    from circuits.utils.files import read_json
    from networks.interop import load_state_dict
    from networks.sigma import SigmaNetwork
    return {"load_circuit": load_circuit, "load_truth_table": load_truth_table,
            "SigmaNetwork.load": SigmaNetwork.load, "read_json": read_json,
            "read_document": read_document, "load_state_dict": load_state_dict}


def _cli_commands(path):
    return [["info", str(path)], ["spectrum", str(path)], ["check", str(path), "--target", "parity"]]


def check_file_case(seed: int, tmp, seeds: dict, *, cli: bool = True, max_seconds: float = 10.0):
    """Feed one mutated file to every loader (and CLI file command); anything but our own
    error, a hang past ``max_seconds`` or a CLI traceback/internal error fails."""
    import contextlib
    import io as _io

    from experiments.cli import main

    r = random.Random(seed)
    name = r.choice(sorted(seeds))
    suffix, data = seeds[name]
    if r.random() < 0.1:                                # sometimes the wrong suffix
        suffix = r.choice([".json", ".npz", ".npy", ".txt"])
    path = tmp / f"case{suffix}"
    path.write_bytes(mutate(data, r))
    for lname, fn in _loaders().items():
        t0 = time.perf_counter()
        try:
            fn(path)
        except DepthsepError:
            pass
        except Exception as exc:        # noqa: BLE001 - the point of the fuzzer
            raise AssertionError(f"seed {seed} ({name}{suffix}) {lname}: foreign "
                                 f"{type(exc).__name__}: {str(exc)[:200]}") from exc
        took = time.perf_counter() - t0
        assert took < max_seconds, f"seed {seed} {lname}: {took:.1f} s"
    if cli:
        for argv in _cli_commands(path):
            err = _io.StringIO()
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(_io.StringIO()):
                rc = main(argv)
            text = err.getvalue()
            assert rc in (0, 1, 2) and "Traceback" not in text and "internal error" not in text, (
                f"seed {seed} ({name}{suffix}) depthsep {' '.join(argv[:1])}: rc {rc}: {text[:300]}")


def test_fuzz_files_fast(tmp_path):
    seeds = _seed_files(tmp_path)
    for s in range(12):
        check_file_case(s, tmp_path, seeds, cli=s % 3 == 0)


@pytest.mark.slow
def test_fuzz_files_long(tmp_path):
    import resource
    seeds = _seed_files(tmp_path)
    t0 = time.perf_counter()
    for s in range(10_000, 10_000 + LONG_CASES):
        check_file_case(s, tmp_path, seeds, cli=True)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\nfile fuzz: {LONG_CASES} cases x {len(_loaders())} loaders + 3 CLI commands, "
          f"{time.perf_counter() - t0:.1f} s, peak RSS {rss:.0f} MiB")
    assert rss < 4096
