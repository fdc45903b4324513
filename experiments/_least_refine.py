"""``depthsep least-circuit --catalogue NAME --refine``: rerun only the open rows of a published
catalogue with a larger budget and merge them into the record.

Reads ``least_catalogue_NAME.json`` in ``--out``; reruns the rows that are undecided or whose
lower bound rests on a CP-SAT refutation the second solver has not confirmed (or the rows named
by ``--only``), with :func:`~circuits.analysis.synthesis.refine.refine_row`; keeps every other
row bit for bit.  A refined row's ``lower`` is proved by both solvers (``lower_cp_sat`` is
CP-SAT's alone, ``refutations_confirmed`` says whether they meet), its ``refine`` entry holds
the command, the time limit and every decision with its seconds.  The record is written
atomically after each row (a killed run keeps the rows it finished; a rerun with the same
options skips them).  ``--cube-record`` takes a row's refutation from existing cube records
(validated on load by :func:`~circuits.analysis.synthesis.refine.cube_reference`).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from circuits.utils.errors import InvalidArgumentError


def _load(name: str, out: Path) -> "tuple[Path, dict]":
    from circuits.utils.files import read_json
    from experiments._least_catalogue import FORMAT

    path = out / f"least_catalogue_{name}.json"
    if not path.is_file():
        raise InvalidArgumentError(f"--refine needs the published record {path}; run "
                                   f"'depthsep least-circuit --catalogue {name}' first or pass "
                                   f"--out DIR holding least_catalogue_{name}.json")
    rec = read_json(path)
    if not isinstance(rec, dict) or rec.get("format") != FORMAT or rec.get("catalogue") != name:
        raise InvalidArgumentError(f"{path} is not a {name} catalogue record (format {FORMAT}); "
                                   f"pass --out DIR holding the record --catalogue {name} wrote")
    return path, rec


def _sat_files(parts) -> "list[Path]":
    files: "list[Path]" = []
    for p in map(Path, parts):
        files += sorted(p.glob("*.json")) if p.is_dir() else [p]
    return files


def parse_cube_records(specs, rows) -> "dict[str, dict]":
    """``CP_STATE,SAT_PATH[,SAT_PATH...]`` (a SAT_PATH may be a folder of state files) ->
    {row name: validated reference}; the row is the one whose table the records decide."""
    from circuits.analysis.synthesis.refine import cube_reference
    from circuits.utils.files import read_json

    refs = {}
    for spec in specs or ():
        parts = [x for x in spec.split(",") if x]
        if len(parts) < 2:
            raise InvalidArgumentError(f"--cube-record {spec!r}: expected CP_STATE,SAT_PATH[,...] "
                                       f"(the CP-SAT state file, then the second solver's state "
                                       f"files or a folder of them)")
        cp = Path(parts[0])
        if not cp.is_file():
            raise InvalidArgumentError(f"--cube-record: {cp} does not exist; pass the CP-SAT "
                                       f"state file of decide_by_cubes")
        table = str((read_json(cp).get("key") or {}).get("table"))
        match = [r for r in rows if r["table"] == table]
        if not match:
            raise InvalidArgumentError(f"--cube-record: {cp} decides a function that is no row of "
                                       f"this catalogue; pass records of one of its rows")
        refs[match[0]["name"]] = cube_reference([int(c) for c in table], cp,
                                                _sat_files(parts[1:]))
    return refs


def _chosen(rows, only, refs, direct=False, depth3=False) -> "list[str]":
    names = [r["name"] for r in rows]
    if only:
        bad = [x for x in only if x not in names]
        if bad:
            raise InvalidArgumentError(f"--only: {', '.join(bad)} is no row of this catalogue; "
                                       f"rows are named like {names[0]} (see the record)")
        return list(only)
    if direct:
        return [r["name"] for r in rows if _direct_open(r)]
    if depth3:
        return [r["name"] for r in rows if not (r.get("depth3") or {}).get("decided")]
    return [r["name"] for r in rows if r["size"] is None or r["name"] in refs
            or (r["lower"] > 1 and not r["refutations_confirmed"])]


def _options(time_limit, cubes, solver, push, witness_weights=(1,)) -> dict:
    return {"time_limit": float(time_limit), "cubes": bool(cubes),
            "sat_solver": solver or "cadical195", "push": bool(push),
            "witness_weights": [int(w) for w in witness_weights]}


def _refined_row(row, res, *, opts, command, ref, seconds, workers) -> dict:
    import numpy as np

    from circuits.analysis.synthesis.catalogue import _least_weight
    from experiments._least_catalogue import _upper

    new = dict(row)
    circ = res["circuit"]
    new["lower"], new["size"] = res["lower"], res["size"]
    new["lower_cp_sat"] = res["lower_cp_sat"]
    new["refutations_confirmed"] = res["lower_cp_sat"] == res["lower"]
    new["disagreements"] = sorted(set(row["disagreements"]) | set(res["disagreements"]))
    if circ is not None:
        new["upper"] = res["upper"]
        new["witness"] = [{"weights": layer.weights.tolist(),
                           "thresholds": layer.thresholds.tolist()} for layer in circ.layers]
    if new["size"] is not None and row["weight"] is None:
        if circ is not None and new["size"] == res["upper"]:
            t = np.array([int(c) for c in row["table"]], dtype=np.uint8)
            new["weight"] = _least_weight(t, new["size"], opts["time_limit"], workers,
                                          cap=max(1, int(circ.max_abs_weight)))
        elif new["size"] == _upper(row) == row.get("construction"):
            # the construction's weights are in {-1, 0, 1}, and no gate has W < 1
            new["weight"] = {"least_weight": 1, "decided": True, "circuit_max_weight": 1,
                             "from": "construction"}
    new["refine"] = _history(row) + [{**opts, "command": command, "seconds": round(seconds, 2),
                                      "steps": res["steps"], "cube_record": ref is not None}]
    return new


def _history(row) -> list:
    """The row's earlier refine runs, oldest first (each with its command and steps)."""
    prev = row.get("refine")
    return list(prev) if isinstance(prev, list) else ([prev] if prev else [])


