"""THEORY.md §5 experiment table (E1–E20) reproduced from one script by calling the library.

Every row calls depthsep's own functions (circuits, embeddings, networks, and the two experiment
scripts ``experiments/reduction.py`` and ``experiments/separation.py``) and compares what they
measure with what THEORY.md expects. Expected values are computed from THEORY's formulas
(A006516(n) = 2^{n-1}(2^n - 1), 2^{n/2}, d/K², w⌈2RLwB/γ'⌉, ...) or, where THEORY quotes a
reference number (E5 d_C, E13 0.4953, E18 1882, E20 random-feature widths), compared with it
at the stated tolerance. Rows about inequalities report the worst ratio observed (lhs/rhs ≤ 1).

Output: a table (id, object, expected, measured, verdict, seconds, note) on stdout and
``<out>/theory_table.json`` written atomically. ``--quick`` (default) uses small sizes, about
one to two minutes on 2 cores; ``--full`` uses the sizes THEORY names and can take long. A row
that is only partly reproducible at the chosen size says so in its note.

Examples
--------
    python experiments/theory_table.py                         # quick, all rows
    python experiments/theory_table.py --only E1,E5,E13 --no-progress
    python experiments/theory_table.py --full --out results/theory_table_full
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

if __package__ in (None, ""):                      # `python experiments/theory_table.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

FORMAT = "depthsep.experiments.theory_table"
VERSION = 1

# Reference numbers quoted in THEORY.md (§5, §6); compared, never used as "measured".
A000609 = (2, 4, 14, 104, 1882, 94572)                       # §6, N = 0..5
CODE_DISTANCE = {4: 7, 6: 8, 8: 10, 10: 12, 12: 14}          # §2.1 / E5, T = 200, m = 4n
DANIELY_TAIL = {3: 0.4953, 4: 0.4999}                        # E13; 0.5000 for d >= 5
DANIELY_WIDTH_LOG2 = {10: -10.64, 15: -5.26, 20: 1.60, 25: 9.51, 30: 18.24, 40: 37.59, 60: 81.80}
RF_WIDTHS = {2: 8, 3: 64, 4: 256, 5: 1024, 6: 4096}          # E20 random-feature baseline
SES_T4_LIPSCHITZ = 2.0                                        # E17
PARITY_MINIMA = {2: 2, 3: 3}                                  # E19


def a006516(n: int) -> int:
    """#{(x, y): IP_n = 1} = 2^{n-1}(2^n - 1) (OEIS A006516, THEORY §1.1)."""
    return (1 << (n - 1)) * ((1 << n) - 1) if n > 0 else 0


def ip_nonlinearity(n: int) -> int:
    """NL(IP_n) = 2^{2n-1} - 2^{n-1} (IP is bent)."""
    return (1 << (2 * n - 1)) - (1 << (n - 1))


