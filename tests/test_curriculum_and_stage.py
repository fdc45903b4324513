"""E25's AND-stage design: the product-form trainer's frozen first layer (exactly unchanged, the
rest trained), and the and_stage rows against a twin written out with explicit points at n = 4
(MAJ∘AND, then the target with depth 3's first layer frozen)."""

import numpy as np
import pytest

from embeddings import HardInstance
from networks.separation import curriculum as C
from networks.separation.separate import run_cell
from networks.separation.targets import target_table
from networks.sigma import SigmaNetwork
from networks.train_product import train_product


@pytest.mark.parametrize("depth", [2, 3])
def test_freeze_first_keeps_the_first_layer_bit_for_bit_and_trains_the_rest(depth):
    inst = HardInstance(4, seed=0)
    widths = [6] if depth == 2 else [6, 5]
    net = SigmaNetwork.random([inst.dim, *widths, 1], "relu", seed=2, bias_scale=0.5)
    res = train_product(net, inst, targets=target_table("ip", 4), epochs=40, lr=0.02,
                        patience=None, max_seconds=None, freeze_first=True)
    out = res.network
    assert np.array_equal(out.layers[0].weights, net.layers[0].weights)
    assert np.array_equal(out.layers[0].bias, net.layers[0].bias)
    assert not np.array_equal(out.layers[-1].weights, net.layers[-1].weights)
    free = train_product(net, inst, targets=target_table("ip", 4), epochs=40, lr=0.02,
                         patience=None, max_seconds=None).network
    assert not np.array_equal(free.layers[0].weights, net.layers[0].weights)   # the control
    assert res.history["settings"]["freeze_first"]


def _r2_affine_points(net, inst, Y):
    pts, size = inst.support().points, 1 << inst.n
    v = net(pts).ravel()
    y = np.array([Y[k % size, k // size] for k in range(size * size)])   # cube order a + 2^n·b
    return float(np.corrcoef(v, y)[0, 1] ** 2) if v.std() > 0 else 0.0


@pytest.mark.parametrize("depth,target", [(3, "ip"), (3, "random"), (2, "ip")])
def test_and_stage_rows_match_the_twin(depth, target):
    n = 4
    cells = C.curriculum_cells([n], seeds=1, epochs=15, lr=0.01, and_stage=True)
    cell = next(c for c in cells if c["kind"] == "and_stage" and c["target"] == target
                and len(c["widths"]) == depth - 1)
    row = run_cell(cell)
    inst = HardInstance(n, seed=0)
    gen = inst.embedding.generator
    net = SigmaNetwork.random([inst.dim, *cell["widths"], 1], "relu", seed=cell["seed"],
                              bias_scale=0.5)
    kw = dict(epochs=n * cell["epochs"], lr=cell["lr"], patience=100, tol=1e-7,
              target_loss=1e-6, max_seconds=None)
    Ym = target_table("majand", n, seed=0, generator=gen)
    Y = target_table(target, n, seed=0, generator=gen)
    a = train_product(net, inst, targets=Ym, **kw).network
    b = train_product(a, inst, targets=Y, freeze_first=depth == 3, **kw).network
    if depth == 3:
        assert np.array_equal(a.layers[0].weights, b.layers[0].weights)
    st = row["stages"]
    assert [s["labels"] for s in st] == ["majand", target]
    assert [s["first_layer_frozen"] for s in st] == [False, depth == 3]
    assert st[0]["r2_affine_stage"] == pytest.approx(_r2_affine_points(a, inst, Ym), abs=1e-9)
    assert row["r2_affine"] == pytest.approx(_r2_affine_points(b, inst, Y), abs=1e-9)
    assert st[1]["r2_affine_ip"] == pytest.approx(
        _r2_affine_points(b, inst, target_table("ip", n, seed=0, generator=gen)), abs=1e-9)


def test_and_stage_clause_needs_a_gain_random_labels_do_not_show():
    from networks.separation.depth_verdict import verdict

    def line(target, depth, v):
        return {"kind": "and_stage", "target": target, "rule": "r", "n": 6, "widths": [6],
                "depth": depth, "params": 100, "r2_affine_best": v, "r2_affine_spread": 0.0,
                "r2_best": v, "still_improving": False, "rho_best": v}

    rows = [line("ip", 3, 0.7), line("ip", 2, 0.1), line("random", 3, 0.1),
            line("random", 2, 0.1)]
    v = verdict(rows)
    assert v["clauses"]["depth_gain_and_stage"]["status"] == "holds" and v["separation_shown"]
    rows[2]["r2_affine_best"] = 0.68                  # random labels gain as much: no separation
    v = verdict(rows)
    assert v["clauses"]["depth_gain_and_stage"]["status"] == "fails"
    assert not v["separation_shown"] and "AND stage" in v["headline"]
