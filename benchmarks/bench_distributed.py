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

    python benchmarks/bench_distributed.py                 # N = 30, 5 repeats
    python benchmarks/bench_distributed.py --n 26 --repeats 5
"""

from __future__ import annotations

import argparse
import json
import logging
import resource
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import circuits as c  # noqa: E402
from benchmarks import _common  # noqa: E402
from benchmarks.bench_circuits import w1_circuit  # noqa: E402  (the W1/W6 instance builder)
from circuits.utils.files import write_bytes_atomic, write_json_atomic  # noqa: E402
from circuits.utils.parallel import _default_chunk_size, usable_cpus  # noqa: E402


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=30, help="input bits N (default 30)")
    ap.add_argument("--width", type=int, default=64, help="hidden gates w (default 64)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeats", type=int, default=5, help="timed repeats per path (>= 3)")
    ap.add_argument("--workers", type=int, default=2, help="LocalCluster worker processes")
    ap.add_argument("--out", type=Path, default=HERE / "results_distributed.md")
    args = ap.parse_args(argv)
    if args.repeats < 3:
        ap.error("--repeats must be >= 3 (medians of at least three)")

    import dask
    import distributed
    import numba

    machine = _common.machine_info()
    circ = w1_circuit(args.n, args.width, seed=args.seed)
    warm = w1_circuit(min(args.n, 20), args.width, seed=args.seed)  # same kernel types, small

    compile_local, _ = _common.timed(c.count_ones, warm)
    t_start, (cluster, client) = _common.timed(_start_cluster, distributed, args.workers)
    try:
        compile_dask, _ = _common.timed(c.count_ones, warm, client=client)
        n_threads = sum(client.nthreads().values())
        counts = {}
        timings = _common.interleaved(
            {"local": lambda: c.count_ones(circ), "dask": lambda: c.count_ones(circ, client=client)},
            args.repeats, check=lambda name, res: counts.setdefault(name, set()).add(res))
    finally:
        client.close()
        cluster.close()
    values = set().union(*counts.values())
    if len(values) != 1:
        raise SystemExit(f"count mismatch between local and Dask paths: {counts}")
    local, dask_ = timings["local"], timings["dask"]
    machine.update({"usable_cpus": usable_cpus(), "dask": dask.__version__,
                    "distributed": distributed.__version__,
                    "threading_layer": numba.threading_layer()})
    record = {
        "command": "python benchmarks/bench_distributed.py " + " ".join(
            sys.argv[1:] if argv is None else argv),
        "machine": machine,
        "workload": {"id": "W6", "N": args.n, "width": args.width, "seed": args.seed,
                     "instance": "benchmarks.bench_circuits.w1_circuit",
                     "points": 1 << args.n},
        "count": values.pop(),
        "baseline": {**local.to_dict(), "name": "local count_ones (numba threads, one process)"},
        "candidate": {**dask_.to_dict(),
                      "name": f"Dask LocalCluster({args.workers} workers x 1 thread, processes)"},
        "ratio_dask_over_local": dask_.median / local.median,
        # each dask run over the local run just before it: robust to slow drifts of the load
        "paired_ratios": [d / l for l, d in zip(local.times, dask_.times)],
        "cluster_startup_s": t_start,
        "first_call_s": {"local": compile_local, "dask": compile_dask},
        "peak_rss_bytes": {"this_process": _common.peak_rss_bytes(),
                           "largest_worker": resource.getrusage(
                               resource.RUSAGE_CHILDREN).ru_maxrss * 1024},
        "repeats": args.repeats,
        "dask_chunks": -(-(1 << args.n) // _default_chunk_size(1 << args.n, n_threads)),
        "load_average_at_end": list(__import__("os").getloadavg()),
    }
    write_json_atomic(args.out.with_suffix(".json"), record)
    write_bytes_atomic(args.out, _markdown(record, local, dask_).encode())
    print(json.dumps({"count": record["count"], "ratio": record["ratio_dask_over_local"]}),
          f"local {local.summary()}, dask {dask_.summary()}")
    return record


def _start_cluster(distributed, n_workers):
    cluster = distributed.LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                                       dashboard_address=None, silence_logs=logging.ERROR)
    client = distributed.Client(cluster, set_as_default=False)
    client.wait_for_workers(n_workers)
    return cluster, client


def _markdown(r, local, dask_) -> str:
    m, w = r["machine"], r["workload"]
    rss = r["peak_rss_bytes"]
    return f"""# Distributed evaluation (Dask): results

Command: `{r['command'].strip()}`

Machine: {m['cpu_model']}, {m['usable_cpus']} usable CPUs (load average at start
{', '.join(f'{x:.1f}' for x in m['load_average_at_start'])}, at end
{', '.join(f'{x:.1f}' for x in r['load_average_at_end'])}); Python {m['python']}, numpy
{m['numpy']}, numba {m['numba']} ({m['numba_threads']} threads, layer {m['threading_layer']}),
dask {m['dask']}, distributed {m['distributed']}.

Workload: W6-style depth-2 THR o THR, N = {w['N']} ({w['points']:,} points), w = {w['width']},
integer weights in [-8, 8], thresholds near each gate's median (`{w['instance']}`, seed
{w['seed']}); result = number of points where the output is 1.

| path | median [min-max] of {r['repeats']} (A B A B ...) | count |
|---|---|---|
| baseline: {r['baseline']['name']} | {local.summary()} | {r['count']:,} |
| {r['candidate']['name']} | {dask_.summary()} | {r['count']:,} |

**Ratio dask / local (medians, same run): {r['ratio_dask_over_local']:.3f}** (target <= 1.15).
Median of the paired ratios (each Dask run over the local run just before it):
{statistics.median(r['paired_ratios']):.3f}.  Counts are identical on both paths.  Dask ran
{r['dask_chunks']} chunk tasks per count.

Separately: cluster start-up {r['cluster_startup_s']:.2f} s; first call at N = 20 (JIT compile or
cache load) {r['first_call_s']['local']:.2f} s local, {r['first_call_s']['dask']:.2f} s on the
cluster.  Peak RSS: this process {_common.fmt_bytes(rss['this_process'])}, largest worker
{_common.fmt_bytes(rss['largest_worker'])}.

Each Dask chunk runs its numba kernel on one thread (cores per host // Dask threads per host),
so the two worker processes use the two cores without oversubscription; the local baseline uses
numba's thread pool inside one kernel call.
"""


if __name__ == "__main__":
    main()
