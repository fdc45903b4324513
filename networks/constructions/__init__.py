"""The constructions of the three seed papers as explicit ReLU networks, with their formulas.

Every builder returns a :class:`Construction`: the :class:`~networks.sigma.SigmaNetwork` itself,
the function it is meant to represent (``target``), the widths and weight bound predicted by the
paper's formula, and a *certified* sup-error bound computed from the construction (interpolation
errors, cubature defects) - all next to :meth:`Construction.measured_error`, which evaluates the
real network.  The tests assert ``measured <= error_bound <= requested accuracy``.

=========================================  ================================================  =====
builder                                    what it builds                                    THEORY
=========================================  ================================================  =====
:func:`ip_depth3_relu`                     exact depth-3 net for f_d on supp mu_tau          §3.2
:func:`ip_depth3_relu_rcube`               the same on the R-cube support (v1 setting)       §3.2
:func:`ip_depth3_balanced`                 exact depth-3 IP net of smaller path norm         §3.2
:func:`ip_depth3_fourier`                  exact depth-3 IP net, width 2^n, least norm       §3.2
:func:`lipschitz_relu_sum`                 univariate Lipschitz lemma (m <= 2RL/eps units)   §3.3
:func:`inner_product_depth3`               Daniely's depth-3 net for g(<x, x'>) on spheres   §3.4
:func:`squared_norm_depth2`                SES ||x||^2, width dK, error <= d/K^2             §3.6
:func:`norm_power_depth2`                  SES ||x||^{2k} by cubature + ridge units          §3.6
:func:`radial_ridge_depth2`                SES d = 3 ridge net, g = phi + r phi'             §3.6
:func:`ses_theorem4_depth3`                depth-3 net for SES Theorem 4's target            §3.5
=========================================  ================================================  =====

Helpers: :func:`ses_theorem4_target`, :func:`ses_theorem4_gradient`,
:func:`ses_theorem4_lipschitz` (E17: the target is 2-Lipschitz on the ball, pitfall 4),
:func:`fibonacci_sphere`.  Random points of the sphere and ball come from
:func:`circuits.utils.rng.uniform_sphere` / :func:`~circuits.utils.rng.uniform_ball`.

Modules, by source: :mod:`~networks.constructions.ip` (§3.2, the hard instance's exact nets),
:mod:`~networks.constructions.daniely` (§3.4), :mod:`~networks.constructions.ses` (§3.3, §3.5,
§3.6) and :mod:`~networks.constructions._common` (the result type and univariate ReLU sums).
Import the package, not the modules: ``from networks import constructions as cs``.

Examples
--------
>>> import numpy as np
>>> c = lipschitz_relu_sum(np.sin, lipschitz=1.0, radius=1.0, eps=0.01)
>>> c.widths, c.width_formula
((200,), (200,))
>>> t = np.linspace(-1, 1, 2001).reshape(-1, 1)
>>> bool(c.measured_error(t) <= c.error_bound <= 0.01)
True
"""

from networks.constructions._common import (Construction, RidgeProfile, interpolation_profile,
                                            lipschitz_profile)
from networks.constructions.daniely import inner_product_depth3
from networks.constructions.ip import (ip_depth3_relu, ip_depth3_relu_rcube, ip_of_decoded,
                                       ip_of_rounded)
from networks.constructions.ip_norm import (depth3_norm, ip_depth3_balanced, ip_depth3_fourier)
from networks.constructions.ses import (fibonacci_sphere, lipschitz_relu_sum, norm_power_depth2,
                                        radial_ridge_depth2, ses_theorem4_depth3,
                                        ses_theorem4_gradient, ses_theorem4_lipschitz,
                                        ses_theorem4_target, squared_norm_depth2)

__all__ = [
    "Construction", "RidgeProfile",
    "ip_depth3_relu", "ip_depth3_relu_rcube", "ip_of_decoded", "ip_of_rounded",
    "ip_depth3_balanced", "ip_depth3_fourier", "depth3_norm",
    "lipschitz_relu_sum", "lipschitz_profile", "interpolation_profile",
    "inner_product_depth3", "squared_norm_depth2", "norm_power_depth2", "radial_ridge_depth2",
    "ses_theorem4_target", "ses_theorem4_gradient", "ses_theorem4_lipschitz", "ses_theorem4_depth3",
    "fibonacci_sphere",
]
