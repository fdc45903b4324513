"""Private numba kernel of the sampled mode: the product-form grid step in one pass.

For the K_a × K_b grid of pairs, pre-activation z = alpha[a] + beta[b] (beta includes the bias),
out = u0 + Σ_i u_i ReLU(z_i), g = 2(out − Y)/count; accumulates Σ err², dL/du, dL/du0 and the
per-row / per-column sums of q = g·u·[z > 0] (dalpha, dbeta), with no K_a·K_b·w temporaries.
Naive twin: the numpy path of :func:`networks.separation.sampled.grid_loss_and_gradient`
(tests/test_sampled.py).  Never fastmath.
"""

import numpy as np

from circuits._jit import njit


@njit(cache=True, nogil=True)
def _grid_step(alpha, beta, u, u0, Y, dalpha, dbeta, du):
    """Fills dalpha (K_a, w), dbeta (K_b, w), du (w,) (all zero on entry); returns (Σ err², Σ g)."""
    Ka, w = alpha.shape
    Kb = beta.shape[0]
    scale = 2.0 / (Ka * Kb)
    sse = 0.0
    gsum = 0.0
    act = np.empty(w)
    for a in range(Ka):
        for b in range(Kb):
            out = u0
            for i in range(w):
                z = alpha[a, i] + beta[b, i]
                r = z if z > 0.0 else 0.0
                act[i] = r
                out += u[i] * r
            err = out - Y[a, b]
            sse += err * err
            g = scale * err
            gsum += g
            for i in range(w):
                if act[i] > 0.0:
                    du[i] += act[i] * g
                    q = g * u[i]
                    dalpha[a, i] += q
                    dbeta[b, i] += q
    return sse, gsum
