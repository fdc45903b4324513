"""Step 2 (THEORY §4.2): quantise the bottom weights and build the integer threshold circuit.

Bottom weights are rounded to the grid ηZ, w̃_i = η q_i with q_i integer.  On the hard instance's
support x_{a,b} = (Φ(a), Φ(b)), Φ(a)_j = (2C(a)_j - 1)/√(2m), so

    <w̃_i, x_{a,b}> = (η/√(2m)) (α_i(a) + β_i(b)),   α_i(a) = sum_{j<m} q_ij (2C(a)_j - 1),

with integers α, β (β over Bob's coordinates m..2m-1).  Hence every σ-neuron on the support is a
function of two integers and K_i^A = #{α_i(a)}, K_i^B = #{β_i(b)} are counted exactly (pitfall 8).
A gate [<w̃_i, x> + b_i >= θ] with θ on the lattice b_i + (η/√(2m))Z is the integer gate
[<q_i, c> >= ⌈(T + sum_j q_ij)/2⌉] over the 2m code bits c (s = α + β = 2<q_i, c> - sum_j q_ij).
The top layer is made integer by rounding *cumulative* heights along each neuron's chain of
gates (the gates that fire form a prefix), so the rounding error is <= ε/2 per chain.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from circuits.utils.errors import ReductionError
from circuits.utils.validation import check_real
from networks.reduction._common import Depth2Parts, depth2_parts, frozen
from networks.reduction.product import (ProductSupport, SupportMetrics, original_tables,
                                        product_support, quantised_tables)
from networks.reduction.stair import FLOAT_SLACK

__all__ = ["QuantisedNetwork", "quantise", "quantisation_grid", "support_code_bits",
           "jump_margin"]


def quantisation_grid(rho: float, width: int, B: float, L: float, m: int) -> float:
    """η = ρ/(8 w B L_σ √(2m)) of THEORY §4.2 (inf when L_σ = 0: steps need the κ rule).

    >>> round(quantisation_grid(0.5, 4, 1.0, 1.0, 8), 6)
    0.003906
    """
    if L == 0:
        return math.inf
    return rho / (8.0 * width * B * L * math.sqrt(2 * m))


def support_code_bits(C: np.ndarray, n: int, start: int = 0, stop: "int | None" = None):
    """Code-bit rows (2m,) of the support points k = a + 2^n b in [start, stop): [C(a), C(b)]."""
    stop = (1 << (2 * n)) if stop is None else stop
    k = np.arange(start, stop, dtype=np.int64)
    a = k & ((1 << n) - 1)
    b = k >> n
    return np.concatenate([C[a], C[b]], axis=1)


def jump_margin(A: np.ndarray, B: np.ndarray, c: np.ndarray, jumps) -> float:
    """κ = min over pairs (a, b) and neurons i of |A[a, i] + B[b, i] + c[i] - p| over the jump
    points p (inf if none): per neuron, a binary search of p - c_i - A[a, i] in sorted B[:, i],
    O(w·2^n log 2^n) instead of O(w·4^n)."""
    if not len(jumps):
        return math.inf
    kappa = math.inf
    for i in range(A.shape[1]):
        col = np.sort(B[:, i])
        for p in jumps:
            target = p - c[i] - A[:, i]
            j = np.searchsorted(col, target)
            left = np.abs(col[np.maximum(j - 1, 0)] - target)
            right = np.abs(col[np.minimum(j, col.size - 1)] - target)
            kappa = min(kappa, float(np.minimum(left, right).min()))
    return kappa


def _readonly(arr: np.ndarray) -> np.ndarray:
    """Mark a freshly built table read-only without copying it (tables can be 4^n entries)."""
    arr.setflags(write=False)
    return arr


def _max_abs_preactivation(A: np.ndarray, B: np.ndarray, c: np.ndarray) -> float:
    """max over pairs and neurons of |A[a, i] + B[b, i] + c_i| from per-party extremes."""
    hi = A.max(axis=0) + B.max(axis=0) + c
    lo = A.min(axis=0) + B.min(axis=0) + c
    return float(max(np.abs(hi).max(), np.abs(lo).max()))


@dataclass(frozen=True, eq=False)
class QuantisedNetwork:
    """The network with bottom weights on ηZ, evaluated exactly on the hard instance's support.

    Attributes
    ----------
    network : Depth2Parts
        The original network.
    support : ProductSupport
        The instance's support in product form (computed once per run).
    n, m : int
        Bits per party and code length.
    eta : float
        Grid η; the quantised weights are ``eta * q``.
    q : int64 (w, 2m)
        Integer bottom weights (|q| <= W = ⌈B/η⌉).
    alpha, beta : int64 (w, 2^n)
        α_i(a) and β_i(b) (integers; pre-activation = η/√(2m)·(α + β) + b_i).
    K_A, K_B : int64 (w,)
        Distinct values of α_i and β_i.
    change_bound : float
        Proven sup over the support of |N_q - N| (so |Ñ_q - Ñ| <= 2·change_bound).
    kappa : float
        Distance of the original support pre-activations to σ's jumps (inf if continuous).
    rho, rho_q : float
        ρ = E_μ[H Ñ] for the original and the quantised network.
    table, table_original : float64 (2^n, 2^n)
        N_q and N on the support as [a, b] tables (rows = Alice).
    metrics, metrics_original : SupportMetrics
        Exact MSE, ρ, accuracy, E[Ñ²] of both networks.
    """

    network: Depth2Parts = field(repr=False)
    support: ProductSupport = field(repr=False)
    n: int
    m: int
    eta: float
    q: np.ndarray = field(repr=False)
    alpha: np.ndarray = field(repr=False)
    beta: np.ndarray = field(repr=False)
    K_A: np.ndarray = field(repr=False)
    K_B: np.ndarray = field(repr=False)
    weight_bound: float
    lipschitz: float
    change_bound: float
    max_change: float
    kappa: float
    kappa_q: float
    table: np.ndarray = field(repr=False)
    table_original: np.ndarray = field(repr=False)
    metrics: SupportMetrics = field(repr=False)
    metrics_original: SupportMetrics = field(repr=False)
    steps: tuple = ()

    @property
    def rho(self) -> float:
        return self.metrics_original.rho

    @property
    def rho_q(self) -> float:
        return self.metrics.rho

    @property
    def code_bits(self) -> np.ndarray:
        return self.support.code_bits

    @property
    def values(self) -> np.ndarray:
        """N_q on the support in cube order k = a + 2^n b (a new array)."""
        return self.table.T.reshape(-1)

    @property
    def values_original(self) -> np.ndarray:
        """N on the support in cube order (a new array)."""
        return self.table_original.T.reshape(-1)

    @property
    def unit(self) -> float:
        """η/√(2m): the lattice spacing of every pre-activation on the support."""
        return self.eta / math.sqrt(2 * self.m)

    @property
    def W_int(self) -> int:
        """W = ⌈B/η⌉, the integer weight bound of §4.2."""
        return int(math.ceil(self.weight_bound / self.eta))

    @property
    def K_bound(self) -> int:
        """K <= 2m⌈B/η⌉ + 1 (THEORY §4.2)."""
        return 2 * self.m * self.W_int + 1

    @property
    def K(self) -> int:
        """max_i min(K_i^A, K_i^B): the measured K of the rank bookkeeping."""
        return int(np.minimum(self.K_A, self.K_B).max())

    @property
    def rank_bound(self) -> int:
        """1 + sum_i min(K_i^A, K_i^B) >= rank V (THEORY §4.5)."""
        return 1 + int(np.minimum(self.K_A, self.K_B).sum())

    def value_matrix(self, *, original: bool = False) -> np.ndarray:
        """V[a, b] = Ñ(x_{a,b}) = 1 - 2N on the support (rows = Alice), quantised by default."""
        return 1.0 - 2.0 * (self.table_original if original else self.table)

    def network_quantised(self):
        """The quantised network (weights η·q) as a :class:`networks.SigmaNetwork`."""
        parts = Depth2Parts(W=frozen(self.eta * self.q, np.float64), b=self.network.b,
                            u=self.network.u, u0=self.network.u0,
                            activation=self.network.activation)
        return parts.network()

    def summary(self) -> str:
        return "\n".join(self.steps)

    def to_dict(self) -> dict:
        return {"n": self.n, "m": self.m, "eta": self.eta, "W_int": self.W_int,
                "max_abs_q": int(np.abs(self.q).max()), "K": self.K, "K_bound": self.K_bound,
                "K_A": self.K_A.tolist(), "K_B": self.K_B.tolist(), "rank_bound": self.rank_bound,
                "lipschitz": self.lipschitz, "change_bound": self.change_bound,
                "max_change": self.max_change, "kappa": self.kappa, "kappa_q": self.kappa_q,
                "rho": self.rho, "rho_q": self.rho_q, "metrics": self.metrics.to_dict(),
                "metrics_original": self.metrics_original.to_dict(), "steps": list(self.steps)}


def _choose_eta(parts: Depth2Parts, *, rho, eta, rho_measured, B, L, m, kappa, lines):
    """η from ρ (THEORY §4.2) or the user's grid, capped by the κ rule for jumps (§4.6)."""
    act = parts.activation
    sq = math.sqrt(2 * m)
    if rho is None and eta is None:
        rho = rho_measured
        if rho <= 0:
            raise ReductionError(
                f"the network does not beat the trivial predictor on the support: ρ = E[H(1-2N)] "
                f"= {rho:.4g} <= 0 (THEORY §4.3 needs ρ >= 2γ > 0); train longer or wider, or pass "
                f"eta= explicitly")
    rho = check_real(rho, minimum=0, name="rho", allow_none=True)
    if eta is None:
        eta = quantisation_grid(rho, parts.width, B, L, m)
        lines.append(f"quantisation (THEORY §4.2): η = ρ/(8wBL√(2m)) = {rho:.4g}/(8·{parts.width}·"
                     f"{B:.4g}·{L:.4g}·{sq:.4g}) = {eta:.4g}")
    else:
        eta = check_real(eta, minimum=0, name="eta")
        lines.append(f"quantisation (THEORY §4.2): user grid η = {eta:.4g}")
    if act.jumps:
        if kappa <= 0:
            raise ReductionError(
                f"a support pre-activation lies exactly on a jump of {act.name} (κ = 0), so no "
                f"grid keeps the neurons' values (THEORY §4.6); use the correlation route "
                f"(networks.reduction.correlation_width_bound, §4.7) instead")
        eta_kappa = kappa / (2.0 * sq)
        if eta >= eta_kappa:
            lines.append(f"  discontinuous σ: κ = {kappa:.4g} needs η√(2m) < κ, so η := κ/(2√(2m))"
                         f" = {eta_kappa:.4g}")
            eta = eta_kappa
    return eta


