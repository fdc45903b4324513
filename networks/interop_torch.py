"""σ-networks to and from PyTorch: ``torch.nn.Sequential`` stacks of ``Linear`` layers.

:func:`from_torch` / :func:`to_torch` convert ``torch.nn.Sequential`` stacks of ``Linear`` layers
and one activation module between them (extra ``torch``: ``pip install -e '.[torch]'``); importing
this module needs no torch.  Recognised modules: ``ReLU`` (relu), ``Sigmoid`` (sigmoid), ``Tanh``
(tanh), ``Hardtanh(-1, 1)`` (hardtanh), ``Softplus(beta=1)`` (softplus; torch switches to the
identity above ``threshold=20``, where the two differ by less than 2.1e-9), and
``networks.interop.Step`` modules made by :func:`to_torch` for heaviside/sign.  ``Dropout``,
``Identity`` and ``Flatten`` are the identity on a batch of vectors and are skipped.  Mappings of
weight arrays (state dicts, ``.npz`` and ``.safetensors`` files) are :mod:`networks.interop`,
which re-exports this module's functions.
"""

from __future__ import annotations

import numpy as np

from circuits.utils.errors import InvalidNetworkError, MissingDependencyError
from networks.activations import get_activation
from networks._document import network_classes

# Below the network class: no import of networks.sigma, not even for type hints (the classes come
# from networks._document at run time; the docstrings name the types).
__all__ = ["from_torch", "to_torch", "TORCH_ACTIVATIONS"]

#: torch.nn module class name -> depthsep activation name (checked further in from_torch)
TORCH_ACTIVATIONS = {
    "ReLU": "relu",
    "Sigmoid": "sigmoid",
    "Tanh": "tanh",
    "Hardtanh": "hardtanh",
    "Softplus": "softplus",
}
_SKIPPED = ("Dropout", "Identity", "Flatten")


def _torch():
    try:
        import torch
    except ImportError:
        raise MissingDependencyError(
            "PyTorch interop needs torch: pip install -e '.[torch]' (a CPU wheel is enough)"
        ) from None
    return torch


_STEP_CLASS = None


def _step_class():
    """The ``Step`` module class (built on first use so that importing needs no torch)."""
    global _STEP_CLASS
    if _STEP_CLASS is None:
        torch = _torch()

        class Step(torch.nn.Module):
            """heaviside: [t >= 0]; sign: +1 if t >= 0 else -1 (depthsep's gate convention)."""

            def __init__(self, kind: str = "heaviside"):
                super().__init__()
                if kind not in ("heaviside", "sign"):
                    raise ValueError(f"kind must be 'heaviside' or 'sign', got {kind!r}")
                self.kind = kind

            def forward(self, t):
                one = torch.ones_like(t)
                low = torch.zeros_like(t) if self.kind == "heaviside" else -one
                return torch.where(t >= 0, one, low)

            def extra_repr(self) -> str:
                return f"kind={self.kind!r}"

        Step.__module__ = "networks.interop"  # its documented name (networks.interop.Step)
        Step.__qualname__ = "Step"
        _STEP_CLASS = Step
    return _STEP_CLASS


def _flatten_modules(module, torch, where: str) -> list:
    if isinstance(module, torch.nn.Sequential):
        out = []
        for name, child in module.named_children():
            out += _flatten_modules(child, torch, f"{where}.{name}" if where else name)
        return out
    return [(where or type(module).__name__, module)]


def _activation_of(name: str, module) -> str:
    cls = type(module).__name__
    if cls == "Step" and getattr(module, "kind", None) in ("heaviside", "sign"):
        return module.kind
    if cls not in TORCH_ACTIVATIONS:
        raise InvalidNetworkError(
            f"module {name} ({cls}) is not a supported activation; supported: "
            f"{sorted(TORCH_ACTIVATIONS)} and networks.interop.Step (heaviside/sign)"
        )
    if cls == "Hardtanh" and (float(module.min_val) != -1.0 or float(module.max_val) != 1.0):
        raise InvalidNetworkError(
            f"module {name}: Hardtanh(min_val={module.min_val}, max_val="
            f"{module.max_val}) differs from depthsep's hardtanh = "
            f"clip(t, -1, 1); only the default bounds convert"
        )
    if cls == "Softplus" and float(module.beta) != 1.0:
        raise InvalidNetworkError(
            f"module {name}: Softplus(beta={module.beta}) differs from "
            f"depthsep's softplus = log(1 + exp(t)); only beta = 1 converts"
        )
    return TORCH_ACTIVATIONS[cls]


