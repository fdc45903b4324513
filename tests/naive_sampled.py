"""Naive pure-Python twin of networks.separation._kernels_sampled._grid_step (loops, no numpy
vector ops): MSE over a K_a x K_b grid of pairs and its gradient w.r.t. alpha, beta, u, u0."""


def grid_step(alpha, beta, u, u0, Y):
    """Returns (sse, dalpha, dbeta, du, du0) as nested lists / floats."""
    Ka, Kb, w = len(alpha), len(beta), len(u)
    count = Ka * Kb
    sse, du0 = 0.0, 0.0
    dalpha = [[0.0] * w for _ in range(Ka)]
    dbeta = [[0.0] * w for _ in range(Kb)]
    du = [0.0] * w
    for a in range(Ka):
        for b in range(Kb):
            z = [float(alpha[a][i]) + float(beta[b][i]) for i in range(w)]
            act = [zi if zi > 0 else 0.0 for zi in z]
            out = float(u0) + sum(float(u[i]) * act[i] for i in range(w))
            err = out - float(Y[a][b])
            sse += err * err
            g = 2.0 * err / count
            du0 += g
            for i in range(w):
                if z[i] > 0:
                    du[i] += act[i] * g
                    dalpha[a][i] += g * float(u[i])
                    dbeta[b][i] += g * float(u[i])
    return sse, dalpha, dbeta, du, du0
