"""The plots of the rule metrics (:mod:`xplique_ext.rules.plots`): FiRe's isolines, the
alpha-beta curves and the bars of rule measures."""

import pytest


def test_plots_run():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from xplique_ext.rules import plot_alpha_beta, plot_fire_isolines

    ax = plot_fire_isolines((1.0, 4), [2, 6], {"orange": (0.5, 8), "green": (1.5, 1)})
    assert len(ax.get_legend().get_texts()) == 2
    ax = plot_alpha_beta((1, 4, 16), (1, 4))
    assert len(ax.get_lines()) == 7  # 6 curves and alpha = 1
    plt.close("all")


def test_plot_rule_measures_draws_one_bar_per_rule_and_measure():
    import matplotlib

    matplotlib.use("Agg")
    from xplique_ext.rules import RuleMetrics, load_voyage, plot_rule_measures

    rules, data = load_voyage("unordered")
    frame = RuleMetrics(rules).details(data)
    ax = plot_rule_measures(frame, ["Acc", "Cov"])
    heights = [patch.get_height() for patch in ax.patches]
    assert heights == pytest.approx(frame["Acc"].tolist() + frame["Cov"].tolist())
    assert [t.get_text() for t in ax.get_xticklabels()] == frame["rule"].tolist()
    with pytest.raises(ValueError, match="`measures` not in the table: \\['Nope'\\]"):
        plot_rule_measures(frame, ["Acc", "Nope"])
