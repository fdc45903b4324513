"""W4: unnormalised Walsh–Hadamard transform of a +-1 vector (2^24 and 2^26; float64 and int32).

Candidates, timed A B A B ... in the same run (shared/BENCHMARKS.md):

* ``depthsep``      ``circuits.analysis.walsh_hadamard_`` (in place; for int32 the exactness bound
                    max|v| 2^N < 2^31 is checked inside the timed call)
* ``ffht-1``, ``ffht-2``  FFHT-unofficial ``ffht.fht_(a, nthreads)`` on a 64-byte aligned buffer
                    (float64; the named baseline is the default nthreads = 1)
* ``pyfwht-cpu``, ``pyfwht-omp``  ``pyfwht.transform(a, backend)`` (int32 and float64)
* ``numpy``         a numpy butterfly (reshape to (.., 2, h), add/subtract), 2^24 float64 only

Every candidate's output is compared with depthsep's (exact for these integer-valued inputs).
The input array is reset from the source before each call (not timed).  Compile time (cold
numba cache, fresh process), the exact 24-variable Walsh spectrum of IP_12, and the peak memory
of an in-place 2^26 transform are reported on their own lines.

Install the baselines with::

    pip install pybind11 wheel && pip install --no-build-isolation ffht-unofficial
    pip install pyfwht

Usage: ``python benchmarks/bench_fwht.py [--repeats 5] [--sizes 24 26] [--write]``
(``--write`` stores the markdown table in benchmarks/results_fwht.md, atomically).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import Timing, machine_info, run_child, timed  # noqa: E402


def _aligned(n: int, dtype) -> np.ndarray:
    itemsize = np.dtype(dtype).itemsize
    buf = np.empty(n + 64 // itemsize, dtype=dtype)
    off = (-buf.ctypes.data % 64) // itemsize
    return buf[off:off + n]


def _numpy_butterfly(v: np.ndarray) -> np.ndarray:
    n = v.shape[0]
    h = 1
    while h < n:
        a = v.reshape(-1, 2, h)
        x = a[:, 0, :].copy()
        a[:, 0, :] += a[:, 1, :]
        np.subtract(x, a[:, 1, :], out=a[:, 1, :])
        h *= 2
    return v


def _candidates(dtype, N: int, with_numpy: bool):
    """name -> (in-place function, buffer)."""
    from circuits.analysis import walsh_hadamard_
    n = 1 << N
    out = {"depthsep": (walsh_hadamard_, _aligned(n, dtype))}
    try:
        import ffht
        if dtype == np.float64:
            out["ffht-1"] = (lambda a: ffht.fht_(a, 1), _aligned(n, dtype))
            out["ffht-2"] = (lambda a: ffht.fht_(a, 2), _aligned(n, dtype))
    except ImportError:
        print("ffht-unofficial not installed: skipped", file=sys.stderr)
    try:
        import pyfwht
        out["pyfwht-cpu"] = (lambda a: pyfwht.transform(a, pyfwht.Backend.CPU), _aligned(n, dtype))
        if pyfwht.has_openmp():
            out["pyfwht-omp"] = (lambda a: pyfwht.transform(a, pyfwht.Backend.OPENMP),
                                 _aligned(n, dtype))
    except ImportError:
        print("pyfwht not installed: skipped", file=sys.stderr)
    if with_numpy and dtype == np.float64:
        out["numpy"] = (_numpy_butterfly, _aligned(n, dtype))
    return out


def bench_w4(N: int, dtype, repeats: int, with_numpy: bool) -> dict:
    rng = np.random.default_rng(2024)
    src = (1 - 2 * rng.integers(0, 2, 1 << N)).astype(dtype)
    cands = _candidates(dtype, N, with_numpy)
    # warm-up (compilation, thread pools) and agreement check
    ref = None
    for name, (fn, buf) in cands.items():
        buf[:] = src
        fn(buf)
        if ref is None:
            ref = buf.copy()
        elif not np.array_equal(buf, ref):
            raise AssertionError(f"{name} disagrees with depthsep at 2^{N} {np.dtype(dtype).name}")
    timings = {name: Timing(name) for name in cands}
    for _ in range(repeats):
        for name, (fn, buf) in cands.items():
            buf[:] = src
            dt, _ = timed(fn, buf)
            timings[name].times.append(dt)
    checksum = int(ref[:64].astype(np.int64).sum())
    return {"N": N, "dtype": np.dtype(dtype).name, "timings": timings, "checksum": checksum}


_COMPILE_CHILD = """
import json, time, numpy as np
t0 = time.perf_counter(); import circuits; t1 = time.perf_counter()
out = {"import_s": t1 - t0}
for dt in ("float64", "int32", "int64"):
    v = np.ones(1 << 16, dtype=dt)
    t = time.perf_counter(); circuits.analysis.walsh_hadamard_(v); out["first_call_" + dt + "_s"] = time.perf_counter() - t
    v = np.ones(1 << 16, dtype=dt)
    t = time.perf_counter(); circuits.analysis.walsh_hadamard_(v); out["second_call_" + dt + "_s"] = time.perf_counter() - t
