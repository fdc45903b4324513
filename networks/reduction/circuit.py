"""Step 2b (THEORY §4.1 on the §4.2 lattice): the integer threshold circuit and its exhaustive check.

A gate [<w̃_i, x> + b_i >= θ] with θ on the lattice b_i + (η/√(2m))Z is the integer gate
[<q_i, c> >= ⌈(T + sum_j q_ij)/2⌉] over the 2m code bits c (s = α + β = 2<q_i, c> - sum_j q_ij).
The top layer is made integer by rounding *cumulative* heights along each neuron's chain of
gates (the gates that fire form a prefix), so the rounding error is <= ε/2 per chain.

Evaluation on all 4^n support points is neuron-wise (THEORY §4.8): the circuit's bottom gates are
grouped by their weight row up to sign, each group's integer pre-activation is
<q^A, C(a)> + <q^B, C(b)>, and the gates that fire are counted by binary search over the group's
sorted thresholds (:func:`circuit_table`).  A gate-by-gate numpy evaluation
(:mod:`circuits._product_eval`) re-evaluates a random sample as a cross-check.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from circuits.utils.errors import InvalidCircuitError, ReductionError
from circuits.threshold import ThresholdCircuit, ThresholdLayer
from circuits.utils.validation import check_real
from networks.reduction._common import Depth2Parts, frozen
from networks.reduction.product import chain_table, product_support
from networks.reduction.quantisation import QuantisedNetwork
from networks.reduction.stair import FLOAT_SLACK, _steps_per_neuron, build_chain

__all__ = ["CircuitReduction", "threshold_circuit", "circuit_table", "circuit_bits",
           "gate_estimate"]

#: Gate-input operations (points x gates x inputs) spent on the gate-by-gate cross-check by default.
CHECK_BUDGET = 1 << 27


@dataclass(frozen=True, eq=False)
class CircuitReduction:
    """The integer depth-2 threshold circuit over the 2m code bits and its exhaustive check.

    Attributes
    ----------
    circuit : circuits.ThresholdCircuit
        Bottom gates [<q_i, c> >= T] (or [-<q_i, c> >= -T] for left-closed jump gates), top gate
        [sum_g V_g g >= T_top] with integer V_g.
    table : float64 (2^n, 2^n)
        N_C[a, b]: the real top-layer output base + sum_g v_g g(c) at every support point.
    bits_table : uint8 (2^n, 2^n)
        The integer circuit's output at every support point (neuron-wise exact evaluation).
    stair_bound : float
        Proven |N_C - N_q| on the support (staircase on the lattice).
    top_rounding_bound : float
        The integer top gate equals [N_C >= 1/2] wherever |N_C - 1/2| > this bound.
    n_checked_generic, n_generic_mismatch : int
        Support points re-evaluated gate by gate and disagreements (always 0, else an
        error is raised).
    """

    quantised: QuantisedNetwork = field(repr=False)
    circuit: ThresholdCircuit = field(repr=False)
    table: np.ndarray = field(repr=False)
    bits_table: np.ndarray = field(repr=False)
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
    n_disagree_network_outside_band: int
    rho_c: float
    rho_bits: float
    seconds_eval: float
    n_checked_generic: int
    steps: tuple = ()

    @property
    def values(self) -> np.ndarray:
        """N_C in cube order k = a + 2^n b (a new array)."""
        return self.table.T.reshape(-1)

    @property
    def circuit_bits(self) -> np.ndarray:
        """The circuit's outputs in cube order (a new array)."""
        return self.bits_table.T.reshape(-1)

    @property
    def total_bound(self) -> float:
        return self.stair_bound + self.quantised.change_bound

    @property
    def network_band(self) -> float:
        """Proven band around 1/2: the circuit's bit equals the network's own classification
        [N >= 1/2] wherever |N - 1/2| > total_bound + top_rounding_bound."""
        return self.total_bound + self.top_rounding_bound

    @property
    def size(self) -> int:
        return self.circuit.size

    def boolean_value_matrix(self) -> np.ndarray:
        """Ñ_C = 1 - 2·(circuit bit) as float64 [a, b]: the circuit's Boolean output as ±1."""
        return 1.0 - 2.0 * self.bits_table.astype(np.float64)

    def summary(self) -> str:
        return "\n".join(self.steps)

    def to_dict(self) -> dict:
        c = self.circuit
        return {"size": c.size, "depth": c.depth, "max_abs_weight": int(c.max_abs_weight),
                "n_inputs": c.n_inputs, "n_wires": c.n_wires,
                "max_abs_bottom_weight": int(np.abs(c.layers[0].weights).max()),
                "max_abs_top_weight": int(np.abs(c.layers[1].weights).max()),
                "preactivation_bound": int(c.preactivation_bound),
                "margin": self.margin, "stair_bound": self.stair_bound,
                "change_bound": self.quantised.change_bound, "total_bound": self.total_bound,
                "max_stair_error": self.max_stair_error, "max_total_error": self.max_total_error,
                "top_rounding_bound": self.top_rounding_bound, "epsilon": self.epsilon,
                "n_chains": self.n_chains, "n_undecided": self.n_undecided,
                "n_disagree_real": self.n_disagree_real,
                "n_disagree_network": self.n_disagree_network, "n_errors_ip": self.n_errors_ip,
                "network_band": self.network_band,
                "n_disagree_network_outside_band": self.n_disagree_network_outside_band,
                "accuracy_ip": 1.0 - self.n_errors_ip / self.table.size,
                "rho_c": self.rho_c, "rho_bits": self.rho_bits,
                "seconds_eval": self.seconds_eval, "n_checked_generic": self.n_checked_generic,
                "steps": list(self.steps)}


