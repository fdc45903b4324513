"""Training σ-networks with Adam on the mean squared error, in numpy (float64, BLAS matmuls).

:func:`train` never mutates its input: it copies the weights into working arrays, runs Adam
(Kingma & Ba 2015, bias-corrected moments) on MSE = mean((N(x) - y)²), and returns a new
:class:`~networks.sigma.SigmaNetwork` with a history.  Full batch (``batch_size=None``) is
deterministic; mini-batches are drawn from ``seed``.  ``weight_bound=B`` clips every weight and
bias to [-B, B] after each step (the depth-2 lower bounds are about networks with bounded
weights, THEORY.md §4.0), and the returned network then satisfies ``weight_bound <= B``.

Step activations (heaviside, sign) have zero derivative almost everywhere, so only the output
layer of such a network learns; that is the mathematics, not a bug.

Examples
--------
>>> import numpy as np
>>> from networks.sigma import SigmaNetwork
>>> X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]) / 2
>>> y = np.array([0.0, 1.0, 1.0, 0.0])                                  # XOR
>>> net = SigmaNetwork.random([2, 16, 1], seed=0, bias_scale=0.5)
>>> res = train(net, X, y, epochs=3000, lr=0.01, tol=0.0, patience=None)
>>> bool(res.history["final_loss"] < 1e-3), res.network.classify(X).tolist()
(True, [0, 1, 1, 0])
"""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass, field

import numpy as np

from circuits.utils.progress import progress_bar
from circuits.utils.rng import as_rng
from circuits.utils.errors import InvalidNetworkError
from circuits.utils.validation import check_int, check_real
from networks.sigma import DenseLayer, SigmaNetwork

__all__ = ["TrainOptions", "TrainResult", "train", "mse", "loss_and_gradient"]


@dataclass(frozen=True, eq=False)
class TrainResult:
    """The trained network and a history dict.

    ``history`` keys: ``loss`` (list, one value per epoch: the full-batch loss before that
    epoch's step, or the mean mini-batch loss over the epoch), ``epochs`` (epochs run),
    ``stopped_early`` (bool), ``reason`` ("epochs", "target_loss" or "patience"),
    ``final_loss`` (MSE of the returned network on all of X), ``best_loss``, ``seconds``,
    ``settings`` (the arguments used).
    """

    network: SigmaNetwork
    history: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"network": self.network.to_dict(), "history": self.history}


def _as_float_array(values, name: str, shape: str) -> np.ndarray:
    """``values`` as a C-contiguous float64 array, or an error naming ``name``."""
    if isinstance(values, (str, bytes)):
        raise TypeError(f"{name} must be an array of real numbers of shape {shape}, got "
                        f"{type(values).__name__} {values[:20]!r}")
    try:
        arr = np.asarray(values)
        if arr.dtype == object or arr.dtype.kind in "USV":
            raise TypeError
        return np.ascontiguousarray(arr, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be an array of real numbers of shape {shape}, got "
                        f"{type(values).__name__} that numpy reads as "
                        f"{getattr(locals().get('arr'), 'dtype', 'no number array')}; convert it "
                        f"with np.asarray({name}, dtype=float)") from None


def _check_data(network: SigmaNetwork, X, y):
    if not isinstance(network, SigmaNetwork):
        raise TypeError(f"network must be a SigmaNetwork, got {type(network).__name__}")
    X = _as_float_array(X, "X", f"(n_points, {network.input_dim})")
    y = _as_float_array(y, "y", "(n_points,)")
    if X.ndim != 2 or X.shape[1] != network.input_dim:
        raise InvalidNetworkError(f"X must have shape (n_points, {network.input_dim}) to match the "
                                  f"network's input_dim, got {X.shape}")
    if X.shape[0] == 0:
        raise InvalidNetworkError("X has no rows; training needs at least one point")
    if y.shape != (X.shape[0],):
        raise InvalidNetworkError(f"y must have shape ({X.shape[0]},) (one target per row of X), "
                                  f"got {y.shape}; use y.ravel() for a column vector")
    if not np.isfinite(X).all():
        raise InvalidNetworkError("X contains NaN or infinity; clean the data first")
    if not np.isfinite(y).all():
        raise InvalidNetworkError("y contains NaN or infinity; clean the targets first")
    return X, y


