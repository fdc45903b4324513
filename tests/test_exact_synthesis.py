"""least_depth2 (CP-SAT exact synthesis, issue 21) against its naive twin, the exhaustive
enumerator min_depth2_size, plus witness re-verification and planted wrong solver answers."""

import numpy as np
import pytest

pytest.importorskip("ortools")

from circuits.analysis import exact_synthesis as ES                        # noqa: E402
from circuits.analysis.synthesis import depth3 as D3, model as M          # noqa: E402
from circuits.analysis.synthesis import symmetry as SYM, weights as WTS   # noqa: E402
from circuits.analysis import least_depth2, min_depth2_size, decide_depth2  # noqa: E402
from circuits.analysis.threshold_search import _codes_to_tables            # noqa: E402
from circuits.functions import inner_product_mod2, majority, parity        # noqa: E402
from circuits.simulate import truth_table                                   # noqa: E402
from circuits.utils.errors import DepthsepError, InvalidArgumentError      # noqa: E402


def _check(f, **kw):
    r = least_depth2(f, time_limit=20, num_workers=1, **kw)
    assert r.status == "optimal" and r.complete
    assert np.array_equal(truth_table(r.circuit), np.asarray(f, dtype=np.uint8))
    assert r.circuit.layers[0].n_gates == r.size
    return r


@pytest.mark.parametrize("n", [1, 2, 3])
def test_twin_every_function(n):
    """The enumerator and CP-SAT agree on every function of N <= 3 (256 at N = 3)."""
    tables = _codes_to_tables(np.arange(1 << (1 << n), dtype=np.uint64), n)
    for f in tables:
        naive = min_depth2_size(f, 4)
        r = _check(f, cross_check=False, confirm=False)     # the solvers' agreement: own test
        assert r.size == naive.size, f.tolist()


def test_twin_sample_n4():
    """At N = 4 the enumerator finishes quickly for s <= 2: both agree on "size <= 2"."""
    rng = np.random.default_rng(21)
    sample = [inner_product_mod2(2), majority(4), parity(4)]
    sample += list(rng.integers(0, 2, size=(3, 16), dtype=np.uint8))
    for f in sample:
        r = _check(f, cross_check=False)
        naive = min_depth2_size(f, 2, max_candidates=10**6)
        assert (naive.size == r.size) if r.size <= 2 else naive.size is None, f.tolist()


@pytest.mark.slow
def test_twin_sample_n4_s3():
    rng = np.random.default_rng(4)
    for f in [parity(4)] + list(rng.integers(0, 2, size=(2, 16), dtype=np.uint8)):
        r = _check(f, cross_check=False)
        naive = min_depth2_size(f, 3, max_candidates=2 * 10**8)
        assert (naive.size == r.size) if r.size <= 3 else naive.size is None


def test_published_parity_values():
    """Least hidden layer of THR o THR for PARITY_N is N (N <= 4; Neural Computation 13(2))."""
    for n in (2, 3, 4):
        r = _check(parity(n))
        assert r.size == n
        assert [c.status for c in r.claims] == ["infeasible"] * (n - 1) + ["feasible"]
        for c in r.claims:
            assert c.solver == "OR-Tools CP-SAT" and c.version and c.wall_s >= 0


def test_ip2_and_threshold_control():
    assert _check(inner_product_mod2(2)).size == 2
    assert _check(majority(5)).size == 1


def test_small_weight_is_not_complete():
    r = least_depth2(parity(3), max_weight=1, time_limit=20, num_workers=1)
    assert not r.complete and "within the weight bounds" in r.summary()
    assert r.size is not None and r.circuit.max_abs_weight <= 1


def test_direct_wires():
    # parity_2 = x0 + x1 - 2 AND(x0, x1) >= 1: one hidden gate with direct wires
    r = least_depth2(parity(2), direct=True, time_limit=20, num_workers=1)
    assert r.size == 1
    assert np.array_equal(truth_table(r.circuit), parity(2))


