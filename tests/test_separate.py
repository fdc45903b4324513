"""E23 (networks.separation.targets / separate, experiments/separate.py): targets against naive
twins on all 4^n pairs, the explicit depth-2 IP_j floor exact, the verdict and its control, resume."""

import json
import math

import numpy as np
import pytest

from networks.separation import separate as S
from networks.separation import targets as T


def _bits(v, n):
    return [(v >> i) & 1 for i in range(n)]


def naive_target(name, a, b, n, seed=0, generator=None):
    """Plain-Python twin of every built-in target."""
    x, y = _bits(a, n), _bits(b, n)
    ands = [x[i] & y[i] for i in range(n)]
    if name == "ip":
        return sum(ands) % 2
    if name.startswith("ip_"):
        return sum(ands[: int(name[3:])]) % 2
    if name == "majand":
        # balanced threshold from the Binomial(n, 1/4) law, exact fractions
        best = min(range(1, n + 1), key=lambda t: (abs(sum(math.comb(n, k) * 3 ** (n - k)
                                                          for k in range(t, n + 1)) * 2 - 4 ** n), t))
        return int(sum(ands) >= best)
    if name == "maj":
        return int(sum(x) + sum(y) >= n)
    if name == "thr":
        m = generator.shape[1]
        ca = [sum(x[i] * int(generator[i, j]) for i in range(n)) % 2 for j in range(m)]
        cb = [sum(y[i] * int(generator[i, j]) for i in range(n)) % 2 for j in range(m)]
        w, t = T._thr_parameters(T.TargetContext(n, seed, generator))
        return int(sum(int(w[j]) * ca[j] for j in range(m)) +
                   sum(int(w[m + j]) * cb[j] for j in range(m)) >= t)
    raise AssertionError(name)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("name", ["ip", "majand", "maj", "ip_1", "thr"])
def test_every_target_matches_its_naive_twin_on_all_pairs(name, n):
    from embeddings import HardInstance

    if name == "ip_1" and n < 1:
        pytest.skip("needs n >= 1")
    g = HardInstance(n, seed=0).embedding.generator if name == "thr" else None
    Y = T.target_table(name, n, seed=3, generator=g)
    want = [[naive_target(name, a, b, n, 3, g) for b in range(1 << n)] for a in range(1 << n)]
    assert Y.tolist() == want


def test_ip_j_at_every_j_and_sampled_pairs_agree_with_the_table():
    n = 5
    idx = np.arange(1 << n)
    for j in range(1, n + 1):
        Y = T.target_table(f"ip_{j}", n)
        assert Y.tolist() == [[naive_target(f"ip_{j}", a, b, n) for b in idx] for a in idx]
    rng = np.random.default_rng(0)
    a, b = rng.integers(0, 1 << n, 500), rng.integers(0, 1 << n, 500)
    for name in ("ip", "majand", "maj", "random"):
        assert np.array_equal(T.target_values(name, a, b, n=n), T.target_table(name, n)[a, b])


def test_random_labels_are_fair_and_seeded_and_work_past_table_sizes():
    Y = T.target_table("random", 8, seed=1)
    assert abs(Y.mean() - 0.5) < 0.01
    assert not np.array_equal(Y, T.target_table("random", 8, seed=2))
    a = np.arange(10, dtype=np.int64) << 20
    v = T.target_values("random", a, a + 1, n=24)          # no 4^24 table anywhere
    assert v.shape == (10,) and set(v.tolist()) <= {0, 1}


