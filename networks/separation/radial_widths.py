"""Depth-2 and depth-3 widths for radial targets (experiment E22): the constructions of
:mod:`networks.separation.radial` at increasing size until the measured sup error is <= ε, and
trained depth-2 nets for comparison.

* :func:`ridge_depth2` (depth 2, any d): the least-ℓ1 even ReLU profile (linear programme,
  :func:`~networks.separation.radial.fit_ridge_profile`) averaged over N directions; the
  smallest N (powers of two) whose measured sup error is <= ε, by one pass over prefixes of the
  direction sequence; width N · 2 · #{γ_k != 0}.
* :func:`ses_ridge_d3` (depth 2, d = 3 only): SES's ridge route g = φ + rφ' (THEORY §3.6).
* :func:`composition_depth3` (depth 3): the ‖x‖² net followed by an interpolant of s ↦ φ(√s);
  certified error L√(d/K²) + 3L/J.
* :func:`trained_widths`: depth-2 ReLU nets trained by Adam on points uniform in B_d; L2 error on
  fresh points for widths 1, 2, 4, ….

The functions are also reachable as ``networks.separation.radial.<name>``.
"""

from __future__ import annotations

import math
import time

import numpy as np

from circuits.utils.rng import as_rng
from circuits.utils.validation import check_int
from networks.separation.radial import (RidgeNet, dense_sample, directions,
                                        fit_ridge_profile, get_target, hat_certificate,
                                        search_effort, sup_error)

__all__ = ["ridge_depth2", "ses_ridge_d3", "composition_depth3", "trained_widths"]


def ridge_depth2(target, d: int, eps_list, *, max_directions: int = 1 << 14,
                 points: "int | None" = None, seed=0, max_knots: int = 128) -> dict:
    """Smallest ridge depth-2 network (N a power of two) whose searched sup error (a lower bound,
    :func:`sup_error`; ``points`` defaults to :func:`search_effort`) is ≤ ε, for each ε.

    Returns {ε: record} with ``width``, ``directions``, ``knots``, ``profile_error``,
    ``profile_l1``, ``dense``/``adversarial``/``sup`` errors, for the hat ``certified_sup`` (an
    upper bound, :func:`hat_certificate`, None where not cheap) and ``certified``; or
    ``width=None`` (and the best error reached) when no N ≤ ``max_directions`` (or no profile)
    works, with ``cap_artefact`` when that is the direction cap for a zonotope norm.
    """
    tgt = get_target(target)
    d = check_int(d, name="d", minimum=2, what="dimension")
    points = search_effort(d)["points"] if points is None else points
    eps_list = sorted({float(e) for e in eps_list}, reverse=True)
    X = dense_sample(d, points, seed=seed)
    out = {}
    t0 = time.perf_counter()
    Wall = directions(max_directions, d, seed=seed) if d > 3 else None
    for eps in eps_list:
        prof = fit_ridge_profile(tgt, d, eps / 4, max_knots=max_knots)
        if prof is None:
            out[eps] = {"width": None, "reason": f"no profile within eps/4 on <= {max_knots} knots"}
            continue
        rec = {"width": None, "knots": int(prof.knots.size), "J": prof.J,
               "profile_error": prof.fit_error, "profile_l1": prof.l1,
               "reason": f"sup error > eps up to {max_directions} directions"}
        xs, ys = prof.table()
        y = tgt(X)
        N = 1
        acc = np.zeros(X.shape[0])
        done = 0
        Wseq = Wall
        best = math.inf
        while N <= max_directions:
            if d <= 3:                        # structured directions are not nested: recompute
                Wn = directions(N, d)
                net = RidgeNet(prof, Wn)
                dense = float(np.abs(net(X) - y).max())
            else:
                chunk = Wseq[done:N]
                acc += np.interp(np.abs(X @ chunk.T), xs, ys).sum(axis=1)
                done = N
                dense = float(np.abs(acc / N - y).max())
                net = None
            best = min(best, dense)
            if dense <= eps:
                net = net or RidgeNet(prof, Wseq[:N])
                se = sup_error(net, net.gradient, tgt, X, seed=seed)
                if se["sup"] <= eps:
                    rec.update(width=net.width, directions=N, reason="ok", **se)
                    if tgt.name == "hat":
                        cert = hat_certificate(net, tol=eps / 4)
                        rec["certified_sup"] = None if cert is None else cert["certified_sup"]
                        rec["certificate"] = cert
                        rec["certified"] = cert is not None and cert["certified_sup"] <= eps
                    break
            N *= 2
        rec["best_dense_error"] = best
        if rec["width"] is None and tgt.name == "hat" and prof.knots.size == 1:
            need = d / eps ** 2
            rec["cap_artefact"] = (
                f"the net is a zonotope norm: approximating the Euclidean norm to eps needs "
                f"about d/eps^2 = {need:.0f} directions (up to a constant); the cap "
                f"{max_directions} is {'below' if max_directions < need else 'near'} that, so "
                f"this cell says nothing about depth 2 (a cap artefact, not a separation)")
        out[eps] = rec
    for r in out.values():
        r["seconds_total"] = time.perf_counter() - t0
    return out