# ------------------------------------------------------------------ neuron-wise evaluation
def _check_depth2(circuit, m: int):
    if not isinstance(circuit, ThresholdCircuit):
        raise TypeError(f"circuit must be a circuits.ThresholdCircuit, got {type(circuit).__name__}")
    if circuit.depth != 2 or circuit.n_inputs != 2 * m or circuit.layers[1].n_gates != 1:
        raise ReductionError(f"circuit must be a layered depth-2 circuit over the 2m = {2 * m} code "
                             f"bits with one output gate, got depth {circuit.depth}, "
                             f"{circuit.n_inputs} inputs")


def _row_groups(W: np.ndarray):
    """Group gate rows up to sign: (keys (G, N), group index per gate, sign per gate)."""
    nz = W != 0
    first = np.where(nz.any(axis=1), nz.argmax(axis=1), 0)
    sign = np.where(W[np.arange(W.shape[0]), first] < 0, -1, 1).astype(np.int64)
    K = np.ascontiguousarray(W * sign[:, None])
    # group by a wrapping integer hash, then verify every row equals its representative
    mult = np.random.default_rng(12345).integers(1, 2 ** 62, size=K.shape[1], dtype=np.int64) | 1
    with np.errstate(over="ignore"):
        h = (K * mult).sum(axis=1)
    _, first_of, inv = np.unique(h, return_index=True, return_inverse=True)
    inv = inv.reshape(-1)
    if not np.array_equal(K[first_of][inv], K):                    # a hash collision: exact path
        rows = K.view(np.dtype((np.void, K.dtype.itemsize * K.shape[1]))).reshape(-1)
        _, first_of, inv = np.unique(rows, return_index=True, return_inverse=True)
        inv = inv.reshape(-1)
    return K[first_of], inv, sign


def _split_groups(inv, G, mask, thresholds, weights):
    """Per group: (thresholds, weights) of the gates selected by ``mask``."""
    sel = np.flatnonzero(mask)
    order = sel[np.argsort(inv[sel], kind="stable")]
    bounds = np.searchsorted(inv[order], np.arange(G + 1))
    return [(thresholds[order[bounds[g]:bounds[g + 1]]], weights[order[bounds[g]:bounds[g + 1]]])
            for g in range(G)]


