"""Sampled mode past the exhaustive sizes (THEORY §4.7, §4.8, row E24).

Nothing of size 2^n or 4^n is built: pairs (a, b) are drawn uniformly (μ₀ in product form), the
code rows Φ(a) = (2C(a) − 1)/√(2m) come from C(a) = aG mod 2 (a float64 product of the n message
bits with the n × m generator, exact: every sum is an integer ≤ n), labels from the target
registry (:func:`networks.separation.targets.target_values`).

Training (:func:`train_sampled`): mini-batch Adam on fresh pairs.  Each step draws K messages a
and K messages b and uses the K² pairs of their grid, in product form: the first layer is
α(a) + β(b) + b₁ with α = X_A(a) W_Aᵀ (K × w) and β = X_B(b) W_Bᵀ, so a step costs
O(K·m·w + K²·w) instead of O(K²·m·w).  Every pair of the grid is marginally uniform on the
support, so the gradient is unbiased.  An optional penalty λ·P on the path norm

    P = Σ_i |u_i| (|b_i| + ‖w_i‖₂)

traces the trade-off between ρ and P (:func:`path_norm`; the output bias u₀ is not in P and is
reported separately).

Estimation (:func:`estimate`): independent fresh pairs (not grids: the interval needs i.i.d.
terms), in chunks of ``chunk`` pairs with per-chunk seeds (deterministic, resumable).  Estimated:
ρ = E[S·Ñ] (S = 1 − 2y, Ñ = 1 − 2N), the hidden-unit correlation ρ_h = E[S·(Ñ − (1 − 2u₀))] =
−2Σ_i u_i E[S·ReLU(z_i)], MSE, γ = 1/4 − MSE and R² = 1 − MSE/Var(y).  Interval: the
empirical-Bernstein bound of Maurer & Pontil (2009, Thm 4), two-sided at level 1 − δ: for i.i.d.
X_i in a range of length L,

    |mean − E X| ≤ √(2·V·ln(4/δ)/N) + 7·L·ln(4/δ)/(3(N − 1))      (V = unbiased sample variance)

with a *proven* range: ‖x_{a,b}‖ = 1 gives |z_i| ≤ R_i = |b_i| + ‖w_i‖, so |N − u₀| ≤ P,
|S·Ñ| ≤ 1 + 2(|u₀| + P) (L = 2 + 4(|u₀| + P)), |S·(Ñ − (1 − 2u₀))| ≤ 2P (L = 4P) and
(N − y)² ≤ (1 + |u₀| + P)².  The CLT half-width z·√(V/N) is reported next to it (not used for
verdicts).

GPU (``device=``, optional PyTorch): :func:`train_sampled` and :func:`estimate` take a torch
device name (``"cuda"``, ``"cuda:0"``, ``"cpu"``).  Only the arithmetic moves there, in float64:
the grid step's forward and gradient, and the estimator's forward on each chunk.  The pairs,
labels, code rows, the Adam update and the estimator's moments and intervals stay on the host
and are the ones of the CPU path, so both paths agree to float64 rounding
(:mod:`networks.separation._torch_sampled`).  The default ``device=None`` is the numba path;
torch is never required.

The proven per-norm ceiling on IP (:func:`ip_ceiling_per_norm`).  On [−R_i, R_i],
ReLU(z) = ∫_0^{R_i} [z ≥ θ] dθ, so a neuron u_i·ReLU(⟨w_i, x⟩ + b_i) is a mixture of total mass
|u_i|·R_i of threshold gates [α(a) + β(b) ≥ θ − b_i].  The gate lemma (any real α, β;
:mod:`networks.separation.gate_lemma`) gives |E_μ₀[H·gate]| ≤ Γ_n·2^{−n/2} (Γ_n ≈ 0.22n + 1.2; the
dyadic argument of THEORY §1.2 gives n + 1), hence |E[H·u_i ReLU(z_i)]| ≤ |u_i|(|b_i| + ‖w_i‖)Γ_n2^{−n/2}
and, summing, for EVERY depth-2 ReLU net with H = (−1)^IP:

    |ρ_h| = |2 Σ_i u_i E[H·ReLU(z_i)]| ≤ K_n·P,      K_n = 2Γ_n·2^{−n/2},
    |ρ|  ≤ 2^{−n}·|1 − 2u₀| + K_n·P                   (E[H] = 2^{−n}).

This is the neuron-wise §4.7 bound of :func:`networks.separation.ceiling.correlation_ceiling`
specialised to ReLU (σ(−R) = 0, TV_R = R).  The verdict (:mod:`networks.separation.sampled_verdict`,
re-exported here) is **centred**: it compares Cov(S, h)/P − CI (h = −2(N − u₀), the estimator also
keeps the moments of S and h) with K_n + 2^{1−n}, so that a constant hidden unit, which passes the
uncentred ρ_h/P on an unbalanced target, is never certified; "certified" is a per-norm gap between
IP and the target at depth 2.  Depth 3: :func:`depth3_path_norm` of an exact depth-3 IP net
(THEORY §3.2: P₃ = n√m(2n + 1) + n(n + 1); the balanced net of
:mod:`networks.constructions.ip_norm`: 2(n − 1)n√m + O(n²)) against the depth-2 lower bound
(1 − 2^{−n})/K_n for ρ = 1; they cross at n* = :func:`depth3_crossing` (= 39; 45 before, with
the dyadic lemma and §3.2's net; :func:`crossings`).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from circuits.utils.errors import InvalidArgumentError
from circuits.utils.validation import check_int, check_real
from embeddings.code import code_bits, code_rows  # noqa: F401  (re-exported)

__all__ = ["SampledNet", "code_bits", "code_rows", "path_norm", "train_sampled", "estimate",
           "empirical_bernstein", "ip_ceiling_per_norm", "depth3_path_norm", "depth3_crossing",
           "verdict", "grid_loss_and_gradient", "seeds_verdict", "centred_ceiling_per_norm",
           "centred_interval", "depth2_norm_lower_bound", "depth3_norm_formula", "ip_rho_bound",
           "crossings"]


# ----------------------------------------------------------------------------- the network
@dataclass
class SampledNet:
    """Depth-2 ReLU net N(x) = u0 + Σ_i u_i ReLU(⟨W_A,i, x^A⟩ + ⟨W_B,i, x^B⟩ + b_i), x = (x^A, x^B)."""

    WA: np.ndarray
    WB: np.ndarray
    b: np.ndarray
    u: np.ndarray
    u0: float = 0.0

    @classmethod
    def random(cls, width: int, m: int, *, seed=0) -> "SampledNet":
        """Init: W ~ N(0, 1) (pre-activation variance 1 on ‖x‖ = 1), b = 0, u ~ N(0, 1/w), u₀ = 1/2."""
        from circuits.utils.rng import as_rng

        rng = as_rng(seed)
        d = 2 * m
        W = rng.normal(0.0, 1.0, size=(width, d))     # pre-activation variance 1 on ‖x‖ = 1
        u = rng.normal(0.0, 1.0 / math.sqrt(width), size=width)
        return cls(W[:, :m].copy(), W[:, m:].copy(), np.zeros(width), u, 0.5)

    @property
    def width(self) -> int:
        return int(self.u.size)

    def radii(self) -> np.ndarray:
        """R_i = |b_i| + ‖w_i‖₂ (bound on |pre-activation| over the unit ball)."""
        return np.abs(self.b) + np.sqrt(np.sum(self.WA ** 2, axis=1) + np.sum(self.WB ** 2, axis=1))

    def to_network(self):
        """The same net as a :class:`networks.SigmaNetwork` (input order Alice [0, m), Bob [m, 2m))."""
        from networks.sigma import DenseLayer, SigmaNetwork

        return SigmaNetwork([DenseLayer(np.hstack([self.WA, self.WB]), self.b),
                             DenseLayer(self.u[None, :], [self.u0])], activation="relu")

    def __call__(self, XA: np.ndarray, XB: np.ndarray) -> np.ndarray:
        """N on the pairs (row i of XA, row i of XB)."""
        Z = XA @ self.WA.T + XB @ self.WB.T + self.b
        np.maximum(Z, 0.0, out=Z)
        return Z @ self.u + self.u0

    def to_dict(self) -> dict:
        return {"WA": self.WA.tolist(), "WB": self.WB.tolist(), "b": self.b.tolist(),
                "u": self.u.tolist(), "u0": float(self.u0)}

    @classmethod
    def from_dict(cls, d: dict) -> "SampledNet":
        return cls(np.asarray(d["WA"], float), np.asarray(d["WB"], float), np.asarray(d["b"], float),
                   np.asarray(d["u"], float), float(d["u0"]))


def path_norm(net: SampledNet) -> float:
    """P = Σ_i |u_i|(|b_i| + ‖w_i‖₂) (output bias u₀ excluded; see the module docstring)."""
    return float(math.fsum((np.abs(net.u) * net.radii()).tolist()))


# ----------------------------------------------------------------------------- training
def grid_loss_and_gradient(net: SampledNet, XA: np.ndarray, XB: np.ndarray, Y: np.ndarray,
                           penalty: float = 0.0, *, kernel: bool = True):
    """MSE over the K_a × K_b grid of pairs (plus ``penalty``·P) and its gradient, in product form.

    Returns ``(loss, mse, [dWA, dWB, db, du, du0])``; Y is (K_a, K_b) with 0/1 labels.
    ``kernel``: the one-pass numba kernel (default) or the numpy twin (K_a·K_b·w temporaries).
    """
    alpha = XA @ net.WA.T                              # (Ka, w)
    beta = XB @ net.WB.T + net.b                       # (Kb, w)
    if kernel:
        from networks.separation._kernels_sampled import _grid_step

        dalpha, dbeta, du = np.zeros_like(alpha), np.zeros_like(beta), np.zeros(net.width)
        sse, du0 = _grid_step(np.ascontiguousarray(alpha), np.ascontiguousarray(beta),
                              np.ascontiguousarray(net.u, dtype=np.float64), float(net.u0),
                              np.ascontiguousarray(Y, dtype=np.float64), dalpha, dbeta, du)
        mse = sse / Y.size
    else:                                              # the naive twin (numpy, K_a·K_b·w arrays)
        Z = alpha[:, None, :] + beta[None, :, :]       # (Ka, Kb, w)
        act = np.maximum(Z, 0.0)
        out = act @ net.u + net.u0
        err = out - Y
        count = err.size
        mse = float(np.mean(err * err))
        g = (2.0 / count) * err                        # dL/dout
        du = np.einsum("abw,ab->w", act, g)
        du0 = float(g.sum())
        q = (Z > 0) * (g[:, :, None] * net.u)          # dL/dZ
        dalpha = q.sum(axis=1)
        dbeta = q.sum(axis=0)
    from networks.separation._sampled_penalty import _with_penalty

    return _with_penalty(net, penalty, mse,
                         [dalpha.T @ XA, dbeta.T @ XB, dbeta.sum(axis=0), du, np.array(du0)])


@dataclass
class TrainState:
    """Everything needed to continue training exactly (JSON-able via :meth:`to_dict`)."""

    net: SampledNet
    step: int = 0
    m1: list = field(default_factory=list)
    m2: list = field(default_factory=list)
    losses: list = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"net": self.net.to_dict(), "step": self.step,
                "m1": [np.asarray(x).tolist() for x in self.m1],
                "m2": [np.asarray(x).tolist() for x in self.m2], "losses": list(self.losses)}

    @classmethod
    def from_dict(cls, d: dict) -> "TrainState":
        return cls(SampledNet.from_dict(d["net"]), int(d["step"]),
                   [np.asarray(x, float) for x in d["m1"]], [np.asarray(x, float) for x in d["m2"]],
                   list(d["losses"]))


def _params(net: SampledNet) -> list:
    u0 = np.array(net.u0)
    return [net.WA, net.WB, net.b, net.u, u0]


def train_sampled(n: int, width: int, target: str, *, generator, steps: int = 2000, grid: int = 64,
                  lr: float = 0.01, penalty: float = 0.0, seed: int = 0, target_seed: int = 0,
                  state: "TrainState | None" = None, progress: bool = False,
                  betas=(0.9, 0.999), eps: float = 1e-8, log_every: int = 50,
                  kernel: bool = True, device=None) -> TrainState:
    """Mini-batch Adam on fresh grids of ``grid`` × ``grid`` pairs from μ₀ (product form).

    ``state`` continues an earlier run (same seeds): step s always draws its pairs from the
    generator seeded by (seed, s), so a resumed run equals an uninterrupted one.  Returns the
    final :class:`TrainState` (``losses``: mean grid MSE over each block of ``log_every`` steps).
    ``device``: None (numba kernel) or a torch device for the grid step (module docstring).
    """
    from circuits.utils.progress import progress_bar
    from networks.separation.targets import target_values

    n = check_int(n, name="n", minimum=1, maximum=62, what="bits per party")
    width = check_int(width, name="width", minimum=1, what="hidden units")
    steps = check_int(steps, name="steps", minimum=0, what="Adam steps")
    grid = check_int(grid, name="grid", minimum=1, what="messages per party per step")
    lr = check_real(lr, name="lr", minimum=0, what="Adam step size")
    penalty = check_real(penalty, name="penalty", minimum=0, strict=False, what="path-norm penalty λ")
    g = np.asarray(generator, dtype=np.uint8)
    if g.shape[0] != n:
        raise InvalidArgumentError(f"generator must have n = {n} rows, got shape {g.shape}")
    m = g.shape[1]
    from networks.separation import _torch_sampled

    dev = _torch_sampled.resolve_device(device)
    if state is None:
        state = TrainState(SampledNet.random(width, m, seed=np.random.default_rng([seed, 1])))
    net = state.net
    if net.width != width or net.WA.shape[1] != m:
        raise InvalidArgumentError(f"state holds a net of width {net.width} on m = "
                                   f"{net.WA.shape[1]}, expected width {width}, m = {m}")
    if not state.m1:
        state.m1 = [np.zeros_like(p) for p in _params(net)]
        state.m2 = [np.zeros_like(p) for p in _params(net)]
    b1, b2 = betas
    block = []
    with progress_bar(steps - state.step if steps > state.step else 0, enabled=progress,
                      desc=f"train n={n} w={width} {target}", unit="step") as bar:
        while state.step < steps:
            rng = np.random.default_rng([seed, 2, state.step])
            a = rng.integers(0, 1 << n, size=grid, dtype=np.int64)
            bb = rng.integers(0, 1 << n, size=grid, dtype=np.int64)
            Y = target_values(target, a[:, None], bb[None, :], n=n, seed=target_seed,
                              generator=g).astype(np.float64)
            if dev is None:
                _, mse, grads = grid_loss_and_gradient(net, code_rows(g, a), code_rows(g, bb), Y,
                                                       penalty, kernel=kernel)
            else:
                _, mse, grads = _torch_sampled.grid_loss_and_gradient(
                    net, code_rows(g, a), code_rows(g, bb), Y, penalty, dev)
            if not math.isfinite(mse):
                raise InvalidArgumentError(f"training diverged at step {state.step} (lr = {lr}): "
                                           f"lower lr")
            state.step += 1
            c1, c2 = 1.0 - b1 ** state.step, 1.0 - b2 ** state.step
            params = _params(net)
            for p, gr, s1, s2 in zip(params, grads, state.m1, state.m2):
                s1 *= b1
                s1 += (1.0 - b1) * gr
                s2 *= b2
                s2 += (1.0 - b2) * gr * gr
                p -= (lr / c1) * s1 / (np.sqrt(s2 / c2) + eps)
            net.u0 = float(params[4])
            block.append(mse)
            if len(block) == log_every:
                state.losses.append(float(np.mean(block)))
                block = []
            bar.update(1)
    if block:
        state.losses.append(float(np.mean(block)))
    return state


# ----------------------------------------------------------------------------- estimation
class _Moments:
    """Per-chunk sums combined with math.fsum (count, Σx, Σx²)."""

    def __init__(self):
        self.s1, self.s2, self.count = [], [], 0

    def add(self, x: np.ndarray):
        self.s1.append(float(np.sum(x)))
        self.s2.append(float(np.sum(x * x)))
        self.count += x.size

    def summary(self, span: float, delta: float, z: float) -> dict:
        N = self.count
        mean = math.fsum(self.s1) / N
        var = max(math.fsum(self.s2) / N - mean * mean, 0.0) * N / max(N - 1, 1)
        return {"mean": mean, "var": var, "count": N, "span": span,
                "ci_eb": empirical_bernstein(mean, var, N, span, delta),
                "ci_clt": z * math.sqrt(var / N)}


def estimate(net: SampledNet, target: str, *, n: int, generator, pairs: int = 10 ** 7,
             chunk: int = 1 << 16, seed: int = 0, target_seed: int = 0, delta: float = 0.05,
             depth3=None, progress: bool = False, device=None) -> dict:
    """ρ, ρ_h, MSE, γ, R² of ``net`` on ``pairs`` fresh i.i.d. pairs with empirical-Bernstein
    intervals at level 1 − ``delta`` (see the module docstring).  ``depth3``: a depth-3
    :class:`networks.SigmaNetwork` (the exact IP net) evaluated on the same pairs against IP
    (its max error and ρ are returned under ``"depth3"``).  ``device``: None (numpy) or a
    torch device for the net's forward on each chunk; everything else is unchanged.
    """
    from statistics import NormalDist

    from circuits.utils.progress import progress_bar
    from networks.separation.targets import target_values

    n = check_int(n, name="n", minimum=1, maximum=62, what="bits per party")
    pairs = check_int(pairs, name="pairs", minimum=2, what="sample size")
    chunk = check_int(chunk, name="chunk", minimum=1, what="pairs per chunk")
    delta = check_real(delta, name="delta", minimum=0, what="error probability")
    if not 0 < delta < 1:
        raise InvalidArgumentError(f"delta must lie in (0, 1), got {delta}")
    g = np.asarray(generator, dtype=np.uint8)
    from networks.separation import _torch_sampled

    dev = _torch_sampled.resolve_device(device)
    P = path_norm(net)
    u0 = float(net.u0)
    mom = {k: _Moments() for k in ("rho", "rho_h", "mse", "y", "S", "h")}
    d3_err, d3_rho = 0.0, _Moments()
    t0 = time.perf_counter()
    done = 0
    with progress_bar(pairs, enabled=progress, desc=f"estimate n={n} {target}", unit="pair",
                      unit_scale=True) as bar:
        for c in range(0, -(-pairs // chunk)):
            k = min(chunk, pairs - done)
            rng = np.random.default_rng([seed, 3, c])
            a = rng.integers(0, 1 << n, size=k, dtype=np.int64)
            b = rng.integers(0, 1 << n, size=k, dtype=np.int64)
            y = target_values(target, a, b, n=n, seed=target_seed, generator=g).astype(np.float64)
            XA, XB = code_rows(g, a), code_rows(g, b)
            out = net(XA, XB) if dev is None else _torch_sampled.forward(net, XA, XB, dev)
            S = 1.0 - 2.0 * y
            mom["rho"].add(S * (1.0 - 2.0 * out))
            h = -2.0 * (out - u0)                       # the hidden part of Ñ
            mom["rho_h"].add(S * h)
            mom["S"].add(S)
            mom["h"].add(h)
            mom["mse"].add((out - y) ** 2)
            mom["y"].add(y)
            if depth3 is not None:
                ip = target_values("ip", a, b, n=n).astype(np.float64)
                o3 = depth3(np.hstack([XA, XB]))
                d3_err = max(d3_err, float(np.max(np.abs(o3 - ip))))
                d3_rho.add((1.0 - 2.0 * ip) * (1.0 - 2.0 * o3))
            done += k
            bar.update(k)
    z = NormalDist().inv_cdf(1.0 - delta / 2.0)
    M = 1.0 + 2.0 * (abs(u0) + P)
    rho = mom["rho"].summary(2.0 * M, delta, z)
    rho_h = mom["rho_h"].summary(4.0 * P, delta, z)
    mse = mom["mse"].summary((1.0 + abs(u0) + P) ** 2, delta, z)
    ys = mom["y"].summary(1.0, delta, z)
    s_mom = mom["S"].summary(2.0, delta, z)
    h_mom = mom["h"].summary(4.0 * P, delta, z)
    var_y = ys["mean"] * (1.0 - ys["mean"])
    res = {"n": n, "target": target, "pairs": done, "delta": delta, "path_norm": P, "u0": u0,
           "rho": rho, "rho_h": rho_h, "mse": mse, "gamma": 0.25 - mse["mean"],
           "label_mean": ys["mean"], "S": s_mom, "h": h_mom,
           "r2": (1.0 - mse["mean"] / var_y) if var_y > 0 else None,
           "seconds": time.perf_counter() - t0,
           "device": "numpy (CPU)" if dev is None else f"torch {dev}",
           "interval": "empirical Bernstein (Maurer-Pontil 2009, Thm 4), two-sided, level 1 - delta, "
                       "proven ranges from ||x|| = 1; ci_clt is the normal approximation"}
    if depth3 is not None:
        res["depth3"] = {"max_abs_error": d3_err, "rho": d3_rho.summary(2.0, delta, z)["mean"]}
    return res


from networks.separation.sampled_verdict import (  # noqa: E402  (the proven side, re-exported)
    centred_ceiling_per_norm, centred_interval, crossings, depth2_norm_lower_bound,
    depth3_crossing, depth3_norm_formula, depth3_path_norm, empirical_bernstein,
    ip_ceiling_per_norm, ip_rho_bound, seeds_verdict, verdict)
