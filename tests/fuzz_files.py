"""File fuzzer for every loader and CLI file command (issue 25): "only our own errors, within a
time and memory bound".  Fast profile in tests/test_reliability2.py, long one behind ``slow``;
also ``python -m tests.fuzz_files N_CASES SEED [--every-target] [--subprocess-every K]`` for the
recorded long runs (docs/reliability.rst).

Each case is one mutated valid file (circuit, DAG and network documents, stored and deflated
``.npz`` state dicts, ``.npy``/``.txt``/``.json`` truth tables).  By default it goes to one
target drawn at random; with ``every_target`` it goes to every loader (``read_document``,
``read_json``, ``load_circuit``, ``SigmaNetwork.load``, ``load_truth_table``,
``load_state_dict``, ``least-circuit --table``'s reader and the two resume files,
``cells.jsonl`` and ``sampled.json``) and every CLI file command (``depthsep check|info|spectrum``), so N cases
are N per target.  The CLI runs in-process (``experiments.cli.main`` with captured output:
milliseconds instead of a second of interpreter start per call); every ``subprocess_every``-th
case also runs the three commands as real ``python -m experiments.cli`` processes under a
wall-clock and address-space limit, to check the process's own exit path.  An in-process case
is stopped by an alarm after ``HANG_SECONDS`` (a hang is a failure, never a stuck run).
"""

import contextlib
import io
import json
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

#: per-call wall-clock bound (seconds) and whole-run peak-RSS growth bound (bytes)
CASE_SECONDS = 5.0
RSS_GROWTH = 1 << 30
#: an in-process call still running after this long is stopped and reported as a hang
HANG_SECONDS = 30
#: limits of the sampled real CLI processes: wall clock (s) and address space (bytes)
CHILD_SECONDS = 60
CHILD_ADDRESS_SPACE = 4 << 30


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
    dag = C.DagCircuit(3, [C.DagGate("a", "AND", [("x", 0), ("x", 1)]),
                           C.DagGate("o", "THR", ["a", ("x", 2)], weights=[2, -1], threshold=1)],
                       output="o")
    save_circuit(dag, d / "d.json")
    return {**_resume_seeds(d),
            "circuit.json": (d / "c.json").read_bytes(), "network.json": (d / "n.json").read_bytes(),
            "dag.json": (d / "d.json").read_bytes(),
            "state.npz": (d / "s.npz").read_bytes(), "statec.npz": b.getvalue(),
            "tt.npy": npy.getvalue(), "tt.txt": b"0110\n", "tt.json": b'{"truth_table": [0,1,1,0]}',
            "ttlist.json": b"[0, 1, 1, 0, 1, 0, 0, 1]"}


def _resume_seeds(d: Path) -> dict:
    """A valid ``cells.jsonl`` (separate) and ``sampled.json`` (separate-sampled)."""
    from networks.separation._sampled_resume import write_sampled
    from networks.separation import separate as S

    cells = d / "cells.jsonl"
    for rule in ("n", "n^2"):
        key = json.dumps(["floor", "ip", 3, rule, None, None, None, 0], separators=(",", ":"))
        S._append_resume(cells, key, {"kind": "floor", "target": "ip", "n": 3, "rule": rule,
                                      "widths": [3], "seed": None, "rho": 0.25, "r2": None,
                                      "depth": 2, "seconds": 0.01})
    doc = dict(SAMPLED_DOC, rows={}, depth3={"6": {"rho": 1.0}})
    for seed in (0, 1):
        key = f"n=6|majand|w=n|lam=0.003|seed={seed}"
        doc["rows"][key] = {"n": 6, "m": 8, "target": "majand", "width_rule": "n", "width": 6,
                            "penalty": 0.003, "seed": seed, "estimate": {"rho": {"mean": 0.5}},
                            "verdict": {"text": "not yet"}}
    write_sampled(d / "sampled.json", doc)
    _ORIGINAL_ROWS["cells.jsonl"] = S._load_resume(cells)
    _ORIGINAL_ROWS["sampled.json"] = json.loads(json.dumps(doc["rows"]))
    return {"cells.jsonl": cells.read_bytes(), "sampled.json": (d / "sampled.json").read_bytes()}


#: The header and settings of the ``sampled.json`` seed (what ``read_sampled`` is given).
SAMPLED_SETTINGS = {"steps": 20, "grid": 8, "lr": 0.01, "pairs": 4000, "delta": 0.05, "seed": 0,
                    "tries": 1}
SAMPLED_DOC = {"format": "depthsep.experiments.sampled", "version": 2,
               "settings": SAMPLED_SETTINGS}


def _least_circuit_table(p):
    from circuits.analysis.exact_synthesis import target_table
    return target_table("table", 2, table=p)