def test_symmetry_off_same_answer():
    assert SYM._check_symmetry(True) == ES.DEFAULT_SYMMETRY
    assert SYM._check_symmetry("all") == ES.SYMMETRIES
    for sym in (False, ("complement",), ("order",), "function", "all"):
        r = least_depth2(parity(3), symmetry=sym, time_limit=20, num_workers=1)
        assert r.size == 3


def test_planted_wrong_witness_caught(monkeypatch):
    real = M._witness

    def wrong(*a, **k):
        c = real(*a, **k)
        top = c.layers[1]
        return M.ThresholdCircuit((c.layers[0], M.ThresholdLayer(top.weights,
                                                                    top.thresholds + 1)))
    monkeypatch.setattr(M, "_witness", wrong)
    with pytest.raises(DepthsepError, match="rejected"):
        least_depth2(parity(3), time_limit=20, num_workers=1)


def test_planted_wrong_infeasible_caught():
    from ortools.sat.python import cp_model

    def liar(solver, model):
        return cp_model.INFEASIBLE
    with pytest.raises(DepthsepError, match="enumerator found one"):
        least_depth2(parity(2), _solve=liar, num_workers=1, confirm=False)


def test_unknown_is_honest():
    from ortools.sat.python import cp_model

    def timeout(solver, model):
        return cp_model.UNKNOWN
    r = least_depth2(parity(3), _solve=timeout, max_size=4, num_workers=1)
    assert r.size is None and r.status == "unknown" and r.upper is None and r.lower == 1
    assert "unknown" in r.summary()


def test_bad_arguments():
    with pytest.raises(InvalidArgumentError, match="symmetry"):
        least_depth2(parity(2), symmetry=("nope",))
    with pytest.raises(InvalidArgumentError, match="max_weight"):
        decide_depth2(parity(2), 2, max_weight=0)


def test_weight_bounds_computed_match():
    assert [ES.max_minimal_weight(k) for k in range(4)] == list(WTS._MAX_SINGLE_WEIGHT[:4])


@pytest.mark.slow
def test_weight_bound_n4_n6_and_parity5():
    assert ES.max_minimal_weight(4) == WTS._MAX_SINGLE_WEIGHT[4]
    assert ES.max_minimal_weight(6) == WTS._MAX_SINGLE_WEIGHT[6] == 9
    r = least_depth2(parity(5), time_limit=300, num_workers=2)
    assert r.size == 5 and r.complete        # C(5) = 5 planes slice Q5


def test_paterson_planes_slice_q6():
    assert ES.sliced_edges(ES.PATERSON_PLANES, 6) == 192
    assert ES.sliced_edges(ES.PATERSON_PLANES[:4], 6) < 192


def test_max_sliced_edges_small():
    # one plane slices at most C(n, n/2)-ish middle edges: Q3 -> 6 (the middle layer cut), Q2 -> 2
    r = ES.max_sliced_edges(3, 1, time_limit=10, num_workers=1)
    assert r["status"] == "optimal" and r["max_cut"] == 6
    assert ES.max_sliced_edges(2, 2, time_limit=10, num_workers=1)["max_cut"] == 4


@pytest.mark.slow
def test_max_sliced_edges_s43():
    r = ES.max_sliced_edges(4, 3, time_limit=120, num_workers=2)
    assert r["status"] == "optimal" and r["max_cut"] == 30       # S(4, 3) = 30


def test_cli_least_circuit_json(tmp_path, capsys):
    import json
    from experiments import cli
    rc = cli.main(["--json", "least-circuit", "--function", "ip", "--n", "2", "--no-progress",
                   "--workers", "1", "--out", str(tmp_path)])
    assert rc == 0
    rec = json.loads(capsys.readouterr().out)["files"]["least_circuit.json"]
    assert rec["size"] == 2 and rec["status"] == "optimal" and rec["complete"]
    assert rec["claims"][0]["status"] == "infeasible" and rec["claims"][0]["cross_checked"]
    rc = cli.main(["--json", "least-circuit", "--function", "parity", "--n", "3", "--no-progress",
                   "--workers", "1", "--symmetry", "order,function", "--out", str(tmp_path)])
    rec = json.loads(capsys.readouterr().out)["files"]["least_circuit.json"]
    assert rc == 0 and rec["size"] == 3 and rec["options"]["symmetry"] == ["order", "function"]
    assert cli.main(["least-circuit", "--symmetry", "order,nope", "--out", str(tmp_path)]) == 2
    assert "--symmetry 'order,nope'" in capsys.readouterr().err


