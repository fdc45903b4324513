"""Demo: build IP_n circuits (depth 3 and depth 2), verify them on all 4^n inputs, print a table.

    python experiments/ip_demo.py --n-max 8          # or: depthsep ip-demo --n-max 8

"size" is the number of hidden gates (``circuit.size``); every circuit has one output gate more.
Writes DIR/ip_demo.json (atomically) with one row per circuit.

Every option is checked before the run starts: ranges, an output directory that can be
written, and the estimated run time (measured on a small instance, extrapolated by points x
gates) against --max-seconds.  The table is printed before any file is written.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

if __package__ in (None, ""):                      # `python experiments/ip_demo.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from circuits.utils.cli import (EXIT_FAILED, EXIT_NOT_SAVED, check_output_dir, int_in_range,
                                real_in_range, save_or_report)

FORMAT = "depthsep.ip_demo"
VERSION = 1
#: Largest n: N = 2n inputs must index the cube with int64 (N <= 62).
N_MAX = 31
#: ip_depth2(n) has n·2^(n-1) hidden gates; beyond this it does not fit a laptop.
DEPTH2_N_MAX = 14


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(allow_abbrev=False, prog="depthsep ip-demo", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n-max", type=int_in_range(1, N_MAX, what="bits per party, N = 2n <= 62"),
                   default=8, help="largest n (bits per party), 1..31; default 8")
    p.add_argument("--depth2-n-max", type=int_in_range(0, DEPTH2_N_MAX, what="n·2^(n-1) hidden gates"),
                   default=6, help=f"largest n for the exponential depth-2 circuit, 0..{DEPTH2_N_MAX} "
                                   f"(0: none); default 6")
    p.add_argument("--max-seconds", type=real_in_range(0), default=600.0,
                   help="refuse a run estimated to take longer; default 600")
    p.add_argument("--out", type=Path, default=Path("results/ip_demo"),
                   help="directory for ip_demo.json (checked before the run); default "
                        "results/ip_demo")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    return p


def _builds(n_max: int, depth2_n_max: int):
    import circuits
    for n in range(1, n_max + 1):
        yield "ip_depth3", n, circuits.ip_depth3
        if n <= depth2_n_max:
            yield "ip_depth2", n, circuits.ip_depth2


def _work(circ) -> int:
    """Cost model of one row's two exhaustive passes: points x (gates + wires above layer 1),
    the operations per point of the cube kernel (its low/high split makes layer-1 wires cheap)."""
    per_point = circ.n_gates + sum(layer.n_wires for layer in circ.layers[1:])
    return 2 * (1 << circ.n_inputs) * per_point


def estimate_seconds(n_max: int, depth2_n_max: int) -> float:
    """Estimated time of the whole table: a small instance timed, scaled by :func:`_work`."""
    import circuits
    n0 = min(n_max, 9)
    probe = circuits.ip_depth3(n0)
    circuits.count_ones(circuits.ip_depth3(2))              # compile outside the timing
    t = time.perf_counter()
    circuits.count_disagreements(probe, "ip", max_seconds=None)
    circuits.count_ones(probe, max_seconds=None)
    rate = _work(probe) / max(time.perf_counter() - t, 1e-6)
    return sum(_work(build(n)) for _, n, build in _builds(n_max, depth2_n_max)) / rate


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.depth2_n_max > args.n_max:
        args.depth2_n_max = args.n_max
    out = check_output_dir(parser, args.out)
    import circuits
    from circuits.utils.parallel import format_seconds

    guess = estimate_seconds(args.n_max, args.depth2_n_max)
    if guess > args.max_seconds:
        parser.error(f"--n-max {args.n_max} (and --depth2-n-max {args.depth2_n_max}) would take "
                     f"about {format_seconds(guess)} here, above --max-seconds "
                     f"{args.max_seconds:g}; lower --n-max or raise --max-seconds")

    header = (f"{'circuit':<10} {'n':>3} {'N':>3} {'depth':>5} {'size':>6} {'max|w|':>7} "
              f"{'points':>12} {'#IP=1':>10} {'errors':>7} {'seconds':>8}")
    print(header, flush=True)
    rows = []
    built = []
    ok = True
    progress = not args.no_progress
    for name, n, build in _builds(args.n_max, args.depth2_n_max):
        circ = build(n)
        t0 = time.perf_counter()
        res = circuits.count_disagreements(circ, "ip", progress=progress, max_seconds=None)
        ones = circuits.count_ones(circ, progress=progress, max_seconds=None)
        dt = time.perf_counter() - t0
        expect = circuits.InnerProductMod2(n).n_ones      # A006516(n)
        row_ok = res.count == 0 and ones == expect
        ok &= row_ok
        rows.append({"circuit": name, "n": n, "n_inputs": 2 * n, "depth": circ.depth,
                     "hidden_gates": circ.size, "gates_with_output": circ.n_gates,
                     "max_abs_weight": int(circ.max_abs_weight), "points": res.n_points,
                     "ip_ones": ones, "expected_ip_ones": expect, "errors": res.count,
                     "seconds": dt, "ok": row_ok,
                     "file": f"circuits/{name}_n{n}.json"})
        built.append(circ)
        print(f"{name:<10} {n:>3} {2 * n:>3} {circ.depth:>5} {circ.size:>6} "
              f"{circ.max_abs_weight:>7} {res.n_points:>12} {ones:>10} {res.count:>7} {dt:>8.3f}",
              flush=True)
    print("all circuits compute IP mod 2 on every input" if ok else "MISMATCH FOUND", flush=True)
    status = 0 if ok else EXIT_FAILED
    from circuits.utils.files import write_json_atomic
    record = {"format": FORMAT, "version": VERSION, "n_max": args.n_max,
              "depth2_n_max": args.depth2_n_max, "ok": bool(ok), "rows": rows}
    path = out / "ip_demo.json"

    def write():
        # each circuit as a circuit file (circuits.save_circuit), readable by load_circuit and
        # by `depthsep check|info|spectrum`; the summary names the file in each row
        from circuits.io import save_circuit
        (out / "circuits").mkdir(parents=True, exist_ok=True)
        for row, circ in zip(rows, built):
            save_circuit(circ, out / row["file"])
        write_json_atomic(path, record)

    if save_or_report(write, what="the JSON record and the circuit files", where=out):
        if _temporary(out):
            # `depthsep ip-demo --json` without --out: the directory goes at exit, so no path
            # is named; the record and every circuit file are in the JSON output ("files")
            print(f"ip_demo.json and {len(rows)} circuit files are in the JSON output only "
                  f"(no --out given: nothing is kept on disk; pass --out DIR to keep them)",
                  file=sys.stderr)
        else:
            print(f"wrote {path} and {len(rows)} circuit files in {out / 'circuits'}",
                  file=sys.stderr)
    else:
        status = status or EXIT_NOT_SAVED
    return status


def _temporary(out) -> bool:
    """Whether ``out`` is the temporary directory ``depthsep ip-demo --json`` makes when no
    ``--out`` is given (``depthsep-ip-demo-*`` in the temporary folder, removed at exit)."""
    import tempfile

    out = Path(out)
    return (out.name.startswith("depthsep-ip-demo-")
            and out.parent.resolve() == Path(tempfile.gettempdir()).resolve())


if __name__ == "__main__":
    raise SystemExit(main())
