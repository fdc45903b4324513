"""What is separated: depth 2 vs depth 3 on IP with an easy control of the same shape (E23), the correlation ceiling on the hard instance (E21), radial targets (E22) and
the memorisation curve they supersede (E20).

* :mod:`networks.separation.separate` — E23: trained depth-2 nets at widths polynomial in n
  against IP, MAJ∘AND (same AND layer, the control that can separate) and random labels (hard for
  every depth); trained and exact depth 3; the explicit depth-2 IP_j floor; the verdict.
* :mod:`networks.separation.cells` — one cell of the E23/E25 tables: width rules, equal
  parameter counts, exact metrics, stopping rules, pinned threads;
  :mod:`networks.separation.cell_runs` — cells run one per task against a resume file.
* :mod:`networks.separation.depth_verdict` — the E23/E25 verdict: expressivity and learnability
  clauses, "separation shown" only by a clause that isolates depth.
* :mod:`networks.separation.curriculum` — E25: the ip_j curriculum, depth 3 vs depth 2 of equal
  parameter count, with cold and random-label controls (:func:`curriculum_table`); its designs:
  convergence-based stages, an AND stage with the first layer frozen, and held-out halves
  (:mod:`networks.separation.curriculum_heldout`: trained on a quarter of the pairs, measured on a
  disjoint quarter).
* :mod:`networks.separation.gradient_signal` — the label's exact gradient signal at
  initialisation, ‖E[S·∇N]‖ over all 4^n pairs.
* :mod:`networks.separation.sampled` / :mod:`networks.separation.sampled_verdict` — E24, the
  sampled mode and its centred per-norm verdict.
* :mod:`networks.separation.targets` — the target registry on pairs (a, b).
* :mod:`networks.separation.ceiling` — the §4.7 ceiling of a depth-2 network with its own B, S_σ,
  TV_σ; exact ρ from the product-form value table against the IP labels and a random permutation
  of them; held-out error on μ_τ; the exact depth-3 construction.
  Training is product-form Adam on all 4^n support points (:mod:`networks.train_product`).
* :mod:`networks.separation.radial` — radial targets on B_d: the targets, the ridge kernel and
  profile fit, ridge networks with measured sup error (dense + adversarial) and certificates;
  :mod:`networks.separation.radial_widths` — the widths at which the depth-2 ridge
  constructions, the depth-3 composition and trained nets reach an accuracy, SES T4.
* :mod:`networks.separation.reduction_run` — one whole run of the main job: train a depth-2
  network (:mod:`networks.train_product`), then reduce it (:mod:`networks.reduction`, which only
  reduces and never trains).
* :mod:`networks.separation.memorisation` — the E20 memorisation curve and its random-feature
  baseline (THEORY §5 row E20, superseded by E21/E22).
"""

from networks.separation.ceiling import (LABELS, CorrelationCeiling, ceiling_sweep,
                                         correlation_ceiling, default_widths, depth3_reference,
                                         evaluate_depth2, exact_correlation, heldout_error,
                                         label_table, train_depth2)

from networks.separation.separate import (PREDICTION, explicit_ip_j, heldout_split, path_norm,
                                          separation_table, verdict)
from networks.separation.targets import (get_target, register_target, target_names,
                                         target_table, target_values)

__all__ = ["PREDICTION", "explicit_ip_j", "heldout_split", "path_norm", "separation_table",
           "verdict", "get_target", "register_target", "target_names", "target_table",
           "target_values",
           "LABELS", "CorrelationCeiling", "ceiling_sweep", "correlation_ceiling",
           "default_widths", "depth3_reference", "evaluate_depth2", "exact_correlation",
           "heldout_error", "label_table", "train_depth2"]

from networks.separation.reduction_run import ReductionRun, reduction_run  # noqa: E402
from networks.separation.curriculum import curriculum_table  # noqa: E402

__all__ += ["ReductionRun", "reduction_run", "curriculum_table"]
