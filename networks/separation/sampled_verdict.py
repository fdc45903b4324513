"""The proven side of the sampled mode (E24) and its verdict, centred.

The per-norm ceiling on IP (THEORY §1.2, §4.7): every depth-2 ReLU net N = u₀ + Σ_i u_i ReLU(z_i)
with path norm P = Σ_i |u_i|(|b_i| + ‖w_i‖₂) has, with H = (−1)^IP and the hidden part
h = −2(N − u₀),

    |E[H·h]| ≤ K_n·P,      K_n = 2·Γ_n·2^{−n/2}                      (gate lemma, any real α, β)

with Γ_n the constant of the Toeplitz-factorisation gate lemma
(:func:`networks.separation.gate_lemma.gate_constant`, ≈ 0.22n + 1.2; proof in
docs/theory/sampled.rst).  The dyadic lemma used before (``lemma="dyadic"``) has Γ_n = n + 1,
K_n = 2(n + 1)·2^{−n/2}; both are proven, the first is 2.8× (n = 4) to 4.2× (n = 40) smaller and
never below an exact maximum (tests/test_gate_lemma.py).

**Centred.**  E[H·h] alone can be passed by a constant: a net whose only hidden unit is
ReLU(0·x + 1) has h = −2u₁, so E[S·h]/P = 2|E[S]| for any target S = 1 − 2y, and MAJ∘AND is
unbalanced (P(y = 1) ≈ 0.6), so that constant "beats" K_n from n ≈ 12 on.  The verdict therefore
uses the covariance Cov(S, h) = E[S·h] − E[S]E[h], which is 0 for every constant h, against the
centred ceiling: for IP, |Cov(H, h)| ≤ |E[H·h]| + |E[H]|·|E[h]| ≤ K_n·P + 2^{−n}·2P, so

    |Cov(H, h)| ≤ (K_n + 2^{1−n})·P      for EVERY depth-2 ReLU net      (:func:`centred_ceiling_per_norm`)

(|h| ≤ 2P on the unit ball).  The interval on Cov(S, h) (:func:`centred_interval`) combines the
empirical-Bernstein intervals of E[S·h], E[S] and E[h], each at level 1 − δ/3 (union bound):
|ab − AB| ≤ |a|·t_B + (|b| + t_B)·t_A for a = mean(S), b = mean(h).

**What "certified" means.**  Cov(S, h)/P − CI > K_n + 2^{1−n} says: with probability ≥ 1 − δ, the
hidden units of this depth-2 net carry more (centred) correlation per unit path norm with its
target than the hidden units of ANY depth-2 ReLU net can carry with IP.  That is a **per-norm gap
between IP and the target at depth 2**, not a depth separation.

**The depth axis** (a comparison of two proven numbers, not a measurement).  A depth-2 net with
ρ = 1 on IP needs P + |u₀| ≥ (1 − 2^{−n})/K_n (:func:`depth2_norm_lower_bound`); an exact
depth-3 IP net has path norm P₃(n) (:func:`depth3_norm_formula`, m = 4n): §3.2's
n√m(2n + 1) + n(n + 1) (``net="tri"``), the balanced net's 2(n − 1)n√m + O(n²) (``"balanced"``,
widths n, n) or the Fourier net's ≈ √(2π)n² (``"fourier"``, width 2^n)
(:mod:`networks.constructions.ip_norm`).  From the crossing n* (:func:`depth3_crossing`) on, a
depth-2 net needs more norm than the depth-3 one: n* = 45 with the dyadic lemma and §3.2's net
(before), 39 with the Toeplitz lemma and the balanced net (after, polynomial width), 33 with the
Fourier net (width 2^n).  Below n*, nothing proven here excludes a depth-2 net of smaller norm.
"""

from __future__ import annotations

import math

import numpy as np

from circuits.utils.errors import InvalidArgumentError
from circuits.utils.validation import check_int

__all__ = ["empirical_bernstein", "ip_ceiling_per_norm", "centred_ceiling_per_norm",
           "centred_interval", "ip_rho_bound", "depth3_path_norm", "depth3_norm_formula",
           "depth2_norm_lower_bound", "depth3_crossing", "depth_comparison", "verdict",
           "seeds_verdict", "crossings", "LEMMAS"]

#: The two proven gate lemmas: "toeplitz" (Γ_n ≈ 0.22n + 1.2, the default) and "dyadic" (n + 1).
LEMMAS = ("toeplitz", "dyadic")


