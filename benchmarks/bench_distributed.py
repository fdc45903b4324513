"""Dask overhead on one machine: W6-style count at N = 30, 2-worker LocalCluster vs local threads.

Workload (BENCHMARKS.md, W6 at N = 30): a depth-2 THR o THR circuit with w = 64 hidden gates,
integer weights in [-8, 8], thresholds near each gate's median; the result is the number of
points of {0,1}^30 where the output is 1.  Both paths must return the same count.

* baseline ``local``: ``count_ones(circuit)`` in this process, one kernel call, numba with
  ``NUMBA_NUM_THREADS`` threads (2 on the reference machine);
* candidate ``dask``: ``count_ones(circuit, client=client)`` on ``LocalCluster(n_workers=2,
  threads_per_worker=1, processes=True)``; each chunk task runs its kernel on one numba thread.

Timings alternate A B A B ... in the same run; we report the median [min-max] of each and the
ratio of medians (dask / local, so 1.15 = 15% overhead).  Cluster start-up and the first call
(JIT compile / cache load, in this process and in the workers) are reported on their own lines.
Results go to ``benchmarks/results_distributed.md`` and ``.json`` (both written atomically).

Usage::

    python benchmarks/bench_distributed.py                 # N = 30, 3 repeats
    python benchmarks/bench_distributed.py --n 26 --repeats 5 --no-progress
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import circuits as c  # noqa: E402
from circuits.io import write_bytes_atomic, write_json_atomic  # noqa: E402
from circuits.parallel import _default_chunk_size, usable_cpus  # noqa: E402
from circuits.progress import progress_bar  # noqa: E402


def w6_instance(n_inputs: int, width: int = 64, *, seed: int = 0) -> c.ThresholdCircuit:
    """The W1/W6 circuit, from ``benchmarks/bench_circuits.py`` when that script provides it."""
    try:
        from benchmarks import bench_circuits
        builder = getattr(bench_circuits, "w1_circuit", None) or getattr(
            bench_circuits, "random_depth2", None)
    except ImportError:
        builder = None
    if builder is not None:
        return builder(n_inputs, width, seed=seed)
    rng = np.random.default_rng(seed)
    W = rng.integers(-8, 9, size=(width, n_inputs))
    # w . x over the uniform cube is symmetric about sum(w) / 2: its median.  Jitter by +-1.
    t = np.floor(W.sum(axis=1) / 2).astype(np.int64) + rng.integers(-1, 2, size=width)
    v = rng.integers(-8, 9, size=width)
    return c.ThresholdCircuit.depth2(W, t, v, int(np.floor(v.sum() / 2)))


def _machine() -> dict:
    model = "unknown"
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            if line.startswith("Model name:"):
                model = line.split(":", 1)[1].strip()
    except (OSError, subprocess.CalledProcessError):
        pass
    import dask
    import distributed
    import numba
    return {"cpu": model, "usable_cpus": usable_cpus(), "python": platform.python_version(),
            "numpy": np.__version__, "numba": numba.__version__, "dask": dask.__version__,
            "distributed": distributed.__version__,
            "numba_threads": numba.config.NUMBA_NUM_THREADS,
            "threading_layer": _threading_layer()}


def _threading_layer():
    import numba
    try:
        return numba.threading_layer()
    except ValueError:  # no parallel kernel has run yet
        return "not initialised"


def _timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def _stats(xs):
    return {"median": statistics.median(xs), "min": min(xs), "max": max(xs), "all": xs}


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=30, help="input bits N (default 30)")
    ap.add_argument("--width", type=int, default=64, help="hidden gates w (default 64)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeats", type=int, default=3, help="timed repeats per path (>= 3)")
    ap.add_argument("--workers", type=int, default=2, help="LocalCluster worker processes")
    ap.add_argument("--out", type=Path, default=HERE / "results_distributed.md")
    ap.add_argument("--no-progress", action="store_true")
    args = ap.parse_args(argv)
    if args.repeats < 3:
        ap.error("--repeats must be >= 3 (medians of at least three)")

    import distributed

    circ = w6_instance(args.n, args.width, seed=args.seed)
    warm = w6_instance(min(args.n, 20), args.width, seed=args.seed)  # same kernel types, small

    compile_local, _ = _timed(lambda: c.count_ones(warm))
    t_start, (cluster, client) = _timed(lambda: _start_cluster(distributed, args.workers))
    try:
        compile_dask, _ = _timed(lambda: c.count_ones(warm, client=client))
        local_times, dask_times, counts = [], [], set()
        with progress_bar(2 * args.repeats, enabled=not args.no_progress, desc="A B A B",
                          unit="run") as bar:
            for _ in range(args.repeats):
                dt, n_local = _timed(lambda: c.count_ones(circ))
                local_times.append(dt)
                bar.update(1)
                dt, n_dask = _timed(lambda: c.count_ones(circ, client=client))
                dask_times.append(dt)
                bar.update(1)
                counts.update({("local", n_local), ("dask", n_dask)})
        n_threads = sum(client.nthreads().values())
    finally:
        client.close()
        cluster.close()
    values = {v for _, v in counts}
    if len(values) != 1:
        raise SystemExit(f"count mismatch between local and Dask paths: {sorted(counts)}")
    local, dask_ = _stats(local_times), _stats(dask_times)
    record = {
        "command": "python benchmarks/bench_distributed.py " + " ".join(argv or sys.argv[1:]),
        "machine": _machine(),
        "workload": {"id": "W6", "N": args.n, "width": args.width, "seed": args.seed,
                     "weights": "[-8, 8]", "thresholds": "near each gate's median",
                     "points": 1 << args.n},
        "count": values.pop(),
        "baseline": {"name": "local count_ones (numba threads in one process)", **local},
        "candidate": {"name": f"Dask LocalCluster({args.workers} workers x 1 thread, processes)",
                      **dask_},
        "ratio_dask_over_local": dask_["median"] / local["median"],
        "cluster_startup_s": t_start,
        "first_call_s": {"local": compile_local, "dask": compile_dask},
        "peak_rss_mib": {
            "this_process": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "largest_worker": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024},
        "repeats": args.repeats,
        "dask_chunks": -(-(1 << args.n) // _default_chunk_size(1 << args.n, n_threads)),
    }
    write_json_atomic(args.out.with_suffix(".json"), record)
    write_bytes_atomic(args.out, _markdown(record).encode())
    print(json.dumps({k: record[k] for k in ("count", "ratio_dask_over_local")}),
          f"local {local['median']:.3f} s, dask {dask_['median']:.3f} s")
    return record


def _start_cluster(distributed, n_workers):
    cluster = distributed.LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                                       dashboard_address=None, silence_logs=logging.ERROR)
    client = distributed.Client(cluster, set_as_default=False)
    client.wait_for_workers(n_workers)
    return cluster, client


def _markdown(r) -> str:
    m, w, b, d = r["machine"], r["workload"], r["baseline"], r["candidate"]

    def fmt(s):
        return f"{s['median']:.3f} s [{s['min']:.3f}-{s['max']:.3f}]"

    return f"""# Distributed evaluation (Dask) — results

