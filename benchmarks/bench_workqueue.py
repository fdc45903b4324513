"""Parallel kernels called from several user threads under numba's workqueue layer (issue 25).

    PYTHONPATH=$PWD python benchmarks/bench_workqueue.py [N] [CALLS]   # writes results_workqueue.*

The workqueue layer aborts the process when two threads launch parallel kernels at once, so
``circuits._jit.ParallelKernel`` must do something when a launch finds another one running.
Two candidates, timed A B A B A B (median of 3) in one child process with
``NUMBA_THREADING_LAYER=workqueue``:

* **lock** (the library's choice): wait for the running launch, then run on all numba threads;
* **serial twin**: run a ``parallel=False`` compile of the same Python function in the calling
  thread instead of waiting (the prange loop becomes a plain loop), taking the parallel path
  only when the lock is free.

Workload: 4 user threads each calling ``count_ones`` ``CALLS`` times on a single gate over
``N`` inputs with the cube kernel forced parallel (``simulate._SERIAL_CUBE_WORK = 0``), and as
a baseline the same calls from one thread (no contention).  Reported: medians, [min-max], the
ratio serial-twin / lock, and the twin's compile time (paid once per kernel per process, or
loaded from the cache).
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._common import ROOT, machine_info, run_child  # noqa: E402

_CHILD = """
import json, threading, time
import numba
import circuits as C
from circuits import _jit, simulate as S
from benchmarks._common import interleaved
S._SERIAL_CUBE_WORK = 0
N, CALLS = {n}, {calls}
circ = C.ThresholdCircuit.single_gate([1] * N, N // 2)
want = C.count_ones(circ, kernel="lowhigh")
kernel = S._kernels._cube_run
twin = numba.njit(nogil=True)(kernel.dispatcher.py_func)
lock_call = _jit.ParallelKernel.__call__
twin_args = []

def twin_call(self, *args):
    if _jit._LAUNCH_LOCK.acquire(blocking=False):
        try:
            return self.dispatcher(*args)
        finally:
            _jit._LAUNCH_LOCK.release()
    return twin(*args)

# compile the twin outside the timed part
_jit.ParallelKernel.__call__ = lambda self, *a: twin(*a)
t0 = time.perf_counter()
assert C.count_ones(circ, kernel="lowhigh") == want
compile_s = time.perf_counter() - t0

def threads(k, calls):
    def work():
        for _ in range(calls):
            assert C.count_ones(circ, kernel="lowhigh") == want
    ts = [threading.Thread(target=work) for _ in range(k)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()

def use(call, k, calls=CALLS):
    def run():
        _jit.ParallelKernel.__call__ = call
        threads(k, calls)
    return run

res = interleaved({{"lock, 4 threads": use(lock_call, 4), "serial twin, 4 threads": use(twin_call, 4),
                   "lock, 1 thread x4 calls": use(lock_call, 1, 4 * CALLS)}},
                  repeats=3)
print(json.dumps({{"layer": numba.threading_layer(), "threads": numba.get_num_threads(),
                  "compile_s": compile_s, **{{k: v.to_dict() for k, v in res.items()}}}}))
"""


def main(n: int = 22, calls: int = 6) -> dict:
    code = textwrap.dedent(_CHILD.format(n=n, calls=calls))
    out = run_child(code, env={"NUMBA_THREADING_LAYER": "workqueue", "PYTHONPATH": str(ROOT)})
    out["machine"] = machine_info()
    out["workload"] = f"count_ones(single_gate([1]*{n})) x {calls} per thread, cube kernel parallel"
    lock = out["lock, 4 threads"]["median_s"]
    twin = out["serial twin, 4 threads"]["median_s"]
    out["ratio serial twin / lock"] = twin / lock
    (ROOT / "benchmarks" / "results_workqueue.json").write_text(json.dumps(out, indent=1))
    lines = [f"# workqueue layer, {out['workload']} ({out['threads']} numba threads)", "",
             "| candidate | median s | min s | max s |", "|---|---|---|---|"]
    for k in ("lock, 4 threads", "serial twin, 4 threads", "lock, 1 thread x4 calls"):
        t = out[k]
        lines.append(f"| {k} | {t['median_s']:.3f} | {t['min_s']:.3f} | {t['max_s']:.3f} |")
    lines += ["", f"serial twin / lock: {out['ratio serial twin / lock']:.2f}; twin compile "
                  f"{out['compile_s']:.2f} s (first run, outside the timings)"]
    (ROOT / "benchmarks" / "results_workqueue.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return out


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))
