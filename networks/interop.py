"""σ-networks to and from other frameworks: PyTorch modules and plain mappings of weight arrays.

A network trained elsewhere goes straight into :func:`networks.reduce_network`:

* :func:`from_state_dict` (always available) reads any mapping ``name -> array`` whose 2-D
  entries are the layers' weights -- a PyTorch ``state_dict()``, an ``.npz`` file
  (``numpy.load``), a safetensors file (:func:`load_state_dict`) -- and pairs each ``P.weight``
  with ``P.bias`` (zero if absent), ordering the layers by their names with numbers compared as
  numbers (``"0"``, ``"2"``, ``"10"``; ``"fc1"``, ``"fc2"``).  Weights have PyTorch's layout
  (out_features, in_features), like :class:`networks.sigma.DenseLayer`; pass
  ``transpose=True`` for (in, out) kernels (Keras, Flax).
* :func:`to_state_dict` writes the keys ``"0.weight"``, ``"0.bias"``, ``"2.weight"``, ... that
  the ``torch.nn.Sequential`` of :func:`~networks.interop_torch.to_torch` expects, so
  ``module.load_state_dict({k: torch.from_numpy(v) for k, v in sd.items()})`` works.
* :func:`~networks.interop_torch.from_torch` / :func:`~networks.interop_torch.to_torch` convert
  ``torch.nn.Sequential`` stacks of ``Linear`` layers and one activation module between them
  (extra ``torch``: ``pip install -e '.[torch]'``), heaviside and sign as ``networks.interop.Step``
  modules; they live in :mod:`networks.interop_torch` (the recognised modules are listed there)
  and are re-exported here.

Examples
--------
>>> import numpy as np
>>> sd = {"0.weight": np.array([[1.0, -1.0], [-1.0, 1.0]]), "0.bias": np.zeros(2),
...       "2.weight": np.array([[1.0, 1.0]]), "2.bias": np.zeros(1)}
>>> net = from_state_dict(sd, activation="relu")                    # |x0 - x1|
>>> net(np.array([[0.5, 0.25]])).tolist()
[0.25]
>>> sorted(to_state_dict(net)) == sorted(sd)
True
"""

from __future__ import annotations

import io as _io
from typing import TYPE_CHECKING
import re
from pathlib import Path

import numpy as np

from circuits.utils.errors import InvalidNetworkError, MissingDependencyError
from networks._document import network_classes
from networks.interop_torch import TORCH_ACTIVATIONS, from_torch, to_torch  # re-exported

if TYPE_CHECKING:  # interop sits below the network class: no runtime import of networks.sigma
    from networks.sigma import SigmaNetwork

__all__ = [
    "from_state_dict",
    "to_state_dict",
    "load_state_dict",
    "save_state_dict",
    "from_torch",
    "to_torch",
    "TORCH_ACTIVATIONS",
]


# ------------------------------------------------------------------------------ mappings
def _as_numpy(value, key: str) -> np.ndarray:
    if hasattr(value, "detach"):  # a torch tensor
        value = value.detach().cpu().numpy()
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError) as exc:
        raise InvalidNetworkError(f"state[{key!r}] cannot be read as an array ({exc})") from None
    if arr.dtype.kind not in "fiu":
        raise InvalidNetworkError(f"state[{key!r}] must hold real numbers, got dtype {arr.dtype}")
    return arr


def _natural_key(name: str):
    return [
        (0, int(part), "") if part.isdigit() else (1, 0, part)
        for part in re.split(r"(\d+)", name)
        if part != ""
    ]


