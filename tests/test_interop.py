"""Interop: truth-table conventions (boofun, Sage, MSB-first) and σ-networks <-> state dicts/torch.

The convention facts checked here are the ones cited in :mod:`circuits.interop`; each is tested on
small functions whose tables are known by hand (XOR, AND, a dictator), so a wrong bit order fails.
torch tests run where torch is installed and are skipped otherwise (torch is never a test extra).
"""

import numpy as np
import pytest

import circuits
from circuits import interop as ci
from circuits.utils.errors import DimensionError, InvalidCircuitError, InvalidNetworkError
from networks import SigmaNetwork, interop as ni


# ----------------------------------------------------------------------------- truth tables
def dictator(N, i):
    """x_i in depthsep's cube order: entry k is bit i of k."""
    return np.array([(k >> i) & 1 for k in range(1 << N)], dtype=np.uint8)


def test_pm1_round_trip_and_convention():
    t = circuits.inner_product_mod2(2)
    s = ci.to_pm1(t)
    assert s.dtype == np.int8
    assert np.array_equal(s, 1 - 2 * t.astype(int))  # 0 -> +1, 1 -> -1 (O'Donnell)
    assert np.array_equal(ci.from_pm1(s), t)
    # the ±1 form is what the Walsh transform sees: sum of F = W_F(0)
    from circuits import analysis as A

    assert int(s.sum()) == int(A.walsh_spectrum(t).walsh[0])


@pytest.mark.parametrize("bad", [[1, 0], [1, -1, 2, 1], [True, False]])
def test_from_pm1_rejects_non_signs(bad):
    with pytest.raises(InvalidCircuitError):
        ci.from_pm1(bad)


def test_from_pm1_rejects_bad_length():
    with pytest.raises(DimensionError):
        ci.from_pm1([1, -1, 1])


@pytest.mark.parametrize("N", [1, 2, 3, 5])
def test_reverse_bit_order_moves_variables(N):
    for i in range(N):
        assert np.array_equal(ci.reverse_bit_order(dictator(N, i)), dictator(N, N - 1 - i))
    rng = np.random.default_rng(N)
    t = rng.integers(0, 2, 1 << N).astype(np.uint8)
    assert np.array_equal(ci.reverse_bit_order(ci.reverse_bit_order(t)), t)


def test_reverse_bit_order_matches_textbook_rows():
    # MSB-first rows 000, 001, ..., 111 with x1 the leftmost column: f = x1 AND NOT x3
    rows = [(a, b, c) for a in (0, 1) for b in (0, 1) for c in (0, 1)]
    msb = np.array([int(a and not c) for a, b, c in rows], dtype=np.uint8)
    ours = ci.reverse_bit_order(msb)
    # in depthsep order variable 0 is x1: evaluate at z = (1, 0, 0) (k = 1) and (1, 0, 1) (k = 5)
    assert ours[1] == 1 and ours[5] == 0 and ours[0] == 0


def test_boofun_order_is_lsb_first():
    # boofun: index i holds f at x_j = (i >> j) & 1, the dictator on x_0 is [0, 1, 0, 1, ...]
    assert ci.to_boofun(dictator(3, 0)).tolist() == [False, True] * 4
    assert ci.to_boofun([0, 0, 0, 1], signs=True).tolist() == [1, 1, 1, -1]
    assert ci.from_boofun([1, -1, -1, 1], signs=True).tolist() == [0, 1, 1, 0]
    assert ci.from_boofun([False, True, True, False]).tolist() == [0, 1, 1, 0]
    with pytest.raises(InvalidCircuitError):
        ci.from_boofun([1, -1, -1, 1])  # ±1 without signs=True is refused


def test_sage_order_and_hex():
    # Sage doc: BooleanFunction(x*y*z + z + y + 1).truth_table(format='int') = (1,1,0,0,0,0,1,0),
    # hex '43'; with variables x = bit 0, y = bit 1, z = bit 2 this is our order.
    z = np.arange(8)
    x0, x1, x2 = z & 1, (z >> 1) & 1, (z >> 2) & 1
    f = ((x0 & x1 & x2) ^ x2 ^ x1 ^ 1).astype(np.uint8)
    assert ci.to_sage(f) == (1, 1, 0, 0, 0, 0, 1, 0)
    assert ci.to_sage_hex(f) == "43"
    assert np.array_equal(ci.from_sage_hex("43"), f)
    assert np.array_equal(ci.from_sage((True, True, False, False, False, False, True, False)), f)
    # Sage doc: BooleanFunction('00ab').truth_table(format='hex') == '00ab' (padding kept)
    assert ci.to_sage_hex(ci.from_sage_hex("00ab")) == "00ab"
    # a bent function of 6 variables from Sage's docs (is_bent() is True): |W| = 8 everywhere
    from circuits import analysis as A

    s = A.walsh_spectrum(ci.from_sage_hex("0113077C165E76A8"))
    assert set(np.abs(s.walsh).tolist()) == {8}


