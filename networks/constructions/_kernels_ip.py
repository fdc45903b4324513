"""Private numba kernel: a depth-3 ReLU net on all 4^n hard points in product form.

The first-layer pre-activation of pair (a, b) is alpha[a] + beta[b] (beta includes the bias);
layers 2–3 are applied per pair; the result is the largest |N − IP(a, b)|, IP(a, b) the parity
of popcount(a & b).  Naive twin: the network's own forward pass on the embedded points
(tests/test_ip_norm.py).  Never fastmath.
"""

import numpy as np

from circuits._jit import njit


@njit(cache=True, nogil=True)
def _cube_error(alpha, beta, W2, b2, v, v0):
    N, w1 = alpha.shape
    w2 = W2.shape[0]
    h = np.empty(w1)
    worst = 0.0
    for a in range(N):
        for b in range(N):
            for i in range(w1):
                z = alpha[a, i] + beta[b, i]
                h[i] = z if z > 0.0 else 0.0
            out = v0
            for k in range(w2):
                z = b2[k]
                for i in range(w1):
                    z += W2[k, i] * h[i]
                if z > 0.0:
                    out += v[k] * z
            x = a & b
            par = 0
            while x:
                par ^= x & 1
                x >>= 1
            e = abs(out - par)
            if e > worst:
                worst = e
    return worst