def _forward_backward(params, act, X, y, want_grad=True):
    """MSE and its gradient for params = [W0, b0, W1, b1, ...] (W_l of shape (out, in)).

    Backpropagation arranged to touch each (N, width) array as few times as possible: for the
    last hidden layer, dz = (σ'(z) * g) * v with g = dL/dN, so dW = v * ((σ'(z) * g)^T h) and
    the row scaling by v is applied to the small (width, fan_in) matrices instead.
    """
    n_layers = len(params) // 2
    derivs = []
    hs = [X]
    h = X
    for l in range(n_layers - 1):
        z = h @ params[2 * l].T
        z += params[2 * l + 1]
        if want_grad:
            derivs.append(act.derivative_function(z))   # may be bool or broadcastable
        h = act.function(z)
        hs.append(h)
    out = h @ params[-2][0]
    out += params[-1][0]
    r = out - y
    loss = float(r @ r) / X.shape[0]
    if not want_grad:
        return loss, None
    grads = [None] * len(params)
    g = (2.0 / X.shape[0]) * r                        # dL/d out, shape (N,)
    grads[-2] = (g @ h)[None, :].astype(params[-2].dtype, copy=False)
    grads[-1] = np.array([g.sum()], dtype=params[-1].dtype)
    if n_layers == 1:
        return loss, grads
    top = n_layers - 2
    v = params[-2][0]
    q = np.multiply(derivs[top], g[:, None], dtype=params[0].dtype)   # σ'(z) * g, (N, w)
    grads[2 * top] = v[:, None] * (q.T @ hs[top])
    grads[2 * top + 1] = v * q.sum(axis=0)
    if top == 0:
        return loss, grads
    dh = q @ (v[:, None] * params[2 * top])           # dL/dh_{top}, (N, w_prev)
    for l in range(top - 1, -1, -1):
        dh *= derivs[l]                               # now dL/dz_l
        grads[2 * l] = dh.T @ hs[l]
        grads[2 * l + 1] = dh.sum(axis=0)
        if l > 0:
            dh = dh @ params[2 * l]
    return loss, grads


def _params_of(network: SigmaNetwork):
    params = []
    for layer in network.layers:
        params.append(np.array(layer.weights, dtype=np.float64, order="C"))
        params.append(np.array(layer.bias, dtype=np.float64))
    return params


def _network_of(params, activation) -> SigmaNetwork:
    return SigmaNetwork([DenseLayer(params[i], params[i + 1]) for i in range(0, len(params), 2)],
                        activation=activation)


def mse(network: SigmaNetwork, X, y) -> float:
    """Mean squared error mean((N(x) - y)²) over the rows of X.

    >>> from networks.sigma import SigmaNetwork
    >>> net = SigmaNetwork([([[1.0]], [0.0]), ([[1.0]], [0.0])])
    >>> mse(net, [[1.0], [-1.0]], [1.0, 1.0])
    0.5
    """
    X, y = _check_data(network, X, y)
    r = network(X) - y
    return float(r @ r) / X.shape[0]


def loss_and_gradient(network: SigmaNetwork, X, y):
    """MSE and its exact gradient (backpropagation) with respect to every weight and bias.

    Returns
    -------
    loss : float
    grads : list of (dW, db) pairs, shaped like each layer's (weights, bias).

    Examples
    --------
    >>> from networks.sigma import SigmaNetwork
    >>> net = SigmaNetwork([([[2.0]], [0.0]), ([[3.0]], [1.0])])       # N(x) = 3 relu(2x) + 1
    >>> loss, grads = loss_and_gradient(net, [[1.0]], [0.0])          # N = 7, loss 49
    >>> loss, [(dw.tolist(), db.tolist()) for dw, db in grads]
    (49.0, [([[42.0]], [42.0]), ([[28.0]], [14.0])])
    """
    X, y = _check_data(network, X, y)
    loss, grads = _forward_backward(_params_of(network), network.activation, X, y)
    return loss, [(grads[i], grads[i + 1]) for i in range(0, len(grads), 2)]




