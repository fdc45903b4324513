"""decide_slicing ("k planes cut all edges of Q_n but at most one") by both solvers against a
brute-force twin over every tuple of threshold functions."""

import itertools

import numpy as np
import pytest

pytest.importorskip("ortools")
pytest.importorskip("pysat")

from circuits.analysis.synthesis.slicing import decide_slicing                  # noqa: E402
from circuits.hypercube import points                                            # noqa: E402


def _threshold_tables(n: int, w: int = 2) -> list:
    Z = points(n).astype(np.int64)
    out = set()
    for ws in itertools.product(range(-w, w + 1), repeat=n):
        v = Z @ np.array(ws)
        for t in range(-n * w - 1, n * w + 2):
            out.add(tuple((v >= t).astype(int)))
    return [np.array(h) for h in out]


def _brute_max_cut(n: int, k: int) -> int:
    tabs = _threshold_tables(n)
    edges = [(z, z ^ (1 << i)) for z in range(1 << n) for i in range(n) if z ^ (1 << i) > z]
    diff = np.array([[h[a] != h[b] for a, b in edges] for h in tabs])
    best = 0
    for combo in itertools.combinations(range(len(tabs)), k):
        best = max(best, int(diff[list(combo)].any(axis=0).sum()))
    return best


@pytest.mark.parametrize("n, k", [(2, 1), (2, 2), (3, 1), (3, 2), (3, 3)])
@pytest.mark.parametrize("solver", ["cp-sat", "sat"])
@pytest.mark.parametrize("symmetry", [False, True])
def test_decide_slicing_matches_brute_force(n, k, solver, symmetry):
    edges = n * 2 ** (n - 1)
    r = decide_slicing(n, k, solver=solver, time_limit=30, symmetry=symmetry)
    assert r["status"] == ("feasible" if _brute_max_cut(n, k) >= edges - 1 else "infeasible")


def test_stabiliser_maps_fix_the_edge_and_are_cube_symmetries():
    from circuits.analysis.synthesis.slicing import _cube_maps

    for fix in (False, True):
        maps = _cube_maps(4, fix)
        assert len(maps) == (3 + 1 if fix else 6 + 4)
        for pi in maps:
            assert sorted(pi.tolist()) == list(range(16))
            if fix:
                assert {int(pi[0]), int(pi[1])} == {0, 1}
            for z in range(16):                       # neighbours stay neighbours
                for i in range(4):
                    assert bin(int(pi[z]) ^ int(pi[z ^ (1 << i)])).count("1") == 1


@pytest.mark.parametrize("solver", ["cp-sat", "sat"])
def test_published_s43_is_below_all_but_one(solver):
    # S(4, 3) = 30 of 32 edges: three planes cannot cut 31
    for sym in (False, True):
        assert decide_slicing(4, 3, solver=solver, time_limit=60,
                              symmetry=sym)["status"] == "infeasible"
        r = decide_slicing(4, 4, solver=solver, time_limit=60, symmetry=sym)
        assert r["status"] == "feasible" and len(r["gates"]) == 4


def test_single_cases():
    # Q3: 3 planes cut all 12 edges; 2 planes cut at most 10 (brute force above)
    assert decide_slicing(3, 3, case="all cut")["status"] == "feasible"
    assert decide_slicing(3, 2, case="one uncut", solver="sat")["status"] == "infeasible"
    with pytest.raises(Exception, match="case must be"):
        decide_slicing(3, 2, case="both")
