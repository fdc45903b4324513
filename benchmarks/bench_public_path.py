"""P1: the public counting path in a fresh process, first call and repeat calls.

``count_disagreements(circuit, target)`` called ``--calls`` times on one circuit in a fresh
process (a child), per mode and cache state.  Modes:

* ``auto``: the default kernel choice (``kernel="auto"``; with the kernel cache empty, a child
  process compiles the circuit's kernel once the calls' predicted saving covers the compile
  over the usable cores: ``circuits.dispatch``, ``circuits._background``);
* ``auto_eager``: ``auto`` with the child started from the third call whatever the cost
  (``circuits.dispatch._BACKGROUND = "eager"``, ``DEPTHSEP_BACKGROUND_COMPILE=eager``);
* ``auto_yield``: ``auto_eager`` with ``circuits.dispatch._BACKGROUND_YIELD = True`` (calls made
  while the child compiles run on one thread fewer, leaving it a core);
* ``auto_fg``: ``auto`` with that child switched off (``circuits.dispatch._BACKGROUND =
  "off"``): the compile in the foreground once the rent-or-buy rule says so, the named
  baseline of the child-process compile;
* ``auto_before``: ``auto_fg`` with the generic depth-2 kernel switched off too
  (``circuits._kernels_generic.generic_data`` refuses every circuit): the choice before it
  existed;
* ``generic``, ``fused``, ``bitsliced``: the kernel forced (``fused`` compiles, or loads from the
  kernel cache, the circuit's own kernel on the first call);
* ``yardstick``: the yardstick-style baseline of ``benchmarks/_yardstick.py`` (a plain numba
  low/high kernel; its numba compile is in its first call).

Per call the child records whether the circuit's compiled kernel is loaded in the process, so
the table gives, for ``auto`` with an empty kernel cache, the call (and the seconds since the
first call started) from which the compiled kernel serves, the median call while the child
compiles against ``auto_fg``'s calls of the same numbers (the slowdown the child causes), and
the median call after the switch.  ``--gap-ms`` sleeps between calls (calls spaced in time).

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

MODES = ("auto", "auto_eager", "auto_yield", "auto_fg", "auto_before", "generic", "fused", "bitsliced", "yardstick")
STATES = {"cold": ("auto", "auto_fg", "auto_before"),
          "absent": ("auto", "auto_eager", "auto_yield", "auto_fg", "auto_before", "generic", "fused", "bitsliced"),
          "cached": MODES}

_CHILD = """
import json, sys, time
sys.path.insert(0, {root!r})
import circuits as c
from circuits import dispatch as d, _kernels_generic as g, _bitsliced_cache as kc
from benchmarks.bench_fused import _circuit
circ, target = _circuit({wid!r})
key = kc.circuit_key(circ, d._fused_mask_bits(circ))
mode = {mode!r}
if mode == "auto_yield":
    d._BACKGROUND_YIELD = True
if mode in ("auto_eager", "auto_yield"):
    d._BACKGROUND = "eager"
if mode in ("auto_fg", "auto_before"):
    d._BACKGROUND = "off"
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
times, loaded = [], []
for i in range({calls}):
    t0 = time.perf_counter()
    r = run()
    times.append(time.perf_counter() - t0)
    loaded.append(kc.state(key) == "loaded")
    if {gap}:
        time.sleep({gap})
served = (None if mode == "yardstick" else mode if mode in ("generic", "fused", "bitsliced")
          else c.kernel_plan(circ).kernel)
print(json.dumps({{"times": times, "loaded": loaded, "count": r[0], "index": r[1],
                  "served": served}}))
