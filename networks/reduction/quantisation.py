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
import time
from dataclasses import dataclass, field

import numpy as np

from circuits.utils.errors import InvalidCircuitError, ReductionError
from circuits.functions import inner_product_mod2
from circuits.hypercube import as_matrix
from circuits.threshold import ThresholdCircuit, ThresholdLayer
from circuits.utils.validation import check_real
from networks.reduction._common import (Depth2Parts, depth2_parts, frozen,
                                        instance_code_bits)
from networks.reduction.stair import FLOAT_SLACK, _steps_per_neuron, build_chain

__all__ = ["QuantisedNetwork", "quantise", "quantisation_grid", "CircuitReduction",
           "threshold_circuit", "support_code_bits", "jump_margin"]


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


def jump_margin(Z: np.ndarray, jumps) -> float:
    """κ = min distance between the pre-activations Z and the jump points (inf if none)."""
    if not len(jumps):
        return math.inf
    return float(min(np.abs(Z - p).min() for p in jumps))


@dataclass(frozen=True, eq=False)
class QuantisedNetwork:
    """The network with bottom weights on ηZ, evaluated exactly on the hard instance's support.

    Attributes
    ----------
    network : Depth2Parts
        The original network.
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
    values, values_original : float64 (4^n,)
        N_q and N on the support in cube order k = a + 2^n b.
    """

    network: Depth2Parts = field(repr=False)
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
    rho: float
    rho_q: float
    values: np.ndarray = field(repr=False)
    values_original: np.ndarray = field(repr=False)
    code_bits: np.ndarray = field(repr=False)
    steps: tuple = ()

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

    @property
    def a_index(self) -> np.ndarray:
        return np.arange(1 << (2 * self.n), dtype=np.int64) & ((1 << self.n) - 1)

    @property
    def b_index(self) -> np.ndarray:
        return np.arange(1 << (2 * self.n), dtype=np.int64) >> self.n

    def value_matrix(self, *, original: bool = False) -> np.ndarray:
        """V[a, b] = Ñ(x_{a,b}) = 1 - 2N on the support (rows = Alice), quantised by default."""
        vals = self.values_original if original else self.values
        return np.ascontiguousarray(as_matrix(1.0 - 2.0 * vals, self.n))

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
                "rho": self.rho, "rho_q": self.rho_q, "steps": list(self.steps)}


def _ip_signs(n: int) -> np.ndarray:
    """H in cube order: 1 - 2·IP_n (float64)."""
    return 1.0 - 2.0 * inner_product_mod2(n).astype(np.float64)


