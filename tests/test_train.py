"""Training: exact gradients (finite differences), Adam behaviour, early stopping, clipping, errors."""

import json

import numpy as np
import pytest

from circuits.utils.errors import InvalidArgumentError
from circuits.utils.files import write_json_atomic
from networks.activations import ACTIVATIONS, get_activation
from circuits.utils.errors import InvalidNetworkError
from networks.sigma import SigmaNetwork
from networks.train import TrainResult, loss_and_gradient, mse, train

from tests import naive_networks as naive

SMOOTH = [name for name in sorted(ACTIVATIONS) if not get_activation(name).jumps]
STEPS = [name for name in sorted(ACTIVATIONS) if get_activation(name).jumps]


def _xor():
    X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]) / 2
    return X, np.array([0.0, 1.0, 1.0, 0.0])


def _params(net):
    return [a for layer in net.layers for a in (np.array(layer.weights), np.array(layer.bias))]


def _loss_of(net, X, y):
    def loss(params):
        layers = [(params[i], params[i + 1]) for i in range(0, len(params), 2)]
        return naive.mse([(w.tolist(), b.tolist()) for w, b in layers],
                         naive.SCALAR[net.activation.name], X.tolist(), y.tolist())
    return loss


@pytest.mark.parametrize("name", SMOOTH)
@pytest.mark.parametrize("dims", [[3, 1], [3, 4, 1], [3, 4, 3, 1], [2, 3, 2, 3, 1]])
def test_gradient_matches_finite_differences(name, dims, rng):
    net = SigmaNetwork.random(dims, name, seed=3, bias_scale=0.4)
    X = rng.normal(size=(12, dims[0]))
    y = rng.normal(size=12)
    loss, grads = loss_and_gradient(net, X, y)
    loss_fn = _loss_of(net, X, y)
    assert loss == pytest.approx(loss_fn(_params(net)), rel=1e-12)
    numeric = naive.numeric_gradient(loss_fn, _params(net))
    exact = [a for pair in grads for a in pair]
    assert [a.shape for a in exact] == [a.shape for a in _params(net)]
    for a, b in zip(exact, numeric):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", STEPS)
def test_step_activations_only_train_the_output_layer(name, rng):
    net = SigmaNetwork.random([3, 5, 4, 1], name, seed=1, bias_scale=0.5)
    X = rng.normal(size=(20, 3))
    loss, grads = loss_and_gradient(net, X, rng.normal(size=20))
    for dw, db in grads[:-1]:
        assert not dw.any() and not db.any()
    assert grads[-1][0].any()


def test_adam_learns_xor_depth2_and_depth3():
    X, y = _xor()
    for dims in ([2, 16, 1], [2, 8, 8, 1]):
        net = SigmaNetwork.random(dims, seed=0, bias_scale=0.5)
        res = train(net, X, y, epochs=3000, lr=0.01, tol=0.0, patience=None)
        assert res.history["final_loss"] < 1e-3
        assert res.network.classify(X).tolist() == [0, 1, 1, 0]
        assert res.network.dims == tuple(dims) and res.network.activation.name == "relu"


def test_history_and_determinism(rng):
    X = rng.normal(size=(64, 5))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = (X[:, 0] * X[:, 1] > 0).astype(float)
    net = SigmaNetwork.random([5, 16, 1], "tanh", seed=2)
    before = net.to_dict()
    a = train(net, X, y, epochs=40, lr=0.01, patience=None)
    b = train(net, X, y, epochs=40, lr=0.01, patience=None)
    assert net.to_dict() == before                                # input untouched
    assert a.network.equals(b.network)                            # full batch is deterministic
    h = a.history
    assert h["epochs"] == len(h["loss"]) == 40 and not h["stopped_early"] and h["reason"] == "epochs"
    assert h["loss"][0] == pytest.approx(mse(net, X, y), rel=1e-12)
    assert h["final_loss"] == pytest.approx(mse(a.network, X, y), rel=1e-12)
    assert h["loss"][-1] < h["loss"][0] and h["seconds"] >= 0
    assert h["settings"]["lr"] == 0.01 and h["settings"]["dims"] == [5, 16, 1]
    # mini-batches: seeded, reproducible, seed-dependent
    c = train(net, X, y, epochs=10, lr=0.01, batch_size=16, seed=5, patience=None)
    d = train(net, X, y, epochs=10, lr=0.01, batch_size=16, seed=5, patience=None)
    e = train(net, X, y, epochs=10, lr=0.01, batch_size=16, seed=6, patience=None)
    assert c.network.equals(d.network) and not c.network.equals(e.network)
    assert c.history["settings"]["batch_size"] == 16
    assert c.history["loss"][-1] < c.history["loss"][0]


def test_minibatch_equal_to_n_is_full_batch(rng):
    X = rng.normal(size=(10, 3))
    y = rng.normal(size=10)
    net = SigmaNetwork.random([3, 4, 1], seed=0)
    a = train(net, X, y, epochs=5, batch_size=10, patience=None)
    b = train(net, X, y, epochs=5, patience=None)
    assert a.network.equals(b.network)


def test_single_sample_minibatches_take_n_steps(rng):
    X = rng.normal(size=(6, 2))
    y = rng.normal(size=6)
    net = SigmaNetwork([([[1.0, 0.0]], [0.0])])                   # linear model
    res = train(net, X, y, epochs=1, lr=0.1, batch_size=1, patience=None)
    # Adam's first step moves every parameter with a non-zero gradient by lr; 6 steps <= 0.6
    moved = np.abs(res.network.layers[0].weights - net.layers[0].weights).max()
    assert 0.1 - 1e-9 <= moved <= 0.6 + 1e-9