def from_state_dict(state, activation="relu", *, transpose: bool = False, layers=None) -> SigmaNetwork:
    """A :class:`~networks.sigma.SigmaNetwork` from a mapping of weight arrays.

    Parameters
    ----------
    state : mapping of str to array_like
        For example ``module.state_dict()``, ``dict(numpy.load("w.npz"))`` or the result of
        :func:`load_state_dict`.  Every 2-D entry whose key ends in ``weight`` (``"0.weight"``,
        ``"fc1.weight"``, ``"weight"``) is a layer; its bias is the entry with the same prefix
        and ``bias`` in place of ``weight`` (zeros if absent).  Other entries must be biases of
        those layers; anything else is an error (so nothing is silently dropped).
    activation : str or Activation
        The activation of every hidden layer (a registry name, default ``"relu"``); a state
        dict does not record it.
    transpose : bool
        Weights are stored (in_features, out_features) (Keras/Flax kernels); default False
        (PyTorch's (out, in)).
    layers : sequence of str, optional
        The weight keys in order, overriding the natural ordering of their names.

    Returns
    -------
    SigmaNetwork

    Raises
    ------
    InvalidNetworkError
        No weight entries, entries that belong to no layer, shapes that do not chain, a last
        layer with more than one output, non-finite values, an unknown activation.

    Examples
    --------
    >>> import numpy as np
    >>> net = from_state_dict({"fc1.weight": np.ones((3, 2)), "fc2.weight": np.ones((1, 3))},
    ...                       activation="tanh")
    >>> net.dims, net.activation.name
    ((2, 3, 1), 'tanh')
    """
    SigmaNetwork, DenseLayer = network_classes()
    if not hasattr(state, "keys") or not hasattr(state, "__getitem__"):
        raise TypeError(
            f"state must be a mapping name -> array (a state_dict, dict(np.load(...))), "
            f"got {type(state).__name__}"
        )
    keys = [str(k) for k in state.keys()]
    if layers is None:
        weight_keys = [k for k in keys if k.endswith("weight") and np.ndim(state[k]) == 2]
        weight_keys.sort(key=_natural_key)
    else:
        weight_keys = [str(k) for k in layers]
        missing = [k for k in weight_keys if k not in keys]
        if missing:
            raise InvalidNetworkError(
                f"layers names keys {missing} that are not in state; its keys are {sorted(keys)}"
            )
    if not weight_keys:
        raise InvalidNetworkError(
            f"state has no 2-D '...weight' entries (keys: {sorted(keys)}); "
            f"name the weight keys with layers=[...]"
        )
    used = set()
    built = []
    for wk in weight_keys:
        w = _as_numpy(state[wk], wk)
        if w.ndim != 2:
            raise InvalidNetworkError(f"state[{wk!r}] must be a 2-D weight matrix, got shape {w.shape}")
        if transpose:
            w = w.T
        bk = wk[: len(wk) - len("weight")] + "bias" if wk.endswith("weight") else None
        if bk is not None and bk in keys:
            b = _as_numpy(state[bk], bk)
            used.add(bk)
        else:
            b = np.zeros(w.shape[0])
        used.add(wk)
        built.append(DenseLayer(w.astype(np.float64), b.astype(np.float64)))
    extra = [k for k in keys if k not in used]
    if extra:
        raise InvalidNetworkError(
            f"state has entries that belong to no layer: {sorted(extra)}; a "
            f"σ-network has only weights and biases (remove them, or name "
            f"the weight keys with layers=[...])"
        )
    return SigmaNetwork(built, activation=activation)


def to_state_dict(net: SigmaNetwork) -> dict:
    """The network's weights as ``{"0.weight", "0.bias", "2.weight", ...}`` float64 arrays.

    The keys are those of the ``torch.nn.Sequential`` built by
    :func:`~networks.interop_torch.to_torch` (layer l sits at index 2l, activations in between).

    Parameters
    ----------
    net : SigmaNetwork

    Returns
    -------
    dict of str to numpy.ndarray
        Writable copies, (out, in) weights.

    Examples
    --------
    >>> from networks.sigma import SigmaNetwork
    >>> net = SigmaNetwork.random([3, 4, 1], seed=0)
    >>> {k: v.shape for k, v in to_state_dict(net).items()}
    {'0.weight': (4, 3), '0.bias': (4,), '2.weight': (1, 4), '2.bias': (1,)}
    """
    out = {}
    for i, layer in enumerate(net.layers):
        out[f"{2 * i}.weight"] = np.array(layer.weights, dtype=np.float64)
        out[f"{2 * i}.bias"] = np.array(layer.bias, dtype=np.float64)
    return out


#: Default limit of a weights file: its size and, for ``.npz``, the sum of its uncompressed
#: members (a zip bomb is refused from the zip directory, before anything is inflated).
MAX_STATE_BYTES = 1 << 30
#: An ``.npz`` may inflate to at most this many times its own size (plus 1 MiB): weights
#: written by :func:`save_state_dict` are stored uncompressed (ratio 1) and float weights
#: deflate by about 1.1x, while a deflate bomb reaches about 1000x.  ``max_ratio=None`` lifts it.
MAX_INFLATE_RATIO = 64


