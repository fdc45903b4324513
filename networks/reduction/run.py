"""One reduction run as a library call: train a depth-2 network on the hard instance, then steps
1-4 of THEORY §4 with their checks (E8-E11).

:func:`reduction_run` is what ``experiments/reduction.py`` runs for each (n, width) and what the
THEORY table's rows E8-E11 measure; it returns a :class:`ReductionRun` whose ``record`` is the
JSON-ready report (the experiment adds versions and writes it) next to the objects it came from.

For a step activation (threshold = heaviside) gradients vanish, so :func:`fit_depth2` trains a
sigmoid surrogate; its hidden layer (W, b) is then read as Heaviside gates [Wx + b >= 0] and the
linear output layer is refitted by exact least squares on the support (the best top layer for
those gates).  The reported MSE is the Heaviside network's.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from circuits.utils.errors import ReductionError
from circuits.utils.rng import uniform_ball

__all__ = ["ReductionRun", "reduction_run", "fit_depth2", "check_staircase",
           "check_shift_identity", "correlation_route"]


@dataclass(frozen=True, eq=False)
class ReductionRun:
    """Outcome of :func:`reduction_run`.

    Attributes
    ----------
    record : dict
        JSON-ready: n, m, d, width, activation, seed, mse, gamma, rho, training, instance,
        staircase, shift_identity, the reduction report's fields, timings; ``error`` when the run
        stopped early (the network does not beat the trivial predictor, or a ReductionError).
    instance : embeddings.HardInstance
    network : networks.SigmaNetwork
        The trained network (Heaviside for ``activation="threshold"``, see the module notes).
    report : networks.reduction.ReductionReport or None
        None when the run stopped before the reduction.
    staircase : networks.reduction.Staircase or None
    """

    record: dict
    instance: object
    network: object
    report: object = None
    staircase: object = None

    @property
    def ok(self) -> bool:
        """sign(M_k) = IP everywhere and every link of the chain holds."""
        return bool(self.record.get("sign_agrees_everywhere") and self.record.get("chain_ok"))


def fit_depth2(instance, *, width: int, activation: str, gamma: float, epochs: int, lr: float,
               seed: int, progress: bool = False):
    """Train a depth-2 network on the support until MSE <= 1/4 - gamma; returns (network, info).

    Step activations are trained through a sigmoid surrogate (module notes).
    """
    from networks import SigmaNetwork, get_activation
    from networks.sigma import DenseLayer
    from networks.train import train

    act = get_activation(activation)
    surrogate = bool(act.jumps) and act.lipschitz(1.0) == 0.0
    train_act = "sigmoid" if surrogate else act.name
    sup = instance.support()
    X, y = sup.points, sup.labels.astype(np.float64)
    net0 = SigmaNetwork.random([instance.dim, width, 1], train_act, seed=seed)
    t0 = time.perf_counter()
    res = train(net0, X, y, epochs=epochs, lr=lr, seed=seed, patience=None,
                target_loss=0.25 - gamma, progress=progress, desc=f"train {train_act} w={width}")
    info = {"trained_activation": train_act, "epochs_run": int(res.history["epochs"]),
            "stopped": res.history.get("reason"), "train_seconds": time.perf_counter() - t0,
            "train_mse": float(res.history["final_loss"])}
    net = res.network
    if surrogate:
        hidden = net.layers[0]
        F = act(X @ hidden.weights.T + hidden.bias)
        A = np.concatenate([F, np.ones((F.shape[0], 1))], axis=1)
        coef, *_ = np.linalg.lstsq(A, y, rcond=None)
        net = SigmaNetwork([hidden, DenseLayer(coef[None, :-1], coef[-1:])], activation=act.name)
        info["conversion"] = (f"sigmoid surrogate -> {act.name} neurons with the same (W, b); "
                              f"output layer refitted by least squares on the support")
    return net, info


def check_staircase(network, instance, *, margin: float, n_ball: int, seed: int):
    """Step 1 on the original network: staircase, checked on the support and in the ball (E11).

    Returns ``(staircase, info)``; ``info["holds"]`` is the measured sup error <= the bound.
    """
    from networks.reduction import staircase, staircase_gate_count
    from networks.reduction._common import depth2_parts

    parts = depth2_parts(network)
    st = staircase(network, margin=margin, allocation="optimal", max_gates=50_000_000)
    X = instance.support().points
    err_support = float(np.abs(parts(X) - st.value(X)).max())
    err_ball = 0.0
    if n_ball > 0:
        B = uniform_ball(n_ball, instance.dim, seed=seed)
        err_ball = float(np.abs(parts(B) - st.value(B)).max())
    L = parts.activation.lipschitz(parts.radius_global + 1.0)
    formula = (staircase_gate_count(parts.width, parts.radius_global, L, parts.weight_bound,
                                    margin) if L > 0 else 0)
    return st, {"n_gates": st.n_gates, "margin": margin, "error_bound": st.error_bound,
                "max_error_support": err_support, "max_error_ball": err_ball,
                "n_ball_points": n_ball, "holds": max(err_support, err_ball) <= st.error_bound,
                "gate_count_formula_global_uniform": formula,
                "radius_exact_max": float(parts.radius_exact.max()),
                "radius_global": parts.radius_global, "steps": list(st.steps)}


def check_shift_identity(network, instance, *, seed: int, n_shifts: int = 4) -> dict:
    """N∘R_{r,s} is a depth-2 net with N∘R_{r,s}(x_{a,b}) = N(x_{a⊕r,b⊕s}) (THEORY §4.3)."""
    from networks.reduction import random_shifts, shifted_network, value_matrix

    n = instance.n
    X = instance.support().points
    V = value_matrix(network(X), n)
    idx = np.arange(1 << n)
    worst = 0.0
    shifts = random_shifts(n, n_shifts, seed=seed)
    for r, s in shifts.tolist():
        Vs = value_matrix(shifted_network(network, instance, r, s)(X), n)
        worst = max(worst, float(np.abs(Vs - V[np.ix_(idx ^ r, idx ^ s)]).max()))
    return {"shifts": shifts.tolist(), "max_abs_error": worst, "holds": worst <= 1e-9}


def correlation_route(network, instance, gamma: float) -> dict:
    """The §4.7 width lower bound (no quantisation, no self-reduction)."""
    from networks.reduction import correlation_width_bound
    from networks.reduction._common import depth2_parts

    parts = depth2_parts(network)
    R = parts.radius_global
    act = parts.activation
    w = correlation_width_bound(instance.n, gamma, parts.weight_bound, act.sup_abs(R),
                                act.total_variation(R))
    return {"width_lower_bound": w, "width": parts.width, "holds": parts.width >= w}


def reduction_run(n: int, width: int, activation: str = "relu", *, m: "int | None" = None,
                  seed: int = 0, gamma: float = 0.05, epochs: int = 3000, lr: float = 0.03,
                  k: "int | None" = None, k_max: int = 200_000, circuit: bool = True,
                  circuit_margin: "float | None" = None, ball_points: int = 10_000,
                  progress: bool = False) -> ReductionRun:
    """Train a depth-2 network on ``HardInstance(n, m, seed=seed)`` and reduce it end to end.

    The staircase check uses margin max(ρ/4, 1e-3) and ``ball_points`` random unit-ball points;
    ``k``, ``k_max``, ``circuit`` and ``circuit_margin`` go to
    :func:`networks.reduction.reduce_network`.  A run whose network does not beat the trivial
    predictor (ρ <= 0), or whose reduction raises a ReductionError (e.g. κ = 0 for a step
    activation, THEORY §4.6), returns early with ``record["error"]``.
    """
    from embeddings import HardInstance
    from networks.reduction import reduce_network, support_mse

    t_all = time.perf_counter()
    timings = {}
    t0 = time.perf_counter()
    instance = HardInstance(n, m, seed=seed)
    timings["instance"] = time.perf_counter() - t0
    net, train_info = fit_depth2(instance, width=width, activation=activation, gamma=gamma,
                                 epochs=epochs, lr=lr, seed=seed, progress=progress)
    timings["train"] = train_info["train_seconds"]
    mse = support_mse(net, instance)
    H = 1.0 - 2.0 * instance.ip_table().astype(np.float64)
    rho = float(np.mean(H * (1.0 - 2.0 * net(instance.support().points))))
    record = {"n": n, "m": instance.m, "d": instance.dim, "width": width,
              "activation": net.activation.name, "seed": seed, "mse": mse,
              "gamma": 0.25 - mse, "rho": rho, "training": train_info,
              "instance": instance.to_dict(generator=False)}
    if rho <= 0:
        record.update(error=f"the trained network does not beat the trivial predictor (ρ = "
                            f"{rho:.4g} <= 0); train longer (--epochs) or wider (--width)",
                      sign_agrees_everywhere=False, chain_ok=False)
        return ReductionRun(record, instance, net)
    t0 = time.perf_counter()
    st, st_info = check_staircase(net, instance, margin=max(rho / 4, 1e-3), n_ball=ball_points,
                                  seed=seed)
    timings["staircase"] = time.perf_counter() - t0
    record["shift_identity"] = check_shift_identity(net, instance, seed=seed)
    t0 = time.perf_counter()
    try:
        report = reduce_network(net, instance, k=k, seed=seed, k_max=k_max, circuit=circuit,
                                circuit_margin=circuit_margin, progress=progress)
    except ReductionError as exc:
        record.update(error=str(exc), sign_agrees_everywhere=False, chain_ok=False,
                      correlation_route=correlation_route(net, instance, 0.25 - mse))
        return ReductionRun(record, instance, net, staircase=st)
    timings["reduction"] = time.perf_counter() - t0
    timings.update({f"reduction.{key}": v for key, v in report.timings.items()})
    rd = report.to_dict()
    rd.pop("timings", None)
    record.update(rd)
    record["staircase"] = st_info
    record["training"] = train_info
    timings["total"] = time.perf_counter() - t_all
    record["timings"] = timings
    return ReductionRun(record, instance, net, report=report, staircase=st)