print(json.dumps(out))
"""

_MEMORY_CHILD = """
import json, time, numpy as np, circuits
N = {N}
v = np.ones(1 << N, dtype="{dtype}")
v[1::3] = -1
t = time.perf_counter(); circuits.analysis.walsh_hadamard_(v); dt = time.perf_counter() - t
print(json.dumps({{"seconds": dt, "array_bytes": int(v.nbytes), "w0": int(v[0])}}))
"""

_SPECTRUM_CHILD = """
import json, time, numpy as np, circuits
t = circuits.InnerProductMod2(12).truth_table()
circuits.analysis.fourier_coefficients(np.zeros(16, np.uint8)); circuits.analysis.walsh_spectrum(np.zeros(16, np.uint8))
res = {{}}
for name, fn in [("fourier_coefficients", circuits.analysis.fourier_coefficients), ("walsh_spectrum", circuits.analysis.walsh_spectrum)]:
    ts = []
    for _ in range({repeats}):
        t0 = time.perf_counter(); r = fn(t); ts.append(time.perf_counter() - t0)
    res[name] = ts
w = circuits.analysis.fourier_coefficients(t)
res["all_abs_equal_2^12"] = bool(np.all(np.abs(w) == 4096))
print(json.dumps(res))
"""


def _fmt_row(r: dict, baseline: str) -> list:
    rows = []
    tb = r["timings"].get(baseline)
    for name, t in r["timings"].items():
        ratio = f"{t.median / tb.median:.2f}" if tb is not None else "n/a"
        rows.append(f"| W4 2^{r['N']} {r['dtype']} | {name} | {t.summary(1e3, 'ms')} | "
                    f"{baseline} | {ratio} |")
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--sizes", type=int, nargs="+", default=[24, 26])
    ap.add_argument("--no-numpy", action="store_true", help="skip the slow numpy butterfly")
    ap.add_argument("--write", action="store_true", help="write benchmarks/results_fwht.md")
    args = ap.parse_args(argv)
    if args.repeats < 3:
        ap.error("--repeats must be >= 3")

    info = machine_info()
    lines = ["# W4: Walsh–Hadamard transform (benchmarks/bench_fwht.py)", "",
             f"Command: `python benchmarks/bench_fwht.py --repeats {args.repeats} --sizes "
             f"{' '.join(map(str, args.sizes))}{' --no-numpy' if args.no_numpy else ''}`", "",
             "Machine: " + ", ".join(f"{k}={v}" for k, v in info.items()), ""]
    try:
        import ffht  # noqa: F401
        from importlib.metadata import version
        lines.append(f"Baselines: ffht-unofficial {version('ffht-unofficial')}, "
                     f"pyfwht {version('pyfwht')}")
    except Exception as exc:                       # pragma: no cover - optional baselines
        lines.append(f"Baselines: partly missing ({exc})")
    lines += ["", "Kernel time (in place, input reset untimed), median [min–max] of "
              f"{args.repeats}, ratio = median / baseline median (same run, interleaved):", "",
              "| workload | implementation | time | baseline | ratio |", "|---|---|---|---|---|"]
    # children first: a child inherits the parent's peak RSS across fork/exec on Linux
    with tempfile.TemporaryDirectory() as cache:
        comp = run_child(_COMPILE_CHILD, env={"NUMBA_CACHE_DIR": cache})
    extra = ["Compile (fresh process, empty numba cache): " + ", ".join(
        f"{k} {v:.2f} s" for k, v in comp.items() if k.endswith("_s") and k != "wall_s")]
    spec = run_child(_SPECTRUM_CHILD.format(repeats=args.repeats))
    for name in ("fourier_coefficients", "walsh_spectrum"):
        t = Timing(name, spec[name])
        extra.append(f"24-variable exact spectrum of IP_12 (uint8 table -> int64 Walsh values): "
                     f"`{name}` {t.summary(1e3, 'ms')} (all |W| = 2^12: "
                     f"{spec['all_abs_equal_2^12']})")
    for N in args.sizes:
        for dt in ("float64", "int32"):
            mem = run_child(_MEMORY_CHILD.format(N=N, dtype=dt))
            extra.append(f"Peak RSS, in-place 2^{N} {dt} in a fresh process: "
                         f"{mem['peak_rss_bytes'] / 2**20:.0f} MiB (array {mem['array_bytes'] / 2**20:.0f} MiB,"
                         f" {mem['seconds'] * 1e3:.0f} ms incl. first-call overhead)")
    for N in args.sizes:
        for dtype, baseline in [(np.float64, "ffht-1"), (np.int32, "pyfwht-cpu")]:
            r = bench_w4(N, dtype, args.repeats, with_numpy=(N == 24 and not args.no_numpy))
            rows = _fmt_row(r, baseline)
            lines += rows
            for row in rows:
                print(row, flush=True)

    lines += [""] + extra
    text = "\n".join(lines) + "\n"
    print(text)
    if args.write:
        from circuits.utils.files import write_bytes_atomic
        write_bytes_atomic(Path(__file__).with_name("results_fwht.md"), text.encode())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
