"""P1: the public counting path in a fresh process, first call and repeat calls.

``count_disagreements(circuit, target)`` called ``--calls`` times on one circuit in a fresh
process (a child), per mode and cache state.  Modes:

* ``auto``: the default kernel choice (``kernel="auto"``);
* ``auto_before``: ``auto`` with the generic depth-2 kernel switched off
  (``circuits._kernels_generic.generic_data`` refuses every circuit): the choice before it
  existed, the same-run baseline for "not slower than before";
* ``generic``, ``fused``, ``bitsliced``: the kernel forced (``fused`` compiles, or loads from the
  kernel cache, the circuit's own kernel on the first call);
* ``yardstick``: the yardstick-style baseline of ``benchmarks/_yardstick.py`` (a plain numba
  low/high kernel; its numba compile is in its first call).

Cache states: ``cold`` (empty ``NUMBA_CACHE_DIR`` and ``DEPTHSEP_CACHE_DIR``: the library's
kernels compile in the first call, as on a new machine; ``auto`` and ``auto_before`` only),
``absent`` (numba's cache of the library kernels warm, no compiled kernel of this circuit) and
``cached`` (both warm; the yardstick runs here).  Per mode: the first call, the median of the
later calls and the total.  Children are interleaved (A B C ... per repeat).  Counts and first
counterexamples must agree across all children, or the script fails.

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

MODES = ("auto", "auto_before", "generic", "fused", "bitsliced", "yardstick")
STATES = {"cold": ("auto", "auto_before"),
          "absent": ("auto", "auto_before", "generic", "fused", "bitsliced"),
          "cached": MODES}

_CHILD = """
import json, sys, time
sys.path.insert(0, {root!r})
import circuits as c
from circuits import dispatch as d, _kernels_generic as g
from benchmarks.bench_fused import _circuit
circ, target = _circuit({wid!r})
mode = {mode!r}
if mode == "auto_before":
    g.generic_data = lambda *a: "switched off (benchmark baseline)"
