"""Step 4 (THEORY §4.5, §4.7): the chain of inequalities, each stated with its numbers.

average accuracy (MSE <= 1/4 - γ) -> ρ >= 2γ -> quantisation keeps ρ_q > 0 -> uniform margin
after k copies -> sign(M_k) = H everywhere -> rank M_k <= k(1 + sum_i min(K_i^A, K_i^B)) <=
k(1 + wK) -> Forster 2^{n/2} <= sign-rank(H) <= rank M_k -> implied width lower bound; and the
correlation route of §4.7 as an independent cross-check.  An inequality that fails is reported
with the offending input, never dropped.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from networks.reduction.selfreduce import hoeffding_k, ip_sign_matrix, numerical_rank

__all__ = ["Inequality", "Certificate", "certify", "correlation_width_bound",
           "correlation_bound", "MAX_RANK_BITS"]

#: Largest n for which numerical ranks (dense SVD of 2^n x 2^n) are computed.
MAX_RANK_BITS = 10


@dataclass(frozen=True)
class Inequality:
    """One link of the chain: ``lhs relation rhs`` with its verdict.

    ``offending`` names the input that breaks it (e.g. the pair (a, b) with the worst margin)
    when ``holds`` is False; ``kind`` is "checked" (verified on numbers), "implied" (a bound
    derived from checked links) or "info".
    """

    name: str
    statement: str
    lhs: float
    relation: str
    rhs: float
    holds: bool
    kind: str = "checked"
    note: str = ""
    offending: "dict | None" = None

    def to_dict(self) -> dict:
        return {"name": self.name, "statement": self.statement, "lhs": self.lhs,
                "relation": self.relation, "rhs": self.rhs, "holds": bool(self.holds),
                "kind": self.kind, "note": self.note, "offending": self.offending}


def _ineq(name, statement, lhs, relation, rhs, *, kind="checked", note="", offending=None):
    lhs, rhs = float(lhs), float(rhs)
    ops = {"<=": lhs <= rhs, "<": lhs < rhs, ">=": lhs >= rhs, ">": lhs > rhs, "==": lhs == rhs}
    holds = bool(ops[relation])
    return Inequality(name, statement, lhs, relation, rhs, holds, kind, note,
                      None if holds else offending)


def correlation_bound(n: int, width: int, B: float, S: float, TV: float, c: float) -> float:
    """RHS of |E_μ[H N]| <= B 2^{-n} + wB(S_σ 2^{-n} + TV_R(σ) c 2^{-n/2}) (THEORY §4.7)."""
    return B * 2.0 ** -n + width * B * (S * 2.0 ** -n + TV * c * 2.0 ** (-n / 2))


def correlation_width_bound(n: int, gamma: float, B: float, S: float, TV: float,
                            c: "float | None" = None) -> float:
    """w >= (γ - 2^{-n-1}(1 + 2B)) / (B(TV_R(σ) c 2^{-n/2} + S_σ 2^{-n})) (THEORY §4.7).

    ``c`` defaults to n + 1 (real bottom weights).  Negative means vacuous.

    >>> round(correlation_width_bound(20, 0.1, 1.0, 1.0, 2.0), 3)
    2.438
    """
    c = float(n + 1) if c is None else float(c)
    return (gamma - 2.0 ** (-n - 1) * (1 + 2 * B)) / (B * (TV * c * 2.0 ** (-n / 2) + S * 2.0 ** -n))


@dataclass(frozen=True, eq=False)
class Certificate:
    """The chain of inequalities with numbers, the implied width lower bounds and failures."""

    n: int
    width: int
    activation: str
    inequalities: tuple
    bounds: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return all(i.holds for i in self.inequalities if i.kind != "info")

    @property
    def failures(self) -> list:
        return [i for i in self.inequalities if not i.holds and i.kind != "info"]

    def table(self) -> str:
        rows = [f"{'link':<22} {'statement':<48} {'lhs':>12} {'':2} {'rhs':>12}  verdict"]
        for i in self.inequalities:
            verdict = "ok" if i.holds else ("FAILS" if i.kind != "info" else "-")
            rows.append(f"{i.name:<22} {i.statement:<48} {i.lhs:>12.5g} {i.relation:2} "
                        f"{i.rhs:>12.5g}  {verdict}" + (f"  {i.offending}" if i.offending else ""))
        return "\n".join(rows)

    def to_dict(self) -> dict:
        return {"n": self.n, "width": self.width, "activation": self.activation, "ok": self.ok,
                "inequalities": [i.to_dict() for i in self.inequalities],
                "failures": [i.name for i in self.failures], "bounds": dict(self.bounds)}


def _forster(M: np.ndarray, n: int) -> tuple[float, str]:
    """Forster's bound √(pq)/‖S‖₂ (circuits.analysis.bounds) for S = sign(M_k), or for H itself when
    M_k has a zero entry; rounded up to the least integer consistent with it (a rank is an
    integer)."""
    from circuits.analysis.bounds import forster_sign_rank_bound

    S = np.sign(M)
    source = "circuits.analysis.bounds.forster_sign_rank_bound(sign(M_k))"
    if not np.isin(S, (-1.0, 1.0)).all():
        S = ip_sign_matrix(n)
        source = "circuits.analysis.bounds.forster_sign_rank_bound(H) (M_k has zero entries)"
    bound = forster_sign_rank_bound(S)
    return float(bound.inputs["ceil"]), source + f" = {bound.value:.6g}, rounded up"


def certify(*, n: int, width: int, mse: float, quantised, reduction, circuit=None,
            delta: float = 0.5) -> Certificate:
    """Assemble the chain of THEORY §4.5 / §4.7 with the measured numbers.

    Parameters
    ----------
    n, width : int
    mse : float
        E_μ0 (N - f_d)² of the original network on the support.
    quantised : QuantisedNetwork
    reduction : SelfReduction
        Computed from ``quantised.value_matrix()``.
    circuit : CircuitReduction, optional
    delta : float
        Failure probability in the Hoeffding k.
    """
    qn = quantised
    parts = qn.network
    act = parts.activation
    B = qn.weight_bound
    H = ip_sign_matrix(n)
    out = []
    gamma = 0.25 - mse
    best_const = 0.25 - 4.0 ** (-n - 1)
    out.append(_ineq("accuracy", "MSE_μ0(N, f_d) < 1/4 - 4^{-n-1} (best constant)", mse, "<",
                     best_const, note=f"γ = 1/4 - MSE = {gamma:.5g}"))
    out.append(_ineq("correlation", "ρ = E[H·Ñ] >= 2γ", qn.rho, ">=", 2 * gamma,
                     note="E(Ñ-H)² = 4·MSE and = EÑ² - 2ρ + 1"))
    V0 = qn.value_matrix(original=True)
    Vq = qn.value_matrix()
    diff = np.abs(Vq - V0)
    a, b = divmod(int(np.argmax(diff)), 1 << n)
    out.append(_ineq("quantisation", "max|Ñ_q - Ñ| <= 2·(proven |ΔN|)", diff.max(), "<=",
                     2 * qn.change_bound, note=f"η = {qn.eta:.4g}",
                     offending={"a": a, "b": b, "change": float(diff.max())}))
    out.append(_ineq("margin kept", "ρ_q >= ρ - 2·(proven |ΔN|) > 0", qn.rho_q, ">=",
                     max(qn.rho - 2 * qn.change_bound, 0.0)))
    if circuit is not None:
        d = np.abs(circuit.values - qn.values)
        k0 = int(np.argmax(d))
        out.append(_ineq("staircase", "max|N_C - N_q| <= proven staircase error", d.max(), "<=",
                         circuit.stair_bound, offending={"a": k0 & ((1 << n) - 1), "b": k0 >> n}))
        bad = np.flatnonzero((circuit.circuit_bits != (circuit.values >= 0.5))
                             & (np.abs(circuit.values - 0.5) > circuit.top_rounding_bound))
        out.append(_ineq("integer circuit", "#{circuit != [N_C >= 1/2], off the rounding band}",
                         bad.size, "==", 0, note=f"{circuit.n_undecided} points in the band",
                         offending=({"a": int(bad[0]) & ((1 << n) - 1), "b": int(bad[0]) >> n}
                                    if bad.size else None)))
    red = reduction
    k = red.k
    k_emp = hoeffding_k(red.M_emp, red.rho, n, delta=delta) if red.rho > 0 else math.inf
    S = act.sup_abs(qn.network.radius_global + 1.0)
    M_theory = 1 + 2 * B * (1 + width * S)
    k_theory = hoeffding_k(M_theory, red.rho, n, delta=delta) if red.rho > 0 else math.inf
    wa, wb = red.worst_pair
    out.append(_ineq("copies", "k >= Hoeffding k with M_emp (§4.4)", k, ">=", k_emp, kind="info",
                     note=f"with M = 1 + 2B(1 + wS_σ) = {M_theory:.4g}: k = {k_theory}; least "
                          f"working k = {red.least_k}"))
    if k >= k_emp:
        out.append(_ineq("uniform margin", "min H·M_k >= 3ρ_q/4 (Hoeffding, prob >= 1-δ)",
                         red.min_margin, ">=", 0.75 * red.rho,
                         offending={"a": wa, "b": wb, "margin": red.min_margin}))
    out.append(_ineq("margin > 0", "min_{a,b} H·M_k > 0 over all 4^n pairs", red.min_margin, ">",
                     0.0, offending={"a": wa, "b": wb, "margin": red.min_margin}))
    out.append(_ineq("sign(M_k) = IP", "#{(a,b): sign(M_k) != H}", red.n_sign_errors, "==", 0,
                     offending={"a": wa, "b": wb}))
    rank_bound_V = qn.rank_bound
    bounds = {"gamma": gamma, "rho": qn.rho, "rho_q": qn.rho_q, "k": k, "k_hoeffding_emp": k_emp,
              "k_hoeffding_theory": k_theory, "M_emp": red.M_emp, "M_theory": M_theory,
              "least_k": red.least_k, "K": qn.K, "K_bound_theory": qn.K_bound,
              "rank_bound_V": rank_bound_V, "rank_bound_Mk": k * rank_bound_V,
              "rank_bound_Mk_wK": k * (1 + width * qn.K)}
    forster, forster_src = _forster(red.M, n)
    bounds["forster"] = forster
    if n <= MAX_RANK_BITS:
        rank_V = numerical_rank(Vq)
        rank_M = numerical_rank(red.M)
        bounds.update(rank_V=rank_V, rank_Mk=rank_M)
        out.append(_ineq("rank V", "rank V <= 1 + sum_i min(K_i^A, K_i^B)", rank_V, "<=",
                         rank_bound_V, note="SVD, rtol 1e-9"))
        out.append(_ineq("rank M_k", "rank M_k <= k(1 + sum_i min(K_i^A, K_i^B))", rank_M, "<=",
                         k * rank_bound_V, note=f"<= k(1 + wK) = {k * (1 + width * qn.K)}"))
        out.append(_ineq("Forster", "2^{n/2} <= sign-rank(H) <= rank M_k", forster, "<=", rank_M,
                         note=forster_src, offending={"rank_Mk": rank_M}))
    else:
        out.append(_ineq("rank", f"numerical ranks skipped (n > {MAX_RANK_BITS})", 0, "==", 0,
                         kind="info"))
    # implied width lower bounds
    K = max(qn.K, 1)
    w_measured = (forster / k - 1) / K
    k_th = k_theory if math.isfinite(k_theory) else math.inf
    w_theory = (forster / k_th - 1) / qn.K_bound if math.isfinite(k_th) else -math.inf
    bounds.update(width_bound_measured=w_measured, width_bound_theory=w_theory)
    out.append(_ineq("width (chain, measured)", "w >= (2^{n/2}/k - 1)/K", width, ">=",
                     w_measured, kind="implied",
                     note="uses this run's k and K; the chain proves it for every net of this kind"))
    out.append(_ineq("width (chain, §4.0)", "w >= (2^{n/2}/k_th - 1)/(2m⌈B/η⌉+1)", width, ">=",
                     w_theory, kind="implied", note="worst-case constants (pitfall 9)"))
    # §4.7 correlation route
    R = qn.network.radius_global
    TV = act.total_variation(R)
    S_R = act.sup_abs(R)
    corr = abs(float(np.mean(H * (qn.value_matrix(original=True) - 1.0) / -2.0)))
    rhs = correlation_bound(n, width, B, S_R, TV, n + 1)
    w_corr = correlation_width_bound(n, gamma, B, S_R, TV)
    bounds.update(correlation_E_HN=corr, correlation_rhs=rhs, width_bound_correlation=w_corr,
                  B=B, R=R, S_sigma=S_R, TV_sigma=TV)
    out.append(_ineq("§4.7 gate lemma", "|E[H·N]| <= B2^-n + wB(S2^-n + TV(n+1)2^-n/2)", corr,
                     "<=", rhs))
    out.append(_ineq("width (§4.7)", "w >= (γ - 2^{-n-1}(1+2B))/(B(TV c 2^{-n/2} + S 2^{-n}))",
                     width, ">=", w_corr, kind="implied"))
    return Certificate(n=n, width=width, activation=act.name, inequalities=tuple(out),
                       bounds=bounds)
