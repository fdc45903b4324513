"""Validation of saved :class:`~networks.sigma.SigmaNetwork` documents (JSON, never pickle).

The header goes through the shared :func:`circuits.utils.documents.check_header`; this module
checks the layers, the recorded dims and the parameter budget, naming the offending location.
"""

from __future__ import annotations

from circuits.utils.errors import InvalidNetworkError

__all__ = ["network_from_document"]


def _short(v, n: int = 60) -> str:
    text = repr(v)
    return text if len(text) <= n else text[: n - 3] + "..."


def _check_layer_doc(layer, i: int, where: str) -> None:
    """A saved layer: exactly {"weights": non-empty rows of JSON numbers, "bias": numbers}."""
    loc = f"{where}layers[{i}]"
    if not isinstance(layer, dict):
        raise InvalidNetworkError(f"{loc} must be an object {{'weights': ..., 'bias': ...}}, got "
                                  f"{type(layer).__name__}")
    keys = set(layer)
    if keys != {"weights", "bias"}:
        raise InvalidNetworkError(f"{loc} must have exactly the fields 'weights' and 'bias', got "
                                  f"{sorted(str(k) for k in keys)}")
    rows, bias = layer["weights"], layer["bias"]
    if not isinstance(rows, list) or not rows or not all(isinstance(r, list) for r in rows):
        raise InvalidNetworkError(f"{loc}.weights must be a non-empty list of rows (lists)")
    if not isinstance(bias, list):
        raise InvalidNetworkError(f"{loc}.bias must be a list of numbers")
    for j, row in enumerate(rows):
        for v in row:
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise InvalidNetworkError(f"{loc}.weights[{j}] holds {_short(v)}; weights must "
                                          f"be JSON numbers")
    for v in bias:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise InvalidNetworkError(f"{loc}.bias holds {_short(v)}; biases must be JSON numbers")



def network_from_document(cls, data, *, source: str, max_params: int):
    """Build ``cls`` (a :class:`~networks.sigma.SigmaNetwork`) from a parsed document, validating
    every field; every problem raises :class:`InvalidNetworkError` naming ``source``."""
    from networks.sigma import FORMAT, FORMAT_VERSION, _as_layer

    from circuits.utils.documents import check_header
    where = f"{source}: "
    check_header(data, format=FORMAT, version=FORMAT_VERSION, where=where,
                 error=InvalidNetworkError, what="SigmaNetwork document",
                 required=("activation", "layers"), optional=("dims", "metadata"))
    act = data["activation"]
    if not isinstance(act, str):
        raise InvalidNetworkError(f"{where}'activation' must be a name (a string), got "
                                  f"{type(act).__name__}")
    layers = data["layers"]
    if not isinstance(layers, list) or not layers:
        raise InvalidNetworkError(f"{where}'layers' must be a non-empty list of "
                                  f"{{'weights', 'bias'}} objects")
    total = 0
    for i, layer in enumerate(layers):
        _check_layer_doc(layer, i, where)
        total += sum(len(row) for row in layer["weights"]) + len(layer["bias"])
        if total > max_params:
            raise InvalidNetworkError(f"{where}more than max_params={max_params:,} "
                                      f"parameters; raise max_params if the file is trusted")
    try:
        net = cls([_as_layer(layer, i) for i, layer in enumerate(layers)], activation=act)
    except (InvalidNetworkError, TypeError) as exc:
        raise InvalidNetworkError(f"{where}{exc}") from None
    if "dims" in data:
        dims = data["dims"]
        if (not isinstance(dims, list)
                or not all(type(v) is int for v in dims)):
            raise InvalidNetworkError(f"{where}'dims' must be a list of integers, got "
                                      f"{_short(dims)}")
        if dims != list(net.dims):
            raise InvalidNetworkError(f"{where}recorded dims {_short(dims)} disagree with "
                                      f"the layers' shapes {list(net.dims)}; the file is "
                                      f"inconsistent")
    return net