@pytest.mark.parametrize("bad", ["", "abc", "xyz0"])
def test_from_sage_hex_rejects(bad):
    with pytest.raises((DimensionError, InvalidCircuitError)):
        ci.from_sage_hex(bad)


def test_to_sage_hex_needs_two_variables():
    with pytest.raises(DimensionError):
        ci.to_sage_hex([0, 1])


# ------------------------------------------------------------------------------- state dicts
def _net(activation="relu", dims=(4, 5, 3, 1), seed=0):
    return SigmaNetwork.random(list(dims), activation, seed=seed, bias_scale=0.5)


def test_state_dict_round_trip_exact():
    net = _net()
    sd = net.to_state_dict()
    assert list(sd) == ["0.weight", "0.bias", "2.weight", "2.bias", "4.weight", "4.bias"]
    back = SigmaNetwork.from_state_dict(sd, activation="relu")
    assert back.equals(net)


def test_state_dict_natural_order_and_missing_bias():
    rng = np.random.default_rng(1)
    w = {f"layer{i}.weight": rng.normal(size=s) for i, s in [(10, (1, 3)), (2, (3, 2)), (1, (2, 2))]}
    net = SigmaNetwork.from_state_dict(w, activation="tanh")  # 1, 2, 10, not 1, 10, 2
    assert net.dims == (2, 2, 3, 1)
    assert all(np.array_equal(layer.bias, np.zeros(layer.n_out)) for layer in net.layers)


def test_state_dict_transpose_and_explicit_layers():
    net = _net(dims=(3, 4, 1))
    sd = {"k_out": net.layers[1].weights.T, "k_in": net.layers[0].weights.T}
    back = SigmaNetwork.from_state_dict(sd, transpose=True, layers=["k_in", "k_out"])
    X = np.random.default_rng(0).normal(size=(7, 3))
    ref = SigmaNetwork([(net.layers[0].weights, np.zeros(4)), (net.layers[1].weights, np.zeros(1))])
    assert np.allclose(back(X), ref(X), rtol=0, atol=1e-12)


@pytest.mark.parametrize(
    "state, match",
    [
        ({}, "no 2-D"),
        ({"0.weight": np.ones((2, 3)), "0.bias": np.ones(2), "running_mean": np.ones(2)}, "no layer"),
        ({"0.weight": np.ones((2, 3)), "1.weight": np.ones((1, 4))}, "do not chain"),
        ({"0.weight": np.ones((2, 3))}, "one output"),
        ({"0.weight": np.array([[np.nan, 1.0]])}, "finite"),
    ],
)
def test_state_dict_bad_input(state, match):
    with pytest.raises(InvalidNetworkError, match=match):
        SigmaNetwork.from_state_dict(state)


def test_npz_file_round_trip(tmp_path):
    net = _net("sigmoid")
    path = ni.save_state_dict(net, tmp_path / "w.npz")
    assert SigmaNetwork.from_state_dict(ni.load_state_dict(path), activation="sigmoid").equals(net)
    # a plain np.savez file of another tool's names works too
    np.savez(
        tmp_path / "other.npz",
        **{"fc1.weight": np.ones((2, 3)), "fc1.bias": np.zeros(2), "fc2.weight": np.ones((1, 2))},
    )
    assert SigmaNetwork.from_state_dict(ni.load_state_dict(tmp_path / "other.npz")).dims == (3, 2, 1)


def test_weights_file_errors(tmp_path):
    with pytest.raises(FileNotFoundError):
        ni.load_state_dict(tmp_path / "nope.npz")
    (tmp_path / "w.bin").write_bytes(b"x")
    with pytest.raises(InvalidNetworkError, match="npz or .safetensors"):
        ni.load_state_dict(tmp_path / "w.bin")
    (tmp_path / "bad.npz").write_bytes(b"not a zip")
    with pytest.raises(InvalidNetworkError, match="npz"):
        ni.load_state_dict(tmp_path / "bad.npz")


def test_safetensors_round_trip(tmp_path):
    pytest.importorskip("safetensors")
    net = _net("tanh")
    path = ni.save_state_dict(net, tmp_path / "w.safetensors")
    assert SigmaNetwork.from_state_dict(ni.load_state_dict(path), activation="tanh").equals(net)


