"""Stopping and freezing rules of the product-form trainer: the stall rule (convergence-based
stopping: the best loss fell by less than a relative tolerance over a window of epochs) and the
Adam step that keeps the first hidden layer frozen."""

from __future__ import annotations

import numpy as np


class _FrozenFirst:
    """An Adam step that leaves the first hidden layer (params 0 and 1) unchanged."""

    def __init__(self, adam):
        self.adam, self.lr = adam, adam.lr

    def __call__(self, grads):
        grads = list(grads)
        grads[0], grads[1] = np.zeros_like(grads[0]), np.zeros_like(grads[1])
        self.adam(grads)


def _check_stall(window, tol):
    """(window, tol) of the stall rule, validated (window None: no rule)."""
    from circuits.utils.errors import InvalidArgumentError

    if window is None:
        return None, None
    if isinstance(window, bool) or not isinstance(window, (int, np.integer)) or window < 1:
        raise InvalidArgumentError(f"stall_window must be a positive int or None, got "
                                   f"{window!r}; it is the number of epochs over which the "
                                   f"relative loss improvement is measured")
    if isinstance(tol, bool) or not isinstance(tol, (int, float)) or not 0 <= tol < 1:
        raise InvalidArgumentError(f"stall_tol must be a number in [0, 1), got {tol!r}; it is "
                                   f"the relative improvement below which a run has stalled")
    return int(window), float(tol)


def _stalled(bests, stall) -> bool:
    """Whether the running best ``bests`` fell by less than ``tol`` (relative) over the last
    ``window`` epochs (``stall`` = (window, tol), window None: never)."""
    window, tol = stall
    if window is None or len(bests) <= window:
        return False
    before = bests[-1 - window]
    return before - bests[-1] < tol * before
