"""Step 1 (THEORY §4.1): every σ-neuron becomes a staircase of threshold gates.

On its pre-activation interval [lo, hi] a σ that is L-Lipschitz between its jumps is written as

    σ(t) = σ_c(lo) + sum_j h_j [t >= θ_j] + sum_{jumps p} J_p(t) + (error <= L·Δ),

with θ_j = lo + jΔ (j = 1..m_s), h_j = σ_c(θ_j) - σ_c(θ_{j-1}) for the continuous part σ_c (σ
minus its jumps) and, for every jump p in (lo, hi], the exact gates
J_p(t) = (σ(p) - σ(p-))[t >= p] + (σ(p+) - σ(p))(1 - [t <= p]) (the second gate only when σ is
not right-continuous at p).  Heaviside and sign are therefore exact with one gate per neuron.
The depth-2 σ-network becomes a depth-2 threshold circuit with real bottom weights and a real top
layer: gates [<w_i, x> + b_i >= θ_j] weighted by u_i h_j, sup error <= sum_i |u_i| L Δ_i.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from circuits.utils.errors import ReductionError
from circuits.utils.validation import check_real
from networks.reduction._common import Depth2Parts, depth2_parts, frozen

__all__ = ["Staircase", "staircase", "staircase_gate_count"]

#: Relative floating-point slack added to every proven sup bound (sums of a few thousand float64
#: terms; documented in the bound's description).
FLOAT_SLACK = 1e-9


def staircase_gate_count(width: int, R: float, L: float, B: float, margin: float) -> int:
    """The gate count w⌈2RLwB/γ'⌉ of THEORY §4.1 (uniform error allocation, range [-R, R]).

    >>> staircase_gate_count(4, 5.0, 1.0, 1.0, 0.2)
    800
    """
    return int(width) * int(math.ceil(2.0 * R * L * width * B / margin))


def _limits(act, p: float) -> tuple[float, float, float]:
    """(σ(p-), σ(p), σ(p+)) using the neighbouring floats (exact for piecewise-constant σ)."""
    left = float(act(np.nextafter(p, -np.inf)))
    mid = float(act(p))
    right = float(act(np.nextafter(p, np.inf)))
    return left, mid, right


def _jump_terms(act, lo: float, hi: float):
    """Jumps p in [lo, hi] as a list of (theta, direction, height) gates plus a constant.

    The interval is closed so that a jump exactly at the start of the staircase (where σ's
    value may differ from its right limit) is still an exact gate."""
    gates, const = [], 0.0
    for p in act.jumps:
        if not lo <= p <= hi:
            continue
        left, mid, right = _limits(act, p)
        if mid != left:
            gates.append((p, 1, mid - left))
        if right != mid:
            const += right - mid
            gates.append((p, -1, mid - right))
    return gates, const


def _continuous_part(act, t: np.ndarray, jump_gates, jump_const: float) -> np.ndarray:
    """σ_c(t) = σ(t) minus the jump terms (continuous, L-Lipschitz on the interval)."""
    vals = act(t).astype(np.float64)
    for theta, direction, height in jump_gates:
        fires = (t >= theta) if direction > 0 else (t <= theta)
        vals = vals - height * fires
    return vals - jump_const


def build_chain(act, lo: float, hi: float, n_steps: int, *, grid=None):
    """Staircase gates of σ on [lo, hi] with ``n_steps`` steps (thresholds θ_j = lo + jΔ).

    With ``grid = (offset, unit)`` the thresholds are put on the lattice offset + unit·Z (step a
    multiple of ``unit`` no larger than the requested Δ), so that gates become integer gates over
    lattice-valued pre-activations; the integer thresholds are then returned too.

    Returns
    -------
    dict with theta (float64), direction (int8), height (float64), T (int64 or None), base
    (σ_c(θ_0) + jump constant), step (the real spacing Δ), lipschitz (L on the interval).
    """
    R = max(abs(lo), abs(hi), 1e-300)
    L = float(act.lipschitz(R * (1 + 1e-12) + 1e-300))
    thetas, dirs, heights, Ts = [], [], [], []
    if grid is None:
        theta0 = lo
        step = (hi - lo) / n_steps if n_steps > 0 else 0.0
        stair = lo + step * np.arange(1, n_steps + 1) if n_steps > 0 else np.zeros(0)
        stair_T = None
    else:
        offset, unit = grid
        T0 = math.floor((lo - offset) / unit)
        theta0 = offset + unit * T0
        if n_steps > 0:
            k = max(1, int(math.floor((hi - lo) / n_steps / unit)))
            J = max(1, int(math.ceil(((hi - offset) / unit - T0) / k)))
            stair_T = T0 + k * np.arange(1, J + 1, dtype=np.int64)
            stair = offset + unit * stair_T.astype(np.float64)
            step = k * unit
        else:
            stair_T = np.zeros(0, dtype=np.int64)
            stair = np.zeros(0)
            step = 0.0
        L = float(act.lipschitz(max(R, abs(theta0), abs(stair[-1]) if stair.size else 0.0)
                                * (1 + 1e-12) + 1e-300))
    jump_gates, jump_const = _jump_terms(act, theta0, hi)
    if stair.size and L > 0:
        pts = np.concatenate([[theta0], stair])
        vals = _continuous_part(act, pts, jump_gates, jump_const)
        h = np.diff(vals)
        thetas.extend(stair.tolist())
        dirs.extend([1] * stair.size)
        heights.extend(h.tolist())
        if stair_T is not None:
            Ts.extend(stair_T.tolist())
    else:
        step = 0.0
    base = float(_continuous_part(act, np.array([theta0]), jump_gates, jump_const)[0]) + jump_const
    for theta, direction, height in jump_gates:
        thetas.append(theta)
        dirs.append(direction)
        heights.append(height)
        if grid is not None:
            offset, unit = grid
            x = (theta - offset) / unit
            Ts.append(math.ceil(x) if direction > 0 else math.floor(x))
    return {"theta": np.asarray(thetas, dtype=np.float64), "direction": np.asarray(dirs, np.int8),
            "height": np.asarray(heights, dtype=np.float64),
            "T": np.asarray(Ts, dtype=np.int64) if grid is not None else None,
            "base": base, "step": float(step), "lipschitz": L}


def chain_values(z: np.ndarray, theta: np.ndarray, direction: np.ndarray, height: np.ndarray):
    """sum_j height_j [direction_j (z - θ_j) >= 0] for a column of pre-activations z (N,)."""
    out = np.zeros(z.shape[0], dtype=np.float64)
    up = direction > 0
    if up.any():
        order = np.argsort(theta[up], kind="stable")
        th = theta[up][order]
        cum = np.concatenate([[0.0], np.cumsum(height[up][order])])
        out += cum[np.searchsorted(th, z, side="right")]
    for th, h in zip(theta[~up].tolist(), height[~up].tolist()):
        out += h * (z <= th)
    return out


@dataclass(frozen=True, eq=False)
class Staircase:
    """A depth-2 σ-network as a depth-2 threshold circuit with real weights (THEORY §4.1).

    Gate g belongs to neuron ``neuron[g]`` and fires iff ``direction[g]·(z - theta[g]) >= 0``
    for z = <w_i, x> + b_i; the top layer outputs ``base + sum_g top_weight[g]·gate_g``, which
    is within ``error_bound`` of N(x) for every x in the unit ball.  The threshold circuit
    classifies by ``N_stair(x) >= 1/2`` (top threshold 1/2 - base).

    Examples
    --------
    >>> from networks import SigmaNetwork
    >>> net = SigmaNetwork([([[1.0, 0.0]], [0.0]), ([[2.0]], [0.5])], activation="heaviside")
    >>> st = staircase(net, margin=0.1)
    >>> st.n_gates, st.error_bound < 1e-8         # Heaviside: one exact gate (float slack only)
    (1, True)
    >>> st.value([[0.3, 0.0], [-0.3, 0.0]]).tolist()
    [2.5, 0.5]
    """

    network: Depth2Parts = field(repr=False)
    neuron: np.ndarray
    direction: np.ndarray
    theta: np.ndarray
    height: np.ndarray
    base: float
    lo: np.ndarray
    hi: np.ndarray
    step: np.ndarray
    lipschitz: np.ndarray
    per_neuron_error: np.ndarray
    error_bound: float
    margin: "float | None"
    delta: "float | None"
    range_mode: str
    allocation: str
    steps: tuple = ()

    @property
    def n_gates(self) -> int:
        return int(self.theta.shape[0])

    @property
    def gates_per_neuron(self) -> np.ndarray:
        return np.bincount(self.neuron, minlength=self.network.width)

    @property
    def top_weight(self) -> np.ndarray:
        """u_i·h_j for every gate (|.| <= B·L·Δ)."""
        return self.network.u[self.neuron] * self.height

    @property
    def top_threshold(self) -> float:
        """The top gate fires iff sum_g top_weight_g·gate_g >= 1/2 - base."""
        return 0.5 - self.base

    @property
    def radius_global(self) -> float:
        return self.network.radius_global

    @property
    def radius_exact(self) -> np.ndarray:
        return self.network.radius_exact

    def value(self, X) -> np.ndarray:
        """N_stair(X): the circuit's real top-layer output on rows of X (float64 (N,))."""
        Z = self.network.preactivations(np.atleast_2d(np.asarray(X, dtype=np.float64)))
        out = np.full(Z.shape[0], self.base, dtype=np.float64)
        for i in range(self.network.width):
            sel = self.neuron == i
            if sel.any():
                out += self.network.u[i] * chain_values(Z[:, i], self.theta[sel],
                                                        self.direction[sel], self.height[sel])
        return out

    def classify(self, X) -> np.ndarray:
        """uint8: 1 iff N_stair(x) >= 1/2 (the threshold circuit's output)."""
        return (self.value(X) >= 0.5).astype(np.uint8)

    def summary(self) -> str:
        return "\n".join(self.steps)

    def to_dict(self) -> dict:
        return {"n_gates": self.n_gates, "width": self.network.width,
                "activation": self.network.activation.name,
                "error_bound": self.error_bound, "margin": self.margin, "delta": self.delta,
                "range": self.range_mode, "allocation": self.allocation,
                "radius_global": self.radius_global,
                "radius_exact_max": float(self.radius_exact.max()),
                "gates_per_neuron": self.gates_per_neuron.tolist(),
                "max_abs_top_weight": float(np.abs(self.top_weight).max()) if self.n_gates else 0.0,
                "steps": list(self.steps)}


