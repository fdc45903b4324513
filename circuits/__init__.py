"""depthsep.circuits: exact threshold circuits, Boolean functions and exhaustive simulation.

Cube convention (see :mod:`circuits.hypercube`): bit i of point k is ``(k >> i) & 1``; for
IP the first n variables are x (low bits), the next n are y.  Gate rule: ``w . z >= t``.

The core lives here; Boolean-function analysis (spectra, communication matrices, lower bounds,
threshold-function recognition) is :mod:`circuits.analysis`, and the plumbing every package
shares (errors, argument checks, rng, progress, the chunk runner, atomic files) is
:mod:`circuits.utils`.
"""

from circuits._version import __version__ as __version__
from circuits.utils.errors import DepthsepError, DimensionError, InvalidCircuitError
from circuits.hypercube import index_of, points
from circuits.threshold import ThresholdCircuit, ThresholdLayer
from circuits.functions import (And, BooleanFunction, Constant, InnerProductMod2, Majority, Or,
                                Parity, ThresholdFunction, TruthTable, as_boolean_function,
                                inner_product_mod2, ip_values, majority, parity)
from circuits.simulate import (Disagreements, count_disagreements, count_ones, evaluate,
                               evaluate_indices, truth_table)
from circuits.dispatch import KernelPlan, kernel_plan
from circuits.constructions import ip_depth2, ip_depth3, majority_gate, parity_depth2
from circuits.ip_product import ip_depth2_product
from circuits.ip_sections import ip_depth2_sections
from circuits.graph import DagCircuit, DagGate
from circuits.graph_view import from_networkx, to_networkx
from circuits.io import circuit_from_dict, circuit_to_dict, load_circuit, save_circuit
from circuits import analysis, utils

__all__ = [
    "DepthsepError", "DimensionError", "InvalidCircuitError",
    "index_of", "points",
    "ThresholdCircuit", "ThresholdLayer",
    "BooleanFunction", "InnerProductMod2", "Parity", "Majority", "And", "Or", "ThresholdFunction",
    "TruthTable", "Constant", "as_boolean_function", "inner_product_mod2", "ip_values", "parity",
    "majority",
    "Disagreements", "count_disagreements", "count_ones", "evaluate", "evaluate_indices",
    "truth_table", "KernelPlan", "kernel_plan",
    "ip_depth2", "ip_depth3", "majority_gate", "parity_depth2", "ip_depth2_product",
    "ip_depth2_sections",
    "DagCircuit", "DagGate", "to_networkx", "from_networkx",
    "save_circuit", "load_circuit", "circuit_to_dict", "circuit_from_dict",
    "analysis", "utils",
]
