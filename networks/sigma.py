"""σ-networks: immutable fully connected networks with a named activation (THEORY.md §3.1).

A :class:`SigmaNetwork` is a chain of :class:`DenseLayer` objects.  σ is applied after every
layer except the last, which is linear with one output, so

* depth 2 (one hidden layer):  N(x) = u_0 + Σ_i u_i σ(<w_i, x> + b_i),
* depth 3 (two hidden layers): N(x) = v_0 + Σ_j v_j σ(Σ_i V_ji σ(<w_i, x> + b_i) + c_j).

``depth`` counts layers (= hidden layers + 1), like circuit depth counts gate layers.  Weights
are read-only float64 arrays, copied on construction, validated (finite, shapes chain), so a
network never changes after it is built; training returns a new one.

Classification rule for 0/1 targets (the hard instance's labels): :meth:`SigmaNetwork.classify`
returns 1 iff N(x) >= 1/2 (a tie gives 1, like a gate).  Pass ``threshold=0.0`` for ±1 targets.

Examples
--------
>>> import numpy as np
>>> net = SigmaNetwork([DenseLayer([[1.0, -1.0], [-1.0, 1.0]], [0.0, 0.0]),
...                     DenseLayer([[1.0, 1.0]], [0.0])], activation="relu")   # |x0 - x1|
>>> net(np.array([[0.5, 0.25], [0.0, 0.75]])).tolist()
[0.25, 0.75]
>>> net
SigmaNetwork(dims=(2, 2, 1), activation='relu')
>>> net.depth, net.widths, net.input_dim, net.n_params
(2, (2,), 2, 9)
>>> net.classify(np.array([[0.5, 0.25], [0.0, 0.75]])).tolist()
[0, 1]
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from circuits.utils.files import write_json_atomic
from circuits.utils.rng import as_rng
from networks.activations import Activation, get_activation
from circuits.utils.errors import InvalidNetworkError
from networks._document import FORMAT, FORMAT_VERSION, register_network_classes  # below the class

__all__ = ["DenseLayer", "SigmaNetwork", "random_network", "FORMAT", "FORMAT_VERSION"]

#: Default limits of :meth:`SigmaNetwork.load` (file bytes, weights + biases).
MAX_NETWORK_PARAMS = 1 << 22
MAX_NETWORK_BYTES = 32 * MAX_NETWORK_PARAMS + (1 << 20)

_CHUNK_ELEMENTS = 1 << 22   # rows per forward chunk: one chunk of the widest layer stays ~32 MB


def _frozen_float64(values, *, name: str, ndim: int, shape=None) -> np.ndarray:
    if isinstance(values, np.ndarray) and values.dtype == object or (
            not isinstance(values, np.ndarray) and _has_non_numbers(values)):
        raise InvalidNetworkError(f"{name} must hold real numbers; convert with "
                                  f"np.asarray(..., dtype=float)")
    try:
        arr = np.array(values, dtype=np.float64, order="C", copy=True)
    except (TypeError, ValueError) as exc:
        raise InvalidNetworkError(f"{name}: cannot be read as a float64 array ({exc}); "
                                  f"pass a rectangular array of real numbers") from None
    if arr.ndim != ndim:
        raise InvalidNetworkError(f"{name} must be {ndim}-dimensional, got shape {arr.shape}")
    if shape is not None and arr.shape != tuple(shape):
        raise InvalidNetworkError(f"{name} must have shape {tuple(shape)}, got {arr.shape}")
    if arr.size and not np.isfinite(arr).all():
        bad = np.argwhere(~np.isfinite(arr))[0]
        raise InvalidNetworkError(f"{name} must be finite, found {arr[tuple(bad)]} at index "
                                  f"{tuple(int(i) for i in bad)}; check the training run that "
                                  f"produced it (lower the learning rate or clip the weights)")
    arr.setflags(write=False)
    return arr


def _has_non_numbers(values) -> bool:
    try:
        arr = np.asarray(values)
    except (TypeError, ValueError):
        return False
    return arr.dtype == object or arr.dtype.kind in "USV"


@dataclass(frozen=True, eq=False)
class DenseLayer:
    """An affine map z = W x + b with float64 ``weights`` (out, in) and ``bias`` (out,).

    Arrays are copied and made read-only.  ``layer(X)`` maps rows: X (N, in) -> (N, out).

    Examples
    --------
    >>> layer = DenseLayer([[1.0, 2.0]], [0.5])
    >>> layer([[1.0, 1.0], [0.0, -1.0]]).tolist()
    [[3.5], [-1.5]]
    >>> layer.weights.flags.writeable
    False
    """

    weights: np.ndarray
    bias: np.ndarray

    def __post_init__(self):
        w = _frozen_float64(self.weights, name="weights", ndim=2)
        if w.shape[0] == 0 or w.shape[1] == 0:
            raise InvalidNetworkError(f"weights must have at least one row and one column, got "
                                      f"shape {w.shape}")
        object.__setattr__(self, "weights", w)
        object.__setattr__(self, "bias", _frozen_float64(self.bias, name="bias", ndim=1,
                                                         shape=(w.shape[0],)))

    def __repr__(self) -> str:
        return f"DenseLayer(n_out={self.n_out}, n_in={self.n_in})"

    @property
    def n_in(self) -> int:
        return int(self.weights.shape[1])

    @property
    def n_out(self) -> int:
        return int(self.weights.shape[0])

    @property
    def n_params(self) -> int:
        return self.weights.size + self.bias.size

    def __call__(self, X) -> np.ndarray:
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != self.n_in:
            raise InvalidNetworkError(f"X must have shape (n_points, {self.n_in}), got {X.shape}; "
                                      f"use X.reshape(-1, {self.n_in}) for a single point")
        return X @ self.weights.T + self.bias

    def equals(self, other, *, atol: float = 0.0) -> bool:
        """Same shapes and entries within ``atol`` (exact by default)."""
        return (isinstance(other, DenseLayer) and self.weights.shape == other.weights.shape
                and bool(np.allclose(self.weights, other.weights, rtol=0.0, atol=atol))
                and bool(np.allclose(self.bias, other.bias, rtol=0.0, atol=atol)))

    def to_dict(self) -> dict:
        return {"weights": self.weights.tolist(), "bias": self.bias.tolist()}


def _as_layer(obj, index: int) -> DenseLayer:
    if isinstance(obj, DenseLayer):
        return obj
    if isinstance(obj, dict):
        try:
            return DenseLayer(obj["weights"], obj["bias"])
        except KeyError as exc:
            raise InvalidNetworkError(f"layers[{index}] is a dict without key {exc}; expected "
                                      f"{{'weights': ..., 'bias': ...}}") from None
    if isinstance(obj, (tuple, list)) and len(obj) == 2:
        return DenseLayer(*obj)
    raise TypeError(f"layers[{index}] must be a DenseLayer, a (weights, bias) pair or a dict, "
                    f"got {type(obj).__name__}")


@dataclass(frozen=True, eq=False)
class SigmaNetwork:
    """A fully connected σ-network with scalar output; σ on hidden layers, last layer linear.

    Parameters
    ----------
    layers : sequence of DenseLayer (or (weights, bias) pairs)
        Layer l maps R^{n_l} -> R^{n_{l+1}}; shapes must chain and the last layer has one output.
    activation : str or Activation
        Registry name (see :mod:`networks.activations`), default ``"relu"``.

    Attributes
    ----------
    depth : int
        Number of layers (depth 2 = one hidden layer).
    widths : tuple of int
        Hidden-layer widths (length ``depth - 1``).
    dims : tuple of int
        ``(input_dim, *widths, 1)``.

    Raises
    ------
    InvalidNetworkError
        Empty layer list, shapes that do not chain, more than one output, non-finite numbers,
        unknown activation.
    """

    layers: tuple
    activation: Activation = "relu"

    def __post_init__(self):
        if isinstance(self.layers, DenseLayer):
            raise TypeError("layers must be a sequence of DenseLayer; wrap a single layer in a list")
        layers = tuple(_as_layer(layer, i) for i, layer in enumerate(self.layers))
        if not layers:
            raise InvalidNetworkError("a SigmaNetwork needs at least one layer; the last is the "
                                      "linear output layer")
        for i in range(1, len(layers)):
            if layers[i].n_in != layers[i - 1].n_out:
                raise InvalidNetworkError(
                    f"layers do not chain: layer {i - 1} has {layers[i - 1].n_out} outputs but layer "
                    f"{i} expects {layers[i].n_in} inputs (weights shape {layers[i].weights.shape}); "
                    f"layer i's weights must have shape (width_i, width_(i-1))")
        if layers[-1].n_out != 1:
            raise InvalidNetworkError(f"the last layer must have one output (scalar network), got "
                                      f"{layers[-1].n_out}; weights shape must be (1, "
                                      f"{layers[-1].n_in})")
        object.__setattr__(self, "layers", layers)
        object.__setattr__(self, "activation", get_activation(self.activation))

    def __repr__(self) -> str:
        return f"SigmaNetwork(dims={self.dims}, activation={self.activation.name!r})"

    # ----- shape and size -------------------------------------------------------------------
    @property
    def depth(self) -> int:
        return len(self.layers)

    @property
    def widths(self) -> tuple:
        return tuple(layer.n_out for layer in self.layers[:-1])

    @property
    def dims(self) -> tuple:
        return (self.input_dim,) + self.widths + (1,)

    @property
    def input_dim(self) -> int:
        return self.layers[0].n_in

    @property
    def n_params(self) -> int:
        return sum(layer.n_params for layer in self.layers)

    @property
    def weight_bound(self) -> float:
        """B(N) = max |weight or bias| over all layers."""
        return max(max(float(np.abs(layer.weights).max()), float(np.abs(layer.bias).max()))
                   for layer in self.layers)

    # ----- evaluation -----------------------------------------------------------------------
    def _check_X(self, X) -> np.ndarray:
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != self.input_dim:
            raise InvalidNetworkError(
                f"X must have shape (n_points, {self.input_dim}), got {X.shape}; use "
                f"X.reshape(-1, {self.input_dim}) for a single point")
        return X

    def _forward(self, X: np.ndarray) -> np.ndarray:
        sigma = self.activation
        h = X
        for layer in self.layers[:-1]:
            h = sigma(h @ layer.weights.T + layer.bias)
        out = self.layers[-1]
        return h @ out.weights[0] + out.bias[0]

    def __call__(self, X) -> np.ndarray:
        """N(X) for the rows of X (N, input_dim) -> float64 (N,); chunked, BLAS matmuls."""
        X = self._check_X(X)
        widest = max(self.dims)
        rows = max(1, _CHUNK_ELEMENTS // widest)
        if X.shape[0] <= rows:
            return self._forward(X)
        return np.concatenate([self._forward(X[i:i + rows]) for i in range(0, X.shape[0], rows)])

    def preactivations(self, X) -> list:
        """Pre-activations of every layer for the rows of X: list of (N, n_out_l) arrays.

        >>> net = SigmaNetwork([([[2.0]], [-1.0]), ([[1.0]], [0.0])])
        >>> [z.tolist() for z in net.preactivations([[1.0], [0.0]])]
        [[[1.0], [-1.0]], [[1.0], [0.0]]]
        """
        X = self._check_X(X)
        out = []
        h = X
        for i, layer in enumerate(self.layers):
            z = h @ layer.weights.T + layer.bias
            out.append(z)
            if i < self.depth - 1:
                h = self.activation(z)
        return out

    def classify(self, X, *, threshold: float = 0.5) -> np.ndarray:
        """uint8 labels: 1 iff N(x) >= threshold (default 1/2, for 0/1 targets; ties give 1)."""
        return (self(X) >= threshold).astype(np.uint8)

    # ----- bounds on the unit ball ------------------------------------------------------------
    def preactivation_range(self, radius: float = 1.0) -> list:
        """Interval bounds (lo, hi) on every layer's pre-activations for ||x||_2 <= radius.

        Layer 0 is exact: b_i ± radius·||w_i||_2 (attained at x = ±radius·w_i/||w_i||).  Deeper
        layers use interval propagation through σ (exact image for monotone σ) and the
        positive/negative parts of the weights, so they are valid but may be loose.  The last
        entry bounds the network's output.

        Returns
        -------
        list of (lo, hi) pairs of float64 arrays, one pair per layer.

        Examples
        --------
        >>> net = SigmaNetwork([([[3.0, 4.0]], [1.0]), ([[2.0]], [-1.0])])
        >>> [(lo.tolist(), hi.tolist()) for lo, hi in net.preactivation_range()]
        [([-4.0], [6.0]), ([-1.0], [11.0])]
        """
        try:
            r = float(radius)
        except (TypeError, ValueError):
            raise TypeError(f"radius must be a real number, got {type(radius).__name__}") from None
        if not (math.isfinite(r) and r >= 0):
            raise InvalidNetworkError(f"radius must be finite and >= 0, got {radius!r}")
        first = self.layers[0]
        norms = np.linalg.norm(first.weights, axis=1)
        lo, hi = first.bias - r * norms, first.bias + r * norms
        out = [(lo, hi)]
        for layer in self.layers[1:]:
            a_lo, a_hi = self.activation.image(lo, hi)
            wp = np.maximum(layer.weights, 0.0)
            wn = np.minimum(layer.weights, 0.0)
            lo = wp @ a_lo + wn @ a_hi + layer.bias
            hi = wp @ a_hi + wn @ a_lo + layer.bias
            out.append((lo, hi))
        return out

    def max_preactivation(self, radius: float = 1.0) -> float:
        """max |pre-activation| over hidden units and ||x|| <= radius (the R of THEORY §4.0).

        For depth 2 this is exactly max_i |b_i| + radius·||w_i||_2.

        >>> SigmaNetwork([([[3.0, 4.0]], [1.0]), ([[2.0]], [-1.0])]).max_preactivation()
        6.0
        """
        ranges = self.preactivation_range(radius)[:-1]
        if not ranges:
            return 0.0
        return max(float(max(np.abs(lo).max(), np.abs(hi).max())) for lo, hi in ranges)

    # ----- comparison and serialisation -------------------------------------------------------
    def equals(self, other, *, atol: float = 0.0) -> bool:
        """Same activation, same shapes, entries within ``atol`` (exact by default)."""
        return (isinstance(other, SigmaNetwork) and self.activation.name == other.activation.name
                and self.depth == other.depth
                and all(a.equals(b, atol=atol) for a, b in zip(self.layers, other.layers)))

    def with_layers(self, layers) -> "SigmaNetwork":
        """A new network with the same activation and the given layers."""
        return SigmaNetwork(layers, activation=self.activation)

    def to_dict(self) -> dict:
        """JSON-ready dict with ``format``/``version`` fields (floats round-trip exactly)."""
        return {"format": FORMAT, "version": FORMAT_VERSION, "activation": self.activation.name,
                "dims": list(self.dims), "layers": [layer.to_dict() for layer in self.layers]}

    @classmethod
    def from_dict(cls, data, *, source: str = "data",
                  max_params: int = MAX_NETWORK_PARAMS) -> "SigmaNetwork":
        """Rebuild a network from :meth:`to_dict` output, validating every field.

        The header goes through :func:`circuits.utils.documents.check_header` (exact format,
        integer version, no unknown fields); every layer must be ``{"weights": [[...]],
        "bias": [...]}`` of JSON numbers, ``dims`` (optional) a list of ints matching the
        layers, and the parameter count at most ``max_params``.

        >>> net = SigmaNetwork.random([3, 4, 1], seed=1)
        >>> SigmaNetwork.from_dict(net.to_dict()).equals(net)
        True
        """
        from networks._document import network_from_document

        return network_from_document(cls, data, source=source, max_params=max_params)

    def save(self, path) -> Path:
        """Write :meth:`to_dict` as JSON to ``path`` atomically; returns the path.

        Compact JSON, so that every network :meth:`load` accepts by parameter count
        (``MAX_NETWORK_PARAMS``) also fits its byte limit (``MAX_NETWORK_BYTES``: at most 32
        bytes per parameter, a float's repr being at most 24); a larger network is refused
        here, before anything is written (``networks.interop.save_state_dict`` takes any size).
        """
        from networks import sigma as _self
        if self.n_params > _self.MAX_NETWORK_PARAMS:
            raise InvalidNetworkError(
                f"network has {self.n_params:,} parameters, above the {_self.MAX_NETWORK_PARAMS:,} "
                f"that SigmaNetwork.load accepts; save the weights with "
                f"networks.interop.save_state_dict(net, 'weights.npz') instead")
        return write_json_atomic(path, self.to_dict(), indent=None)

    @classmethod
    def load(cls, path, *, max_bytes: int = MAX_NETWORK_BYTES,
             max_params: int = MAX_NETWORK_PARAMS) -> "SigmaNetwork":
        """Read a network written by :meth:`save`, validating everything.

        Uses the shared document loader :func:`circuits.utils.documents.read_document` (size
        checked before reading, nesting and value count before parsing), then
        :meth:`from_dict`.  Every problem raises :class:`InvalidNetworkError` naming the file;
        a missing file raises ``FileNotFoundError``.
        """
        from circuits.utils.documents import read_document
        path = Path(path)
        if not path.exists():
            raise FileNotFoundError(f"no network file at {path}")
        data = read_document(path, error=InvalidNetworkError, max_bytes=max_bytes,
                             max_values=2 * int(max_params) + 4096, arrays=True)
        return cls.from_dict(data, source=str(path), max_params=max_params)

    @classmethod
    def random(cls, dims, activation="relu", *, seed=0, scale=None,
               bias_scale: float = 0.0) -> "SigmaNetwork":
        """A random network with layer sizes ``dims = [d, w_1, ..., 1]``.

        Inputs are assumed to lie in the unit ball, so layer 0 has i.i.d. N(0, scale²) weights
        (pre-activation std = scale·||x||); deeper layers use N(0, scale²/fan_in) (He-style).
        ``scale`` defaults to sqrt(2) for ReLU-like activations (``relu``, ``softplus``) and 1
        otherwise.  Biases are N(0, bias_scale²) (0 by default); the output bias is 0.

        Examples
        --------
        >>> net = SigmaNetwork.random([4, 8, 8, 1], "tanh", seed=0)
        >>> net.depth, net.widths
        (3, (8, 8))
        >>> SigmaNetwork.random([4, 8, 1], seed=3).equals(SigmaNetwork.random([4, 8, 1], seed=3))
        True
        """
        return random_network(dims, activation, seed=seed, scale=scale, bias_scale=bias_scale)

    @classmethod   # ----- interop (networks.interop) -----------------------------------------
    def from_state_dict(cls, state, activation="relu", *, transpose: bool = False,
                        layers=None) -> "SigmaNetwork":
        """A network from a mapping ``name -> array`` (torch state_dict, npz, safetensors).

        See :func:`networks.interop.from_state_dict` for the key conventions.

        Examples
        --------
        >>> import numpy as np
        >>> SigmaNetwork.from_state_dict({"0.weight": np.ones((2, 3)), "1.weight": np.ones((1, 2))}).dims
        (3, 2, 1)
        """
        from networks.interop import from_state_dict

        return from_state_dict(state, activation, transpose=transpose, layers=layers)

    def to_state_dict(self) -> dict:
        """The weights as ``{"0.weight", "0.bias", "2.weight", ...}`` arrays (torch's keys)."""
        from networks.interop import to_state_dict

        return to_state_dict(self)

    @classmethod
    def from_torch(cls, module) -> "SigmaNetwork":
        """A network from a ``torch.nn.Sequential`` of Linear layers and one activation type.

        See :func:`networks.interop_torch.from_torch` (needs the ``torch`` extra).
        """
        from networks.interop import from_torch

        return from_torch(module)

    def to_torch(self, *, dtype=None):
        """The same function as a ``torch.nn.Sequential`` (float64 by default).

        See :func:`networks.interop_torch.to_torch` (needs the ``torch`` extra).
        """
        from networks.interop import to_torch

        return to_torch(self, dtype=dtype)


register_network_classes(SigmaNetwork, DenseLayer)   # for the documents and interop modules


def random_network(dims, activation="relu", *, seed=0, scale=None, bias_scale: float = 0.0) -> SigmaNetwork:
    """Function form of :meth:`SigmaNetwork.random`."""
    from circuits.utils.validation import check_int
    if isinstance(dims, (str, bytes)) or not hasattr(dims, "__iter__"):
        raise TypeError(f"dims must be a sequence of ints like [d, width, 1], got {dims!r}")
    dims = [check_int(v, name=f"dims[{i}]", what="a layer size") for i, v in enumerate(dims)]
    if len(dims) < 2 or dims[-1] != 1 or min(dims) < 1:
        raise InvalidNetworkError(f"dims must be [input_dim, width_1, ..., 1] with positive sizes "
                                  f"and output 1, got {dims}")
    act = get_activation(activation)
    if scale is None:
        scale = math.sqrt(2.0) if act.name in ("relu", "softplus") else 1.0
    for value, label in ((scale, "scale"), (bias_scale, "bias_scale")):
        if isinstance(value, (bool, np.bool_, str, bytes)):
            raise TypeError(f"{label} must be a real number, got {type(value).__name__} {value!r}")
    scale = float(scale)
    bias_scale = float(bias_scale)
    if not (math.isfinite(scale) and scale > 0 and math.isfinite(bias_scale) and bias_scale >= 0):
        raise InvalidNetworkError(f"scale must be > 0 and bias_scale >= 0 (finite), got "
                                  f"scale={scale}, bias_scale={bias_scale}")
    rng = as_rng(seed)
    layers = []
    for i, (n_in, n_out) in enumerate(zip(dims[:-1], dims[1:])):
        std = scale if i == 0 else scale / math.sqrt(n_in)
        w = rng.normal(0.0, std, size=(n_out, n_in))
        last = i == len(dims) - 2
        b = np.zeros(n_out) if last or not bias_scale else rng.normal(0.0, bias_scale, size=n_out)
        layers.append(DenseLayer(w, b))
    return SigmaNetwork(layers, activation=act)