def test_weight_clipping(rng):
    X = rng.normal(size=(50, 3))
    y = 10 * rng.normal(size=50)
    net = SigmaNetwork.random([3, 8, 1], seed=0, scale=3.0, bias_scale=2.0)
    assert net.weight_bound > 0.5
    res = train(net, X, y, epochs=50, lr=0.05, weight_bound=0.5, patience=None)
    assert res.network.weight_bound <= 0.5
    assert res.history["settings"]["weight_bound"] == 0.5


def test_early_stopping_and_target_loss():
    X, y = _xor()
    net = SigmaNetwork.random([2, 16, 1], seed=0, bias_scale=0.5)
    res = train(net, X, y, epochs=5000, lr=1e-9, tol=1e-3, patience=7)
    assert res.history["stopped_early"] and res.history["reason"] == "patience"
    assert res.history["epochs"] == 8                              # best at epoch 0, then 7 stale
    res = train(net, X, y, epochs=5000, lr=0.01, target_loss=0.05, patience=None)
    assert res.history["reason"] == "target_loss" and res.history["loss"][-1] <= 0.05
    assert res.history["final_loss"] == res.history["loss"][-1]   # no step after reaching target
    assert all(v > 0.05 for v in res.history["loss"][:-1])


def test_float32_mode_tracks_float64(rng):
    X = rng.normal(size=(100, 4))
    y = np.sin(X[:, 0])
    net = SigmaNetwork.random([4, 32, 1], seed=0)
    a = train(net, X, y, epochs=50, lr=0.01, patience=None)
    b = train(net, X, y, epochs=50, lr=0.01, patience=None, dtype="float32")
    assert b.network.layers[0].weights.dtype == np.float64
    assert b.history["settings"]["dtype"] == "float32"
    assert b.history["final_loss"] == pytest.approx(a.history["final_loss"], rel=1e-3)


def test_progress_bar_and_json(tmp_path):
    X, y = _xor()
    res = train(SigmaNetwork.random([2, 4, 1], seed=0), X, y, epochs=3, progress=True)
    assert isinstance(res, TrainResult)
    path = write_json_atomic(tmp_path / "run.json", res)
    data = json.loads(path.read_text())
    assert data["history"]["epochs"] == 3
    assert SigmaNetwork.from_dict(data["network"]).equals(res.network)


def test_zero_epochs_returns_same_weights():
    X, y = _xor()
    net = SigmaNetwork.random([2, 4, 1], seed=0)
    res = train(net, X, y, epochs=0)
    assert res.network.equals(net) and res.history["loss"] == []


def test_errors(rng):
    X, y = _xor()
    net = SigmaNetwork.random([2, 4, 1], seed=0)
    with pytest.raises(InvalidNetworkError, match=r"shape \(n_points, 2\)"):
        train(net, np.zeros((4, 3)), y)
    with pytest.raises(InvalidNetworkError, match=r"y must have shape \(4,\)"):
        train(net, X, y[:3])
    with pytest.raises(InvalidNetworkError, match="NaN"):
        train(net, np.where(X == 0, np.nan, X), y)
    with pytest.raises(InvalidNetworkError, match="NaN"):
        train(net, X, np.full(4, np.inf))
    with pytest.raises(InvalidNetworkError, match="no rows"):
        train(net, np.zeros((0, 2)), np.zeros(0))
    with pytest.raises(InvalidArgumentError, match="lr must be > 0"):
        train(net, X, y, lr=0.0)
    with pytest.raises(InvalidArgumentError, match="epochs must be >= 0"):
        train(net, X, y, epochs=-1)
    with pytest.raises(TypeError, match="epochs must be an int"):
        train(net, X, y, epochs=2.5)
    with pytest.raises(InvalidArgumentError, match="batch_size"):
        train(net, X, y, batch_size=0)
    with pytest.raises(InvalidArgumentError, match="weight_bound"):
        train(net, X, y, weight_bound=-1.0)
    with pytest.raises(InvalidNetworkError, match="betas"):
        train(net, X, y, betas=(1.0, 0.5))
    with pytest.raises(InvalidNetworkError, match="dtype"):
        train(net, X, y, dtype="int64")
    with pytest.raises(TypeError, match="SigmaNetwork"):
        train("net", X, y)
    with pytest.raises(InvalidNetworkError, match="diverged"):
        train(SigmaNetwork.random([2, 4, 1], seed=0), X, 1e200 * np.ones(4), lr=1e200, epochs=50)


def test_options_object_and_keywords_are_the_same_run():
    from networks import TrainOptions
    X, y = _xor()
    net = SigmaNetwork.random([2, 4, 1], seed=0)
    opts = TrainOptions(epochs=30, lr=0.02, batch_size=2, seed=4, patience=None)
    a = train(net, X, y, opts)
    b = train(net, X, y, epochs=30, lr=0.02, batch_size=2, seed=4, patience=None)
    c = train(net, X, y, opts, lr=0.05)                      # keywords override the object
    assert a.history["loss"] == b.history["loss"] != c.history["loss"]
    assert c.history["settings"]["lr"] == 0.05 and opts.lr == 0.02
    with pytest.raises(TypeError, match="unknown option"):
        train(net, X, y, learning_rate=0.1)
    with pytest.raises(TypeError, match="TrainOptions"):
        train(net, X, y, {"epochs": 3})
    with pytest.raises(InvalidArgumentError, match="lr must be > 0"):
        TrainOptions(lr=0.0)
