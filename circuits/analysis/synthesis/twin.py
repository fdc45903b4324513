"""The enumerator twin: an infeasibility claim checked by exhaustive search where it finishes
(:func:`~circuits.analysis.threshold_search.min_depth2_size`)."""

from __future__ import annotations

import numpy as np

from circuits.utils.errors import DepthsepError

__all__: "list[str]" = []


def _cross_check(t: np.ndarray, n: int, s: int, budget) -> bool:
    """Compare an infeasibility claim with the exhaustive enumerator where it finishes.

    ``budget`` True allows up to 10^6 hidden-gate sets (every N <= 3, s <= 2 at N = 4); an
    integer sets the limit (1.4 * 10^8 reaches s = 3 at N = 4, minutes).  Returns whether the
    check ran; raises if the enumerator finds a circuit the solver said does not exist.
    """
    from circuits.analysis.threshold_search import MAX_SEARCH_BITS, min_depth2_size
    from circuits.utils.errors import DimensionError

    if n > MAX_SEARCH_BITS or s > 6:
        return False
    limit = 10**6 if budget is True else int(budget)
    try:
        r = min_depth2_size(t, s, max_candidates=limit)
    except DimensionError:
        return False
    if r.size is not None:
        raise DepthsepError(
            f"CP-SAT claims no THR o THR circuit with {s} hidden gates, but the enumerator "
            f"found one with {r.size}; the solver claim is rejected")
    return True
