"""Result records of exact synthesis: one decision (:class:`SizeClaim`) and a least size
(:class:`LeastDepth2`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from circuits.threshold import ThresholdCircuit

__all__ = ["SizeClaim", "LeastDepth2", "circuit_from_layers"]


def circuit_from_layers(layers) -> ThresholdCircuit:
    """A :class:`~circuits.threshold.ThresholdCircuit` from plain layer records
    (``[{"weights": [[...]], "thresholds": [...]}, ...]``, as cube results and state files hold
    them)."""
    import numpy as np

    from circuits.threshold import ThresholdLayer

    return ThresholdCircuit(tuple(ThresholdLayer(np.array(x["weights"], dtype=np.int64),
                                                 np.array(x["thresholds"], dtype=np.int64))
                                  for x in layers))


@dataclass(frozen=True)
class SizeClaim:
    """One decision "is there a circuit with ``size`` hidden gates?" and who made it."""

    size: int
    status: str            # "feasible", "infeasible" or "unknown"
    solver: str
    version: str
    wall_s: float
    hidden_weight: int
    top_weight: int
    complete: bool          # the weight bounds cover every threshold function of that fan-in
    #                         (always True for "feasible": a witness needs no bound)
    cross_checked: bool = False   # an infeasibility confirmed by the exhaustive enumerator
    # the second solver's opinion of this claim (second_opinion of
    # circuits.analysis.synthesis.second): verdict "confirmed" / "disagrees" / "unknown",
    # solver, version, wall_s
    second: "dict | None" = None

    def as_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class LeastDepth2:
    """Result of :func:`least_depth2`.

    ``size`` is the least s proved (None if undecided); otherwise the truth lies in
    ``[lower, upper]`` (``upper`` None when no circuit was found).  ``complete`` says whether
    the claims hold over *all* integer weights or only within the bounds in ``claims``.
    """

    n_inputs: int
    size: "int | None"
    lower: int
    upper: "int | None"
    circuit: "ThresholdCircuit | None"
    complete: bool
    claims: list = field(default_factory=list)
    options: dict = field(default_factory=dict)
    # sizes at which the two solvers disagreed (never hidden: the summary names them)
    disagreements: list = field(default_factory=list)

    @property
    def refutations_confirmed(self) -> bool:
        """Every infeasibility claim below ``lower`` was confirmed by the second solver."""
        return all(c.second is not None and c.second.get("verdict") == "confirmed"
                   for c in self.claims if c.status == "infeasible" and c.size < self.lower)

    @property
    def status(self) -> str:
        return "optimal" if self.size is not None else "unknown"

    def summary(self) -> str:
        scope = "over all integer weights" if self.complete else "within the weight bounds"
        refuted = [c for c in self.claims if c.status == "infeasible" and c.size < self.lower]
        if self.disagreements:
            note = f"; THE SOLVERS DISAGREE at s = {', '.join(map(str, self.disagreements))}"
        elif not refuted:
            note = ""
        elif self.refutations_confirmed:
            note = "; every refutation confirmed by the second solver"
        else:
            k = sum(1 for c in refuted
                    if c.second is None or c.second.get("verdict") != "confirmed")
            note = f"; {k} refutation(s) by CP-SAT alone (second solver not run or out of time)"
        if self.size is not None:
            return f"least THR o THR size = {self.size} (proved minimal {scope}{note})"
        up = "?" if self.upper is None else str(self.upper)
        return f"unknown: least size between {self.lower} and {up} ({scope}{note})"

    def as_dict(self) -> dict:
        c = self.circuit
        wit = None
        if c is not None:
            wit = {"hidden_weights": c.layers[0].weights.tolist(),
                   "hidden_thresholds": c.layers[0].thresholds.tolist(),
                   "top_weights": c.layers[1].weights[0].tolist(),
                   "top_threshold": int(c.layers[1].thresholds[0])}
        return {"n_inputs": self.n_inputs, "status": self.status, "size": self.size,
                "lower": self.lower, "upper": self.upper, "complete": self.complete,
                "summary": self.summary(), "witness": wit,
                "claims": [cl.as_dict() for cl in self.claims], "options": self.options,
                "disagreements": list(self.disagreements),
                "refutations_confirmed": self.refutations_confirmed}
