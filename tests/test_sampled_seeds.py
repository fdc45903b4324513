"""Sampled mode (issue 22, E24) with several seeds per cell and several widths: the Bonferroni
verdict over seeds (against exact values at small n, with a control that fails), the table, the
width rules of `depthsep separate`, and resuming a one-seed file with more seeds."""

import json

import numpy as np
import pytest

from embeddings import HardInstance
from networks.separation import sampled as S
from networks.separation.ceiling import exact_correlation
from networks.separation.targets import target_table


def _fake(mean, var=0.5, count=10 ** 6, span=8.0, P=1.0, delta=0.05):
    """An estimate with Cov(S, h) = ``mean``: E[S] = E[h] = 0 known exactly (zero-width
    intervals), so the centred half-width is E[S·h]'s at δ/3."""
    exact = {"mean": 0.0, "var": 0.0, "count": count, "span": 0.0}
    return {"delta": delta, "path_norm": P, "S": dict(exact), "h": dict(exact),
            "rho_h": {"mean": mean, "var": var, "count": count, "span": span}}


def test_one_seed_is_the_plain_verdict():
    n = 6
    inst = HardInstance(n, seed=0)
    G = inst.embedding.generator
    st = S.train_sampled(n, n, "majand", generator=G, steps=60, grid=16, seed=1)
    est = S.estimate(st.net, "majand", n=n, generator=G, pairs=20_000, seed=2)
    v, sv = S.verdict(n, est), S.seeds_verdict(n, [est])
    assert sv["delta_per_net"] == est["delta"] and sv["certified"] == v["certified"]
    assert sv["best"]["ci_per_norm"] == pytest.approx(v["ci_per_norm"], rel=1e-12)
    assert sv["median"]["cov_per_norm"] == pytest.approx(v["cov_per_norm"], rel=1e-12)


def test_the_correction_can_withdraw_a_claim():
    """The control: a net certified at level δ alone is not certified as the best of 3 at δ/3."""
    n, d = 20, 0.05
    K = S.centred_ceiling_per_norm(n)
    t1 = S.empirical_bernstein(0, 0.5, 10 ** 6, 8.0, d / 3)           # E[S·h] at δ/3
    t3 = S.empirical_bernstein(0, 0.5, 10 ** 6, 8.0, d / 9)           # ... and at δ/(3·3)
    assert t3 > t1
    good = _fake(K + (t1 + t3) / 2)
    assert S.verdict(n, good)["certified"]
    assert S.seeds_verdict(n, [good])["certified"]
    sv = S.seeds_verdict(n, [_fake(0.0), good, _fake(-0.01)])
    assert sv["best_index"] == 1 and not sv["certified"]
    assert sv["best"]["ci_per_norm"] == pytest.approx(t3)
    assert not S.seeds_verdict(n, [good], nets=3)["certified"]          # all-cells correction
    # the median: [median of lower, median of upper]; certified only if half of the nets beat K
    sv = S.seeds_verdict(n, [_fake(0.5), _fake(0.5), _fake(0.0)])
    assert sv["certified"] and sv["median_certified"]
    assert sv["median"]["lower"] == pytest.approx(0.5 - t3)
    sv = S.seeds_verdict(n, [_fake(0.5), _fake(0.0), _fake(0.0)])
    assert sv["certified"] and not sv["median_certified"]
    with pytest.raises(Exception, match="estimates"):
        S.seeds_verdict(n, [])
    with pytest.raises(Exception, match="nets"):
        S.seeds_verdict(n, [good, good], nets=1)


def _shrunk(est, f):
    """The same estimate, for f > 1 with an interval of f times less than the variance term
    alone (variance / f², range term dropped)."""
    if f == 1:
        return est
    return dict(est, **{k: dict(est[k], var=est[k]["var"] / f ** 2, span=0.0)
                        for k in ("rho_h", "S", "h")})


