"""compare(): finds a planted difference, keeps its false positives at alpha, Holm across
pairs, proportions through the permutation test, a plot."""

from __future__ import annotations

import warnings

import matplotlib
import numpy as np
import pandas as pd
import pytest

from xplique_ext.commons.metric import BaseMetric
from xplique_ext.commons.warnings import DegenerateSettingWarning, UndefinedScoreWarning
from xplique_ext.compare import ComparisonFrame, compare, compare_scores

matplotlib.use("Agg")


class Scores(BaseMetric):
    """A metric whose 'explanations' are the per-input scores themselves."""

    def __init__(self, higher_is_better=True, proportion=False, seed=None):
        self.higher_is_better = higher_is_better
        self.proportion = proportion
        self.seed = seed

    def _is_proportion(self):
        return self.proportion

    def detailed_evaluate(self, explanations):
        return np.asarray(explanations, dtype=float)


def _input_effects(rep, n=40):
    # inputs differ a lot (the per-input effect), explainers a little: a paired design
    rng = np.random.default_rng([3, rep])
    return rng.normal(0, 1.0, n), rng


def test_compare_finds_a_planted_shift():
    base, rng = _input_effects(0)
    good = base + 0.3 + rng.normal(0, 0.3, base.size)
    bad = base + rng.normal(0, 0.3, base.size)
    table = compare(Scores(), {"good": good, "bad": bad}, n_resamples=999)
    assert isinstance(table, ComparisonFrame)
    pair = table.pairs.loc["good - bad"]
    assert pair["differs"] and pair["better"] == "good"
    assert pair["p_holm"] < 0.01
    assert pair["test"] == "Wilcoxon signed-rank"
    assert pair["ci_low"] <= 0.3 <= pair["ci_high"]
    assert pair["estimate"] == pytest.approx(np.mean(good - bad))
    ranks = table.explainers["rank"]
    assert ranks["good"] == 1 and ranks["bad"] == 2
    # the unpaired intervals overlap (inputs vary by 1.0): only the paired test sees it
    e = table.explainers
    assert e.loc["good", "ci_low"] < e.loc["bad", "ci_high"]


def test_planted_shift_is_found_in_most_repetitions():
    found = 0
    for rep in range(50):
        base, rng = _input_effects(rep)
        t = compare_scores(
            {"a": base + 0.3 + rng.normal(0, 0.3, 40), "b": base + rng.normal(0, 0.3, 40)},
            higher_is_better=True,
            n_resamples=199,
            seed=rep,
        )
        found += bool(t.pairs["differs"].iloc[0])
    assert found >= 45, found  # power ~0.99 at this shift


def test_false_positives_at_most_alpha_over_200_null_repetitions():
    positives = family = 0
    for rep in range(200):
        base, rng = _input_effects(rep)
        scores = {k: base + rng.normal(0, 0.3, 40) for k in ("a", "b", "c")}
        t = compare_scores(scores, higher_is_better=True, n_resamples=199, seed=rep)
        pairs = t.pairs
        positives += bool(pairs.loc["a - b", "p_value"] <= 0.05)  # one pair, no correction
        family += bool(pairs["differs"].any())  # three pairs under Holm
    assert positives / 200 <= 0.07, positives / 200
    assert family / 200 <= 0.07, family / 200


def test_proportions_use_the_paired_permutation_test():
    rng = np.random.default_rng(2)
    hit_a = (rng.random(80) < 0.8).astype(float)
    hit_b = np.where(rng.random(80) < 0.5, hit_a, 0.0)  # B misses where A hits, half the time
    table = compare(Scores(proportion=True), {"A": hit_a, "B": hit_b}, n_resamples=999)
    pair = table.pairs.iloc[0]
    assert pair["test"] == "paired permutation (sign-flip)"
    assert pair["differs"] and pair["better"] == "A"
    assert table.explainers["method"].str.startswith("Wilson").all()
    # the sign-flip test on a difference of +1 in k pairs and 0 elsewhere is the exact
    # two-sided sign test: p = 2 * 0.5**k when every difference has the same sign
    few = np.array([1.0, 1, 1, 1, 1, 0, 0])
    t = compare_scores(
        {"A": few, "B": np.zeros(7)}, higher_is_better=True, proportion=True, n_resamples=999
    )
    assert t.pairs["p_value"].iloc[0] == pytest.approx(2 * 0.5**5)


