"""The σ-network -> threshold-circuit reduction and the worst-to-average self-reduction.

THEORY §4, as small composable steps, each returning a frozen object with ``.steps`` and
``.to_dict()``:

1. :func:`staircase` — σ-neurons -> threshold gates with a proven sup error (§4.1);
2. :func:`quantise` and :func:`threshold_circuit` — bottom weights on ηZ, K counts, the integer
   :class:`circuits.ThresholdCircuit` over the code bits, checked on all 4^n points (§4.2);
3. :func:`self_reduce` — k twisted XOR shifts, exact margins over all 4^n pairs (§4.3–4.4);
4. :func:`certify` — the chain of inequalities down to Forster's bound, and §4.7.

:func:`reduce_to_circuit` runs steps 1–2 and :func:`reduce_network` all four.

Examples
--------
>>> from embeddings import HardInstance
>>> from networks import SigmaNetwork
>>> inst = HardInstance(2, seed=0)
>>> net = SigmaNetwork([(inst.support().points[:3], [0.0, 0.0, 0.0]), ([[1.0, 1.0, 1.0]], [0.0])],
...                    activation="heaviside")
>>> res = reduce_to_circuit(net, inst, rho=0.5, margin=0.1)
>>> res.circuit.depth, res.circuit.n_inputs, res.n_disagree_real
(2, 16, 0)
"""

from networks.reduction.stair import Staircase, staircase, staircase_gate_count
from networks.reduction.quantisation import QuantisedNetwork, quantisation_grid, quantise
from networks.reduction.circuit import (CircuitReduction, circuit_bits, circuit_table,
                                        threshold_circuit)
from networks.reduction.concentration import bernstein_k, hoeffding_k
from networks.reduction.fwht import LeastK, ShiftConvolution, least_working_k
from networks.reduction.selfreduce import (SelfReduction, exact_shift_average, random_shifts,
                                           self_reduce, shifted_network, synthetic_approximator,
                                           twist_sign, twisted_sums, value_matrix)
from networks.reduction.certificates import (Certificate, Inequality, certify, correlation_bound,
                                             correlation_width_bound)
from networks.reduction.product import (ProductSupport, SupportMetrics, chain_table, ip_signs,
                                        product_support, staircase_table, support_metrics,
                                        value_table)
from networks.reduction.pipeline import (ReductionReport, reduce_network, reduce_to_circuit,
                                         support_mse)

__all__ = [
    "Staircase", "staircase", "staircase_gate_count",
    "QuantisedNetwork", "quantise", "quantisation_grid", "CircuitReduction", "threshold_circuit",
    "circuit_table", "circuit_bits",
    "SelfReduction", "self_reduce", "twisted_sums", "exact_shift_average", "hoeffding_k",
    "bernstein_k", "ShiftConvolution", "LeastK", "least_working_k", "random_shifts",
    "shifted_network",
    "synthetic_approximator", "twist_sign", "value_matrix",
    "Certificate", "Inequality", "certify", "correlation_bound", "correlation_width_bound",
    "ReductionReport", "reduce_network", "reduce_to_circuit", "support_mse",
    "ProductSupport", "product_support", "SupportMetrics", "support_metrics", "value_table",
    "chain_table", "ip_signs", "staircase_table",
]