def _steps_per_neuron(parts: Depth2Parts, lo, hi, *, margin, delta, allocation, range_mode):
    """Number of staircase steps m_i and the per-neuron target error δ_i."""
    w = parts.width
    B = parts.weight_bound
    lengths = hi - lo
    L = np.array([parts.activation.lipschitz(max(abs(a), abs(b), 1e-300))
                  for a, b in zip(lo.tolist(), hi.tolist())])
    if delta is not None:
        deltas = np.full(w, delta)
        m = np.ceil(lengths * L / delta)
    elif allocation == "uniform":
        deltas = np.full(w, margin / (w * B))
        if range_mode == "global":
            R = parts.radius_global
            m = np.array([math.ceil(2.0 * R * Li * w * B / margin) for Li in L.tolist()], float)
        else:
            m = np.ceil(lengths * L * w * B / margin)
    else:  # optimal: minimise sum m_i subject to sum |u_i| L_i Δ_i <= margin
        weights = np.sqrt(lengths * np.abs(parts.u) * L)
        total = weights.sum()
        with np.errstate(divide="ignore", invalid="ignore"):
            m = np.where(weights > 0, np.ceil(weights * total / margin), 0.0)
        deltas = np.where(m > 0, L * lengths / np.maximum(m, 1), 0.0)
    m = np.where(L > 0, m, 0).astype(np.int64)
    return m, deltas, L


