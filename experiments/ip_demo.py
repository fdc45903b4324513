"""Demo: build IP_n circuits (depth 3 and depth 2), verify them on all 4^n inputs, print a table.

    python experiments/ip_demo.py --n-max 8
"""

from __future__ import annotations

import argparse
import time


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n-max", type=int, default=8, help="largest n (bits per party); default 8")
    parser.add_argument("--depth2-n-max", type=int, default=6,
                        help="largest n for the exponential depth-2 circuit; default 6")
    args = parser.parse_args(argv)
    import circuits

    print(f"{'circuit':<10} {'n':>3} {'N':>3} {'depth':>5} {'size':>6} {'max|w|':>7} "
          f"{'points':>12} {'#IP=1':>10} {'errors':>7} {'seconds':>8}")
    ok = True
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
            ok &= res.count == 0 and ones == circuits.InnerProductMod2(n).n_ones
            print(f"{name:<10} {n:>3} {2 * n:>3} {circ.depth:>5} {circ.size:>6} {circ.max_abs_weight:>7} "
                  f"{res.n_points:>12} {ones:>10} {res.count:>7} {dt:>8.3f}")
    print("all circuits compute IP mod 2 on every input" if ok else "MISMATCH FOUND")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
