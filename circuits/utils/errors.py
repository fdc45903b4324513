"""The one exception family shared by every depthsep package.

``DepthsepError`` is the base; each subclass also derives from the builtin a user would
expect to catch (``ValueError`` for bad values), so ``except ValueError`` keeps working.
Wrong *types* stay plain ``TypeError``.
"""

from __future__ import annotations

__all__ = ["DepthsepError", "InvalidArgumentError", "InvalidCircuitError", "InvalidNetworkError",
           "DimensionError", "ReductionError", "MissingDependencyError"]


class DepthsepError(Exception):
    """Base class of every error raised on purpose by depthsep."""


class InvalidArgumentError(DepthsepError, ValueError):
    """An argument outside its allowed range (a non-positive step size, a NaN radius, ...).

    Raised by the shared checks of :mod:`circuits.utils.validation`, so the same mistake raises
    the same class in every package.
    """


class InvalidCircuitError(DepthsepError, ValueError):
    """Bad shapes, non-integer weights, broken chaining, or a pre-activation bound that overflows."""


class DimensionError(InvalidArgumentError):
    """A wrong number of bits or width, or a cube too large to enumerate in memory."""


class ReductionError(DepthsepError):
    """A network, embedding or parameter the reduction cannot take."""


class MissingDependencyError(DepthsepError, ImportError):
    """An optional dependency (e.g. ``dask.distributed`` or matplotlib) is needed but not installed;
    the message names the extra to install."""


class InvalidNetworkError(InvalidCircuitError):
    """Bad weights, shapes, activation names, training arguments or network files.

    A malformed σ-network is the same kind of mistake as a malformed circuit (bad shapes, broken
    chaining, non-finite numbers), so ``except InvalidCircuitError``, ``except DepthsepError`` and
    ``except ValueError`` all catch it.
    """