def _resume_reader(name):
    """A loader that reads the case as the resume file ``name`` in its own folder (the reader
    may move it aside); its messages are swallowed and everything it left is removed."""
    import shutil

    def load(p):
        from experiments import sampled as E
        from networks.separation._sampled_resume import read_sampled
        from networks.separation import separate as S

        box = p.parent / "resume"
        shutil.rmtree(box, ignore_errors=True)
        box.mkdir()
        q = box / name
        data = p.read_bytes()
        p.replace(q)
        try:
            with contextlib.redirect_stderr(io.StringIO()), \
                    contextlib.redirect_stdout(io.StringIO()):
                if name == "cells.jsonl":
                    rows = S._load_resume(q)
                    sealed = b'"sum"' in data
                else:
                    doc = dict(SAMPLED_DOC, rows={}, depth3={})
                    read_sampled(q, doc, dict(SAMPLED_SETTINGS), seed=0, fresh=False,
                                 key=E._cell_key, migrate=E._migrate)
                    rows = doc["rows"]
                    sealed = b'"checksums"' in data
            aside = any(".unusable-" in x.name for x in box.iterdir())
        finally:
            shutil.rmtree(box, ignore_errors=True)
        forged = [k for k, r in rows.items() if _ORIGINAL_ROWS[name].get(k) != r]
        if forged and sealed:
            raise AssertionError(f"{name}: a changed row was used under key {forged[0][:60]}")
        return (f"{len(rows)} rows used" + (", file moved aside" if aside else "")
                + ("" if sealed or not rows else " (no checksums: key-checked only)"))
    return load


#: The rows of the valid resume seeds (filled by :func:`_resume_seeds`).
_ORIGINAL_ROWS: dict = {}


_JUNK = [b"\x00", b"\xff", b"[", b"]", b"{", b"}", b'"', b"1e999", b"-9223372036854775808",
         b"99999999999999999999999", b"NaN", b"PK\x03\x04", b"\x93NUMPY", b"(1099511627776,)",
         b"'shape': (4294967296, 4294967296)", b"\\u0000", b"[" * 50, b"0" * 1000,
         b"\n", b'"sum":"', b'"rows":[]', b'{"key":"k","row":{},"sum":"00"}\n', b"0.5", b"1e300"]


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
    from circuits.utils.files import read_json
    return [("read_document", ".json", lambda p: read_document(p)),
            ("read_json", ".json", lambda p: read_json(p)),
            ("load_circuit", ".json", lambda p: load_circuit(p)),
            ("SigmaNetwork.load", ".json", lambda p: SigmaNetwork.load(p)),
            ("load_truth_table", None, lambda p: load_truth_table(p)),
            ("load_state_dict", ".npz", lambda p: load_state_dict(p)),
            ("least-circuit --table", None, _least_circuit_table),
            ("cells.jsonl", None, _resume_reader("cells.jsonl")),
            ("sampled.json", None, _resume_reader("sampled.json"))]


def _cli(argv):
    from experiments import cli
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        rc = cli.main(argv)
    return rc, err.getvalue()


class _Hang(Exception):
    """Raised by the alarm in a call that ran past HANG_SECONDS."""


def _alarm(signum, frame):
    raise _Hang


_COMMANDS = ("check", "info", "spectrum")


def _argv(cmd, p):
    return [cmd, str(p)] + (["--target", "parity"] if cmd == "check" else [])


def _real_cli(cmd, p):
    """One real ``python -m experiments.cli`` process under the child limits; a failure text or
    None."""
    import os
    import subprocess

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (CHILD_ADDRESS_SPACE, CHILD_ADDRESS_SPACE))

    root = Path(__file__).resolve().parents[1]
    try:
        out = subprocess.run([sys.executable, "-m", "experiments.cli", *_argv(cmd, p)],
                             capture_output=True, text=True, timeout=CHILD_SECONDS,
                             preexec_fn=limit, cwd=str(root),
                             env=dict(os.environ, PYTHONPATH=str(root)))
    except subprocess.TimeoutExpired:
        return f"real cli {cmd}: no exit after {CHILD_SECONDS} s"
    err = out.stderr
    if out.returncode not in (0, 1, 2) or "Traceback" in err or "internal error" in err:
        return f"real cli {cmd}: exit {out.returncode}: {err.strip()[-300:]}"
    return None


