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


def _summary(r2):
    """A synthetic summary: r2[(kind, target, rule)] = {n: R²}."""
    out = []
    for (kind, target, rule), pts in r2.items():
        for n, v in pts.items():
            out.append({"kind": kind, "target": target, "rule": rule, "n": n, "widths": [n],
                        "r2_best": v, "r2_spread": 0.0, "still_improving": False,
                        "rho_best": v})
    return out


def _scenario(easy_curve):
    ns = range(4, 13)
    return _summary({("depth2", "ip", "n"): {n: max(0.0, 0.4 - 0.06 * n) for n in ns},
                     ("depth2", "majand", "n"): {n: easy_curve(n) for n in ns},
                     ("depth2", "random", "n"): {n: max(0.0, 0.4 - 0.06 * n) for n in ns},
                     ("exact3", "ip", "exact"): {n: 1.0 for n in ns}})


def test_verdict_holds_on_a_separating_table_and_flips_when_majand_labels_become_ip():
    good = S.verdict(_scenario(lambda n: 0.6))
    assert good["overall"] == "holds" and good["separation_shown"]
    # control: the easy labels replaced by IP (same numbers as the IP line) -> the verdict flips
    flipped = S.verdict(_scenario(lambda n: max(0.0, 0.4 - 0.06 * n)))
    assert flipped["clauses"]["easy"]["status"] == "fails"
    assert flipped["overall"] == "fails" and not flipped["separation_shown"]


def test_verdict_on_a_real_table_flips_when_majand_is_trained_on_ip_labels(monkeypatch):
    """End to end at small n: MAJ∘AND keeps R² >= 0.4 while IP falls; registering IP's
    function under the name 'majand' makes the easy clause fail."""
    base = S.separation_table([4, 6], targets=("ip", "majand"), widths=("n",), depth3=(),
                              seeds=1, epochs=300)
    assert base["verdict"]["clauses"]["easy"]["status"] != "fails"
    real = T.TARGETS["majand"]
    monkeypatch.setitem(T.TARGETS, "majand", T.Target("majand", T.TARGETS["ip"].function,
                                                      "IP in disguise", "easy"))
    swapped = S.separation_table([4, 6], targets=("ip", "majand"), widths=("n",), depth3=(),
                                 seeds=1, epochs=300)
    assert swapped["verdict"]["clauses"]["easy"]["status"] == "fails"
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