def test_direction_ties_holm_and_indistinguishable():
    base = np.linspace(0, 1, 30)
    rng = np.random.default_rng(0)
    scores = {"low": base, "lower too": base + rng.normal(0, 1e-3, 30), "high": base + 1}
    t = compare_scores(scores, higher_is_better=False, n_resamples=199)
    ranks = t.explainers["rank"]
    assert ranks["high"] == 3 and set(ranks[["low", "lower too"]]) == {1.0, 2.0}
    assert t.indistinguishable() == [("low", "lower too")]
    assert t.pairs.loc["low - high", "better"] == "low"
    from xplique_ext.commons.uncertainty import holm

    np.testing.assert_allclose(t.pairs["p_holm"], holm(t.pairs["p_value"]))
    # identical scores: no difference at all, p = 1, shared rank
    same = compare_scores({"x": base, "y": base.copy()}, higher_is_better=True, n_resamples=199)
    assert same.pairs["p_value"].iloc[0] == 1.0
    assert list(same.explainers["rank"]) == [1.0, 1.0]


def test_undefined_scores_are_left_out_pairwise():
    a = np.array([0.1, 0.5, np.nan, 0.9, 0.3, 0.4])
    b = np.array([0.2, np.nan, 0.3, 0.8, 0.1, 0.2])
    with pytest.warns(UndefinedScoreWarning):
        t = compare(Scores(), {"a": a, "b": b}, n_resamples=199)
    pair = t.pairs.iloc[0]
    assert (pair["n"], pair["n_undefined"]) == (4, 2)
    assert pair["estimate"] == pytest.approx(np.mean([-0.1, 0.1, 0.2, 0.2]))
    assert t.explainers.loc["a", "n_undefined"] == 1


def test_same_seed_same_table_and_tidy_columns():
    base, rng = _input_effects(1)
    scores = {"a": base, "b": base + rng.normal(0.1, 0.2, base.size)}
    one = compare(Scores(seed=5), scores, n_resamples=199)
    two = compare(Scores(seed=5), scores, n_resamples=199)
    pd.testing.assert_frame_equal(pd.DataFrame(one), pd.DataFrame(two))
    assert list(one["kind"]) == ["explainer", "explainer", "pair"]
    assert {"estimate", "ci_low", "ci_high", "rank", "p_value", "p_holm", "differs"} <= set(
        one.columns
    )
    assert isinstance(one.head(2), ComparisonFrame)


def test_plot_draws_intervals_and_marks_indistinguishable_pairs():
    import matplotlib.pyplot as plt

    base = np.linspace(0, 1, 30)
    noise = np.random.default_rng(0).normal(0, 1e-3, 30)
    t = compare_scores(
        {"a": base, "b": base + noise, "c": base + 1}, higher_is_better=True, n_resamples=199
    )
    ax = t.plot()
    assert [label.get_text() for label in ax.get_yticklabels()][0] == "c"
    assert len(ax.lines) >= 1 and "do not differ" in ax.get_title()
    plt.close("all")


