"""Constructions / Legendre benchmarks.

* L-all   ``networks.legendre.legendre_polynomials(n_max, d, t)`` (three-term recurrence, all
          degrees 0..n_max at once) at 10^4 points in [-1, 1].  Baseline ``scipy``: the
          normalised Gegenbauer polynomial, ``eval_gegenbauer(n, a, t) / eval_gegenbauer(n, a, 1)``
          for each n (what THEORY §3.7 checks against).  Both must agree to 1e-10.
* L-tail  ``networks.legendre.daniely_tail_norm(d)`` (E13, Gauss-Jacobi, convergence check on)
          at d = 8 and 10; no baseline (reported as absolute time only, not a claim).

Usage::

    python benchmarks/bench_constructions.py            # default sizes (well under a minute)
    python benchmarks/bench_constructions.py --quick    # smaller sizes, smoke test

Results: ``benchmarks/results_constructions.json`` (written atomically); the figures are copied
into ``benchmarks/results_constructions.md``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from benchmarks import _common  # noqa: E402
from circuits.utils.files import write_json_atomic  # noqa: E402
from networks import legendre as lg  # noqa: E402


def scipy_all_degrees(n_max: int, d: int, t: np.ndarray) -> np.ndarray:
    from scipy.special import eval_gegenbauer
    a = (d - 2) / 2
    return np.stack([eval_gegenbauer(n, a, t) / eval_gegenbauer(n, a, 1.0)
                     for n in range(n_max + 1)])


def bench_all_degrees(n_max: int, d: int, n_points: int, repeats: int) -> dict:
    t = np.linspace(-1.0, 1.0, n_points)
    ref = scipy_all_degrees(n_max, d, t)

    def check(name, res):
        diff = float(np.max(np.abs(res - ref)))
        if diff > 1e-10:
            raise AssertionError(f"{name} disagrees with scipy by {diff}")

    timings = _common.interleaved({
        "recurrence": lambda: lg.legendre_polynomials(n_max, d, t),
        "scipy": lambda: scipy_all_degrees(n_max, d, t),
    }, repeats=repeats, check=check)
    rec, sci = timings["recurrence"], timings["scipy"]
    return {"workload": "L-all", "n_max": n_max, "d": d, "n_points": n_points,
            "recurrence": rec.to_dict() | {"result": None},
            "scipy": sci.to_dict() | {"result": None},
            "ratio_scipy_over_recurrence": sci.median / rec.median,
            "summary": f"recurrence {rec.summary(1e3, 'ms')} vs scipy {sci.summary(1e3, 'ms')}: "
                       f"{sci.median / rec.median:.1f}x"}


def bench_tail(d: int, repeats: int) -> dict:
    timings = _common.interleaved({"daniely_tail_norm": lambda: lg.daniely_tail_norm(d, squared=True)},
                                  repeats=repeats)
    t = timings["daniely_tail_norm"]
    return {"workload": "L-tail", "d": d, "nodes": lg.daniely_tail_nodes(d), "value": t.result,
            "timing": t.to_dict(), "summary": f"d = {d}: {t.summary(1e3, 'ms')}, "
                                               f"||P F||^2 = {t.result:.5f}"}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes (smoke test)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", default=str(HERE / "results_constructions.json"))
    args = parser.parse_args(argv)
    cases = [(40, 5, 10_000), (200, 20, 10_000)] if not args.quick else [(40, 5, 2_000)]
    results = {"machine": _common.machine_info(), "runs": []}
    for n_max, d, n_points in cases:
        r = bench_all_degrees(n_max, d, n_points, args.repeats)
        print(f"L-all n_max={n_max} d={d} points={n_points}: {r['summary']}")
        results["runs"].append(r)
    for d in ([8, 10] if not args.quick else [5]):
        r = bench_tail(d, max(3, args.repeats // 2 + 1))
        print(f"L-tail {r['summary']}")
        results["runs"].append(r)
    write_json_atomic(args.out, results)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
