"""
The reduction as library calls, n = 4
=====================================

The same four steps as :ref:`the walk-through <sphx_glr_auto_examples_plot_reduction_walkthrough.py>`,
called from Python on a small instance: train a depth-2 network on the hard instance, then
:func:`networks.reduce_network` runs staircase + quantisation (the integer threshold circuit),
the twisted self-reduction and the certificate.  A *negative control* follows: a network that
only predicts the constant 1/2 has correlation ρ = 0, and the reduction must refuse it.
"""

import numpy as np

from embeddings import HardInstance
from networks import SigmaNetwork, reduce_network, train

inst = HardInstance(4, seed=0)
sup = inst.support()
net = train(
    SigmaNetwork.random([inst.dim, 16, 1], "relu", seed=0),
    sup.points,
    sup.labels.astype(float),
    epochs=2000,
    lr=0.03,
    target_loss=0.2,
).network
rep = reduce_network(net, inst, seed=0)
print("\n".join(rep.steps))

# %%
# The certificate: every link of THEORY §4.5 and the §4.7 cross-check, with its numbers.
print(rep.certificate.table())
print(rep.certificate.headline())

# %%
# Negative control
# ----------------
# N ≡ 1/2 (zero first layer, output bias 1/2) has MSE exactly 1/4 and ρ = 0: there is no
# margin to amplify, and the reduction refuses with a message that says so.
from circuits.utils.errors import DepthsepError  # noqa: E402

flat = SigmaNetwork([(np.zeros((4, inst.dim)), np.zeros(4)), (np.zeros((1, 4)), [0.5])], "relu")
try:
    reduce_network(flat, inst, seed=0)
    raise SystemExit("the reduction accepted a network with rho = 0")
except DepthsepError as exc:
    print("refused:", str(exc)[:200])