def empirical_bernstein(mean: float, var: float, count: int, span: float, delta: float) -> float:
    """Two-sided Maurer–Pontil half-width at level 1 − δ for i.i.d. terms in a range of length
    ``span``: √(2·var·ln(4/δ)/N) + 7·span·ln(4/δ)/(3(N − 1)).

    >>> round(empirical_bernstein(0.0, 0.25, 10**6, 1.0, 0.05), 5)
    0.00149
    """
    if count < 2:
        return math.inf
    lg = math.log(4.0 / delta)
    return math.sqrt(2.0 * max(var, 0.0) * lg / count) + 7.0 * span * lg / (3.0 * (count - 1))



def ip_ceiling_per_norm(n: int, *, lemma: str = "toeplitz") -> float:
    """K_n = 2·Γ_n·2^{−n/2}: |ρ_h| ≤ K_n·P for every depth-2 ReLU net against IP at n bits
    (Γ_n of :func:`networks.separation.gate_lemma.gate_constant`; ``lemma="dyadic"``: n + 1).

    >>> round(ip_ceiling_per_norm(20), 6), round(ip_ceiling_per_norm(20, lemma="dyadic"), 6)
    (0.010386, 0.041016)
    """
    from networks.separation.gate_lemma import gate_bound

    n = check_int(n, name="n", minimum=1, what="bits per party")
    return 2.0 * gate_bound(n, lemma=lemma)


def ip_rho_bound(n: int, P: float, u0: float) -> float:
    """|ρ| ≤ 2^{−n}|1 − 2u₀| + K_n·P for a depth-2 ReLU net with path norm P and output bias u₀."""
    return 2.0 ** -n * abs(1.0 - 2.0 * u0) + ip_ceiling_per_norm(n) * P


def depth3_path_norm(net) -> float:
    """Recursive path norm Σ_k |v_k|(|c_k| + Σ_i |U_ki|(|b_i| + ‖w_i‖₂)) of a depth-3 net
    (:class:`networks.SigmaNetwork`, dims [d, w1, w2, 1]); the output bias is not included.

    >>> from networks.constructions import ip_depth3_relu
    >>> n = 6; round(depth3_path_norm(ip_depth3_relu(n).network), 9) == round(
    ...     n * math.sqrt(4 * n) * (2 * n + 1) + n * (n + 1), 9)
    True
    """
    L1, L2, L3 = net.layers
    r1 = np.abs(L1.bias) + np.sqrt(np.sum(L1.weights ** 2, axis=1))
    r2 = np.abs(L2.bias) + np.abs(L2.weights) @ r1
    return float(np.abs(L3.weights[0]) @ r2)


def depth3_norm_formula(n: int, m: "int | None" = None, *, net: str = "tri") -> float:
    """P₃(n) of an exact depth-3 IP net, m = 4n by default: ``"tri"`` (THEORY §3.2,
    n√m(2n + 1) + n(n + 1)), ``"balanced"`` or ``"fourier"``
    (:func:`networks.constructions.ip_norm.depth3_norm`)."""
    from networks.constructions.ip_norm import depth3_norm

    return depth3_norm(n, net, m)


def depth2_norm_lower_bound(n: int, rho: float = 1.0, *, gate_factor: float = 1.0,
                            lemma: str = "toeplitz") -> float:
    """P + |u₀| ≥ (ρ − 2^{−n})/K_n for any depth-2 ReLU net with correlation ρ on IP at n bits
    (``gate_factor``·K_n in place of K_n: what a gate lemma tighter by that factor would give).

    Proof: |ρ| ≤ 2^{−n}(1 + 2|u₀|) + K_n·P and 2^{1−n} ≤ K_n."""
    return (rho - 2.0 ** -n) / (gate_factor * ip_ceiling_per_norm(n, lemma=lemma))


def depth3_crossing(max_n: int = 400, *, gate_factor: float = 1.0, lemma: str = "toeplitz",
                    net: str = "balanced") -> int:
    """Least n with depth2_norm_lower_bound(n) > depth3_norm_formula(n) (m = 4n): from n* on, a
    depth-2 net with ρ = 1 on IP provably needs more path norm than the exact depth-3 net.

    >>> depth3_crossing(lemma="dyadic", net="tri"), depth3_crossing(), depth3_crossing(net="fourier")
    (45, 39, 33)
    """
    for n in range(1, max_n + 1):
        if (depth2_norm_lower_bound(n, gate_factor=gate_factor, lemma=lemma)
                > depth3_norm_formula(n, net=net)):
            return n
    raise InvalidArgumentError(f"no crossing up to n = {max_n}")


