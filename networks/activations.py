"""Activation functions as a named registry, each with the constants the theory needs.

Every :class:`Activation` knows, on an interval [-R, R] (THEORY.md §3.1 table):

* ``lipschitz(R)``: the Lipschitz constant of σ on each continuous piece in [-R, R]
  (0 for step functions; their jumps are listed separately in ``jumps``);
* ``sup_abs(R)``: sup |σ(t)| over [-R, R] (exact, not just the table's upper bound);
* ``total_variation(R)``: the total variation of σ on [-R, R], jumps included;
* ``jumps``: the points where σ is discontinuous; ``value_range``: (inf σ, sup σ) over the reals;
* ``derivative(t)``: σ'(t), used by training (zero almost everywhere for step functions; at a
  kink the one-sided value documented per entry is used).

Gate convention: ``heaviside`` (alias ``threshold``) is H(t) = [t >= 0] and ``sign`` is
+1 for t >= 0, -1 otherwise (so sign(0) = +1, matching the gate rule ``w . z >= t``).

The registry maps names to entries; there is no if/elif on names anywhere.  Add your own with
:func:`register_activation`.

Examples
--------
>>> relu = get_activation("relu")
>>> relu([-1.0, 0.0, 2.5]).tolist()
[0.0, 0.0, 2.5]
>>> get_activation("threshold")([-0.5, 0.0, 0.5]).tolist()   # alias of heaviside; H(0) = 1
[0.0, 1.0, 1.0]
>>> get_activation("sign")([-2.0, 0.0]).tolist()
[-1.0, 1.0]
>>> round(get_activation("sigmoid").total_variation(2.0), 6)   # tanh(R / 2)
0.761594
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
from scipy.special import expit

from circuits.utils.errors import InvalidNetworkError
from circuits.utils.validation import check_real

__all__ = ["Activation", "ACTIVATIONS", "get_activation", "register_activation",
           "unregister_activation", "activation_names"]


def _as_float(t) -> np.ndarray:
    return np.asarray(t, dtype=np.float64)


def _shaped(values, shape) -> np.ndarray:
    out = np.asarray(values, dtype=np.float64)
    if out.shape != shape:                     # a user function returned a scalar or broadcastable
        out = np.broadcast_to(out, shape).copy()
    return out


@dataclass(frozen=True, eq=False)
class Activation:
    """A named activation σ with its derivative and its constants on [-R, R].

    Parameters
    ----------
    name : str
        Registry key (lower case, no spaces).
    function : callable
        Vectorised σ: float64 array -> float64 array of the same shape.
    derivative_function : callable
        Vectorised σ' (zero almost everywhere for step functions).  It may return a bool
        array or anything broadcastable to the input's shape (training multiplies by it
        directly); :meth:`derivative` always returns float64 of the input's shape.
    lipschitz_function, sup_abs_function, total_variation_function : callable
        ``R -> float`` for R in (0, inf]; see the module docstring for their meaning.
    jumps : tuple of float
        Points of discontinuity (empty for continuous σ).
    value_range : (float, float)
        (inf σ, sup σ) over the real line; ``-inf``/``inf`` allowed.
    monotone : bool
        True if σ is non-decreasing; interval propagation uses [σ(lo), σ(hi)] then, and
        [-sup_abs, sup_abs] otherwise.
    description : str
        One line shown in listings.

    Examples
    --------
    >>> import numpy as np
    >>> cube = Activation("cube", np.cbrt, lambda t: np.cbrt(t) / (3 * t),
    ...                   lipschitz_function=lambda R: math.inf,
    ...                   sup_abs_function=np.cbrt, total_variation_function=lambda R: 2 * np.cbrt(R),
    ...                   value_range=(-math.inf, math.inf))
    >>> cube([8.0, -27.0]).tolist()
    [2.0, -3.0]
    >>> cube.sup_abs(8.0)
    2.0
    """

    name: str
    function: Callable = field(repr=False)
    derivative_function: Callable = field(repr=False)
    lipschitz_function: Callable = field(repr=False, default=None)
    sup_abs_function: Callable = field(repr=False, default=None)
    total_variation_function: Callable = field(repr=False, default=None)
    jumps: tuple = ()
    value_range: tuple = (-math.inf, math.inf)
    monotone: bool = True
    description: str = ""

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name or self.name != self.name.strip().lower() \
                or " " in self.name:
            raise InvalidNetworkError(f"activation name must be a non-empty lower-case string "
                                      f"without spaces, got {self.name!r}")
        for attr in ("function", "derivative_function", "lipschitz_function", "sup_abs_function",
                     "total_variation_function"):
            if not callable(getattr(self, attr)):
                raise TypeError(f"Activation {self.name!r}: {attr} must be callable, "
                                f"got {type(getattr(self, attr)).__name__}")
        try:
            jumps = tuple(sorted(float(j) for j in self.jumps))
        except (TypeError, ValueError):
            raise InvalidNetworkError(f"Activation {self.name!r}: jumps must be a sequence of "
                                      f"real numbers, got {self.jumps!r}") from None
        if not all(math.isfinite(j) for j in jumps):
            raise InvalidNetworkError(f"Activation {self.name!r}: jumps must be finite, got {jumps}")
        object.__setattr__(self, "jumps", jumps)
        try:
            lo, hi = (float(v) for v in self.value_range)
        except (TypeError, ValueError):
            raise InvalidNetworkError(f"Activation {self.name!r}: value_range must be a pair (lo, hi), "
                                      f"got {self.value_range!r}") from None
        if not lo <= hi:
            raise InvalidNetworkError(f"Activation {self.name!r}: value_range must satisfy lo <= hi, "
                                      f"got ({lo}, {hi})")
        object.__setattr__(self, "value_range", (lo, hi))
        object.__setattr__(self, "monotone", bool(self.monotone))

    def __call__(self, t) -> np.ndarray:
        """σ(t), elementwise, as float64."""
        t = _as_float(t)
        return _shaped(self.function(t), t.shape)

    def derivative(self, t) -> np.ndarray:
        """σ'(t), elementwise, as float64 (0 almost everywhere for step functions)."""
        t = _as_float(t)
        return _shaped(self.derivative_function(t), t.shape)

    def lipschitz(self, R) -> float:
        """Lipschitz constant of σ on each continuous piece of [-R, R] (0 for steps)."""
        return float(self.lipschitz_function(check_real(R, name="R", minimum=0, allow_inf=True, what="the interval is [-R, R]; math.inf for the whole line")))

    def sup_abs(self, R) -> float:
        """sup |σ(t)| over t in [-R, R]."""
        return float(self.sup_abs_function(check_real(R, name="R", minimum=0, allow_inf=True, what="the interval is [-R, R]; math.inf for the whole line")))

    def total_variation(self, R) -> float:
        """Total variation of σ on [-R, R], jumps included."""
        return float(self.total_variation_function(check_real(R, name="R", minimum=0, allow_inf=True, what="the interval is [-R, R]; math.inf for the whole line")))

    def jumps_in(self, R) -> tuple:
        """The jump points lying in [-R, R]."""
        r = check_real(R, name="R", minimum=0, allow_inf=True, what="the interval is [-R, R]; math.inf for the whole line")
        return tuple(j for j in self.jumps if -r <= j <= r)

    def image(self, lo, hi) -> tuple[np.ndarray, np.ndarray]:
        """Elementwise bounds on σ(t) for t in [lo, hi] (interval propagation).

        Exact for monotone σ; otherwise [-S, S] with S = sup |σ| on [-max|lo|,|hi|].

        >>> lo, hi = get_activation("relu").image([-1.0, 0.5], [2.0, 3.0])
        >>> lo.tolist(), hi.tolist()
        ([0.0, 0.5], [2.0, 3.0])
        """
        lo = _as_float(lo)
        hi = _as_float(hi)
        if self.monotone:
            return self(lo), self(hi)
        r = np.maximum(np.abs(lo), np.abs(hi))
        s = np.array([self.sup_abs(v) if v > 0 else abs(float(self(0.0))) for v in r.ravel()],
                     dtype=np.float64).reshape(r.shape)
        return -s, s

    def to_dict(self) -> dict:
        return {"name": self.name, "jumps": list(self.jumps), "range": list(self.value_range),
                "monotone": self.monotone, "description": self.description}