def _chains(parts: Depth2Parts, lo, hi, m):
    """Build every neuron's chain of gates; returns the per-gate lists and the constant base."""
    neuron, direction, theta, height, steps_, Ls = [], [], [], [], [], []
    base = parts.u0
    for i in range(parts.width):
        ch = build_chain(parts.activation, float(lo[i]), float(hi[i]), int(m[i]))
        k = ch["theta"].shape[0]
        neuron.append(np.full(k, i, dtype=np.int64))
        direction.append(ch["direction"])
        theta.append(ch["theta"])
        height.append(ch["height"])
        steps_.append(ch["step"])
        Ls.append(ch["lipschitz"])
        base += parts.u[i] * ch["base"]
    return neuron, direction, theta, height, steps_, Ls, base


def _staircase_lines(parts, n_gates, range_, allocation, bound, margin, L, lo, hi) -> tuple:
    B = parts.weight_bound
    lines = [
        f"staircase (THEORY §4.1): {parts.width} {parts.activation.name} neurons -> {n_gates} "
        f"threshold gates ({range_} ranges, {allocation} allocation)",
        f"  pre-activation radius: tight max_i |b_i| + ||w_i|| = {parts.radius_exact.max():.4g}; "
        f"global R = B(sqrt(d)+1) = {parts.radius_global:.4g} (B = {B:.4g}, d = {parts.dim})",
        f"  proven sup error on the unit ball: sum_i |u_i| L Δ_i = {bound:.6g}"
        + (f" <= margin γ' = {margin:.6g}" if margin is not None else ""),
    ]
    if margin is not None and allocation == "uniform" and range_ == "global" and L.max() > 0:
        formula = staircase_gate_count(parts.width, parts.radius_global, float(L.max()), B, margin)
        n_jump = _n_jump_gates(parts, lo, hi)
        lines.append(f"  gate-count formula w⌈2RLwB/γ'⌉ = {formula}; built {n_gates - n_jump} "
                     f"staircase gates + {n_jump} exact jump gates")
    return tuple(lines)