def from_torch(module):
    """A :class:`~networks.sigma.SigmaNetwork` from a ``torch.nn.Sequential`` of Linear layers.

    Parameters
    ----------
    module : torch.nn.Sequential
        ``Linear, act, Linear, act, ..., Linear`` with the same activation module type after
        every hidden layer and one output; nested ``Sequential`` blocks are flattened, and
        ``Dropout``, ``Identity``, ``Flatten`` are skipped (the identity in evaluation).  A
        single ``Linear`` gives a depth-1 network.

    Returns
    -------
    SigmaNetwork
        float64 copies of the weights (the module is not changed).

    Raises
    ------
    InvalidNetworkError
        Any other module, two activations in a row, mixed activations, a hidden layer without
        an activation, a last layer with more than one output.
    MissingDependencyError
        torch is not installed.
    """
    SigmaNetwork, DenseLayer = network_classes()
    torch = _torch()
    if not isinstance(module, torch.nn.Module):
        raise TypeError(f"module must be a torch.nn.Module (an nn.Sequential), got {type(module).__name__}")
    parts = [(n, m) for n, m in _flatten_modules(module, torch, "") if type(m).__name__ not in _SKIPPED]
    layers, acts, expect_linear = [], [], True
    for name, m in parts:
        if isinstance(m, torch.nn.Linear):
            if not expect_linear:
                raise InvalidNetworkError(
                    f"module {name}: two Linear layers in a row; a σ-network "
                    f"applies an activation after every hidden layer"
                )
            w = m.weight.detach().cpu().to(torch.float64).numpy()
            b = (
                m.bias.detach().cpu().to(torch.float64).numpy()
                if m.bias is not None
                else np.zeros(w.shape[0])
            )
            layers.append(DenseLayer(w, b))
            expect_linear = False
        else:
            if expect_linear:
                what = "two activations in a row" if layers else "an activation before any Linear"
                raise InvalidNetworkError(
                    f"module {name} ({type(m).__name__}): {what}; expected Linear, act, Linear, ..., Linear"
                )
            acts.append((name, _activation_of(name, m)))
            expect_linear = True
    if not layers:
        raise InvalidNetworkError("the module has no Linear layer")
    if expect_linear:
        raise InvalidNetworkError(
            f"the module ends with an activation ({acts[-1][0]}); a σ-network ends with a linear output layer"
        )
    names = {a for _, a in acts}
    if len(names) > 1:
        raise InvalidNetworkError(
            f"mixed activations {sorted(names)} at {[n for n, _ in acts]}; a "
            f"SigmaNetwork uses one activation for every hidden layer"
        )
    return SigmaNetwork(layers, activation=names.pop() if names else "relu")


def to_torch(net, *, dtype=None):
    """A ``torch.nn.Sequential`` computing the same function as ``net``.

    Parameters
    ----------
    net : SigmaNetwork
        Its activation must be one of relu, sigmoid, tanh, hardtanh, softplus, heaviside, sign.
    dtype : torch.dtype, optional
        Parameter dtype; default ``torch.float64`` (exact copies of the weights).

    Returns
    -------
    torch.nn.Sequential
        ``Linear, act, ..., Linear``; its ``state_dict`` keys are those of
        :func:`to_state_dict`.

    Raises
    ------
    InvalidNetworkError
        A user-registered activation with no torch counterpart.
    MissingDependencyError
        torch is not installed.
    """
    SigmaNetwork = network_classes()[0]
    torch = _torch()
    if not isinstance(net, SigmaNetwork):
        raise TypeError(f"net must be a SigmaNetwork, got {type(net).__name__}")
    dtype = torch.float64 if dtype is None else dtype
    act = get_activation(net.activation).name
    makers = {
        "relu": torch.nn.ReLU,
        "sigmoid": torch.nn.Sigmoid,
        "tanh": torch.nn.Tanh,
        "hardtanh": torch.nn.Hardtanh,
        "softplus": torch.nn.Softplus,
        "heaviside": lambda: _step_class()("heaviside"),
        "sign": lambda: _step_class()("sign"),
    }
    if act not in makers:
        raise InvalidNetworkError(
            f"activation {act!r} has no torch counterpart; to_torch supports {sorted(makers)}"
        )
    modules = []
    for i, layer in enumerate(net.layers):
        lin = torch.nn.Linear(layer.n_in, layer.n_out, dtype=dtype)
        with torch.no_grad():
            lin.weight.copy_(torch.from_numpy(np.array(layer.weights)))
            lin.bias.copy_(torch.from_numpy(np.array(layer.bias)))
        modules.append(lin)
        if i < net.depth - 1:
            modules.append(makers[act]())
    return torch.nn.Sequential(*modules)
