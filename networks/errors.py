"""The networks package's error class, inside the shared :mod:`circuits.errors` family.

A σ-network is not a threshold circuit, but a malformed one is the same kind of mistake (bad
shapes, broken chaining, non-finite numbers), so :class:`InvalidNetworkError` derives from
:class:`circuits.errors.InvalidCircuitError`: ``except InvalidCircuitError``, ``except
DepthsepError`` and ``except ValueError`` all keep catching it.
"""

from __future__ import annotations

from circuits.errors import InvalidCircuitError

__all__ = ["InvalidNetworkError"]


class InvalidNetworkError(InvalidCircuitError):
    """Bad weights, shapes, activation names, training arguments or network files."""