def ses_ridge_d3(target, eps_list, *, max_directions: int = 1 << 13, points: int = 4000,
                 seed=0, max_width: int = 1 << 17) -> dict:
    """SES's d = 3 ridge route (g = φ + rφ', THEORY §3.6) through
    :func:`networks.constructions.radial_ridge_depth2`: for each ε the smallest N (powers of two)
    of Fibonacci directions with measured sup error ≤ ε (profile accuracy ε/2), trying only
    networks of at most ``max_width`` units."""
    from networks.constructions import radial_ridge_depth2

    tgt = get_target(target)
    lip_g = {"hat": 2.0, "cos": 2.0 + math.pi}.get(tgt.name)
    if lip_g is None:
        return {float(e): {"width": None, "reason": f"no bound on |g'| for {tgt.name}"}
                for e in eps_list}
    X = dense_sample(3, points, seed=seed)
    out = {}
    for eps in sorted({float(e) for e in eps_list}, reverse=True):
        N = 1
        rec: dict = {"width": None, "reason": f"sup error > eps up to {max_directions} "
                                              f"directions or {max_width} units"}
        per = 2 * int(math.ceil(lip_g / (eps / 2) * (1 - 1e-12)))      # profile width (§3.3)
        while N <= max_directions and N * per <= max_width:
            c = radial_ridge_depth2(lambda r: tgt.phi(r, 3), lambda r: tgt.dphi(r, 3), lip_g, N,
                                    eps / 2)
            net = c.network
            dense = float(np.abs(net(X) - tgt(X)).max())
            if dense <= eps:
                W1 = net.layers[0].weights
                b1 = net.layers[0].bias
                u = net.layers[1].weights[0]

                def grad(Z, W1=W1, b1=b1, u=u):
                    return ((Z @ W1.T + b1 > 0) * u) @ W1

                se = sup_error(net, grad, tgt, X, seed=seed)
                if se["sup"] <= eps:
                    rec = {"width": int(net.widths[0]), "directions": N, "reason": "ok",
                           "profile_width": c.params["profile_width"], **se}
                    break
            N *= 2
        out[eps] = rec
    return out


def composition_depth3(target, d: int, eps: float, *, points: int = 4000, seed=0) -> dict:
    """Depth 3: ‖x‖² net (width dK, THEORY §3.6) then the interpolant of s ↦ φ(√s) on knots
    s_j = (j/J)² (width J + 1).  Certified error L√(d/K²) + 3L/J ≤ ε with K = ⌈2L√d/ε⌉,
    J = ⌈6L/ε⌉; measured on the dense sample."""
    from networks.constructions import interpolation_profile, squared_norm_depth2
    from networks.sigma import DenseLayer, SigmaNetwork

    tgt = get_target(target)
    L = tgt.lipschitz(d)
    K = int(math.ceil(2 * L * math.sqrt(d) / eps))
    J = int(math.ceil(6 * L / eps))
    inner = squared_norm_depth2(d, K)
    top = 1.0 + inner.error_bound
    knots = np.concatenate([(np.arange(J + 1) / J) ** 2, [top]])
    outer = interpolation_profile(lambda s: tgt.phi(np.sqrt(np.minimum(s, 1.0)), d), knots,
                                  lipschitz=1e300)
    l1, l2 = inner.network.layers
    u, u0 = l2.weights[0], float(l2.bias[0])
    net = SigmaNetwork([l1, DenseLayer(np.outer(outer.alpha, u), outer.alpha * u0 + outer.beta),
                        DenseLayer(outer.gamma.reshape(1, -1), [outer.const])], activation="relu")
    X = dense_sample(d, points, seed=seed)
    err = float(np.abs(net(X) - tgt(X)).max())
    bound = L * math.sqrt(inner.error_bound) + 3 * L / J
    return {"depth": 3, "widths": list(net.widths), "width": int(sum(net.widths)), "K": K, "J": J,
            "bound": bound, "dense": err, "sup": err, "points": int(X.shape[0])}


# ------------------------------------------------------------------------ trained widths
def trained_widths(target, d: int, eps_list, *, max_width: int = 256, train_points: int = 2048,
                   test_points: int = 4096, epochs: int = 1500, lr: float = 0.01, seed=0) -> dict:
    """Depth-2 ReLU nets of widths 1, 2, 4, … ≤ max_width trained (full-batch Adam) on points
    uniform in B_d; RMS error on fresh uniform points.  Stops once the smallest ε is reached.
    Returns ``widths``, ``l2`` (per width), ``smallest`` {ε: width or None}, ``constant_l2``."""
    from circuits.utils.rng import uniform_ball
    from networks.sigma import SigmaNetwork
    from networks.train import train

    tgt = get_target(target)
    d = check_int(d, name="d", minimum=1, what="dimension")
    eps_list = sorted({float(e) for e in eps_list})
    g = as_rng(seed)
    Xtr = uniform_ball(train_points, d, seed=g)
    Xte = uniform_ball(test_points, d, seed=g)
    ytr, yte = tgt(Xtr), tgt(Xte)
    widths, l2s = [], []
    w = 1
    t0 = time.perf_counter()
    while w <= max_width:
        net = SigmaNetwork.random([d, w, 1], "relu", seed=int(g.integers(2 ** 31)), bias_scale=0.5)
        res = train(net, Xtr, ytr, epochs=epochs, lr=lr, patience=200, tol=1e-7,
                    target_loss=(0.5 * eps_list[0]) ** 2)
        err = float(np.sqrt(np.mean((res.network(Xte) - yte) ** 2)))
        widths.append(w)
        l2s.append(err)
        if err <= eps_list[0]:
            break
        w *= 2
    smallest = {e: next((wd for wd, v in zip(widths, l2s) if v <= e), None) for e in eps_list}
    return {"widths": widths, "l2": l2s, "smallest": smallest, "max_width": max_width,
            "constant_l2": tgt.constant_l2(d), "seconds": time.perf_counter() - t0,
            "train_points": train_points, "test_points": test_points, "epochs": epochs}
