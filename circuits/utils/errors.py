"""The one exception family shared by every depthsep package.

``DepthsepError`` is the base; each subclass also derives from the builtin a user would
expect to catch (``ValueError`` for bad values, ``TypeError`` for wrong types), so
``except ValueError`` / ``except TypeError`` keep working.
"""

from __future__ import annotations

__all__ = ["DepthsepError", "InvalidArgumentError", "ArgumentTypeError", "InvalidCircuitError", "InvalidNetworkError",
           "DimensionError", "ReductionError", "MissingDependencyError", "RunTooLongError",
           "ClusterLostError"]


class DepthsepError(Exception):
    """Base class of every error raised on purpose by depthsep."""


class InvalidArgumentError(DepthsepError, ValueError):
    """An argument outside its allowed range (a non-positive step size, a NaN radius, ...).

    Raised by the shared checks of :mod:`circuits.utils.validation`, so the same mistake raises
    the same class in every package.
    """


class ArgumentTypeError(DepthsepError, TypeError):
    """An argument of the wrong type (a string where an int is needed, ...); a ``TypeError``."""


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


class RunTooLongError(DepthsepError, RuntimeError):
    """An exhaustive run whose measured time estimate exceeds the limit (``max_seconds``).

    Raised after a short calibration on the actual work, before the bulk of it starts.  Carries
    the figures: ``estimate_seconds``, ``max_seconds``, ``n_items`` and ``rate`` (items per
    second measured); the message lists the ways forward (a Dask cluster, a larger
    ``max_seconds`` or ``max_seconds=None``, the ``DEPTHSEP_MAX_SECONDS`` environment variable).
    """

    def __init__(self, message, *, estimate_seconds=None, max_seconds=None, n_items=None,
                 rate=None):
        super().__init__(message)
        self.estimate_seconds = estimate_seconds
        self.max_seconds = max_seconds
        self.n_items = n_items
        self.rate = rate


class ClusterLostError(DepthsepError, RuntimeError):
    """The Dask scheduler or every worker was lost mid-run; no partial result is returned.

    ``done`` and ``total`` say how far the run got (chunks folded / chunks submitted).
    """

    def __init__(self, message, *, done=None, total=None):
        super().__init__(message)
        self.done = done
        self.total = total
