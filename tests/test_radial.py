"""E22 (networks.separation.radial, experiments/radial.py): the ridge kernel against Monte Carlo,
the ridge network equals its SigmaNetwork, measured errors, a negative control, the script."""

import json

import numpy as np
import pytest

from networks.separation import radial as R


@pytest.mark.parametrize("d", [2, 3, 5, 12])
def test_ridge_kernel_matches_monte_carlo(d):
    from circuits.utils.rng import uniform_sphere as random_sphere

    W = random_sphere(200_000, d, seed=d)
    for r, t in [(0.7, 0.1), (1.0, 0.0), (0.5, 0.3), (0.2, 0.5)]:
        mc = np.maximum(r * W[:, 0] - t, 0.0)
        assert R.ridge_kernel(r, t, d) == pytest.approx(mc.mean(), abs=4 * mc.std() / 447 + 1e-12)


def test_hat_profile_is_the_zonotope_norm():
    """For φ = 1 - r the LP finds one knot at 0: p(t) = 1 - |t|/E|s|."""
    from scipy.special import gammaln
    import math

    for d in (2, 3, 10):
        p = R.fit_ridge_profile("hat", d, 0.01)
        kappa = math.exp(gammaln(d / 2) - gammaln((d + 1) / 2)) / math.sqrt(math.pi)   # E|s|
        # least Σ|γ| within tolerance 0.01 shrinks the slope by at most the tolerance
        assert p.knots.tolist() == [0.0] and -1.0 <= p.gamma[0] * kappa <= -0.99 + 1e-9
        assert p.fit_error <= 0.01


def test_ridge_network_equals_sigma_network_and_meets_eps():
    out = R.ridge_depth2("cos", 4, [0.2, 0.1], max_directions=2048, points=500)
    for eps, rec in out.items():
        assert rec["width"] is not None and rec["sup"] <= eps
        assert rec["adversarial"] >= 0 and rec["dense"] <= rec["sup"]
    prof = R.fit_ridge_profile("cos", 4, 0.025)
    rn = R.RidgeNet(prof, R.directions(64, 4, seed=1))
    net = rn.network()
    X = R.dense_sample(4, 300, seed=2)
    np.testing.assert_allclose(rn(X), net(X), atol=1e-12)
    assert net.depth == 2 and net.widths[0] == rn.width


def test_adversarial_search_finds_larger_errors_than_a_sparse_sample():
    prof = R.fit_ridge_profile("hat", 16, 0.01)
    rn = R.RidgeNet(prof, R.directions(32, 16, seed=0))
    X = R.dense_sample(16, 50, seed=0)
    se = R.sup_error(rn, rn.gradient, R.get_target("hat"), X)
    assert se["adversarial"] > se["dense"]


def test_negative_control_too_few_directions_miss_eps():
    """With 2 directions in d = 16 the same construction is far above ε: the width search is not
    trivially satisfied."""
    prof = R.fit_ridge_profile("hat", 16, 0.01)
    rn = R.RidgeNet(prof, R.directions(2, 16, seed=0))
    X = R.dense_sample(16, 500, seed=0)
    assert R.sup_error(rn, rn.gradient, R.get_target("hat"), X)["sup"] > 0.2
    assert R.ridge_depth2("hat", 16, [0.05], max_directions=4, points=300)[0.05]["width"] is None


def test_composition_depth3_certified_and_measured():
    for tgt in ("hat", "cos"):
        c = R.composition_depth3(tgt, 6, 0.1, points=1000)
        assert c["depth"] == 3 and c["sup"] <= c["bound"] <= 0.1 + 1e-12


def test_ses_d3_route():
    out = R.ses_ridge_d3("hat", [0.2], max_directions=1024, points=500)
    assert out[0.2]["width"] is not None and out[0.2]["sup"] <= 0.2


def test_script_end_to_end(tmp_path):
    from experiments import radial

    out = tmp_path / "r"
    assert radial.main(["--dims", "2,3", "--eps", "0.2,0.1", "--t4-dims", "2",
                        "--train-dims", "2", "--max-train-width", "4", "--epochs", "50",
                        "--max-directions", "256", "--points", "300", "--no-progress",
                        "--out", str(out)]) == 0
    rec = json.loads((out / "radial.json").read_text())
    assert rec["format"] == radial.FORMAT
    png = (out / "radial.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 2000
    methods = {(r["target"], r["d"], r["method"]) for r in rec["rows"]}
    assert ("hat", 3, "ses_d3") in methods and ("t4", 2, "depth3") in methods
    assert ("cos", 2, "trained") in methods and ("hat", 2, "ridge") in methods
    for r in rec["rows"]:
        assert {"target", "d", "eps", "method", "depth", "width"} <= set(r)
        if r["method"] != "trained" and r["width"] is not None:
            assert r["sup"] <= r["eps"]


@pytest.mark.parametrize("argv", [["--dims", "1,4"], ["--eps", "0.2,2"], ["--targets", "sin"],
                                  ["--max-directions", "0"], ["--dims", "a"]])
def test_script_rejects_bad_options(argv, capsys):
    from experiments import radial

    with pytest.raises(SystemExit) as exc:
        radial.parse_args(argv)
    assert exc.value.code == 2
    assert "error:" in capsys.readouterr().err