def test_cli_separation_table(tmp_path):
    from experiments import separation_table
    rc = separation_table.main(["--n-max", "1", "--no-progress", "--workers", "1",
                                "--out", str(tmp_path)])
    assert rc == 0
    assert (tmp_path / "separation_table.png").stat().st_size > 0
    import json
    rows = json.loads((tmp_path / "separation_table.json").read_text())["rows"]
    by = {r["function"]: r for r in rows}
    assert by["PAR_2"]["truth"] == 2 and by["MAJ_2"]["truth"] == 1
    assert all(r["best_bound"] <= r["truth"] for r in rows)


@pytest.mark.slow
def test_ip3_needs_four_gates():
    """IP_3 has no THR o THR circuit with 3 hidden gates over all integer weights (issue 21)."""
    c, w = decide_depth2(inner_product_mod2(3), 3, time_limit=600, num_workers=2)
    assert c.status == "infeasible" and c.complete and w is None


def test_ip3_four_gate_witness():
    """The 4-gate IP_3 circuit found by the plain look-ahead (issue 21): with the slow proof that
    3 gates are impossible, IP_3's least THR o THR size is 4 (below the depth-3 2n = 6)."""
    from circuits.threshold import ThresholdCircuit
    c = ThresholdCircuit.depth2([[-9, 4, -1, -9, 4, -3], [1, 3, -2, 1, 0, -2],
                                 [4, 1, 7, 3, 5, 7], [1, -9, -2, 1, -9, -7]],
                                [-13, -2, 20, -16], [-3, -3, -3, -3], -8)
    ES.verify_witness(c, inner_product_mod2(3))
    with pytest.raises(DepthsepError):
        ES.verify_witness(c, parity(6))


# ------------------------------------------------------------ f's own symmetry group (issue 21)
def _closure(gens, size):
    """The group generated by (pi, flip) pairs acting as h -> h[pi] ^ flip (naive BFS)."""
    ident = (tuple(range(size)), False)
    seen = {ident}
    frontier = [ident]
    gens = [(tuple(int(x) for x in p), bool(f)) for p, f in gens]
    while frontier:
        nxt = []
        for pa, fa in frontier:
            for pb, fb in gens:
                c = (tuple(pa[k] for k in pb), fa ^ fb)
                if c not in seen:
                    seen.add(c)
                    nxt.append(c)
        frontier = nxt
    return seen


@pytest.mark.parametrize("f, group_order", [(parity(3), 48), (parity(4), 384),
                                            (inner_product_mod2(2), 8), (majority(4), 24)])
def test_function_symmetries_generate_the_group(f, group_order):
    """Every element found maps f to f or 1 - f, and they generate the whole signed-permutation
    group of f (parity: 2^N N!; IP_2: pair swap and the two x_i <-> y_i; majority: S_N)."""
    sig = ES.function_symmetries(f)
    for pi, flip in sig:
        assert np.array_equal(f[pi], f ^ np.uint8(flip))
    assert len(_closure(sig, f.size)) == group_order


def test_function_symmetries_none_for_random():
    f = np.random.default_rng(5).integers(0, 2, size=32, dtype=np.uint8)
    assert all(np.array_equal(f[p], f ^ np.uint8(fl)) for p, fl in ES.function_symmetries(f))
    assert len(ES.function_symmetries(f)) < 3


def _canonical(circuit, f):
    """The canonical hidden layer of the soundness argument, by brute force: orient every gate
    to v >= 0, then the lex-largest sorted layer over the whole generated group of f."""
    n = int(f.size).bit_length() - 1
    from circuits.hypercube import points
    Z = points(n).astype(np.int64)
    hid = circuit.layers[0]
    tabs = (Z @ hid.weights.T >= hid.thresholds).T.astype(np.uint8)
    v = circuit.layers[1].weights[0]
    tabs = [1 - h if vj < 0 else h for h, vj in zip(tabs, v)]
    best = None
    for pi, flip in _closure(ES.function_symmetries(f), f.size):
        layer = sorted((tuple(int(x) ^ flip for x in np.asarray(h)[list(pi)]) for h in tabs),
                       reverse=True)
        best = layer if best is None or layer > best else best
    return best


