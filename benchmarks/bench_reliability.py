"""Reliability figures (issue 14): time-estimate accuracy, slicing overhead, Ctrl-C latency.

    PYTHONPATH=$PWD python benchmarks/bench_reliability.py            # writes results_reliability.*

1. **Estimate accuracy, N = 28..32.**  The estimate a user sees is the one a refused run
   reports: ``count_ones(c, max_seconds=1e-9)`` raises ``RunTooLongError`` after its calibration
   and carries ``estimate_seconds``.  The actual time is ``count_ones(c, max_seconds=None)``.
   Both are medians of 3, interleaved (estimate, run, estimate, run, ...).  Reported: the ratio
   estimate / actual and the calibration time spent before refusing.
2. **Slicing overhead.**  The sliced runner (default, Ctrl-C within a slice) against the old
   path, the whole range in one kernel call (``simulate._disagree_chunk(0, 2^N)``), same run,
   interleaved; ratio of medians.
3. **Ctrl-C latency.**  A child process counts a 2^36-point cube; SIGINT after 1.5 s; the child
   prints the time KeyboardInterrupt was raised.  Reported: median and max of the delay from
   the signal to the exception, and to the process exit, local and ``executor="threads"``.
"""

from __future__ import annotations

import json
import os
import signal
import statistics
import subprocess
import sys
import textwrap
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._common import ROOT, interleaved, machine_info  # noqa: E402


def _estimate(circ) -> tuple:
    import circuits as C
    from circuits.utils.errors import RunTooLongError
    t = time.perf_counter()
    try:
        C.count_ones(circ, max_seconds=1e-9)
    except RunTooLongError as exc:
        return exc.estimate_seconds, time.perf_counter() - t
    raise RuntimeError("the run was not refused")


def estimate_accuracy(repeats: int = 3) -> list:
    import circuits as C
    cases = [(f"single gate, N={N}", lambda N=N: C.ThresholdCircuit.single_gate([1] * N, N // 2))
             for N in (28, 29, 30, 31, 32)]
    cases += [(f"parity_depth2({N})", lambda N=N: C.parity_depth2(N)) for N in (28, 30)]
    cases += [(f"ip_depth3({n}), N={2 * n}", lambda n=n: C.ip_depth3(n)) for n in (14, 15)]
    rows = []
    for label, build in cases:
        circ = build()
        C.count_ones(C.ThresholdCircuit.single_gate([1] * 16, 8))
        est, calib, actual = [], [], []
        for _ in range(repeats):
            e, c = _estimate(circ)
            est.append(e)
            calib.append(c)
            t = time.perf_counter()
            C.count_ones(circ, max_seconds=None)
            actual.append(time.perf_counter() - t)
        row = {"case": label, "N": circ.n_inputs, "estimate_s": est, "actual_s": actual,
               "calibration_s": calib, "estimate_median_s": statistics.median(est),
               "actual_median_s": statistics.median(actual),
               "ratio": statistics.median(est) / statistics.median(actual),
               "load": os.getloadavg()[0]}
        print(f"{label:<26} estimate {row['estimate_median_s']:7.2f} s  actual "
              f"{row['actual_median_s']:7.2f} s  ratio {row['ratio']:.2f}  calibration "
              f"{statistics.median(calib):.2f} s  load {row['load']:.1f}", flush=True)
        rows.append(row)
    return rows


def slicing_overhead(N: int = 30, repeats: int = 3) -> dict:
    import circuits as C
    from circuits import simulate as S
    from circuits.functions import Constant
    circ = C.ThresholdCircuit.single_gate([1] * N, N // 2)
    fn = S._ChunkFn(S._circuit_kernel_args(circ), Constant(N, 0)._spec())
    res = interleaved({"sliced (default)": lambda: C.count_ones(circ, max_seconds=None),
                       "one kernel call (old path)": lambda: fn(0, 1 << N)[0]},
                      repeats=repeats,
                      check=None)
    a, b = res["sliced (default)"], res["one kernel call (old path)"]
    assert a.result == b.result
    out = {"N": N, "sliced": a.to_dict(), "one_call": b.to_dict(), "ratio": a.median / b.median,
           "load": os.getloadavg()[0]}
    print(f"slicing overhead N={N}: sliced {a.summary()} vs one call {b.summary()}: "
          f"ratio {out['ratio']:.3f}", flush=True)
    return out


_CHILD = """
    import sys, time
    import circuits as C
    ex = None if sys.argv[1] == "local" else "threads"
    C.count_ones(C.ThresholdCircuit.single_gate([1] * 20, 10), executor=ex)
    print("started", flush=True)
    try:
        C.count_ones(C.ThresholdCircuit.single_gate([1] * 36, 18), executor=ex, max_seconds=None)
    except KeyboardInterrupt:
        print(f"KI {time.time():.6f}", flush=True)
        raise
"""


def ctrl_c_latency(trials: int = 5) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = {}
    for mode in ("local", "threads"):
        to_exc, to_exit, codes = [], [], []
        for _ in range(trials):
            p = subprocess.Popen([sys.executable, "-c", textwrap.dedent(_CHILD), mode],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                 env=env)
            assert "started" in p.stdout.readline()
            time.sleep(1.5)
            sent = time.time()
            p.send_signal(signal.SIGINT)
            stdout, _ = p.communicate(timeout=120)
            ended = time.time()
            raised = float(stdout.split("KI ")[1].split()[0])
            to_exc.append(raised - sent)
            to_exit.append(ended - sent)
            codes.append(p.returncode)
        out[mode] = {"to_exception_s": to_exc, "to_exit_s": to_exit, "exit_codes": codes,
                     "median_to_exception_s": statistics.median(to_exc),
                     "max_to_exception_s": max(to_exc), "median_to_exit_s": statistics.median(to_exit),
                     "load": os.getloadavg()[0]}
        print(f"Ctrl-C {mode}: KeyboardInterrupt after median {statistics.median(to_exc) * 1e3:.0f} "
              f"ms (max {max(to_exc) * 1e3:.0f} ms), process gone after median "
              f"{statistics.median(to_exit):.2f} s; exit codes {codes}", flush=True)
    return out


def main() -> int:
    info = machine_info()
    print(f"load average at start {info['load_average_at_start']}", flush=True)
    record = {"machine": info, "ctrl_c": ctrl_c_latency(), "overhead": slicing_overhead(),
              "estimates": estimate_accuracy()}
    here = Path(__file__).resolve().parent
    (here / "results_reliability.json").write_text(json.dumps(record, indent=2) + "\n")
    print(f"wrote {here / 'results_reliability.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