def test_best_and_median_intervals_cover_the_exact_values():
    """Three nets at n = 4 with exact ρ_h: over 25 independent repetitions the best net's
    corrected interval holds its exact value and the median's interval the exact median, every
    time; intervals narrower than the normal one miss (the check can fail)."""
    n = 4
    inst = HardInstance(n, seed=0)
    G = inst.embedding.generator
    Y = target_table("majand", n)
    ES = float(np.mean(1 - 2 * Y))
    nets = [S.train_sampled(n, 6, "majand", generator=G, steps=40, grid=8, seed=s).net
            for s in range(3)]
    exact = []
    for net in nets:
        rho = exact_correlation(net.to_network(), inst, Y)["rho"]
        from networks.reduction.product import value_table

        rho_h = rho - ES * (1 - 2 * net.u0)                          # E[S·h]
        Eh = -2.0 * (float(np.mean(value_table(net.to_network(), inst))) - net.u0)
        exact.append((rho_h - ES * Eh) / S.path_norm(net))            # Cov(S, h)/P
    med = float(np.median(exact))
    miss = {1: 0, 6: 0}
    trials = 25
    for t in range(trials):
        ests = [S.estimate(net, "majand", n=n, generator=G, pairs=3000, chunk=1000,
                           seed=1000 + 10 * t + i) for i, net in enumerate(nets)]
        for f in miss:
            sv = S.seeds_verdict(n, [_shrunk(e, f) for e in ests])
            b = sv["best"]
            ok = (b["lower"] <= exact[sv["best_index"]] <= b["upper"]
                  and sv["median"]["lower"] <= med <= sv["median"]["upper"])
            miss[f] += not ok
    assert miss[1] == 0
    assert miss[6] >= trials // 4


def test_experiment_seeds_widths_and_resume_from_one_seed(tmp_path):
    from experiments import sampled as E

    base = ["--n", "6", "--steps", "20", "--grid", "8", "--pairs", "4000", "--targets", "majand",
            "--out", str(tmp_path), "--no-progress", "--tries", "1"]
    assert E.main(base) == 0
    one = json.loads((tmp_path / "sampled.json").read_text())
    # a version-1 file (keys and rows without a seed) is read as seed = --seed
    old = dict(one, version=1, rows={k.rsplit("|seed=", 1)[0]: {x: y for x, y in r.items()
                                                                if x != "seed"}
                                     for k, r in one["rows"].items()})
    (tmp_path / "sampled.json").write_text(json.dumps(old))
    assert E.main(base + ["--seeds", "2", "--widths", "n,n^2"]) == 0
    doc = json.loads((tmp_path / "sampled.json").read_text())
    assert sorted(doc["rows"]) == sorted(f"n=6|majand|w={w}|lam=0.003|seed={s}"
                                         for w in ("n", "n^2") for s in (0, 1))
    k0 = "n=6|majand|w=n|lam=0.003|seed=0"
    assert doc["rows"][k0]["estimate"] == one["rows"][k0]["estimate"]      # kept, not redone
    assert {r["width"] for r in doc["rows"].values()} == {6, 36}
    assert [(e["width_rule"], e["seeds"]) for e in doc["table"]] == [("n", [0, 1]),
                                                                     ("n^2", [0, 1])]
    e = doc["table"][0]
    assert e["delta_per_net"] == pytest.approx(0.025) and e["best"]["seed"] in (0, 1)
    assert e["median"]["lower"] <= e["median"]["cov_per_norm"] <= e["median"]["upper"]
    assert doc["easy_nets"] == 4 and "Bonferroni" in doc["multiple_choice"]
    md = (tmp_path / "sampled_table.md").read_text()
    assert md.count("\n| 6 |") == 2
    assert (tmp_path / "sampled.png").stat().st_size > 0
    # a second seed of the same cell is a different net
    r0, r1 = doc["rows"][k0], doc["rows"]["n=6|majand|w=n|lam=0.003|seed=1"]
    assert r0["estimate"]["path_norm"] != r1["estimate"]["path_norm"]


def test_options_use_the_shared_parsers(capsys):
    from experiments import sampled as E

    p = E.build_parser()
    args = p.parse_args(["--n", "14..18,24", "--widths", "n,n^2,2n+1"])
    ns, rules, _, _ = E._parse_lists(args, p)
    assert ns == [14, 16, 18, 24] and rules == ["n", "n^2", "2n+1"]
    for bad, name in ((["--widths", "n^x"], "--widths"), (["--n", "0"], "--n"),
                      (["--seeds", "0"], "--seeds"), (["--n", "a..b"], "--n"),
                      (["--blas-threads", "-1"], "--blas-threads")):
        with pytest.raises(SystemExit) as ex:
            E.main(bad + ["--out", "unused"])
        assert ex.value.code == 2 and name in capsys.readouterr().err