def _direct_open(r) -> bool:
    d = r.get("direct") or {}
    return bool(d) and (d.get("size") is None
                        or (d.get("lower", 1) > 1 and not d.get("refutations_confirmed")))


def _refine_direct(rows, chosen, opts, *, command, workers, save, progress) -> list:
    """The direct-wire column of the chosen rows (all open ones by default), decided again from
    s = 1 with every refutation checked by the second solver; returns the rows refined."""
    import numpy as np

    from circuits.analysis.synthesis.catalogue import direct_row

    done = []
    for i, r in enumerate(rows):
        d = r.get("direct")
        if r["name"] not in chosen or not d:
            continue
        hist = d.get("refine") or []
        if hist and all(hist[-1].get(k) == v for k, v in opts.items()) and not opts["only"]:
            continue                          # refined with these options by a killed run
        t = np.array([int(c) for c in r["table"]], dtype=np.uint8)
        top = d["upper"] or r.get("construction") or 8
        if progress:
            print(f"refine {r['name']} (direct wires): [{d['lower']}, {d['upper']}]",
                  file=sys.stderr, flush=True)
        t0 = time.perf_counter()
        new = direct_row(t, max_size=top, time_limit=opts["time_limit"], num_workers=workers)
        new["refine"] = hist + [{**opts, "command": command,
                                 "seconds": round(time.perf_counter() - t0, 2)}]
        rows[i] = {**r, "direct": new}
        done.append(r["name"])
        save()
        size = new["size"] if new["size"] is not None else f"{new['lower']}..{new['upper']}"
        print(f"  {r['name']:<16} with direct wires {size!s:>5}   (refutations confirmed: "
              f"{new['refutations_confirmed']}; {time.perf_counter() - t0:.1f} s)", flush=True)
    return done