Command: `{r['command'].strip()}`

Machine: {m['cpu']}, {m['usable_cpus']} usable CPUs; Python {m['python']}, numpy {m['numpy']},
numba {m['numba']} ({m['numba_threads']} threads, layer {m['threading_layer']}), dask
{m['dask']}, distributed {m['distributed']}.

Workload: W6-style depth-2 THR o THR, N = {w['N']} ({w['points']:,} points), w = {w['width']},
weights in {w['weights']}, thresholds {w['thresholds']}, seed {w['seed']}; result = number of
points where the output is 1.

| path | median [min-max] of {r['repeats']} (A B A B ...) | count |
|---|---|---|
| baseline: {b['name']} | {fmt(b)} | {r['count']:,} |
| {d['name']} | {fmt(d)} | {r['count']:,} |

Dask ran {r['dask_chunks']} chunk tasks per count.

**Ratio dask / local (medians, same run): {r['ratio_dask_over_local']:.3f}** (target <= 1.15).
Counts are identical on both paths.

Separately: cluster start-up {r['cluster_startup_s']:.2f} s; first call at N = 20 (JIT compile or
cache load) {r['first_call_s']['local']:.2f} s local, {r['first_call_s']['dask']:.2f} s on the
cluster.  Peak RSS: this process {r['peak_rss_mib']['this_process']:.0f} MiB, largest worker
{r['peak_rss_mib']['largest_worker']:.0f} MiB.

Each Dask chunk runs its numba kernel on one thread (cores per host // Dask threads per host),
so the two worker processes use the two cores without oversubscription; the local baseline uses
numba's thread pool inside one kernel call.
"""


if __name__ == "__main__":
    main()
