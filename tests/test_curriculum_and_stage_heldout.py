"""E25's AND stage on held-out halves (kind ``and_stage_heldout``): both stages train on the
training quadrant only, depth 3's first layer stays frozen in the second, and every reported
number is the returned net measured point by point on the quadrant it names (naive twin on
explicit points at n = 4); the clause cannot read "separation shown" when random labels gain as
much."""

import numpy as np
import pytest

from embeddings import HardInstance
from networks.separation import curriculum as C
from networks.separation import curriculum_heldout as H
from networks.separation.separate import run_cell
from networks.separation.targets import target_table
from networks.sigma import SigmaNetwork
from networks.train_product import train_product


def _r2_affine_points(net, pts, size, a_idx, b_idx, Y):
    v = [float(net(pts[a + size * b][None, :])[0]) for a in a_idx for b in b_idx]
    y = [float(Y[a, b]) for a in a_idx for b in b_idx]
    v, y = np.array(v), np.array(y)
    return float(np.corrcoef(v, y)[0, 1] ** 2) if v.std() > 0 and y.std() > 0 else 0.0


def test_and_stage_heldout_cells_exist_only_with_both_designs():
    kinds = {c["kind"] for c in C.curriculum_cells([4], and_stage=True, heldout=True)}
    assert "and_stage_heldout" in kinds
    assert "and_stage_heldout" not in {c["kind"] for c in C.curriculum_cells([4], and_stage=True)}
    assert "and_stage_heldout" not in {c["kind"] for c in C.curriculum_cells([4], heldout=True)}


@pytest.mark.parametrize("depth,target", [(3, "ip"), (2, "ip"), (3, "random")])
def test_and_stage_heldout_row_matches_the_twin(depth, target):
    n = 4
    cells = C.curriculum_cells([n], seeds=1, epochs=12, lr=0.01, and_stage=True, heldout=True)
    cell = next(c for c in cells if c["kind"] == "and_stage_heldout" and c["target"] == target
                and len(c["widths"]) == depth - 1)
    row = run_cell(cell)
    inst = HardInstance(n, seed=0)
    gen = inst.embedding.generator
    q = H.heldout_quadrants(inst, seed=0)
    tr = np.ix_(q["a_train"], q["b_train"])
    Ym = target_table("majand", n, seed=0, generator=gen)
    Y = target_table(target, n, seed=0, generator=gen)
    Yip = target_table("ip", n, seed=0, generator=gen)
    net = SigmaNetwork.random([inst.dim, *cell["widths"], 1], "relu", seed=cell["seed"],
                              bias_scale=0.5)
    kw = dict(epochs=n * cell["epochs"], lr=cell["lr"], patience=100, tol=1e-7,
              target_loss=1e-6, max_seconds=None)
    a = train_product(net, q["train"], targets=np.ascontiguousarray(Ym[tr]), **kw).network
    b = train_product(a, q["train"], targets=np.ascontiguousarray(Y[tr]),
                      freeze_first=depth == 3, **kw).network
    if depth == 3:
        assert np.array_equal(a.layers[0].weights, b.layers[0].weights)
    else:
        assert not np.array_equal(a.layers[0].weights, b.layers[0].weights)
    pts, size = inst.support().points, 1 << n
    st = row["stages"]
    assert [s["labels"] for s in st] == ["majand", target]
    assert [s["first_layer_frozen"] for s in st] == [False, depth == 3]
    test_ab = (q["a_test"], q["b_test"])
    train_ab = (q["a_train"], q["b_train"])
    assert st[0]["r2_affine_stage"] == pytest.approx(
        _r2_affine_points(a, pts, size, *train_ab, Ym), abs=1e-9)
    assert st[0]["r2_affine_stage_test"] == pytest.approx(
        _r2_affine_points(a, pts, size, *test_ab, Ym), abs=1e-9)
    assert row["r2_affine"] == pytest.approx(_r2_affine_points(b, pts, size, *test_ab, Y),
                                             abs=1e-9)
    assert row["train_r2_affine"] == pytest.approx(
        _r2_affine_points(b, pts, size, *train_ab, Y), abs=1e-9)
    assert st[1]["r2_affine_ip_test"] == pytest.approx(
        _r2_affine_points(b, pts, size, *test_ab, Yip), abs=1e-9)
    assert row["heldout"] and row["kind"] == "and_stage_heldout"


def test_and_stage_heldout_clause_needs_a_gain_random_labels_do_not_show():
    from networks.separation.depth_verdict import verdict

    def line(target, depth, v):
        return {"kind": "and_stage_heldout", "target": target, "rule": "r", "n": 6,
                "widths": [6], "depth": depth, "params": 100, "r2_affine_best": v,
                "r2_affine_spread": 0.0, "r2_best": v, "still_improving": False,
                "rho_best": v}

    rows = [line("ip", 3, 0.6), line("ip", 2, 0.05), line("random", 3, 0.02),
            line("random", 2, 0.02)]
    v = verdict(rows)
    assert v["clauses"]["depth_gain_and_stage_heldout"]["status"] == "holds"
    assert v["separation_shown"]
    rows[2]["r2_affine_best"] = 0.6                  # random labels gain as much: no separation
    v = verdict(rows)
    assert v["clauses"]["depth_gain_and_stage_heldout"]["status"] == "fails"
    assert not v["separation_shown"] and "separation shown" not in v["headline"]
    rows[2]["r2_affine_best"] = 0.02
    rows[1]["still_improving"] = True               # depth 2 not converged: undecided
    v = verdict(rows)
    assert v["clauses"]["depth_gain_and_stage_heldout"]["status"] == "undecided"
    assert not v["separation_shown"]


def test_kinds_keeps_only_the_named_cells_and_the_prediction_names_only_their_designs():
    cells = C.curriculum_cells([4], seeds=2, and_stage=True, heldout=True,
                               kinds=("and_stage", "and_stage_heldout"))
    assert {c["kind"] for c in cells} == {"and_stage", "and_stage_heldout"}
    assert len(cells) == 2 * 2 * 2 * 2           # kinds x targets x nets x seeds
    full = C.curriculum_cells([4], seeds=2, and_stage=True, heldout=True)
    assert [c for c in full if c["kind"] in ("and_stage", "and_stage_heldout")] == cells
    p = C.stated_prediction({c["kind"] for c in cells})
    assert C.AND_STAGE_PREDICTION in p and C.AND_STAGE_HELDOUT_PREDICTION in p
    assert C.CURRICULUM_PREDICTION not in p
    assert C.CURRICULUM_PREDICTION in C.stated_prediction({"curriculum", "cold"})


@pytest.mark.parametrize("kinds,match", [(("nope",), "kinds must name"),
                                         (("and_stage_heldout",), "not in this table")])
def test_kinds_errors_name_the_argument(kinds, match):
    from circuits.utils.errors import InvalidArgumentError

    with pytest.raises(InvalidArgumentError, match=match):
        C.curriculum_cells([4], and_stage=True, kinds=kinds)


def test_cli_kinds_needs_the_flags_of_its_design(capsys):
    from experiments import curriculum as E

    with pytest.raises(SystemExit):
        E.parse_args(["--n", "4", "--kinds", "and_stage_heldout", "--and-stage"])
    assert "--kinds and_stage_heldout needs --heldout --and-stage" in capsys.readouterr().err