if mode == "yardstick":
    from benchmarks._yardstick import Yardstick
    y = Yardstick(circ, circ.n_inputs // 2 if target == "ip" else 0)
    run = lambda: (y(), None)
else:
    kernel = mode if mode in ("generic", "fused", "bitsliced") else "auto"
    def run():
        r = c.count_disagreements(circ, target, kernel=kernel)
        return r.count, r.index
times = []
for i in range({calls}):
    t0 = time.perf_counter()
    r = run()
    times.append(time.perf_counter() - t0)
served = (None if mode == "yardstick" else mode if mode in ("generic", "fused", "bitsliced")
          else c.kernel_plan(circ).kernel)
print(json.dumps({{"times": times, "count": r[0], "index": r[1], "served": served}}))
"""


def _child(wid, mode, calls, cache_dir, numba_dir):
    code = _CHILD.format(root=str(HERE.parent), wid=wid, mode=mode, calls=calls)
    return _common.run_child(code, env={"DEPTHSEP_CACHE_DIR": cache_dir,
                                        "NUMBA_CACHE_DIR": numba_dir})


def bench(wid, calls, repeats, states=tuple(STATES)):
    numba_dir = tempfile.mkdtemp(prefix="depthsep-public-numba-")
    filled = tempfile.mkdtemp(prefix="depthsep-public-filled-")
    for mode in ("fused", "generic", "bitsliced", "auto"):   # library kernels and this
        _child(wid, mode, 2, filled, numba_dir)              # circuit's kernel cached
    plan = {s: m for s, m in STATES.items() if s in states}
    rows = {(m, s): [] for s, modes in plan.items() for m in modes}
    load0 = _load()
    for _ in range(repeats):
        for state, modes in plan.items():
            for mode in modes:
                if state == "cold":
                    cache = tempfile.mkdtemp(prefix="depthsep-public-cold-")
                    ndir = tempfile.mkdtemp(prefix="depthsep-public-cold-numba-")
                else:
                    cache = (tempfile.mkdtemp(prefix="depthsep-public-") if state == "absent"
                             else filled)
                    ndir = numba_dir
                rows[mode, state].append(_child(wid, mode, calls, cache, ndir))
                print(f"  {wid} {state} {mode} (load {_load():.1f})", file=sys.stderr)
    counts = {r["count"] for v in rows.values() for r in v}
    index = {r["index"] for v in rows.values() for r in v if r["index"] is not None}
    if len(counts) != 1 or len(index) != 1:
        raise AssertionError(f"{wid}: modes disagree: {counts}, {index}")
    out = {"id": wid, "calls": calls, "load_before": load0, "load_after": _load(),
           "count": counts.pop(), "modes": {}}
    for (mode, state), runs in rows.items():
        out["modes"][f"{mode}/{state}"] = {
            "first_s": [r["times"][0] for r in runs],
            "later_median_s": [statistics.median(r["times"][1:]) for r in runs],
            "total_s": [sum(r["times"]) for r in runs],
            "served": sorted({r["served"] for r in runs if r["served"]})}
    return out


def _med(v):
    return statistics.median(v)


def _fmt(v):
    return f"{_med(v) * 1e3:.3g} ms [{min(v) * 1e3:.3g}–{max(v) * 1e3:.3g}]"


def render(res) -> str:
    lines = ["# Public counting path (P1): first call and repeat calls in a fresh process", "",
             f"Command: `{res['command']}`  ", f"Machine: {res['machine'].get('cpu', '')}  ",
             f"{res['repeats']} children per mode and cache state, interleaved; median [min–max] "
             f"over children; calls per child: {res['calls']}.", ""]
    for r in res["rows"]:
        m = r["modes"]
        lines += [f"## {r['id']} (load {r['load_before']:.1f} before / {r['load_after']:.1f} "
                  f"after; count {r['count']})", "",
                  "| mode | cache | first call | later calls (median) | all calls | "
                  "kernel serving at the end |", "|---" * 6 + "|"]
        for state, modes in STATES.items():
            for mode in modes:
                if f"{mode}/{state}" not in m:
                    continue
                v = m[f"{mode}/{state}"]
                lines.append(f"| {mode} | {state} | {_fmt(v['first_s'])} | "
                             f"{_fmt(v['later_median_s'])} | {_fmt(v['total_s'])} | "
                             f"{', '.join(v['served']) or '–'} |")
        if not all(f"{x}/{s}" in m for s in ("cached", "absent") for x in ("auto", "fused")):
            continue
        auto = _med(m["auto/cached"]["later_median_s"])
        auto_abs = _med(m["auto/absent"]["later_median_s"])
        fused = _med(m["fused/cached"]["later_median_s"])
        gen = _med(m["generic/cached"]["later_median_s"])
        yard = _med(m["yardstick/cached"]["later_median_s"])
        before = _med(m["auto_before/cached"]["later_median_s"])
        lines += ["", f"Repeat calls (medians): auto {auto * 1e3:.3g} ms (kernel cache absent: "
                  f"{auto_abs * 1e3:.3g} ms); best compiled kernel (fused, forced) "
                  f"{fused * 1e3:.3g} ms: auto / fused = {auto / fused:.2f} "
                  f"(absent: {auto_abs / fused:.2f}); generic kernel-only {gen * 1e3:.3g} ms "
                  f"(generic / fused = {gen / fused:.2f}); yardstick {yard * 1e3:.3g} ms: "
                  f"**{yard / auto:.2f}×** auto (absent: {yard / auto_abs:.2f}×); before "
                  f"(auto_before) {before * 1e3:.3g} ms: {before / auto:.2f}× auto."]
        if "auto/cold" in m:
            lines.append(f"First call: auto cold {_med(m['auto/cold']['first_s']):.3g} s vs "
                         f"before {_med(m['auto_before/cold']['first_s']):.3g} s.")
        lines += [f"First call, warm numba cache: kernel cache absent "
                  f"{_med(m['auto/absent']['first_s']) * 1e3:.3g} ms vs before "
                  f"{_med(m['auto_before/absent']['first_s']) * 1e3:.3g} ms; cached "
                  f"{_med(m['auto/cached']['first_s']) * 1e3:.3g} ms vs before "
                  f"{_med(m['auto_before/cached']['first_s']) * 1e3:.3g} ms.", ""]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workload", default="W1,W3")
    p.add_argument("--calls", type=int, default=30)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--states", default="cold,absent,cached",
                   help="cache states to run (comma-separated subset of cold,absent,cached)")
    p.add_argument("--out", default=str(HERE / "results_public_path"))
    args = p.parse_args(argv)
    if args.repeats < 3:
        p.error("--repeats must be >= 3")
    if args.calls < 3:
        p.error("--calls must be >= 3")
    res = {"command": "python benchmarks/bench_public_path.py " + " ".join(
        argv if argv is not None else sys.argv[1:]), "machine": _common.machine_info(),
        "repeats": args.repeats, "calls": args.calls, "rows": []}
    for wid in [w.strip() for w in args.workload.split(",") if w.strip()]:
        states = tuple(x.strip() for x in args.states.split(",") if x.strip())
        if not states or set(states) - set(STATES):
            p.error(f"--states must name some of {', '.join(STATES)}")
        res["rows"].append(bench(wid, args.calls, args.repeats, states))
        print(f"{wid} done (load {_load():.1f})", file=sys.stderr)
    text = render(res)
    _common.write_results(args.out, res, text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
