"""Records of the exact-synthesis frontier: each task runs (or collects) one result and writes it,
with its command, seconds and load, into one JSON record (atomic write).

    python -m experiments._synthesis_frontier constructions
    python -m experiments._synthesis_frontier slicing --n 5 --k 4 --time-limit 540
    python -m experiments._synthesis_frontier cubes-sat --function parity --n 6 --size 5 \
        --states a.json b.json --cp-sat docs/figures/par6_s5_cubes.json
    python -m experiments._synthesis_frontier witness --function ip --n 4 --circuit c.json
    python -m experiments._synthesis_frontier section-cover --k 4 --max-weight 5 --min-size 10 \
        --time-limit 600
    python -m experiments._synthesis_frontier import --from run.jsonl --how "the call" --key K

Every witness is re-verified on the whole cube before it is recorded; every refutation is
recorded with the solver that made it, and a cube split is compared cube by cube with the other
solver's state file (disagreements listed, never dropped).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

RECORD = Path("docs/figures/synthesis_frontier.json")
FORMAT = "depthsep.synthesis_frontier"


def _load() -> dict:
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")


def _function(name: str, n: int) -> np.ndarray:
    from circuits.functions import inner_product_mod2, parity

    return inner_product_mod2(n) if name == "ip" else parity(n)


def task_constructions(args) -> dict:
    """Gate counts of the IP_n depth-2 constructions, each verified on the whole cube."""
    from circuits import inner_product_mod2, ip_depth2, truth_table
    from circuits.ip_product import ip_depth2_product
    from circuits.ip_sections import ip_depth2_sections

    rows = []
    for n in range(2, args.max_n + 1):
        row = {"n": n, "amano_growth_1.682^n": round(1.682 ** n, 1)}
        f = inner_product_mod2(n)
        for name, build in [("ip_depth2 (n 2^(n-1))", lambda: ip_depth2(n)),
                            ("product, IP_1 block (2^n - 1)", lambda: ip_depth2_product(n, 1)),
                            ("product, IP_2 block (3 2^(n-2) - 1)", lambda: ip_depth2_product(n, 2)),
                            ("product, IP_3 block (5 2^(n-3) - 1)", lambda: ip_depth2_product(n, 3)),
                            ("sections (2 (8^(n/4) - 1) at n = 4q)", lambda: ip_depth2_sections(n))]:
            if "IP_3" in name and n < 3:
                continue
            c = build()
            ok = bool(np.array_equal(truth_table(c), f))
            if not ok:
                raise SystemExit(f"{name} at n = {n} is not IP_n: construction bug")
            row[name] = {"gates": c.size, "max_abs_weight": int(c.max_abs_weight), "verified": ok}
        rows.append(row)
    return {"rows": rows, "verified_on": "the whole cube {0,1}^(2n), circuits.truth_table"}


def task_slicing(args) -> dict:
    from circuits.analysis.synthesis.slicing import decide_slicing

    out = {}
    for solver in ("cp-sat", "sat"):
        r = decide_slicing(args.n, args.k, solver=solver, time_limit=args.time_limit)
        out[solver] = {k: r[k] for k in ("status", "solver", "wall_s", "weight_bound", "gates")}
    st = {r["status"] for r in out.values()}
    out["question"] = (f"{args.k} planes cut at least {args.n * 2 ** (args.n - 1) - 1} of the "
                       f"{args.n * 2 ** (args.n - 1)} edges of Q{args.n}")
    out["verdict"] = ("refuted by both solvers" if st == {"infeasible"} else
                      "THE SOLVERS DISAGREE" if st == {"infeasible", "feasible"} else
                      "feasible (witness re-counted)" if "feasible" in st else
                      "refuted by one solver only" if "infeasible" in st else "unknown")
    return out


def task_cubes_sat(args) -> dict:
    from circuits.analysis.synthesis.cubes import top_gate_cubes
    from circuits.analysis.synthesis.second_cubes import compare_cube_states
    from circuits.utils.files import read_json

    sat: dict = {}
    clash = []
    for p in args.states:          # a decided result wins over "unknown"; two decided ones must agree
        for i, r in read_json(p)["cubes"].items():
            old = sat.get(i)
            if old is None or old["status"] == "unknown":
                sat[i] = dict(r, state=str(p))
            elif r["status"] not in ("unknown", old["status"]):
                clash.append(int(i))
    total = len(top_gate_cubes(args.size))
    statuses = [sat.get(str(i), {}).get("status", "unknown") for i in range(total)]
    out = {"cubes": total, "sat_infeasible": statuses.count("infeasible"),
           "sat_feasible": statuses.count("feasible"),
           "sat_unknown": [i for i, s in enumerate(statuses) if s == "unknown"],
           "sat_seconds": round(sum(r["wall_s"] for r in sat.values()), 1),
           "sat_max_cube_s": max((r["wall_s"] for r in sat.values()), default=0.0),
           "sat_solver": next(iter(sat.values()))["solver"] if sat else None,
           "sat_states": [str(p) for p in args.states], "sat_self_clash": clash,
           "sat_decided_by_encoding": {k: sum(1 for r in sat.values() if r.get("function") == v
                                              and r["status"] != "unknown")
                             for k, v in (("plain", None), ("f's lex-leader", True))},
           "sat_decided_by_solver": {name: sum(1 for r in sat.values() if r["solver"] == name
                                               and r["status"] != "unknown")
                                     for name in sorted({r["solver"] for r in sat.values()})}}
    if args.cp_sat:
        cp = read_json(args.cp_sat)["cubes"]
        cmp_ = compare_cube_states(cp, sat)
        out.update(cp_sat_state=str(args.cp_sat),
                   cp_sat_seconds=round(sum(r["wall_s"] for r in cp.values()), 1),
                   agree=len(cmp_["agree"]), disagree=cmp_["disagree"], open=cmp_["open"])
    if out["sat_infeasible"] == total and not out.get("disagree") and not clash:
        out["verdict"] = (f"no circuit with {args.size} hidden gates: every cube refuted by the "
                          f"second solver" + (" and by CP-SAT" if args.cp_sat else ""))
    else:
        out["verdict"] = "not confirmed (open or disagreeing cubes listed)"
    return out


def task_witness(args) -> dict:
    from circuits.io import load_circuit
    from circuits.simulate import count_disagreements

    c = load_circuit(args.circuit)
    f = _function(args.function, args.n)
    bad = count_disagreements(c, f).count
    if bad:
        raise SystemExit(f"the circuit disagrees with {args.function}_{args.n} on {bad} points")
    return {"hidden_gates": c.size, "max_abs_weight": int(c.max_abs_weight),
            "verified": "all points of the cube", "circuit_file": str(args.circuit),
            "how": args.how}


def task_import(args) -> dict:
    """A result computed by a library call outside this script (one JSON object per line of
    ``--from``), recorded with the call that made it (``--how``)."""
    import json

    rows = [json.loads(line) for line in Path(args.source).read_text().splitlines()
            if line.strip().startswith("{")]
    return {"results": rows, "how": args.how}


def task_section_cover(args) -> dict:
    """The least cover of IP_k's ones by hyperplane sections (the blocks of ip_depth2_sections)."""
    from circuits.analysis.synthesis.sections import section_cover
    from circuits.ip_sections import IP_SECTION_BLOCKS

    r = section_cover(args.k, args.max_weight, min_size=args.min_size,
                      time_limit=args.time_limit)
    stored = len(IP_SECTION_BLOCKS.get(args.k, ()))
    r["stored_block_sections"] = stored
    r["verdict"] = (f"{r['count']} sections ({r['status']} among {r['candidates']} candidates); "
                    f"the stored block has {stored}")
    return r


