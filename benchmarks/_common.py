"""Shared helpers for the benchmark scripts: interleaved timing, machine facts, peak memory.

Rules (shared/BENCHMARKS.md): every figure is the median of >= 3 repeats, timed A B A B ... in
the same run as its named baseline, and reported as a ratio of medians; compile time and
whole-process time are reported on their own lines.  Nothing here is imported by the library
or the tests.
"""

from __future__ import annotations

import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class Timing:
    """Repeated wall-clock timings of one implementation (seconds)."""

    name: str
    times: list = field(default_factory=list)
    result: object = None
    cpu_times: list = field(default_factory=list)   # process CPU seconds (all threads)

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    @property
    def min(self) -> float:
        return min(self.times)

    @property
    def max(self) -> float:
        return max(self.times)

    def summary(self, scale: float = 1.0, unit: str = "s", digits: int = 3) -> str:
        """``median [min-max] unit``, optionally scaled (e.g. 1e3 for ms)."""
        f = f"{{:.{digits}g}}"
        return (f"{f.format(self.median * scale)} [{f.format(self.min * scale)}–"
                f"{f.format(self.max * scale)}] {unit}")

    @property
    def cpu_median(self) -> float:
        return statistics.median(self.cpu_times) if self.cpu_times else float("nan")

    def to_dict(self) -> dict:
        return {"name": self.name, "times_s": self.times, "median_s": self.median,
                "min_s": self.min, "max_s": self.max, "cpu_times_s": self.cpu_times,
                "cpu_median_s": self.cpu_median, "result": self.result}


def timed(fn, *args, **kwargs):
    """``(seconds, result)`` of one call, wall clock (``time.perf_counter``)."""
    t0 = time.perf_counter()
    res = fn(*args, **kwargs)
    return time.perf_counter() - t0, res


def interleaved(candidates: dict, repeats: int = 3, *, check=None, settle: float = 0.0) -> dict:
    """Time several zero-argument callables A B A B ... ``repeats`` times each.

    Alternating (rather than all A then all B) spreads slow drifts of a shared machine over
    every candidate, so the ratio of medians is meaningful even when absolute times move.
    ``check(name, result)`` may verify each result (e.g. that counts agree); the result of the
    last repeat is stored in ``Timing.result``.

    ``settle`` (seconds): before each timed call of a candidate faster than that, run it
    untimed until ``settle`` seconds have passed, so the timed call does not inherit the
    previous candidate's after-effects (numba's OpenMP threads spin about 10 ms after a
    parallel kernel, holding one of two vCPUs) and each candidate is timed on repeat calls of
    itself.  Applied to every candidate alike.
    """
    if repeats < 3:
        raise ValueError(f"repeats must be >= 3 (median of at least 3), got {repeats}")
    out = {name: Timing(name) for name in candidates}
    for _ in range(repeats):
        for name, fn in candidates.items():
            if settle > 0 and (not out[name].times or min(out[name].times) < settle):
                t_end = time.perf_counter() + settle
                while True:
                    fn()
                    if time.perf_counter() >= t_end:
                        break
            c0 = time.process_time()
            dt, res = timed(fn)
            out[name].cpu_times.append(time.process_time() - c0)
            if check is not None:
                check(name, res)
            out[name].times.append(dt)
            out[name].result = res
    return out


def peak_rss_bytes() -> int:
    """Peak resident set size of this process so far (Linux ru_maxrss is in KiB)."""
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(rss if sys.platform == "darwin" else rss * 1024)


def run_child(code: str, *, env: dict | None = None, timeout: float = 1800) -> dict:
    """Run ``code`` in a fresh Python process (cwd = project root); it must print one JSON line
    last.  Returns that JSON plus ``peak_rss_bytes`` of the child and ``wall_s``."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    t0 = time.perf_counter()
    wrapper = (code + "\nimport resource as _r, json as _j\n"
               "print(_j.dumps({'__rss_kib': _r.getrusage(_r.RUSAGE_SELF).ru_maxrss}))\n")
    res = subprocess.run([sys.executable, "-c", wrapper], cwd=ROOT, env=full_env,
                         capture_output=True, text=True, timeout=timeout)
    wall = time.perf_counter() - t0
    if res.returncode != 0:
        raise RuntimeError(f"benchmark child failed:\n{res.stderr[-3000:]}")
    lines = [ln for ln in res.stdout.splitlines() if ln.startswith("{")]
    out = json.loads(lines[-2]) if len(lines) >= 2 else {}
    out["peak_rss_bytes"] = json.loads(lines[-1])["__rss_kib"] * 1024
    out["wall_s"] = wall
    return out


def whole_process_seconds(argv: list, repeats: int = 3, *, env: dict | None = None) -> Timing:
    """Median whole-process wall time of ``python argv...`` (cwd = project root)."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    t = Timing(" ".join(["python"] + list(argv)))
    for _ in range(repeats):
        t0 = time.perf_counter()
        res = subprocess.run([sys.executable] + list(argv), cwd=ROOT, env=full_env,
                             capture_output=True, text=True)
        t.times.append(time.perf_counter() - t0)
        if res.returncode != 0:
            raise RuntimeError(f"{t.name} failed:\n{res.stderr[-3000:]}")
        t.result = res.returncode
    return t


def _lscpu() -> dict:
    try:
        text = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    except OSError:
        return {}
    info = {}
    for line in text.splitlines():
        if ":" in line:
            k, v = line.split(":", 1)
            info[k.strip()] = v.strip()
    return info


def machine_info() -> dict:
    """Machine and library facts recorded with every benchmark."""
    import numba
    import numpy as np
    cpu = _lscpu()
    flags = cpu.get("Flags", "")
    try:
        blas = np.__config__.CONFIG["Build Dependencies"]["blas"]
        blas_name = f"{blas.get('name')} {blas.get('version')}"
    except Exception:       # pragma: no cover - numpy config layout varies
        blas_name = "unknown"
    return {
        "cpu_model": cpu.get("Model name", platform.processor()),
        "cpus": os.cpu_count(),
        "avx512f": "avx512f" in flags.split(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "numba": numba.__version__,
        "numba_threads": numba.config.NUMBA_NUM_THREADS,
        "blas": blas_name,
        "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE"),
        "load_average_at_start": os.getloadavg(),
        "platform": platform.platform(),
    }


def fmt_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"


def write_results(out, results: dict, text: str) -> None:
    """``<out>.json`` (the raw numbers) and ``<out>.md`` (the rendered table), both atomically."""
    from circuits.utils.files import to_jsonable, write_bytes_atomic, write_json_atomic

    out = Path(out)
    write_json_atomic(out.with_suffix(".json"), to_jsonable(results))
    write_bytes_atomic(out.with_suffix(".md"), text.encode())