def test_bad_inputs_are_refused():
    with pytest.raises(TypeError, match="explanations_by_name"):
        compare(Scores(), [np.zeros(3)])
    with pytest.raises(ValueError, match="at least one"):
        compare(Scores(), {})
    with pytest.raises(TypeError, match="keys"):
        compare(Scores(), {1: np.zeros(3)})
    # 'a - b' against 'c' and 'a' against 'b - c' would both label their pair 'a - b - c'
    for names in (("a - b", "c"), ("a", "b - c")):
        with pytest.raises(ValueError, match=r"keys must not contain ' - '.*got '(a - b|b - c)'"):
            compare_scores(dict.fromkeys(names, np.zeros(3)), higher_is_better=True)
    assert compare_scores(
        {"a-b": np.arange(3.0), "c": np.arange(3.0)}, higher_is_better=True, n_resamples=199
    ).pairs.index.tolist() == ["a-b - c"]
    with pytest.raises(TypeError, match="detailed_evaluate"):
        compare(object(), {"a": np.zeros(3)})
    with pytest.raises(TypeError, match="metric instance .* got the class Scores"):
        compare(Scores, {"a": np.zeros(3)})
    with pytest.raises(TypeError, match="higher_is_better"):
        compare(Scores(higher_is_better=None), {"a": np.zeros(3)})
    with pytest.raises(ValueError, match="same inputs"):
        compare_scores({"a": np.zeros(3), "b": np.zeros(4)}, higher_is_better=True)
    with pytest.raises(ValueError, match="shape"):
        compare_scores({"a": np.zeros((3, 2))}, higher_is_better=True)
    with pytest.raises(ValueError, match="alpha"):
        compare_scores({"a": np.zeros(3)}, higher_is_better=True, alpha=1.5)
    with pytest.raises(ValueError, match="test"):
        compare_scores({"a": np.zeros(3)}, higher_is_better=True, test="ttest")
    with pytest.raises(TypeError, match="higher_is_better"):
        compare_scores({"a": np.zeros(3)}, higher_is_better="yes")
    scores = {"a": np.array([0.1, 0.2, 0.4])}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        one = compare_scores(scores, higher_is_better=True, n_resamples=199)
    assert len(one) == 1 and one.pairs.empty
    np.testing.assert_array_equal(scores["a"], [0.1, 0.2, 0.4])


def test_infinite_scores_warn_with_the_reason_and_leave_nan_not_numbers():
    base = np.linspace(0.0, 1.0, 20)
    with_inf = base.copy()
    with_inf[3] = np.inf
    with pytest.warns(
        UndefinedScoreWarning,
        match=r"score: infinite scores \(A: 1 of 20\): the intervals, ranks and "
        r"paired tests that involve them are undefined \(NaN\)",
    ):
        t = compare_scores(
            {"A": with_inf, "B": base, "C": base + 0.5}, higher_is_better=True, n_resamples=199
        )
    a = t.explainers.loc["A"]
    assert a["estimate"] == np.inf and np.isnan(a["ci_low"]) and np.isnan(a["rank"])
    assert list(t.explainers["rank"].dropna()) == [1.0, 2.0]  # C, B: ranked among finite
    pair = t.pairs.loc["A - B"]
    assert np.isnan(pair["p_value"]) and not pair["differs"] and pd.isna(pair["better"])
    assert "infinite differences" in pair["test"]
    assert t.pairs.loc["B - C", "differs"]  # pairs without infinities are still tested
    with warnings.catch_warnings():  # finite scores: no warning at all
        warnings.simplefilter("error", UndefinedScoreWarning)
        compare_scores({"B": base, "C": base + 0.5}, higher_is_better=True, n_resamples=199)


def test_plot_refuses_what_is_not_axes():
    t = compare_scores(
        {"a": np.linspace(0, 1, 10), "b": np.linspace(0, 2, 10)},
        higher_is_better=True,
        n_resamples=199,
    )
    with pytest.raises(TypeError, match=r"^`ax` must be matplotlib axes or None, got 'x' \(str\)$"):
        t.plot(ax="x")