def _integer_weights(parts: Depth2Parts, sup: ProductSupport, eta: float):
    """q = round(W/η) and the exact integers α_i(a) = <q_i^A, 2C(a) - 1>, β_i(b) likewise."""
    m = sup.m
    q_float = np.round(parts.W / eta)
    if np.abs(q_float).max() >= 2.0 ** 52 / (2 * m):
        raise ReductionError(f"η = {eta:.3g} is too fine for exact integers (|q| up to "
                             f"{np.abs(q_float).max():.3g}, 2m·|q| >= 2^52); pass a larger eta or "
                             f"rho")
    q = q_float.astype(np.int64)
    signs = 2 * sup.code_bits.astype(np.int64) - 1                      # (2^n, m) of ±1
    alpha = np.ascontiguousarray((signs @ q[:, :m].T).T)                # (w, 2^n) exact int64
    beta = np.ascontiguousarray((signs @ q[:, m:].T).T)
    return q, alpha, beta


def quantise(network, instance, *, rho: "float | None" = None, eta: "float | None" = None,
             weight_bound: "float | None" = None) -> QuantisedNetwork:
    """Round the bottom weights of a depth-2 network to ηZ and evaluate it on the support.

    Parameters
    ----------
    network : networks.SigmaNetwork
        Depth 2, input dimension d = 2m of the instance.
    instance : embeddings.HardInstance or ProductSupport
        Supplies n, m and the code (support x_{a,b} = (Φ(a), Φ(b))).
    rho : float, optional
        The margin ρ used to choose η = ρ/(8wBL_σ√(2m)); default: ρ = E_μ[H Ñ] measured on the
        support (must be > 0: the network must beat the trivial predictor).
    eta : float, optional
        Use this grid instead of the formula.
    weight_bound : float, optional
        The stated bound B on all weights (refused if exceeded); default: the network's B.

    Notes
    -----
    Discontinuous σ (THEORY §4.6): rounding moves every support pre-activation by at most
    η√(2m)/2; the neurons' values are unchanged if the margin κ between the support
    pre-activations and σ's jumps exceeds η√(2m), so η is capped at κ/(2√(2m)) (with κ = 0 a
    ReductionError says to use the correlation route §4.7 instead).  Both networks are evaluated
    on all 4^n points in product form (:func:`networks.reduction.value_table`).
    """
    sup = product_support(instance)
    n, m = sup.n, sup.m
    parts = depth2_parts(network, dim=2 * m, weight_bound=weight_bound)
    act = parts.activation
    B = float(weight_bound) if weight_bound is not None else parts.weight_bound
    sq = math.sqrt(2 * m)
    L = float(act.lipschitz(B * (sq + 1.0) + 1.0))
    V0, met0 = original_tables(parts, sup)
    zA = sup.XA @ parts.W[:, :m].T
    zB = sup.XB @ parts.W[:, m:].T
    kappa = jump_margin(zA, zB, parts.b, act.jumps)
    zmax = _max_abs_preactivation(zA, zB, parts.b)
    lines = []
    eta = _choose_eta(parts, rho=rho, eta=eta, rho_measured=met0.rho, B=B, L=L, m=m, kappa=kappa,
                      lines=lines)
    q, alpha, beta = _integer_weights(parts, sup, eta)
    K_A = np.array([np.unique(row).size for row in alpha], dtype=np.int64)
    K_B = np.array([np.unique(row).size for row in beta], dtype=np.int64)
    unit = eta / sq
    # quantised pre-activation unit·(α_i(a) + β_i(b)) + b_i: α + β is an exact integer
    Vq, met = quantised_tables(alpha, beta, unit, parts, n)
    kappa_q = jump_margin(unit * alpha.T.astype(np.float64), unit * beta.T.astype(np.float64),
                          parts.b, act.jumps)
    # proven change: |Δz| <= (η/2)||x||_1 = (η/2)√(2m) on the support; Lipschitz part only
    # (jumps do not move because κ > η√(2m)).
    dz = 0.5 * eta * sq
    radii = np.abs(parts.b) + np.linalg.norm(parts.W, axis=1) + dz
    L_i = np.array([act.lipschitz(r + 1e-300) for r in radii.tolist()])
    change_bound = float(np.abs(parts.u) @ (L_i * dz))
    scale = 1.0 + abs(parts.u0) + float(np.abs(parts.u).sum()) * (1.0 + zmax)
    change_bound += FLOAT_SLACK * scale
    max_change = float(np.abs(Vq - V0).max())
    W_int = int(math.ceil(B / eta))
    lines += [
        f"  integer bottom weights q = round(w/η): max|q| = {int(np.abs(q).max())} <= W = ⌈B/η⌉ = "
        f"{W_int}",
        f"  K_i = #distinct α_i(a) / β_i(b) on the grid: max_i min(K_A, K_B) = "
        f"{int(np.minimum(K_A, K_B).max())} <= 2m⌈B/η⌉ + 1 = {2 * m * W_int + 1}",
        f"  proven |N_q - N| <= sum_i |u_i| L_σ η√(2m)/2 = {change_bound:.4g} on the support "
        f"(measured {max_change:.4g}); ρ = {met0.rho:.4g} -> ρ_q = {met.rho:.4g} >= ρ - "
        f"2·bound = {met0.rho - 2 * change_bound:.4g}",
    ]
    if act.jumps:
        lines.append(f"  jumps: κ = {kappa:.4g} > η√(2m) = {eta * sq:.4g}: no neuron changes "
                     f"value (κ after rounding {kappa_q:.4g})")
    return QuantisedNetwork(
        network=parts, support=sup, n=n, m=m, eta=float(eta), q=frozen(q, np.int64),
        alpha=frozen(alpha, np.int64), beta=frozen(beta, np.int64), K_A=frozen(K_A, np.int64),
        K_B=frozen(K_B, np.int64), weight_bound=B, lipschitz=L, change_bound=change_bound,
        max_change=max_change, kappa=kappa, kappa_q=kappa_q, table=_readonly(Vq),
        table_original=_readonly(V0), metrics=met, metrics_original=met0,
        steps=tuple(lines))