@dataclass(frozen=True)
class TrainOptions:
    """Settings of :func:`train`, validated once when built (frozen; JSON-ready via ``to_dict``).

    Attributes
    ----------
    epochs : int
        Maximum number of passes over the data (default 1000).
    lr : float
        Adam step size (default 1e-3).
    batch_size : int or None
        None = full batch (one deterministic step per epoch); otherwise mini-batches of this
        size from a fresh permutation each epoch (drawn from ``seed``).
    seed : int, Generator or None
        Randomness for mini-batch order (full batch uses none).
    weight_bound : float or None
        If given, every weight and bias is clipped to [-B, B] before training and after each step.
    progress : bool
        Show a tqdm bar (one tick per epoch).
    tol, patience : float, int or None
        Early stopping: stop when the epoch loss has not dropped below ``best - tol`` for
        ``patience`` consecutive epochs (``patience=None`` disables it).
    target_loss : float or None
        Stop as soon as an epoch loss is <= target_loss.
    betas, eps : Adam constants.
    dtype : "float64" or "float32"
        Working precision.  float64 (default) is what the gradient checks certify; float32
        roughly halves the time of large runs.  The returned network is float64 either way and
        ``final_loss`` is always evaluated in float64.
    desc : str
        Progress-bar label.

    Examples
    --------
    >>> opts = TrainOptions(epochs=500, lr=0.01)
    >>> opts.epochs, opts.batch_size, opts.dtype
    (500, None, 'float64')
    >>> TrainOptions(lr=-1)
    Traceback (most recent call last):
    ...
    circuits.utils.errors.InvalidArgumentError: lr must be > 0 (the Adam step size), got -1
    """

    epochs: int = 1000
    lr: float = 1e-3
    batch_size: "int | None" = None
    seed: object = 0
    weight_bound: "float | None" = None
    progress: bool = False
    tol: float = 1e-9
    patience: "int | None" = 100
    target_loss: "float | None" = None
    betas: tuple = (0.9, 0.999)
    eps: float = 1e-8
    dtype: str = "float64"
    desc: str = "train"

    def __post_init__(self):
        put = lambda k, v: object.__setattr__(self, k, v)  # noqa: E731 - frozen dataclass
        put("epochs", check_int(self.epochs, name="epochs", minimum=0))
        put("lr", check_real(self.lr, name="lr", minimum=0, what="the Adam step size"))
        if self.batch_size is not None:
            put("batch_size", check_int(self.batch_size, name="batch_size", minimum=1))
        put("weight_bound", check_real(self.weight_bound, name="weight_bound", minimum=0,
                                       allow_none=True))
        put("tol", check_real(self.tol, name="tol", minimum=0, strict=False))
        if self.patience is not None:
            put("patience", check_int(self.patience, name="patience", minimum=1))
        put("target_loss", check_real(self.target_loss, name="target_loss", minimum=0,
                                      strict=False, allow_none=True))
        put("eps", check_real(self.eps, name="eps", minimum=0))
        try:
            beta1, beta2 = (float(b) for b in self.betas)
        except (TypeError, ValueError):
            raise TypeError(f"betas must be a pair of floats, got {self.betas!r}") from None
        if not (0 <= beta1 < 1 and 0 <= beta2 < 1):
            raise InvalidNetworkError(f"betas must lie in [0, 1), got ({beta1}, {beta2})")
        put("betas", (beta1, beta2))
        try:
            work = np.dtype(self.dtype)
        except TypeError:
            raise TypeError(f"dtype must be 'float64' or 'float32', got {self.dtype!r}") from None
        if work not in (np.dtype(np.float64), np.dtype(np.float32)):
            raise InvalidNetworkError(f"dtype must be 'float64' or 'float32', got {work}")
        put("dtype", work.name)
        if not isinstance(self.seed, np.random.Generator):
            as_rng(self.seed)                      # refuses a seed of the wrong type, by name

    def to_dict(self) -> dict:
        """The settings as recorded in ``TrainResult.history["settings"]``."""
        seed = self.seed
        return {"epochs": self.epochs, "lr": self.lr, "batch_size": self.batch_size,
                "seed": int(seed) if isinstance(seed, (int, np.integer)) else
                (None if seed is None else "generator"),
                "weight_bound": self.weight_bound, "tol": self.tol, "patience": self.patience,
                "target_loss": self.target_loss, "betas": list(self.betas), "eps": self.eps,
                "dtype": self.dtype}


