"""The whole reduction as one call: quantise -> threshold circuit -> self-reduction -> certificate."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from networks.reduction._common import depth2_parts
from networks.reduction.certificates import Certificate, certify
from networks.reduction.circuit import CircuitReduction, threshold_circuit
from networks.reduction.product import product_support, support_metrics
from networks.reduction.quantisation import QuantisedNetwork, quantise
from networks.reduction.selfreduce import SelfReduction, self_reduce

__all__ = ["ReductionReport", "reduce_network", "reduce_to_circuit", "support_mse"]


def support_mse(network, instance) -> float:
    """E_μ0 (N - f_d)² on the 4^n support points (f_d = IP there), exact, in product form."""
    return support_metrics(network, instance)[0].mse


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
    """Everything the reduction computed, with a readable ``steps`` log and ``to_dict()``.

    ``reduction`` is the self-reduction of the *quantised* network's values Ñ_q (the object the
    rank chain is about); ``reduction_circuit`` the same self-reduction applied to the integer
    circuit's Boolean output 1 - 2·C(x) (None without a circuit).
    """

    n: int
    m: int
    width: int
    activation: str
    mse: float
    quantised: QuantisedNetwork = field(repr=False)
    circuit: "CircuitReduction | None" = field(repr=False)
    reduction: SelfReduction = field(repr=False)
    reduction_circuit: "SelfReduction | None" = field(repr=False)
    certificate: Certificate = field(repr=False)
    timings: dict = field(default_factory=dict)

    @property
    def steps(self) -> tuple:
        out = list(self.quantised.steps)
        if self.circuit is not None:
            out += list(self.circuit.steps)
        out += ["on the quantised network's values Ñ_q:"] + list(self.reduction.steps)
        if self.reduction_circuit is not None:
            out += ["on the integer circuit's Boolean output 1 - 2·C(x):"]
            out += list(self.reduction_circuit.steps)
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
               "k_rule": red.k_rule, "least_k": red.least_k,
               "least_k_method": red.least.method, "bernstein_k": red.bernstein_k,
               "hoeffding_k": red.hoeffding_k, "bernstein_k_positive": red.bernstein_k_positive,
               "hoeffding_k_positive": red.hoeffding_k_positive, "variance": red.variance,
               "min_margin": red.min_margin, "margin_before": red.margin_before,
               "sign_agrees_everywhere": red.sign_agrees_everywhere,
               "n_sign_errors": red.n_sign_errors, "eta": self.quantised.eta,
               "K": self.quantised.K, "quantisation": self.quantised.to_dict(),
               "self_reduction": red.to_dict(), "bounds": self.certificate.to_dict(),
               "chain_ok": self.ok, "timings": dict(self.timings)}
        if self.circuit is not None:
            out["threshold_circuit"] = self.circuit.to_dict()
        if self.reduction_circuit is not None:
            out["self_reduction_circuit"] = self.reduction_circuit.to_dict()
        return out


def reduce_network(network, instance, *, k: "int | None" = None, seed=0, eta=None,
                   weight_bound=None, circuit: bool = True, circuit_margin=None,
                   top_error: float = 1e-6, circuit_max_gates: "int | None" = None,
                   delta: float = 0.5, k_rule: str = "bernstein",
                   k_max: "int | None" = None, client=None, executor=None,
                   progress: bool = False) -> ReductionReport:
    """Run steps 1–4 of THEORY §4 on a trained depth-2 network and the hard instance.

    Parameters
    ----------
    network : networks.SigmaNetwork
        Depth 2, input dimension d = 2m.
    instance : embeddings.HardInstance (or its ProductSupport)
    k : int, optional
        Copies; default the Bernstein k (``k_rule``) with M_emp and σ² measured (THEORY §4.8).
    seed : int
        Seed of the random shifts.
    eta : float, optional
        Quantisation grid (default from ρ, §4.2).
    weight_bound : float, optional
        Stated bound B on all weights (refused if exceeded).
    circuit : bool
        Also build the integer threshold circuit, evaluate it on all 4^n support points and
        self-reduce its Boolean output.
    circuit_margin, top_error : float, optional
        Passed to :func:`threshold_circuit`.
    circuit_max_gates : int, optional
        If given, the circuit's margin is raised as needed to stay within this many gates
        (``fit_max_gates``; stated in the circuit's steps) instead of refusing.
    delta : float
        Failure probability of the copy bounds.
    k_rule : {"bernstein", "hoeffding"}
        Which bound gives the default k.
    k_max : int, optional
        Cap on the default k.
    client, executor : optional
        Distribute the direct prefix scan (:func:`circuits.utils.parallel.run_chunks`).
    progress : bool
        Progress bars.
    """
    sup = product_support(instance)
    parts = depth2_parts(network, dim=sup.dim, weight_bound=weight_bound)
    timings = {}
    t0 = time.perf_counter()
    qn = quantise(parts, sup, eta=eta, weight_bound=weight_bound)
    timings["quantise"] = time.perf_counter() - t0
    circ = red_c = None
    if circuit:
        t0 = time.perf_counter()
        fit = {} if circuit_max_gates is None else {"max_gates": int(circuit_max_gates),
                                                    "fit_max_gates": True}
        circ = threshold_circuit(qn, margin=circuit_margin, top_error=top_error,
                                 progress=progress, **fit)
        timings["circuit"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    red = self_reduce(qn.value_matrix(), k=k, seed=seed, delta=delta, k_rule=k_rule,
                      k_max=k_max, client=client, executor=executor, progress=progress)
    timings["self_reduce"] = time.perf_counter() - t0
    if circ is not None and circ.rho_bits > 0:
        t0 = time.perf_counter()
        red_c = self_reduce(circ.boolean_value_matrix(), seed=seed, delta=delta, k_rule=k_rule,
                            k_max=k_max)
        timings["self_reduce_circuit"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    mse = qn.metrics_original.mse
    cert = certify(n=sup.n, width=parts.width, mse=mse, quantised=qn, reduction=red,
                   circuit=circ, delta=delta)
    timings["certify"] = time.perf_counter() - t0
    return ReductionReport(n=sup.n, m=sup.m, width=parts.width,
                           activation=parts.activation.name, mse=mse, quantised=qn,
                           circuit=circ, reduction=red, reduction_circuit=red_c,
                           certificate=cert, timings=timings)
