"""Exact synthesis of least layered THR o THR circuits: the entry points, re-exported from
:mod:`circuits.analysis.synthesis` (where each concept has its module), and the named targets
of ``depthsep least-circuit`` / ``separation-table`` (:func:`target_table`)."""

from __future__ import annotations

from pathlib import Path

from circuits.analysis.synthesis import (DEFAULT_SYMMETRY, MAX_TOTAL_WEIGHT, NP_CLASSES,
                                         PATERSON_PLANES, SOLVER_NAME, SYMMETRIES, LeastDepth2,
                                         SizeClaim, count_threshold_functions_by_class,
                                         count_threshold_n_classes, decide_depth2, decide_depth3,
                                         function_symmetries, least_depth2, max_minimal_weight,
                                         max_sliced_edges, sliced_edges,
                                         threshold_class_representatives, verify_witness,
                                         weight_bound)
from circuits.hypercube import points
from circuits.utils.errors import InvalidArgumentError

__all__ = ["LeastDepth2", "SizeClaim", "least_depth2", "decide_depth2", "decide_depth3",
           "weight_bound",
           "max_sliced_edges", "sliced_edges", "PATERSON_PLANES", "function_symmetries",
           "threshold_class_representatives", "count_threshold_functions_by_class",
           "count_threshold_n_classes",
           "max_minimal_weight", "MAX_TOTAL_WEIGHT",
           "NP_CLASSES", "SOLVER_NAME", "SYMMETRIES", "DEFAULT_SYMMETRY", "verify_witness",
           "target_table"]


def target_table(function: str, n: int, *, seed: int = 0, table=None):
    """Truth table and name of a named target (``depthsep least-circuit`` / ``separation-table``):
    ip (N = 2n), parity, majority, random, random-threshold (N = n), or table (a .npy or text
    file read by :func:`circuits.io.load_truth_table`: .npy, .json or text of 0/1)."""
    import numpy as np

    from circuits.functions import inner_product_mod2, majority, parity

    if function == "ip":
        if 2 * n > 8:
            raise InvalidArgumentError(f"--n {n}: IP_n has N = 2n inputs, at most 8 here")
        return inner_product_mod2(n), f"IP_{n}"
    if function == "parity":
        return parity(n), f"PAR_{n}"
    if function == "majority":
        return majority(n), f"MAJ_{n}"
    rng = np.random.default_rng(seed)
    if function == "random":
        return rng.integers(0, 2, size=1 << n, dtype=np.uint8), f"RAND_{n}(seed {seed})"
    if function == "random-threshold":
        w = rng.integers(-9, 10, size=n)
        s = (points(n).astype(np.int64) @ w)
        return (s >= int(np.median(s)) + 0).astype(np.uint8), f"RTHR_{n}(seed {seed})"
    if table is None:
        raise InvalidArgumentError("--function table needs --table FILE (a .npy or text file "
                                   "of 0/1 values, length 2^N)")
    from circuits.io import load_truth_table

    # the one truth-table reader: regular files only, size-capped, 0/1 checked before any cast
    path = Path(table)
    return load_truth_table(path), path.name
