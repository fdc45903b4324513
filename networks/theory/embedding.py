"""THEORY table rows about the embedding: E5 (code embedding), E6 (exact depth-3 nets), E7 (f_d)."""

from __future__ import annotations

import math

import numpy as np

from circuits.functions import ip_values
from circuits.hypercube import index_of
from networks.theory import reference as ref
from networks.theory._table import row


@row("E5", "code embedding", "d_C = 7, 8, 10, 12, 14 at n = 4..12; ‖x‖ = 1; δ*_0 = √(2d_C/m) attained "
                             "(exact / 1e-12)")
def e5(ctx):
    from embeddings import CodeEmbedding, HardInstance, certified_min_distance
    codes = {n: CodeEmbedding(n, seed=0) for n in ref.CODE_DISTANCE}
    dcs = {n: int(e.min_distance) for n, e in codes.items()}
    certified = all(int(certified_min_distance(e.generator)[0]) == dcs[n] for n, e in codes.items())
    # d_C is the best of T = 200 random codes: a larger certified distance than the reference is
    # a better code, not a contradiction, so the reference is compared as a lower bound.
    ok = certified and all(dcs[n] >= ref.CODE_DISTANCE[n] for n in dcs)
    differ = {n: (dcs[n], ref.CODE_DISTANCE[n]) for n in dcs if dcs[n] != ref.CODE_DISTANCE[n]}
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
        err = con.max_error_over(inst.iter_support())
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
        lab = ip_values(index_of(bits), n)
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
