"""The PyTorch full-batch pass of the depth-2 product-form trainer (networks.product._torch)
against the CPU float32 pass and the float64 reference, on CPU torch at small n.

The device checks run without torch; everything else is skipped when torch is absent.  A
negative control shows the tolerance separates: a network perturbed by 1e-3 gives a gradient
outside it.
"""

import sys

import numpy as np
import pytest

from circuits.utils.errors import InvalidNetworkError, MissingDependencyError
from embeddings import HardInstance
from networks import SigmaNetwork
from networks.product import _torch
from networks.product.support import product_support
from networks.product.train import _gradient
from networks.separation.targets import target_table
from networks.train_product import train_product

TOL = 1e-4          # relative, max-norm: the float32 pass's documented tolerance


def _params(net):
    (W, b), (u, u0) = [(L.weights, L.bias) for L in net.layers]
    return [np.array(W, dtype=np.float64), np.array(b, dtype=np.float64),
            np.array(u[0], dtype=np.float64), np.array(u0, dtype=np.float64).reshape(1)]


def _grads(net, inst, Y, *, precision, torch_pass=None):
    sup = product_support(inst)
    from networks.activations import get_activation
    act = get_activation("relu")
    return _gradient(_params(net), sup, 0, act, Y, 1, precision=precision,
                     torch_pass=torch_pass)


def _rel(a, b):
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))


def test_device_names_are_checked_without_torch(monkeypatch):
    assert _torch.resolve_device(None) == "cpu"
    assert _torch.resolve_device("CPU") == "cpu"
    with pytest.raises(InvalidNetworkError, match="device must be"):
        _torch.resolve_device("gpu")
    monkeypatch.setenv(_torch.ENV_DEVICE, "tpu")
    with pytest.raises(InvalidNetworkError, match="DEPTHSEP_TRAIN_DEVICE"):
        _torch.resolve_device(None)
    monkeypatch.setitem(sys.modules, "torch", None)          # as if torch were not installed
    with pytest.raises(MissingDependencyError, match=r"depthsep\[torch\]"):
        _torch.resolve_device("cpu-torch")


@pytest.mark.parametrize("n, w", [(3, 5), (5, 24), (6, 40)])
@pytest.mark.parametrize("target", ["ip", "majand"])
def test_torch_pass_equals_the_cpu_passes(n, w, target):
    pytest.importorskip("torch")
    inst = HardInstance(n, seed=0)
    Y = target_table(target, n, seed=0, generator=inst.embedding.generator)
    net = SigmaNetwork.random([inst.dim, w, 1], "relu", seed=n + w, bias_scale=0.5)
    tp = _torch.TorchDepth2Pass("cpu-torch")
    tp.tile = 97                            # many small tiles: the tiling is exercised too
    lt, gt = _grads(net, inst, Y, precision="float32", torch_pass=tp)
    l32, g32 = _grads(net, inst, Y, precision="float32")
    l64, g64 = _grads(net, inst, Y, precision="float64")
    assert abs(lt - l64) <= 1e-6 * l64 and abs(l32 - l64) <= 1e-6 * l64
    for a, b, c in zip(gt, g32, g64):
        assert _rel(a, c) <= TOL and _rel(a, b) <= TOL
    # negative control: the tolerance separates a network moved by 1e-3
    moved = SigmaNetwork([type(L)(L.weights + 1e-3, L.bias) for L in net.layers], "relu")
    _, gm = _grads(moved, inst, Y, precision="float64")
    assert max(_rel(a, c) for a, c in zip(gm, g64)) > TOL


def test_training_on_cpu_torch_follows_the_cpu_trainer():
    pytest.importorskip("torch")
    inst = HardInstance(5, seed=0)
    net0 = SigmaNetwork.random([inst.dim, 25, 1], "relu", seed=3, bias_scale=0.5)
    kw = dict(epochs=30, lr=0.02, patience=None)
    cpu = train_product(net0, inst, **kw)
    tor = train_product(net0, inst, device="cpu-torch", **kw)
    assert cpu.history["settings"]["device"] == "cpu (numba)"
    assert tor.history["settings"]["device"].startswith("cpu-torch (torch ")
    assert tor.history["settings"]["precision"] == "float32"
    lc, lt = np.array(cpu.history["loss"]), np.array(tor.history["loss"])
    assert lc.shape == lt.shape and np.max(np.abs(lc - lt) / lc) <= 1e-4
    assert abs(cpu.history["final_loss"] - tor.history["final_loss"]) <= 1e-4 * cpu.history[
        "final_loss"]
    assert lt[-1] < 0.8 * lt[0]                              # it trained


