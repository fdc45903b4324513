"""The PyTorch full-batch pass of the depth-3 product-form trainer (networks.product._torch3)
against the float64 reference pass and the fused float32 numba pass, on CPU torch at small n;
the trainer on ``device="cpu-torch"`` against the numba trainer; the E23 rows' device field.

Everything but the record's device summary is skipped when torch is absent.  A negative control shows the tolerance separates: a
network moved by 1e-3 gives gradients outside it.
"""

import textwrap

import numpy as np
import pytest

from circuits.utils.errors import InvalidNetworkError
from embeddings import HardInstance
from networks import SigmaNetwork
from networks.product.depth3 import depth3_parts, depth3_pass
from networks.product._pass3 import F32_GRAD_RTOL, depth3_pass32
from networks.product.support import product_support
from networks.separation.targets import target_table
from networks.train_product import train_product

from networks.product._torch3 import tile_shape


def TorchDepth3Pass(device):
    """The pass under test (skips the test without torch)."""
    pytest.importorskip("torch")
    from networks.product._torch3 import TorchDepth3Pass as Pass

    return Pass(device)


@pytest.fixture
def torch():
    return pytest.importorskip("torch")

TOL = F32_GRAD_RTOL         # 1e-4 relative, max-norm: the float32 pass's stated tolerance
#: Loss curves of the torch and numba trainers: the two float32 passes differ by rounding only
#: (about 1e-7 relative per gradient), which 30 Adam steps at this lr do not amplify past this.
CURVE_TOL = 1e-4


def _problem(n, w1, w2, target="ip", seed=0):
    inst = HardInstance(n, seed=0)
    Y = target_table(target, n, seed=0, generator=inst.embedding.generator)
    net = SigmaNetwork.random([inst.dim, w1, w2, 1], "relu", seed=seed, bias_scale=0.5)
    return inst, Y, net


def _args(inst, net):
    sup = product_support(inst)
    p = depth3_parts(net, dim=sup.dim)
    A = sup.XA @ p.W1[:, :sup.m].T
    Bc = sup.XB @ p.W1[:, sup.m:].T + p.b1
    return p, (A, Bc, p.W2, p.b2, p.v, p.v0)


def _margin(args):
    """min |z| over every pair and neuron of both layers, float64.  A pre-activation within
    float32 rounding of 0 (about 1e-7 here) may take the other side of the ReLU in a float32 pass,
    moving a gradient by one pair's whole term: the stated tolerance assumes none (rare: about
    1e-7 per pair-neuron), so each test asserts a margin first rather than trusting its seed."""
    A, Bc, W2, b2, _, _ = args
    Z1 = A[:, None, :] + Bc[None, :, :]
    Z2 = np.maximum(Z1, 0) @ W2.T + b2
    return float(min(np.abs(Z1).min(), np.abs(Z2).min()))


def _rel(a, b):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))


@pytest.mark.parametrize("n, w1, w2", [(3, 3, 5), (5, 13, 7), (6, 31, 9)])
@pytest.mark.parametrize("target", ["ip", "majand"])
def test_torch3_pass_equals_the_cpu_passes(n, w1, w2, target):
    inst, Y, net = _problem(n, w1, w2, target, seed=n + w1)
    p, args = _args(inst, net)
    assert _margin(args) > 1e-6
    tp = TorchDepth3Pass("cpu-torch")
    tp.tile = 3 * (2 ** n) * max(w1, w2)             # three rows a tile: the tiling is exercised
    rt = tp(*args, Y)
    r64 = depth3_pass(*args, p.activation, Y)
    r32 = depth3_pass32(*args, Y)
    assert len(rt) == len(r64) == 7
    for a, b, c in zip(rt, r32, r64):
        assert np.shape(a) == np.shape(c)
        assert _rel(a, c) <= TOL and _rel(a, b) <= TOL
    assert abs(rt[0] - r64[0]) <= 1e-6 * r64[0]      # the loss: float64 sums of float32 outputs
    # negative control: the tolerance separates a network moved by 1e-3
    moved = SigmaNetwork([type(L)(L.weights + 1e-3, L.bias) for L in net.layers], "relu")
    pm, args_m = _args(inst, moved)
    rm = depth3_pass(*args_m, pm.activation, Y)
    assert max(_rel(a, c) for a, c in zip(rm[1:], r64[1:])) > TOL


