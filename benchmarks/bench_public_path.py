"""The public counting path with ``kernel="auto"`` on repeated calls (issue 23).

``count_disagreements(circuit, target)`` called ``--calls`` times on one circuit in a fresh
process (a child), per mode, with the circuit's compiled kernel absent from the on-disk cache
(a fresh ``DEPTHSEP_CACHE_DIR``) or already cached (a directory filled by an earlier process);
the library's own kernels come from numba's cache in both.  Modes:

* ``auto``: the default: the foreground rent-or-buy rule (compile or load the circuit's kernel
  once the predicted time saved by the calls so far covers the setup);
* ``auto_background``: ``auto`` compiling (or loading) the kernel in a background thread from
  the second call (first, if cached) while the interpreted kernel serves
  (``dispatch._BACKGROUND = True``; measured worse, so off by default);
* ``auto_before``: ``auto`` with neither (the behaviour before this change: compile only if one
  call repays it);
* ``bitsliced`` and ``fused``: the kernel forced (``fused`` compiles or loads on the first call).

Per mode: the first call, the median of the later calls, the total of all calls, and the call
after which the compiled kernel served.  Kernel-only figures (the two kernels forced, warm:
median of calls 2..K of ``fused`` and ``bitsliced``) come from the same children.  Modes are
interleaved (child A B C ... per repeat).

Usage::

    python benchmarks/bench_public_path.py --workload W1,W3 --calls 30 --repeats 3
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

MODES = ("auto", "auto_background", "auto_before", "bitsliced", "fused")

_CHILD = """
import json, sys, time
sys.path.insert(0, {root!r})
import circuits as c
from circuits import dispatch as d, _bitsliced_codegen as cg
from benchmarks.bench_fused import _circuit
circ, target = _circuit({wid!r})
mode = {mode!r}
d._BACKGROUND = mode == "auto_background"
if mode == "auto_before":
    d._repeat_choice = lambda *a: (False, "")
kernel = mode if mode in ("bitsliced", "fused") else "auto"
times, served = [], None
for i in range({calls}):
    t0 = time.perf_counter()
    r = c.count_disagreements(circ, target, kernel=kernel)
    times.append(time.perf_counter() - t0)
    if served is None and d._FUSED.get(circ) is not None and cg.state(d._FACTS[circ][0]) == "loaded":
        served = i + 1                   # this call ran (or prepared) the compiled kernel
print(json.dumps({{"times": times, "served": served, "count": r.count, "index": r.index}}))
"""


def _child(wid, mode, calls, cache_dir, numba_dir):
    code = _CHILD.format(root=str(HERE.parent), wid=wid, mode=mode, calls=calls)
    return _common.run_child(code, env={"DEPTHSEP_CACHE_DIR": cache_dir,
                                        "NUMBA_CACHE_DIR": numba_dir})


def bench(wid, calls, repeats):
    from circuits._jit import numba_cache_root
    numba_dir = str(numba_cache_root())
    filled = tempfile.mkdtemp(prefix="depthsep-public-filled-")
    _child(wid, "fused", 3, filled, numba_dir)         # library kernels warm; this kernel cached
    rows = {(m, s): [] for m in MODES for s in ("absent", "cached")}
    load0 = _load()
    for _ in range(repeats):
        for state in ("absent", "cached"):
            for mode in MODES:
                d = tempfile.mkdtemp(prefix="depthsep-public-") if state == "absent" else filled
                rows[mode, state].append(_child(wid, mode, calls, d, numba_dir))
    results = {(r["count"], r["index"]) for v in rows.values() for r in v}
    if len(results) != 1:
        raise AssertionError(f"{wid}: modes disagree: {results}")
    out = {"id": wid, "calls": calls, "load_before": load0, "load_after": _load(), "modes": {}}
    for (mode, state), runs in rows.items():
        first = [r["times"][0] for r in runs]
        later = [statistics.median(r["times"][1:]) for r in runs]
        total = [sum(r["times"]) for r in runs]
        out["modes"][f"{mode}/{state}"] = {
            "first_s": first, "later_median_s": later, "total_s": total,
            "served_after_call": [r["served"] for r in runs]}
    return out


def _med(v):
    return statistics.median(v)


def _fmt(v):
    return f"{_med(v) * 1e3:.3g} ms [{min(v) * 1e3:.3g}–{max(v) * 1e3:.3g}]"


def render(res) -> str:
    lines = ["# Public counting path, repeated calls (`kernel=\"auto\"`)", "",
             f"Command: `{res['command']}`  ", f"Machine: {res['machine'].get('cpu', '')}  ",
             f"{res['repeats']} children per mode and cache state, interleaved; median [min–max] "
             f"over children; calls per child: {res['calls']}.", ""]
    for r in res["rows"]:
        m = r["modes"]
        lines += [f"## {r['id']} (load {r['load_before']:.1f}/{r['load_after']:.1f})", "",
                  "| mode | kernel cache | first call | later calls (median) | all calls | "
                  "vs bitsliced (all calls) | compiled kernel from call |", "|---" * 7 + "|"]
        for state in ("absent", "cached"):
            base = _med(m[f"bitsliced/{state}"]["total_s"])
            for mode in MODES:
                v = m[f"{mode}/{state}"]
                served = sorted({s for s in v["served_after_call"] if s is not None}) or ["–"]
                lines.append(f"| {mode} | {state} | {_fmt(v['first_s'])} | "
                             f"{_fmt(v['later_median_s'])} | {_fmt(v['total_s'])} | "
                             f"{base / _med(v['total_s']):.2f}× | "
                             f"{', '.join(str(s) for s in served)} |")
        fk = _med(m["fused/cached"]["later_median_s"])
        bk = _med(m["bitsliced/cached"]["later_median_s"])
        lines += ["", f"Kernel-only (forced, warm, later calls): fused {fk * 1e3:.3g} ms, "
                  f"bitsliced {bk * 1e3:.3g} ms ({bk / fk:.2f}×).", ""]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workload", default="W1,W3")
    p.add_argument("--calls", type=int, default=30)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--out", default=str(HERE / "results_public_path"))
    args = p.parse_args(argv)
    if args.repeats < 3:
        p.error("--repeats must be >= 3")
    res = {"command": "python benchmarks/bench_public_path.py " + " ".join(
        argv if argv is not None else sys.argv[1:]), "machine": _common.machine_info(),
        "repeats": args.repeats, "calls": args.calls, "rows": []}
    for wid in [w.strip() for w in args.workload.split(",") if w.strip()]:
        res["rows"].append(bench(wid, args.calls, args.repeats))
        print(f"{wid} done (load {_load():.1f})", file=sys.stderr)
    text = render(res)
    _common.write_results(args.out, res, text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
