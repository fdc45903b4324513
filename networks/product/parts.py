"""Shared helpers of the reduction: reading a depth-2 σ-network into plain arrays, and the
hard instance's code bits.  Validation lives here so every step refuses bad input the same way.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from circuits.utils.errors import DimensionError, ReductionError
from circuits.utils.validation import check_real

__all__ = ["Depth2Parts", "depth2_parts", "frozen"]


def frozen(values, dtype) -> np.ndarray:
    """A C-contiguous read-only copy of ``values`` with the given dtype."""
    arr = np.array(values, dtype=dtype, order="C", copy=True)
    arr.setflags(write=False)
    return arr


@dataclass(frozen=True, eq=False)
class Depth2Parts:
    """A depth-2 σ-network N(x) = u0 + sum_i u_i σ(<w_i, x> + b_i) as plain read-only arrays.

    Attributes
    ----------
    W : float64 (w, d)
        Hidden weights w_i (rows).
    b : float64 (w,)
        Hidden biases.
    u : float64 (w,)
        Output weights.
    u0 : float
        Output bias.
    activation : networks.activations.Activation
        σ.
    """

    W: np.ndarray
    b: np.ndarray
    u: np.ndarray
    u0: float
    activation: object

    @property
    def width(self) -> int:
        return int(self.W.shape[0])

    @property
    def dim(self) -> int:
        return int(self.W.shape[1])

    @property
    def weight_bound(self) -> float:
        """B = max |weight or bias| over both layers (THEORY §3.1)."""
        return float(max(np.abs(self.W).max(), np.abs(self.b).max(), np.abs(self.u).max(),
                         abs(self.u0)))

    @property
    def ball_ranges(self) -> tuple:
        """Exact pre-activation ranges over the unit ball: b_i -/+ ||w_i||_2 (lo, hi arrays)."""
        norms = np.linalg.norm(self.W, axis=1)
        return self.b - norms, self.b + norms

    @property
    def radius_exact(self) -> np.ndarray:
        """Per-neuron R_i = |b_i| + ||w_i||_2 (the tight pre-activation radius on the ball)."""
        return np.abs(self.b) + np.linalg.norm(self.W, axis=1)

    @property
    def radius_global(self) -> float:
        """R = B(sqrt(d) + 1) = B(sqrt(2m) + 1) of THEORY §4.0 (bounds every pre-activation)."""
        return self.weight_bound * (math.sqrt(self.dim) + 1.0)

    def preactivations(self, X) -> np.ndarray:
        return np.asarray(X, dtype=np.float64) @ self.W.T + self.b

    def __call__(self, X) -> np.ndarray:
        return self.activation(self.preactivations(X)) @ self.u + self.u0

    def network(self):
        """The same network as a :class:`networks.SigmaNetwork`."""
        from networks.sigma import DenseLayer, SigmaNetwork

        return SigmaNetwork([DenseLayer(self.W, self.b), DenseLayer(self.u[None, :], [self.u0])],
                            activation=self.activation)


def depth2_parts(network, *, dim: "int | None" = None, weight_bound: "float | None" = None,
                 name: str = "network") -> Depth2Parts:
    """Read a depth-2 :class:`networks.SigmaNetwork` into :class:`Depth2Parts`, validating it.

    Raises
    ------
    TypeError
        ``network`` is not a SigmaNetwork (or Depth2Parts).
    ReductionError
        Depth other than 2, or a weight beyond ``weight_bound``.
    DimensionError
        Input dimension different from ``dim`` (the embedding's dimension d = 2m).
    """
    if isinstance(network, Depth2Parts):
        parts = network
    else:
        layers = getattr(network, "layers", None)
        act = getattr(network, "activation", None)
        if layers is None or act is None or not hasattr(network, "depth"):
            raise TypeError(f"{name} must be a networks.SigmaNetwork, got {type(network).__name__}")
        if network.depth != 2:
            raise ReductionError(
                f"{name} must have depth 2 (one hidden layer) for the reduction, got depth "
                f"{network.depth} with hidden widths {tuple(network.widths)}; THEORY §4 covers "
                f"depth-2 networks only")
        hidden, out = layers
        parts = Depth2Parts(W=frozen(hidden.weights, np.float64), b=frozen(hidden.bias, np.float64),
                            u=frozen(out.weights[0], np.float64), u0=float(out.bias[0]),
                            activation=act)
    if dim is not None and parts.dim != int(dim):
        raise DimensionError(
            f"{name} has input dimension {parts.dim} but the embedding has dimension d = 2m = "
            f"{int(dim)}; train the network on instance.support().points (shape (4^n, {int(dim)}))")
    if weight_bound is not None:
        bound = check_real(weight_bound, minimum=0, name="weight_bound")
        if parts.weight_bound > bound:
            raise ReductionError(
                f"{name} has a weight or bias of magnitude {parts.weight_bound:.6g} beyond the "
                f"stated bound weight_bound = {bound:.6g}; raise weight_bound or train with "
                f"networks.train(..., weight_bound={bound:g})")
    return parts
