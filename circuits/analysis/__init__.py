"""circuits.analysis: Boolean-function analysis on top of the exact circuit core.

- :mod:`~circuits.analysis.spectral` — the fast Walsh–Hadamard transform (exact for integers),
  Walsh spectra, Fourier coefficients, degree, influences, noise sensitivity, exact correlations;
- :mod:`~circuits.analysis.communication` — sign matrices (IP gives Sylvester–Hadamard),
  rectangle sums, discrepancy, numerical rank;
- :mod:`~circuits.analysis.bounds` — lower-bound calculators (HMPST, GHR/Nisan, Forster, IPS,
  Lindsey, the gate lemma, the discriminator check), each naming its formula;
- :mod:`~circuits.analysis.threshold_functions` — threshold-function recognition by LP/MILP
  (HiGHS) with exact certificates, minimal weights, counts, small depth-2 searches.

Examples
--------
>>> from circuits import InnerProductMod2
>>> from circuits import analysis as A
>>> sorted(set(abs(A.walsh_spectrum(InnerProductMod2(3)).walsh).tolist()))
[8]
"""

from circuits.analysis.spectral import (Correlation, GateCorrelation, WalshSpectrum, correlation,
                                        degree, fourier_coefficients, gate_ip_correlation,
                                        influences, noise_sensitivity, spectral_norm,
                                        total_influence, walsh_hadamard, walsh_hadamard_,
                                        walsh_spectrum)
from circuits.analysis.communication import (DiscrepancySearch, discrepancy, matrix_spectral_norm,
                                             max_discrepancy_search, numerical_rank,
                                             rectangle_sum, sign_matrix)
from circuits.analysis.bounds import (Bound, DiscriminatorCheck, advantage_bound,
                                      discriminator_check, forster_sign_rank_bound,
                                      gate_lemma_bound, gate_lemma_constant, lindsey_bound,
                                      maj_maj_bound, maj_thr_bound, parity_depth_bound,
                                      thr_maj_bound, thr_thr_bound)
from circuits.analysis.threshold_functions import (Depth2Size, Summability, ThresholdTest,
                                                   all_threshold_functions, chow_parameters,
                                                   count_threshold_functions,
                                                   is_threshold_function, min_depth2_size,
                                                   minimal_weights, threshold_gate)

__all__ = [
    # spectral
    "walsh_hadamard", "walsh_hadamard_", "WalshSpectrum", "walsh_spectrum", "fourier_coefficients",
    "degree", "spectral_norm", "influences", "total_influence", "noise_sensitivity",
    "Correlation", "correlation", "GateCorrelation", "gate_ip_correlation",
    # communication
    "sign_matrix", "rectangle_sum", "discrepancy", "DiscrepancySearch", "max_discrepancy_search",
    "matrix_spectral_norm", "numerical_rank",
    # bounds
    "Bound", "maj_maj_bound", "maj_thr_bound", "thr_maj_bound", "thr_thr_bound",
    "parity_depth_bound", "forster_sign_rank_bound", "lindsey_bound", "gate_lemma_constant",
    "gate_lemma_bound", "advantage_bound", "DiscriminatorCheck", "discriminator_check",
    # threshold functions
    "ThresholdTest", "Summability", "Depth2Size", "is_threshold_function", "minimal_weights",
    "chow_parameters", "threshold_gate", "all_threshold_functions", "count_threshold_functions",
    "min_depth2_size",
]