# --- built-in entries ---------------------------------------------------------------------

def _relu(t):
    return np.maximum(t, 0.0)


def _heaviside(t):
    return (t >= 0).astype(np.float64)


def _sign(t):
    return np.where(t >= 0, 1.0, -1.0)


def _hardtanh(t):
    return np.clip(t, -1.0, 1.0)


def _softplus(t):
    return np.logaddexp(0.0, t)


def _sigmoid_derivative(t):
    s = expit(t)
    return s * (1.0 - s)


def _zero(t):
    return np.zeros_like(t)


_BUILTINS = (
    Activation("relu", _relu, lambda t: t > 0,
               lipschitz_function=lambda R: 1.0, sup_abs_function=lambda R: R,
               total_variation_function=lambda R: R, value_range=(0.0, math.inf),
               description="max(t, 0); derivative [t > 0] (0 at the kink)"),
    Activation("heaviside", _heaviside, _zero,
               lipschitz_function=lambda R: 0.0, sup_abs_function=lambda R: 1.0,
               total_variation_function=lambda R: 1.0, jumps=(0.0,), value_range=(0.0, 1.0),
               description="[t >= 0] (gate convention, H(0) = 1); alias 'threshold'"),
    Activation("sign", _sign, _zero,
               lipschitz_function=lambda R: 0.0, sup_abs_function=lambda R: 1.0,
               total_variation_function=lambda R: 2.0, jumps=(0.0,), value_range=(-1.0, 1.0),
               description="+1 if t >= 0 else -1 (sign(0) = +1, gate convention)"),
    Activation("sigmoid", expit, _sigmoid_derivative,
               lipschitz_function=lambda R: 0.25, sup_abs_function=lambda R: float(expit(R)),
               total_variation_function=lambda R: math.tanh(R / 2), value_range=(0.0, 1.0),
               description="1 / (1 + exp(-t))"),
    Activation("tanh", np.tanh, lambda t: 1.0 - np.tanh(t) ** 2,
               lipschitz_function=lambda R: 1.0, sup_abs_function=math.tanh,
               total_variation_function=lambda R: 2 * math.tanh(R), value_range=(-1.0, 1.0),
               description="tanh(t)"),
    Activation("hardtanh", _hardtanh, lambda t: np.abs(t) < 1,
               lipschitz_function=lambda R: 1.0, sup_abs_function=lambda R: min(R, 1.0),
               total_variation_function=lambda R: 2 * min(R, 1.0), value_range=(-1.0, 1.0),
               description="clip(t, -1, 1); derivative [|t| < 1]"),
    Activation("softplus", _softplus, expit,
               lipschitz_function=lambda R: float(expit(R)),
               sup_abs_function=lambda R: float(np.logaddexp(0.0, R)),
               total_variation_function=lambda R: R, value_range=(0.0, math.inf),
               description="log(1 + exp(t)); softplus(R) - softplus(-R) = R"),
)