@pytest.mark.parametrize("name", ["par3", "par4", "ip2", "maj3", "rand3", "rand4"])
def test_canonical_witness_satisfies_every_symmetry_subset(name):
    """Soundness of the combined breaking: the canonical form of a real circuit (found with no
    symmetry breaking) satisfies the model with every subset of {complement, order, function},
    its hidden tables fixed."""
    from itertools import combinations
    from ortools.sat.python import cp_model
    rng = np.random.default_rng(3)
    f = {"par3": parity(3), "par4": parity(4), "ip2": inner_product_mod2(2),
         "maj3": majority(3), "rand3": rng.integers(0, 2, 8, dtype=np.uint8),
         "rand4": np.array([0, 1, 1, 0, 1, 0, 0, 1, 1, 1, 1, 0, 0, 1, 1, 0], dtype=np.uint8)}[name]
    n = int(f.size).bit_length() - 1
    size = least_depth2(f, time_limit=20, num_workers=1).size
    _, wit = decide_depth2(f, size, symmetry=False, time_limit=20, num_workers=1, seed=7)
    canon = _canonical(wit, f)
    assert len(set(canon)) == size                       # least size: gates distinct
    bh, _ = ES.weight_bound(n)
    bt, _ = ES.weight_bound(size)
    for r in range(4):
        for sym in combinations(ES.SYMMETRIES, r):
            m, vars_ = M._build(f, n, size, bh, bt, False, sym, True)
            H = vars_[-1]
            for j, row in enumerate(canon):
                for k, b in enumerate(row):
                    m.Add(H[j][k] == b)
            solver = cp_model.CpSolver()
            solver.parameters.num_workers = 1
            solver.parameters.max_time_in_seconds = 20
            assert solver.Solve(m) in (cp_model.OPTIMAL, cp_model.FEASIBLE), (name, sym)


def test_symmetry_subsets_agree_with_each_other():
    """Every subset of the symmetry breaking decides the same instances the same way (one size
    below and at the least size; the least sizes come from the enumerator at N = 3)."""
    from itertools import combinations
    rng = np.random.default_rng(11)
    cases = [(parity(4), 3), (parity(4), 4), (inner_product_mod2(2), 1),
             (inner_product_mod2(2), 2)]
    for f in rng.integers(0, 2, size=(2, 8), dtype=np.uint8):
        s = min_depth2_size(f, 4).size
        cases += [(f, s - 1), (f, s)] if s > 1 else [(f, s)]
    for f, s in cases:
        got = {sym: decide_depth2(f, s, symmetry=sym, time_limit=20, num_workers=1)[0].status
               for r in range(4) for sym in combinations(ES.SYMMETRIES, r)}
        assert len(set(got.values())) == 1 and "unknown" not in got.values(), got


def test_class_representatives_match_a000619():
    """Partial sums of OEIS A000619 (2, 1, 2, 5, 17, 92, 994): 2, 3, 5, 10, 27, 119, 1113."""
    assert [len(ES.threshold_class_representatives(k)) for k in range(7)] == \
        [2, 3, 5, 10, 27, 119, 1113]
    assert ES.max_minimal_weight(5) == WTS._MAX_SINGLE_WEIGHT[5] == 5


def test_threshold_counts_from_classes_match_a000609():
    """A000609 (2, 4, 14, 104, 1882, 94572, 15028134) from the class list, and the library's
    independent weight-enumerating counter agrees for N <= 4."""
    from circuits.analysis import count_threshold_functions
    got = [ES.count_threshold_functions_by_class(k) for k in range(7)]
    assert got == [2, 4, 14, 104, 1882, 94572, 15028134]
    assert got[:5] == [count_threshold_functions(k) for k in range(5)]


