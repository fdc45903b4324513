"""Exact synthesis of least layered threshold circuits, one concept per module.

- :mod:`~circuits.analysis.synthesis.model` — the CP-SAT model of one depth-2 decision
  (:func:`decide_depth2`) and why its symmetry breaking is sound;
- :mod:`~circuits.analysis.synthesis.weights` — complete weight bounds and the NP classes of
  threshold functions they are computed from (:func:`weight_bound`);
- :mod:`~circuits.analysis.synthesis.symmetry` — the symmetry breakings and f's own group;
- :mod:`~circuits.analysis.synthesis.depth3` — THR o THR o THR (:func:`decide_depth3`);
- :mod:`~circuits.analysis.synthesis.least3` — the least THR o THR o THR layers
  (:func:`least_depth3`) and their enumerator twin;
- :mod:`~circuits.analysis.synthesis.witness` — lower-bound witnesses for the per-gate weight
  bound, proved by two solvers (:func:`check_weight_witness`);
- :mod:`~circuits.analysis.synthesis.least` — the least size (:func:`least_depth2`);
- :mod:`~circuits.analysis.synthesis.twin` — the exhaustive enumerator as a cross-check;
- :mod:`~circuits.analysis.synthesis.slicing` — hyperplanes slicing the edges of Q_n
  (:func:`decide_slicing`: "k planes cut all edges but at most one", by either solver);
- :mod:`~circuits.analysis.synthesis.second_cubes` — the cube split checked by the second
  solver, cube by cube;
- :mod:`~circuits.analysis.synthesis.restrict` — cubes refuted on restrictions of f (fixed
  inputs keep the top gate: :func:`~circuits.analysis.synthesis.restrict.solve_cube_restricted`);
- :mod:`~circuits.analysis.synthesis.refine` — one least-size row pushed with both solvers
  (:func:`~circuits.analysis.synthesis.refine.refine_row`) and refutations taken from validated
  cube records (:func:`~circuits.analysis.synthesis.refine.cube_reference`);
- :mod:`~circuits.analysis.synthesis.solver` and :mod:`~circuits.analysis.synthesis.records` —
  one bounded CP-SAT solve, witness re-verification and the claim records.
"""

from circuits.analysis.synthesis.depth3 import decide_depth3
from circuits.analysis.synthesis.least import least_depth2
from circuits.analysis.synthesis.least3 import first_layer_by_enumeration, least_depth3
from circuits.analysis.synthesis.model import decide_depth2
from circuits.analysis.synthesis.records import LeastDepth2, SizeClaim
from circuits.analysis.synthesis.slicing import (PATERSON_PLANES, decide_slicing, max_sliced_edges,
                                                 sliced_edges)
from circuits.analysis.synthesis.solver import SOLVER_NAME, verify_witness
from circuits.analysis.synthesis.symmetry import (DEFAULT_SYMMETRY, SYMMETRIES,
                                                  function_symmetries)
from circuits.analysis.synthesis.weights import (MAX_TOTAL_WEIGHT, NP_CLASSES,
                                                 count_threshold_functions_by_class,
                                                 count_threshold_n_classes, max_minimal_weight,
                                                 threshold_class_representatives, weight_bound,
                                                 weight_bound_record)
from circuits.analysis.synthesis.witness import WITNESS_8, check_weight_witness

__all__ = ["LeastDepth2", "SizeClaim", "least_depth2", "decide_depth2", "decide_depth3",
           "weight_bound", "max_sliced_edges", "decide_slicing", "sliced_edges", "PATERSON_PLANES",
           "function_symmetries", "threshold_class_representatives",
           "count_threshold_functions_by_class", "count_threshold_n_classes",
           "max_minimal_weight", "MAX_TOTAL_WEIGHT", "NP_CLASSES", "SOLVER_NAME",
           "SYMMETRIES", "DEFAULT_SYMMETRY", "verify_witness", "least_depth3",
           "first_layer_by_enumeration", "weight_bound_record", "WITNESS_8",
           "check_weight_witness"]