def _refine_depth3(rows, chosen, opts, *, command, workers, save, progress) -> list:
    """The THR o THR o THR columns (least first layer, second layer, total; CP-SAT) of the
    chosen rows (default: every settled row without them)."""
    import numpy as np

    from circuits.analysis.synthesis.catalogue import _depth3_row

    done = []
    for i, r in enumerate(rows):
        if r["name"] not in chosen or r["size"] is None:
            continue
        old = r.get("depth3") or {}
        if old.get("decided") and not opts["only"]:
            continue
        if old and (old.get("refine") or {}).get("time_limit") == opts["time_limit"] \
                and not opts["only"]:
            continue                          # tried with this budget by a killed run
        t = np.array([int(c) for c in r["table"]], dtype=np.uint8)
        if progress:
            print(f"refine {r['name']} (depth 3, depth-2 size {r['size']})", file=sys.stderr,
                  flush=True)
        t0 = time.perf_counter()
        d3 = _depth3_row(t, r["size"], opts["time_limit"], workers)
        d3["refine"] = {**opts, "command": command,
                        "seconds": round(time.perf_counter() - t0, 2)}
        rows[i] = {**r, "depth3": d3}
        done.append(r["name"])
        save()
        print(f"  {r['name']:<16} THR∘THR∘THR first layer {d3['first']}, total {d3['total']} "
              f"({'decided' if d3['decided'] else 'undecided'}; "
              f"{time.perf_counter() - t0:.1f} s)", flush=True)
    return done


def _summary(rec: dict) -> None:
    rows = rec["rows"]
    from experiments._least_catalogue import _upper

    sizes: "dict[str, int]" = {}
    for r in rows:
        key = str(r["size"]) if r["size"] is not None else f"[{r['lower']},{_upper(r) or '?'}]"
        sizes[key] = sizes.get(key, 0) + 1
    rec["size_counts"] = sizes
    rec["undecided"] = [r["name"] for r in rows if r["size"] is None]
    rec["disagreements"] = [r["name"] for r in rows if r["disagreements"]]
    rec["unconfirmed"] = [r["name"] for r in rows if r.get("lower_cp_sat", r["lower"]) > 1
                          and not r["refutations_confirmed"]]
    if any(r.get("depth3") for r in rows):
        from experiments._least_catalogue import _depth3_summary

        rec["depth3"] = _depth3_summary(rows)
    if any(r.get("direct") for r in rows):
        rec["direct_undecided"] = [r["name"] for r in rows
                                   if r.get("direct") and r["direct"]["size"] is None]
        rec["direct_unconfirmed"] = [r["name"] for r in rows if r.get("direct")
                                     and r["direct"].get("lower", 1) > 1
                                     and not r["direct"].get("refutations_confirmed")]


