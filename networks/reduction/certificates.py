"""Step 4 (THEORY §4.5, §4.7): the chain of inequalities, each stated with its numbers.

average accuracy (MSE <= 1/4 - γ) -> ρ = 2γ + E[Ñ²]/2 (an identity) -> quantisation keeps ρ_q > 0 -> uniform margin
after k copies -> sign(M_k) = H everywhere -> rank M_k <= k(1 + sum_i min(K_i^A, K_i^B)) <=
k(1 + wK) -> Forster 2^{n/2} <= sign-rank(H) <= rank M_k -> implied width lower bound; and the
correlation route of §4.7 as an independent cross-check.  An inequality that fails is reported
with the offending input, never dropped.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from circuits.analysis import numerical_rank
from networks.reduction.concentration import hoeffding_k
from networks.reduction.product import ip_signs

__all__ = ["Inequality", "Certificate", "certify", "correlation_width_bound",
           "correlation_bound", "MAX_RANK_BITS"]

#: Largest n for which numerical ranks (dense SVD of 2^n x 2^n) are computed.
MAX_RANK_BITS = 10


@dataclass(frozen=True)
class Inequality:
    """One link of the chain: ``lhs relation rhs`` with its verdict.

    ``offending`` names the input that breaks it (e.g. the pair (a, b) with the worst margin)
    when ``holds`` is False; ``kind`` is "checked" (verified on numbers), "implied" (a bound
    derived from checked links), "identity" (an equation true for every predictor, shown with
    both sides; it fails only on rounding), "automatic" (true as soon as an earlier link holds,
    e.g. Forster's bound once sign(M_k) = H) or "info".  ``vacuous`` marks a link that holds
    but bounds nothing: a width lower bound below 1 (every network has w >= 1), or the §4.7
    gate lemma when its right-hand side at width 1 already allows the measured correlation (it
    rules out no width); ``by_dimension`` a rank link whose right-hand side is at least 2^n.
    Neither counts as evidence (:meth:`Certificate.counts`).
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
    by_dimension: bool = False
    vacuous: bool = False

    @property
    def informative(self) -> bool:
        """Holds, was checked on numbers or implied by checked links, and bounds something."""
        return (self.holds and self.kind in ("checked", "implied") and not self.by_dimension
                and not self.vacuous)

    @property
    def label(self) -> str:
        """Why the link holds (or that it fails): the verdict column of the table."""
        if not self.holds:
            return "FAILS" if self.kind != "info" else "-"
        if self.by_dimension:
            return "ok (by dimension only)"
        if self.vacuous:
            why = self.note.split(";")[0][len("vacuous: "):] if self.note.startswith(
                "vacuous: ") else ""
            return "vacuous" + (f" ({why})" if why else "")
        return {"identity": "identity (true for every predictor)",
                "automatic": "automatic (sign(M_k) = H)", "info": "-"}.get(self.kind, "ok")

    def to_dict(self) -> dict:
        return {"name": self.name, "statement": self.statement, "lhs": self.lhs,
                "relation": self.relation, "rhs": self.rhs, "holds": bool(self.holds),
                "kind": self.kind, "note": self.note, "offending": self.offending,
                "by_dimension": self.by_dimension, "vacuous": self.vacuous,
                "informative": self.informative, "verdict": self.label}


#: Relative tolerance of an identity link (both sides are exact sums of the same 4^n floats).
IDENTITY_RTOL = 1e-9


def _ineq(name, statement, lhs, relation, rhs, *, kind="checked", note="", offending=None,
          by_dimension=False, vacuous=False):
    lhs, rhs = float(lhs), float(rhs)
    same = abs(lhs - rhs) <= IDENTITY_RTOL * max(1.0, abs(lhs), abs(rhs))
    ops = {"<=": lhs <= rhs, "<": lhs < rhs, ">=": lhs >= rhs, ">": lhs > rhs,
           "==": same if kind == "identity" else lhs == rhs}
    holds = bool(ops[relation])
    return Inequality(name, statement, lhs, relation, rhs, holds, kind, note,
                      None if holds else offending, bool(by_dimension), bool(vacuous))


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

    def counts(self) -> dict:
        """How many links are informative (hold and bound something), vacuous, by dimension
        only, identities, automatic, and how many fail; ``info`` rows are not links."""
        links = [i for i in self.inequalities if i.kind != "info"]
        return {"informative": sum(i.informative for i in links),
                "vacuous": sum(i.holds and i.vacuous and not i.by_dimension for i in links),
                "by_dimension": sum(i.holds and i.by_dimension for i in links),
                "identity": sum(i.holds and i.kind == "identity" for i in links),
                "automatic": sum(i.holds and i.kind == "automatic" for i in links),
                "failed": sum(not i.holds for i in links)}

    def headline(self) -> str:
        """One line that counts only informative links as support (failures first)."""
        c = self.counts()
        rest = ", ".join(f"{c[k]} {name}" for k, name in
                         (("vacuous", "vacuous"), ("by_dimension", "by dimension only"),
                          ("automatic", "automatic"), ("identity", "identity")) if c[k])
        fails = ", ".join(i.name for i in self.failures)
        return (f"informative links: {c['informative']} hold" + (f" (not counted: {rest})"
                                                                 if rest else "")
                + (f"; FAILED: {fails}" if fails else "; none fails"))

    def table(self) -> str:
        rows = [f"{'link':<22} {'statement':<48} {'lhs':>12} {'':2} {'rhs':>12}  verdict"]
        for i in self.inequalities:
            rows.append(f"{i.name:<22} {i.statement:<48} {i.lhs:>12.5g} {i.relation:2} "
                        f"{i.rhs:>12.5g}  {i.label}" + (f"  {i.offending}" if i.offending else ""))
        return "\n".join(rows)

    def to_dict(self) -> dict:
        return {"n": self.n, "width": self.width, "activation": self.activation, "ok": self.ok,
                "counts": self.counts(),
                "inequalities": [i.to_dict() for i in self.inequalities],
                "failures": [i.name for i in self.failures], "bounds": dict(self.bounds)}


def _forster(red, n: int) -> tuple[float, str]:
    """Forster's bound √(pq)/‖S‖₂ (circuits.analysis.bounds) for S = sign(M_k), rounded up to the least
    integer consistent with it.  When sign(M_k) = H everywhere S is the Hadamard matrix, whose
    bound is exactly 2^{n/2} (THEORY §1.1), so no SVD is needed; otherwise the SVD of sign(M_k)
    (n <= MAX_RANK_BITS), or H's bound with a note."""
    from circuits.analysis.bounds import forster_sign_rank_bound

    if red.sign_agrees_everywhere:
        value = 2.0 ** (n / 2)
        return float(math.ceil(value * (1 - 1e-9))), (f"sign(M_k) = H, Forster for H_{{2^n}}: "
                                                       f"2^(n/2) = {value:.6g}, rounded up")
    if n > MAX_RANK_BITS:
        value = 2.0 ** (n / 2)
        return float(math.ceil(value * (1 - 1e-9))), ("sign(M_k) != H somewhere; bound of H "
                                                       "itself (no SVD at this n)")
    S = np.sign(red.M)
    source = "circuits.analysis.bounds.forster_sign_rank_bound(sign(M_k))"
    if not np.isin(S, (-1.0, 1.0)).all():
        S = ip_signs(n)
        source = "circuits.analysis.bounds.forster_sign_rank_bound(H) (M_k has zero entries)"
    bound = forster_sign_rank_bound(S)
    return float(bound.inputs["ceil"]), source + f" = {bound.value:.6g}, rounded up"


def _accuracy_links(n, mse, qn):
    gamma = 0.25 - mse
    best_const = 0.25 - 4.0 ** (-n - 1)
    diff = np.abs(qn.table - qn.table_original)
    a, b = divmod(int(np.argmax(diff)), 1 << n)
    return [
        _ineq("accuracy", "MSE_μ0(N, f_d) < 1/4 - 4^{-n-1} (best constant)", mse, "<",
              best_const, note=f"γ = 1/4 - MSE = {gamma:.5g}"),
        _ineq("correlation", "ρ = 2γ + E[Ñ²]/2", qn.rho, "==",
              2 * gamma + qn.metrics_original.second_moment / 2, kind="identity",
              note="E(Ñ-H)² = 4·MSE = EÑ² - 2ρ + 1, so ρ >= 2γ for every predictor: "
                   "an identity, not evidence"),
        _ineq("quantisation", "max|Ñ_q - Ñ| <= 2·(proven |ΔN|)", 2 * diff.max(), "<=",
              2 * qn.change_bound, note=f"η = {qn.eta:.4g}",
              offending={"a": a, "b": b, "change": float(2 * diff.max())}),
        _ineq("margin kept", "ρ_q >= ρ - 2·(proven |ΔN|) > 0", qn.rho_q, ">=",
              max(qn.rho - 2 * qn.change_bound, 0.0)),
    ]


def _circuit_links(n, qn, circuit):
    d = np.abs(circuit.table - qn.table)
    a0, b0 = divmod(int(np.argmax(d)), 1 << n)
    bad = np.argwhere(((circuit.bits_table == 1) != (circuit.table >= 0.5))
                      & (np.abs(circuit.table - 0.5) > circuit.top_rounding_bound))
    return [
        _ineq("staircase", "max|N_C - N_q| <= proven staircase error", d.max(), "<=",
              circuit.stair_bound, offending={"a": a0, "b": b0}),
        _ineq("integer circuit", "#{circuit != [N_C >= 1/2], off the rounding band}",
              len(bad), "==", 0, note=f"{circuit.n_undecided} points in the band",
              offending=({"a": int(bad[0][0]), "b": int(bad[0][1])} if len(bad) else None)),
        _ineq("circuit vs network", "#{circuit != [N >= 1/2], off |N - 1/2| <= proven band}",
              circuit.n_disagree_network_outside_band, "==", 0,
              note=f"{circuit.n_disagree_network} disagreements with the network's own "
                   f"classification, each must lie in |N - 1/2| <= {circuit.network_band:.3g}"),
    ]


def _copy_links(red):
    wa, wb = red.worst_pair
    out = [_ineq("copies", "k used vs Bernstein k for H·M_k >= 3ρ/4 (§4.8)", red.k, ">=",
                 red.bernstein_k if red.bernstein_k is not None else math.inf, kind="info",
                 note=f"{red.k_rule}; Hoeffding k = {red.hoeffding_k}; least working k = "
                      f"{red.least_k} ({red.least.method})")]
    for rule, kk in (("Bernstein", red.bernstein_k), ("Hoeffding", red.hoeffding_k)):
        if kk is not None and red.k >= kk:
            out.append(_ineq("uniform margin", f"min H·M_k >= 3ρ/4 ({rule}, prob >= 1-δ)",
                             red.min_margin, ">=", 0.75 * red.rho,
                             offending={"a": wa, "b": wb, "margin": red.min_margin}))
            break
    out.append(_ineq("margin > 0", "min_{a,b} H·M_k > 0 over all 4^n pairs", red.min_margin, ">",
                     0.0, offending={"a": wa, "b": wb, "margin": red.min_margin}))
    out.append(_ineq("sign(M_k) = IP", "#{(a,b): sign(M_k) != H}", red.n_sign_errors, "==", 0,
                     offending={"a": wa, "b": wb}))
    return out


def _rank_links(n, width, qn, red, bounds):
    k = red.k
    full = 1 << n
    rank_bound_V = qn.rank_bound
    forster, forster_src = _forster(red, n)
    bounds.update(forster=forster, rank_bound_V=rank_bound_V, rank_bound_Mk=k * rank_bound_V,
                  rank_bound_Mk_wK=k * (1 + width * qn.K), K=qn.K, K_bound_theory=qn.K_bound,
                  rank_V_by_dimension=rank_bound_V >= full,
                  rank_Mk_by_dimension=k * rank_bound_V >= full)
    if n > MAX_RANK_BITS:
        return [_ineq("rank", f"numerical ranks skipped (n > {MAX_RANK_BITS}: dense SVD)", 0, "==",
                      0, kind="info")]
    rank_V = numerical_rank(qn.value_matrix())
    rank_M = numerical_rank(red.M)
    bounds.update(rank_V=rank_V, rank_Mk=rank_M)
    dim_note = f"; rhs >= 2^n = {full}: holds for any {full}x{full} matrix"
    return [
        _ineq("rank V", "rank V <= 1 + sum_i min(K_i^A, K_i^B)", rank_V, "<=", rank_bound_V,
              note="SVD, rtol 1e-9" + (dim_note if rank_bound_V >= full else ""),
              by_dimension=rank_bound_V >= full),
        _ineq("rank M_k", "rank M_k <= k(1 + sum_i min(K_i^A, K_i^B))", rank_M, "<=",
              k * rank_bound_V, note=f"<= k(1 + wK) = {k * (1 + width * qn.K)}"
              + (dim_note if k * rank_bound_V >= full else ""),
              by_dimension=k * rank_bound_V >= full),
        _forster_link(red, forster, forster_src, rank_M),
    ]


def _forster_link(red, forster, source, rank_M):
    """Forster's row.  With sign(M_k) = H it is 2^{n/2} <= sign-rank(H) <= rank M_k
    (automatic); otherwise the value is Forster's bound for the matrix sign(M_k), not for H, and
    the row says so (it bounds sign-rank(sign(M_k)) <= rank M_k, nothing about IP)."""
    if red.sign_agrees_everywhere:
        return _ineq("Forster", "2^{n/2} <= sign-rank(H) <= rank M_k", forster, "<=", rank_M,
                     note=source, offending={"rank_Mk": rank_M}, kind="automatic")
    if "forster_sign_rank_bound(H)" in source:            # M_k has zeros: H's bound, no link
        return _ineq("Forster (of H)", "2^{n/2} <= sign-rank(H); sign(M_k) has zeros",
                     forster, "<=", rank_M, note=source, kind="info")
    return _ineq("Forster, sign(M_k)", "Forster(sign M_k) <= sign-rank(sign M_k) <= rank M_k",
                 forster, "<=", rank_M, note=source + "; sign(M_k) != H: a bound for sign(M_k), "
                 "not for IP", offending={"rank_Mk": rank_M})


def _width_links(n, width, gamma, qn, red, bounds):
    act = qn.network.activation
    B = qn.weight_bound
    K = max(qn.K, 1)
    k = red.k
    S = act.sup_abs(qn.network.radius_global + 1.0)
    M_theory = 1 + 2 * B * (1 + width * S)
    k_th = hoeffding_k(M_theory, red.rho, n) if red.rho > 0 else math.inf
    w_measured = (bounds["forster"] / k - 1) / K
    w_theory = (bounds["forster"] / k_th - 1) / qn.K_bound if math.isfinite(k_th) else -math.inf
    R = qn.network.radius_global
    TV = act.total_variation(R)
    S_R = act.sup_abs(R)
    corr = abs((2.0 ** -n - qn.rho) / 2.0)                  # |E[H·N]|, N = (1 - Ñ)/2
    rhs = correlation_bound(n, width, B, S_R, TV, n + 1)
    w_corr = correlation_width_bound(n, gamma, B, S_R, TV)
    bounds.update(M_theory=M_theory, k_hoeffding_theory=k_th, width_bound_measured=w_measured,
                  width_bound_theory=w_theory, correlation_E_HN=corr, correlation_rhs=rhs,
                  width_bound_correlation=w_corr, B=B, R=R, S_sigma=S_R, TV_sigma=TV)
    below1 = "vacuous: rhs < 1; every network has w >= 1"
    gate_loose = w_corr < 1            # its rhs at width 1 already allows the needed correlation
    return [
        _ineq("width (chain, measured)", "w >= (2^{n/2}/k - 1)/K", width, ">=", w_measured,
              kind="implied", vacuous=w_measured < 1,
              note=(below1 + "; " if w_measured < 1 else "")
              + "uses this run's k and K; the chain proves it for every net of this kind"),
        _ineq("width (chain, §4.0)", "w >= (2^{n/2}/k_th - 1)/(2m⌈B/η⌉+1)", width, ">=",
              w_theory, kind="implied", vacuous=w_theory < 1,
              note=(below1 + "; " if w_theory < 1 else "") + "worst-case constants (pitfall 9)"),
        _ineq("§4.7 gate lemma", "|E[H·N]| <= B2^-n + wB(S2^-n + TV(n+1)2^-n/2)", corr, "<=",
              rhs, vacuous=gate_loose,
              note=("vacuous: allows width 1; at width 1 the rhs already allows the correlation "
                    "this accuracy needs, so it rules out no width" if gate_loose else "")),
        _ineq("width (§4.7)", "w >= (γ - 2^{-n-1}(1+2B))/(B(TV c 2^{-n/2} + S 2^{-n}))",
              width, ">=", w_corr, kind="implied", vacuous=w_corr < 1,
              note=below1 if w_corr < 1 else ""),
    ]


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
        Failure probability of the copy bounds (kept for the record; ``reduction`` has its own).

    Notes
    -----
    A rank link whose right-hand side is at least 2^n holds for every 2^n x 2^n matrix; it is
    marked ``by_dimension`` and printed as "ok (by dimension only)": it says nothing about the
    network (THEORY §4.8).
    """
    qn = quantised
    red = reduction
    gamma = 0.25 - mse
    out = _accuracy_links(n, mse, qn)
    if circuit is not None:
        out += _circuit_links(n, qn, circuit)
    out += _copy_links(red)
    bounds = {"gamma": gamma, "rho": qn.rho, "rho_q": qn.rho_q, "k": red.k,
              "k_rule": red.k_rule, "k_hoeffding_emp": red.hoeffding_k,
              "k_bernstein_emp": red.bernstein_k, "M_emp": red.M_emp, "variance": red.variance,
              "least_k": red.least_k, "delta": delta}
    out += _rank_links(n, width, qn, red, bounds)
    out += _width_links(n, width, gamma, qn, red, bounds)
    return Certificate(n=n, width=width, activation=qn.network.activation.name,
                       inequalities=tuple(out), bounds=bounds)