class _Adam:
    """Adam (bias-corrected moments) over a list of parameter arrays, updated in place."""

    def __init__(self, params, opts: TrainOptions):
        self.params, self.opts, self.step = params, opts, 0
        self.m1 = [np.zeros_like(p) for p in params]
        self.m2 = [np.zeros_like(p) for p in params]
        self.clip()

    def clip(self):
        B = self.opts.weight_bound
        if B is not None:
            for p in self.params:
                np.clip(p, -B, B, out=p)

    def __call__(self, grads):
        (beta1, beta2), lr, eps = self.opts.betas, self.opts.lr, self.opts.eps
        self.step += 1
        c1 = 1.0 - beta1 ** self.step
        c2 = 1.0 - beta2 ** self.step
        for p, g, a, b in zip(self.params, grads, self.m1, self.m2):
            a *= beta1
            a += (1.0 - beta1) * g
            b *= beta2
            b += (1.0 - beta2) * (g * g)
            p -= (lr / c1) * a / (np.sqrt(b / c2) + eps)
        self.clip()


#: A loss this many times the first one means the run diverged (Adam never recovers from it).
DIVERGED_FACTOR = 1e6


def _finite(loss: float, epoch: int, lr: float, first=None) -> float:
    """Stop a diverging run: a non-finite loss, or (``first`` = [the run's first loss]) a loss
    above DIVERGED_FACTOR times the first (lr = 1e6 gives 1e12 with finite numbers)."""
    if not math.isfinite(loss):
        raise InvalidNetworkError(f"training diverged at epoch {epoch} (loss {loss}); lower lr "
                                  f"(now {lr}) or set weight_bound")
    if first is not None:
        if not first:
            first.append(loss)
        elif first[0] > 0 and loss > DIVERGED_FACTOR * first[0]:
            raise InvalidNetworkError(
                f"training diverged at epoch {epoch}: loss {loss:.3g} is more than "
                f"{DIVERGED_FACTOR:.0e} times the first loss {first[0]:.3g}; lower lr (now {lr}) "
                f"or set weight_bound")
    return loss


def _epoch(adam: _Adam, act, X, y, batch_size, rng, epoch: int, first=None):
    """One epoch; returns ``(loss, stepped)``.  Full batch: the loss before the step (the step is
    left to the caller, which first checks ``target_loss``); mini-batches: the mean batch loss."""
    lr = adam.opts.lr
    if batch_size is None:
        loss, grads = _forward_backward(adam.params, act, X, y)
        return _finite(loss, epoch, lr, first), grads
    n = X.shape[0]
    order = rng.permutation(n)
    total = 0.0
    for start in range(0, n, batch_size):
        idx = order[start:start + batch_size]
        loss_b, grads = _forward_backward(adam.params, act, X[idx], y[idx])
        total += _finite(loss_b, epoch, lr, first) * idx.size
        adam(grads)
    return total / n, None


