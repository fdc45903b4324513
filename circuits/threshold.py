"""Layered threshold circuits as exact, immutable integer objects.

**Gate rule (stated once, everything relies on it):** a gate with integer weights ``w`` and
integer threshold ``t`` outputs 1 iff ``w . z >= t`` on its 0/1 inputs ``z`` (a tie gives 1).
Inputs are always {0,1}, never +-1.

A :class:`ThresholdCircuit` is a chain of :class:`ThresholdLayer` objects; layer 0 reads the N
circuit inputs, layer l reads the outputs of layer l-1, and the last layer has one gate.  Depth
counts gate layers including the output (THR o THR = depth 2); size counts hidden gates.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from numbers import Integral

import numpy as np

from circuits.utils.errors import InvalidCircuitError
from circuits.hypercube import as_bit_rows

__all__ = ["ThresholdLayer", "ThresholdCircuit", "INT64_MAX", "as_int64_array", "preactivation_bound"]

INT64_MAX = (1 << 63) - 1


def _holds_bool(values) -> bool:
    """Whether a nested list/tuple holds a bool anywhere (numpy would read True as 1)."""
    stack = [values]
    while stack:
        for v in stack.pop():
            if isinstance(v, (bool, np.bool_)):
                return True
            if isinstance(v, (list, tuple)):
                stack.append(v)
            elif isinstance(v, np.ndarray) and v.dtype == np.bool_:
                return True
    return False


def as_int64_array(values, *, name: str, ndim: "int | None" = None, shape=None) -> np.ndarray:
    """Copy ``values`` into a read-only C-contiguous int64 array, refusing anything not integral.

    Floats are accepted only when every entry is finite and an exact integer within int64.
    """
    if isinstance(values, np.ndarray):
        arr = values
    else:
        if isinstance(values, (list, tuple)) and _holds_bool(values):
            raise InvalidCircuitError(f"{name} holds booleans; weights and thresholds are "
                                      f"integers (True is not silently 1): pass ints")
        try:
            arr = np.asarray(values)
        except (ValueError, OverflowError) as exc:
            raise InvalidCircuitError(f"{name}: cannot be read as an array ({exc})") from None
    if arr.dtype == object:
        try:
            items = [v if isinstance(v, (bool, np.bool_)) else int(v) if isinstance(v, Integral)
                     else v for v in arr.ravel().tolist()]
        except TypeError:
            items = None
        if items is not None and any(isinstance(v, (bool, np.bool_)) for v in items):
            raise InvalidCircuitError(f"{name} holds booleans; weights and thresholds are "
                                      f"integers (True is not silently 1): pass ints")
        if items is None or not all(isinstance(v, int) for v in items):
            raise InvalidCircuitError(f"{name} must hold integers, got objects of other types; "
                                      f"convert with np.asarray(..., dtype=np.int64)")
        if any(abs(v) > INT64_MAX for v in items):
            raise InvalidCircuitError(f"{name} has an entry beyond int64 (|v| > 2^63 - 1); "
                                      f"scale the weights down")
        arr = np.array(items, dtype=np.int64).reshape(arr.shape)
    elif arr.dtype == np.bool_:
        raise InvalidCircuitError(f"{name} holds booleans; weights and thresholds are integers "
                                  f"(True is not silently 1): pass ints, e.g. "
                                  f"np.asarray({name}, dtype=np.int64)")
    elif np.issubdtype(arr.dtype, np.integer):
        if arr.dtype == np.uint64 and arr.size and arr.max() > INT64_MAX:
            raise InvalidCircuitError(f"{name} has an entry beyond int64 (> 2^63 - 1)")
        arr = arr.astype(np.int64)
    elif np.issubdtype(arr.dtype, np.floating):
        if arr.size and not np.isfinite(arr).all():
            raise InvalidCircuitError(f"{name} must be finite integers, found NaN or infinity")
        if arr.size and np.abs(arr).max() >= 2.0 ** 63:
            raise InvalidCircuitError(f"{name} has an entry beyond int64; scale the weights down")
        if arr.size and not (arr == np.round(arr)).all():
            bad = arr.ravel()[np.flatnonzero(arr.ravel() != np.round(arr.ravel()))[0]]
            raise InvalidCircuitError(f"{name} must be integers (threshold gates are exact), found "
                                      f"{bad!r}; round or scale them first (e.g. np.round(w * 2**k))")
        arr = arr.astype(np.int64)
    else:
        raise InvalidCircuitError(f"{name} must be an integer array, got dtype {arr.dtype}")
    if ndim is not None and arr.ndim != ndim:
        raise InvalidCircuitError(f"{name} must be {ndim}-dimensional, got shape {arr.shape}")
    if shape is not None and arr.shape != tuple(shape):
        raise InvalidCircuitError(f"{name} must have shape {tuple(shape)}, got {arr.shape}")
    arr = np.array(arr, dtype=np.int64, order="C", copy=True)
    arr.setflags(write=False)
    return arr


def _one_threshold(value, name: str) -> np.ndarray:
    """The threshold of a single gate: one integer (a 0-d or 1-element array is fine)."""
    if isinstance(value, (list, tuple)) and _holds_bool(value):
        raise InvalidCircuitError(f"{name} holds booleans; weights and thresholds are integers "
                                  f"(True is not silently 1): pass ints")
    try:
        arr = value if isinstance(value, np.ndarray) else np.asarray(value)
    except (ValueError, OverflowError, TypeError):
        arr = np.asarray(value, dtype=object)
    if arr.size != 1:
        raise InvalidCircuitError(f"{name} must be a single integer (one gate), got "
                                  f"{arr.size} values of shape {arr.shape}; a layer of several "
                                  f"gates goes through ThresholdLayer(weights, thresholds)")
    return as_int64_array(arr.reshape(1), name=name)


def preactivation_bound(weights, thresholds, *, what: str = "pre-activation bound") -> int:
    """``max_j sum_i |w_ji| + |t_j|`` as an exact Python int; refuses a bound beyond int64.

    The one overflow rule of every class that holds integer weights (``ThresholdLayer``,
    ``ThresholdFunction``, the gates of ``circuits.graph``): the kernels evaluate ``w . z - t``
    in int64, which cannot wrap when this bound is at most 2^63 - 1.  ``weights`` is one row
    (1-D) or one row per gate (2-D), ``thresholds`` one int or one per gate; int64 arrays or
    Python ints.  An int64-min entry has ``|v| = 2^63`` and is therefore always refused.

    Vectorised in uint64 when ``n_in * max|w| + max|t|`` (a Python-int upper bound on every row
    sum) fits in int64, so no row sum can wrap; otherwise rows are summed with Python ints.
    ``|v|`` is taken in uint64, where ``|-2^63| = 2^63`` is representable.

    >>> preactivation_bound([[2, -3]], [1])
    6
    >>> preactivation_bound([2**62, 2**62], 2**62)
    Traceback (most recent call last):
    ...
    circuits.utils.errors.InvalidCircuitError: pre-activation bound 13835058055282163712 exceeds int64 (2^63 - 1 = 9223372036854775807); the kernels could overflow. Scale the weights and thresholds down
    """
    if isinstance(weights, np.ndarray) and weights.dtype == np.int64 and weights.ndim == 2 \
            and isinstance(thresholds, np.ndarray) and thresholds.dtype == np.int64 \
            and weights.size:
        aw = np.abs(weights).view(np.uint64)
        at = np.abs(thresholds).view(np.uint64)
        crude = weights.shape[1] * int(aw.max()) + int(at.max())
        if crude <= INT64_MAX:
            bound = int((aw.sum(axis=1, dtype=np.uint64) + at).max())
        else:
            bound = max(sum(abs(v) for v in row) + abs(t)
                        for row, t in zip(weights.tolist(), thresholds.tolist()))
    else:
        rows = np.asarray(weights, dtype=object)
        ts = np.asarray(thresholds, dtype=object).reshape(-1)
        rows = rows.reshape(ts.shape[0], -1) if rows.size else rows.reshape(ts.shape[0], 0)
        bound = max(sum(abs(int(v)) for v in row) + abs(int(t)) for row, t in zip(rows, ts))
    if bound > INT64_MAX:
        raise InvalidCircuitError(
            f"{what} {bound} exceeds int64 (2^63 - 1 = {INT64_MAX}); the kernels "
            f"could overflow. Scale the weights and thresholds down")
    return bound


_preactivation_bound = preactivation_bound


@dataclass(frozen=True, eq=False)
class ThresholdLayer:
    """One layer of threshold gates: gate j fires iff ``weights[j] @ z >= thresholds[j]``.

    Parameters
    ----------
    weights : array_like of int, shape (n_gates, n_in)
    thresholds : array_like of int, shape (n_gates,)

    Examples
    --------
    >>> layer = ThresholdLayer([[1, 1], [1, 1]], [1, 2])     # OR and AND of two bits
    >>> layer.n_gates, layer.n_in
    (2, 2)
    """

    weights: np.ndarray
    thresholds: np.ndarray
    _bound: int = field(init=False, repr=False, compare=False, default=0)

    def __post_init__(self):
        w = as_int64_array(self.weights, name="weights", ndim=2)
        if w.shape[0] == 0:
            raise InvalidCircuitError("weights: a layer needs at least one gate, got 0 rows")
        if w.shape[1] == 0:
            raise InvalidCircuitError("weights: gates need at least one input, got 0 columns")
        t = self.thresholds
        if isinstance(t, (bool, np.bool_)) or (isinstance(t, (list, tuple)) and _holds_bool(t)):
            raise InvalidCircuitError("thresholds holds booleans; weights and thresholds are "
                                      "integers (True is not silently 1): pass ints")
        t = np.asarray(t) if not isinstance(t, np.ndarray) else t
        if np.ndim(t) == 0:
            t = np.reshape(t, (1,))
        object.__setattr__(self, "weights", w)
        object.__setattr__(self, "thresholds",
                           as_int64_array(t, name="thresholds", shape=(w.shape[0],)))
        # computed once (the layer is immutable) and refused here if it could overflow int64
        object.__setattr__(self, "_bound", _preactivation_bound(w, self.thresholds))

    @property
    def n_gates(self) -> int:
        """Number of gates (rows of the weight matrix)."""
        return int(self.weights.shape[0])

    @property
    def n_in(self) -> int:
        """Number of inputs each gate reads."""
        return int(self.weights.shape[1])

    @property
    def n_wires(self) -> int:
        """Number of nonzero weights (wires that carry a signal)."""
        return int(np.count_nonzero(self.weights))

    @property
    def preactivation_bound(self) -> int:
        """Exact bound on every partial sum and on ``|w.z - t|``: ``max_j sum_i |w_ji| + |t_j|``.

        A Python int, computed once when the layer is built (a layer whose bound exceeds
        2^63 - 1 is refused then).
        """
        return self._bound

    def __call__(self, z) -> np.ndarray:
        """Apply the layer to a batch of 0/1 rows ``z`` (exact int64 arithmetic)."""
        z = np.asarray(z)
        if z.shape[-1] != self.n_in:
            raise InvalidCircuitError(f"z must have {self.n_in} columns, got shape {z.shape}")
        return (z.astype(np.int64) @ self.weights.T >= self.thresholds).astype(np.uint8)

    def equals(self, other) -> bool:
        """Same shape, weights and thresholds.

        Parameters
        ----------
        other : object
            The object to compare with.

        """
        return (isinstance(other, ThresholdLayer) and self.weights.shape == other.weights.shape
                and bool(np.array_equal(self.weights, other.weights))
                and bool(np.array_equal(self.thresholds, other.thresholds)))

    def __repr__(self) -> str:
        return f"ThresholdLayer(n_gates={self.n_gates}, n_in={self.n_in})"


@dataclass(frozen=True, eq=False)
class ThresholdCircuit:
    """A layered threshold circuit: ``layers[0]`` reads the inputs, the last layer has one gate.

    Parameters
    ----------
    layers : sequence of ThresholdLayer
        layers[0] reads the N inputs, each next layer reads the previous one; the last layer has
        one gate.

    Examples
    --------
    >>> xor = ThresholdCircuit.depth2([[1, 1], [1, 1]], [1, 2], [1, -1], 1)   # OR and not AND
    >>> xor.depth, xor.size, xor.n_inputs, xor.n_wires
    (2, 2, 2, 6)
    >>> xor.evaluate([[0, 0], [1, 0], [0, 1], [1, 1]]).tolist()
    [0, 1, 1, 0]
    """

    layers: tuple
    _bound: int = field(init=False, repr=False, compare=False, default=0)

    def __post_init__(self):
        layers = tuple(self.layers)
        if not layers:
            raise InvalidCircuitError("layers: a circuit needs at least one layer")
        for i, layer in enumerate(layers):
            if not isinstance(layer, ThresholdLayer):
                raise TypeError(f"layers[{i}] must be a ThresholdLayer, got {type(layer).__name__}")
        for i in range(1, len(layers)):
            if layers[i].n_in != layers[i - 1].n_gates:
                raise InvalidCircuitError(
                    f"layers[{i}] reads {layers[i].n_in} inputs but layers[{i - 1}] has "
                    f"{layers[i - 1].n_gates} gates; layers must chain")
        if layers[-1].n_gates != 1:
            raise InvalidCircuitError(
                f"the output layer must have exactly one gate, got {layers[-1].n_gates}")
        object.__setattr__(self, "layers", layers)
        object.__setattr__(self, "_bound", max(layer.preactivation_bound for layer in layers))

    @classmethod
    def depth2(cls, hidden_weights, hidden_thresholds, output_weights, output_threshold):
        """THR o THR: ``out = [sum_j v_j g_j(z) >= s]``, ``g_j = [W_j . z >= t_j]``.

        Parameters
        ----------
        hidden_weights : array_like of int
            Bottom weights W, shape (s, N).
        hidden_thresholds : array_like of int
            Bottom thresholds t, length s.
        output_weights : array_like of int
            Top weights v, length s.
        output_threshold : int
            Top threshold.

        """
        out_w = as_int64_array(output_weights, name="output_weights", ndim=1)
        out_t = _one_threshold(output_threshold, "output_threshold")
        return cls((ThresholdLayer(hidden_weights, hidden_thresholds),
                    ThresholdLayer(out_w.reshape(1, -1), out_t)))

    @classmethod
    def single_gate(cls, weights, threshold):
        """A depth-1 circuit: one threshold gate on the inputs.

        Parameters
        ----------
        weights : array_like of int
            Integer weights (length N).
        threshold : int
            Integer threshold.

        """
        w = as_int64_array(weights, name="weights", ndim=1)
        return cls((ThresholdLayer(w.reshape(1, -1), _one_threshold(threshold, "threshold")),))

    @property
    def n_inputs(self) -> int:
        """Number of inputs N."""
        return self.layers[0].n_in

    @property
    def depth(self) -> int:
        """Number of gate layers, the output layer included."""
        return len(self.layers)

    @property
    def size(self) -> int:
        """Number of hidden (non-output) gates."""
        return sum(layer.n_gates for layer in self.layers[:-1])

    @property
    def n_gates(self) -> int:
        """All gates, output included."""
        return self.size + 1

    @property
    def n_wires(self) -> int:
        """Number of weights over all layers (nonzero or not)."""
        return sum(layer.n_wires for layer in self.layers)

    @property
    def preactivation_bound(self) -> int:
        """Exact bound over all layers (Python int, computed once at construction); see
        :attr:`ThresholdLayer.preactivation_bound`."""
        return self._bound

    @property
    def max_abs_weight(self) -> int:
        """Largest absolute weight over all layers."""
        return max(int(np.abs(layer.weights).max()) for layer in self.layers)

    def packed(self):
        """Flat arrays for the layered kernel: ``(weights_flat, thresholds_flat, sizes)``.

        ``sizes = [n_inputs, n_1, ..., 1]``; layer l's ``(sizes[l+1], sizes[l])`` weight block
        is stored row-major after the blocks of the earlier layers.
        """
        wflat = np.concatenate([layer.weights.ravel() for layer in self.layers])
        tflat = np.concatenate([layer.thresholds for layer in self.layers])
        sizes = np.array([self.n_inputs] + [layer.n_gates for layer in self.layers], dtype=np.int64)
        return (np.ascontiguousarray(wflat, dtype=np.int64),
                np.ascontiguousarray(tflat, dtype=np.int64), sizes)

    def evaluate(self, bits) -> np.ndarray:
        """Outputs (uint8) on a batch of input rows, in exact int64 arithmetic.

        Parameters
        ----------
        bits : array_like
            0/1 rows of shape (n_points, N) (a single row is accepted).

        """
        z = as_bit_rows(bits, self.n_inputs)
        for layer in self.layers:
            z = layer(z)
        return z[:, 0]

    def equals(self, other) -> bool:
        """Same layers with the same integer weights and thresholds.

        Parameters
        ----------
        other : object
            The object to compare with.

        """
        return (isinstance(other, ThresholdCircuit) and len(self.layers) == len(other.layers)
                and all(a.equals(b) for a, b in zip(self.layers, other.layers)))

    def __repr__(self) -> str:
        widths = "x".join(str(layer.n_gates) for layer in self.layers)
        return (f"ThresholdCircuit(n_inputs={self.n_inputs}, depth={self.depth}, "
                f"gates={widths}, bound={self.preactivation_bound})")
