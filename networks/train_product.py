"""The product-form trainer moved to :mod:`networks.product.train`; this import path is the same
module object (so ``networks.train_product.X`` reads and patches the trainer itself)."""

import sys

from networks.product import train as _train

sys.modules[__name__] = _train