def test_the_environment_variable_sets_the_default_device(monkeypatch):
    pytest.importorskip("torch")
    monkeypatch.setenv(_torch.ENV_DEVICE, "cpu-torch")
    inst = HardInstance(3, seed=0)
    net0 = SigmaNetwork.random([inst.dim, 4, 1], "relu", seed=0)
    res = train_product(net0, inst, epochs=2, patience=None)
    assert res.history["settings"]["device"].startswith("cpu-torch")


def test_what_torch_devices_do_not_train_is_refused():
    pytest.importorskip("torch")
    inst = HardInstance(3, seed=0)
    tanh2 = SigmaNetwork.random([inst.dim, 4, 1], "tanh", seed=0)   # depth 3: test_train_torch3
    with pytest.raises(InvalidNetworkError, match="device='cpu-torch'.*use device='cpu'"):
        train_product(tanh2, inst, epochs=1, device="cpu-torch")
    net2 = SigmaNetwork.random([inst.dim, 4, 1], "relu", seed=0)
    with pytest.raises(InvalidNetworkError, match="batch_size=8"):
        train_product(net2, inst, epochs=1, device="cpu-torch", batch_size=8)
    with pytest.raises(InvalidNetworkError, match="precision='float64'"):
        train_product(net2, inst, epochs=1, device="cpu-torch", precision="float64")


def test_cuda_is_refused_clearly_without_a_gpu():
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("a GPU is visible here")
    with pytest.raises(InvalidNetworkError, match="no CUDA device"):
        _torch.resolve_device("cuda")


def test_e23_rows_record_the_device_that_trained(monkeypatch):
    pytest.importorskip("torch")
    from networks.separation.separate import Cell, run_cell
    cell = Cell(kind="depth2", target="ip", n=3, rule="n", widths=[3], seed=0, epochs=3,
                lr=0.02, base_seed=0)
    monkeypatch.setenv(_torch.ENV_DEVICE, "cpu-torch")
    tor = run_cell(cell)
    monkeypatch.setenv(_torch.ENV_DEVICE, "cpu")
    cpu = run_cell(cell)
    assert tor["device"].startswith("cpu-torch") and cpu["device"] == "cpu (numba)"
    assert abs(tor["r2_affine"] - cpu["r2_affine"]) <= 1e-4


def test_the_e23_command_checks_its_device(tmp_path, capsys):
    from experiments.separate import parse_args
    with pytest.raises(SystemExit) as exc:
        parse_args(["--device", "gpu", "--out", str(tmp_path / "out")])
    assert exc.value.code == 2 and "--device" in capsys.readouterr().err
    assert parse_args(["--out", str(tmp_path / "o2")]).device == "cpu"


@pytest.mark.parametrize("depth", [2, 3])
def test_cpu_torch_passes_pin_threads_and_repeat_to_the_bit(depth, monkeypatch):
    """A cpu-torch pass runs at numba's thread count whatever torch's setting, restores the
    process's setting (and full float32 precision) afterwards, and repeats to the bit; the
    device label names the thread count, and the progress check sees every tile."""
    torch = pytest.importorskip("torch")
    import numba

    from networks.product import _torch3
    monkeypatch.setattr(numba, "get_num_threads", lambda: 1)
    before = torch.get_num_threads()
    other = 2                                   # differs from the pinned 1
    torch.set_num_threads(other)
    try:
        seen = []
        rng = np.random.default_rng(depth)
        A, B = rng.standard_normal((16, 7)), rng.standard_normal((16, 7))
        Y = rng.standard_normal((16, 16))
        if depth == 2:
            tp = _torch.TorchDepth2Pass("cpu-torch")
            args = (A, B, rng.standard_normal(7), 0.3, Y)
        else:
            tp = _torch3.TorchDepth3Pass("cpu-torch")
            args = (A, B, rng.standard_normal((5, 7)), rng.standard_normal(5),
                    rng.standard_normal(5), 0.3, Y)
        assert tp.threads == 1
        tp.tile = 16 * 7 * 4                     # four rows a tile: four tiles
        real = torch.set_num_threads
        calls = []
        monkeypatch.setattr(torch, "set_num_threads", lambda t: (calls.append(t), real(t)))

        def check(fraction):
            seen.append((fraction, torch.get_num_threads()))
        first = tp(*args, check=check)
        again = tp(*args)
        assert calls == [1, other, 1, other]     # pinned for each pass, then restored
        assert torch.get_num_threads() == other
        assert torch.get_float32_matmul_precision() in ("highest", "high", "medium")
        assert all(t == 1 for _, t in seen)
        want = [0.25, 0.5, 0.75, 1.0] if depth == 2 else [0.25, 0.5, 0.75]
        assert [f for f, _ in seen] == want
        for a, b in zip(first, again):
            assert np.array_equal(np.asarray(a), np.asarray(b))
        assert _torch.device_label("cpu-torch").endswith(", 1 thread)")
    finally:
        torch.set_num_threads(before)
