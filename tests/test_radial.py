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


# ------------------------------------------------------------- issue 20 (E22) and issue 24

def _h_brute(W, d, m=400_000, seed=1):
    U = np.random.default_rng(seed).normal(size=(m, d))
    U /= np.linalg.norm(U, axis=1, keepdims=True)
    return R._zonotope_h(W, U)


def test_zonotope_range_exact_at_d2_and_a_bound_at_d3():
    # d = 2: exact, against a dense circle; random (not equally spaced) directions
    W = R.directions(7, 4, seed=3)[:, :2]
    W /= np.linalg.norm(W, axis=1, keepdims=True)
    lo, hi, how = R.zonotope_range(W)
    th = np.linspace(0, 2 * np.pi, 2_000_001)
    h = R._zonotope_h(W, np.column_stack([np.cos(th), np.sin(th)]))
    # (the grid's step is 3e-6 rad and h is 1-Lipschitz: the grid can only miss by that much)
    assert how.startswith("exact") and lo <= h.min() + 1e-12 and h.max() <= hi + 1e-12
    assert h.min() - lo < 1e-5 and hi - h.max() < 1e-5
    # d = 3: a certified bracket around every sampled value, within its tolerance
    W3 = R.directions(16, 3)
    lo, hi, how = R.zonotope_range(W3, tol=0.01)
    hs = _h_brute(W3, 3)
    assert lo <= hs.min() and hs.max() <= hi
    assert hs.min() - lo < 0.03 and hi - hs.max() < 0.03


def test_hat_certificate_bounds_every_error_and_can_fail():
    # an upper bound: never below the searched (lower-bound) error, and the formula
    # (c0 - 1) + r(1 + gamma h(u)) agrees with the network on random points
    prof = R.fit_ridge_profile("hat", 3, 0.05)
    net = R.RidgeNet(prof, R.directions(32, 3))
    cert = R.hat_certificate(net, tol=0.005)
    X = R.dense_sample(3, 20000, seed=5)
    err = np.abs(net(X) - R.get_target("hat")(X))
    se = R.sup_error(net, net.gradient, R.get_target("hat"), X)
    assert se["sup_is"].startswith("lower bound")
    assert err.max() <= se["sup"] <= cert["certified_sup"] <= se["sup"] + 0.02
    # negative control: 2 directions are a bad zonotope; the certificate says so (> 0.2)
    bad = R.hat_certificate(R.RidgeNet(prof, R.directions(2, 3)), tol=0.005)
    assert bad["certified_sup"] > 0.2
    # not a one-knot profile (cos): no certificate
    assert R.hat_certificate(R.RidgeNet(R.fit_ridge_profile("cos", 3, 0.05),
                                        R.directions(8, 3))) is None


def test_search_scales_with_d_and_cap_artefacts_are_named():
    assert R.search_effort(32)["points"] > R.search_effort(2)["points"]
    assert R.search_effort(32)["starts"] > R.search_effort(2)["starts"]
    out = R.ridge_depth2("hat", 16, [0.05], max_directions=4, points=300)[0.05]
    assert out["width"] is None and "cap artefact" in out["cap_artefact"]
    ok = R.ridge_depth2("hat", 2, [0.1], max_directions=64)[0.1]
    assert ok["certified"] and ok["certified_sup"] <= 0.1
    assert "not SES Theorem 5" in R.get_target("hat").description


def test_figure_names_things_in_words_and_separates_the_metrics(tmp_path):
    # issue 24: radial.png had raw identifiers and put sup-error and L2 widths on one axis
    from experiments import radial
    rows = [{"target": "hat", "d": 2, "eps": e, "method": "ridge", "depth": 2, "width": 8,
             "certified": True} for e in (0.2, 0.1)]
    rows.append({"target": "cos", "d": 2, "eps": 0.1, "method": "trained", "depth": 2,
                 "width": 4, "l2_by_width": {"1": 0.3, "2": 0.2, "4": 0.05},
                 "constant_l2": 0.18, "max_width": 4})
    rec = {"rows": rows, "settings": {"eps": [0.1, 0.2], "max_directions": 64}}
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    seen = {}
    real_close = plt.close

    def grab(fig=None):
        if fig is not None and hasattr(fig, "axes"):
            seen["fig"] = fig
        return real_close(fig)
    try:
        plt.close = grab
        radial.plot(rec, tmp_path / "r.png")
    finally:
        plt.close = real_close
    fig = seen["fig"]
    texts = [t.get_text() for ax in fig.axes for t in ax.get_legend().get_texts()]
    texts += [ax.get_title() for ax in fig.axes] + [fig._suptitle.get_text()]
    blob = " ".join(texts)
    for raw in ("eps", "t4", "ses_d3", "hat,", "ridge)"):
        assert raw not in blob, raw
    a1, _, a3 = fig.axes
    assert "sup error" in a1.get_ylabel() and "L2" in a3.get_ylabel()
    # the panel's accuracy is the one the figure's text names
    e_fix = rec["settings"]["eps"][1]
    assert f"<= {e_fix}" in a1.get_title()