def _load_npz(path: Path, max_bytes: int, max_ratio: "float | None" = MAX_INFLATE_RATIO) -> dict:
    """The arrays of an ``.npz`` file, every size checked before it is read (see load_state_dict)."""
    import os
    import stat as _stat
    import zipfile
    import zlib

    from circuits.io import read_npy_bytes

    where = f"{path}: "
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except IsADirectoryError:
        raise InvalidNetworkError(f"{where}is a directory, not a weights file") from None
    except OSError as exc:
        raise InvalidNetworkError(f"{where}cannot be opened ({exc.strerror or exc})") from None
    if _stat.S_ISDIR(os.fstat(fd).st_mode):  # open() succeeds on a directory; fdopen would
        os.close(fd)  # raise a bare IsADirectoryError
        raise InvalidNetworkError(f"{where}is a directory, not a weights file")
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fd)
        if not _stat.S_ISREG(st.st_mode):
            raise InvalidNetworkError(
                f"{where}is not a regular file (a FIFO, socket, device or "
                f"directory); copy the weights to a regular file first"
            )
        if st.st_size > max_bytes:
            raise InvalidNetworkError(
                f"{where}file has {st.st_size:,} bytes, above "
                f"max_bytes={max_bytes:,}; pass a larger max_bytes if trusted"
            )
        field = "the zip directory"
        try:
            with zipfile.ZipFile(fh) as zf:
                infos = zf.infolist()
                total = sum(i.file_size for i in infos)
                if total > max_bytes:
                    raise InvalidNetworkError(
                        f"{where}members would inflate to {total:,} bytes, above max_bytes="
                        f"{max_bytes:,} (a zip bomb?); pass a larger max_bytes if trusted"
                    )
                if max_ratio is not None and total > max_ratio * st.st_size + (1 << 20):
                    raise InvalidNetworkError(
                        f"{where}members would inflate to {total:,} bytes, more than "
                        f"{max_ratio:g} times the file's {st.st_size:,} bytes (a zip bomb?); "
                        f"pass max_ratio=None if the file is trusted"
                    )
                out = {}
                for info in infos:
                    field = f"member {info.filename!r}"
                    if not info.filename.endswith(".npy"):
                        raise InvalidNetworkError(f"{where}{field} is not an .npy array")
                    raw = zf.read(info)
                    if len(raw) != info.file_size:
                        raise InvalidNetworkError(
                            f"{where}{field} has {len(raw):,} bytes, the directory says {info.file_size:,}"
                        )
                    out[info.filename[:-4]] = read_npy_bytes(
                        raw, where=f"{where}{field}: ", error=InvalidNetworkError
                    )
                return out
        except InvalidNetworkError:
            raise
        except (
            zipfile.BadZipFile,
            zlib.error,
            EOFError,
            OSError,
            ValueError,
            KeyError,
            RuntimeError,
            NotImplementedError,
            UnicodeDecodeError,
            OverflowError,
            MemoryError,
            TypeError,
        ) as exc:
            raise InvalidNetworkError(
                f"{where}not a readable .npz file ({field}: {type(exc).__name__}: {exc})"
            ) from None


def load_state_dict(
    path, *, max_bytes: int = MAX_STATE_BYTES, max_ratio: "float | None" = MAX_INFLATE_RATIO
) -> dict:
    """Read a mapping of arrays from an ``.npz`` or ``.safetensors`` file.

    Parameters
    ----------
    path : str or Path
        ``.npz`` files are read with ``allow_pickle=False``; ``.safetensors`` files need the
        ``safetensors`` package (``pip install safetensors``).  Only regular files are read
        (a FIFO or device is refused before it is opened for reading).
    max_bytes : int
        Largest accepted file and, for ``.npz``, largest total of the uncompressed members
        (checked from the zip directory before anything is inflated).
    max_ratio : float or None
        Largest ratio of the ``.npz`` members' inflated total to the file's size (plus 1 MiB),
        also read from the zip directory; ``None`` for no ratio limit.

    Returns
    -------
    dict of str to numpy.ndarray

    Raises
    ------
    InvalidNetworkError
        Unknown suffix or unreadable content.
    MissingDependencyError
        A ``.safetensors`` file without the safetensors package.
    FileNotFoundError
        If the file does not exist.
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no weights file at {path}")
    suffix = path.suffix.lower()
    if suffix == ".npz":
        return _load_npz(path, max_bytes, max_ratio)
    if suffix == ".safetensors":
        from circuits.utils.documents import read_regular_file

        read_regular_file(path, error=InvalidNetworkError, max_bytes=max_bytes)  # regular, bounded
        st = _safetensors_numpy()
        try:
            return dict(st.load_file(str(path)))
        except Exception as exc:  # safetensors raises its own error types
            raise InvalidNetworkError(f"{path}: not a readable .safetensors file ({exc})") from None
    raise InvalidNetworkError(
        f"{path}: weights files must end in .npz or .safetensors, got {suffix or 'no suffix'!r}"
    )


def save_state_dict(net_or_state, path) -> Path:
    """Write a network's weights (or a mapping of arrays) to ``.npz`` or ``.safetensors``.

    The file is written atomically (:func:`circuits.utils.files.write_bytes_atomic`).

    Parameters
    ----------
    net_or_state : SigmaNetwork or mapping of str to array_like
    path : str or Path
        The suffix chooses the format.

    Returns
    -------
    Path
    """
    SigmaNetwork = network_classes()[0]
    from circuits.utils.files import write_bytes_atomic

    state = (
        to_state_dict(net_or_state)
        if isinstance(net_or_state, SigmaNetwork)
        else {str(k): _as_numpy(v, str(k)) for k, v in net_or_state.items()}
    )
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".npz":
        buf = _io.BytesIO()
        np.savez(buf, **state)
        return write_bytes_atomic(path, buf.getvalue())
    if suffix == ".safetensors":
        st = _safetensors_numpy()
        return write_bytes_atomic(path, st.save({k: np.ascontiguousarray(v) for k, v in state.items()}))
    raise InvalidNetworkError(
        f"{path}: weights files must end in .npz or .safetensors, got {suffix or 'no suffix'!r}"
    )


def _safetensors_numpy():
    try:
        import safetensors.numpy as st
    except ImportError:
        raise MissingDependencyError(
            "reading or writing .safetensors files needs the safetensors "
            "package: pip install safetensors (or use .npz)"
        ) from None
    return st


def __getattr__(name):  # networks.interop.Step, built lazily (importing needs no torch)
    if name == "Step":
        from networks.interop_torch import _step_class

        return _step_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