def _run_epochs(adam: _Adam, act, X, y, batch_size, rng) -> "tuple[list, str]":
    """The epoch loop with target-loss and patience stopping; returns ``(losses, reason)``."""
    o = adam.opts
    losses: list[float] = []
    best, since_best = math.inf, 0
    first: list = []
    with np.errstate(over="ignore", invalid="ignore"), \
            progress_bar(o.epochs, enabled=o.progress, desc=o.desc, unit="epoch") as bar:
        for epoch in range(o.epochs):
            loss, grads = _epoch(adam, act, X, y, batch_size, rng, epoch, first)
            losses.append(loss)
            if o.target_loss is not None and loss <= o.target_loss:
                return losses, "target_loss"
            if grads is not None:
                adam(grads)
            bar.update(1)
            if epoch % 25 == 0:
                bar.set_postfix(loss=f"{loss:.3g}")
            if loss < best - o.tol:
                best, since_best = loss, 0
            else:
                since_best += 1
                if o.patience is not None and since_best >= o.patience:
                    return losses, "patience"
    return losses, "epochs"


def train(network: SigmaNetwork, X, y, options: "TrainOptions | None" = None,
          **overrides) -> TrainResult:
    """Train ``network`` on (X, y) with Adam on the mean squared error.

    Parameters
    ----------
    network : SigmaNetwork
        Starting point (any depth, any registered activation); it is not modified.
    X : array (N, input_dim)
        Inputs, e.g. the support points of the hard instance.
    y : array (N,)
        Targets (e.g. 0/1 labels).
    options : TrainOptions, optional
        The settings (epochs, lr, batch_size, seed, weight_bound, progress, tol, patience,
        target_loss, betas, eps, dtype, desc; see :class:`TrainOptions` for each).
    **overrides
        Any :class:`TrainOptions` field by name, applied on top of ``options``:
        ``train(net, X, y, epochs=2000, lr=0.03, target_loss=0.2)``.

    Returns
    -------
    TrainResult
        ``.network`` (the weights after the last step) and ``.history`` (see :class:`TrainResult`).

    Raises
    ------
    InvalidNetworkError
        Shape mismatches, non-finite data, bad hyper-parameters, or a diverging run (non-finite
        loss; lower ``lr`` or set ``weight_bound``).
    TypeError
        An override that is not a :class:`TrainOptions` field.
    """
    X, y = _check_data(network, X, y)
    opts = _options(options, overrides)
    work = np.dtype(opts.dtype)
    Xw, yw = X.astype(work, copy=False), y.astype(work, copy=False)
    n = X.shape[0]
    batch_size = None if opts.batch_size is not None and opts.batch_size >= n else opts.batch_size
    act = network.activation
    t0 = time.perf_counter()
    adam = _Adam([p.astype(work) for p in _params_of(network)], opts)
    losses, reason = _run_epochs(adam, act, Xw, yw, batch_size, as_rng(opts.seed))
    params = [p.astype(np.float64) for p in adam.params]
    final_loss, _ = _forward_backward(params, act, X, y, want_grad=False)
    settings = opts.to_dict() | {"batch_size": batch_size, "n_points": n,
                                 "dims": list(network.dims), "activation": act.name}
    history = {
        "loss": losses, "epochs": len(losses), "stopped_early": reason != "epochs",
        "reason": reason, "final_loss": final_loss,
        "best_loss": min(losses + [final_loss]), "seconds": time.perf_counter() - t0,
        "settings": settings,
    }
    return TrainResult(_network_of(params, act), history)


def _options(options, overrides: dict) -> TrainOptions:
    if options is not None and not isinstance(options, TrainOptions):
        raise TypeError(f"options must be a TrainOptions, got {type(options).__name__}; pass "
                        f"settings as keywords, e.g. train(net, X, y, epochs=500, lr=0.01)")
    unknown = sorted(set(overrides) - set(TrainOptions.__dataclass_fields__))
    if unknown:
        raise TypeError(f"train() got unknown option(s) {unknown}; the options are "
                        f"{list(TrainOptions.__dataclass_fields__)}")
    base = options if options is not None else TrainOptions()
    return dataclasses.replace(base, **overrides) if overrides else base
