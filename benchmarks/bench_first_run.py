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

3. ``--fresh-venv``: the first run the way a user meets it -- each tree installed
   (``pip install '.[plot]'``, not editable) into a new virtual environment, then the
   README's ``depthsep reduce`` run from an empty folder outside the checkout with a new, empty
   ``XDG_CACHE_HOME`` (nothing else set), followed by a warm run with that cache; wall and CPU
   seconds and peak RSS of each child, the load before and after each run.  The compile share
   is (first - warm) / first.  ``--venv-flags=--system-site-packages`` reuses the installed
   dependencies (the install then only builds depthsep); ``--venv DIR`` uses an environment
   that already has depthsep (CI's install sequence: ``--venv DIR --repeats 1``, printed only)::

       python benchmarks/bench_first_run.py --fresh-venv --venv-flags=--system-site-packages \
           --baseline /tmp/base --repeats 3
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


def _popen_rusage(argv, **kw):
    """(returncode, stdout, stderr, rusage) of one child (os.wait4: this child's own usage)."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
    # read the pipes to the end, then reap the child ourselves to get its rusage
    out = proc.stdout.read()
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, out, err, usage


def make_venv(tree: Path, where: Path, flags: list) -> tuple:
    """A new virtual environment at ``where`` with ``tree`` installed (``'.[plot]'``, not
    editable); returns (venv path, install seconds)."""
    subprocess.run([sys.executable, "-m", "venv", *flags, str(where)], check=True)
    t0 = time.perf_counter()
    subprocess.run([str(where / "bin" / "pip"), "install", "-q", "--no-warn-script-location",
                    f"{tree}[plot]"], check=True,
                   env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"})
    return where, time.perf_counter() - t0


def user_first_and_warm(venvs: dict, repeats: int) -> dict:
    """Per venv: ``repeats`` pairs (first run with a new empty XDG_CACHE_HOME, warm run),
    interleaved across venvs, each from a new empty folder outside the checkout."""
    out = {name: {"first": [], "warm": []} for name in venvs}
    for _ in range(repeats):
        for name, venv in venvs.items():
            home = tempfile.mkdtemp(prefix="depthsep-user-")
            cache = os.path.join(home, "cache")
            for kind in ("first", "warm"):
                argv = [str(venv / "bin" / "depthsep"), "reduce", "--out",
                        os.path.join(home, "out"), "--no-progress"]
                drop = ("NUMBA_CACHE_DIR", "DEPTHSEP_CACHE_DIR", "PYTHONPATH", "XDG_CACHE_HOME")
                env = {k: v for k, v in os.environ.items() if k not in drop}
                env.update(XDG_CACHE_HOME=cache, MPLBACKEND="Agg")
                load0 = _load()
                t0 = time.perf_counter()
                rc, _, err, usage = _popen_rusage(argv, cwd=home, env=env)
                wall = time.perf_counter() - t0
                if rc != 0:
                    raise RuntimeError(f"{argv} failed:\n{err[-2000:]}")
                out[name][kind].append({"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime,
                                        "peak_rss_mb": usage.ru_maxrss / 1024,
                                        "load_before": load0, "load_after": _load()})
    return out


def _med(runs, key):
    return statistics.median(r[key] for r in runs)


def render_user(res) -> str:
    u = res["user_first_and_warm"]
    lines = ["# First run as a user meets it (new venv, empty XDG_CACHE_HOME, outside the "
             "checkout)", "", f"Command: `{res['command']}`  ",
             f"{res['repeats']} first/warm pairs per tree, interleaved; median [min–max]; load "
             "(1-min) before–after each run in brackets.", "",
             "| tree | install | first run wall | first run CPU | warm run wall | compile share "
             "(first − warm) / first | peak RSS first | loads (first runs) |",
             "|---|---|---|---|---|---|---|---|"]
    for name, v in u.items():
        f, w = v["first"], v["warm"]
        fw = [r["wall_s"] for r in f]
        ww = [r["wall_s"] for r in w]
        share = (statistics.median(fw) - statistics.median(ww)) / statistics.median(fw)
        loads = ", ".join(f"{r['load_before']:.1f}–{r['load_after']:.1f}" for r in f)
        inst = res.get("install_s", {}).get(name)
        lines.append(f"| {name} | {'' if inst is None else f'{inst:.1f} s'} | {_fmt(fw)} | "
                     f"{_med(f, 'cpu_s'):.2f} s | {_fmt(ww)} | {share:.0%} | "
                     f"{_med(f, 'peak_rss_mb'):.0f} MB | {loads} |")
    b, n = u.get("baseline"), u.get("this")
    if b and n:
        lines += ["", f"First run: {_med(b['first'], 'wall_s') / _med(n['first'], 'wall_s'):.2f}× "
                  f"less time than the baseline (CPU {_med(b['first'], 'cpu_s') / _med(n['first'], 'cpu_s'):.2f}×); "
                  f"warm: {_med(b['warm'], 'wall_s') / _med(n['warm'], 'wall_s'):.2f}×."]
    return "\n".join(lines) + "\n"


def main_user(args) -> int:
    flags = [f for f in (args.venv_flags or "").split() if f]
    trees = {"this": ROOT}
    if args.baseline:
        trees = {"baseline": Path(args.baseline).resolve(), "this": ROOT}
    res = {"command": "python benchmarks/bench_first_run.py " + " ".join(args.argv),
           "machine": _common.machine_info(), "repeats": args.repeats, "load_before": _load()}
    if args.venv:
        venvs = {"this": Path(args.venv).resolve()}
    else:
        root = Path(tempfile.mkdtemp(prefix="depthsep-venvs-"))
        venvs, res["install_s"] = {}, {}
        for name, tree in trees.items():
            venvs[name], res["install_s"][name] = make_venv(tree, root / name, flags)
    res["user_first_and_warm"] = user_first_and_warm(venvs, args.repeats)
    res["load_after"] = _load()
    text = render_user(res)
    if not args.venv:
        _common.write_results(args.out, res, text)
    print(text)
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--baseline", help="a checkout of the commit before this work")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--no-contention", action="store_true")
    p.add_argument("--out", default=str(HERE / "results_first_run"))
    p.add_argument("--fresh-venv", action="store_true",
                   help="install each tree into a new venv and run as a user (see above)")
    p.add_argument("--venv", help="an environment with depthsep installed (printed only)")
    p.add_argument("--venv-flags", default="", help="flags for python -m venv")
    args = p.parse_args(argv)
    args.argv = list(argv if argv is not None else sys.argv[1:])
    if args.venv and args.repeats >= 1:
        return main_user(args)
    if args.repeats < 3:
        p.error("--repeats must be >= 3")
    if args.fresh_venv:
        if args.out == str(HERE / "results_first_run"):
            args.out = str(HERE / "results_first_run_venv")
        return main_user(args)
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
