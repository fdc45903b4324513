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
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "depth 2, width n², IP" in labels          # width rules in words, not "16n"