def test_proportion_scores_must_be_zero_or_one_and_few_inputs_warn_once():
    import warnings

    from xplique_ext.commons.warnings import DegenerateSettingWarning

    with pytest.raises(
        ValueError,
        match=r"`proportion` must be False for scores other than 0 "
        r"and 1.*`scores_by_name\['B'\]`",
    ):
        compare_scores(
            {"A": np.array([1.0, 0, 1]), "B": np.array([1.0, 0.5, 0])},
            higher_is_better=True,
            proportion=True,
        )
    # a proportion metric whose scores are not all 0/1 (a PERCY sentence scoring 0.5) is
    # compared as a plain mean by compare, as summary does
    table = compare(
        Scores(proportion=True), {"A": np.r_[np.ones(12), 0.5], "B": np.zeros(13)}, n_resamples=199
    )
    assert table.pairs["test"].iloc[0] == "Wilcoxon signed-rank"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compare_scores(
            {"A": np.arange(6.0), "B": np.arange(6.0) ** 2}, higher_is_better=True, n_resamples=199
        )
    few = [w for w in caught if issubclass(w.category, DegenerateSettingWarning)]
    assert len(few) == 1 and "n=6" in str(few[0].message)


def test_compare_scores_refuses_empty_arrays():
    with pytest.raises(ValueError, match=r"`scores_by_name\['A'\]` must be a non-empty"):
        compare_scores({"A": [], "B": []}, higher_is_better=True)


def test_compare_scores_all_nan_pair_still_gives_nan_row():
    table = compare_scores(
        {"A": np.full(4, np.nan), "B": np.full(4, np.nan)}, higher_is_better=True, n_resamples=100
    )
    pair = table.pairs.iloc[0]
    assert np.isnan(pair["estimate"]) and pair["n"] == 0 and pair["n_undefined"] == 4


def test_compare_scores_refuses_misaligned_pandas_indexes():
    # compared by position, input 0 of A would meet input 19 of B: a wrong estimate
    b = np.arange(20.0)
    with pytest.raises(ValueError, match="pandas index of 'B' differs"):
        compare_scores(
            {"A": pd.Series(b + 1), "B": pd.Series(b[::-1], index=range(19, -1, -1))},
            higher_is_better=True,
            n_resamples=100,
        )
    same = compare_scores(
        {"A": pd.Series(b + 1), "B": pd.Series(b)}, higher_is_better=True, n_resamples=100
    )
    assert same.pairs["estimate"].iloc[0] == pytest.approx(1.0)


def test_compare_scores_text_scores_name_the_key():
    with pytest.raises(TypeError, match=r"`scores_by_name\['A'\]` must be an array of numbers"):
        compare_scores({"A": ["a", "b"]}, higher_is_better=True)


class _Scores(Scores):
    """A metric class, passed where an instance is expected."""


def test_compare_scores_refuses_a_huge_n_resamples():
    # refused by its declared range, before NumPy would try to allocate 146 TiB
    with pytest.raises(ValueError, match=r"`n_resamples` must be in \[100, 1000000\]"):
        compare_scores(
            {"A": np.arange(20.0), "B": np.zeros(20)}, higher_is_better=True, n_resamples=10**12
        )


def test_compare_with_a_metric_class_says_so():
    with pytest.raises(TypeError, match="`metric` must be a metric instance.*class _Scores"):
        compare(_Scores, {"A": np.zeros(3)})


def test_compare_scores_equal_infinities_are_undefined_differences():
    import warnings

    a = np.r_[np.arange(10.0), -np.inf]
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # no invalid value in subtract
        pair = compare_scores(
            {"A": a, "B": a + 0.0}, higher_is_better=True, n_resamples=100
        ).pairs.iloc[0]
    # inf - inf is an undefined difference: counted in n_undefined, not a NaN p-value
    assert pair["n"] == 10 and pair["n_undefined"] == 1 and pair["p_value"] == 1.0


def _one_outlier_against_a():
    """20 of 21 paired differences favour A, one outlier of -10 turns the mean to B."""
    b = np.linspace(0.0, 1.0, 21)
    d = np.linspace(0.1, 0.5, 21)
    d[-1] = -10.0
    return b + d, b


