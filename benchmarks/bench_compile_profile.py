"""Where the CPU time of a first counting call on a new machine goes: numba compile per function.

Runs in this process with fresh (empty) ``NUMBA_CACHE_DIR`` and ``DEPTHSEP_CACHE_DIR``, wraps
numba's ``Dispatcher.compile`` to time every compile (CPU seconds, ``time.process_time``;
*exclusive* = without the compiles it triggered of other functions, *inclusive* = with them),
then times one ``count_ones`` on the W1-style circuit of ``bench_cold_first_call.py`` (2^14
points) with the kernel forced.  One process per run: compare kernels by running it twice.

Usage::

    python benchmarks/bench_compile_profile.py --kernel generic
    python benchmarks/bench_compile_profile.py --kernel bitsliced --top 12
"""

from __future__ import annotations

import argparse
import atexit
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv=None) -> int:
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kernel", default="generic")
    p.add_argument("--top", type=int, default=20, help="functions listed (by exclusive time)")
    args = p.parse_args(argv)
    # before numba or the library is imported: both read these when their kernels are defined
    tmp = tempfile.mkdtemp(prefix="depthsep-profile-")
    atexit.register(shutil.rmtree, tmp, ignore_errors=True)
    os.environ["NUMBA_CACHE_DIR"] = os.path.join(tmp, "numba")
    os.environ["DEPTHSEP_CACHE_DIR"] = os.path.join(tmp, "depthsep")
    sys.path.insert(0, str(HERE.parent))
    import numba.core.dispatcher as dispatcher

    stack: list = []
    rec: dict = {}
    orig = dispatcher.Dispatcher.compile

    def compile_timed(self, sig):
        name = f"{self.py_func.__module__}.{self.py_func.__qualname__}"
        t0 = time.process_time()
        stack.append(0.0)
        try:
            return orig(self, sig)
        finally:
            child = stack.pop()
            dt = time.process_time() - t0
            r = rec.setdefault(name, [0.0, 0.0])
            r[0] += dt
            r[1] += dt - child
            if stack:
                stack[-1] += dt

    dispatcher.Dispatcher.compile = compile_timed
    import circuits as c
    from benchmarks.bench_circuits import w1_circuit
    circ = w1_circuit(14, 64, seed=1)
    rec.clear()
    t = time.process_time()
    count = c.count_ones(circ, kernel=args.kernel)
    total = time.process_time() - t
    print(f"kernel={args.kernel}: first count_ones {total:.2f} s CPU (count {count}); "
          f"numba compiles, CPU seconds:")
    print("| function | exclusive | inclusive |\n|---|---|---|")
    for name, (inc, exc) in sorted(rec.items(), key=lambda kv: -kv[1][1])[:args.top]:
        print(f"| {name} | {exc:.2f} | {inc:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