def circuit_table(circuit: ThresholdCircuit, instance) -> np.ndarray:
    """S[a, b] = sum_g V_g·g(C(a), C(b)): the top gate's integer pre-activation at every pair.

    The circuit's output is ``S >= circuit.layers[1].thresholds[0]``.  Bottom gates with the same
    weight row up to sign share one pre-activation P = <q^A, C(a)> + <q^B, C(b)> (exact int64);
    gates with row q fire iff P >= t, gates with row -q iff P <= -t, so the fired gates of a
    group are counted by binary search over its sorted thresholds, O(4^n · G · log(gates/G)).
    Exact: every partial sum is bounded by the circuit's pre-activation bound (< 2^63).
    """
    sup = product_support(instance)
    _check_depth2(circuit, sup.m)
    bottom, top = circuit.layers
    keys, inv, sign = _row_groups(bottom.weights)
    G = keys.shape[0]
    C = sup.code_bits.astype(np.int64)
    m = sup.m
    PA = np.ascontiguousarray(C @ keys[:, :m].T)
    PB = np.ascontiguousarray(C @ keys[:, m:].T)
    t = bottom.thresholds
    v = top.weights[0]
    up = _split_groups(inv, G, sign > 0, t, v)
    down = _split_groups(inv, G, sign < 0, -t, v)
    return chain_table(PA, PB, up, down, 0, integer=True)


def circuit_bits(circuit: ThresholdCircuit, instance) -> np.ndarray:
    """The circuit's output (uint8) at every pair [a, b] by :func:`circuit_table`."""
    S = circuit_table(circuit, instance)
    return (S >= int(circuit.layers[1].thresholds[0])).astype(np.uint8)


def _generic_check(circuit, sup, bits_table, *, sample: int, seed: int = 0) -> int:
    """Re-evaluate ``sample`` random support points gate by gate, independently of the
    neuron-wise kernels (:func:`circuits._product_eval.depth2_pair_bits`: exact numpy, nothing
    to compile); returns the number checked (raises on any disagreement: it would be a bug)."""
    from circuits._product_eval import depth2_pair_bits

    n = sup.n
    total = 1 << (2 * n)
    rng = np.random.default_rng(seed)
    k = np.arange(total, dtype=np.int64) if total <= sample else rng.choice(total, sample,
                                                                             replace=False)
    a, b = k & ((1 << n) - 1), k >> n
    generic = depth2_pair_bits(circuit, sup.code_bits, sup.code_bits, a, b)
    bad = np.flatnonzero(generic != bits_table[a, b])
    if bad.size:
        raise ReductionError(f"neuron-wise and gate-by-gate circuit evaluation disagree at "
                             f"(a, b) = ({int(a[bad[0]])}, {int(b[bad[0]])}) ({bad.size} of "
                             f"{k.size}); please report this bug")
    return int(k.size)


# ------------------------------------------------------------------ construction
def _lattice_steps(qn: QuantisedNetwork, margin: float, allocation: str):
    """(steps per neuron, lo, hi, spread): exact pre-activation range over the circuit's whole
    input cube {0,1}^{2m}, s = 2<q, c> - sum q in [-sum|q|, sum|q|] (<= the ball range)."""
    parts = qn.network
    spread = qn.unit * np.abs(qn.q).sum(axis=1).astype(np.float64)
    lo, hi = parts.b - spread, parts.b + spread
    qparts = Depth2Parts(W=frozen(qn.eta * qn.q.astype(np.float64), np.float64), b=parts.b,
                         u=parts.u, u0=parts.u0, activation=parts.activation)
    m_steps, _, _ = _steps_per_neuron(qparts, lo, hi, margin=margin, delta=None,
                                      allocation=allocation, range_mode="ball")
    return m_steps, lo, hi, spread


def gate_estimate(qn: QuantisedNetwork, margin: float, allocation: str = "optimal") -> int:
    """Upper bound on the staircase gates of :func:`threshold_circuit` at this margin (lattice
    steps are never finer than requested)."""
    return int(_lattice_steps(qn, margin, allocation)[0].sum())


def _fit_margin(qn, margin, allocation, max_gates):
    """Raise the margin until the gate estimate fits max_gates (gates scale about as 1/margin)."""
    est = gate_estimate(qn, margin, allocation)
    while est > max_gates:
        margin *= 1.1 * est / max_gates
        if not margin < 1e12:
            fewest = gate_estimate(qn, 1e12, allocation)
            raise ReductionError(
                f"max_gates = {max_gates} is below the fewest gates this network's staircase can "
                f"have (about {fewest}: at least one per neuron whatever the margin); raise "
                f"max_gates (--max-gates on the command line) to at least {fewest}")
        est = gate_estimate(qn, margin, allocation)
    return margin