"""


def _child(wid, mode, calls, cache_dir, numba_dir, gap=0.0):
    code = _CHILD.format(root=str(HERE.parent), wid=wid, mode=mode, calls=calls, gap=gap)
    return _common.run_child(code, env={"DEPTHSEP_CACHE_DIR": cache_dir,
                                        "NUMBA_CACHE_DIR": numba_dir})


def bench(wid, calls, repeats, states=tuple(STATES), gap=0.0, only=MODES):
    numba_dir = tempfile.mkdtemp(prefix="depthsep-public-numba-")
    filled = tempfile.mkdtemp(prefix="depthsep-public-filled-")
    for mode in ("fused", "generic", "bitsliced", "auto"):   # library kernels and this
        _child(wid, mode, 2, filled, numba_dir)              # circuit's kernel cached
    plan = {s: tuple(x for x in m if x in only) for s, m in STATES.items() if s in states}
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
                rows[mode, state].append(_child(wid, mode, calls, cache, ndir, gap))
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
            "times_s": [r["times"] for r in runs], "loaded": [r["loaded"] for r in runs],
            "served": sorted({r["served"] for r in runs if r["served"]})}
    return out


def _med(v):
    return statistics.median(v)


def _fmt(v):
    return f"{_med(v) * 1e3:.3g} ms [{min(v) * 1e3:.3g}–{max(v) * 1e3:.3g}]"


def _switch(m, gap, mode="auto"):
    """The child-process compile in ``mode`` with the kernel cache empty, against ``auto_fg``
    (calls of the same numbers) and the compiled kernel forced: one line, or None."""
    if f"{mode}/absent" not in m or "auto_fg/absent" not in m:
        return None
    v, fg = m[f"{mode}/absent"], m["auto_fg/absent"]
    calls, secs, during, same_fg, after = [], [], [], [], []
    for times, loaded in zip(v["times_s"], v["loaded"]):
        sw = next((i for i, x in enumerate(loaded) if x), None)
        if sw is None:
            continue
        calls.append(sw + 1)
        secs.append(sum(times[:sw + 1]) + sw * gap)
        during.extend(times[1:sw])
        for t in fg["times_s"]:
            same_fg.extend(t[1:sw])
        after.extend(times[sw + 1:])
    n = len(v["times_s"])
    if not calls:
        return (f"{mode}, kernel cache empty: the compiled kernel never served within "
                f"{len(v['times_s'][0])} calls in any of {n} children.")
    line = (f"{mode}, kernel cache empty (child-process compile): the compiled kernel serves from "
            f"call {_med(calls):.0f} [{min(calls)}–{max(calls)}] ({len(calls)} of {n} children), "
            f"{_med(secs):.3g} s [{min(secs):.3g}–{max(secs):.3g}] after the first call started")
    if during and same_fg:
        line += (f"; while the child compiles, calls 2.. take {_med(during) * 1e3:.3g} ms "
                 f"against auto_fg's {_med(same_fg) * 1e3:.3g} ms for the same calls "
                 f"(**{_med(during) / _med(same_fg):.2f}×**)")
    if after and "fused/absent" in m:
        fused = _med(m["fused/absent"]["later_median_s"])
        fg_rep = _med(fg["later_median_s"])
        line += (f"; after the switch {_med(after) * 1e3:.3g} ms per call against the compiled "
                 f"kernel forced {fused * 1e3:.3g} ms (**{_med(after) / fused:.2f}**) and "
                 f"auto_fg's repeat calls {fg_rep * 1e3:.3g} ms ({_med(after) / fg_rep:.2f})")
    return line + "."


def _after_switch(v):
    """Times of the calls after the one that switched to the compiled kernel (all children)."""
    out = []
    for times, loaded in zip(v["times_s"], v["loaded"]):
        sw = next((i for i, x in enumerate(loaded) if x), None)
        if sw is not None:
            out.extend(times[sw + 1:])
    return out


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
        for mode in ("auto", "auto_eager", "auto_yield"):
            sw = _switch(m, res.get("gap_ms", 0) / 1e3, mode)
            if sw:
                lines += ["", sw]
        if not all(f"{x}/{s}" in m for s in ("cached", "absent")
                   for x in ("auto", "fused", "generic", "auto_before")) \
                or "yardstick/cached" not in m:
            lines.append("")
            continue
        auto = _med(m["auto/cached"]["later_median_s"])
        after = _after_switch(m["auto/absent"])
        auto_abs = _med(after) if after else _med(m["auto/absent"]["later_median_s"])
        abs_txt = ("kernel cache absent, calls after the child's compile" if after
                   else "kernel cache absent, no switch within the run")
        fused = _med(m["fused/cached"]["later_median_s"])
        gen = _med(m["generic/cached"]["later_median_s"])
        yard = _med(m["yardstick/cached"]["later_median_s"])
        before = _med(m["auto_before/cached"]["later_median_s"])
        lines += ["", f"Repeat calls (medians): auto {auto * 1e3:.3g} ms ({abs_txt}: "
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
    p.add_argument("--modes", default=",".join(MODES),
                   help="modes to run (comma-separated subset of " + ",".join(MODES) + ")")
    p.add_argument("--gap-ms", type=float, default=0.0,
                   help="sleep between calls in each child (calls spaced in time)")
    p.add_argument("--out", default=str(HERE / "results_public_path"))
    args = p.parse_args(argv)
    if args.repeats < 3:
        p.error("--repeats must be >= 3")
    if args.calls < 3:
        p.error("--calls must be >= 3")
    res = {"command": "python benchmarks/bench_public_path.py " + " ".join(
        argv if argv is not None else sys.argv[1:]), "machine": _common.machine_info(),
        "repeats": args.repeats, "calls": args.calls, "gap_ms": args.gap_ms, "rows": []}
    only = tuple(x.strip() for x in args.modes.split(",") if x.strip())
    if not only or set(only) - set(MODES):
        p.error(f"--modes must name some of {', '.join(MODES)}")
    for wid in [w.strip() for w in args.workload.split(",") if w.strip()]:
        states = tuple(x.strip() for x in args.states.split(",") if x.strip())
        if not states or set(states) - set(STATES):
            p.error(f"--states must name some of {', '.join(STATES)}")
        res["rows"].append(bench(wid, args.calls, args.repeats, states, args.gap_ms / 1e3,
                                 only))
        print(f"{wid} done (load {_load():.1f})", file=sys.stderr)
    text = render(res)
    _common.write_results(args.out, res, text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