def run(n_cases: int, seed: int, *, max_failures: int = 5, every_target: bool = False,
        subprocess_every: int = 0, progress_every: int = 0, only=None):
    """Fuzz ``n_cases`` mutated files (see the module docstring); returns
    ``(stats, failures, seconds)``.  ``stats`` counts cases, and per target ("load_circuit",
    "cli check", ...) the calls refused with our own error, accepted, and CLI exit codes."""
    import signal
    from collections import Counter
    rng = random.Random(seed)
    stats, failures = Counter(), []
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    t0 = time.perf_counter()
    previous = signal.signal(signal.SIGALRM, _alarm)
    loaders = _loaders()
    commands = _COMMANDS
    if only is not None:                 # a subset of targets, by name ("cells.jsonl", "cli check")
        loaders = [x for x in loaders if x[0] in only]
        commands = tuple(c for c in _COMMANDS if f"cli {c}" in only)
    n_targets = len(loaders) + len(commands)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            d = Path(tmp)
            seeds = _seeds(d)
            names = sorted(seeds)
            # warm-up, untimed: the valid files through every command once, so numba's first
            # compile of the kernels (11 s for `check` on a cold cache, measured) is not
            # reported as a slow case; compile time is not what this fuzzer bounds
            w0 = time.perf_counter()
            for name in names:
                p = d / f"warm{Path(name).suffix}"
                p.write_bytes(seeds[name])
                for cmd in commands:
                    _cli(_argv(cmd, p))
                p.unlink()
            stats["warm-up seconds"] = round(time.perf_counter() - w0, 1)
            for i in range(n_cases):
                name = rng.choice(names)
                suffix = Path(name).suffix
                data = mutate(rng, seeds[name])
                targets = range(n_targets) if every_target else [rng.randrange(n_targets)]
                for which in targets:
                    p = d / f"case{suffix}"
                    p.write_bytes(data)
                    t = time.perf_counter()
                    signal.alarm(HANG_SECONDS)
                    try:
                        if which < len(loaders):
                            lname, want_suffix, fn = loaders[which]
                            if want_suffix and want_suffix != suffix:
                                p = p.rename(d / f"case{want_suffix}")
                            what = lname
                            try:
                                r = fn(p)
                                stats[f"{lname} {r if isinstance(r, str) else 'accepted'}"] += 1
                            except DepthsepError:
                                stats[f"{lname} refused"] += 1
                        else:
                            cmd = commands[which - len(loaders)]
                            what = f"cli {cmd}"
                            rc, err = _cli(_argv(cmd, p))
                            stats[f"cli {cmd} rc={rc}"] += 1
                            if "Traceback" in err or "internal error" in err or rc not in (0, 1, 2):
                                failures.append(f"cli {cmd} on mutated {name}: rc={rc} "
                                                f"{err.strip()[:300]}")
                    except _Hang:
                        failures.append(f"{what} on mutated {name}: hang (> {HANG_SECONDS} s)")
                    except Exception as exc:  # noqa: BLE001 - the failure being counted
                        failures.append(f"{what} on mutated {name}: {type(exc).__name__}: "
                                        f"{exc}"[:400])
                    finally:
                        signal.alarm(0)
                    secs = time.perf_counter() - t
                    if secs > CASE_SECONDS:
                        failures.append(f"{what} on mutated {name} took {secs:.1f} s")
                    p.unlink(missing_ok=True)
                if subprocess_every and i % subprocess_every == 0:
                    p = d / f"case{suffix}"
                    p.write_bytes(data)
                    for cmd in _COMMANDS:
                        stats["real cli processes"] += 1
                        fail = _real_cli(cmd, p)
                        if fail:
                            failures.append(f"{fail} (mutated {name})")
                    p.unlink(missing_ok=True)
                stats["cases"] += 1
                if progress_every and (i + 1) % progress_every == 0:
                    print(f"  {i + 1} cases, {time.perf_counter() - t0:.0f} s, "
                          f"{len(failures)} failures", file=sys.stderr, flush=True)
                if len(failures) >= max_failures:
                    break
    finally:
        signal.signal(signal.SIGALRM, previous)
    grew = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - rss0
    if grew > RSS_GROWTH:
        failures.append(f"peak RSS grew by {grew / 2**20:.0f} MiB")
    stats["peak RSS growth MiB"] = round(grew / 2**20)
    return stats, failures, time.perf_counter() - t0


if __name__ == "__main__":
    n, seed = int(sys.argv[1]), int(sys.argv[2])
    sub = int(sys.argv[sys.argv.index("--subprocess-every") + 1]) \
        if "--subprocess-every" in sys.argv else 0
    only = (sys.argv[sys.argv.index("--only") + 1].split(",") if "--only" in sys.argv else None)
    stats, failures, secs = run(n, seed, max_failures=50, every_target="--every-target" in sys.argv,
                                subprocess_every=sub, progress_every=1000, only=only)
    print(f"{n} cases: {dict(sorted(stats.items()))}; {len(failures)} failures; {secs:.1f} s")
    for f in failures:
        print("FAIL", f)
    sys.exit(1 if failures else 0)
