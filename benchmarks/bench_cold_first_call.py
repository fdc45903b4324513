"""The first counting call on a new machine: empty numba and kernel caches, per kernel.

Each child process gets a fresh ``NUMBA_CACHE_DIR`` and ``DEPTHSEP_CACHE_DIR`` and times one
``count_ones`` on a W1-style circuit of 2^14 points (a cube whose evaluation is negligible, so
the call is the compile of every kernel it needs) with the kernel forced: CPU time
(``time.process_time``) and wall time.  Kernels alternate child by child (A B A B ...).
``--tree NAME=PATH`` runs the same kernels from another checkout too (labelled ``kernel@NAME``,
e.g. the tree before a change, unpacked with ``git archive``), interleaved with this tree's;
the table gives each candidate's median CPU time as a ratio to the first candidate's.

Usage::

    python benchmarks/bench_cold_first_call.py --repeats 3
    python benchmarks/bench_cold_first_call.py --repeats 3 --tree base=/tmp/base
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from benchmarks import _common  # noqa: E402
from benchmarks.bench_bitsliced import _load  # noqa: E402

_CHILD = """
import json, sys, time
sys.path.insert(0, {root!r})
import circuits as c
from benchmarks.bench_circuits import w1_circuit
circ = w1_circuit(14, 64, seed=1)
t, w = time.process_time(), time.perf_counter()
r = c.count_ones(circ, kernel={kernel!r})
print(json.dumps({{"cpu_s": time.process_time() - t, "call_wall_s": time.perf_counter() - w,
                   "count": r, "file": c.__file__}}))
"""


def main(argv=None) -> int:
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kernels", default="generic,bitsliced")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--tree", action="append", default=[], metavar="NAME=PATH",
                   help="also run the kernels from the checkout at PATH (label kernel@NAME)")
    p.add_argument("--out", default=str(HERE / "results_cold_first_call"))
    args = p.parse_args(argv)
    kernels = [k.strip() for k in args.kernels.split(",") if k.strip()]
    trees = [("", str(HERE.parent))]
    for t in args.tree:
        name, sep, path = t.partition("=")
        if not sep or not Path(path, "circuits").is_dir():
            p.error(f"--tree wants NAME=PATH with PATH a checkout (has circuits/), got {t!r}")
        trees.append(("@" + name, str(Path(path).resolve())))
    cands = [(k + tag, k, root) for tag, root in trees for k in kernels]
    rows = {label: [] for label, _, _ in cands}
    load0 = _load()
    for _ in range(args.repeats):
        for label, k, root in cands:
            with tempfile.TemporaryDirectory(prefix="depthsep-cold-") as tmp:
                env = {"NUMBA_CACHE_DIR": str(Path(tmp, "numba")),
                       "DEPTHSEP_CACHE_DIR": str(Path(tmp, "depthsep")), "PYTHONPATH": root}
                rows[label].append(_common.run_child(_CHILD.format(root=root, kernel=k),
                                                     env=env))
    for label, _, root in cands:
        if any(not r["file"].startswith(root + "/") for r in rows[label]):
            raise AssertionError(f"{label}: a child did not import circuits from {root}")
    if len({r["count"] for v in rows.values() for r in v}) != 1:
        raise AssertionError("kernels disagree")
    res = {"command": "python benchmarks/bench_cold_first_call.py " + " ".join(
        argv if argv is not None else sys.argv[1:]), "machine": _common.machine_info(),
        "load_before": load0, "load_after": _load(), "rows": rows}
    lines = ["# First call on a new machine (empty caches), W1-style circuit, N = 14", "",
             f"Command: `{res['command']}`; load {load0:.1f} before, {res['load_after']:.1f} "
             f"after; median [min–max] over {args.repeats} children per kernel.", "",
             f"| kernel | CPU | CPU / {cands[0][0]} | wall of the call | wall of the child |", "|---|---|---|---|---|"]
    ref = statistics.median(r["cpu_s"] for r in rows[cands[0][0]])
    for k, v in rows.items():
        cpu = [r["cpu_s"] for r in v]
        wall = [r["wall_s"] for r in v]
        cw = [r["call_wall_s"] for r in v]
        lines.append(f"| {k} | {statistics.median(cpu):.3g} s [{min(cpu):.3g}–{max(cpu):.3g}] "
                     f"| {statistics.median(cpu) / ref:.3g} "
                     f"| {statistics.median(cw):.3g} s [{min(cw):.3g}–{max(cw):.3g}] "
                     f"| {statistics.median(wall):.3g} s [{min(wall):.3g}–{max(wall):.3g}] |")
    text = "\n".join(lines) + "\n"
    _common.write_results(args.out, res, text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
