"""Embeddings benchmarks: certified minimum distance, the code search, and f_d evaluation.

* E-cert   ``embeddings.certified_min_distance`` (numba Gray-code walk, parallel over blocks of
           the Gray sequence) on the generator found for n = 20, m = 80 (2^20 codewords, two
           64-bit words each) and n = 24, m = 96.  Baseline ``numpy``: build every codeword by
           doubling (``C[2^i:2^(i+1)] = C[:2^i] ^ row_i`` on uint64 words), ``np.bitwise_count``,
           minimum over the non-zero ones.  Both must report the same d_C.
* E-search ``embeddings.CodeEmbedding(20, 80, seed=0, tries=200)`` (the whole seeded search,
           certification included).  Baseline: the same 200 draws certified one by one with the
           numpy routine above (no early abandoning).  Both must pick the same d_C.
* E-fd     ``HardInstance.target`` on 2,000 points (half near the support, half uniform in the
           ball) at n = 8 (d = 64) and n = 10 (d = 80).  Baseline ``numpy``: the matrix formula
           ``dist^2 = |x|^2 + 1 - 2 x . z`` against all label-0 support points (chunked matmul,
           BLAS), then ``min(1, dist / delta*)``.  Results must agree to 1e-6 (the baseline
           loses digits to cancellation near the support; ours is exact to rounding).

Compile time is measured in a fresh process with an empty ``NUMBA_CACHE_DIR``.

Usage::

    python benchmarks/bench_embeddings.py               # everything (a few minutes)
    python benchmarks/bench_embeddings.py --quick       # smaller sizes, smoke test

Results: ``benchmarks/results_embeddings.md`` and ``.json`` (written atomically).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import embeddings as E  # noqa: E402
from benchmarks import _common  # noqa: E402
from circuits.utils.files import write_bytes_atomic, write_json_atomic  # noqa: E402
from circuits.utils.rng import uniform_ball  # noqa: E402
from embeddings.code import _pack_rows  # noqa: E402


def numpy_min_distance(generator: np.ndarray) -> int:
    """Baseline: all codewords by doubling on uint64 words, popcount, min over a != 0."""
    rows = _pack_rows(np.asarray(generator, dtype=np.uint8))
    n = rows.shape[0]
    words = np.zeros((1 << n, rows.shape[1]), dtype=np.uint64)
    for i in range(n):
        words[1 << i: 2 << i] = words[: 1 << i] ^ rows[i]
    wt = np.bitwise_count(words).sum(axis=1, dtype=np.int64)
    return int(wt[1:].min())


def numpy_search(n: int, m: int, seed: int, tries: int) -> int:
    """Baseline search: the same draws as CodeEmbedding, each certified by numpy_min_distance."""
    rng = np.random.default_rng(seed)
    eye = np.eye(n, dtype=np.uint8)
    best = 0
    for _ in range(tries):
        p = rng.integers(0, 2, size=(n, m - n), dtype=np.uint8)
        best = max(best, numpy_min_distance(np.hstack([eye, p])))
    return best


def numpy_target(inst: E.HardInstance, X: np.ndarray, chunk: int = 1 << 14) -> np.ndarray:
    """Baseline f_d: dist^2 = |x|^2 + 1 - 2 x . z over all label-0 support points (BLAS)."""
    best = np.full(X.shape[0], np.inf)
    sq = (X ** 2).sum(axis=1)
    for S in inst.iter_support(chunk=chunk):
        Z0 = S.points[S.labels == 0]
        d2 = sq[:, None] + 1.0 - 2.0 * (X @ Z0.T)
        best = np.minimum(best, d2.min(axis=1))
    return np.minimum(1.0, np.sqrt(np.maximum(best, 0.0)) / inst.delta_star)


def fd_points(inst: E.HardInstance, k: int, seed: int = 0) -> np.ndarray:
    g = np.random.default_rng(seed)
    s = inst.sample(k // 2, g).points
    near = s + g.normal(scale=inst.delta_star / np.sqrt(inst.dim), size=s.shape)
    return np.vstack([near, uniform_ball(k - k // 2, inst.dim, seed=g)])


def compile_seconds() -> dict:
    code = (
        "import time, json, numpy as np\n"
        "t0 = time.perf_counter()\n"
        "import embeddings as E\n"
        "t1 = time.perf_counter(); e = E.CodeEmbedding(4, seed=0, tries=2)\n"
        "t2 = time.perf_counter(); inst = E.HardInstance(2, seed=0, tries=2)\n"
        "inst.target(np.zeros((1, inst.dim)))\n"
        "t3 = time.perf_counter(); inst.target(np.zeros((1, inst.dim))); E.CodeEmbedding(4, seed=0, tries=2)\n"
        "t4 = time.perf_counter()\n"
        "print(json.dumps({'import_s': t1 - t0, 'first_calls_s': t3 - t1, 'warm_calls_s': t4 - t3}))\n"
    )
    out = {}
    with tempfile.TemporaryDirectory() as cache:
        out["cold"] = _common.run_child(code, env={"NUMBA_CACHE_DIR": cache})
        out["cached"] = _common.run_child(code, env={"NUMBA_CACHE_DIR": cache})
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="small sizes (smoke test)")
    ap.add_argument("--out", default=str(HERE / "results_embeddings"))
    args = ap.parse_args(argv)
    R = max(3, args.repeats)
    results = {"machine": _common.machine_info(), "repeats": R}
    lines = ["# Embeddings benchmarks", "",
             f"Command: `python benchmarks/bench_embeddings.py{' --quick' if args.quick else ''}`",
             f"Machine: {results['machine']['cpu_model']}, {results['machine']['cpus']} CPUs; "
             f"numpy {results['machine']['numpy']}, numba {results['machine']['numba']}; "
             f"load average at start {tuple(round(x, 1) for x in results['machine']['load_average_at_start'])}",
             "", "The machine is shared: absolute times drift, same-run ratios are the figures "
             "to quote.", "", "Medians [min–max] of "
             f"{R} interleaved repeats (A B A B ...), warm JIT cache, kernel time only.", "",
             "| workload | size | depthsep | baseline (numpy) | ratio (baseline / depthsep) | result |",
             "|---|---|---|---|---|---|"]

    # --- certification ----------------------------------------------------------------------
    sizes = [(12, 48)] if args.quick else [(20, 80), (24, 96)]
    for n, m in sizes:
        e = E.CodeEmbedding(n, m, seed=0, tries=2 if n > 20 else 200)
        G = np.array(e.generator)
        E.certified_min_distance(G)                      # warm

        def check(name, res, want=e.min_distance):
            got = res if isinstance(res, int) else res[0]
            assert got == want, (name, got, want)

        t = _common.interleaved({"depthsep": lambda: E.certified_min_distance(G),
                                 "numpy": lambda: numpy_min_distance(G)}, R, check=check)
        ratio = t["numpy"].median / t["depthsep"].median
        results[f"cert_n{n}"] = {k: v.to_dict() for k, v in t.items()} | {"ratio": ratio}
        lines.append(f"| E-cert certify d_C | n={n}, m={m} (2^{n} codewords) | "
                     f"{t['depthsep'].summary(1e3, 'ms')} | {t['numpy'].summary(1e3, 'ms')} | "
                     f"{ratio:.1f}x | d_C = {e.min_distance} |")

    # --- search -----------------------------------------------------------------------------
    n, m, tries = (12, 48, 50) if args.quick else (20, 80, 200)
    want = {}

    def check_search(name, res):
        d = res if isinstance(res, int) else res.min_distance
        want.setdefault("d", d)
        assert d == want["d"], (name, d, want)

    E.CodeEmbedding(n, m, seed=0, tries=2)
    t = _common.interleaved({"depthsep": lambda: E.CodeEmbedding(n, m, seed=0, tries=tries),
                             "numpy": lambda: numpy_search(n, m, 0, tries)}, R, check=check_search)
    ratio = t["numpy"].median / t["depthsep"].median
    results["search"] = {k: v.to_dict() for k, v in t.items()} | {"ratio": ratio}
    lines.append(f"| E-search best of {tries} tries | n={n}, m={m} | {t['depthsep'].summary()} | "
                 f"{t['numpy'].summary()} | {ratio:.1f}x | d_C = {want['d']} |")

    # --- f_d ----------------------------------------------------------------------------------
    for n in ((4,) if args.quick else (8, 10)):
        inst = E.HardInstance(n, seed=0)
        X = fd_points(inst, 2000 if not args.quick else 200)
        inst.target(X[:2])

        ref = {}

        def check_fd(name, res):
            ref.setdefault("f", res)
            assert np.abs(res - ref["f"]).max() <= 1e-6, name

        t = _common.interleaved({"depthsep": lambda: inst.target(X),
                                 "numpy": lambda: numpy_target(inst, X)}, R, check=check_fd)
        ratio = t["numpy"].median / t["depthsep"].median
        results[f"fd_n{n}"] = {k: {kk: vv for kk, vv in v.to_dict().items() if kk != "result"}
                               for k, v in t.items()} | {"ratio": ratio}
        lines.append(f"| E-fd f_d on {X.shape[0]} points | n={n}, d={inst.dim}, 4^{n} support | "
                     f"{t['depthsep'].summary(1e3, 'ms')} | {t['numpy'].summary(1e3, 'ms')} | "
                     f"{ratio:.1f}x | max diff {np.abs(t['depthsep'].result - t['numpy'].result).max():.1e} |")

    comp = compile_seconds()
    results["compile"] = comp
    lines += ["", f"Compile (fresh NUMBA_CACHE_DIR; the first CodeEmbedding + HardInstance.target "
                  f"calls compile all three kernels): {comp['cold']['first_calls_s']:.2f} s wall; "
                  f"the same calls with the cache filled: "
                  f"{comp['cached']['first_calls_s']:.2f} s; `import embeddings`: "
                  f"{comp['cached']['import_s']:.2f} s; peak RSS of the child "
                  f"{_common.fmt_bytes(comp['cold']['peak_rss_bytes'])}.", ""]
    text = "\n".join(lines) + "\n"
    print(text)
    out = Path(args.out)
    write_bytes_atomic(out.with_suffix(".md"), text.encode())
    write_json_atomic(out.with_suffix(".json"), results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