def test_tiles_of_rows_and_of_columns_give_the_same_pass():
    n, w1, w2 = 5, 11, 13                            # w2 > w1: the tile is sized by w2
    inst, Y, net = _problem(n, w1, w2, "majand", seed=5)
    _, args = _args(inst, net)
    assert _margin(args) > 1e-6
    whole = TorchDepth3Pass("cpu-torch")
    whole.tile = 1 << 30
    assert tile_shape(32, 32, w2, whole.tile) == (32, 32)
    ref = whole(*args, Y)
    for tile in (5 * 32 * w2, 32 * w2, 7 * w2, 1):   # rows; one row; columns; one pair
        tp = TorchDepth3Pass("cpu-torch")
        tp.tile = tile
        rows, cols = tile_shape(32, 32, w2, tile)
        assert rows * cols * w2 <= max(tile, w2)     # the stated memory bound
        fractions = []
        got = tp(*args, Y, check=fractions.append)
        assert fractions == sorted(fractions) and all(0 < f < 1 for f in fractions)
        assert len(fractions) == -(-32 // rows) - 1  # between tiles of rows
        # only the float32 rounding changes: BLAS picks its kernel (and the order of a
        # product's float32 sums) by shape, and the float64 sums are grouped by tile
        assert abs(got[0] - ref[0]) <= 1e-8 * ref[0]
        for a, b in zip(got[1:], ref[1:]):
            assert _rel(a, b) <= 1e-6
    # a fixed tile (a fixed device kind, n and widths) repeats bit for bit
    first, again = TorchDepth3Pass("cpu-torch"), TorchDepth3Pass("cpu-torch")
    first.tile = again.tile = 7 * w2
    assert all(np.array_equal(a, b) for a, b in zip(first(*args, Y), again(*args, Y)))


def test_training_on_cpu_torch_follows_the_numba_trainer(torch):
    inst, Y, net0 = _problem(5, 15, 7, "ip", seed=3)
    kw = dict(epochs=30, lr=0.02, patience=None)
    cpu = train_product(net0, inst, **kw)
    tor = train_product(net0, inst, device="cpu-torch", **kw)
    assert cpu.history["settings"]["device"] == "cpu (numba)"
    assert tor.history["settings"]["device"].startswith("cpu-torch (torch ")
    assert tor.history["settings"]["precision"] == "float32"
    lc, lt = np.array(cpu.history["loss"]), np.array(tor.history["loss"])
    assert lc.shape == lt.shape == (30,)
    assert np.max(np.abs(lc - lt) / lc) <= CURVE_TOL
    fc, ft = cpu.history["final_loss"], tor.history["final_loss"]
    assert abs(fc - ft) <= CURVE_TOL * fc
    assert lt[-1] < 0.8 * lt[0]                      # it trained
    # final_loss is the float64 loss of the returned network (host, forward only)
    p, args = _args(inst, tor.network)
    assert ft == depth3_pass(*args, p.activation, Y, grad=False)


def test_freeze_first_on_cpu_torch(torch):
    inst, Y, net0 = _problem(4, 9, 5, "ip", seed=1)
    kw = dict(epochs=15, lr=0.02, patience=None, freeze_first=True)
    cpu = train_product(net0, inst, **kw)
    tor = train_product(net0, inst, device="cpu-torch", **kw)
    first0 = net0.layers[0]
    for res in (cpu, tor):
        assert np.array_equal(res.network.layers[0].weights, first0.weights)
        assert np.array_equal(res.network.layers[0].bias, first0.bias)
        assert not np.array_equal(res.network.layers[1].weights, net0.layers[1].weights)
    lc, lt = np.array(cpu.history["loss"]), np.array(tor.history["loss"])
    assert np.max(np.abs(lc - lt) / lc) <= CURVE_TOL


def test_what_torch_does_not_train_at_depth_3_is_refused(torch):
    inst = HardInstance(3, seed=0)
    net3 = SigmaNetwork.random([inst.dim, 4, 3, 1], "relu", seed=0)
    with pytest.raises(InvalidNetworkError, match=r"batch_size=8.*use device='cpu'"):
        train_product(net3, inst, epochs=1, device="cpu-torch", batch_size=8)
    with pytest.raises(InvalidNetworkError, match="precision='float64'"):
        train_product(net3, inst, epochs=1, device="cpu-torch", precision="float64")
    tanh3 = SigmaNetwork.random([inst.dim, 4, 3, 1], "tanh", seed=0)
    with pytest.raises(InvalidNetworkError, match="depth 3, tanh"):
        train_product(tanh3, inst, epochs=1, device="cpu-torch")
    with pytest.raises(InvalidNetworkError, match="device must be"):
        train_product(net3, inst, epochs=1, device="gpu")
    wrong = HardInstance(4, seed=0)                  # the net reads 2m = 6 inputs, not 8
    with pytest.raises(Exception, match="input dimension"):
        train_product(net3, wrong, epochs=1, device="cpu-torch")


def test_e23_depth3_rows_record_the_device_that_trained(torch, monkeypatch):
    from networks.product import _torch
    from networks.separation.separate import Cell, run_cell

    cell = Cell(kind="depth3", target="ip", n=3, rule="n,n", widths=[3, 3], seed=0, epochs=3,
                lr=0.02, base_seed=0)
    monkeypatch.setenv(_torch.ENV_DEVICE, "cpu-torch")
    tor = run_cell(cell)
    monkeypatch.setenv(_torch.ENV_DEVICE, "cpu")
    cpu = run_cell(cell)
    assert tor["depth"] == cpu["depth"] == 3
    assert tor["device"].startswith("cpu-torch") and cpu["device"] == "cpu (numba)"
    assert abs(tor["r2_affine"] - cpu["r2_affine"]) <= 1e-4


def test_the_record_says_which_device_trained_which_rows():
    from experiments._devices import trained_on, trained_on_lines

    rows = [dict(kind="depth2", trained=True, device="cpu (numba)"),
            dict(kind="depth2", trained=True, device="cpu-torch (torch 9)"),
            dict(kind="depth3", trained=True, device="cpu-torch (torch 9)"),
            dict(kind="depth3", trained=True),                       # an older resumed row
            dict(kind="exact3", trained=False), dict(kind="floor", trained=False)]
    got = trained_on(rows)
    assert got == {"depth2": {"cpu (numba)": 1, "cpu-torch (torch 9)": 1},
                   "depth3": {"cpu-torch (torch 9)": 1, "unrecorded": 1}}
    line = ("trained on: depth2 cells: cpu (numba) 1, cpu-torch (torch 9) 1; depth3 cells: "
            "cpu-torch (torch 9) 1, unrecorded 1")
    assert trained_on_lines({"rows": rows}) == [line]
    assert trained_on_lines({"trained_on": got}, width=40) == textwrap.wrap(line, 40)
    assert trained_on_lines({"rows": rows[4:]}) == []
    # only the default device (and older rows that name none): no line; the record still counts
    assert trained_on_lines({"rows": [rows[0], rows[3]]}) == []
    assert trained_on({"rows": [rows[0], rows[3]]}["rows"]) == {
        "depth2": {"cpu (numba)": 1}, "depth3": {"unrecorded": 1}}


def test_the_e23_command_trains_depth3_on_cpu_torch(torch, tmp_path):
    import json

    from experiments import separate as E

    rc = E.main(["--n", "3", "--seeds", "1", "--epochs", "5", "--heldout-n", "none",
                 "--device", "cpu-torch", "--out", str(tmp_path), "--no-progress"])
    assert rc == 0
    rec = json.loads((tmp_path / "separate.json").read_text())
    trained = [r for r in rec["rows"] if r["trained"]]
    assert {r["kind"] for r in trained} == {"depth2", "depth3"}
    assert all(r["device"].startswith("cpu-torch (torch ") for r in trained)
    label = trained[0]["device"]
    assert rec["trained_on"] == {k: {label: sum(r["kind"] == k for r in trained)}
                                 for k in ("depth2", "depth3")}
    assert (tmp_path / "separate.png").stat().st_size > 0
