"""The whole reduction as one call: quantise -> threshold circuit -> self-reduction -> certificate."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from circuits.functions import inner_product_mod2
from networks.reduction._common import depth2_parts, instance_code_bits
from networks.reduction.certificates import Certificate, certify
from networks.reduction.quantisation import (CircuitReduction, QuantisedNetwork, quantise,
                                         threshold_circuit)
from networks.reduction.selfreduce import SelfReduction, self_reduce

__all__ = ["ReductionReport", "reduce_network", "reduce_to_circuit", "support_mse"]


def support_mse(network, instance) -> float:
    """E_μ0 (N - f_d)² on the 4^n support points (f_d = IP there)."""
    n, m, _ = instance_code_bits(instance)
    parts = depth2_parts(network, dim=2 * m)
    X = instance.support().points
    y = inner_product_mod2(n).astype(np.float64)
    return float(np.mean((parts(X) - y) ** 2))


def reduce_to_circuit(network, instance, *, eta=None, rho=None, margin=None,
                      weight_bound=None, top_error: float = 1e-6,
                      progress: bool = False) -> CircuitReduction:
    """Steps 1–2 in one call: quantise on ηZ, staircase on the lattice, integer ThresholdCircuit
    over the 2m code bits, evaluated on all 4^n support points (see :func:`quantise` and
    :func:`threshold_circuit` for the parameters).  ``result.circuit`` is the circuit,
    ``result.total_bound`` the proven |N_C - N| on the support.
    """
    qn = quantise(network, instance, rho=rho, eta=eta, weight_bound=weight_bound)
    return threshold_circuit(qn, margin=margin, top_error=top_error, progress=progress)


@dataclass(frozen=True, eq=False)
class ReductionReport:
    """Everything the reduction computed, with a readable ``steps`` log and ``to_dict()``."""

    n: int
    m: int
    width: int
    activation: str
    mse: float
    quantised: QuantisedNetwork = field(repr=False)
    circuit: "CircuitReduction | None" = field(repr=False)
    reduction: SelfReduction = field(repr=False)
    certificate: Certificate = field(repr=False)
    timings: dict = field(default_factory=dict)

    @property
    def steps(self) -> tuple:
        out = list(self.quantised.steps)
        if self.circuit is not None:
            out += list(self.circuit.steps)
        out += list(self.reduction.steps)
        return tuple(out)

    @property
    def ok(self) -> bool:
        return self.certificate.ok

    def summary(self) -> str:
        return "\n".join(self.steps) + "\n\n" + self.certificate.table()

    def to_dict(self) -> dict:
        red = self.reduction
        out = {"n": self.n, "m": self.m, "d": 2 * self.m, "width": self.width,
               "activation": self.activation, "mse": self.mse, "gamma": 0.25 - self.mse,
               "rho": self.quantised.rho, "rho_q": self.quantised.rho_q, "k": red.k,
               "min_margin": red.min_margin, "margin_before": red.margin_before,
               "sign_agrees_everywhere": red.sign_agrees_everywhere,
               "n_sign_errors": red.n_sign_errors, "least_k": red.least_k,
               "stable_k": red.stable_k, "eta": self.quantised.eta, "K": self.quantised.K,
               "quantisation": self.quantised.to_dict(), "self_reduction": red.to_dict(),
               "bounds": self.certificate.to_dict(), "chain_ok": self.ok,
               "timings": dict(self.timings)}
        if self.circuit is not None:
            out["threshold_circuit"] = self.circuit.to_dict()
        return out


def reduce_network(network, instance, *, k: "int | None" = None, seed=0, eta=None,
                   weight_bound=None, circuit: bool = True, circuit_margin=None,
                   top_error: float = 1e-6, delta: float = 0.5, k_max: "int | None" = None,
                   client=None, executor=None, progress: bool = False) -> ReductionReport:
    """Run steps 1–4 of THEORY §4 on a trained depth-2 network and the hard instance.

    Parameters
    ----------
    network : networks.SigmaNetwork
        Depth 2, input dimension d = 2m.
    instance : embeddings.HardInstance
    k : int, optional
        Copies; default the Hoeffding k with M_emp (THEORY §4.4).
    seed : int
        Seed of the random shifts.
    eta : float, optional
        Quantisation grid (default from ρ, §4.2).
    weight_bound : float, optional
        Stated bound B on all weights (refused if exceeded).
    circuit : bool
        Also build the integer threshold circuit and evaluate it on all 4^n support points.
    circuit_margin, top_error : float, optional
        Passed to :func:`threshold_circuit`.
    delta : float
        Failure probability for the Hoeffding k.
    k_max : int, optional
        Cap on the default (Hoeffding) k.
    client, executor : optional
        Distribute the margin computation (:func:`circuits.utils.parallel.run_chunks`).
    progress : bool
        Progress bars.
    """
    n, m, _ = instance_code_bits(instance)
    parts = depth2_parts(network, dim=2 * m, weight_bound=weight_bound)
    timings = {}
    t0 = time.perf_counter()
    qn = quantise(parts, instance, eta=eta, weight_bound=weight_bound)
    labels = inner_product_mod2(n).astype(np.float64)
    mse = float(np.mean((qn.values_original - labels) ** 2))      # E_μ0 (N - f_d)², f_d = IP
    timings["quantise"] = time.perf_counter() - t0
    circ = None
    if circuit:
        t0 = time.perf_counter()
        circ = threshold_circuit(qn, margin=circuit_margin, top_error=top_error,
                                 progress=progress)
        timings["circuit"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    red = self_reduce(qn.value_matrix(), k=k, seed=seed, delta=delta, k_max=k_max,
                      client=client, executor=executor, progress=progress)
    timings["self_reduce"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    cert = certify(n=n, width=parts.width, mse=mse, quantised=qn, reduction=red, circuit=circ,
                   delta=delta)
    timings["certify"] = time.perf_counter() - t0
    return ReductionReport(n=n, m=m, width=parts.width, activation=parts.activation.name, mse=mse,
                           quantised=qn, circuit=circ, reduction=red, certificate=cert,
                           timings=timings)
