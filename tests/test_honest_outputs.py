"""Issue 20/24: E21's polynomial width rules and figures a reviewer accepts."""

import json

import pytest

from networks.separation.ceiling import default_widths


def test_e21_widths_are_the_polynomial_rules_not_n_times_4_to_the_k():
    assert default_widths(4) == [4, 16, 64]          # was [4, 16, 64, 256]: memorises 4^4 points
    assert default_widths(5) == [5, 25, 125]
    assert default_widths(10) == [10, 100]            # n³ only where it fits


def test_ceiling_figure_keeps_rho_on_a_unit_axis_and_ceilings_in_a_table(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt

    from experiments import ceiling

    rows = [{"n": n, "width": w, "depth": 2, "labels": lab, "rho": 0.3, "bound": 500.0 * w}
            for n in (4, 5) for w in default_widths(n) for lab in ("ip", "random")]
    rows += [{"n": n, "width": n + 1, "depth": 3, "labels": "ip", "rho": 1.0, "bound": None}
             for n in (4, 5)]
    seen = {}
    close = plt.close

    def keep(fig=None):
        seen["fig"] = fig
        return close(fig)

    monkeypatch.setattr(plt, "close", keep)
    ceiling.plot({"rows": rows, "settings": {"activation": "relu"}}, tmp_path / "c.png")
    ax, tab = seen["fig"].axes
    assert ax.get_yscale() == "linear" and ax.get_ylim()[1] <= 1.1
    assert ax.get_xticks().tolist() == [4, 5]
    assert "vacuous" in tab.get_title()
    assert tab.tables and "2e+03" in " ".join(c.get_text().get_text()
                                             for c in tab.tables[0].get_celld().values())
    labels = [t.get_text() for t in seen["fig"].legends[0].get_texts()]
    assert "depth 2 trained, width n², IP" in labels  # width rules in words, not "16n"


def _capture_figure(monkeypatch):
    import matplotlib.pyplot as plt

    seen = {}
    close = plt.close

    def keep(fig=None):
        seen["fig"] = fig
        return close(fig)

    monkeypatch.setattr(plt, "close", keep)
    return seen


def test_sweep_figure_has_integer_n_ticks_and_a_rho_scatter(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    from pathlib import Path

    from experiments.reduction import plot_sweep

    rows = json.loads((Path(__file__).resolve().parents[1] / "docs" / "figures"
                       / "reduction_sweep.json").read_text())["rows"]
    seen = _capture_figure(monkeypatch)
    plot_sweep(rows, tmp_path / "s.png")
    ax_n, ax_rho = seen["fig"].axes[:2]
    ticks = ax_n.get_xticks()
    assert all(float(t).is_integer() for t in ticks) and len(ticks) == len({r["n"] for r in rows})
    assert not ax_rho.get_lines() and len(ax_rho.collections) == 3      # points, no lines


def test_reduction_figure_speaks_words_with_one_colour_per_meaning(tmp_path, monkeypatch):
    """House style: every margin of M_k in IP's colour, the network alone and the references in
    other colours; one legend below the axes, in words."""
    pytest.importorskip("matplotlib")
    from matplotlib.colors import to_rgba

    from experiments._style import target_colour
    from experiments.reduction import plot_report
    from networks.separation.reduction_run import reduction_run

    run = reduction_run(3, 8, "relu", seed=0, ball_points=0, circuit=False)
    seen = _capture_figure(monkeypatch)
    plot_report(run.report, tmp_path / "r.png")
    fig = seen["fig"]
    texts = []
    for ax in fig.axes:
        texts += [ax.get_xlabel(), ax.get_ylabel(), ax.get_title()]
        assert ax.get_legend() is None
    assert len(fig.legends) == 1
    texts += [t.get_text() for t in fig.legends[0].get_texts()]
    joined = " ".join(texts)
    assert "_{" not in joined and "Ñ_q" not in joined and "H·M_k" not in joined
    _, ax2 = fig.axes
    handles, labels = ax2.get_legend_handles_labels()
    colour = {lab: to_rgba(h.get_color()) for h, lab in zip(handles, labels)}
    scan = [lab for lab in labels if lab.startswith("worst margin")]
    assert scan and {colour[lab] for lab in scan} == {to_rgba(target_colour("ip"))}
    others = {colour[lab] for lab in labels if lab not in scan}
    assert to_rgba(target_colour("ip")) not in others
