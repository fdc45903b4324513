"""File fuzzer for every loader and CLI file command (issue 25): "only our own errors, within a
time and memory bound".  Fast profile in tests/test_reliability2.py, long one behind ``slow``;
also ``python -m tests.fuzz_files N_CASES SEED`` for the recorded long runs."""

import contextlib
import io
import random
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import circuits as C
from circuits.io import load_circuit, load_truth_table, save_circuit
from circuits.utils.documents import read_document
from circuits.utils.errors import DepthsepError
from networks.interop import load_state_dict, save_state_dict
from networks.sigma import SigmaNetwork

#: per-case wall-clock bound (seconds) and whole-run peak-RSS growth bound (bytes)
CASE_SECONDS = 5.0
RSS_GROWTH = 1 << 30


def _seeds(d: Path) -> dict:
    """Valid files of every kind (suffix -> bytes)."""
    c = C.ThresholdCircuit.depth2([[1, -2, 3], [2, 2, -1]], [1, 2], [1, -1], 1)
    save_circuit(c, d / "c.json")
    net = SigmaNetwork.random([3, 4, 1], seed=0)
    net.save(d / "n.json")
    save_state_dict(net, d / "s.npz")
    b = io.BytesIO()
    np.savez_compressed(b, **{"0.weight": np.ones((4, 3)), "0.bias": np.zeros(4),
                              "1.weight": np.ones((1, 4)), "1.bias": np.zeros(1)})
    npy = io.BytesIO()
    np.save(npy, np.array([0, 1, 1, 0], dtype=np.uint8))
    return {"circuit.json": (d / "c.json").read_bytes(), "network.json": (d / "n.json").read_bytes(),
            "state.npz": (d / "s.npz").read_bytes(), "statec.npz": b.getvalue(),
            "tt.npy": npy.getvalue(), "tt.txt": b"0110\n", "tt.json": b'{"truth_table": [0,1,1,0]}'}


_JUNK = [b"\x00", b"\xff", b"[", b"]", b"{", b"}", b'"', b"1e999", b"-9223372036854775808",
         b"99999999999999999999999", b"NaN", b"PK\x03\x04", b"\x93NUMPY", b"(1099511627776,)",
         b"'shape': (4294967296, 4294967296)", b"\\u0000", b"[" * 50, b"0" * 1000]


def mutate(rng: random.Random, data: bytes) -> bytes:
    b = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(6)
        if op == 0 and b:                                   # flip bytes
            for _ in range(rng.randint(1, 8)):
                b[rng.randrange(len(b))] = rng.randrange(256)
        elif op == 1 and b:                                 # truncate
            del b[rng.randrange(len(b)):]
        elif op == 2:                                       # insert junk
            k = rng.randrange(len(b) + 1)
            b[k:k] = rng.choice(_JUNK)
        elif op == 3 and len(b) > 2:                        # duplicate a slice
            i = rng.randrange(len(b))
            j = min(len(b), i + rng.randint(1, 200))
            b[i:i] = b[i:j] * rng.randint(1, 20)
        elif op == 4 and b:                                 # overwrite an int-looking field
            k = rng.randrange(len(b))
            b[k:k + 4] = str(rng.choice([0, -1, 2**31, 2**63, 10**30])).encode()
        else:                                               # swap the zip/npy size fields
            for pat in (b"'shape': (", b"PK\x01\x02"):
                k = b.find(pat)
                if k >= 0:
                    off = k + len(pat) + rng.randrange(24)
                    b[off:off + 4] = rng.randbytes(4)
    return bytes(b)


def _loaders():
    return [("read_document", ".json", lambda p: read_document(p)),
            ("load_circuit", ".json", lambda p: load_circuit(p)),
            ("SigmaNetwork.load", ".json", lambda p: SigmaNetwork.load(p)),
            ("load_truth_table", None, lambda p: load_truth_table(p)),
            ("load_state_dict", ".npz", lambda p: load_state_dict(p))]


def _cli(argv):
    from experiments import cli
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        rc = cli.main(argv)
    return rc, err.getvalue()


def run(n_cases: int, seed: int, *, max_failures: int = 5):
    from collections import Counter
    rng = random.Random(seed)
    stats, failures = Counter(), []
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        seeds = _seeds(d)
        names = sorted(seeds)
        for _ in range(n_cases):
            name = rng.choice(names)
            suffix = Path(name).suffix
            p = d / f"case{suffix}"
            p.write_bytes(mutate(rng, seeds[name]))
            which = rng.randrange(len(_loaders()) + 3)
            t = time.perf_counter()
            if which < len(_loaders()):
                lname, want_suffix, fn = _loaders()[which]
                if want_suffix and want_suffix != suffix:
                    p = p.rename(d / f"case{want_suffix}")
                try:
                    fn(p)
                    stats["accepted"] += 1
                except DepthsepError:
                    stats["refused"] += 1
                except Exception as exc:  # noqa: BLE001 - the failure being counted
                    failures.append(f"{lname} on mutated {name}: {type(exc).__name__}: {exc}"[:400])
                what = lname
            else:
                cmd = ("check", "info", "spectrum")[which - len(_loaders())]
                argv = [cmd, str(p)] + (["--target", "parity"] if cmd == "check" else [])
                rc, err = _cli(argv)
                stats[f"cli {cmd} rc={rc}"] += 1
                if "Traceback" in err or "internal error" in err or rc not in (0, 1, 2):
                    failures.append(f"cli {cmd} on mutated {name}: rc={rc} {err.strip()[:300]}")
                what = f"cli {cmd}"
            secs = time.perf_counter() - t
            if secs > CASE_SECONDS:
                failures.append(f"{what} on mutated {name} took {secs:.1f} s")
            stats["cases"] += 1
            if len(failures) >= max_failures:
                break
    grew = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - rss0
    if grew > RSS_GROWTH:
        failures.append(f"peak RSS grew by {grew / 2**20:.0f} MiB")
    stats["peak RSS growth MiB"] = round(grew / 2**20)
    return stats, failures, time.perf_counter() - t0


if __name__ == "__main__":
    n, seed = int(sys.argv[1]), int(sys.argv[2])
    stats, failures, secs = run(n, seed, max_failures=50)
    print(f"{n} cases: {dict(stats)}; {len(failures)} failures; {secs:.1f} s")
    for f in failures:
        print("FAIL", f)
    sys.exit(1 if failures else 0)
