"""The one exception family shared by every depthsep package.

``DepthsepError`` is the base; each subclass also derives from the builtin a user would
expect to catch (``ValueError`` for bad values), so ``except ValueError`` keeps working.
Wrong *types* stay plain ``TypeError``.
"""

from __future__ import annotations

__all__ = ["DepthsepError", "InvalidCircuitError", "DimensionError", "ReductionError",
           "MissingDependencyError"]


class DepthsepError(Exception):
    """Base class of every error raised on purpose by depthsep."""


class InvalidCircuitError(DepthsepError, ValueError):
    """Bad shapes, non-integer weights, broken chaining, or a pre-activation bound that overflows."""


class DimensionError(DepthsepError, ValueError):
    """A wrong number of bits or width, or a cube too large to enumerate in memory."""


class ReductionError(DepthsepError):
    """A network, embedding or parameter the reduction cannot take."""


class MissingDependencyError(DepthsepError, ImportError):
    """An optional dependency (e.g. ``dask.distributed`` or matplotlib) is needed but not installed;
    the message names the extra to install."""
