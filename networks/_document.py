"""Validation of saved :class:`~networks.sigma.SigmaNetwork` documents (JSON, never pickle).

The header goes through the shared :func:`circuits.utils.documents.check_header`; this module
checks the layers, the recorded dims and the parameter budget, naming the offending location.

This module and :mod:`networks.interop` sit *below* the network class: neither imports
:mod:`networks.sigma`.  The class is passed in (``cls``), or found through
:func:`network_classes`, where :mod:`networks.sigma` registers it when it is defined.
"""

from __future__ import annotations

import numpy as np

from circuits.utils.errors import InvalidNetworkError

__all__ = ["network_from_document", "network_classes", "register_network_classes", "FORMAT",
           "FORMAT_VERSION"]

#: The ``"format"`` of a saved network document and the version this library reads/writes.
FORMAT = "depthsep.SigmaNetwork"
FORMAT_VERSION = 1

_CLASSES: list = []


def register_network_classes(network_cls, layer_cls) -> None:
    """Called once by :mod:`networks.sigma` with ``SigmaNetwork`` and ``DenseLayer``."""
    _CLASSES[:] = [network_cls, layer_cls]


def network_classes() -> tuple:
    """``(SigmaNetwork, DenseLayer)``, as registered by :mod:`networks.sigma` (imported with the
    ``networks`` package, so always present once ``networks`` is imported)."""
    if not _CLASSES:   # only while the package itself is still being imported
        raise RuntimeError("networks.sigma has not registered the network classes yet")
    return tuple(_CLASSES)


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
    if isinstance(rows, np.ndarray) or isinstance(bias, np.ndarray):
        # large arrays come from the document reader as numpy (numbers only, rectangular)
        rows = rows if isinstance(rows, np.ndarray) else _small_matrix(rows, loc)
        if rows.ndim != 2 or rows.shape[0] == 0:
            raise InvalidNetworkError(f"{loc}.weights must be a non-empty list of rows (lists)")
        if not isinstance(bias, (list, np.ndarray)) or np.ndim(bias) != 1:
            raise InvalidNetworkError(f"{loc}.bias must be a list of numbers")
        if isinstance(bias, list):
            _check_numbers(bias, f"{loc}.bias", "biases")
        return
    if not isinstance(rows, list) or not rows or not all(isinstance(r, list) for r in rows):
        raise InvalidNetworkError(f"{loc}.weights must be a non-empty list of rows (lists)")
    if not isinstance(bias, list):
        raise InvalidNetworkError(f"{loc}.bias must be a list of numbers")
    for j, row in enumerate(rows):
        for v in row:
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise InvalidNetworkError(f"{loc}.weights[{j}] holds {_short(v)}; weights must "
                                          f"be JSON numbers")
    _check_numbers(bias, f"{loc}.bias", "biases")


def _check_numbers(values, loc: str, what: str) -> None:
    for v in values:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise InvalidNetworkError(f"{loc} holds {_short(v)}; {what} must be JSON numbers")


def _small_matrix(rows, loc: str) -> np.ndarray:
    """A small weights field (read as lists) next to a large bias read as an array."""
    if not isinstance(rows, list) or not rows or not all(isinstance(r, list) for r in rows):
        raise InvalidNetworkError(f"{loc}.weights must be a non-empty list of rows (lists)")
    for j, row in enumerate(rows):
        _check_numbers(row, f"{loc}.weights[{j}]", "weights")
    try:
        return np.array(rows, dtype=np.float64)
    except ValueError:
        raise InvalidNetworkError(f"{loc}.weights rows differ in length") from None



def network_from_document(cls, data, *, source: str, max_params: int):
    """Build ``cls`` (a :class:`~networks.sigma.SigmaNetwork`) from a parsed document, validating
    every field; every problem raises :class:`InvalidNetworkError` naming ``source``."""
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
        w = layer["weights"]
        total += (int(np.size(w)) if isinstance(w, np.ndarray) else sum(len(row) for row in w)
                  ) + len(layer["bias"])
        if total > max_params:
            raise InvalidNetworkError(f"{where}more than max_params={max_params:,} "
                                      f"parameters; raise max_params if the file is trusted")
    try:
        net = cls(list(layers), activation=act)         # the class turns each dict into a layer
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