def crossings() -> dict:
    """n* before (dyadic lemma, §3.2's net) and after (Toeplitz lemma; balanced net, polynomial
    width; Fourier net, width 2^n), and each change alone."""
    return {"before": depth3_crossing(lemma="dyadic", net="tri"),
            "lemma_only": depth3_crossing(net="tri"),
            "net_only": depth3_crossing(lemma="dyadic", net="balanced"),
            "after": depth3_crossing(),
            "after_width_2n": depth3_crossing(net="fourier"),
            "meaning": "least n at which the proven least path norm (+|u0|) of a depth-2 ReLU net "
                       "with rho = 1 on IP exceeds the path norm of an exact depth-3 net; "
                       "'before': dyadic gate lemma and the THEORY 3.2 net; 'after': Toeplitz "
                       "gate lemma and the balanced net (widths n, n); 'after_width_2n': the "
                       "Fourier net (widths n, 2^n)"}


def depth_comparison(ns) -> list:
    """Per n: the exact depth-3 nets' path norms P₃(n) (§3.2, balanced, Fourier) against the
    proven depth-2 lower bounds for ρ = 1 (Toeplitz and dyadic lemma), the ratio of the current
    pair (Toeplitz, balanced) and whether the depth gap per path norm is proven there (the depth
    axis of the E24 verdict; a comparison of proven numbers, not a measurement)."""
    out = []
    for n in ns:
        p3 = {net: depth3_norm_formula(n, net=net) for net in ("tri", "balanced", "fourier")}
        p2, p2_old = depth2_norm_lower_bound(n), depth2_norm_lower_bound(n, lemma="dyadic")
        out.append({"n": n, "depth3_path_norm": p3["balanced"], "depth2_lower_bound": p2,
                    "depth3_path_norm_tri": p3["tri"], "depth3_path_norm_fourier": p3["fourier"],
                    "depth2_lower_bound_dyadic": p2_old,
                    "ratio": p2 / p3["balanced"], "depth_gap_proven": bool(p2 > p3["balanced"]),
                    "depth_gap_proven_width_2n": bool(p2 > p3["fourier"])})
    return out


def centred_ceiling_per_norm(n: int, *, lemma: str = "toeplitz") -> float:
    """K_n + 2^{1−n}: |Cov(H, h)| ≤ (K_n + 2^{1−n})·P for every depth-2 ReLU net against IP.

    >>> round(centred_ceiling_per_norm(20), 6), round(centred_ceiling_per_norm(20, lemma="dyadic"), 6)
    (0.010388, 0.041018)
    """
    return ip_ceiling_per_norm(n, lemma=lemma) + 2.0 ** (1 - n)


def _half_width(m: dict, delta: float) -> float:
    return empirical_bernstein(m["mean"], m["var"], int(m["count"]), float(m["span"]), delta)


def centred_interval(est: dict, delta: "float | None" = None) -> tuple:
    """(Cov(S, h) estimate, half-width) at level 1 − δ from the stored moments of ``est``
    (:func:`networks.separation.sampled.estimate`: ``rho_h`` = E[S·h], ``S``, ``h``), each
    of the three intervals at δ/3; the module docstring gives the product bound."""
    for k in ("rho_h", "S", "h"):
        if k not in est:
            raise InvalidArgumentError(f"estimate has no {k!r} moments (written before the "
                                       f"centred statistic): estimate the net again")
    delta = float(est["delta"]) if delta is None else float(delta)
    sh, s, h = est["rho_h"], est["S"], est["h"]
    t_sh, t_s, t_h = (_half_width(x, delta / 3.0) for x in (sh, s, h))
    cov = sh["mean"] - s["mean"] * h["mean"]
    return cov, t_sh + abs(s["mean"]) * t_h + (abs(h["mean"]) + t_h) * t_s