def test_register_target_and_errors():
    T.register_target("dictator", lambda a, b, n, ctx: a & 1, description="a_0", replace=True)
    assert T.target_table("dictator", 2)[:, 0].tolist() == [0, 1, 0, 1]
    with pytest.raises(ValueError, match="already registered"):
        T.register_target("dictator", lambda a, b, n, ctx: a & 1, description="again")
    with pytest.raises(ValueError, match="unknown target 'xor'.*majand"):
        T.get_target("xor")
    with pytest.raises(ValueError, match="j <= n"):
        T.target_table("ip_4", 3)
    with pytest.raises(ValueError, match="generator"):
        T.target_table("thr", 3)
    T.register_target("bad", lambda a, b, n, ctx: a + 2, description="not Boolean", replace=True)
    with pytest.raises(ValueError, match="outside"):
        T.target_table("bad", 2)
    del T.TARGETS["dictator"], T.TARGETS["bad"]


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6, 7, 8])
def test_explicit_depth2_ip_j_floor_is_exact_on_all_pairs(n):
    from embeddings import HardInstance
    from networks.reduction.product import value_table

    inst = HardInstance(n, seed=0)
    for j in range(1, n + 1):
        net = S.explicit_ip_j(inst, j)
        assert net.dims[1] == j * 2 ** (j - 1)
        V = value_table(net, inst)
        assert np.abs(V - T.target_table(f"ip_{j}", n)).max() < 1e-9     # computes IP_j exactly
        assert abs(S.exact_ip_rho(net, inst) - 2.0 ** (j - n)) < 1e-9      # ρ with IP_n = 2^{j-n}
    assert S.ip_floor(n, 0) == 2.0 ** -n and S.ip_floor(n, 1) == 2.0 ** (1 - n)


def test_floor_rule_and_width_rules():
    assert [S.floor_j(w) for w in (0, 1, 3, 4, 11, 12, 31, 32)] == [0, 1, 1, 2, 2, 3, 3, 4]
    assert [S.width_of(r, 4) for r in ("n", "n^2", "n^3", "2n", "n+1", "2n^2+1", 7)] == \
        [4, 16, 64, 8, 5, 33, 7]
    with pytest.raises(ValueError, match="polynomial of n"):
        S.width_of("sqrt(n)", 4)


def test_path_norm_matches_its_definition():
    from networks.sigma import SigmaNetwork

    net = SigmaNetwork.random([6, 5, 1], "relu", seed=2, bias_scale=0.5)
    hid, out = net.layers
    want = sum(abs(float(out.weights[0, i])) * (abs(float(hid.bias[i])) +
                                                 math.sqrt(sum(float(v) ** 2 for v in hid.weights[i])))
               for i in range(5))
    assert S.path_norm(net) == pytest.approx(want, rel=1e-12)


def _summary(r2, spread=0.0):
    """A synthetic summary: r2[(kind, target, rule)] = {n: best-affine R²}; depth-3 rules carry
    parameter counts equal to the depth-2 rule "n"."""
    out = []
    for (kind, target, rule), pts in r2.items():
        for n, v in pts.items():
            depth = 3 if kind in ("depth3", "exact3") else 2
            out.append({"kind": kind, "target": target, "rule": rule, "n": n, "widths": [n],
                        "depth": depth, "params": 100 * n, "r2_best": v, "r2_spread": spread,
                        "r2_affine_best": v, "r2_affine_spread": spread,
                        "still_improving": False, "rho_best": v})
    return out


def _scenario(ip3, random3, easy=lambda n: 0.6):
    """Depth 2: IP = random labels (collapsing), MAJ∘AND easy, exact depth 3 = 1 (the shape of
    the published run that used to print "separation shown"); trained depth 3 given."""
    ns = range(4, 11)
    hard = {n: max(0.0, 0.4 - 0.06 * n) for n in ns}
    return _summary({("depth2", "ip", "n"): hard,
                     ("depth2", "majand", "n"): {n: easy(n) for n in ns},
                     ("depth2", "random", "n"): dict(hard),
                     ("exact3", "ip", "exact"): {n: 1.0 for n in ns},
                     ("depth3", "ip", "(n, n+1)"): {n: ip3(n) for n in ns},
                     ("depth3", "random", "(n, n+1)"): {n: random3(n) for n in ns}})


def test_random_labels_equal_to_ip_never_read_separation_shown():
    """The contradictory headline cannot be printed: depth 2 loses IP and keeps MAJ∘AND, the exact
    depth-3 net computes IP, but random labels behave exactly like IP at both depths."""
    rows = _scenario(lambda n: 0.3, lambda n: 0.3)
    same = S.verdict(rows)
    assert not same["separation_shown"] and same["shown_by"] == []
    assert same["headline"].startswith("no depth separation in this run")
    assert "separation shown" not in same["headline"]
    assert "hard to learn at both depths" in same["headline"]
    assert same["clauses"]["depth_gain_trained"]["status"] == "fails"
    assert same["clauses"]["exact_depth3"]["status"] == "holds"      # expressivity, not depth
    assert same["clauses"]["ip_like_random"]["status"] == "holds"
    # the old shape (no trained depth 3 at all) cannot show a separation either
    old = S.verdict([s for s in rows if s["kind"] != "depth3"])
    assert not old["separation_shown"] and "separation shown:" not in old["headline"]


