"""The product-form trainer lives in :mod:`networks.product.train`; this import path stays for
existing callers.  Every attribute is read from, written to and deleted on the trainer module
itself, so ``networks.train_product.X`` and ``monkeypatch.setattr(networks.train_product, ...)``
behave as before the move (the names are not copied here)."""

import sys
import types

from networks.product import train as _train


class _Forward(types.ModuleType):
    """A module whose missing attributes, assignments and deletions go to the trainer module."""

    def __getattr__(self, name):
        return getattr(_train, name)

    def __setattr__(self, name, value):
        setattr(_train, name, value)

    def __delattr__(self, name):
        delattr(_train, name)

    def __dir__(self):
        return sorted(set(dir(_train)))


sys.modules[__name__].__class__ = _Forward