def _lattice_gates(qn: QuantisedNetwork, margin: float, allocation: str, max_gates: int):
    """Staircase every neuron on its lattice; gates grouped in chains (neuron, direction)."""
    parts = qn.network
    unit = qn.unit
    m_steps, lo, hi, spread = _lattice_steps(qn, margin, allocation)
    est = int(m_steps.sum())
    if est > max_gates:
        raise ReductionError(f"the circuit would have about {est} gates > max_gates = {max_gates};"
                             f" increase margin (now {margin:.4g}) or max_gates")
    neuron, dirs, Ts, vs, chains = [], [], [], [], []
    base = parts.u0
    per_err = np.zeros(parts.width)
    count = 0
    for i in range(parts.width):
        ch = build_chain(parts.activation, float(lo[i]), float(hi[i]), int(m_steps[i]),
                         grid=(float(parts.b[i]), unit))
        base += parts.u[i] * ch["base"]
        per_err[i] = abs(parts.u[i]) * ch["lipschitz"] * ch["step"]
        for direction in (1, -1):
            sel = np.flatnonzero(ch["direction"] == direction)
            if sel.size == 0:
                continue
            order = sel[np.argsort(ch["T"][sel] * direction, kind="stable")]
            chains.append((count, count + order.size, i, direction))
            count += order.size
            neuron.append(np.full(order.size, i, dtype=np.int64))
            dirs.append(np.full(order.size, direction, dtype=np.int64))
            Ts.append(ch["T"][order].astype(np.int64))
            vs.append(parts.u[i] * ch["height"][order])
    if not count:
        raise ReductionError("the network has no gates after the staircase (all output weights or "
                             "Lipschitz constants are 0); its output is constant")
    return {"neuron": np.concatenate(neuron), "dir": np.concatenate(dirs),
            "T": np.concatenate(Ts), "v": np.concatenate(vs), "chains": chains, "base": base,
            "per_err": per_err, "spread": spread}


def _fitted_gates(qn, margin, allocation, max_gates, fit, requested):
    """The lattice gates, with at most ``max_gates`` of them (= the circuit's ``size``, its
    hidden gates) when ``fit``: the estimate can undercount, so the built count is what is
    checked, raising the margin again while it is over the cap."""
    while True:
        try:
            gates = _lattice_gates(qn, margin, allocation, max_gates)
        except ReductionError as exc:
            if fit and margin != requested and "no gates" in str(exc):
                raise ReductionError(
                    f"max_gates = {max_gates} is too small for this network: fitting the cap "
                    f"raised the staircase margin from {requested:.4g} to {margin:.4g}, which "
                    f"leaves no gate at all; raise max_gates (--max-gates on the command "
                    f"line)") from None
            raise
        count = int(gates["T"].size)
        if not fit or count <= max_gates:
            gates["margin"] = margin
            return gates
        margin *= 1.05 * count / max_gates


def _round_half_away(x: np.ndarray) -> np.ndarray:
    return np.where(x >= 0, np.floor(x + 0.5), -np.floor(-x + 0.5))


