"""circuits.analysis: Boolean-function analysis on top of the exact circuit core.

- :mod:`~circuits.analysis.fwht` — the fast Walsh–Hadamard transform (exact for integers);
- :mod:`~circuits.analysis.spectral` — Walsh spectra, Fourier coefficients, degree, influences,
  noise sensitivity;
- :mod:`~circuits.analysis.correlation` — exact correlations of two functions, and of one gate
  with IP (the counts behind the gate lemma);
- :mod:`~circuits.analysis.communication` — sign matrices (IP gives Sylvester–Hadamard),
  rectangle sums, discrepancy, numerical rank;
- :mod:`~circuits.analysis.bounds` — lower-bound calculators (HMPST, GHR/Nisan, Forster, IPS,
  Lindsey, the gate lemma, the discriminator check), each naming its formula;
- :mod:`~circuits.analysis.threshold_functions` — threshold-function recognition by LP/MILP
  (HiGHS) with exact certificates (decided in :mod:`~circuits.analysis._threshold_lp`),
  minimal weights, Chow parameters;
- :mod:`~circuits.analysis.threshold_search` — counts of monotone and threshold functions,
  small depth-2 searches;
- :mod:`~circuits.analysis.synthesis` (entry points re-exported by
  :mod:`~circuits.analysis.exact_synthesis`) — least THR o THR circuits by CP-SAT, with complete
  weight bounds and re-verified witnesses (:func:`least_depth2`).

Examples
--------
>>> from circuits import InnerProductMod2
>>> from circuits import analysis as A
>>> sorted(set(abs(A.walsh_spectrum(InnerProductMod2(3)).walsh).tolist()))
[8]
"""

from circuits.analysis.fwht import walsh_hadamard, walsh_hadamard_
from circuits.analysis.spectral import (WalshSpectrum, degree, fourier_coefficients, influences,
                                        noise_sensitivity, spectral_norm, total_influence,
                                        walsh_spectrum)
from circuits.analysis.correlation import (Correlation, GateCorrelation, correlation,
                                           correlation_counts, gate_ip_correlation)
from circuits.analysis.communication import (DiscrepancySearch, discrepancy, matrix_spectral_norm,
                                             max_discrepancy_search, numerical_rank,
                                             rectangle_sum, sign_matrix)
from circuits.analysis.bounds import (Bound, DiscriminatorCheck, advantage_bound,
                                      discriminator_check, forster_sign_rank_bound,
                                      gate_lemma_bound, gate_lemma_constant, lindsey_bound,
                                      maj_maj_bound, maj_thr_bound, parity_depth_bound,
                                      thr_maj_bound, thr_thr_bound)
from circuits.analysis.threshold_functions import (Summability, ThresholdTest, chow_parameters,
                                                   is_threshold_function, minimal_weights,
                                                   threshold_gate)
from circuits.analysis.threshold_search import (Depth2Size, all_threshold_functions,
                                                count_threshold_functions, min_depth2_size)
from circuits.analysis.exact_synthesis import (LeastDepth2, SizeClaim, decide_depth2,
                                               decide_depth3, least_depth2, weight_bound)

__all__ = [
    # spectral
    "walsh_hadamard", "walsh_hadamard_", "WalshSpectrum", "walsh_spectrum", "fourier_coefficients",
    "degree", "spectral_norm", "influences", "total_influence", "noise_sensitivity",
    "Correlation", "correlation", "correlation_counts", "GateCorrelation", "gate_ip_correlation",
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
    # exact synthesis (OR-Tools CP-SAT)
    "LeastDepth2", "SizeClaim", "least_depth2", "decide_depth2", "decide_depth3", "weight_bound",
]
