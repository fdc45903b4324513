"""SigmaNetwork and DenseLayer: forward pass against a naive loop, validation, bounds, JSON."""

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import networks
from networks import sigma as sigma_module
from networks.activations import ACTIVATIONS, Activation, get_activation
from circuits.utils.errors import InvalidNetworkError
from networks.sigma import FORMAT, DenseLayer, SigmaNetwork, random_network

from tests import naive_networks as naive

NAMES = sorted(ACTIVATIONS)


def _as_lists(net):
    return [(layer.weights.tolist(), layer.bias.tolist()) for layer in net.layers]


def _ball_points(rng, n, d):
    x = rng.normal(size=(n, d))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return x * rng.uniform(0, 1, size=(n, 1)) ** (1 / d)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dims", [[3, 1], [3, 5, 1], [4, 6, 3, 1], [2, 3, 4, 2, 1]])
def test_forward_matches_naive_loop(name, dims, rng):
    net = SigmaNetwork.random(dims, name, seed=7, bias_scale=0.5)
    X = rng.normal(size=(25, dims[0]))
    scalar = naive.SCALAR[name]
    expect = [naive.forward(_as_lists(net), scalar, x) for x in X.tolist()]
    np.testing.assert_allclose(net(X), expect, rtol=1e-12, atol=1e-12)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(1, 5), min_size=1, max_size=4), st.integers(0, 2**32 - 1),
       st.sampled_from(["relu", "tanh", "heaviside"]))
def test_forward_property(hidden, seed, name):
    dims = [3] + hidden + [1]
    net = random_network(dims, name, seed=seed, bias_scale=1.0)
    X = np.random.default_rng(seed).normal(size=(4, 3))
    expect = [naive.forward(_as_lists(net), naive.SCALAR[name], x) for x in X.tolist()]
    np.testing.assert_allclose(net(X), expect, rtol=1e-12, atol=1e-12)
    assert net.depth == len(dims) - 1 and net.widths == tuple(hidden)
    assert net.n_params == sum((a + 1) * b for a, b in zip(dims[:-1], dims[1:]))


def test_chunked_forward_equals_one_shot(monkeypatch, rng):
    net = SigmaNetwork.random([4, 16, 8, 1], "tanh", seed=1, bias_scale=0.3)
    X = rng.normal(size=(1000, 4))
    whole = net(X)
    monkeypatch.setattr(sigma_module, "_CHUNK_ELEMENTS", 16 * 7)   # 7 rows per chunk
    np.testing.assert_allclose(net(X), whole, rtol=1e-13, atol=1e-15)   # BLAS blocking may differ


def test_preactivations_match_forward(rng):
    net = SigmaNetwork.random([4, 6, 5, 1], "sigmoid", seed=2, bias_scale=0.2)
    X = rng.normal(size=(10, 4))
    zs = net.preactivations(X)
    assert [z.shape for z in zs] == [(10, 6), (10, 5), (10, 1)]
    np.testing.assert_allclose(zs[-1][:, 0], net(X), rtol=1e-14)
    np.testing.assert_allclose(zs[1], net.activation(zs[0]) @ net.layers[1].weights.T
                               + net.layers[1].bias, rtol=1e-14)


def test_properties_and_classify():
    net = SigmaNetwork([DenseLayer([[1.0, -2.0], [0.5, 0.0], [0.0, 3.0]], [0.0, -4.0, 1.0]),
                        DenseLayer([[1.0, 1.0, -1.0]], [0.25])])
    assert net.depth == 2 and net.widths == (3,) and net.dims == (2, 3, 1) and net.input_dim == 2
    assert net.n_params == 6 + 3 + 3 + 1
    assert net.weight_bound == 4.0
    assert net.activation.name == "relu"
    lin = SigmaNetwork([([[1.0, 1.0]], [-0.5])])                  # N(x) = x0 + x1 - 1/2
    assert lin.classify([[0.5, 0.5], [0.5, 0.4], [1.0, 0.0]]).tolist() == [1, 0, 1]  # tie -> 1
    assert lin.classify([[0.25, 0.0]], threshold=-0.5).tolist() == [1]
    assert lin.classify([[0.0, 0.0]]).dtype == np.uint8


def test_immutable_and_copied():
    w = np.array([[1.0, 2.0]])
    layer = DenseLayer(w, [0.0])
    w[0, 0] = 99.0
    assert layer.weights[0, 0] == 1.0
    with pytest.raises(ValueError):
        layer.weights[0, 0] = 5.0
    net = SigmaNetwork([layer])
    with pytest.raises(AttributeError):
        net.layers = ()
    with pytest.raises(AttributeError):
        layer.bias = np.zeros(1)
    assert isinstance(net.layers, tuple)


