"""The product form of the hard instance's support (THEORY §4.8), one concept in one package.

On the support x_{a,b} = (x^A(a), x^B(b)) every first-layer pre-activation is α(a) + β(b) + b,
so a network is evaluated and trained on all 4^n pairs from (2^n, w) tables, never the 4^n × d
input array:

* :mod:`networks.product.support` — :class:`ProductSupport`, :func:`product_support`,
  :func:`ip_signs`, :func:`check_table_memory`;
* :mod:`networks.product.parts` — a depth-2 network as plain arrays (:func:`depth2_parts`);
* :mod:`networks.product.tables` — :func:`value_table` and the exact metrics
  (:func:`support_metrics`);
* :mod:`networks.product.depth3` — depth 3 (:func:`depth3_parts`, the float64 :func:`depth3_pass`);
* :mod:`networks.product.train` — :func:`train_product` (depth 2 and 3, Adam on the full MSE),
  :func:`product_loss_and_gradient`, :func:`refit_output_layer`;
* private kernels: ``_kernels`` (value tables, float64 passes), ``_kernels_train32`` (depth-2 ReLU,
  float32 lanes), ``_kernels_train3`` (depth-3 ReLU, float32 lanes).

:mod:`networks.reduction` builds on this package (it imports from here, never the reverse).
"""

from networks.product.support import (MAX_TABLE_BITS, ProductSupport, check_table_memory,
                                      ip_signs, product_support)
from networks.product.parts import Depth2Parts, depth2_parts
from networks.product.depth3 import Depth3Parts, depth3_parts, depth3_pass
from networks.product.tables import SupportMetrics, support_metrics, value_table
from networks.product.refit import refit_output_layer
from networks.product.train import (check_training_memory, product_loss_and_gradient,
                                    train_product, training_memory_bytes)

__all__ = ["MAX_TABLE_BITS", "ProductSupport", "check_table_memory", "ip_signs",
           "product_support", "Depth2Parts", "depth2_parts", "Depth3Parts", "depth3_parts",
           "depth3_pass", "SupportMetrics", "support_metrics", "value_table",
           "refit_output_layer", "check_training_memory", "product_loss_and_gradient",
           "train_product", "training_memory_bytes"]