def test_depth_gain_beyond_random_labels_shows_separation_and_its_control_can_remove_it():
    good = S.verdict(_scenario(lambda n: 0.9, lambda n: 0.1))
    assert good["separation_shown"] and good["shown_by"] == ["depth_gain_trained"]
    assert good["headline"].startswith("separation shown")
    # the same depth-3 gain on random labels (more capacity, not depth): not shown
    mem = S.verdict(_scenario(lambda n: 0.9, lambda n: 0.9))
    assert not mem["separation_shown"]
    # no random-label control: the clause cannot isolate depth
    rows = [s for s in _scenario(lambda n: 0.9, lambda n: 0.1) if s["target"] != "random"]
    assert S.verdict(rows)["clauses"]["depth_gain_trained"]["status"] == "undecided"
    assert not S.verdict(rows)["separation_shown"]


def test_floor_flag_is_scale_free_a_rescaled_net_gets_the_same_flag():
    """N -> 1/2 + c(N - 1/2) multiplies ρ by c but keeps cos and the best-affine R², so the
    below-floor flag (which compares best-affine R²) does not move."""
    from embeddings import HardInstance
    from networks.sigma import DenseLayer, SigmaNetwork

    n = 5
    inst = HardInstance(n, seed=0)
    Y = T.target_table("ip", n)
    net = SigmaNetwork.random([inst.dim, 12, 1], "relu", seed=3, bias_scale=0.5)
    hid, out = net.layers
    flags = []
    for c in (1.0, 0.01, 40.0):
        scaled = SigmaNetwork([hid, DenseLayer(c * out.weights, c * out.bias + 0.5 * (1 - c))],
                              activation="relu")
        row = S.evaluate_net(scaled, inst, Y, target="ip")
        flags.append((row["below_floor"], round(row["r2_affine"], 9), round(row["cos"], 9)))
        assert row["floor"] == pytest.approx(S.ip_floor_r2(n, 12))
    assert flags[0] == flags[1] == flags[2]
    # the floor net itself: best-affine R² = ip_floor_r2 exactly, cos = 2^{j-n}, not below
    j = S.floor_j(12)
    row = S.evaluate_net(S.explicit_ip_j(inst, j), inst, Y, target="ip")
    assert row["r2_affine"] == pytest.approx(S.ip_floor_r2(n, 12), abs=1e-12)
    assert row["cos"] == pytest.approx(2.0 ** (j - n), abs=1e-12)
    assert row["floor_cos"] == pytest.approx(2.0 ** (j - n))


def test_depth2_cells_match_the_depth3_parameter_counts():
    cells = S.make_cells([6], targets=("ip",), widths=("n",), depth3=(("n", "n+1"),), seeds=1)
    d3 = next(c for c in cells if c["kind"] == "depth3")
    d2 = [c for c in cells if c["kind"] == "depth2"]
    p3 = S.param_count([48, *d3["widths"], 1])
    best = min(d2, key=lambda c: abs(S.param_count([48, c["widths"][0], 1]) - p3))
    assert abs(S.param_count([48, best["widths"][0], 1]) - p3) <= (48 + 2) / 2
    assert best["rule"] == "params(n, n+1)"


def test_verdict_on_a_real_table_flips_when_majand_is_trained_on_ip_labels(monkeypatch):
    """End to end at small n: MAJ∘AND keeps R² >= 0.4 while IP falls; registering IP's
    function under the name 'majand' makes the easy clause fail."""
    base = S.separation_table([4, 6], targets=("ip", "majand"), widths=("n",), depth3=(),
                              seeds=1, epochs=300)
    assert base["verdict"]["clauses"]["target_gap_depth2"]["status"] == "holds"
    real = T.TARGETS["majand"]
    monkeypatch.setitem(T.TARGETS, "majand", T.Target("majand", T.TARGETS["ip"].function,
                                                      "IP in disguise", "easy"))
    swapped = S.separation_table([4, 6], targets=("ip", "majand"), widths=("n",), depth3=(),
                                 seeds=1, epochs=300)
    assert swapped["verdict"]["clauses"]["target_gap_depth2"]["status"] == "fails"
    assert swapped["verdict"]["clauses"]["easy_learnt"]["status"] == "fails"
    assert not swapped["verdict"]["separation_shown"]
    assert T.TARGETS["majand"] is not real