def maj_singleton(N: int) -> float:
    """|F̂({i})| of MAJ_N (odd N) = C(N-1, (N-1)/2) / 2^{N-1}."""
    return math.comb(N - 1, (N - 1) // 2) / 2 ** (N - 1)


# ----------------------------------------------------------------------------------------- rows
class Ctx:
    """Shared state: sizes, seed and cached trained networks (used by E8-E11)."""

    def __init__(self, full: bool, seed: int, progress: bool, tmp: Path):
        self.full, self.seed, self.progress, self.tmp = full, seed, progress, tmp
        self._runs = {}

    def size(self, quick, full):
        return full if self.full else quick

    def reduction_run(self, n: int, width: int, activation: str):
        """experiments/reduction.py's run_one (train, staircase, reduce, certify); cached."""
        key = (n, width, activation)
        if key not in self._runs:
            from experiments import reduction as R
            args = R.build_parser().parse_args(
                ["--n", str(n), "--width", str(width), "--activation", activation,
                 "--seed", str(self.seed), "--ball-points", str(self.size(2000, 1_000_000)),
                 "--no-progress"])
            self._runs[key] = R.run_one(args, n=n, width=width, out=None, progress=False,
                                        figure=False)
        return self._runs[key]

    def trained_runs(self):
        n = self.size(6, 8)
        w = self.size(32, 64)
        acts = ("relu", "sigmoid", "tanh", "threshold")
        return [(a, self.reduction_run(n, w, a)) for a in acts]


def _ratio(lhs, rhs):
    lhs, rhs = float(lhs), float(rhs)
    if rhs == 0:
        return 0.0 if lhs == 0 else math.inf
    return lhs / rhs


def row(id_, obj, expected):
    def deco(fn):
        ROWS[id_] = (obj, expected, fn)
        return fn
    return deco


ROWS: dict = {}


@row("E1", "IP kernel", "#IP=1 = A006516(n) = 2^{n-1}(2^n-1); ΣH = 2^n (exact)")
def e1(ctx):
    import circuits as c
    from circuits import analysis as ca
    ns = range(1, ctx.size(12, 14) + 1)
    bad = []
    for n in ns:
        circuit_count = c.count_ones(c.ip_depth3(n))          # numba kernel over all 4^n points
        table_count = int(c.inner_product_mod2(n).sum()) if n <= 12 else circuit_count
        h_sum = int(ca.sign_matrix("ip", n).astype(np.int64).sum()) if n <= 12 else 1 << n
        if not (circuit_count == table_count == a006516(n) and h_sum == 1 << n):
            bad.append((n, circuit_count, table_count, h_sum))
    nmax = max(ns)
    measured = f"n=1..{nmax}: count(n={nmax})={c.count_ones(c.ip_depth3(nmax))}, mismatches={len(bad)}"
    note = "quick: n <= 12 (THEORY: n <= 14)" if not ctx.full else \
        "truth table and ΣH (dense sign_matrix) for n <= 12, circuit count for all n"
    return {"measured": measured, "ok": not bad, "note": note,
                "expected_value": f"A006516({nmax}) = {a006516(nmax)}"}


@row("E2", "Hadamard, FWHT", "= scipy hadamard; FWHT² = 2^N·id; ‖Hv‖ = 2^{N/2}‖v‖; σ_i = 2^{n/2} "
                             "(rel 1e-12; ints exact)")
def e2(ctx):
    import scipy.linalg

    from circuits import analysis as ca
    rng = np.random.default_rng(ctx.seed)
    worst = 0.0
    ok = True
    for N in range(1, ctx.size(20, 24) + 1):
        v = rng.standard_normal(1 << N)
        w = ca.walsh_hadamard(v)
        ww = ca.walsh_hadamard(w)
        worst = max(worst, float(np.abs(ww - (1 << N) * v).max() / ((1 << N) * np.abs(v).max())),
                    abs(np.linalg.norm(w) / (2 ** (N / 2) * np.linalg.norm(v)) - 1))
        s = rng.choice(np.array([-1, 1], dtype=np.int32), size=1 << N)
        si = ca.walsh_hadamard(s)
        ok &= bool(np.issubdtype(si.dtype, np.integer)
                   and np.array_equal(ca.walsh_hadamard(si), (1 << N) * s.astype(np.int64)))
    dense_max = ctx.size(10, 11)
    sv_worst = 0.0
    for n in range(1, dense_max + 1):
        H = ca.sign_matrix("ip", n)
        ok &= bool(np.array_equal(H, scipy.linalg.hadamard(1 << n)))
        if n <= 10:
            sv = np.linalg.svd(H.astype(np.float64), compute_uv=False)
            sv_worst = max(sv_worst, float(np.abs(sv / 2 ** (n / 2) - 1).max()))
        e = np.zeros(1 << n); e[3 % (1 << n)] = 1.0
        ok &= bool(np.allclose(ca.walsh_hadamard(e), scipy.linalg.hadamard(1 << n)[:, 3 % (1 << n)]))
    worst = max(worst, sv_worst)
    note = "" if ctx.full else "quick: FWHT N <= 20 (THEORY: N <= 24)"
    return {"measured": f"max rel err {worst:.2e}; int32 exact={ok}", "ok": ok and worst <= 1e-12,
                "note": note}


@row("E3", "Walsh spectra", "Ŵ_IP = 2^n(-1)^{<u,v>}; NL = 2^{2n-1} - 2^{n-1}; PARITY one coefficient; "
                            "MAJ |F̂({i})| = C(N-1,(N-1)/2)/2^{N-1}, even |u| -> 0 (exact)")
def e3(ctx):
    import circuits as c
    from circuits import analysis as ca
    fails = []
    nmax = ctx.size(8, 10)
    for n in range(1, nmax + 1):
        W = ca.walsh_spectrum(c.InnerProductMod2(n)).walsh.astype(np.int64)
        u = np.arange(1 << (2 * n))
        lo, hi = u & ((1 << n) - 1), u >> n
        par = lo & hi
        for sh in (16, 8, 4, 2, 1):
            par = par ^ (par >> sh)
        par &= 1
        expect = (1 << n) * (1 - 2 * par)
        nl = ((1 << (2 * n)) - int(np.abs(W).max())) // 2
        if not (np.array_equal(W, expect) and nl == ip_nonlinearity(n) == a006516(n)):
            fails.append(("IP", n))
    Nmax = ctx.size(14, 15)
    for N in range(1, Nmax + 1):
        W = ca.walsh_spectrum(c.Parity(N)).walsh.astype(np.int64)
        e = np.zeros(1 << N, dtype=np.int64); e[-1] = 1 << N
        if not np.array_equal(W, e):
            fails.append(("PARITY", N))
    worst = 0.0
    for N in range(1, Nmax + 1, 2):
        W = ca.walsh_spectrum(c.Majority(N)).walsh.astype(np.int64)
        u = np.arange(1 << N)
        wt = np.array([int(t).bit_count() for t in u])
        single = np.abs(W[wt == 1]) / 2 ** N
        if np.any(W[wt % 2 == 0] != 0):
            fails.append(("MAJ even", N))
        worst = max(worst, float(np.abs(single - maj_singleton(N)).max()))
    ok = not fails and worst <= 1e-15
    note = "" if ctx.full else "quick: IP n <= 8, PARITY/MAJ N <= 14 (THEORY: n <= 10, N <= 15)"
    return {"measured": f"failures={fails}; MAJ singleton max diff {worst:.1e}; "
                         f"NL(IP_{nmax}) = {ip_nonlinearity(nmax)}", "ok": ok, "note": note}


@row("E4", "Lindsey, gate lemma", "|Σ_{XxY}H| <= √(|X||Y|2^n); |ΣHg| <= c_g 2^{3n/2}; "
                                  "|P1-P0| <= adv(n, c_g) (worst ratio <= 1)")
def e4(ctx):
    from circuits import analysis as ca
    rng = np.random.default_rng(ctx.seed)
    lind = gate = adv = 0.0
    for n in range(2, ctx.size(10, 12) + 1):
        H = ca.sign_matrix("ip", n)
        for _ in range(ctx.size(20, 200)):
            X = np.flatnonzero(rng.random(1 << n) < rng.random())
            Y = np.flatnonzero(rng.random(1 << n) < rng.random())
            if len(X) and len(Y):
                s = ca.rectangle_sum(H, X, Y)
                lind = max(lind, _ratio(abs(s), ca.lindsey_bound(n, len(X), len(Y)).value))
        r = ca.max_discrepancy_search(H, n_starts=ctx.size(4, 16), seed=ctx.seed)
        lind = max(lind, r.ratio)
    A1 = a006516
    for n in range(2, ctx.size(8, 10) + 1):
        for kind in ("real", "small", "pow2"):
            for _ in range(ctx.size(5, 20)):
                if kind == "real":
                    w = rng.standard_normal(2 * n); t = float(rng.standard_normal())
                elif kind == "small":
                    w = rng.integers(-3, 4, 2 * n); t = int(rng.integers(-3, 4))
                else:
                    w = rng.choice([-1, 1], 2 * n) * 2 ** rng.integers(0, 2 * n, 2 * n)
                    t = int(rng.integers(-4, 5))
                g = ca.gate_ip_correlation(w, t)
                cg = ca.gate_lemma_constant(n, g.k_values).value
                gate = max(gate, _ratio(abs(g.sum_hg), ca.gate_lemma_bound(n, g.k_values).value))
                a1, a0 = A1(n), 4 ** n - A1(n)
                p1 = g.n_ones_ip1 / a1
                p0 = (g.n_ones - g.n_ones_ip1) / a0
                adv = max(adv, _ratio(abs(p1 - p0), ca.advantage_bound(n, cg).value))
    worst = max(lind, gate, adv)
    note = "" if ctx.full else "quick: rectangles n <= 10, gates n <= 8, fewer draws (THEORY: n <= 12, n <= 10)"
    return {"measured": f"worst ratios: Lindsey {lind:.3f}, gate {gate:.3f}, adv {adv:.3f}",
                "ok": worst <= 1.0, "note": note, "worst_ratio": worst}


@row("E5", "code embedding", "d_C = 7, 8, 10, 12, 14 at n = 4..12; ‖x‖ = 1; δ*_0 = √(2d_C/m) attained "
                             "(exact / 1e-12)")
def e5(ctx):
    from embeddings import CodeEmbedding, HardInstance, certified_min_distance
    codes = {n: CodeEmbedding(n, seed=0) for n in CODE_DISTANCE}
    dcs = {n: int(e.min_distance) for n, e in codes.items()}
    certified = all(int(certified_min_distance(e.generator)[0]) == dcs[n] for n, e in codes.items())
    # d_C is the best of T = 200 random codes: a larger certified distance than the reference is
    # a better code, not a contradiction, so the reference is compared as a lower bound.
    ok = certified and all(dcs[n] >= CODE_DISTANCE[n] for n in dcs)
    differ = {n: (dcs[n], CODE_DISTANCE[n]) for n in dcs if dcs[n] != CODE_DISTANCE[n]}
    worst = 0.0
    for n in range(2, ctx.size(6, 8) + 1):
        inst = HardInstance(n, seed=ctx.seed)
        X, _, y = inst.support()
        worst = max(worst, float(np.abs(np.linalg.norm(X, axis=1) - 1).max()))
        dstar = math.sqrt(2 * inst.embedding.min_distance / inst.m)
        worst = max(worst, abs(inst.delta_star - dstar))
        x0, x1, *_ = inst.delta_star_witness()
        worst = max(worst, abs(float(np.linalg.norm(x0 - x1)) - dstar))
        if n <= ctx.size(5, 6):                      # brute-force dist(Z_0, Z_1)
            from scipy.spatial.distance import cdist
            dmin = float(cdist(X[y == 0], X[y == 1]).min())
            worst = max(worst, abs(dmin - dstar))
    for n in range(13, ctx.size(14, 16) + 1):   # larger n: the certificate, no reference value
        e = CodeEmbedding(n, seed=0)
        certified &= int(certified_min_distance(e.generator)[0]) == int(e.min_distance)
        ok = ok and certified
    note = (f"d_C certified by exhaustive re-count for n = 4..{ctx.size(14, 16)}; "
            f"brute-force dist(Z0, Z1) for n <= {ctx.size(5, 6)}")
    if differ:
        note += ("; d_C differs from THEORY's reference at " +
                 ", ".join(f"n = {n}: {a} (THEORY {b})" for n, (a, b) in differ.items()) +
                 " -- certified exhaustively, reference taken as a lower bound")
    return {"measured": f"d_C = {[dcs[n] for n in sorted(dcs)]}; max |‖x‖-1|, |δ*-√(2d_C/m)| = "
                         f"{worst:.1e}", "ok": ok and worst <= 1e-12, "note": note}


@row("E6", "depth-3 net", "output = IP on the support (0 if √(m/2) ∈ Z (n = 8), else 1e-9); "
                          "boxes τ <= 0.15; R-cube")
def e6(ctx):
    from embeddings import HardInstance
    from networks import constructions as cs
    res = []
    ok = True
    for n in range(2, ctx.size(8, 12) + 1):
        inst = HardInstance(n, seed=ctx.seed)
        con = cs.ip_depth3_relu(inst)
        err = con.max_error_over(inst.iter_support()) if hasattr(inst, "iter_support") else \
            con.measured_error(*inst.support()[::2])
        tol = 0.0 if math.isqrt(inst.m // 2) ** 2 * 2 == inst.m else 1e-9
        ok &= err <= tol
        res.append((n, err))
    box_err = 0.0
    for n in (3, 4):
        inst = HardInstance(n, tau=0.15, seed=ctx.seed)
        con = cs.ip_depth3_relu(inst)
        s = inst.sample(ctx.size(20_000, 100_000), seed=ctx.seed)
        box_err = max(box_err, con.measured_error(s.points, s.labels.astype(float)))
    rc_err = 0.0
    for n in (2, 3, 4):
        con = cs.ip_depth3_relu_rcube(n)
        rng = np.random.default_rng(ctx.seed)
        bits = rng.integers(0, 2, (5000, 2 * n))
        Z = np.where(bits == 1, 0.75 + 0.25 * rng.random(bits.shape), 0.25 * rng.random(bits.shape))
        lab = (bits[:, :n] * bits[:, n:]).sum(1) % 2
        rc_err = max(rc_err, con.measured_error(Z, lab.astype(float)))
    ok &= box_err <= 1e-9 and rc_err <= 1e-9
    n8 = dict(res).get(8)
    note = ("quick: n <= 8 exhaustive, 2·10^4 box points" if not ctx.full else "") + \
        "; R-cube on 5000 random points of ([0,1/4]u[3/4,1])^{2n}"
    return {"measured": f"max err support {max(e for _, e in res):.1e} (n=8: {n8}); boxes "
                         f"{box_err:.1e}; R-cube {rc_err:.1e}", "ok": bool(ok), "note": note}


@row("E7", "f_d", "f_d = label on support (1e-12); |Δf_d| <= L‖Δx‖, L = 1/δ*")
def e7(ctx):
    from embeddings import HardInstance
    worst_lab = 0.0
    worst_ratio = 0.0
    for n in range(2, ctx.size(6, 8) + 1):
        for tau in (0.0, 0.1):
            inst = HardInstance(n, tau=tau, seed=ctx.seed)
            s = inst.sample(ctx.size(500, 5000), seed=ctx.seed)
            worst_lab = max(worst_lab, float(np.abs(inst.target(s.points) - s.labels).max()))
            rep = inst.check_lipschitz(ctx.size(300, 2000), seed=ctx.seed)
            worst_ratio = max(worst_ratio, max(rep.max_ratio.values()))
    return {"measured": f"max |f_d - label| {worst_lab:.1e}; worst |Δf|/(L‖Δx‖) {worst_ratio:.6f}",
                "ok": worst_lab <= 1e-12 and worst_ratio <= 1 + 1e-12,
                "note": "" if ctx.full else "quick: n <= 6", "worst_ratio": worst_ratio}


def _ineq(run, name):
    for q in run["_report"].certificate.inequalities:
        if q.name == name:
            return q
    raise KeyError(name)


@row("E8", "depth-2 structure", "rank V <= 1 + Σ min(K_i^A, K_i^B); |E_μ[HN]| within §4.7 "
                                "(SVD rtol 1e-9)")
def e8(ctx):
    from embeddings import HardInstance
    from networks import SigmaNetwork
    from networks.reduction import numerical_rank, quantise, value_matrix
    worst = 0.0
    parts = []
    skipped = []
    for act, run in ctx.trained_runs():
        if "_report" not in run:
            skipped.append(act)
            continue
        for name in ("rank V", "§4.7 gate lemma"):
            q = _ineq(run, name)
            worst = max(worst, _ratio(q.lhs, q.rhs))
        parts.append(act)
    # random (untrained) nets: rank V against the K bookkeeping of the quantised network
    n = ctx.size(6, 8)
    inst = HardInstance(n, seed=ctx.seed)
    for act in ("relu", "sigmoid", "tanh"):
        net = SigmaNetwork.random([inst.dim, 8, 1], act, seed=ctx.seed)
        qn = quantise(net, inst, eta=1e-3)
        V = value_matrix(qn.values, n)
        bound = 1 + int(np.minimum(qn.K_A, qn.K_B).sum())
        worst = max(worst, _ratio(numerical_rank(V), bound))
    note = f"trained nets n = {ctx.size(6, 8)}, width {ctx.size(32, 64)}: {', '.join(parts)}"
    if skipped:
        note += f"; no certificate for {', '.join(skipped)} (see E9 note)"
    note += "; random nets: relu, sigmoid, tanh, η = 1e-3"
    if not ctx.full:
        note += " (THEORY: n <= 9)"
    return {"measured": f"worst lhs/rhs {worst:.3g}", "ok": worst <= 1.0, "note": note, "worst_ratio": worst}


@row("E9", "self-reduction", "(i) mean over all 4^n shifts = ρH (1e-12); (ii) sign(M_k) = H for k >= 64 "
                             "(n = 7); (iii) H·M_k >= ρ/2, 2^{n/2} <= rank M_k <= k(1 + wK)")
def e9(ctx):
    from networks.reduction import (
        exact_shift_average,
        ip_sign_matrix,
        self_reduce,
        synthetic_approximator,
    )
    out = {}
    # (i) exact average over all shifts, synthetic approximators n <= 6
    err_i = 0.0
    for n in range(2, 7):
        V = synthetic_approximator(n, seed=ctx.seed)
        H = ip_sign_matrix(n)
        rho = float(np.mean(H * V))
        err_i = max(err_i, float(np.abs(exact_shift_average(V) - rho * H).max()))
    out["i"] = err_i <= 1e-12
    # (ii) §4.4 approximator at n = 7
    V7 = synthetic_approximator(7, seed=ctx.seed)
    margins = {}
    for k in (1, 8, 64, 256):
        margins[k] = float(self_reduce(V7, k=k, seed=ctx.seed).prefix_margins[-1])
    out["ii"] = all(margins[k] > 0 for k in (64, 256))
    # (iii) trained net through the whole chain
    run = ctx.reduction_run(ctx.size(6, 8), ctx.size(32, 64), "relu")
    b = run["_report"].certificate.bounds
    worst = max(_ratio(run["rho"] / 2, run["min_margin"]),
                _ratio(2 ** (run["n"] / 2), b["rank_Mk"]), _ratio(b["rank_Mk"], b["rank_bound_Mk"]))
    out["iii"] = bool(run["sign_agrees_everywhere"] and run["chain_ok"] and worst <= 1)
    measured = (f"(i) err {err_i:.1e}; (ii) min H·M_k = " +
                ", ".join(f"{margins[k]:+.3f}" for k in margins) + " (k=1,8,64,256); "
                f"(iii) n={run['n']} ρ={run['rho']:.3f} min H·M_k={run['min_margin']:.3f} "
                f"least k={run['least_k']} rank M_k={b['rank_Mk']}, worst ratio {worst:.3g}")
    note = ("trained net shared with E8 (its training is timed there); (ii) THEORY's -1.908, -0.468, +0.302, +0.524 are for its own noise draw; "
            "only the signs at k >= 64 are compared")
    if not ctx.full:
        note += "; quick: (iii) n = 6, width 32 (THEORY: n <= 9)"
    return {"measured": measured, "ok": all(out.values()), "note": note, "worst_ratio": worst}


@row("E10", "Forster", "numerical rank >= 2^{n/2} (SVD rel tol 1e-9) for sign pattern H: "
                       "H + noise, M_k")
def e10(ctx):
    from circuits import analysis as ca
    from networks.reduction import ip_sign_matrix, numerical_rank
    rng = np.random.default_rng(ctx.seed)
    worst = forster = 0.0
    for n in range(2, 11):
        H = ip_sign_matrix(n)
        A = H * (1 + rng.random(H.shape))             # same sign pattern as H
        B = H + 0.9 * rng.uniform(-1, 1, H.shape)
        for M in (A, B):
            assert np.array_equal(np.sign(M), H)
            worst = max(worst, _ratio(2 ** (n / 2), numerical_rank(M)))
        forster = max(forster, abs(ca.forster_sign_rank_bound(H).value / 2 ** (n / 2) - 1))
    run = ctx.reduction_run(ctx.size(6, 8), ctx.size(32, 64), "relu")
    worst = max(worst, _ratio(2 ** (run["n"] / 2), run["_report"].certificate.bounds["rank_Mk"]))
    return {"measured": f"worst 2^(n/2)/rank {worst:.3g}; Forster bound of H vs 2^(n/2): "
                         f"rel diff {forster:.1e}", "ok": worst <= 1.0 and forster <= 1e-12,
                "note": "n = 2..10; M_k from E9(iii)",
                "worst_ratio": worst}


@row("E11", "staircase", "#gates = w⌈2RLwB/γ'⌉; |N - N_stair| <= γ' on random ball + all support "
                         "points; same signs (exact counts)")
def e11(ctx):
    from embeddings.instance import uniform_ball
    from networks.reduction import staircase, staircase_gate_count
    from networks.reduction._common import depth2_parts
    worst = 0.0
    count_ok = True
    sign_ok = True
    acts = []
    for act, run in ctx.trained_runs():
        st = run.get("staircase")
        if st is None:
            continue
        acts.append(act)
        worst = max(worst, _ratio(max(st["max_error_support"], st["max_error_ball"]),
                                  st["error_bound"]))
        net = run["_report"].quantised.network if "_report" in run else None
        Sn = run["_staircase"]
        parts = depth2_parts(net) if net is not None else None
        if parts is None:
            continue
        # the spec's gate count: uniform allocation, global range
        margin = st["margin"]
        L = parts.activation.lipschitz(parts.radius_global + 1.0)
        if L > 0:
            su = staircase(net, margin=margin, allocation="uniform", range="global",
                           max_gates=50_000_000)
            count_ok &= su.n_gates == staircase_gate_count(parts.width, parts.radius_global, L,
                                                            parts.weight_bound, margin)
        X = uniform_ball(ctx.size(20_000, 1_000_000), parts.dim if hasattr(parts, "dim")
                         else net.layers[0].weights.shape[1], seed=ctx.seed)
        N = parts(X)
        far = np.abs(N - 0.5) > margin
        sign_ok &= bool(np.array_equal(N[far] >= 0.5, Sn.value(X)[far] >= 0.5))
    note = f"trained nets: {', '.join(acts)}; gate count compared for Lipschitz σ (uniform, global R)"
    if not ctx.full:
        note += "; quick: 2·10^3 + 2·10^4 ball points (THEORY: 10^6)"
    return {"measured": f"worst err/γ' {worst:.3f}; count formula {count_ok}; signs {sign_ok}",
                "ok": worst <= 1 and count_ok and sign_ok, "note": note, "worst_ratio": worst}


@row("E12", "Legendre", "vs scipy Gegenbauer/Chebyshev < 1e-12; ∫P_nP_m dμ_d = δ_{nm}/N_{d,n} (1e-10); "
                        "two N_{d,n} formulas agree")
def e12(ctx):
    from scipy.special import eval_chebyt, eval_gegenbauer

    from networks import legendre as lg
    t = np.linspace(-1, 1, 201)
    nmax = 40
    diff = 0.0
    P2 = lg.legendre_polynomials(nmax, 2, t)
    diff = max(diff, max(float(np.abs(P2[n] - eval_chebyt(n, t)).max()) for n in range(nmax + 1)))
    for d in range(3, 51):
        P = lg.legendre_polynomials(nmax, d, t)
        a = (d - 2) / 2
        for n in range(nmax + 1):
            ref = eval_gegenbauer(n, a, t) / eval_gegenbauer(n, a, 1.0)
            diff = max(diff, float(np.abs(P[n] - ref).max()))
    orth = 0.0
    for d in range(2, ctx.size(8, 12) + 1):
        x, w = lg.gauss_jacobi(256, d)
        P = lg.legendre_polynomials(20, d, x)
        G = (P * w) @ P.T
        Nd = np.array([lg.harmonic_dimension(d, n) for n in range(21)], dtype=float)
        orth = max(orth, float(np.abs(G - np.diag(1 / Nd)).max()))
    agree = all(lg.harmonic_dimension(d, n) == lg.harmonic_dimension(d, n, formula="ratio")
                for d in range(2, 51) for n in range(1, 41))
    note = "orthogonality d <= " + str(ctx.size(8, 12))
    return {"measured": f"max diff {diff:.1e}; orthogonality {orth:.1e}; N_dn agree {agree}",
                "ok": diff < 1e-12 and orth <= 1e-10 and agree, "note": note}


@row("E13", "Daniely tail", "‖P_{d²}F‖² = 0.4953, 0.4999, 0.5000 (d = 3, 4, >= 5) ± 1e-3; "
                            ">= (1/(5eπ))²; width-bound log2 values §3.7")
def e13(ctx):
    from networks import legendre as lg
    vals = {}
    for d in range(3, 11):
        vals[d] = lg.daniely_tail_norm(d)
    ok = all(abs(v - DANIELY_TAIL.get(d, 0.5)) <= 1e-3 for d, v in vals.items())
    ok &= all(v >= (1 / (5 * math.e * math.pi)) ** 2 for v in vals.values())
    wb = {d: lg.daniely_width_bound_log2(d) for d in DANIELY_WIDTH_LOG2}
    wb_err = max(abs(wb[d] - DANIELY_WIDTH_LOG2[d]) for d in wb)
    nv = lg.daniely_nonvacuous_dimension()
    ok &= wb_err <= 5e-3 and nv == 19
    note = "width-bound log2 compared at 2 decimals; non-vacuous from d = 19 (pitfall 6)"
    return {"measured": "‖P F‖² = " + ", ".join(f"{v:.4f}" for v in vals.values()) +
                         f"; width log2 max diff {wb_err:.3f}; non-vacuous d = {nv}",
                "ok": bool(ok), "note": note}


@row("E14", "Daniely depth 3", "sup error <= ε on sphere pairs; first width d·2⌈8Ld/ε⌉")
def e14(ctx):
    from networks import constructions as cs
    worst = 0.0
    widths_ok = True
    cases = [(1, 3, 0.2), (2, 3, 0.3)] if not ctx.full else \
        [(j, d, 0.2) for j in range(1, 6) for d in (3, 5, 10, 20)]
    n_pairs = ctx.size(10_000, 100_000)
    for j, d, eps in cases:
        L = math.pi * j
        con = cs.inner_product_depth3(lambda t, j=j: np.sin(np.pi * j * t), L, d, eps)
        widths_ok &= con.widths[0] == d * 2 * math.ceil(8 * L * d / eps)
        X = cs.random_sphere(n_pairs, d, seed=ctx.seed)
        Y = cs.random_sphere(n_pairs, d, seed=ctx.seed + 1)
        err = con.measured_error(np.concatenate([X, Y], axis=1))
        worst = max(worst, err / eps)
    note = "" if ctx.full else f"quick: (j, d, ε) = {cases}, 10^4 pairs (THEORY: j <= 5, d <= 20, 10^5)"
    return {"measured": f"worst err/ε {worst:.3g}; widths formula {widths_ok}",
                "ok": worst <= 1 and widths_ok, "note": note, "worst_ratio": worst}


@row("E15", "SES ‖x‖²", "error <= d/K² (attained at d = 2; bound + 1e-12)")
def e15(ctx):
    from networks import constructions as cs
    worst = 0.0
    attained = None
    for d in (2, 10, 100):
        for K in (8, 32, 128):
            con = cs.squared_norm_depth2(d, K)
            X = cs.random_ball(ctx.size(20_000, 100_000), d, seed=ctx.seed)
            h = 2 / K
            mids = -1 + h / 2 + h * np.arange(K)
            M = np.zeros((len(mids) ** 2, d))
            M[:, 0] = np.repeat(mids, len(mids)); M[:, 1] = np.tile(mids, len(mids))
            M = M[np.linalg.norm(M, axis=1) <= 1]
            err = max(con.measured_error(X), con.measured_error(M))
            bound = d / K ** 2
            if err > bound + 1e-12:
                worst = math.inf
            worst = max(worst, err / bound)
            if d == 2:
                attained = min(attained or 1.0, con.measured_error(M) / bound)
    return {"measured": f"worst err/(d/K²) {worst:.4f}; d=2 grid midpoints {attained:.12f}·bound",
                "ok": worst <= 1 + 1e-9 and abs(attained - 1) <= 1e-9,
                "note": "grid midpoints in the first two coordinates", "worst_ratio": worst}


@row("E16", "SES d = 3 ridge", "sup_{B_3} error = O(N^{-1/2}) or better (3σ)")
def e16(ctx):
    from networks import constructions as cs
    Ns = [16, 64, 256] if not ctx.full else [16, 64, 256, 1024]
    eps = ctx.size(0.02, 0.01)
    X = cs.random_ball(ctx.size(2000, 5000), 3, seed=ctx.seed)
    errs = []
    for N in Ns:
        con = cs.radial_ridge_depth2(lambda r: np.cos(3 * r), lambda r: -3 * np.sin(3 * r),
                                     15.0, N, eps)
        errs.append(con.measured_error(X))
    x, y = np.log(Ns), np.log(errs)
    A = np.vstack([x, np.ones_like(x)]).T
    coef, res, *_ = np.linalg.lstsq(A, y, rcond=None)
    slope = coef[0]
    dof = max(len(Ns) - 2, 1)
    sigma = math.sqrt(float(res[0]) / dof / np.sum((x - x.mean()) ** 2)) if len(res) else 0.0
    note = (f"φ = cos 3r, profile ε = {eps} (error floor); Fibonacci directions N = {Ns}; "
            "THEORY: N = 10^2..10^4")
    return {"measured": "errors " + ", ".join(f"{e:.2e}" for e in errs) +
                         f"; log-log slope {slope:.2f} ± {sigma:.2f}",
                "ok": slope <= -0.5 + 3 * sigma, "note": note}


@row("E17", "SES T4 target", "sup_{B_d}‖∇f‖ = 2 (2.00000, tol 1e-6), d ∈ {2, 5, 10}")
def e17(ctx):
    from networks import constructions as cs
    vals = {d: cs.ses_theorem4_lipschitz(d) for d in (2, 5, 10)}
    mc = max(float(np.linalg.norm(cs.ses_theorem4_gradient(cs.random_ball(20_000, d, seed=1)),
                                  axis=1).max()) for d in (2, 5, 10))
    ok = all(abs(v - SES_T4_LIPSCHITZ) <= 1e-6 for v in vals.values()) and mc <= 2 + 1e-12
    return {"measured": ", ".join(f"{v:.7f}" for v in vals.values()) + f"; random points max {mc:.4f}",
                "ok": ok}


@row("E18", "threshold count", "A000609: 4, 14, 104, 1882 (N = 1..4; exact)")
def e18(ctx):
    from circuits import analysis as ca
    Ns = range(5)
    got = [ca.count_threshold_functions(N) for N in Ns]
    ok = got == [A000609[N] for N in Ns]
    return {"measured": ", ".join(map(str, got)) + f" (N = 0..{max(Ns)})", "ok": ok,
                "note": "N = 4 took well under THEORY's ≈ 2 min (monotone enumeration)"}


@row("E19", "small circuits", "PARITY layered THR∘THR minima 2 (N = 2), 3 (N = 3); parity, IP depth 3, "
                              "IP depth 2 exact")
def e19(ctx):
    import circuits as c
    from circuits import analysis as ca
    minima = {N: ca.min_depth2_size(c.parity(N), N).size for N in PARITY_MINIMA}
    bad = []
    for N in range(1, 17):
        if c.count_disagreements(c.parity_depth2(N), "parity").count:
            bad.append(("parity", N))
    for n in range(1, 11):
        if c.count_disagreements(c.ip_depth3(n), "ip").count:
            bad.append(("ip3", n))
    for n in range(1, 9):
        if c.count_disagreements(c.ip_depth2(n), "ip").count:
            bad.append(("ip2", n))
    note = "parity N <= 16, IP depth 3 n <= 10, IP depth 2 n <= 8 (THEORY's sizes)"
    return {"measured": f"minima {minima}; disagreements in {bad or 'none'}",
                "ok": minima == PARITY_MINIMA and not bad, "note": note}


@row("E20", "empirical separation", "depth 3: MSE ≈ 0 at width ~n; depth-2 width ≈ 4^n; "
                                    "random features 8, 64, 256, 1024, 4096 (n = 2..6)")
def e20(ctx):
    from experiments import separation as S
    n_max = ctx.size(4, 8)
    argv = ["--n-min", "2", "--n-max", str(n_max), "--seed", str(ctx.seed), "--no-progress",
            "--no-plot", "--out", str(ctx.tmp / "separation")]
    args = S._parse(argv)
    rec = S.run(args)
    rf = {e["n"]: e["random_features"]["smallest_width"] for e in rec["results"]}
    ex = max(e["exact_depth3"]["mse"] for e in rec["results"])
    d2 = {e["n"]: e["depth2"]["smallest_width"] for e in rec["results"]}
    d3 = {e["n"]: e["depth3"]["smallest_width"] for e in rec["results"]}
    # "curves only": widths lie on the grid 2^j and depend on the draws, so one grid step
    # (a factor 2) is the tolerance; exact mismatches are listed in the note.
    ok = all(rf[n] is not None and RF_WIDTHS[n] / 2 <= rf[n] <= 2 * RF_WIDTHS[n]
             for n in rf if n in RF_WIDTHS)
    ok = ok and ex <= 1e-9
    differ = {n: (rf[n], RF_WIDTHS[n]) for n in rf if n in RF_WIDTHS and rf[n] != RF_WIDTHS[n]}
    note = ("verdict: RF widths vs THEORY within one grid step (x2) + exact depth-3 MSE <= 1e-9; "
            "trained curves reported only")
    if differ:
        note += "; RF width differs from THEORY at " + ", ".join(
            f"n = {n}: {a} (THEORY {b})" for n, (a, b) in differ.items())
    if not ctx.full:
        note += "; quick: n = 2..4, separation.py defaults otherwise (THEORY: n = 3..8)"
    return {"measured": f"RF widths {rf}; exact depth-3 MSE {ex:.1e}; trained smallest width "
                         f"depth2 {d2}, depth3 {d3}", "ok": ok, "note": note}


# ----------------------------------------------------------------------------------------- main
def _parse(argv):
    p = argparse.ArgumentParser(prog="theory_table.py", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--only", type=str, default=None, help="comma-separated ids, e.g. E1,E5")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--quick", dest="full", action="store_false", help="small sizes (default)")
    g.add_argument("--full", dest="full", action="store_true", help="THEORY's sizes (slow)")
    p.set_defaults(full=False)
    p.add_argument("--seed", type=int, default=0, help="seed of every random draw; default 0")
    p.add_argument("--out", type=Path, default=Path("results/theory_table"),
                   help="output directory; default results/theory_table")
    p.add_argument("--no-progress", action="store_true", help="no per-row progress lines")
    return p.parse_args(argv)


def _select(only):
    if not only:
        return list(ROWS)
    ids = [s.strip().upper() for s in only.split(",") if s.strip()]
    unknown = [i for i in ids if i not in ROWS]
    if unknown:
        raise SystemExit(f"theory_table.py: unknown row id(s) {unknown}; known: {list(ROWS)}")
    return ids


def run_rows(ids, ctx, *, progress: bool):
    rows = []
    for id_ in ids:
        obj, expected, fn = ROWS[id_]
        if progress:
            print(f"[{id_}] {obj} ...", file=sys.stderr, flush=True)
        t0 = time.perf_counter()
        try:
            r = fn(ctx)
            err = None
        except Exception as exc:  # noqa: BLE001 -- a crashing row is a failing row
            r = {"measured": f"error: {type(exc).__name__}: {exc}", "ok": False, "note": ""}
            err = repr(exc)
        if progress:
            print(f"[{id_}] done in {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
        rec = {"id": id_, "object": obj, "expected": expected,
               "measured": r["measured"], "verdict": "ok" if r["ok"] else "FAIL",
               "seconds": round(time.perf_counter() - t0, 3), "note": r.get("note", "")}
        for k in ("worst_ratio", "expected_value"):
            if k in r:
                rec[k] = r[k]
        if err:
            rec["error"] = err
        rows.append(rec)
    return rows


def format_table(rows) -> str:
    lines = []
    for r in rows:
        lines.append(f"{r['id']:<4} {r['object']:<22} {r['verdict']:<4} {r['seconds']:7.1f}s")
        lines.append(f"     expected: {r['expected']}")
        lines.append(f"     measured: {r['measured']}")
        if r["note"]:
            lines.append(f"     note:     {r['note']}")
    return "\n".join(lines)


def main(argv=None) -> int:
    import platform
    import tempfile

    from circuits.utils.files import write_json_atomic

    args = _parse(argv)
    ids = _select(args.only)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="theory_table_") as tmp:
        ctx = Ctx(args.full, args.seed, not args.no_progress, Path(tmp))
        rows = run_rows(ids, ctx, progress=not args.no_progress)
    seconds = time.perf_counter() - t0
    print(format_table(rows))
    n_fail = sum(r["verdict"] != "ok" for r in rows)
    print(f"\n{len(rows) - n_fail}/{len(rows)} rows ok, {seconds:.1f} s "
          f"({'full' if args.full else 'quick'})")
    record = {"format": FORMAT, "version": VERSION, "mode": "full" if args.full else "quick",
              "seed": args.seed, "rows": rows, "n_fail": n_fail, "seconds": seconds,
              "environment": {"python": sys.version.split()[0], "numpy": np.__version__,
                              "platform": platform.platform()}}
    path = Path(args.out) / "theory_table.json"
    write_json_atomic(path, record)
    print(f"wrote {path}")
    return 0 if n_fail == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
