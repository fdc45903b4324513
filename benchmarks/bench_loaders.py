"""Peak memory of the document loaders per byte of input (SigmaNetwork.load, load_circuit).

Each loader runs in its own child process on a file written here; the figure is the child's
peak resident memory (``VmHWM``; ``ru_maxrss`` would include the forking parent's) above its resident memory just before the call, divided
by the file's size.  The named baseline is another tree (``--baseline DIR``, e.g. a ``git
archive`` of the commit before this work), run on the same files in the same run.

Files (all legal documents):

* ``network-random``: ``SigmaNetwork.random([400, 3000, 900, 1])`` as ``save`` writes it
  (floats of about 20 characters);
* ``network-zeros``: 1.3 M hidden units, one input, all weights ``0.0`` (rows of one entry:
  the shape with the most Python objects per byte);
* ``circuit-ones``: a layered circuit, 64 inputs, 100,000 hidden gates, every weight ``1``
  (two bytes per weight).

Usage::

    python benchmarks/bench_loaders.py [--baseline DIR] [--rounds 3] [--out benchmarks/results_loaders.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_CHILD = r"""
import json, os, sys, time
def status(key):
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(key):
                return int(line.split()[1]) << 10
kind, path = sys.argv[1], sys.argv[2]
import numpy
if kind.startswith("network"):
    from networks.sigma import SigmaNetwork
    call = lambda: SigmaNetwork.load(path)
else:
    from circuits.io import load_circuit
    call = lambda: load_circuit(path)
base = status("VmRSS:")
t0 = time.perf_counter()
call()
took = time.perf_counter() - t0
peak = status("VmHWM:")   # this process image's peak (ru_maxrss keeps the forking parent's)
print(json.dumps({"peak": peak - base, "seconds": took}))
"""


def make_files(d: Path) -> dict:
    import numpy as np  # noqa: F401 -- the generators below need it loaded

    from circuits.io import CIRCUIT_FORMAT
    from networks.sigma import FORMAT, FORMAT_VERSION, SigmaNetwork

    files = {}
    p = d / "network-random.json"
    SigmaNetwork.random([400, 3000, 900, 1], "relu", seed=0).save(p)
    files["network-random"] = p
    n = 1_300_000
    p = d / "network-zeros.json"
    p.write_text(json.dumps({"format": FORMAT, "version": FORMAT_VERSION, "activation": "relu",
                             "layers": [{"weights": [[0.0]] * n, "bias": [0.0] * n},
                                        {"weights": [[0.0] * n], "bias": [0.0]}]},
                            separators=(",", ":")))
    files["network-zeros"] = p
    g = 100_000
    p = d / "circuit-ones.json"
    p.write_text(json.dumps({"format": CIRCUIT_FORMAT, "version": 1, "kind": "layered",
                             "n_inputs": 64,
                             "layers": [{"weights": [[1] * 64] * g, "thresholds": [1] * g},
                                        {"weights": [[1] * g], "thresholds": [1]}]},
                            separators=(",", ":")))
    files["circuit-ones"] = p
    return files


def measure(tree: Path, kind: str, path: Path) -> dict:
    proc = subprocess.run([sys.executable, "-c", _CHILD, kind, str(path)], cwd=str(tree),
                          capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=str(tree)))
    if proc.returncode != 0:
        return {"error": proc.stderr.strip().splitlines()[-1][:200]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--baseline", type=Path, default=None, help="baseline tree (a checkout)")
    p.add_argument("--rounds", type=int, default=3, help="runs per loader and tree; default 3")
    p.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results_loaders.json")
    args = p.parse_args(argv)
    trees = {"this": ROOT, **({"baseline": args.baseline} if args.baseline else {})}
    rows = []
    with tempfile.TemporaryDirectory(prefix="depthsep-bench-loaders-") as d:
        files = make_files(Path(d))
        for kind, path in files.items():
            size = path.stat().st_size
            row = {"file": kind, "bytes": size}
            for name, tree in trees.items():
                runs = [measure(tree, kind, path) for _ in range(args.rounds)]
                ok = [r for r in runs if "error" not in r]
                if not ok:
                    row[name] = {"error": runs[0]["error"]}
                    continue
                row[name] = {"peak_ratio_median": statistics.median(r["peak"] / size for r in ok),
                             "peak_ratio_runs": [r["peak"] / size for r in ok],
                             "seconds_median": statistics.median(r["seconds"] for r in ok)}
            rows.append(row)
            print(json.dumps(row), flush=True)
    load = os.getloadavg()
    args.out.write_text(json.dumps({"rows": rows, "load": load, "rounds": args.rounds,
                                    "baseline": str(args.baseline)}, indent=2) + "\n")
    print(f"wrote {args.out} (load {load[0]:.1f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
