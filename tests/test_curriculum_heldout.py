"""E25 on held-out halves (networks.separation.curriculum_heldout): the quadrants partition the
pairs, the held-out metrics match a naive twin on explicit points at n <= 5, the test quadrant
never reaches training, and the held-out clause cannot read "separation shown" when random labels
move the same way.  Also the stall rule of the curriculum stages."""

import numpy as np
import pytest

from embeddings import HardInstance
from networks.separation import curriculum as C
from networks.separation import curriculum_heldout as H
from networks.separation.separate import run_cell


def _naive_r2_affine(v, y):
    v, y = np.asarray(v, float), np.asarray(y, float)
    if v.std() == 0 or y.std() == 0:
        return 0.0
    return float(np.corrcoef(v, y)[0, 1] ** 2)


@pytest.mark.parametrize("n", [3, 4, 5])
def test_quadrants_split_each_party_in_disjoint_halves_and_keep_the_points(n):
    inst = HardInstance(n, seed=0)
    q = H.heldout_quadrants(inst, seed=1)
    size = 1 << n
    for side in "ab":
        tr, te = q[f"{side}_train"], q[f"{side}_test"]
        assert len(tr) == len(te) == size // 2
        assert sorted(tr.tolist() + te.tolist()) == list(range(size))
    pts = inst.support().points                      # cube order: index a + 2^n·b
    m = inst.m
    for name, a, b in (("train", q["a_train"], q["b_train"]), ("test", q["a_test"], q["b_test"])):
        sup = q[name]
        assert sup.size == size // 2
        for i, aa in enumerate(a[:3]):
            for k, bb in enumerate(b[:3]):
                x = pts[aa + size * bb]
                assert np.array_equal(sup.XA[i], x[:m]) and np.array_equal(sup.XB[k], x[m:])
    # seeded: the same seed gives the same split, another seed another
    q2 = H.heldout_quadrants(inst, seed=1)
    assert np.array_equal(q2["a_train"], q["a_train"])
    assert not np.array_equal(H.heldout_quadrants(inst, seed=2)["a_train"], q["a_train"])


@pytest.mark.parametrize("depth", [2, 3])
def test_heldout_row_matches_the_naive_twin_on_explicit_points(depth):
    """The row's held-out best-affine R² and MSE are those of the returned net evaluated point by
    point on A_te × B_te (naive loops), and its training R² that of A_tr × B_tr."""
    from networks.separation import curriculum_heldout
    from networks.separation.targets import target_table

    n = 4
    cells = C.curriculum_cells([n], seeds=1, epochs=20, lr=0.01, heldout=True)
    cell = next(c for c in cells if c["kind"] == "curriculum_heldout" and c["target"] == "ip"
                and len(c["widths"]) == depth - 1)
    nets = []
    orig = curriculum_heldout.quadrant_metrics

    def spy(net, sup, Y):
        nets.append(net)
        return orig(net, sup, Y)

    curriculum_heldout.quadrant_metrics = spy
    try:
        row = run_cell(cell)
    finally:
        curriculum_heldout.quadrant_metrics = orig
    net = nets[-1]                                   # the final net, measured last
    inst = HardInstance(n, seed=0)
    q = H.heldout_quadrants(inst, seed=0)
    Y = target_table("ip", n, seed=0, generator=inst.embedding.generator)
    pts, size = inst.support().points, 1 << n
    for part, a_idx, b_idx, r2_field in (("test", q["a_test"], q["b_test"], "r2_affine"),
                                         ("train", q["a_train"], q["b_train"],
                                          "train_r2_affine")):
        v, y = [], []
        for a in a_idx:
            for b in b_idx:
                v.append(float(net(pts[a + size * b][None, :])[0]))
                y.append(Y[a, b])
        assert row[r2_field] == pytest.approx(_naive_r2_affine(v, y), abs=1e-9)
        if part == "test":
            assert row["mse"] == pytest.approx(np.mean((np.array(v) - y) ** 2), abs=1e-12)
    assert [s["j"] for s in row["stages"]] == list(range(1, n + 1))
    assert row["heldout"] and row["depth"] == depth


@pytest.mark.parametrize("kind,depth", [("cold_heldout", 2), ("and_stage_heldout", 3)])
def test_the_heldout_quadrant_never_reaches_training(monkeypatch, kind, depth):
    """Flipping every label of the held-out quadrant (MAJ∘AND's too, for the AND stage) leaves
    the trained net (its training R²) unchanged and changes the held-out measurement: the test
    pairs are not trained on."""
    from networks.separation import curriculum_heldout, targets

    n = 4
    cell = next(c for c in C.curriculum_cells([n], seeds=1, epochs=15, lr=0.01, heldout=True,
                                              and_stage=True)
                if c["kind"] == kind and len(c["widths"]) == depth - 1)
    base = run_cell(cell)
    q = H.heldout_quadrants(HardInstance(n, seed=0), seed=0)
    real = targets.target_table

    def flipped(name, n_, **kw):
        Y = real(name, n_, **kw).copy()
        Y[np.ix_(q["a_test"], q["b_test"])] = 1.0 - Y[np.ix_(q["a_test"], q["b_test"])]
        return Y

    monkeypatch.setattr(targets, "target_table", flipped)
    other = run_cell(cell)
    assert other["train_r2_affine"] == base["train_r2_affine"]
    assert other["mse"] != base["mse"]
    assert kind in curriculum_heldout.HELDOUT_KINDS


def _line(kind, target, depth, v, improving=False):
    return {"kind": kind, "target": target, "rule": "r", "n": 6, "widths": [6], "depth": depth,
            "params": 100, "r2_affine_best": v, "r2_affine_spread": 0.0, "r2_best": v,
            "still_improving": improving, "rho_best": v}


def test_heldout_clause_needs_a_gain_random_labels_do_not_show():
    from networks.separation.depth_verdict import verdict

    k = "curriculum_heldout"
    rows = [_line(k, "ip", 3, 0.6), _line(k, "ip", 2, 0.1), _line(k, "random", 3, 0.0),
            _line(k, "random", 2, 0.0)]
    v = verdict(rows)
    assert v["clauses"]["depth_gain_heldout"]["status"] == "holds" and v["separation_shown"]
    # the control moves the same way: no separation, named as a finding
    rows[2]["r2_affine_best"] = 0.55
    v = verdict(rows)
    assert v["clauses"]["depth_gain_heldout"]["status"] == "fails"
    assert not v["separation_shown"] and "held-out" in v["headline"]
    # a net still improving: undecided, not shown
    rows[2]["r2_affine_best"] = 0.0
    rows[1]["still_improving"] = True
    v = verdict(rows)
    assert v["clauses"]["depth_gain_heldout"]["status"] == "undecided"
    assert not v["separation_shown"]


def test_curriculum_stages_stop_by_the_stall_rule_when_asked():
    cells = C.curriculum_cells([3], seeds=1, epochs=4000, lr=0.01, stall_window=30,
                               stall_tol=1e-2)
    cell = next(c for c in cells if c["kind"] == "curriculum" and c["target"] == "ip"
                and len(c["widths"]) == 2)
    row = run_cell(cell)
    assert all(s["reason"] in ("stalled", "target_loss") for s in row["stages"])
    assert all(s["epochs"] < 4000 for s in row["stages"])
    plain = next(c for c in C.curriculum_cells([3], seeds=1, epochs=4000, lr=0.01)
                 if c["kind"] == "curriculum" and c["target"] == "ip" and len(c["widths"]) == 2)
    assert plain.key != cell.key