@pytest.mark.parametrize("weights, bias, match", [
    ([[np.nan, 1.0]], [0.0], "finite"),
    ([[1.0, 1.0]], [np.inf], "finite"),
    ([1.0, 2.0], [0.0], "2-dimensional"),
    ([[1.0, 2.0]], [0.0, 1.0], r"shape \(1,\)"),
    ([["a", "b"]], [0.0], "real numbers"),
    (np.zeros((0, 3)), [], "at least one row"),
])
def test_layer_validation(weights, bias, match):
    with pytest.raises(InvalidNetworkError, match=match):
        DenseLayer(weights, bias)


def test_network_validation():
    with pytest.raises(InvalidNetworkError, match="do not chain"):
        SigmaNetwork([([[1.0, 2.0]], [0.0]), ([[1.0, 2.0]], [0.0])])
    with pytest.raises(InvalidNetworkError, match="one output"):
        SigmaNetwork([([[1.0, 2.0], [3.0, 4.0]], [0.0, 0.0])])
    with pytest.raises(InvalidNetworkError, match="at least one layer"):
        SigmaNetwork([])
    with pytest.raises(InvalidNetworkError, match="choose one of"):
        SigmaNetwork([([[1.0]], [0.0])], activation="swishy")
    with pytest.raises(TypeError):
        SigmaNetwork([3.0])
    with pytest.raises(TypeError):
        SigmaNetwork(DenseLayer([[1.0]], [0.0]))
    net = SigmaNetwork([([[1.0, 2.0]], [0.0])])
    with pytest.raises(InvalidNetworkError, match=r"shape \(n_points, 2\)"):
        net(np.zeros((3, 3)))
    with pytest.raises(InvalidNetworkError, match="reshape"):
        net(np.zeros(2))


def test_preactivation_range_first_layer_is_exact():
    net = SigmaNetwork.random([5, 7, 1], seed=3, bias_scale=1.0)
    (lo, hi), _ = net.preactivation_range()
    W, b = net.layers[0].weights, net.layers[0].bias
    # attained at x = ±w_i/||w_i||
    ends = W / np.linalg.norm(W, axis=1, keepdims=True)
    np.testing.assert_allclose(hi, np.einsum("ij,ij->i", W, ends) + b, rtol=1e-13)
    np.testing.assert_allclose(lo, -np.einsum("ij,ij->i", W, ends) + b, rtol=1e-13)
    expect = max(naive.interval_max_abs(W.tolist(), b.tolist(), 1.0))
    assert net.max_preactivation() == pytest.approx(expect, rel=1e-13)
    assert net.max_preactivation(radius=2.0) == pytest.approx(
        max(naive.interval_max_abs(W.tolist(), b.tolist(), 2.0)), rel=1e-13)


@pytest.mark.parametrize("name", NAMES + ["bump"])
def test_preactivation_range_contains_samples(name, rng):
    act = name
    if name == "bump":
        act = Activation("bump_sigma_test", lambda t: np.exp(-t * t), lambda t: -2 * t * np.exp(-t * t),
                         lipschitz_function=lambda R: math.sqrt(2 / math.e),
                         sup_abs_function=lambda R: 1.0,
                         total_variation_function=lambda R: 2 - 2 * math.exp(-R * R),
                         value_range=(0.0, 1.0), monotone=False)
    net = SigmaNetwork.random([4, 6, 5, 1], act, seed=5, bias_scale=0.5)
    sphere = rng.normal(size=(2000, 4))
    sphere /= np.linalg.norm(sphere, axis=1, keepdims=True)
    X = np.concatenate([_ball_points(rng, 5000, 4), sphere, np.eye(4), -np.eye(4)])
    for (lo, hi), z in zip(net.preactivation_range(), net.preactivations(X)):
        assert (z >= lo - 1e-12).all() and (z <= hi + 1e-12).all()


def test_preactivation_range_bad_radius():
    net = SigmaNetwork.random([2, 3, 1], seed=0)
    with pytest.raises(InvalidNetworkError, match="radius"):
        net.preactivation_range(-1.0)
    with pytest.raises(TypeError):
        net.preactivation_range("one")


def test_json_round_trip_is_exact(tmp_path):
    net = SigmaNetwork.random([6, 9, 4, 1], "softplus", seed=11, bias_scale=0.7)
    data = json.loads(json.dumps(net.to_dict()))
    assert data["format"] == FORMAT and data["version"] == 1 and data["dims"] == [6, 9, 4, 1]
    assert SigmaNetwork.from_dict(data).equals(net)
    path = net.save(tmp_path / "sub" / "net.json")
    back = SigmaNetwork.load(path)
    assert back.equals(net) and back.activation.name == "softplus"
    assert [p.name for p in path.parent.iterdir()] == ["net.json"]     # no temp files left


