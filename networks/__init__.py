"""depthsep.networks: σ-networks, activation registry, training and the papers' constructions.

Depth counts layers (depth 2 = one hidden layer); σ acts on hidden layers, the last layer is
linear with a scalar output.  Activations come from a registry (:mod:`networks.activations`).
"""

from circuits._version import __version__ as __version__
from circuits.utils.errors import InvalidNetworkError
from networks.activations import (ACTIVATIONS, Activation, get_activation, register_activation,
                                  unregister_activation)
from networks.sigma import DenseLayer, SigmaNetwork, random_network
from networks import constructions, legendre
from networks.train import TrainOptions, TrainResult, loss_and_gradient, mse, train
from networks import product
from networks.train_product import product_loss_and_gradient, train_product  # after: binds the function
from networks import reduction
from networks import interop
from networks.reduction import (ReductionReport, certify, quantise, reduce_network, self_reduce,
                                staircase, support_metrics, threshold_circuit, value_table)

__all__ = [
    "InvalidNetworkError",
    "ACTIVATIONS", "Activation", "get_activation", "register_activation", "unregister_activation",
    "DenseLayer", "SigmaNetwork", "random_network",
    "constructions", "legendre", "interop",
    "TrainOptions", "TrainResult", "loss_and_gradient", "mse", "train", "train_product",
    "product_loss_and_gradient",
    "product", "reduction", "ReductionReport", "reduce_network", "staircase", "quantise", "threshold_circuit",
    "self_reduce", "certify", "value_table", "support_metrics",
]