def _pair_values(zA: np.ndarray, zB: np.ndarray, parts: Depth2Parts, *,
                 unit: "float | None" = None, rows: int = 0):
    """N at every pair: u0 + sum_i u_i σ(unit·(zA[a, i] + zB[b, i]) + bias_i), in cube order.

    With ``unit`` given the bias is added after scaling (quantised form; zA, zB hold the exact
    integers α, β as floats, |α + β| < 2^53).  Blocks of rows keep memory at O(rows·2^n·w).
    Returns (values (4^n,), κ = distance of the pre-activations to σ's jumps, max |pre-act|).
    """
    act = parts.activation
    size, w = zA.shape
    rows = rows or max(1, (1 << 22) // max(1, size * w))
    mat = np.empty((size, size), dtype=np.float64)               # [a, b]
    kappa, zmax = math.inf, 0.0
    for a0 in range(0, size, rows):
        a1 = min(size, a0 + rows)
        Z = zA[a0:a1, None, :] + zB[None, :, :]
        if unit is not None:
            Z = unit * Z + parts.b
        mat[a0:a1] = act(Z) @ parts.u + parts.u0
        kappa = min(kappa, jump_margin(Z, act.jumps))
        zmax = max(zmax, float(np.abs(Z).max()))
    return np.ascontiguousarray(mat.T).reshape(-1), kappa, zmax


def quantise(network, instance, *, rho: "float | None" = None, eta: "float | None" = None,
             weight_bound: "float | None" = None) -> QuantisedNetwork:
    """Round the bottom weights of a depth-2 network to ηZ and evaluate it on the support.

    Parameters
    ----------
    network : networks.SigmaNetwork
        Depth 2, input dimension d = 2m of the instance.
    instance : embeddings.HardInstance
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
    ReductionError says to use the correlation route §4.7 instead).
    """
    n, m, C = instance_code_bits(instance)
    parts = depth2_parts(network, dim=2 * m, weight_bound=weight_bound)
    act = parts.activation
    B = float(weight_bound) if weight_bound is not None else parts.weight_bound
    sq = math.sqrt(2 * m)
    R = B * (sq + 1.0)
    L = float(act.lipschitz(R + 1.0))
    signs = 2 * C.astype(np.int64) - 1                                  # (2^n, m) of ±1
    X_A = signs / sq
    H = _ip_signs(n)
    zA = X_A @ parts.W[:, :m].T                                          # (2^n, w)
    zB = X_A @ parts.W[:, m:].T + parts.b
    values_original, kappa, zmax = _pair_values(zA, zB, parts)
    rho_measured = float(np.mean(H * (1.0 - 2.0 * values_original)))
    if rho is None and eta is None:
        rho = rho_measured
        if rho <= 0:
            raise ReductionError(
                f"the network does not beat the trivial predictor on the support: ρ = E[H(1-2N)] "
                f"= {rho:.4g} <= 0 (THEORY §4.3 needs ρ >= 2γ > 0); train longer or wider, or pass "
                f"eta= explicitly")
    rho = check_real(rho, minimum=0, name="rho", allow_none=True)
    lines = []
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
    q_float = np.round(parts.W / eta)
    if np.abs(q_float).max() >= 2.0 ** 52:
        raise ReductionError(f"η = {eta:.3g} is too fine for exact integers (|q| up to "
                             f"{np.abs(q_float).max():.3g} >= 2^52); pass a larger eta or rho")
    q = q_float.astype(np.int64)
    alpha = (signs @ q[:, :m].T).T.copy()                                # (w, 2^n) exact int64
    beta = (signs @ q[:, m:].T).T.copy()
    K_A = np.array([np.unique(row).size for row in alpha], dtype=np.int64)
    K_B = np.array([np.unique(row).size for row in beta], dtype=np.int64)
    unit = eta / sq
    # quantised pre-activation unit·(α_i(a) + β_i(b)) + b_i: α + β is an exact integer
    values, kappa_q, _ = _pair_values(alpha.T.astype(np.float64), beta.T.astype(np.float64),
                                      parts, unit=unit)
    # proven change: |Δz| <= (η/2)||x||_1 = (η/2)√(2m) on the support; Lipschitz part only
    # (jumps do not move because κ > η√(2m)).
    dz = 0.5 * eta * sq
    radii = np.abs(parts.b) + np.linalg.norm(parts.W, axis=1) + dz
    L_i = np.array([act.lipschitz(r + 1e-300) for r in radii.tolist()])
    change_bound = float(np.abs(parts.u) @ (L_i * dz))
    scale = 1.0 + abs(parts.u0) + float(np.abs(parts.u).sum()) * (1.0 + zmax)
    change_bound += FLOAT_SLACK * scale
    max_change = float(np.abs(values - values_original).max())
    rho_q = float(np.mean(H * (1.0 - 2.0 * values)))
    W_int = int(math.ceil(B / eta))
    lines += [
        f"  integer bottom weights q = round(w/η): max|q| = {int(np.abs(q).max())} <= W = ⌈B/η⌉ = "
        f"{W_int}",
        f"  K_i = #distinct α_i(a) / β_i(b) on the grid: max_i min(K_A, K_B) = "
        f"{int(np.minimum(K_A, K_B).max())} <= 2m⌈B/η⌉ + 1 = {2 * m * W_int + 1}",
        f"  proven |N_q - N| <= sum_i |u_i| L_σ η√(2m)/2 = {change_bound:.4g} on the support "
        f"(measured {max_change:.4g}); ρ = {rho_measured:.4g} -> ρ_q = {rho_q:.4g} >= ρ - "
        f"2·bound = {rho_measured - 2 * change_bound:.4g}",
    ]
    if act.jumps:
        lines.append(f"  jumps: κ = {kappa:.4g} > η√(2m) = {eta * sq:.4g}: no neuron changes "
                     f"value (κ after rounding {kappa_q:.4g})")
    return QuantisedNetwork(
        network=parts, n=n, m=m, eta=float(eta), q=frozen(q, np.int64),
        alpha=frozen(alpha, np.int64), beta=frozen(beta, np.int64), K_A=frozen(K_A, np.int64),
        K_B=frozen(K_B, np.int64), weight_bound=B, lipschitz=L, change_bound=change_bound,
        max_change=max_change, kappa=kappa, kappa_q=kappa_q, rho=rho_measured, rho_q=rho_q,
        values=frozen(values, np.float64), values_original=frozen(values_original, np.float64),
        code_bits=frozen(C, np.uint8), steps=tuple(lines))


@dataclass(frozen=True, eq=False)
class CircuitReduction:
    """The integer depth-2 threshold circuit over the 2m code bits and its exhaustive check.

    Attributes
    ----------
    circuit : circuits.ThresholdCircuit
        Bottom gates [<q_i, c> >= T] (or [-<q_i, c> >= -T] for left-closed jump gates), top gate
        [sum_g V_g g >= T_top] with integer V_g.
    values : float64 (4^n,)
        N_C: the real top-layer output base + sum_g v_g g(c) at every support point.
    stair_bound : float
        Proven |N_C - N_q| on the support (staircase on the lattice).
    top_rounding_bound : float
        The integer top gate equals [N_C >= 1/2] wherever |N_C - 1/2| > this bound.
    total_bound : float
        Proven |N_C - N| = stair_bound + change_bound on the support.
    circuit_bits : uint8 (4^n,)
        The circuit evaluated on all 4^n support points by the circuits kernels.
    """

    quantised: QuantisedNetwork = field(repr=False)
    circuit: ThresholdCircuit = field(repr=False)
    values: np.ndarray = field(repr=False)
    circuit_bits: np.ndarray = field(repr=False)
    gate_neuron: np.ndarray = field(repr=False)
    stair_bound: float
    top_rounding_bound: float
    epsilon: float
    margin: float
    n_chains: int
    max_stair_error: float
    max_total_error: float
    n_undecided: int
    n_disagree_real: int
    n_disagree_network: int
    n_errors_ip: int
    rho_c: float
    seconds_eval: float
    steps: tuple = ()

    @property
    def total_bound(self) -> float:
        return self.stair_bound + self.quantised.change_bound

    @property
    def size(self) -> int:
        return self.circuit.size

    def summary(self) -> str:
        return "\n".join(self.steps)

    def to_dict(self) -> dict:
        c = self.circuit
        return {"size": c.size, "depth": c.depth, "max_abs_weight": int(c.max_abs_weight),
                "n_inputs": c.n_inputs, "n_wires": c.n_wires,
                "max_abs_bottom_weight": int(np.abs(c.layers[0].weights).max()),
                "max_abs_top_weight": int(np.abs(c.layers[1].weights).max()),
                "preactivation_bound": int(max(layer.preactivation_bound for layer in c.layers)),
                "margin": self.margin, "stair_bound": self.stair_bound,
                "change_bound": self.quantised.change_bound, "total_bound": self.total_bound,
                "max_stair_error": self.max_stair_error, "max_total_error": self.max_total_error,
                "top_rounding_bound": self.top_rounding_bound, "epsilon": self.epsilon,
                "n_chains": self.n_chains, "n_undecided": self.n_undecided,
                "n_disagree_real": self.n_disagree_real,
                "n_disagree_network": self.n_disagree_network, "n_errors_ip": self.n_errors_ip,
                "accuracy_ip": 1.0 - self.n_errors_ip / self.values.shape[0],
                "rho_c": self.rho_c, "seconds_eval": self.seconds_eval, "steps": list(self.steps)}


def _round_half_away(x: np.ndarray) -> np.ndarray:
    return np.where(x >= 0, np.floor(x + 0.5), -np.floor(-x + 0.5))


def threshold_circuit(quantised: QuantisedNetwork, *, margin: "float | None" = None,
                      allocation: str = "optimal", top_error: float = 1e-6,
                      max_gates: int = 2_000_000, chunk: int = 1 << 14,
                      progress: bool = False) -> CircuitReduction:
    """Staircase the quantised network on its lattice and build the integer ThresholdCircuit.

    Parameters
    ----------
    quantised : QuantisedNetwork
    margin : float, optional
        γ': the staircase's sup error in N (default ρ_q/4, which keeps ρ_C >= ρ_q/2 > 0).
    allocation : {"optimal", "uniform"}
        How the staircase error is spread over neurons (see :func:`staircase`).
    top_error : float
        The integer top gate agrees with [N_C >= 1/2] wherever |N_C - 1/2| > top_error.
    max_gates : int
        Refuse larger circuits (raise the margin instead).
    chunk : int
        Support points per call of the circuit evaluator.
    progress : bool
        Progress bar over the exhaustive evaluation.

    Returns
    -------
    CircuitReduction
    """
    qn = quantised
    parts = qn.network
    act = parts.activation
    n, m = qn.n, qn.m
    if margin is None:
        if qn.rho_q <= 0:
            raise ReductionError(f"the default staircase margin ρ_q/4 needs ρ_q > 0, got ρ_q = "
                                 f"{qn.rho_q:.4g}; pass margin= explicitly (the sup error γ')")
        margin = qn.rho_q / 4.0
    margin = check_real(margin, minimum=0, name="margin")
    top_error = check_real(top_error, minimum=0, name="top_error")
    if allocation not in ("uniform", "optimal"):
        raise ReductionError(f"allocation must be 'uniform' or 'optimal', got {allocation!r}")
    unit = qn.unit
    Wq = qn.eta * qn.q.astype(np.float64)
    # exact pre-activation range over the circuit's whole input cube {0,1}^{2m}:
    # s = 2<q, c> - sum q ranges over [-sum|q|, sum|q|]  (<= the unit-ball range b ± ||w̃||)
    spread = unit * np.abs(qn.q).sum(axis=1).astype(np.float64)
    lo, hi = parts.b - spread, parts.b + spread
    qparts = Depth2Parts(W=frozen(Wq, np.float64), b=parts.b, u=parts.u, u0=parts.u0,
                         activation=act)
    m_steps, _, _ = _steps_per_neuron(qparts, lo, hi, margin=margin, delta=None,
                                      allocation=allocation, range_mode="ball")
    est = int(m_steps.sum())         # lattice steps are never finer than requested: an upper bound
    if est > max_gates:
        raise ReductionError(f"the circuit would have about {est} gates > max_gates = {max_gates};"
                             f" increase margin (now {margin:.4g}) or max_gates")
    qsum = qn.q.sum(axis=1)
    g_neuron, g_dir, g_T, g_v, chains = [], [], [], [], []
    base = parts.u0
    per_err = np.zeros(parts.width)
    for i in range(parts.width):
        ch = build_chain(act, float(lo[i]), float(hi[i]), int(m_steps[i]),
                         grid=(float(parts.b[i]), unit))
        base += parts.u[i] * ch["base"]
        per_err[i] = abs(parts.u[i]) * ch["lipschitz"] * ch["step"]
        T = ch["T"]
        d = ch["direction"]
        v = parts.u[i] * ch["height"]
        for direction in (1, -1):
            sel = np.flatnonzero(d == direction)
            if sel.size == 0:
                continue
            order = sel[np.argsort(T[sel] * direction, kind="stable")]
            chains.append((len(g_T), len(g_T) + order.size))
            for g in order.tolist():
                g_neuron.append(i)
                g_dir.append(direction)
                g_T.append(int(T[g]))
                g_v.append(float(v[g]))
    if not g_T:
        raise ReductionError("the network has no gates after the staircase (all output weights or "
                             "Lipschitz constants are 0); its output is constant")
    g_neuron = np.asarray(g_neuron, dtype=np.int64)
    g_dir = np.asarray(g_dir, dtype=np.int64)
    g_T = np.asarray(g_T, dtype=np.int64)
    g_v = np.asarray(g_v, dtype=np.float64)
    # bottom integer gates: s = 2<q, c> - sum q; [s >= T] <=> <q, c> >= ceil((T + sum q)/2)
    tot = g_T + qsum[g_neuron]
    thr_up = -((-tot) // 2)
    thr_down = -(tot // 2)                               # [s <= T] <=> -<q,c> >= -floor(...)
    bottom_w = qn.q[g_neuron] * g_dir[:, None]
    bottom_t = np.where(g_dir > 0, thr_up, thr_down)
    # top: round cumulative heights along every chain
    n_chains = len(chains)
    eps = top_error / (n_chains / 2.0 + 1.0)
    top_w = np.zeros(g_v.shape[0], dtype=np.int64)
    for start, stop in chains:
        cum = np.cumsum(g_v[start:stop]) / eps
        r = _round_half_away(cum)
        if np.abs(r).max() >= 2.0 ** 62:
            raise ReductionError(f"top weights overflow int64 with top_error = {top_error:g}; "
                                 f"increase top_error")
        r = r.astype(np.int64)
        top_w[start:stop] = np.diff(np.concatenate([[0], r]))
    tau = 0.5 - base
    top_t = int(math.ceil(tau / eps))
    try:
        circuit = ThresholdCircuit([ThresholdLayer(bottom_w, bottom_t),
                                    ThresholdLayer(top_w[None, :], [top_t])])
    except InvalidCircuitError as exc:
        raise ReductionError(f"the integer circuit does not fit int64 ({exc}); increase top_error "
                             f"or the margin") from None
    # real top-layer value N_C on the support: gate g fires iff dir·s >= dir·T
    k_all = np.arange(1 << (2 * n), dtype=np.int64)
    a_idx, b_idx = k_all & ((1 << n) - 1), k_all >> n
    values = np.full(k_all.shape[0], base, dtype=np.float64)
    for start, stop in chains:
        i = int(g_neuron[start])
        direction = int(g_dir[start])
        s = (qn.alpha[i, a_idx] + qn.beta[i, b_idx]) * direction
        thr = g_T[start:stop] * direction                   # ascending within the chain
        cum = np.concatenate([[0.0], np.cumsum(g_v[start:stop])])
        values += cum[np.searchsorted(thr, s, side="right")]
    stair_bound = float(per_err.sum()) + FLOAT_SLACK * (1.0 + float(np.abs(g_v).sum())
                                                        + abs(base))
    # exhaustive evaluation of the integer circuit by the circuits kernels
    from circuits import simulate
    from circuits.utils.progress import progress_bar

    t0 = time.perf_counter()
    bits = np.empty(k_all.shape[0], dtype=np.uint8)
    C = qn.code_bits
    by_index = getattr(simulate, "evaluate_indices", None) if 2 * m <= 62 else None
    if by_index is not None:        # point index of the code bits: C(a) + 2^m C(b)
        words = (C.astype(np.int64) << np.arange(m, dtype=np.int64)).sum(axis=1)
    with progress_bar(k_all.shape[0], enabled=progress, desc="circuit on all 4^n points") as bar:
        for start in range(0, k_all.shape[0], chunk):
            stop = min(k_all.shape[0], start + chunk)
            if by_index is not None:
                kk = k_all[start:stop]
                idx = words[kk & ((1 << n) - 1)] | (words[kk >> n] << m)
                bits[start:stop] = by_index(circuit, idx)
            else:
                bits[start:stop] = simulate.evaluate(circuit, support_code_bits(C, n, start, stop))
            bar.update(stop - start)
    seconds = time.perf_counter() - t0
    H = _ip_signs(n)
    labels = (H < 0).astype(np.uint8)
    real_bits = (values >= 0.5).astype(np.uint8)
    decided = np.abs(values - 0.5) > top_error
    n_undecided = int((~decided).sum())
    n_disagree_real = int((bits != real_bits)[decided].sum())
    net_bits = (qn.values_original >= 0.5).astype(np.uint8)
    max_stair = float(np.abs(values - qn.values).max())
    max_total = float(np.abs(values - qn.values_original).max())
    rho_c = float(np.mean(H * (1.0 - 2.0 * values)))
    lines = [
        f"threshold circuit (THEORY §4.1 on the §4.2 lattice): {circuit.size} bottom gates over "
        f"2m = {2 * m} code bits, depth {circuit.depth}, max|weight| = {circuit.max_abs_weight}",
        f"  staircase ranges: exact pre-activation range over all of {{0,1}}^{2 * m}, "
        f"b_i ± (η/√(2m))·sum_j|q_ij| (max half-width {spread.max():.4g})",
        f"  staircase margin γ' = {margin:.4g}: proven |N_C - N_q| <= {stair_bound:.4g} "
        f"(measured {max_stair:.4g}); |N_C - N| <= {stair_bound + qn.change_bound:.4g} "
        f"(measured {max_total:.4g})",
        f"  integer top layer: cumulative rounding, ε = {eps:.3g}, {n_chains} chains -> agrees "
        f"with [N_C >= 1/2] wherever |N_C - 1/2| > {top_error:.3g}",
        f"  exhaustive check on all {k_all.shape[0]} support points ({seconds:.2f} s): "
        f"{n_disagree_real} disagreements with [N_C >= 1/2] off the {n_undecided}-point band; "
        f"{int((bits != net_bits).sum())} with the network's classify; "
        f"{int((bits != labels).sum())} errors vs IP (accuracy "
        f"{1 - (bits != labels).mean():.4f}); ρ_C = {rho_c:.4g}",
    ]
    return CircuitReduction(
        quantised=qn, circuit=circuit, values=frozen(values, np.float64),
        circuit_bits=frozen(bits, np.uint8), gate_neuron=frozen(g_neuron, np.int64),
        stair_bound=stair_bound, top_rounding_bound=float(top_error), epsilon=float(eps),
        margin=float(margin), n_chains=n_chains, max_stair_error=max_stair,
        max_total_error=max_total, n_undecided=n_undecided, n_disagree_real=n_disagree_real,
        n_disagree_network=int((bits != net_bits).sum()), n_errors_ip=int((bits != labels).sum()),
        rho_c=rho_c, seconds_eval=seconds, steps=tuple(lines))