@pytest.mark.parametrize("mutate, match", [
    (lambda d: d.update(format="other"), "'format' must be"),
    (lambda d: d.update(version=99), "unsupported version"),
    (lambda d: d.pop("layers"), "missing the field 'layers'"),
    (lambda d: d.update(activation="nope"), "choose one of"),
    (lambda d: d["layers"][0]["weights"][0].__setitem__(0, "nan"), "finite|real numbers"),
    (lambda d: d.update(dims=[1, 2, 1]), "disagree"),
    (lambda d: d["layers"][0].pop("bias"), "exactly the fields 'weights' and 'bias'"),
    (lambda d: d.update(layers="x"), "'layers' must be a non-empty list"),
    # issue 14 item 4: what the old loader accepted or let escape as TypeError/RecursionError
    (lambda d: d.update(version=True), "'version' must be an integer"),
    (lambda d: d.update(version=1.0), "'version' must be an integer"),
    (lambda d: d.update(extra=1), "unknown field"),
    (lambda d: d.update(dims=5), "'dims' must be a list of integers"),
    (lambda d: d.update(dims=[3, 4.0, 1]), "'dims' must be a list of integers"),
    (lambda d: d.update(activation=["relu"]), "'activation' must be a name"),
    (lambda d: d["layers"][0].update(extra=[]), "exactly the fields"),
    (lambda d: d["layers"][0]["weights"][0].__setitem__(0, True), "JSON numbers"),
    (lambda d: d["layers"][0].update(weights=[[[1.0] * 3]] * 4), "JSON numbers"),
    (lambda d: d.update(metadata=[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]), "nested"),
])
def test_bad_files(tmp_path, mutate, match):
    net = SigmaNetwork.random([3, 4, 1], seed=0)
    data = net.to_dict()
    mutate(data)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    with pytest.raises(InvalidNetworkError, match=match) as info:
        SigmaNetwork.load(path)
    assert "bad.json" in str(info.value)


def test_unreadable_files(tmp_path):
    (tmp_path / "broken.json").write_text("{not json")
    with pytest.raises(InvalidNetworkError, match="not valid JSON"):
        SigmaNetwork.load(tmp_path / "broken.json")
    (tmp_path / "list.json").write_text("[1, 2]")
    with pytest.raises(InvalidNetworkError, match="JSON object"):
        SigmaNetwork.load(tmp_path / "list.json")
    with pytest.raises(FileNotFoundError):
        SigmaNetwork.load(tmp_path / "missing.json")


def test_random_networks():
    a = SigmaNetwork.random([8, 500, 1], seed=4)
    assert a.equals(random_network([8, 500, 1], seed=4))
    assert not a.equals(SigmaNetwork.random([8, 500, 1], seed=5))
    assert np.std(a.layers[0].weights) == pytest.approx(math.sqrt(2), rel=0.05)      # N(0, 2)
    assert np.std(a.layers[1].weights) == pytest.approx(math.sqrt(2 / 500), rel=0.1)
    assert not a.layers[0].bias.any()
    b = SigmaNetwork.random([8, 500, 1], "tanh", seed=4, scale=0.5, bias_scale=2.0)
    assert np.std(b.layers[0].weights) == pytest.approx(0.5, rel=0.05)
    assert np.std(b.layers[0].bias) == pytest.approx(2.0, rel=0.15)
    assert b.layers[1].bias.tolist() == [0.0]
    for bad in ([3], [3, 2], [3, 0, 1]):
        with pytest.raises(InvalidNetworkError, match="dims"):
            SigmaNetwork.random(bad)
    with pytest.raises(InvalidNetworkError, match="scale"):
        SigmaNetwork.random([2, 2, 1], scale=-1.0)
    with pytest.raises(TypeError):
        SigmaNetwork.random("abc")


def test_equals():
    a = SigmaNetwork([([[1.0]], [0.0]), ([[1.0]], [0.0])])
    b = SigmaNetwork([([[1.0 + 1e-12]], [0.0]), ([[1.0]], [0.0])])
    assert not a.equals(b) and a.equals(b, atol=1e-9)
    assert not a.equals(a.with_layers(a.layers).__class__(a.layers, activation="tanh"))
    assert a.with_layers(a.layers).equals(a)
    assert not a.equals("a network")


def test_public_names():
    for name in ("SigmaNetwork", "DenseLayer", "train", "ACTIVATIONS", "get_activation",
                 "register_activation", "TrainResult"):
        assert name in networks.__all__ and hasattr(networks, name)
    assert get_activation("relu") is networks.ACTIVATIONS["relu"]


def test_load_refuses_huge_and_deep_files_before_parsing(tmp_path):
    big = tmp_path / "big.json"
    with open(big, "wb") as fh:            # sparse: 200 MB on paper, nothing to parse
        fh.truncate(200 << 20)
    with pytest.raises(InvalidNetworkError, match="max_bytes"):
        SigmaNetwork.load(big)
    deep = tmp_path / "deep.json"
    deep.write_text('{"format": "depthsep.SigmaNetwork", "version": 1, "metadata": '
                    + "[" * 200000 + "]" * 200000 + "}")
    with pytest.raises(InvalidNetworkError, match="nested 200001 deep"):
        SigmaNetwork.load(deep)
    many = tmp_path / "many.json"
    many.write_text('{"format": "depthsep.SigmaNetwork", "version": 1, "metadata": ['
                    + "0," * 5000 + "0]}")
    with pytest.raises(InvalidNetworkError, match="JSON values"):
        SigmaNetwork.load(many, max_params=100)
