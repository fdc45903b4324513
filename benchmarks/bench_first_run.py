"""First run and warm run of the main job, and numba threads under contention (issue 24).

1. ``depthsep reduce`` (``python -m experiments.cli reduce``, n = 6) as a whole process, in
   this tree and in a baseline tree (``--baseline``: a checkout of the commit before this
   work), interleaved: a *first run* with empty caches (a fresh ``DEPTHSEP_CACHE_DIR`` and
   ``NUMBA_CACHE_DIR``: everything compiles), then a *warm run* with the caches it filled.
2. ``CodeEmbedding(20)`` with 1 and with 2 numba threads, with a CPU hog spinning on one of
   the two cores (the shared-machine situation the issue measured: the baseline's ``prange``
   kernel ran 2.7x slower on two threads), in both trees, interleaved; warm caches.

Each figure is the median of ``--repeats`` child processes [min-max]; the load average is
recorded before and after.  Usage::

    git archive <base-commit> | tar -x -C /tmp/base
    python benchmarks/bench_first_run.py --baseline /tmp/base --repeats 3
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from benchmarks import _common  # noqa: E402


def _load() -> float:
    return os.getloadavg()[0]


def _run(tree, argv, env) -> float:
    full = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "DEPTHSEP_CACHE_DIR")}
    full.update(env, PYTHONPATH=str(tree), MPLBACKEND="Agg")
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable] + argv, cwd=tree, env=full, capture_output=True, text=True)
    dt = time.perf_counter() - t0
    if r.returncode != 0:
        raise RuntimeError(f"{argv} in {tree} failed:\n{r.stderr[-2000:]}")
    return dt


def first_and_warm(trees: dict, repeats: int) -> dict:
    out = {name: {"first_s": [], "warm_s": []} for name in trees}
    for _ in range(repeats):
        for name, tree in trees.items():
            cache = tempfile.mkdtemp(prefix="depthsep-first-run-")
            env = {"DEPTHSEP_CACHE_DIR": cache, "NUMBA_CACHE_DIR": os.path.join(cache, "nb")}
            argv = ["-m", "experiments.cli", "reduce", "--out", os.path.join(cache, "out"),
                    "--no-progress"]
            out[name]["first_s"].append(_run(tree, argv, env))
            out[name]["warm_s"].append(_run(tree, argv, env))
    return out


def _hog(stop):
    while not stop.is_set():
        pass


_EMBED = ("import sys, time, numba; numba.set_num_threads({t}); import embeddings as E; "
          "E.CodeEmbedding(12); t0 = time.perf_counter(); E.CodeEmbedding(20); "
          "print(time.perf_counter() - t0)")


def contention(trees: dict, repeats: int) -> dict:
    """CodeEmbedding(20) on 1 and 2 numba threads with one core kept busy (warm caches)."""
    cache = tempfile.mkdtemp(prefix="depthsep-contention-")
    out = {}
    for name, tree in trees.items():            # fill the caches (untimed)
        env = {"DEPTHSEP_CACHE_DIR": cache + name, "NUMBA_CACHE_DIR": cache + name + "/nb"}
        _run(tree, ["-c", _EMBED.format(t=2)], env)
        _run(tree, ["-c", _EMBED.format(t=1)], env)
    stop = mp.Event()
    hog = mp.Process(target=_hog, args=(stop,), daemon=True)
    hog.start()
    try:
        time.sleep(0.5)
        for _ in range(repeats):
            for name, tree in trees.items():
                env = {"DEPTHSEP_CACHE_DIR": cache + name, "NUMBA_CACHE_DIR": cache + name + "/nb"}
                for t in (1, 2):
                    full = {k: v for k, v in os.environ.items()}
                    full.update(env, PYTHONPATH=str(tree))
                    r = subprocess.run([sys.executable, "-c", _EMBED.format(t=t)], cwd=tree,
                                       env=full, capture_output=True, text=True, check=True)
                    out.setdefault(f"{name}/{t}", []).append(float(r.stdout.strip().splitlines()[-1]))
    finally:
        stop.set()
        hog.join(5)
    return out


def _fmt(v):
    return f"{statistics.median(v):.2f} s [{min(v):.2f}–{max(v):.2f}]"


def render(res) -> str:
    fw = res["first_and_warm"]
    lines = ["# First run and warm run; threads under contention", "",
             f"Command: `{res['command']}`  ", f"Load (1-min) before/after: "
             f"{res['load_before']:.2f}/{res['load_after']:.2f}; {res['repeats']} children each, "
             f"interleaved, median [min–max].", "",
             "| tree | `depthsep reduce` first run (empty caches) | warm run |", "|---|---|---|"]
    for name, v in fw.items():
        lines.append(f"| {name} | {_fmt(v['first_s'])} | {_fmt(v['warm_s'])} |")
    b, n = fw.get("baseline"), fw.get("this")
    if b and n:
        lines += ["", f"First run: {statistics.median(b['first_s']) / statistics.median(n['first_s']):.2f}× "
                  f"less time than the baseline; warm: {statistics.median(b['warm_s']) / statistics.median(n['warm_s']):.2f}×."]
    if res.get("contention"):
        ct = res["contention"]
        lines += ["", "`CodeEmbedding(20)` with one core kept busy by a spinning process (warm):", "",
                  "| tree | 1 thread | 2 threads | 2 threads vs 1 |", "|---|---|---|---|"]
        for name in fw:
            one, two = ct[f"{name}/1"], ct[f"{name}/2"]
            lines.append(f"| {name} | {_fmt(one)} | {_fmt(two)} | "
                         f"{statistics.median(two) / statistics.median(one):.2f}× the time |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--baseline", help="a checkout of the commit before this work")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--no-contention", action="store_true")
    p.add_argument("--out", default=str(HERE / "results_first_run"))
    args = p.parse_args(argv)
    if args.repeats < 3:
        p.error("--repeats must be >= 3")
    trees = {"this": ROOT}
    if args.baseline:
        trees = {"baseline": Path(args.baseline).resolve(), "this": ROOT}
    res = {"command": "python benchmarks/bench_first_run.py " + " ".join(
        argv if argv is not None else sys.argv[1:]), "machine": _common.machine_info(),
        "repeats": args.repeats, "load_before": _load()}
    res["first_and_warm"] = first_and_warm(trees, args.repeats)
    res["load_mid"] = _load()
    if not args.no_contention:
        res["contention"] = contention(trees, args.repeats)
    res["load_after"] = _load()
    text = render(res)
    _common.write_results(args.out, res, text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