def test_order_is_not_strict_when_weights_are_capped(monkeypatch):
    """Merging equal gates can leave |w| <= W, so a capped search keeps duplicates allowed."""
    seen = []
    real = M._build

    def spy(*a):
        seen.append(a[-1])
        return real(*a)
    monkeypatch.setattr(M, "_build", spy)
    decide_depth2(parity(3), 3, time_limit=10, num_workers=1)
    decide_depth2(parity(3), 3, max_weight=1, time_limit=10, num_workers=1)
    decide_depth2(parity(1), 5, time_limit=10, num_workers=1)      # only 4 threshold functions
    assert seen == [True, False, False]


def test_ip3_small_weight_least_is_five():
    """Within |w| <= 1, IP_3 needs 5 hidden gates (issue 21): 4 are refuted (a claim within the
    cap, complete=False) and this +-1 circuit with 5 is re-verified on all 64 points."""
    from circuits.threshold import ThresholdCircuit
    c, _ = decide_depth2(inner_product_mod2(3), 4, max_weight=1, time_limit=60, num_workers=1)
    assert c.status == "infeasible" and not c.complete
    w = ThresholdCircuit.depth2([[-1, -1, -1, -1, -1, -1], [1, 1, -1, 1, 1, -1],
                                 [1, -1, 1, 1, -1, 1], [-1, 1, 1, -1, 1, 1], [1, 1, 1, 1, 1, 1]],
                                [-3, 2, 2, 2, 3], [1, 1, 1, 1, 1], 3)
    ES.verify_witness(w, inner_product_mod2(3))
    assert w.max_abs_weight == 1


# ----------------------------------------------------------------------------- depth 3
def _threshold_tables(k):
    """Every threshold function of k inputs as a table over the 2^k patterns (bit i of the
    pattern index = input i), by enumerating small weights (complete for k <= 2)."""
    import itertools

    pts = np.array([[(p >> i) & 1 for i in range(k)] for p in range(1 << k)])
    out = set()
    for w in itertools.product(range(-2, 3), repeat=k):
        for t in range(-2 * k - 1, 2 * k + 2):
            out.add(tuple(int(v) for v in (pts @ np.array(w, dtype=int) >= t)))
    return sorted(out)


def _depth3_reachable(n, s1, s2):
    """Naive twin of decide_depth3 for tiny N: the set of tables THR o THR o THR computes."""
    import itertools

    cube = np.array([[(k >> i) & 1 for i in range(n)] for k in range(1 << n)])
    f1 = [np.array(g)[cube @ (1 << np.arange(n))] for g in _threshold_tables(n)]
    g1, g2 = _threshold_tables(s1), _threshold_tables(s2)
    reach = set()
    for layer1 in itertools.product(f1, repeat=s1):
        idx1 = sum(col << i for i, col in enumerate(layer1))
        cols2 = {tuple(np.array(g)[idx1]) for g in g1}
        for layer2 in itertools.product(sorted(cols2), repeat=s2):
            idx2 = sum(np.array(col) << i for i, col in enumerate(layer2))
            for g in g2:
                reach.add(tuple(int(v) for v in np.array(g)[idx2]))
    return reach


@pytest.mark.parametrize("sizes", [(1, 1), (2, 1), (1, 2), (2, 2)])
def test_depth3_matches_its_naive_twin_on_every_function_of_two_inputs(sizes):
    reach = _depth3_reachable(2, *sizes)
    for code in range(16):
        table = np.array([(code >> k) & 1 for k in range(4)], dtype=np.uint8)
        claim, circ = ES.decide_depth3(table, sizes, num_workers=1, time_limit=20)
        assert claim.status == ("feasible" if tuple(table) in reach else "infeasible"), code
        assert claim.complete and claim.size == sum(sizes)
        if circ is not None:
            assert len(circ.layers) == 3
            assert np.array_equal(truth_table(circ), table)


@pytest.mark.parametrize("f, s", [(parity(3), 2), (parity(3), 3), (inner_product_mod2(2), 1),
                                  (inner_product_mod2(2), 2), (majority(3), 1)])