def run_refine(name: str, out: Path, *, time_limit: float, workers: int, only=None,
               cubes: bool = False, processes: int = 1, solver: "str | None" = None,
               cube_records=None, push: bool = True, direct: bool = False,
               depth3: bool = False,
               witness_weights=(1,), progress: bool = True, command: str = "") -> int:
    """Refine the open rows of ``out/least_catalogue_NAME.json``; the exit status."""
    from circuits.analysis.synthesis.refine import refine_row
    from circuits.utils.cli import EXIT_NOT_SAVED, save_or_report
    from circuits.utils.files import write_json_atomic
    from experiments._least_catalogue import _figure, _upper

    path, rec = _load(name, out)
    rows = rec["rows"]
    refs = parse_cube_records(cube_records, rows)
    chosen = _chosen(rows, only, refs, direct, depth3)
    opts = _options(time_limit, cubes, solver, push, witness_weights)
    rec.setdefault("base", {"command": f"depthsep least-circuit --catalogue {name} "
                                       f"--time-limit {rec['time_limit']:g} --workers 1",
                            "time_limit": rec["time_limit"], "seconds": rec.get("seconds")})
    state_dir = out / f"least_catalogue_{name}_cubes"
    t_run, load0 = time.perf_counter(), os.getloadavg()[0]
    done: "list[str]" = []

    def save():
        _summary(rec)
        write_json_atomic(path, rec)          # a killed run keeps the rows it finished
    if direct:
        opts = {"column": "direct", "time_limit": float(time_limit), "only": bool(only)}
        done = _refine_direct(rows, chosen, opts, command=command, workers=workers, save=save,
                              progress=progress)
    if depth3:
        opts = {"column": "depth3", "time_limit": float(time_limit), "only": bool(only)}
        done = _refine_depth3(rows, chosen, opts, command=command, workers=workers, save=save,
                              progress=progress)
    for i, r in enumerate(rows if not (direct or depth3) else ()):
        if r["name"] not in chosen:
            continue
        prev = (_history(r) or [{}])[-1]
        if all(prev.get(k) == v for k, v in opts.items()) and r["name"] not in refs \
                and not only:
            continue                          # refined with these options by a killed run
        if progress:
            print(f"refine {r['name']}: [{r.get('lower_cp_sat', r['lower'])}, {_upper(r)}]"
                  f"{'' if r['refutations_confirmed'] else ', lower bound unconfirmed'}",
                  file=sys.stderr, flush=True)
        t0 = time.perf_counter()
        # a refined row's lower is both solvers'; CP-SAT's own bound is lower_cp_sat
        res = refine_row([int(c) for c in r["table"]], lower=r.get("lower_cp_sat", r["lower"]),
                         upper=_upper(r), lower_confirmed=bool(r["refutations_confirmed"]),
                         floor=r["lower"] if "lower_cp_sat" in r else 1,
                         time_limit=time_limit, num_workers=workers, cubes=cubes,
                         processes=processes, state_dir=state_dir if cubes else None,
                         solver=solver, reference=refs.get(r["name"]), push=push,
                         witness_weights=witness_weights, progress=progress)
        rows[i] = _refined_row(r, res, opts=opts, command=command, ref=refs.get(r["name"]),
                               seconds=time.perf_counter() - t0, workers=workers)
        done.append(r["name"])
        save()
        size = rows[i]["size"] if rows[i]["size"] is not None else \
            f"{rows[i]['lower']}..{_upper(rows[i])}"
        print(f"  {r['name']:<16} least size {size!s:>6}   (both solvers; CP-SAT alone: "
              f">= {rows[i]['lower_cp_sat']}; {time.perf_counter() - t0:.1f} s)", flush=True)
    _summary(rec)
    wall = time.perf_counter() - t_run
    rec.setdefault("refinements", []).append(
        {"command": command, **opts, "rows": done, "seconds": round(wall, 2),
         "load": [round(load0, 2), round(os.getloadavg()[0], 2)]})
    print(f"{name}: refined {len(done)} rows in {wall:.1f} s; classes per least hidden size: "
          + ", ".join(f"{k}: {v}" for k, v in sorted(rec["size_counts"].items())))
    print(f"  undecided: {len(rec['undecided'])}; lower bounds not confirmed by the second "
          f"solver: {len(rec['unconfirmed'])}; solver disagreements: {len(rec['disagreements'])}")
    if depth3 and rec.get("depth3"):
        d = rec["depth3"]
        print(f"  THR∘THR∘THR (CP-SAT): classes per least first layer {d['first']}; per least "
              f"total {d['total']}; undecided {len(d['undecided'])}")
    if "direct_undecided" in rec:
        print(f"  with direct wires: undecided {len(rec['direct_undecided'])}, lower bounds not "
              f"confirmed by the second solver {len(rec['direct_unconfirmed'])}")
    status = 0
    if not save_or_report(lambda: write_json_atomic(path, rec), what="the JSON record",
                          where=path):
        status = EXIT_NOT_SAVED
    ppath = out / f"least_catalogue_{name}.png"
    if not save_or_report(lambda: _figure(rows, name, ppath), what="the figure", where=ppath):
        status = EXIT_NOT_SAVED
    return status