def staircase(network, *, margin: "float | None" = None, delta: "float | None" = None,
              range_mode: str = "ball", allocation: str = "uniform",
              weight_bound: "float | None" = None, max_gates: int = 10_000_000) -> Staircase:
    """Replace every σ-neuron of a depth-2 network by threshold gates (THEORY §4.1).

    Parameters
    ----------
    network : networks.SigmaNetwork
        Depth 2 (one hidden layer); any registered activation.
    margin : float, optional
        γ': the sup error |N - N_stair| allowed on the unit ball.  With ``allocation="uniform"``
        every neuron gets δ = γ'/(wB) (the spec's choice: #gates = w⌈2RLwB/γ'⌉ with
        ``range_mode="global"``); with ``"optimal"`` the steps are spread to minimise the gate count
        subject to sum_i |u_i| L Δ_i <= γ'.
    delta : float, optional
        Alternatively the per-neuron error δ of σ itself (exactly one of margin/delta).
    range_mode : {"ball", "global"}
        "ball": neuron i's exact range over the unit ball, [b_i - ||w_i||, b_i + ||w_i||];
        "global": [-R, R] with R = B(√d + 1) for every neuron (THEORY §4.0).
    allocation : {"uniform", "optimal"}
    weight_bound : float, optional
        Refuse networks with a weight beyond it.
    max_gates : int
        Refuse staircases with more gates (memory guard; raise it or increase the margin).

    Returns
    -------
    Staircase

    Raises
    ------
    ReductionError
        Bad margin/delta/range_mode/allocation, too many gates, depth other than 2.
    """
    parts = depth2_parts(network, weight_bound=weight_bound)
    if (margin is None) == (delta is None):
        raise ReductionError("give exactly one of margin (γ', the network's sup error) or delta "
                             "(the per-neuron error of σ), e.g. staircase(net, margin=0.05)")
    margin = check_real(margin, minimum=0, name="margin", allow_none=True)
    delta = check_real(delta, minimum=0, name="delta", allow_none=True)
    if range_mode not in ("ball", "global"):
        raise ReductionError(f"range_mode must be 'ball' or 'global', got {range_mode!r}")
    if allocation not in ("uniform", "optimal"):
        raise ReductionError(f"allocation must be 'uniform' or 'optimal', got {allocation!r}")
    if range_mode == "global":
        R = parts.radius_global
        lo = np.full(parts.width, -R)
        hi = np.full(parts.width, R)
    else:
        lo, hi = parts.ball_ranges
    m, _, _ = _steps_per_neuron(parts, lo, hi, margin=margin, delta=delta, allocation=allocation,
                                range_mode=range_mode)
    total = int(m.sum()) + len(parts.activation.jumps) * parts.width
    if total > max_gates:
        raise ReductionError(f"the staircase would have {total} gates > max_gates = {max_gates}; "
                             f"increase margin (now {margin}) / delta (now {delta}) or max_gates")
    neuron, direction, theta, height, steps_, Ls, base = _chains(parts, lo, hi, m)
    step = np.asarray(steps_)
    L = np.asarray(Ls)
    per = np.abs(parts.u) * L * step
    scale = 1.0 + abs(parts.u0) + float(np.abs(parts.u) @ np.maximum(np.abs(parts.activation(lo)),
                                                                     np.abs(parts.activation(hi))))
    bound = float(per.sum()) + FLOAT_SLACK * scale
    st_neuron = np.concatenate(neuron) if neuron else np.zeros(0, np.int64)
    n_gates = int(st_neuron.shape[0])
    lines = _staircase_lines(parts, n_gates, range_mode, allocation, bound, margin, L, lo, hi)
    return Staircase(network=parts, neuron=frozen(st_neuron, np.int64),
                     direction=frozen(np.concatenate(direction) if direction else [], np.int8),
                     theta=frozen(np.concatenate(theta) if theta else [], np.float64),
                     height=frozen(np.concatenate(height) if height else [], np.float64),
                     base=float(base), lo=frozen(lo, np.float64), hi=frozen(hi, np.float64),
                     step=frozen(step, np.float64), lipschitz=frozen(L, np.float64),
                     per_neuron_error=frozen(per, np.float64), error_bound=bound, margin=margin,
                     delta=delta, range_mode=range_mode, allocation=allocation, steps=tuple(lines))


def _n_jump_gates(parts, lo, hi) -> int:
    return sum(len(_jump_terms(parts.activation, float(a), float(b))[0])
               for a, b in zip(lo.tolist(), hi.tolist()))