def test_depth3_with_one_second_layer_gate_is_depth2(f, s):
    """(s, 1): the top gate of one gate is that gate or its complement, so the answer is
    depth 2's with s gates (the class is closed under complement)."""
    d2 = decide_depth2(f, s, num_workers=1, time_limit=30)[0].status
    d3 = ES.decide_depth3(f, (s, 1), num_workers=1, time_limit=30)[0].status
    assert d2 == d3 != "unknown"


def test_depth3_parity3_needs_three_first_layer_gates():
    """No two threshold gates split the 3-cube into parity-constant classes (checked by brute
    force over all 104² pairs when written), so (2, s2) is infeasible for every s2; (3, 1) works."""
    for s2 in (1, 2, 3):
        assert ES.decide_depth3(parity(3), (2, s2), num_workers=1)[0].status == "infeasible"
    claim, circ = ES.decide_depth3(parity(3), (3, 1), num_workers=1)
    assert claim.status == "feasible" and np.array_equal(truth_table(circ), parity(3))


def test_depth3_planted_wrong_witness_caught_and_bad_sizes(monkeypatch):
    real = D3.ThresholdCircuit

    def shifted(layers):
        top = layers[-1]
        return real(tuple(layers[:-1]) + (D3.ThresholdLayer(top.weights, top.thresholds + 1),))
    monkeypatch.setattr(D3, "ThresholdCircuit", shifted)
    with pytest.raises(DepthsepError, match="rejected"):
        ES.decide_depth3(parity(2), (2, 1), num_workers=1)
    monkeypatch.undo()
    with pytest.raises(InvalidArgumentError, match="sizes"):
        ES.decide_depth3(parity(2), 3)
    with pytest.raises(InvalidArgumentError, match="sizes"):
        ES.decide_depth3(parity(2), (0, 1))


def test_cli_least_circuit_depth3(tmp_path, capsys):
    import json
    from experiments import cli
    rc = cli.main(["--json", "least-circuit", "--function", "ip", "--n", "2", "--depth3", "2,1",
                   "--workers", "1", "--out", str(tmp_path)])
    rec = json.loads(capsys.readouterr().out)["files"]["least_circuit.json"]
    assert rc == 0 and rec["depth"] == 3 and rec["claim"]["status"] == "feasible"
    assert len(rec["witness"]) == 3
    rc = cli.main(["--json", "least-circuit", "--function", "parity", "--n", "3", "--depth3",
                   "2,2", "--workers", "1", "--out", str(tmp_path)])
    rec = json.loads(capsys.readouterr().out)["files"]["least_circuit.json"]
    assert rc == 0 and rec["claim"]["status"] == "infeasible" and "witness" not in rec
    assert cli.main(["least-circuit", "--depth3", "2", "--out", str(tmp_path)]) == 2
    assert "--depth3 '2'" in capsys.readouterr().err


def test_n_classes_reproduce_a002079_and_a_brute_force_count():
    """OEIS A002079 (N-classes of threshold functions of exactly k inputs; the issue's 96, 2690,
    226360 for k = 4..6), and for k <= 4 a twin: positive threshold functions with every input
    relevant, counted from all weight vectors in [-3, 3] (complete: |w| <= 3 for k <= 4)."""
    import itertools

    assert [ES.count_threshold_n_classes(k) for k in range(7)] == [2, 1, 2, 9, 96, 2690, 226360]
    for k in range(1, 5):
        pts = np.array([[(p >> i) & 1 for i in range(k)] for p in range(1 << k)])
        idx = np.arange(1 << k)
        found = set()
        for w in itertools.product(range(-3, 4), repeat=k):
            v = pts @ np.array(w)
            for t in range(-3 * k, 3 * k + 2):
                g = (v >= t).astype(np.uint8)
                up = all(np.all(g[idx | (1 << i)] >= g[idx & ~(1 << i)]) for i in range(k))
                rel = all(not np.array_equal(g, g[idx ^ (1 << i)]) for i in range(k))
                if up and rel:
                    found.add(g.tobytes())
        assert len(found) == ES.count_threshold_n_classes(k), k