def test_reduce_network_accepts_imported_weights():
    """A network given as a state dict goes straight into the reduction."""
    from embeddings import HardInstance
    from networks.reduction import reduce_to_circuit

    inst = HardInstance(2, seed=0)
    pts = inst.support().points
    sd = {"0.weight": pts[:3], "0.bias": np.zeros(3), "1.weight": np.ones((1, 3))}
    net = SigmaNetwork.from_state_dict(sd, activation="heaviside")
    res = reduce_to_circuit(net, inst, rho=0.5, margin=0.1)
    assert res.circuit.depth == 2 and res.n_disagree_real == 0


# ------------------------------------------------------------------------------------- torch
def test_missing_torch_is_a_clear_error(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "torch", None)  # import torch -> ImportError
    from circuits.utils.errors import MissingDependencyError

    with pytest.raises(MissingDependencyError, match=r"\[torch\]"):
        _net().to_torch()


ACTS = ["relu", "sigmoid", "tanh", "hardtanh", "softplus", "heaviside", "sign"]


@pytest.mark.parametrize("activation", ACTS)
def test_torch_round_trip_same_function(activation):
    torch = pytest.importorskip("torch")
    net = _net(activation)
    module = net.to_torch()
    X = np.random.default_rng(2).normal(size=(64, 4))
    with torch.no_grad():
        y = module(torch.from_numpy(X)).numpy()[:, 0]
    assert np.allclose(y, net(X), rtol=0, atol=1e-12)
    back = SigmaNetwork.from_torch(module)
    assert back.equals(net) and back.activation.name == activation
    # the state_dict keys are ours: load our dict into a fresh module
    fresh = _net(activation, seed=9).to_torch()
    fresh.load_state_dict({k: torch.from_numpy(v) for k, v in net.to_state_dict().items()})
    assert SigmaNetwork.from_torch(fresh).equals(net)


def test_from_torch_float32_module_and_skips():
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    m = torch.nn.Sequential(
        torch.nn.Flatten(),
        torch.nn.Linear(4, 6),
        torch.nn.ReLU(),
        torch.nn.Dropout(0.1),
        torch.nn.Sequential(torch.nn.Linear(6, 3), torch.nn.ReLU()),
        torch.nn.Linear(3, 1, bias=False),
    ).eval()
    net = SigmaNetwork.from_torch(m)
    assert net.dims == (4, 6, 3, 1) and net.activation.name == "relu"
    X = np.random.default_rng(3).normal(size=(32, 4))
    with torch.no_grad():
        y = m(torch.from_numpy(X).float()).double().numpy()[:, 0]
    assert np.allclose(y, net(X), rtol=1e-5, atol=1e-5)  # float32 module vs float64 copy
    # from_state_dict of the module's own state_dict is the same network
    assert SigmaNetwork.from_state_dict(m.state_dict()).equals(net)


@pytest.mark.parametrize(
    "build, match",
    [
        (lambda nn: nn.Sequential(nn.Linear(2, 3), nn.GELU(), nn.Linear(3, 1)), "not a supported"),
        (lambda nn: nn.Sequential(nn.Linear(2, 3), nn.Linear(3, 1)), "two Linear"),
        (lambda nn: nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.ReLU(), nn.Linear(3, 1)), "two activations"),
        (lambda nn: nn.Sequential(nn.Linear(2, 3), nn.ReLU()), "ends with an activation"),
        (
            lambda nn: nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 3), nn.Tanh(), nn.Linear(3, 1)),
            "mixed",
        ),
        (lambda nn: nn.Sequential(nn.Linear(2, 3), nn.Hardtanh(0, 2), nn.Linear(3, 1)), "Hardtanh"),
        (lambda nn: nn.Sequential(nn.Linear(2, 3), nn.Softplus(beta=2), nn.Linear(3, 1)), "beta"),
        (lambda nn: nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 2)), "one output"),
    ],
)
def test_from_torch_refuses(build, match):
    torch = pytest.importorskip("torch")
    with pytest.raises(InvalidNetworkError, match=match):
        SigmaNetwork.from_torch(build(torch.nn))


def test_to_torch_refuses_custom_activation():
    pytest.importorskip("torch")
    from networks import Activation, register_activation, unregister_activation

    act = Activation(
        "cube_doc_test",
        lambda t: t**3,
        lambda t: 3 * t**2,
        lipschitz_function=lambda R: 3 * R * R,
        sup_abs_function=lambda R: R**3,
        total_variation_function=lambda R: 2 * R**3,
    )
    register_activation(act)
    try:
        with pytest.raises(InvalidNetworkError, match="no torch counterpart"):
            SigmaNetwork.random([2, 3, 1], "cube_doc_test").to_torch()
    finally:
        unregister_activation("cube_doc_test")
