"""depthsep.circuits: exact threshold circuits, Boolean functions and exhaustive simulation.

Cube convention (see :mod:`circuits.hypercube`): bit i of point k is ``(k >> i) & 1``; for
IP the first n variables are x (low bits), the next n are y.  Gate rule: ``w . z >= t``.
"""

from circuits.errors import DepthsepError, DimensionError, InvalidCircuitError, ReductionError
from circuits.hypercube import MAX_EXHAUSTIVE_BITS, index_of, points
from circuits.rng import as_rng
from circuits.threshold import ThresholdCircuit, ThresholdLayer
from circuits.functions import (And, BooleanFunction, Constant, InnerProductMod2, Majority, Or,
                                Parity, ThresholdFunction, TruthTable, as_boolean_function,
                                inner_product_mod2, majority, parity)
from circuits.simulate import (Disagreements, KernelPlan, count_disagreements, count_ones,
                               evaluate, evaluate_indices, kernel_plan, truth_table, work_dtype)
from circuits.constructions import ip_depth2, ip_depth3, majority_gate, parity_depth2

from circuits.graph import DagCircuit, DagGate, from_networkx, to_networkx
from circuits.io import circuit_from_dict, circuit_to_dict, load_circuit, save_circuit
from circuits.threshold_functions import (ThresholdTest, chow_parameters, count_threshold_functions,
                                          is_threshold_function, min_depth2_size, minimal_weights,
                                          all_threshold_functions, threshold_gate)

__all__ = [
    "DepthsepError", "DimensionError", "InvalidCircuitError", "ReductionError",
    "MAX_EXHAUSTIVE_BITS", "index_of", "points", "as_rng",
    "ThresholdCircuit", "ThresholdLayer",
    "BooleanFunction", "InnerProductMod2", "Parity", "Majority", "And", "Or", "ThresholdFunction",
    "TruthTable", "Constant", "as_boolean_function", "inner_product_mod2", "parity", "majority",
    "Disagreements", "count_disagreements", "count_ones", "evaluate", "evaluate_indices",
    "truth_table", "work_dtype", "KernelPlan", "kernel_plan",
    "ip_depth2", "ip_depth3", "majority_gate", "parity_depth2",
]

__all__ += [
    "DagCircuit", "DagGate", "to_networkx", "from_networkx",
    "save_circuit", "load_circuit", "circuit_to_dict", "circuit_from_dict",
    "ThresholdTest", "is_threshold_function", "minimal_weights", "chow_parameters", "threshold_gate",
    "all_threshold_functions", "count_threshold_functions", "min_depth2_size",
]

from circuits.spectral import (Correlation, GateCorrelation, WalshSpectrum, correlation, degree,
                               fourier_coefficients, gate_ip_correlation, influences,
                               noise_sensitivity, spectral_norm, total_influence, walsh_hadamard,
                               walsh_hadamard_, walsh_spectrum)
from circuits.communication import (DiscrepancySearch, discrepancy, matrix_spectral_norm,
                                    max_discrepancy_search, numerical_rank, rectangle_sum,
                                    sign_matrix)
from circuits.bounds import (Bound, DiscriminatorCheck, advantage_bound, discriminator_check,
                             forster_sign_rank_bound, gate_lemma_bound, gate_lemma_constant,
                             lindsey_bound, maj_maj_bound, maj_thr_bound, parity_depth_bound,
                             thr_maj_bound, thr_thr_bound)

__all__ += [
    "walsh_hadamard", "walsh_hadamard_", "WalshSpectrum", "walsh_spectrum", "fourier_coefficients",
    "degree", "spectral_norm", "influences", "total_influence", "noise_sensitivity",
    "Correlation", "correlation", "GateCorrelation", "gate_ip_correlation",
    "sign_matrix", "rectangle_sum", "discrepancy", "DiscrepancySearch", "max_discrepancy_search",
    "matrix_spectral_norm", "numerical_rank",
    "Bound", "maj_maj_bound", "maj_thr_bound", "thr_maj_bound", "thr_thr_bound",
    "parity_depth_bound", "forster_sign_rank_bound", "lindsey_bound", "gate_lemma_constant",
    "gate_lemma_bound", "advantage_bound", "DiscriminatorCheck", "discriminator_check",
]