def _integer_circuit(qn: QuantisedNetwork, gates: dict, top_error: float):
    """Integer bottom gates over the code bits and an integer top gate (cumulative rounding)."""
    g_neuron, g_dir, g_T, g_v = gates["neuron"], gates["dir"], gates["T"], gates["v"]
    # bottom integer gates: s = 2<q, c> - sum q; [s >= T] <=> <q, c> >= ceil((T + sum q)/2)
    tot = g_T + qn.q.sum(axis=1)[g_neuron]
    bottom_w = qn.q[g_neuron] * g_dir[:, None]
    bottom_t = np.where(g_dir > 0, -((-tot) // 2), -(tot // 2))   # [s <= T]: -<q,c> >= -floor
    n_chains = len(gates["chains"])
    eps = top_error / (n_chains / 2.0 + 1.0)
    top_w = np.zeros(g_v.shape[0], dtype=np.int64)
    for start, stop, _, _ in gates["chains"]:
        r = _round_half_away(np.cumsum(g_v[start:stop]) / eps)
        if np.abs(r).max() >= 2.0 ** 62:
            raise ReductionError(f"top weights overflow int64 with top_error = {top_error:g}; "
                                 f"increase top_error")
        top_w[start:stop] = np.diff(np.concatenate([[0], r.astype(np.int64)]))
    top_t = int(math.ceil((0.5 - gates["base"]) / eps))
    try:
        circuit = ThresholdCircuit([ThresholdLayer(bottom_w, bottom_t),
                                    ThresholdLayer(top_w[None, :], [top_t])])
    except InvalidCircuitError as exc:
        raise ReductionError(f"the integer circuit does not fit int64 ({exc}); increase top_error "
                             f"or the margin") from None
    return circuit, eps, n_chains


def _real_table(qn: QuantisedNetwork, gates: dict) -> np.ndarray:
    """N_C[a, b] = base + sum over chains of the fired heights (s = α_i(a) + β_i(b))."""
    w = qn.network.width
    up = [(np.zeros(0, np.int64), np.zeros(0)) for _ in range(w)]
    down = [(np.zeros(0, np.int64), np.zeros(0)) for _ in range(w)]
    for start, stop, i, direction in gates["chains"]:
        entry = (gates["T"][start:stop], gates["v"][start:stop])
        if direction > 0:
            up[i] = entry
        else:
            down[i] = entry
    return chain_table(qn.alpha.T, qn.beta.T, up, down, float(gates["base"]), integer=False)


def threshold_circuit(quantised: QuantisedNetwork, *, margin: "float | None" = None,
                      allocation: str = "optimal", top_error: float = 1e-6,
                      max_gates: int = 2_000_000, fit_max_gates: bool = False,
                      check_sample: "int | None" = None,
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
    fit_max_gates : bool
        Instead of refusing, raise the margin until the circuit has at most ``max_gates`` gates
        (said in ``steps``; above ρ_q/4 the guarantee ρ_C >= ρ_q/2 > 0 no longer holds).
    check_sample : int, optional
        Support points re-evaluated gate by gate (exact numpy, independent of the neuron-wise
        kernels; all of them if 4^n is smaller); default: as many as CHECK_BUDGET gate-input
        operations allow, at least 64.
    progress : bool
        Unused (the neuron-wise evaluation takes well under a second at n = 8); kept for
        compatibility.

    Returns
    -------
    CircuitReduction
    """
    qn = quantised
    if margin is None:
        if qn.rho_q <= 0:
            raise ReductionError(f"the default staircase margin ρ_q/4 needs ρ_q > 0, got ρ_q = "
                                 f"{qn.rho_q:.4g}; pass margin= explicitly (the sup error γ')")
        margin = qn.rho_q / 4.0
    margin = check_real(margin, minimum=0, name="margin")
    top_error = check_real(top_error, minimum=0, name="top_error")
    if allocation not in ("uniform", "optimal"):
        raise ReductionError(f"allocation must be 'uniform' or 'optimal', got {allocation!r}")
    requested = margin
    if fit_max_gates:
        margin = _fit_margin(qn, margin, allocation, max_gates)
    gates = _fitted_gates(qn, margin, allocation, max_gates, fit_max_gates, requested)
    margin = gates.pop("margin")
    circuit, eps, n_chains = _integer_circuit(qn, gates, top_error)
    table = _real_table(qn, gates)
    stair_bound = float(gates["per_err"].sum()) + FLOAT_SLACK * (
        1.0 + float(np.abs(gates["v"]).sum()) + abs(gates["base"]))
    t0 = time.perf_counter()
    bits = circuit_bits(circuit, qn.support)
    seconds = time.perf_counter() - t0
    if check_sample is None:
        check_sample = max(64, CHECK_BUDGET // (circuit.size * circuit.n_inputs))
    n_checked = _generic_check(circuit, qn.support, bits, sample=int(check_sample))
    rep = _circuit_report(qn, circuit, gates, table, bits, eps=eps, n_chains=n_chains,
                          margin=margin, top_error=top_error, stair_bound=stair_bound,
                          seconds=seconds, n_checked=n_checked)
    if margin != requested:
        note = (f"  margin raised from γ' = {requested:.4g} to {margin:.4g} to keep the circuit at "
                f"<= {max_gates} gates; ρ_C >= ρ_q - 2γ' is then not guaranteed positive "
                f"(measured ρ_C = {rep.rho_c:.4g})")
        object.__setattr__(rep, "steps", rep.steps[:1] + (note,) + rep.steps[1:])
    return rep


def _circuit_report(qn, circuit, gates, table, bits, *, eps, n_chains, margin, top_error,
                    stair_bound, seconds, n_checked) -> CircuitReduction:
    H = qn.support.H
    labels = (H < 0)
    real_bits = table >= 0.5
    decided = np.abs(table - 0.5) > top_error
    n_undecided = int((~decided).sum())
    n_disagree_real = int(((bits == 1) != real_bits)[decided].sum())
    net_bits = qn.table_original >= 0.5
    n_net = int(((bits == 1) != net_bits).sum())
    band = stair_bound + qn.change_bound + float(top_error)
    n_net_out = int((((bits == 1) != net_bits) & (np.abs(qn.table_original - 0.5) > band)).sum())
    n_err = int(((bits == 1) != labels).sum())
    max_stair = float(np.abs(table - qn.table).max())
    max_total = float(np.abs(table - qn.table_original).max())
    rho_c = float(np.mean(H * (1.0 - 2.0 * table)))
    rho_bits = float(np.mean(H * (1.0 - 2.0 * bits.astype(np.float64))))
    m, size = qn.m, table.size
    lines = [
        f"threshold circuit (THEORY §4.1 on the §4.2 lattice): {circuit.size} bottom gates over "
        f"2m = {2 * m} code bits, depth {circuit.depth}, max|weight| = {circuit.max_abs_weight}",
        f"  staircase ranges: exact pre-activation range over all of {{0,1}}^{2 * m}, "
        f"b_i ± (η/√(2m))·sum_j|q_ij| (max half-width {gates['spread'].max():.4g})",
        f"  staircase margin γ' = {margin:.4g}: proven |N_C - N_q| <= {stair_bound:.4g} "
        f"(measured {max_stair:.4g}); |N_C - N| <= {stair_bound + qn.change_bound:.4g} "
        f"(measured {max_total:.4g})",
        f"  integer top layer: cumulative rounding, ε = {eps:.3g}, {n_chains} chains -> agrees "
        f"with [N_C >= 1/2] wherever |N_C - 1/2| > {top_error:.3g}",
        f"  exhaustive neuron-wise check on all {size} support points ({seconds:.3f} s; a "
        f"gate-by-gate evaluation agrees on {n_checked} of them): {n_disagree_real} disagreements with "
        f"[N_C >= 1/2] off the {n_undecided}-point band; {n_net} with the network's own "
        f"[N >= 1/2] ({n_net_out} of them outside the proven band |N - 1/2| <= {band:.3g}); "
        f"{n_err} errors vs IP (accuracy {1 - n_err / size:.4f}); ρ_C = {rho_c:.4g}, Boolean "
        f"output ρ = {rho_bits:.4g}",
    ]
    return CircuitReduction(
        quantised=qn, circuit=circuit, table=frozen(table, np.float64),
        bits_table=frozen(bits, np.uint8), gate_neuron=frozen(gates["neuron"], np.int64),
        stair_bound=stair_bound, top_rounding_bound=float(top_error), epsilon=float(eps),
        margin=float(margin), n_chains=n_chains, max_stair_error=max_stair,
        max_total_error=max_total, n_undecided=n_undecided, n_disagree_real=n_disagree_real,
        n_disagree_network=n_net, n_errors_ip=n_err, n_disagree_network_outside_band=n_net_out, rho_c=rho_c, rho_bits=rho_bits,
        seconds_eval=seconds, n_checked_generic=n_checked, steps=tuple(lines))
