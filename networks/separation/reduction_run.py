"""One reduction run as a library call: train a depth-2 network on the hard instance in product
form, then steps 1-4 of THEORY §4 with their checks (E8-E11), all on the product-form engine of
§4.8 (value tables from α, β; neuron-wise circuit evaluation; FWHT self-reduction).

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
           "check_shift_identity", "correlation_route", "default_epochs", "sparse_mask"]

#: Epoch cap while 4^n·w <= 2^22 (pair, neuron) terms per epoch; above, proportionally fewer.
EPOCHS = 3000


@dataclass(frozen=True, eq=False)
class ReductionRun:
    """Outcome of :func:`reduction_run`.

    Attributes
    ----------
    record : dict
        JSON-ready: n, m, d, width, activation, seed, mse, gamma, rho, accuracy, training
        (with ``reached_target``), instance, staircase, shift_identity, the reduction report's
        fields (k, least_k, bernstein_k, hoeffding_k, sign_agrees_everywhere, ...), timings;
        ``error`` when the run stopped early.
    instance : embeddings.HardInstance
    network : networks.SigmaNetwork
        The trained network (Heaviside for ``activation="threshold"``).
    report : networks.reduction.ReductionReport or None
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


def default_epochs(n: int, width: int) -> int:
    """3000 epochs up to 2^22 (pair, neuron) terms per epoch, then 3000·2^22/(4^n·w), >= 30
    (n = 10, w = 64: 187), so that one run stays within minutes."""
    work = 4 ** n * width
    return EPOCHS if work <= 1 << 22 else max(30, EPOCHS * (1 << 22) // work)


def sparse_mask(width: int, m: int, reads: int, seed: int) -> np.ndarray:
    """Mask (w, 2m): neuron i reads ``reads`` random Alice and ``reads`` random Bob coordinates,
    so K_i^A, K_i^B <= 2^reads (the regime where the rank links bite, THEORY §4.8)."""
    rng = np.random.default_rng(seed)
    mask = np.zeros((width, 2 * m), dtype=bool)
    for i in range(width):
        mask[i, rng.choice(m, reads, replace=False)] = True
        mask[i, m + rng.choice(m, reads, replace=False)] = True
    return mask


#: Controls of the main job: a network that cannot be evidence of anything about IP, reduced by
#: the same code.  "constant": the best constant predictor N = E[IP] (no training, ρ = 4^-n > 0);
#: "random": the same training on a fixed random permutation of the IP labels.
CONTROLS = ("constant", "random")


def beats_constant(n: int, mse: float) -> bool:
    """MSE < 1/4 - 4^{-n-1}, the MSE of the best constant predictor E[IP] on μ0 (with a 1e-12
    allowance for rounding): only then can sign(M_k) = IP say anything about the network."""
    return bool(mse < 0.25 - 4.0 ** (-n - 1) - 1e-12)


def constant_network(instance, value: "float | None" = None):
    """The constant predictor N ≡ ``value`` (default E_μ0[IP] = (1 - 2^-n)/2, the best constant)
    as a width-2 depth-2 ReLU network N(x) = c + relu(x_1 + 1) - relu(x_1 + 1): exactly constant
    (two identical neurons cancel), with neurons the staircase can cut into gates."""
    from networks import SigmaNetwork

    c = (1.0 - 2.0 ** -instance.n) / 2 if value is None else float(value)
    W = np.zeros((2, instance.dim))
    W[:, 0] = 1.0
    return SigmaNetwork([(W, [1.0, 1.0]), ([[1.0, -1.0]], [c])], activation="relu")


def fit_depth2(instance, *, width: int, activation: str, gamma: float, epochs: "int | None",
               lr: float, seed: int, batch_size: "int | None" = None,
               sparse: "int | None" = None, progress: bool = False, targets=None):
    """Train a depth-2 network on the support in product form (networks.train_product) until
    MSE <= 1/4 - gamma or the epoch cap; returns (network, info).  ``info["reached_target"]``
    says whether the γ target was met.  Step activations are trained through a sigmoid
    surrogate (module notes)."""
    from networks import SigmaNetwork, get_activation
    from networks.train_product import refit_output_layer, train_product

    act = get_activation(activation)
    surrogate = bool(act.jumps) and act.lipschitz(1.0) == 0.0
    train_act = "sigmoid" if surrogate else act.name
    net0 = SigmaNetwork.random([instance.dim, width, 1], train_act, seed=seed)
    mask = None if sparse is None else sparse_mask(width, instance.m, sparse, seed)
    target = 0.25 - gamma
    epochs = default_epochs(instance.n, width) if epochs is None else epochs
    res = train_product(net0, instance, targets=targets, epochs=epochs, lr=lr, seed=seed,
                        batch_size=batch_size,
                        patience=None, target_loss=target, mask=mask, progress=progress,
                        desc=f"train {train_act} w={width}")
    h = res.history
    info = {"trained_activation": train_act, "epochs_run": int(h["epochs"]), "epoch_cap": epochs,
            "stopped": h["reason"], "target_mse": target,
            "reached_target": bool(h["reached_target"]), "train_seconds": h["seconds"],
            "train_mse": float(h["final_loss"]), "sparse_reads": sparse,
            "batch_size": batch_size, "form": "product"}
    net = res.network
    if surrogate:
        net = refit_output_layer(net, instance, activation=act.name)
        info["conversion"] = (f"sigmoid surrogate -> {act.name} neurons with the same (W, b); "
                              f"output layer refitted by least squares on the support")
    return net, info


def check_staircase(network, instance, *, margin: float, n_ball: int, seed: int):
    """Step 1 on the original network: staircase, checked on all 4^n support points (product
    form, :func:`networks.reduction.staircase_table`) and on random unit-ball points (E11).

    Returns ``(staircase, info)``; ``info["holds"]`` is the measured sup error <= the bound.
    """
    from networks.reduction import staircase, staircase_table, value_table

    st = staircase(network, margin=margin, allocation="optimal", max_gates=50_000_000)
    err_support = float(np.abs(value_table(network, instance) - staircase_table(st, instance)).max())
    err_ball = 0.0
    if n_ball > 0:
        X = uniform_ball(n_ball, instance.dim, seed=seed)
        err_ball = float(np.abs(network(X) - st.value(X)).max())
    return st, {"n_gates": st.n_gates, "margin": margin, "error_bound": st.error_bound,
                "max_error_support": err_support, "max_error_ball": err_ball,
                "n_ball_points": n_ball, "holds": max(err_support, err_ball) <= st.error_bound,
                "radius_exact_max": float(st.radius_exact.max()),
                "radius_global": st.radius_global, "steps": list(st.steps)}


def check_shift_identity(network, instance, *, seed: int, n_shifts: int = 4) -> dict:
    """N∘R_{r,s} is a depth-2 net with N∘R_{r,s}(x_{a,b}) = N(x_{a⊕r,b⊕s}) (THEORY §4.3),
    checked on all pairs from value tables."""
    from networks.reduction import random_shifts, shifted_network, value_table

    V = value_table(network, instance)
    idx = np.arange(1 << instance.n)
    worst = 0.0
    shifts = random_shifts(instance.n, n_shifts, seed=seed)
    for r, s in shifts.tolist():
        Vs = value_table(shifted_network(network, instance, r, s), instance)
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


def _stop(record, msg, instance, net, **extra):
    record.update(error=msg, sign_agrees_everywhere=False, chain_ok=False, **extra)
    return record


def reduction_run(n: int, width: int, activation: str = "relu", *, m: "int | None" = None,
                  seed: int = 0, gamma: float = 0.05, epochs: "int | None" = None,
                  lr: float = 0.03, batch_size: "int | None" = None, sparse: "int | None" = None,
                  k: "int | None" = None, k_rule: str = "bernstein", k_max: int = 1 << 30,
                  circuit: bool = True, circuit_margin: "float | None" = None,
                  max_gates: int = 400_000, ball_points: int = 10_000,
                  control: "str | None" = None, progress: bool = False) -> ReductionRun:
    """Train a depth-2 network on ``HardInstance(n, m, seed=seed)`` and reduce it end to end.

    Training: :func:`fit_depth2` (product form; ``epochs`` default :func:`default_epochs`;
    ``sparse=R`` restricts every neuron to R Alice and R Bob coordinates).  The staircase check
    uses margin max(ρ/4, 1e-3) and ``ball_points`` random unit-ball points; ``k``, ``k_rule``,
    ``k_max``, ``circuit``, ``circuit_margin`` go to :func:`networks.reduction.reduce_network`,
    with the circuit's margin raised to fit ``max_gates`` (said in its steps).  A run whose
    network does not beat the trivial predictor (ρ <= 0), or whose reduction raises a
    ReductionError (e.g. κ = 0 for a step activation, THEORY §4.6), returns early with
    ``record["error"]``.

    ``control="constant"`` reduces the best constant predictor instead of a trained network,
    ``control="random"`` trains on a fixed random permutation of the IP labels (both measured
    against IP): the concentration step gives sign(M_k) = IP for any table with ρ ≠ 0, so these
    show what the chain proves without any evidence.  ``record["evidence"]`` is True only when
    the network beats the best constant (:func:`beats_constant`) and sign(M_k) = IP everywhere.
    """
    if control is not None and control not in CONTROLS:
        from circuits.utils.errors import InvalidArgumentError

        raise InvalidArgumentError(f"control must be one of {CONTROLS} or None, got {control!r}")
    from embeddings import HardInstance
    from networks.reduction import product_support, reduce_network, support_metrics

    t_all = time.perf_counter()
    timings = {}
    t0 = time.perf_counter()
    instance = HardInstance(n, m, seed=seed)
    product_support(instance)                          # built once, reused by every step
    timings["instance"] = time.perf_counter() - t0
    if control == "constant":
        net = constant_network(instance)
        train_info = {"trained_activation": None, "epochs_run": 0, "epoch_cap": 0,
                      "stopped": "control: constant predictor, not trained",
                      "target_mse": 0.25 - gamma, "reached_target": False, "train_seconds": 0.0,
                      "train_mse": None, "sparse_reads": None, "batch_size": None,
                      "form": "constant"}
    else:
        targets = None
        if control == "random":
            from networks.separation.ceiling import label_table

            targets = label_table(n, "random", seed=seed).astype(np.float64)
        net, train_info = fit_depth2(instance, width=width, activation=activation, gamma=gamma,
                                     epochs=epochs, lr=lr, seed=seed, batch_size=batch_size,
                                     sparse=sparse, progress=progress, targets=targets)
        if control == "random":
            train_info["labels"] = "random permutation of the IP labels (control)"
    timings["train"] = train_info["train_seconds"]
    met, _ = support_metrics(net, instance)
    record = {"n": n, "m": instance.m, "d": instance.dim, "width": width,
              "activation": net.activation.name, "seed": seed, "mse": met.mse,
              "gamma": 0.25 - met.mse, "rho": met.rho, "accuracy": met.accuracy,
              "training": train_info, "instance": instance.to_dict(generator=False),
              "control": control, "beats_constant": beats_constant(n, met.mse),
              "evidence": False, "forster_k": 2.0 ** (n / 2)}
    if met.rho <= 0:
        _stop(record, f"the trained network does not beat the trivial predictor (ρ = "
                      f"{met.rho:.4g} <= 0); train longer (--epochs) or wider (--width)",
              instance, net)
        record["timings"] = {**timings, "total": time.perf_counter() - t_all}
        return ReductionRun(record, instance, net)
    t0 = time.perf_counter()
    st, record["staircase"] = check_staircase(net, instance, margin=max(met.rho / 4, 1e-3),
                                              n_ball=ball_points, seed=seed)
    record["shift_identity"] = check_shift_identity(net, instance, seed=seed)
    timings["checks"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    try:
        report = reduce_network(net, instance, k=k, seed=seed, k_rule=k_rule, k_max=k_max,
                                circuit=circuit, circuit_margin=circuit_margin,
                                circuit_max_gates=max_gates, progress=progress)
    except ReductionError as exc:
        _stop(record, str(exc), instance, net,
              correlation_route=correlation_route(net, instance, 0.25 - met.mse))
        record["timings"] = {**timings, "total": time.perf_counter() - t_all}
        return ReductionRun(record, instance, net, staircase=st)
    timings["reduction"] = time.perf_counter() - t0
    timings.update({f"reduction.{key}": v for key, v in report.timings.items()})
    rd = report.to_dict()
    rd.pop("timings", None)
    record.update(rd)
    record["evidence"] = bool(record["beats_constant"] and record.get("sign_agrees_everywhere"))
    timings["total"] = time.perf_counter() - t_all
    record["timings"] = timings
    return ReductionRun(record, instance, net, report=report, staircase=st)
