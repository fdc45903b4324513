"""The full E23 table's budget: convergence-based stopping (the stall rule of the product-form
trainer against a naive twin over the returned losses), the per-cell work cap, and the cells of
``depthsep separate --full`` (widths n and n², the depth-3 pairs with their own largest n, keys
that name the stopping rule)."""

import json

import numpy as np
import pytest

from networks.separation import separate as S


def naive_stalled_at(losses, window, tol):
    """First epoch index t >= window where the running best fell by less than tol (relative)
    over the last ``window`` epochs; None if none (plain Python)."""
    best = []
    for x in losses:
        best.append(x if not best else min(best[-1], x))
    for t in range(window, len(best)):
        if best[t - window] - best[t] < tol * best[t - window]:
            return t
    return None


@pytest.mark.parametrize("depth", [2, 3])
def test_stall_rule_stops_at_the_first_epoch_the_naive_twin_names(depth):
    from embeddings import HardInstance
    from networks.separation.targets import target_table
    from networks.sigma import SigmaNetwork
    from networks.train_product import train_product

    inst = HardInstance(4, seed=0)
    Y = target_table("ip", 4)
    widths = [4] if depth == 2 else [4, 5]
    net = SigmaNetwork.random([inst.dim, *widths, 1], "relu", seed=3, bias_scale=0.5)
    kw = dict(targets=Y, lr=0.02, patience=None, max_seconds=None)
    res = train_product(net, inst, epochs=3000, stall_window=50, stall_tol=1e-2, **kw)
    h = res.history
    assert h["reason"] == "stalled" and h["settings"]["stall_window"] == 50
    # the twin on the losses of the run: the last epoch is the first one it names
    assert naive_stalled_at(h["loss"], 50, 1e-2) == len(h["loss"]) - 1
    # the same run without the rule goes on (the rule, not the budget, stopped it) and
    # follows the same trajectory up to the stop
    free = train_product(net, inst, epochs=len(h["loss"]) + 20, **kw).history
    assert free["reason"] == "epochs" and free["loss"][: len(h["loss"])] == h["loss"]


def test_stall_rule_errors_name_the_argument():
    from circuits.utils.errors import DepthsepError
    from embeddings import HardInstance
    from networks.sigma import SigmaNetwork
    from networks.train_product import train_product

    inst = HardInstance(3, seed=0)
    net = SigmaNetwork.random([inst.dim, 3, 1], "relu", seed=0)
    for kw, name in ((dict(stall_window=0), "stall_window"),
                     (dict(stall_window=10, stall_tol=1.5), "stall_tol")):
        with pytest.raises(DepthsepError, match=name):
            train_product(net, inst, epochs=5, **kw)


def test_epoch_cap_is_the_work_budget_between_the_floor_and_the_cap():
    assert S.epoch_cap(3000, 12, [12, 13]) == 3000                       # no work cap
    per = 4 ** 12 * 144
    assert S.epoch_cap(3000, 12, [144], work=1e12) == int(1e12 // per)   # 413
    assert S.epoch_cap(3000, 12, [144, 12], work=1e12) == S.MIN_CAPPED_EPOCHS
    assert S.epoch_cap(100, 12, [144, 12], work=1e12) == 100            # never above the cap
    assert S.epoch_cap(3000, 6, [6], work=1e12) == 3000


def test_full_cells_have_their_own_caps_pairs_and_stopping_keys():
    from experiments import separate as E

    args = E.parse_args(["--full", "--out", "/tmp/unused-separate-full-test"])
    assert args.widths == ["n", "n^2"] and args.n == list(range(4, 13))
    cells = S.make_cells(args.n, targets=args.targets, widths=args.widths, depth3=args.depth3,
                         depth3_max_n=args.depth3_max_n, seeds=args.seeds, epochs=args.epochs,
                         lr=args.lr, stall_window=args.stall_window, stall_tol=args.stall_tol,
                         work=args.work)
    d3 = {(c["n"], c["rule"]) for c in cells if c["kind"] == "depth3"}
    assert (12, "(n, n+1)") in d3 and (E.FULL_WIDE_MAX_N, "(n^2, n)") in d3
    assert (E.FULL_WIDE_MAX_N + 1, "(n^2, n)") not in d3
    assert not any(c["rule"] == "n^3" for c in cells)
    trained = [c for c in cells if c["kind"] in ("depth2", "depth3")]
    assert all(c["stall_window"] == E.FULL_STALL_WINDOW for c in trained)
    assert all(c["epochs"] == S.epoch_cap(args.epochs, c["n"], c["widths"], args.work)
               for c in trained)
    # the stopping rule is in the key: a patience-rule cell never resumes as a stall-rule one
    c = trained[0]
    plain = S.Cell({k: v for k, v in c.items() if k not in ("stall_window", "stall_tol")})
    assert c.key != plain.key and json.loads(c.key)[-2:] == [E.FULL_STALL_WINDOW,
                                                             E.FULL_STALL_TOL]
    assert len({x.key for x in cells}) == len(cells)
    # every depth-3 cell has a depth-2 cell of about the same parameter count at its n
    for c3 in (c for c in cells if c["kind"] == "depth3"):
        p3 = S.param_count([8 * c3["n"], *c3["widths"], 1])
        p2 = [S.param_count([8 * c["n"], *c["widths"], 1]) for c in cells
              if c["kind"] == "depth2" and c["n"] == c3["n"]]
        assert min(abs(p - p3) for p in p2) <= 8 * c3["n"] + 2


def test_still_improving_follows_the_stall_rule_for_stall_cells():
    cell = {"stall_window": 3, "stall_tol": 0.1}
    assert S._still_improving([1.0, 0.9, 0.8, 0.7, 0.6], cell)        # 0.9 -> 0.6 in 3 epochs
    assert not S._still_improving([1.0, 0.5, 0.5, 0.5, 0.49], cell)   # 0.5 -> 0.49: stalled
    assert S._still_improving([1.0, 0.5], cell)                        # shorter than the window
    assert S._still_improving(list(np.linspace(1, 0.5, 30)))           # the old rule, unchanged
