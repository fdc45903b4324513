"""The correlation ceiling of depth-2 networks on the hard instance (THEORY §4.7, experiment E21).

For a depth-2 σ-network N(x) = u_0 + Σ_{i≤w} u_i σ(⟨w_i, x⟩ + b_i) whose pre-activations on the
support lie in [-R, R], every neuron is a mixture of total mass TV_R(σ) of threshold gates
[α(a) + β(b) ≥ θ] plus the constant σ(-R), and each gate correlates with H = (-1)^IP by at most
c·2^{-n/2} (gate lemma, THEORY §1.2, c = n + 1).  With E[H] = 2^{-n}:

    |E_μ₀[H·N]| ≤ B·2^{-n} + w·B·(S_σ·2^{-n} + TV_R(σ)·c·2^{-n/2})            (THEORY §4.7)

with B = max |weight or bias|, S_σ = sup_{[-R,R]} |σ|.  Since ρ = E[H·Ñ] = E[H] - 2·E[H·N] for
Ñ = 1 - 2N, the ceiling on the correlation the experiment plots is |ρ| ≤ 2^{-n} + 2·(that).

:func:`correlation_ceiling` evaluates it with the network's own B, S_σ and TV_R(σ), R =
max_i (|b_i| + ‖w_i‖₂) (every support point and every μ_τ box point has norm ≤ 1), and also the
neuron-wise form Σ_i |u_i|(|σ(-R_i)|·2^{-n} + TV_{R_i}(σ)·c·2^{-n/2}) + |u_0|·2^{-n}, which is never
larger.  Both are proven only for the IP labels: for any other labelling the bound is not
claimed (:func:`evaluate_depth2` reports ``None``).

:func:`label_table` gives the IP labels or a fixed random permutation of them (same counts, the
control), :func:`exact_correlation` the exact ρ and MSE from :func:`networks.value_table` on all
4^n points, :func:`heldout_error` the error on fresh μ_τ box points, and :func:`depth3_reference`
the exact depth-3 construction (ρ = 1).  :func:`ceiling_sweep` runs the whole E21 table.

Examples
--------
>>> from embeddings import HardInstance
>>> from networks import SigmaNetwork
>>> inst = HardInstance(4, seed=0)
>>> net = SigmaNetwork.random([inst.dim, 8, 1], "sigmoid", seed=0, bias_scale=0.5)
>>> ceil = correlation_ceiling(net, inst.n)
>>> r = exact_correlation(net, inst, label_table(inst.n, "ip"))
>>> abs(r["rho"]) <= ceil.rho_bound and ceil.neuronwise_rho_bound <= ceil.rho_bound
True
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass

import numpy as np

from circuits.utils.errors import InvalidArgumentError
from circuits.utils.validation import check_int, check_real

__all__ = ["CorrelationCeiling", "correlation_ceiling", "label_table", "LABELS",
           "exact_correlation", "heldout_error", "box_instance", "depth3_reference", "evaluate_depth2",
           "train_depth2", "ceiling_sweep", "default_widths"]

#: Label sets of the experiment: the IP labels and a fixed random permutation of them.
LABELS = ("ip", "random")


@dataclass(frozen=True)
class CorrelationCeiling:
    """The §4.7 ceiling of one depth-2 network on the IP labels at n bits per party.

    ``corr_bound`` bounds |E_μ₀[H·N]|; ``rho_bound`` = 2^{-n} + 2·corr_bound bounds |ρ| = |E[H·Ñ]|.
    The ``neuronwise_*`` fields use each neuron's own |u_i|, R_i = |b_i| + ‖w_i‖₂, |σ(-R_i)| and
    TV_{R_i}(σ) (never larger).  ``cauchy_schwarz`` = √E[Ñ²] is the trivial bound |ρ| ≤ √E[Ñ²]
    (filled in by :func:`evaluate_depth2`); the ceiling says something only when below it.
    """

    n: int
    width: int
    activation: str
    B: float
    R: float
    S: float
    TV: float
    c: float
    corr_bound: float
    rho_bound: float
    neuronwise_corr_bound: float
    neuronwise_rho_bound: float

    def to_dict(self) -> dict:
        return asdict(self)


def _parts(net, dim=None):
    from networks.reduction._common import depth2_parts

    return depth2_parts(net, dim=dim)


def correlation_ceiling(net, n: int, *, c: "float | None" = None) -> CorrelationCeiling:
    """The §4.7 ceiling for ``net`` (depth 2) at n bits per party, from the net's own weights.

    Parameters
    ----------
    net : networks.SigmaNetwork
        Depth 2; its activation must report a finite total variation on [-R, R].
    n : int
        Bits per party (≥ 1).
    c : float, optional
        Gate-lemma constant; default n + 1 (real bottom weights, THEORY §1.2).

    Raises
    ------
    InvalidArgumentError
        The activation's total variation on [-R, R] is infinite (the formula does not apply).
    """
    n = check_int(n, name="n", minimum=1, what="bits per party")
    c = float(n + 1) if c is None else check_real(c, name="c", minimum=0,
                                                   what="gate-lemma constant")
    p = _parts(net)
    act = p.activation
    radii = p.radius_exact
    R = float(radii.max())
    B = p.weight_bound
    S = act.sup_abs(R)
    TV = act.total_variation(R)
    if not (math.isfinite(S) and math.isfinite(TV)):
        raise InvalidArgumentError(
            f"activation {act.name!r} has sup|σ| = {S} and total variation {TV} on [-R, R], R = "
            f"{R:g}: the §4.7 ceiling needs both finite (bounded variation on the pre-activation "
            f"range); use relu, sigmoid, tanh, heaviside, sign, hardtanh or softplus")
    w = p.width
    two_n, half = 2.0 ** -n, 2.0 ** (-n / 2)
    corr = B * two_n + w * B * (S * two_n + TV * c * half)
    tv_i = np.array([act.total_variation(float(r)) for r in radii])
    low_i = np.abs(act(-radii))
    nw = abs(p.u0) * two_n + float(np.sum(np.abs(p.u) * (low_i * two_n + tv_i * c * half)))
    return CorrelationCeiling(n=n, width=w, activation=act.name, B=B, R=R, S=float(S),
                              TV=float(TV), c=c, corr_bound=corr, rho_bound=two_n + 2 * corr,
                              neuronwise_corr_bound=nw, neuronwise_rho_bound=two_n + 2 * nw)


def label_table(n: int, labels: str = "ip", *, seed=0) -> np.ndarray:
    """Target table Y[a, b] (float64 0/1, rows = Alice): IP, or a fixed random permutation of the
    4^n IP labels (``labels="random"``; same number of ones, drawn from ``seed``).

    >>> Y = label_table(3, "random", seed=1)
    >>> int(Y.sum()) == int(label_table(3).sum()) == 2 ** 2 * (2 ** 3 - 1)
    True
    """
    from circuits.utils.rng import as_rng
    from networks.reduction.product import ip_signs

    n = check_int(n, name="n", minimum=1, what="bits per party")
    Y = (ip_signs(n) < 0).astype(np.float64)
    if labels == "ip":
        return Y
    if labels == "random":
        flat = Y.reshape(-1)
        return flat[as_rng(seed).permutation(flat.size)].reshape(Y.shape)
    raise InvalidArgumentError(f"labels must be one of {LABELS}, got {labels!r}")


def _fsum_table(T: np.ndarray) -> float:
    return math.fsum(np.sum(T, axis=1).tolist())


def exact_correlation(net, instance, Y: np.ndarray) -> dict:
    """Exact averages over the 4^n support points against targets Y (0/1 table):
    ``rho`` = E[(1 - 2Y)·(1 - 2N)], ``mse`` = E(N - Y)², ``accuracy``, ``second_moment`` = E[Ñ²],
    and the two scale-free measures: ``cos`` = ρ/√E[Ñ²] and ``r2_affine`` = the R² of the best
    affine rescaling a·N + c (the squared Pearson correlation of N and Y; 0 for a constant N).

    N is :func:`networks.value_table` (product form, O(2^n·m·w + 4^n·w)).
    """
    from networks.reduction.product import value_table

    V = value_table(net, instance)
    if Y.shape != V.shape:
        raise InvalidArgumentError(f"Y must have shape {V.shape} (the value table's), got {Y.shape}")
    total = float(V.size)
    Nt = 1.0 - 2.0 * V
    S = 1.0 - 2.0 * Y
    rho = _fsum_table(S * Nt) / total
    second = _fsum_table(Nt * Nt) / total
    # scale-free: cos = ρ/√E[Ñ²] (unchanged by Ñ -> cÑ, c > 0) and the best affine R² (squared
    # Pearson correlation of N and y, unchanged by N -> aN + c, a ≠ 0); centred in two passes
    Vc = V - _fsum_table(V) / total
    Yc = Y - _fsum_table(Y) / total
    vv, yy, vy = (_fsum_table(Vc * Vc) / total, _fsum_table(Yc * Yc) / total,
                  _fsum_table(Vc * Yc) / total)
    return {"rho": rho, "mse": _fsum_table((V - Y) ** 2) / total,
            "accuracy": float(np.count_nonzero((V >= 0.5) == (Y > 0.5))) / total,
            "second_moment": second,
            "cos": rho / math.sqrt(second) if second > 0 else 0.0,
            "r2_affine": (vy * vy / (vv * yy)) if vv > 0 and yy > 0 else 0.0}


def box_instance(instance, tau: float, *, code_seed=0):
    """The μ_τ version of ``instance`` (same code, boxes of radius τ); ``code_seed`` is the seed
    the instance was built with (checked: the codewords must agree)."""
    from embeddings import HardInstance

    tau = check_real(tau, name="tau", minimum=0, maximum=0.15, what="box radius of μ_τ")
    boxes = HardInstance(instance.n, instance.m, tau=tau, seed=code_seed)
    if not np.array_equal(boxes.embedding.codewords(), instance.embedding.codewords()):
        raise InvalidArgumentError(f"code_seed={code_seed!r} does not rebuild the instance's code; "
                                   f"pass the seed the HardInstance was built with")
    return boxes


def heldout_error(net, instance, Y: np.ndarray, *, tau: float = 0.1, points: int = 4096,
                  seed=0, code_seed=0) -> dict:
    """Error on fresh points of μ_τ (boxes around the support, THEORY §2.2).

    The target of a box point of pair (a, b) is Y[a, b] (for the IP labels this is f_d, which
    equals the label on the boxes).  Returns ``mse``, ``rho`` (E[(1 - 2Y)(1 - 2N)]) and
    ``accuracy`` over the sample, with ``tau`` and ``points``.
    """
    points = check_int(points, name="points", minimum=1, what="held-out sample size")
    boxes = box_instance(instance, tau, code_seed=code_seed)
    sample = boxes.sample(points, seed=seed)
    size = 1 << instance.n
    a, b = sample.indices % size, sample.indices // size
    y = Y[a, b]
    v = net(sample.points)
    return {"mse": float(np.mean((v - y) ** 2)),
            "rho": float(np.mean((1.0 - 2.0 * y) * (1.0 - 2.0 * v))),
            "accuracy": float(np.mean((v >= 0.5) == (y > 0.5))), "tau": tau, "points": points}


def depth3_reference(instance, *, tau: float = 0.1, points: int = 4096, seed=0,
                     code_seed=0) -> dict:
    """The exact depth-3 ReLU construction (THEORY §3.2) on the instance: ρ and MSE over all 4^n
    support points (streamed), and the held-out MSE of the box version (widths 2n, n + 1) on fresh
    μ_τ points.  ρ = 1 up to float rounding (exactly 1 when √(m/2) is a power of two)."""
    from networks.constructions import ip_depth3_relu

    c = ip_depth3_relu(instance)
    n = instance.n
    s_rho, s_mse, worst = [], [], 0.0
    for chunk in instance.iter_support(1 << 16):
        y = chunk.labels.astype(np.float64)
        v = c.network(chunk.points)
        s_rho.append(math.fsum(((1 - 2 * y) * (1 - 2 * v)).tolist()))
        s_mse.append(math.fsum(((v - y) ** 2).tolist()))
        worst = max(worst, float(np.abs(v - y).max()))
    total = float(4 ** n)
    box = box_instance(instance, tau, code_seed=code_seed)
    cb = ip_depth3_relu(box)
    smp = box.sample(points, seed=seed)
    hv = cb.network(smp.points)
    return {"rho": math.fsum(s_rho) / total, "mse": math.fsum(s_mse) / total, "max_error": worst,
            "width": max(c.widths), "widths": list(c.widths), "B": c.max_weight,
            "heldout_mse": float(np.mean((hv - smp.labels) ** 2)),
            "heldout_widths": list(cb.widths), "tau": tau}


def evaluate_depth2(net, instance, labels: str, Y: np.ndarray, *, tau: float = 0.1,
                    points: int = 4096, seed=0, code_seed=0) -> dict:
    """One row of E21 for a trained (or any) depth-2 network: exact ρ and MSE on μ₀ against Y,
    the §4.7 ceiling (IP labels only, else None), the Cauchy–Schwarz bound √E[Ñ²], the held-out
    error on μ_τ."""
    ex = exact_correlation(net, instance, Y)
    ho = heldout_error(net, instance, Y, tau=tau, points=points, seed=seed, code_seed=code_seed)
    row = {"rho": ex["rho"], "mse": ex["mse"], "accuracy": ex["accuracy"],
           "cauchy_schwarz": math.sqrt(ex["second_moment"]),
           "heldout_mse": ho["mse"], "heldout_rho": ho["rho"],
           "heldout_accuracy": ho["accuracy"], "B": net.weight_bound}
    if labels == "ip":
        ceil = correlation_ceiling(net, instance.n)
        row.update(bound=ceil.rho_bound, bound_neuronwise=ceil.neuronwise_rho_bound,
                   ceiling=ceil.to_dict(),
                   bound_informative=bool(ceil.rho_bound < row["cauchy_schwarz"]))
    else:
        row.update(bound=None, bound_neuronwise=None, ceiling=None, bound_informative=None)
    return row


def train_depth2(instance, width: int, Y: np.ndarray, *, activation: str = "relu", seed=0,
                 epochs: int = 300, lr: float = 0.02, weight_bound: "float | None" = None,
                 patience: int = 60, target_loss: float = 1e-4, bias_scale: float = 0.5):
    """A depth-2 net of the given width trained by full-batch Adam on all 4^n support points
    against Y (product form, :func:`networks.train_product.train_product`).  Returns TrainResult."""
    from networks.sigma import SigmaNetwork
    from networks.train_product import train_product

    width = check_int(width, name="width", minimum=1, what="hidden units")
    net = SigmaNetwork.random([instance.dim, width, 1], activation, seed=seed,
                              bias_scale=bias_scale)
    return train_product(net, instance, targets=Y, epochs=epochs, lr=lr,
                         weight_bound=weight_bound, patience=patience, target_loss=target_loss,
                         tol=1e-7)


#: Largest n at which the n³ width rule runs by default (4^n·n³ pair-neuron terms per epoch).
CUBIC_MAX_N = 8


def default_widths(n: int) -> list:
    """The polynomial width rules n, n², n³ (n³ only for n <= CUBIC_MAX_N), as E23 uses: widths
    that grow like n·4^k reach 64n and memorise the 4^n support points at n <= 5.

    >>> default_widths(4), default_widths(10)
    ([4, 16, 64], [10, 100])
    """
    rules = [n, n * n] + ([n ** 3] if n <= CUBIC_MAX_N else [])
    return sorted(set(rules))


def run_seed(*key) -> int:
    """A 32-bit seed derived from a key (base seed, n, width, label index, repeat)."""
    return int(np.random.SeedSequence([int(k) for k in key]).generate_state(1)[0])


def ceiling_sweep(ns, *, widths=None, activation: str = "relu", seeds: int = 1, base_seed: int = 0,
                  labels=LABELS, epochs: int = 300, lr: float = 0.02,
                  weight_bound: "float | None" = None, tau: float = 0.1, heldout_points: int = 4096,
                  progress: bool = False) -> list:
    """The E21 table: for each n, width and label set, train ``seeds`` depth-2 nets on μ₀ and keep
    the best ρ; plus the exact depth-3 row per n.  ``widths`` is a list or a function n -> list
    (default :func:`default_widths`).  Returns a list of row dicts (see the experiment)."""
    from circuits.utils.progress import progress_bar
    from embeddings import HardInstance

    widths_of = widths if callable(widths) else ((lambda n: list(widths)) if widths is not None
                                                 else default_widths)
    ns = [check_int(n, name="n", minimum=1, maximum=12, what="bits per party") for n in ns]
    for lab in labels:
        if lab not in LABELS:
            raise InvalidArgumentError(f"labels must be among {LABELS}, got {lab!r}")
    jobs = sum(len(widths_of(n)) * len(labels) * seeds + 1 for n in ns)
    rows = []
    with progress_bar(jobs, enabled=progress, desc="ceiling", unit="run") as bar:
        for n in ns:
            inst = HardInstance(n, seed=base_seed)
            t0 = time.perf_counter()
            ref = depth3_reference(inst, tau=tau, points=heldout_points, seed=base_seed,
                                   code_seed=base_seed)
            rows.append({"n": n, "width": ref["width"], "depth": 3, "labels": "ip",
                         "activation": "relu", "rho": ref["rho"], "bound": None,
                         "mse": ref["mse"], "heldout_mse": ref["heldout_mse"], "seed": None,
                         "seconds": time.perf_counter() - t0, "widths": ref["widths"],
                         "B": ref["B"], "max_error": ref["max_error"],
                         "construction": "ip_depth3_relu (THEORY §3.2)",
                         "heldout_widths": ref["heldout_widths"]})
            bar.update(1)
            for li, lab in enumerate(labels):
                Y = label_table(n, lab, seed=run_seed(base_seed, n, 99))
                for w in widths_of(n):
                    tries = []
                    for r in range(seeds):
                        s = run_seed(base_seed, n, w, li, r)
                        t0 = time.perf_counter()
                        res = train_depth2(inst, w, Y, activation=activation, seed=s,
                                           epochs=epochs, lr=lr, weight_bound=weight_bound)
                        ev = evaluate_depth2(res.network, inst, lab, Y, tau=tau,
                                             points=heldout_points, seed=s,
                                             code_seed=base_seed)
                        ev.update(seed=s, seconds=time.perf_counter() - t0,
                                  epochs=res.history["epochs"], reason=res.history["reason"])
                        tries.append(ev)
                        bar.update(1)
                        bar.set_postfix(n=n, w=w, labels=lab, rho=f"{ev['rho']:.3f}")
                    best = max(tries, key=lambda e: e["rho"])
                    row = {"n": n, "width": w, "depth": 2, "labels": lab, "activation": activation,
                           **best, "rho_seeds": [e["rho"] for e in tries],
                           "seconds_all_seeds": sum(e["seconds"] for e in tries),
                           "weight_bound": weight_bound}
                    rows.append(row)
    return rows
