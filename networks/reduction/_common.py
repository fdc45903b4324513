"""Reading a depth-2 σ-network into plain arrays: moved to :mod:`networks.product.parts` (the
product form sits below the reduction); re-exported here for existing callers."""

from networks.product.parts import Depth2Parts, depth2_parts, frozen

__all__ = ["Depth2Parts", "depth2_parts", "frozen"]