def verdict(n: int, est: dict, *, delta: "float | None" = None) -> dict:
    """Per-norm gap between IP and the net's target at depth 2: Cov(S, h)/P − CI against the
    centred ceiling K_n + 2^{1−n} (module docstring).  ``rho_h_per_norm`` (uncentred) is
    reported, not used."""
    P = float(est["path_norm"])
    K = centred_ceiling_per_norm(n)
    target = est.get("target", "the target")
    gap = f"per-norm gap between IP and {target} at depth 2"
    if P <= 0:
        return {"ceiling_per_norm": K, "cov_per_norm": None, "ci_per_norm": None,
                "rho_h_per_norm": None, "certified": False, "text": f"{gap}: not yet (P = 0)"}
    cov, t = centred_interval(est, delta)
    r, t = cov / P, t / P
    if target == "ip":                    # the theorem applied to an IP net: a bug check only
        inside = abs(r) - t <= K
        return {"ceiling_per_norm": K, "cov_per_norm": r, "ci_per_norm": t,
                "rho_h_per_norm": est["rho_h"]["mean"] / P, "certified": False,
                "text": (f"IP net (a check of the theorem, not evidence): |Cov(S,h)|/P − CI = "
                         f"{abs(r) - t:.4f} {'<=' if inside else '>'} centred ceiling {K:.4f}"
                         + ("" if inside else ": VIOLATES the proven ceiling, a bug"))}
    ok = r - t > K
    return {"ceiling_per_norm": K, "cov_per_norm": r, "ci_per_norm": t,
            "rho_h_per_norm": est["rho_h"]["mean"] / P, "certified": bool(ok),
            "text": (f"{gap}: {'certified' if ok else 'not yet'}: Cov(S,h)/P − CI = {r:.4f} − "
                     f"{t:.4f} = {r - t:.4f} {'>' if ok else '<='} centred ceiling {K:.4f}")}


def seeds_verdict(n: int, estimates: list, *, delta: "float | None" = None,
                  nets: "int | None" = None) -> dict:
    """Verdict over several nets of one cell (seeds), honest about picking the best of them.

    Each net's centred interval is recomputed from its stored moments at level 1 − δ/``nets``
    (Bonferroni; ``nets`` defaults to ``len(estimates)``, δ to the estimates' own).  By the union
    bound all ``nets`` intervals hold together with probability ≥ 1 − δ, so:

    * best: the net with the largest lower bound (Cov − t)/P; "certified" when it exceeds the
      centred ceiling K_n + 2^{1−n} (the choice of the net is covered by the correction);
    * median: the median over seeds of Cov/P with [median of the lower bounds, median of the upper
      bounds], which contains the median of the nets' true values whenever every interval holds;
      "median_certified" when its lower end exceeds the ceiling.
    """
    from statistics import median

    n = check_int(n, name="n", minimum=1, what="bits per party")
    if not estimates:
        raise InvalidArgumentError("estimates must hold at least one estimate (one per seed)")
    delta = float(estimates[0]["delta"]) if delta is None else delta
    if not 0 < delta < 1:
        raise InvalidArgumentError(f"delta must lie in (0, 1), got {delta}")
    nets = len(estimates) if nets is None else check_int(
        nets, name="nets", minimum=len(estimates), what="nets the correction divides δ by")
    d = delta / nets
    K = centred_ceiling_per_norm(n)
    per = []
    for e in estimates:
        P = float(e["path_norm"])
        if P > 0:
            cov, t = centred_interval(e, d)
            r = cov / P
            per.append({"cov_per_norm": r, "ci_per_norm": t / P, "lower": r - t / P,
                        "upper": r + t / P, "rho_h_per_norm": e["rho_h"]["mean"] / P})
        else:                                          # P = 0: h = 0 exactly, nothing to claim
            per.append({"cov_per_norm": 0.0, "ci_per_norm": 0.0, "lower": 0.0, "upper": 0.0,
                        "rho_h_per_norm": 0.0})
    best = max(range(len(per)), key=lambda i: per[i]["lower"])
    med = {k: float(median(p[k] for p in per)) for k in ("cov_per_norm", "lower", "upper")}
    ok, ok_med = per[best]["lower"] > K, med["lower"] > K
    b = per[best]
    target = estimates[0].get("target", "the target")
    return {"ceiling_per_norm": K, "seeds": len(estimates), "delta": delta, "nets": nets,
            "delta_per_net": d,
            "correction": f"Bonferroni: each interval at level 1 - delta/{nets}, so all hold "
                          f"together with probability >= 1 - delta; best = largest lower bound",
            "per_seed": per, "best_index": best, "best": dict(b), "median": med,
            "certified": bool(ok), "median_certified": bool(ok_med),
            "text": (f"per-norm gap between IP and {target} at depth 2: "
                     f"{'certified' if ok else 'not yet'} (best of {len(estimates)}, δ/{nets}): "
                     f"Cov(S,h)/P − CI = {b['cov_per_norm']:.4f} − {b['ci_per_norm']:.4f} = "
                     f"{b['lower']:.4f} {'>' if ok else '<='} centred ceiling {K:.4f}; median "
                     f"{med['cov_per_norm']:.4f} [{med['lower']:.4f}, {med['upper']:.4f}]")}