def test_resume_skips_finished_cells_and_ignores_a_cut_line(tmp_path):
    resume = tmp_path / "cells.jsonl"
    first = S.separation_table([3], targets=("ip",), widths=("n",), depth3=(), seeds=1,
                               epochs=50, resume=resume)
    lines = resume.read_text().splitlines()
    assert len(lines) == first["cells"] and first["resumed"] == 0
    resume.write_text("\n".join(lines[:-1]) + "\n" + lines[-1][: len(lines[-1]) // 2])  # a kill
    again = S.separation_table([3], targets=("ip",), widths=("n",), depth3=(), seeds=1,
                               epochs=50, resume=resume)
    assert again["resumed"] == first["cells"] - 1
    assert [r["rho"] for r in again["rows"]] == pytest.approx([r["rho"] for r in first["rows"]])
    assert all("key" in json.loads(x) for x in resume.read_text().splitlines()[-1:])


def test_cells_run_on_a_thread_pool_give_the_serial_rows():
    kw = dict(targets=("ip", "majand"), widths=("n",), depth3=(("n", "n+1"),), seeds=1, epochs=40)
    serial = S.separation_table([3], **kw)
    threaded = S.separation_table([3], executor="threads", **kw)
    assert [r["rho"] for r in threaded["rows"]] == pytest.approx([r["rho"] for r in serial["rows"]])


def test_cli_default_shape_and_option_errors(tmp_path, capsys):
    from experiments import separate as E

    rc = E.main(["--n", "3,4", "--seeds", "1", "--epochs", "60", "--heldout-n", "3",
                 "--out", str(tmp_path), "--no-progress"])
    assert rc == 0
    rec = json.loads((tmp_path / "separate.json").read_text())
    assert rec["format"] == "depthsep.experiments.separate" and rec["prediction"] == S.PREDICTION
    assert (tmp_path / "separate.png").stat().st_size > 0
    assert "random labels" in rec["caption"] or "control" in rec["caption"]
    out = capsys.readouterr().out
    assert "verdict:" in out and "prediction:" in out
    for bad, msg in ((["--n", "13"], "--n"), (["--seed", "-1"], "--seed"),
                     (["--targets", "xor"], "--targets"), (["--widths", "log n"], "--widths")):
        with pytest.raises(SystemExit) as e:
            E.parse_args(bad + ["--out", str(tmp_path)])
        assert e.value.code == 2
        assert msg in capsys.readouterr().err


def test_separate_with_sampled_flag_runs_the_sampled_mode(capsys):
    """`depthsep separate --sampled` is the sampled mode (issue 22's CLI), not the exhaustive table."""
    from experiments.cli import main

    assert main(["separate", "--sampled", "--help"]) == 0
    assert "depthsep separate-sampled" in capsys.readouterr().out


def test_resume_keys_name_every_setting_that_changes_a_cell(tmp_path):
    """A resume file written with another base seed or budget is not reused for this run."""
    resume = tmp_path / "cells.jsonl"
    kw = dict(targets=("ip",), widths=("n",), depth3=(), seeds=1, resume=resume)
    S.separation_table([3], epochs=30, base_seed=0, **kw)
    assert S.separation_table([3], epochs=30, base_seed=1, **kw)["resumed"] == 0
    assert S.separation_table([3], epochs=40, base_seed=0, **kw)["resumed"] == 2   # exact3, floor


def test_help_states_one_default_n_range():
    from experiments import separate as E

    text = E.build_parser().format_help()
    lo, hi = E.DEFAULT_N[0], E.DEFAULT_N[-1]
    assert f"n = {lo}..{hi}, 2 seeds: the default run" in text
    assert "default " + ",".join(map(str, E.DEFAULT_N)) in " ".join(text.split())
    import re

    assert not [m for m in re.findall(r"n = (\d+)\.\.(\d+), 2 seeds", text) if m != (str(lo), str(hi))]
