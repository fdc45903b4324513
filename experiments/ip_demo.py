"""Demo: build IP_n circuits (depth 3 and depth 2), verify them on all 4^n inputs, print a table.

    python experiments/ip_demo.py --n-max 8          # or: depthsep ip-demo --n-max 8

"size" is the number of hidden gates (``circuit.size``); every circuit has one output gate more.
Writes DIR/ip_demo.json (atomically) with one row per circuit.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n-max", type=int, default=8, help="largest n (bits per party); default 8")
    parser.add_argument("--depth2-n-max", type=int, default=6,
                        help="largest n for the exponential depth-2 circuit; default 6")
    parser.add_argument("--out", default="results/ip_demo",
                        help="directory for ip_demo.json; default results/ip_demo")
    args = parser.parse_args(argv)
    import circuits
    from circuits.utils.files import write_json_atomic

    print(f"{'circuit':<10} {'n':>3} {'N':>3} {'depth':>5} {'size':>6} {'max|w|':>7} "
          f"{'points':>12} {'#IP=1':>10} {'errors':>7} {'seconds':>8}")
    ok = True
    rows = []
    for n in range(1, args.n_max + 1):
        builds = [("ip_depth3", circuits.ip_depth3)]
        if n <= args.depth2_n_max:
            builds.append(("ip_depth2", circuits.ip_depth2))
        for name, build in builds:
            circ = build(n)
            t0 = time.perf_counter()
            res = circuits.count_disagreements(circ, "ip")
            ones = circuits.count_ones(circ)
            dt = time.perf_counter() - t0
            expect = circuits.InnerProductMod2(n).n_ones
            ok &= res.count == 0 and ones == expect
            rows.append({"circuit": name, "n": n, "n_inputs": 2 * n, "depth": circ.depth,
                         "hidden_gates": circ.size, "gates_with_output": circ.n_gates,
                         "max_abs_weight": int(circ.max_abs_weight), "points": res.n_points,
                         "ip_ones": ones, "expected_ip_ones": expect, "errors": res.count,
                         "seconds": dt})
            print(f"{name:<10} {n:>3} {2 * n:>3} {circ.depth:>5} {circ.size:>6} {circ.max_abs_weight:>7} "
                  f"{res.n_points:>12} {ones:>10} {res.count:>7} {dt:>8.3f}")
    print("all circuits compute IP mod 2 on every input" if ok else "MISMATCH FOUND")
    path = write_json_atomic(Path(args.out) / "ip_demo.json",
                             {"format": "depthsep.ip_demo", "version": 1, "n_max": args.n_max,
                              "depth2_n_max": args.depth2_n_max, "ok": bool(ok), "rows": rows})
    print(f"wrote {path}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
