"""One gate of a :class:`~circuits.graph.DagCircuit`: its type, its inputs and its threshold form.

A :class:`DagGate` is validated when it is made: a known type (``AND``, ``OR``, ``NOT``, ``MAJ``,
``THR``, ``XOR``; the table of :mod:`circuits.graph`), inputs that are circuit inputs ``("x", i)``
or names of other gates, no repeats, and for ``THR`` one nonzero integer weight per input with an
integer threshold whose pre-activation is bounded (:func:`circuits.threshold.preactivation_bound`).
:mod:`circuits.graph` builds circuits from these gates and re-exports :class:`DagGate` and
:data:`GATE_TYPES`.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral

import numpy as np

from circuits.utils.errors import InvalidCircuitError
from circuits.threshold import preactivation_bound

__all__ = ["GATE_TYPES", "DagGate"]

#: The gate types of a :class:`~circuits.graph.DagCircuit`.
GATE_TYPES = ("AND", "OR", "NOT", "MAJ", "THR", "XOR")



def _is_int(v) -> bool:
    return isinstance(v, Integral) and not isinstance(v, (bool, np.bool_))


def _input_ref(ref):
    """``("x", i)`` (or a list ``["x", i]``) -> ``("x", i)``; anything else -> None."""
    if isinstance(ref, (tuple, list)) and len(ref) == 2 and ref[0] == "x":
        return ("x", ref[1])
    return None


def _normalise_ref(ref, gate: str):
    inp = _input_ref(ref)
    if inp is not None:
        if not _is_int(inp[1]) or int(inp[1]) < 0:
            raise InvalidCircuitError(f"gate {gate!r}: input reference {ref!r} must be ('x', i) with "
                                      f"an int i >= 0")
        return ("x", int(inp[1]))
    if isinstance(ref, str) and ref:
        return ref
    raise InvalidCircuitError(f"gate {gate!r}: input {ref!r} must be ('x', i) for circuit input i or "
                              f"the name (a non-empty str) of another gate")


@dataclass(frozen=True, eq=False)
class DagGate:
    """One gate of a :class:`DagCircuit`.

    Parameters
    ----------
    name : str
        Unique, non-empty.
    type : {"AND", "OR", "NOT", "MAJ", "THR", "XOR"}
        Case-insensitive.
    inputs : sequence
        Each ``("x", i)`` (circuit input i) or the name of another gate; no repeats.
    weights : sequence of int, optional
        Only for ``THR`` (one nonzero integer per input); implied for the other types.
    threshold : int, optional
        Only for ``THR``.

    Examples
    --------
    >>> g = DagGate("g", "maj", [("x", 0), ("x", 1), "h"])
    >>> g.type, g.threshold_form()
    ('MAJ', ((1, 1, 1), 2))
    """

    name: str
    type: str
    inputs: tuple
    weights: "tuple | None" = None
    threshold: "int | None" = None

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name:
            raise InvalidCircuitError(f"gate name must be a non-empty str, got {self.name!r}")
        name = self.name
        kind = self.type.upper() if isinstance(self.type, str) else self.type
        if kind not in GATE_TYPES:
            raise InvalidCircuitError(f"gate {name!r}: unknown gate type {self.type!r}; choose one of "
                                      f"{list(GATE_TYPES)}")
        if isinstance(self.inputs, (str, bytes)) or not hasattr(self.inputs, "__iter__"):
            raise InvalidCircuitError(f"gate {name!r}: inputs must be a sequence of references, got "
                                      f"{self.inputs!r}")
        inputs = tuple(_normalise_ref(r, name) for r in self.inputs)
        if not inputs:
            raise InvalidCircuitError(f"gate {name!r} has no inputs; every gate reads at least one "
                                      f"input or gate")
        if len(set(inputs)) != len(inputs):
            dup = next(r for r in inputs if inputs.count(r) > 1)
            raise InvalidCircuitError(f"gate {name!r} reads {dup!r} twice; use a THR gate with a "
                                      f"larger weight instead")
        if name in inputs:
            raise InvalidCircuitError(f"gate {name!r} reads itself (a cycle)")
        if kind == "NOT" and len(inputs) != 1:
            raise InvalidCircuitError(f"gate {name!r}: NOT takes exactly one input, got {len(inputs)}")
        weights, threshold = self.weights, self.threshold
        if kind == "THR":
            if weights is None or threshold is None:
                raise InvalidCircuitError(f"gate {name!r}: a THR gate needs weights and threshold")
            if isinstance(weights, (str, bytes)) or not hasattr(weights, "__iter__"):
                raise InvalidCircuitError(f"gate {name!r}: weights must be a sequence of ints")
            weights = tuple(weights)
            if len(weights) != len(inputs):
                raise InvalidCircuitError(f"gate {name!r}: {len(weights)} weights for {len(inputs)} "
                                          f"inputs; give one weight per input")
            for w in weights:
                if not _is_int(w):
                    raise InvalidCircuitError(f"gate {name!r}: weights must be integers, found {w!r}")
                if int(w) == 0:
                    raise InvalidCircuitError(f"gate {name!r}: zero weight; drop that input instead "
                                              f"(a DAG stores only wires that carry a signal)")
            if not _is_int(threshold):
                raise InvalidCircuitError(f"gate {name!r}: threshold must be an integer, got "
                                          f"{threshold!r}")
            weights = tuple(int(w) for w in weights)
            threshold = int(threshold)
            preactivation_bound(weights, threshold, what=f"gate {name!r}: pre-activation bound")
        elif weights is not None or threshold is not None:
            raise InvalidCircuitError(f"gate {name!r}: weights/threshold are implied by type {kind}; "
                                      f"use type 'THR' for custom weights")
        object.__setattr__(self, "type", kind)
        object.__setattr__(self, "inputs", inputs)
        object.__setattr__(self, "weights", weights)
        object.__setattr__(self, "threshold", threshold)

    def threshold_form(self):
        """``(weights, threshold)`` of this gate as one threshold gate, or None for XOR."""
        k = len(self.inputs)
        if self.type == "THR":
            return self.weights, self.threshold
        if self.type == "AND":
            return (1,) * k, k
        if self.type == "OR":
            return (1,) * k, 1
        if self.type == "NOT":
            return (-1,), 0
        if self.type == "MAJ":
            return (1,) * k, (k + 1) // 2
        return None

    def to_dict(self) -> dict:
        """The JSON-ready description of the gate."""
        d = {"name": self.name, "type": self.type,
             "inputs": [list(r) if isinstance(r, tuple) else r for r in self.inputs]}
        if self.type == "THR":
            d["weights"] = list(self.weights)
            d["threshold"] = self.threshold
        return d

    def equals(self, other) -> bool:
        """Same name, type, inputs, weights and threshold.

        Parameters
        ----------
        other : object
            The object to compare with.

        """
        return (isinstance(other, DagGate) and self.name == other.name and self.type == other.type
                and self.inputs == other.inputs and self.weights == other.weights
                and self.threshold == other.threshold)
