"""THEORY table rows about the cube and its functions: E1–E4 (IP kernel, Hadamard/FWHT, Walsh
spectra, Lindsey and the gate lemma), E18 (threshold count), E19 (small circuits)."""

from __future__ import annotations


import numpy as np

from networks.theory import reference as ref
from networks.theory._table import ratio, row


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
        if not (circuit_count == table_count == ref.a006516(n) and h_sum == 1 << n):
            bad.append((n, circuit_count, table_count, h_sum))
    nmax = max(ns)
    measured = f"n=1..{nmax}: count(n={nmax})={c.count_ones(c.ip_depth3(nmax))}, mismatches={len(bad)}"
    note = "quick: n <= 12 (THEORY: n <= 14)" if not ctx.full else \
        "truth table and ΣH (dense sign_matrix) for n <= 12, circuit count for all n"
    return {"measured": measured, "ok": not bad, "note": note,
            "expected_value": f"A006516({nmax}) = {ref.a006516(nmax)}"}


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
        u = np.arange(1 << (2 * n))                   # u = (u_x, u_y): W(u) = 2^n (-1)^<u_x, u_y>
        expect = (1 << n) * (1 - 2 * c.ip_values(u, n).astype(np.int64))
        nl = ((1 << (2 * n)) - int(np.abs(W).max())) // 2
        if not (np.array_equal(W, expect) and nl == ref.ip_nonlinearity(n) == ref.a006516(n)):
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
        worst = max(worst, float(np.abs(single - ref.maj_singleton(N)).max()))
    ok = not fails and worst <= 1e-15
    note = "" if ctx.full else "quick: IP n <= 8, PARITY/MAJ N <= 14 (THEORY: n <= 10, N <= 15)"
    return {"measured": f"failures={fails}; MAJ singleton max diff {worst:.1e}; "
                         f"NL(IP_{nmax}) = {ref.ip_nonlinearity(nmax)}", "ok": ok, "note": note}


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
                lind = max(lind, ratio(abs(s), ca.lindsey_bound(n, len(X), len(Y)).value))
        r = ca.max_discrepancy_search(H, n_starts=ctx.size(4, 16), seed=ctx.seed)
        lind = max(lind, r.ratio)
    A1 = ref.a006516
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
                gate = max(gate, ratio(abs(g.sum_hg), ca.gate_lemma_bound(n, g.k_values).value))
                a1, a0 = A1(n), 4 ** n - A1(n)
                p1 = g.n_ones_ip1 / a1
                p0 = (g.n_ones - g.n_ones_ip1) / a0
                adv = max(adv, ratio(abs(p1 - p0), ca.advantage_bound(n, cg).value))
    worst = max(lind, gate, adv)
    note = "" if ctx.full else "quick: rectangles n <= 10, gates n <= 8, fewer draws (THEORY: n <= 12, n <= 10)"
    return {"measured": f"worst ratios: Lindsey {lind:.3f}, gate {gate:.3f}, adv {adv:.3f}",
            "ok": worst <= 1.0, "note": note, "worst_ratio": worst}


@row("E18", "threshold count", "ref.A000609: 4, 14, 104, 1882 (N = 1..4; exact)")
def e18(ctx):
    from circuits import analysis as ca
    Ns = range(5)
    got = [ca.count_threshold_functions(N) for N in Ns]
    ok = got == [ref.A000609[N] for N in Ns]
    return {"measured": ", ".join(map(str, got)) + f" (N = 0..{max(Ns)})", "ok": ok,
            "note": "N = 4 took well under THEORY's ≈ 2 min (monotone enumeration)"}


@row("E19", "small circuits", "PARITY layered THR∘THR minima 2 (N = 2), 3 (N = 3); parity, IP depth 3, "
                              "IP depth 2 exact")
def e19(ctx):
    import circuits as c
    from circuits import analysis as ca
    minima = {N: ca.min_depth2_size(c.parity(N), N).size for N in ref.PARITY_MINIMA}
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
            "ok": minima == ref.PARITY_MINIMA and not bad, "note": note}