TASKS = {"constructions": task_constructions, "slicing": task_slicing,
         "cubes-sat": task_cubes_sat, "witness": task_witness, "import": task_import,
         "section-cover": task_section_cover}


def main(argv=None) -> int:
    from circuits.utils.files import read_json, write_json_atomic

    p = argparse.ArgumentParser(prog="python -m experiments._synthesis_frontier",
                                description=__doc__, allow_abbrev=False,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("task", choices=sorted(TASKS))
    p.add_argument("--function", choices=("ip", "parity"), default="ip")
    p.add_argument("--n", type=int, default=4)
    p.add_argument("--k", type=int, default=4)
    p.add_argument("--size", type=int, default=5)
    p.add_argument("--max-n", type=int, default=8)
    p.add_argument("--max-weight", type=int, default=5)
    p.add_argument("--min-size", type=int, default=1)
    p.add_argument("--time-limit", type=float, default=60.0)
    p.add_argument("--states", type=Path, nargs="*", default=[])
    p.add_argument("--cp-sat", type=Path, default=None)
    p.add_argument("--circuit", type=Path, default=None)
    p.add_argument("--how", default="")
    p.add_argument("--from", dest="source", type=Path, default=None)
    p.add_argument("--key", default=None, help="record key (default: task name and sizes)")
    p.add_argument("--record", type=Path, default=RECORD)
    args = p.parse_args(argv)
    load0, t0 = _load(), time.perf_counter()
    res = TASKS[args.task](args)
    res.update(command="python -m experiments._synthesis_frontier " + " ".join(
        sys.argv[1:] if argv is None else argv), wall_s=round(time.perf_counter() - t0, 2),
        load_before=round(load0, 2), load_after=round(_load(), 2))
    key = args.key or (args.task if args.task == "constructions" else
                       f"section-cover:ip:{args.k}:{args.max_weight}"
                       if args.task == "section-cover" else
                       f"{args.task}:{args.function}:{args.n}:{args.k if args.task == 'slicing' else args.size}")
    rec = read_json(args.record) if args.record.exists() else {"format": FORMAT, "results": {}}
    rec["results"][key] = res
    write_json_atomic(args.record, rec)
    print(key, res.get("verdict", ""), f"({res['wall_s']} s, load {res['load_before']} -> "
          f"{res['load_after']})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