#: Registry: canonical name -> :class:`Activation`.  Aliases live in ``_ALIASES``.
ACTIVATIONS: dict[str, Activation] = {a.name: a for a in _BUILTINS}
_ALIASES: dict[str, str] = {"threshold": "heaviside", "step": "heaviside"}
_BUILTIN_NAMES = frozenset(ACTIVATIONS) | frozenset(_ALIASES)


def activation_names(*, aliases: bool = False) -> list[str]:
    """Sorted registered names (optionally with aliases).

    >>> activation_names()
    ['hardtanh', 'heaviside', 'relu', 'sigmoid', 'sign', 'softplus', 'tanh']
    """
    names = set(ACTIVATIONS)
    if aliases:
        names |= set(_ALIASES)
    return sorted(names)


def get_activation(name) -> Activation:
    """Look up an activation by name or alias (an :class:`Activation` passes through).

    Raises
    ------
    InvalidNetworkError
        For an unknown name; the message lists every choice.

    Examples
    --------
    >>> get_activation("threshold").name
    'heaviside'
    >>> get_activation("Relu").name
    'relu'
    """
    if isinstance(name, Activation):
        return name
    if not isinstance(name, str):
        raise TypeError(f"activation must be a name (str) or an Activation, got {type(name).__name__}")
    key = name.strip().lower()
    key = _ALIASES.get(key, key)
    try:
        return ACTIVATIONS[key]
    except KeyError:
        raise InvalidNetworkError(
            f"unknown activation {name!r}; choose one of {activation_names()} "
            f"(aliases: {sorted(_ALIASES)}) or add yours with networks.register_activation") from None


def register_activation(activation: Activation, *, aliases=(), replace: bool = False) -> Activation:
    """Add a user activation to the registry (it is then usable by name everywhere).

    Parameters
    ----------
    activation : Activation
        The entry; its ``name`` is the key.
    aliases : sequence of str
        Extra names resolving to it.
    replace : bool
        Allow overwriting a user entry of the same name (built-ins can never be replaced).

    Examples
    --------
    >>> import numpy as np
    >>> leaky = Activation("leaky_relu_doc", lambda t: np.where(t >= 0, t, 0.1 * t),
    ...                    lambda t: np.where(t > 0, 1.0, 0.1),
    ...                    lipschitz_function=lambda R: 1.0, sup_abs_function=lambda R: R,
    ...                    total_variation_function=lambda R: 1.1 * R)
    >>> register_activation(leaky).name
    'leaky_relu_doc'
    >>> get_activation("leaky_relu_doc")([-1.0, 2.0]).tolist()
    [-0.1, 2.0]
    >>> unregister_activation("leaky_relu_doc")
    """
    if not isinstance(activation, Activation):
        raise TypeError(f"register_activation expects an Activation, got {type(activation).__name__}; "
                        f"build one with networks.activations.Activation(name, function, ...)")
    keys = [activation.name] + [str(a).strip().lower() for a in aliases]
    for key in keys:
        if key in _BUILTIN_NAMES:
            raise InvalidNetworkError(f"{key!r} is a built-in activation and cannot be replaced; "
                                      f"choose another name")
        taken = key in ACTIVATIONS or key in _ALIASES
        if taken and not replace:
            raise InvalidNetworkError(f"activation {key!r} is already registered; pass replace=True "
                                      f"to overwrite it or choose another name")
    ACTIVATIONS[activation.name] = activation
    for key in keys[1:]:
        _ALIASES[key] = activation.name
    return activation


def unregister_activation(name: str) -> None:
    """Remove a user activation (and its aliases) from the registry; built-ins stay."""
    key = _ALIASES.get(name, name)
    if key in _BUILTIN_NAMES:
        raise InvalidNetworkError(f"{name!r} is a built-in activation and cannot be removed")
    if key not in ACTIVATIONS:
        raise InvalidNetworkError(f"activation {name!r} is not registered; registered: "
                                  f"{activation_names()}")
    del ACTIVATIONS[key]
    for alias in [a for a, target in _ALIASES.items() if target == key]:
        del _ALIASES[alias]