@pytest.mark.parametrize("higher_is_better", [True, False])
def test_better_and_ranks_follow_the_signed_rank_test_not_the_mean(higher_is_better):
    a, b = _one_outlier_against_a()
    assert np.mean(a - b) < 0 and np.sum(a - b > 0) == 20
    table = compare_scores({"A": a, "B": b}, higher_is_better=higher_is_better)
    pair = table.pairs.loc["A - B"]
    assert pair["test"] == "Wilcoxon signed-rank" and pair["p_value"] < 0.001
    assert pair["estimate"] == pytest.approx(np.mean(a - b))  # the estimate stays the mean
    winner = "A" if higher_is_better else "B"
    loser = "B" if higher_is_better else "A"
    assert pair["differs"] and pair["better"] == winner
    ranks = table.explainers["rank"]
    assert ranks[winner] == 1 and ranks[loser] == 2
    assert list(table.explainers.index) == [winner, loser]


def test_the_permutation_test_reads_its_better_from_the_mean():
    outcomes_a = np.array([1.0] * 15 + [0.0] * 5)
    outcomes_b = np.array([0.0] * 15 + [1.0] * 5)
    table = compare_scores(
        {"A": outcomes_a, "B": outcomes_b}, higher_is_better=False, proportion=True
    )
    pair = table.pairs.loc["A - B"]
    assert pair["test"].startswith("paired permutation") and pair["differs"]
    assert pair["better"] == "B"  # fewer 1s: lower is better
    assert table.explainers["rank"].to_dict() == {"B": 1.0, "A": 2.0}


def test_ranks_never_put_an_explainer_behind_one_it_is_better_than():
    a, b = _one_outlier_against_a()
    c = b - 5.0  # far behind both
    table = compare_scores({"C": c, "B": b, "A": a}, higher_is_better=True, n_resamples=999)
    better = table.pairs.set_index(["a", "b"])["better"]
    ranks = table.explainers["rank"]
    assert ranks.to_dict() == {"A": 1.0, "B": 2.0, "C": 3.0}
    for (first, second), winner in better.items():
        if winner is not None:
            loser = second if winner == first else first
            assert ranks[winner] < ranks[loser]


def test_equal_means_no_test_separates_share_the_smaller_rank():
    base = np.linspace(0.0, 1.0, 12)
    table = compare_scores(
        {"A": base, "B": base[::-1].copy(), "C": base - 3.0}, higher_is_better=True
    )
    assert table.explainers["rank"].to_dict() == {"A": 1.0, "B": 1.0, "C": 3.0}


def test_paired_tests_in_a_circle_fall_back_to_the_means_with_a_warning(monkeypatch):
    import xplique_ext.compare as module

    base = np.linspace(0.0, 1.0, 12)
    scores = {"A": base + 0.2, "B": base + 0.1, "C": base}
    # A beats B, B beats C, C beats A: no order agrees with every test
    directions = {("A", "B"): 1, ("B", "C"): 1, ("A", "C"): -1}
    real_test = module._paired_test

    def circular_test(d, test, n_resamples, seed):
        pair = next(k for k in directions if np.allclose(d, scores[k[0]] - scores[k[1]]))
        result = real_test(d, test, n_resamples, seed)
        return result._replace(p_value=0.0, direction=directions[pair])

    monkeypatch.setattr(module, "_paired_test", circular_test)
    with pytest.warns(DegenerateSettingWarning, match="the paired tests are not transitive"):
        table = compare_scores(scores, higher_is_better=True)
    assert table.pairs["better"].to_dict() == {"A - B": "A", "A - C": "C", "B - C": "B"}
    assert table.explainers["rank"].to_dict() == {"A": 1.0, "B": 2.0, "C": 3.0}


def test_compare_scores_refuses_reordered_series():
    a = pd.Series(np.arange(12.0), index=[f"i{k}" for k in range(12)])
    b = a[::-1] + 1.0
    with pytest.raises(ValueError, match="pandas inputs pair by their index"):
        compare_scores({"A": a, "B": b}, higher_is_better=True, n_resamples=100)
