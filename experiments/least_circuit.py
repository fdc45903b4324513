"""``depthsep least-circuit``: the least layered THR o THR circuit of a small function, proved.

Decides s = lower, lower + 1, ... with OR-Tools CP-SAT (:func:`circuits.analysis.least_depth2`),
prints one line per decision (solver, status, seconds, weight bounds), the witness (re-verified
on the whole cube) and whether the answer holds over all integer weights or only within
``--max-weight``.  A per-decision ``--time-limit`` turns undecided sizes into an honest
"unknown between a and b".

Examples::

    depthsep least-circuit --function ip --n 3
    depthsep least-circuit --function parity --n 5 --time-limit 60
    depthsep least-circuit --function table --table f.npy --max-weight 1
    depthsep least-circuit --function parity --n 6 --cubes --processes 2 --state cubes.json
    depthsep least-circuit --function ip --n 4 --lower 4 --max-size 4 --cubes --restrict 2
    depthsep least-circuit --catalogue npn4 --time-limit 20
    depthsep least-circuit --catalogue sym6 --refine --time-limit 120 --out docs/figures
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

if __package__ in (None, ""):                      # `python experiments/least_circuit.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from circuits.utils.cli import (EXIT_FAILED, EXIT_NOT_SAVED, check_output_dir, int_in_range,
                                real_in_range, save_or_report)

FORMAT = "depthsep.least_circuit"
VERSION = 1
FUNCTIONS = ("ip", "parity", "majority", "random", "random-threshold", "table")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(allow_abbrev=False, prog="depthsep least-circuit", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--function", choices=FUNCTIONS, default="ip",
                   help="target: ip (N = 2n), parity / majority / random / random-threshold "
                        "(N = n), or table (--table FILE); default ip")
    p.add_argument("--n", type=int_in_range(1, 8, what="inputs (N = 2n <= 8 for ip)"), default=2,
                   help="bits per party for ip, inputs N otherwise; default 2")
    p.add_argument("--table", type=Path, default=None,
                   help="truth-table file for --function table: .npy, .json list or text of 0/1 "
                        "(0110 or 0 1 1 0), length 2^N in cube order")
    p.add_argument("--seed", type=int, default=0, help="seed of the random functions; default 0")
    p.add_argument("--lower", type=int_in_range(1, 64), default=1,
                   help="proved lower bound to start from; default 1")
    p.add_argument("--max-size", type=int_in_range(1, 64), default=10,
                   help="largest number of hidden gates to try; default 10")
    p.add_argument("--max-weight", type=int_in_range(1, 10**6), default=None,
                   help="cap every |weight| (small-weight circuits; the answer is then 'within "
                        "|w| <= W' unless W covers the complete bounds)")
    p.add_argument("--direct", action="store_true", help="allow input-to-top wires")
    p.add_argument("--no-symmetry", action="store_true",
                   help="switch symmetry breaking off (to measure what it saves)")
    p.add_argument("--symmetry", default=None,
                   help="comma list of symmetry breakings from complement, order, function "
                        "(f's own group), or 'all'; default complement,order (measured fastest)")
    p.add_argument("--time-limit", type=real_in_range(0), default=60.0,
                   help="seconds per decision; default 60")
    p.add_argument("--workers", type=int_in_range(1, 64), default=2,
                   help="CP-SAT threads; default 2")
    p.add_argument("--out", type=Path, default=Path("results/least_circuit"),
                   help="directory for least_circuit.json; default results/least_circuit")
    p.add_argument("--depth3", default=None, metavar="S1,S2",
                   help="instead of the least depth-2 size, decide THR∘THR∘THR with hidden layers "
                        "of S1 and S2 gates (decide_depth3)")
    p.add_argument("--cubes", action="store_true",
                   help="decide each size <= 6 by the cube split (one CP-SAT task per class of "
                        "top gate); --time-limit is then per cube")
    p.add_argument("--processes", type=int_in_range(1, 256), default=1,
                   help="local processes for the cubes (with --cubes); default 1")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="run the cubes as tasks on this Dask scheduler (tcp://host:8786)")
    p.add_argument("--state", type=Path, default=None,
                   help="resume file for the cubes (with --cubes): finished cubes are recorded "
                        "and skipped by a rerun; '{s}' in the name becomes the size")
    p.add_argument("--restrict", type=int_in_range(0, 7), default=0, metavar="K",
                   help="with --cubes: before each cube's own model, try f's restrictions fixing "
                        "up to K inputs (one per orbit under f's symmetries, fewest inputs "
                        "first); fixing inputs keeps the top gate, so a restriction without a "
                        "circuit refutes the cube; default 0 (none)")
    p.add_argument("--restrict-only", action="store_true",
                   help="with --restrict: leave a cube unknown when no restriction refutes it "
                        "(skip its own model, e.g. after an earlier run spent its time there)")
    p.add_argument("--confirm-time", type=real_in_range(0), default=None,
                   help="seconds the second solver (python-sat) gets to confirm each refutation; "
                        "default --time-limit")
    p.add_argument("--no-confirm", action="store_true",
                   help="do not confirm refutations with the second solver")
    p.add_argument("--catalogue", choices=("npn4", "sym5", "sym6"), default=None,
                   help="instead of one function: every NPN class of 4-input functions (npn4) or "
                        "the symmetric functions of 5 / 6 inputs; writes least_catalogue_NAME.json "
                        "and .png")
    p.add_argument("--refine", action="store_true",
                   help="with --catalogue: read least_catalogue_NAME.json in --out and rerun only "
                        "its undecided rows and those whose lower bound the second solver has not "
                        "confirmed (or the --only rows) with this --time-limit (per cube with "
                        "--cubes); settled rows are kept as they are")
    p.add_argument("--only", default=None, metavar="NAME,...",
                   help="with --refine: rerun exactly these rows (names as in the record)")
    p.add_argument("--cube-record", action="append", default=None, metavar="CP,SAT[,SAT...]",
                   help="with --refine: take a row's refutation from cube records (the CP-SAT "
                        "state file, then the second solver's state files or a folder of them), "
                        "validated on load; repeatable")
    p.add_argument("--confirm-only", action="store_true",
                   help="with --refine: only confirm each row's lower bound with the second "
                        "solver (no search for smaller circuits or higher bounds)")
    p.add_argument("--witness-weights", default="1", metavar="W,...",
                   help="with --refine: before each complete decision, look for a circuit with "
                        "every |weight| <= W for each W (only a found circuit counts); '' for "
                        "none; default 1")
    p.add_argument("--refine-depth3", action="store_true",
                   help="with --refine: add or refine the THR∘THR∘THR columns (least first layer, "
                        "second layer, total; CP-SAT alone) of the settled rows")
    p.add_argument("--refine-direct", action="store_true",
                   help="with --refine: refine the column with input-to-top wires instead (its "
                        "undecided rows and those whose refutations the second solver has not "
                        "checked, decided again with every refutation checked)")
    p.add_argument("--sat-solver", default=None, metavar="NAME",
                   help="with --refine --cubes: the python-sat solver of the second solver's cube "
                        "split (default cadical195; e.g. kissat404)")
    p.add_argument("--no-progress", action="store_true", help="no progress lines")
    return p


def _save(record: dict, out: Path, status: int) -> int:
    """Write least_circuit.json atomically; the exit status (EXIT_NOT_SAVED if it failed)."""
    from circuits.utils.files import write_json_atomic

    path = out / "least_circuit.json"
    if save_or_report(lambda: write_json_atomic(path, record), what="the JSON record",
                      where=path):
        print(f"wrote {path}", file=sys.stderr)
        return status
    return status or EXIT_NOT_SAVED


def _depth3(parser, args, f, name, out) -> int:
    from circuits.analysis.exact_synthesis import decide_depth3

    try:
        sizes = tuple(int(x) for x in args.depth3.split(","))
    except ValueError:
        sizes = ()
    if len(sizes) != 2 or min(sizes) < 1:
        parser.error(f"--depth3 {args.depth3!r}: expected two positive sizes S1,S2 (e.g. 3,2)")
    claim, circ = decide_depth3(f, sizes, max_weight=args.max_weight,
                                symmetry=not args.no_symmetry, time_limit=args.time_limit,
                                num_workers=args.workers)
    print(f"{name} (N = {int(f.size).bit_length() - 1}), THR∘THR∘THR with hidden layers "
          f"{sizes[0]}, {sizes[1]}: {claim.status} ({claim.solver} {claim.version}, "
          f"{claim.wall_s:.2f} s, {'complete bounds' if claim.complete else 'bounded search'})")
    record = {"format": FORMAT, "version": VERSION, "function": name,
              "table": [int(v) for v in f], "depth": 3, "sizes": list(sizes),
              "claim": claim.as_dict()}
    if circ is not None:
        layers = [{"weights": layer.weights.tolist(), "thresholds": layer.thresholds.tolist()}
                  for layer in circ.layers]
        record["witness"] = layers
        print(f"  witness (re-verified on all {f.size} points):")
        for i, layer in enumerate(layers, 1):
            print(f"    layer {i}: W = {layer['weights']}, t = {layer['thresholds']}")
    return _save(record, out, 0 if claim.status != "unknown" else EXIT_FAILED)


def _cube_options(args) -> "dict | None":
    if not args.cubes:
        return None
    state = None if args.state is None else str(args.state)
    if state is not None and "{s}" not in state:
        state = str(args.state.with_name(args.state.stem + "_s{s}" + args.state.suffix))
    return {"processes": args.processes, "client": args.scheduler, "state": state,
            "progress": not args.no_progress, "restrict": args.restrict,
            "whole": not args.restrict_only}


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    out = check_output_dir(parser, args.out)
    if (args.only or args.cube_record or args.sat_solver or args.confirm_only
            or args.refine_direct or args.refine_depth3) and not args.refine:
        parser.error("--only, --cube-record, --sat-solver, --confirm-only, --refine-direct and "
                     "--refine-depth3 need --refine")
    if (args.restrict or args.restrict_only) and not args.cubes:
        parser.error("--restrict and --restrict-only work on the cube split: add --cubes")
    if args.restrict_only and not args.restrict:
        parser.error("--restrict-only needs --restrict K (K >= 1)")
    if args.refine_direct and args.refine_depth3:
        parser.error("--refine-direct and --refine-depth3 refine one column each: pass one")
    if args.refine:
        return _refine(parser, args, out, argv)
    if args.catalogue is not None:
        from experiments._least_catalogue import run_catalogue

        return run_catalogue(args.catalogue, out, time_limit=args.time_limit,
                             workers=args.workers, progress=not args.no_progress)
    from circuits.analysis import least_depth2
    from circuits.analysis.exact_synthesis import target_table

    f, name = target_table(args.function, args.n, seed=args.seed, table=args.table)
    if args.depth3 is not None:
        return _depth3(parser, args, f, name, out)
    sym = not args.no_symmetry
    if sym and args.symmetry is not None:
        from circuits.analysis.exact_synthesis import SYMMETRIES
        sym = "all" if args.symmetry == "all" else [x for x in args.symmetry.split(",") if x]
        if sym != "all" and any(x not in SYMMETRIES for x in sym):
            parser.error(f"--symmetry {args.symmetry!r}: expected 'all' or a comma list of "
                         f"{', '.join(SYMMETRIES)}")
    r = least_depth2(f, lower=args.lower, max_size=max(args.max_size, args.lower),
                     max_weight=args.max_weight, direct=args.direct,
                     symmetry=sym, time_limit=args.time_limit,
                     num_workers=args.workers, progress=not args.no_progress,
                     confirm=False if args.no_confirm else (args.confirm_time or True),
                     cubes=_cube_options(args))
    print(f"{name} (N = {r.n_inputs}): {r.summary()}")
    for c in r.claims:
        xc = ", confirmed by the enumerator" if c.cross_checked else ""
        if c.second is not None:
            xc += (f"; {c.second['solver']} {c.second['verdict']} ({c.second['status']}, "
                   f"{c.second['wall_s']:.2f} s)")
        print(f"  s = {c.size}: {c.status:<10} {c.solver} {c.version}, {c.wall_s:.2f} s, "
              f"|w_hidden| <= {c.hidden_weight}, "
              f"{'top gate fixed per cube' if c.top_weight == 0 else f'|w_top| <= {c.top_weight}'}"
              f"{'' if c.complete else ' (bounded search)'}{xc}")
    kept = []                   # restricted cubes use the bound of the inputs they keep
    if args.cubes and args.restrict:
        from circuits.analysis.synthesis.restrict import restrictions

        kept = [x["inputs"] for x in restrictions(f, args.restrict)]
    bounds = _weight_bounds(r.n_inputs, [c.size for c in r.claims] + kept)
    print("  complete weight bounds used (per fan-in): " + "; ".join(
        f"{b['fan_in']} inputs: |w| <= {b['bound']} "
        f"({'proven here' if b['proven_here'] else 'published'})" for b in bounds))
    if r.circuit is not None:
        d = r.as_dict()["witness"]
        print(f"  witness (re-verified on all {1 << r.n_inputs} points): hidden W = "
              f"{d['hidden_weights']}, t = {d['hidden_thresholds']}; top v = {d['top_weights']}, "
              f"T = {d['top_threshold']}")
    record = {"format": FORMAT, "version": VERSION, "function": name,
              "table": [int(v) for v in f], **r.as_dict(), "weight_bounds": bounds}
    return _save(record, out, 0 if r.circuit is not None else EXIT_FAILED)


def _weights(parser, text: str) -> "tuple[int, ...]":
    try:
        ws = tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        ws = (0,)
    if any(w < 1 for w in ws):
        parser.error(f"--witness-weights {text!r}: expected a comma list of positive integers "
                     f"(e.g. 1,2) or '' for none")
    return ws


def _refine(parser, args, out, argv) -> int:
    import shlex

    from circuits.utils.errors import DepthsepError
    from experiments._least_refine import run_refine

    if args.catalogue is None:
        parser.error("--refine needs --catalogue NAME (the catalogue whose record to refine)")
    argv = sys.argv[1:] if argv is None else list(argv)
    command = "depthsep least-circuit " + " ".join(shlex.quote(a) for a in argv)
    only = [x for x in args.only.split(",") if x] if args.only else None
    try:
        return run_refine(args.catalogue, out, time_limit=args.time_limit, workers=args.workers,
                          only=only, cubes=args.cubes, processes=args.processes,
                          solver=args.sat_solver, cube_records=args.cube_record,
                          push=not args.confirm_only, direct=args.refine_direct,
                          depth3=args.refine_depth3,
                          witness_weights=_weights(parser, args.witness_weights),
                          progress=not args.no_progress,
                          command=command)
    except DepthsepError as exc:
        parser.error(str(exc))            # exits (status 2)
        raise                             # unreachable: parser.error does not return


def _weight_bounds(n_inputs: int, sizes) -> list:
    """The complete per-gate weight bound of every fan-in a decision used (hidden gates: N, or
    the inputs a restriction keeps; top gate: s), each marked proven here or published."""
    from circuits.analysis.synthesis.weights import MAX_TOTAL_WEIGHT, weight_bound_record

    fan_ins = sorted({n_inputs} | {s for s in sizes if s < len(MAX_TOTAL_WEIGHT)})
    return [weight_bound_record(k) for k in fan_ins if k >= 1]


if __name__ == "__main__":
    raise SystemExit(main())
