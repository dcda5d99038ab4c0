"""Rule measures (:mod:`xplique_ext.rules.measures`): known values, identities,
the zero-division policy, counts only, huge cells, chi-square against SciPy and the
report's tables."""

import warnings
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import chi2_contingency

from tests.rules.rules_voyage_expected import (
    FIG12_PRINTED,
    TABLE_COLUMNS,
    TABLE_EXCEPTIONS,
    TABLES,
)
from xplique_ext.commons.warnings import UndefinedScoreWarning
from xplique_ext.rules import (
    MEASURES,
    evaluate_rules,
    load_voyage,
    rule_measures,
)
from xplique_ext.rules.measures import HIGHER_IS_BETTER, chi_square


def test_measures_known_values_and_identities():
    m = rule_measures(3, 1, 3, 5, n_classes=2)
    assert m["Acc"] == pytest.approx(0.75) and m["Err"] == pytest.approx(0.25)
    assert m["NegRel"] == pytest.approx(5 / 8) and m["Sens"] == pytest.approx(0.5)
    assert m["Spec"] == pytest.approx(5 / 6) and m["Cov"] == pytest.approx(4 / 12)
    assert m["Laplace"] == pytest.approx(4 / 6)
    assert m["Lift"] == pytest.approx(0.75 / 0.5)
    from scipy.stats import chi2_contingency

    stat, p, _, _ = chi2_contingency([[3, 1], [3, 5]], correction=False)
    assert m["Chi2"] == pytest.approx(stat) and m["Chi2_p"] == pytest.approx(p)
    # Eq. 15 and 19: all weighted relative measures equal novelty
    rng = np.random.default_rng(0)
    cells = rng.integers(1, 50, size=(4, 100))
    m = rule_measures(*cells)
    for name in ("WRAcc", "WRNegRel", "WRSens", "WRSpec"):
        np.testing.assert_allclose(m[name], m["Nov"], atol=1e-12)
    assert np.all(np.abs(m["Nov"]) <= 0.25)
    np.testing.assert_allclose(m["Acc"] + m["Err"], 1.0)
    np.testing.assert_allclose(m["RAcc"] * m["Cov"], m["WRAcc"], atol=1e-12)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 30), min_size=4, max_size=4), st.integers(1, 20))
def test_measures_are_scale_invariant(cells, scale):
    if sum(cells) == 0:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedScoreWarning)
        a = rule_measures(*cells, zero_division="nan")
        b = rule_measures(*[c * scale for c in cells], zero_division="nan")
    for name in MEASURES:
        if name in ("Laplace", "Chi2", "Chi2_p"):
            continue
        np.testing.assert_allclose(a[name], b[name], equal_nan=True, atol=1e-12)


def test_zero_division_policy():
    with pytest.warns(UndefinedScoreWarning, match=r"Acc \(1\)"):
        m = rule_measures([0, 2], [0, 1], [3, 1], [2, 1])
    assert np.isnan(m["Acc"][0]) and not np.isnan(m["Acc"][1])
    assert m["WRAcc"][0] == pytest.approx(0.0)  # weight 0: the limit of the product
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = rule_measures(0, 0, 3, 2, zero_division=0.0)
        assert m["Acc"] == 0.0 and m["Sat"] == 0.0 and m["Chi2"] == 0.0
        m = rule_measures(0, 0, 3, 2, zero_division="nan")
        assert np.isnan(m["Acc"])
    with pytest.raises(ValueError, match="`zero_division` must be"):
        rule_measures(1, 1, 1, 1, zero_division="zero")
    with pytest.raises(TypeError, match="`zero_division` must be"):
        rule_measures(1, 1, 1, 1, zero_division=None)
    with pytest.raises(ValueError, match=r"`bh` must be integers >= 0, got -1"):
        rule_measures(-1, 1, 1, 1)


def test_cells_are_counts_fractions_are_refused():
    # the cells are counts of examples: a fraction (a relative frequency, a weighted sum)
    # gave a plausible Laplace and Chi2 that are not those of any table, and is refused
    with pytest.raises(ValueError, match=r"`bh` must be integers >= 0, got 2.5"):
        rule_measures(2.5, 1, 1, 1)
    with pytest.raises(ValueError, match=r"`bbarh` must be integers >= 0, got 0.5 \(1 of 2 "):
        rule_measures([3, 1], [1, 1], [3, 0.5], [5, 2])
    # Figure 12's R0001 as printed: frequencies (n = 12), not counts
    with pytest.raises(ValueError, match=r"`bh` must be integers >= 0, got 0.25"):
        rule_measures(0.250, 0.083, 0.250, 0.417)
    with pytest.raises(ValueError, match=r"`bbarhbar` must be an array of finite values only"):
        rule_measures(1, 1, 1, np.inf)
    # counts held in floats (the cells of evaluate_rules, of pandas columns) are counts
    whole = rule_measures(np.float64(3), 1.0, np.array(3.0), 5.0)
    counts = rule_measures(3, 1, 3, 5)
    for name in MEASURES:
        assert whole[name] == counts[name], name
    assert counts["Laplace"] == pytest.approx(4 / 6)  # (bh + 1) / (b + k), the counts'


# -- chi-square against scipy.stats.chi2_contingency -----------------------------------------------
def test_chi_square_equals_scipy():
    rng = np.random.default_rng(0)
    cells = rng.integers(0, 60, (4, 300)).astype(np.float64)
    cells[:, :3] = [[5, 0, 3], [0, 0, 4], [2, 7, 0], [9, 1, 0]]  # empty row/column tables
    statistic, pvalue = chi_square(*cells)
    measures = rule_measures(*cells, zero_division="nan")
    np.testing.assert_array_equal(measures["Chi2"], statistic)
    np.testing.assert_array_equal(measures["Chi2_p"], pvalue)
    for k, (a, b, c, d) in enumerate(cells.T):
        table = np.array([[a, b], [c, d]])
        if (table.sum(0) == 0).any() or (table.sum(1) == 0).any():
            assert np.isnan(statistic[k]) and np.isnan(pvalue[k])
            with pytest.raises(ValueError):
                chi2_contingency(table, correction=False)
            continue
        expected = chi2_contingency(table, correction=False)
        assert statistic[k] == pytest.approx(expected.statistic, rel=1e-12, abs=1e-12)
        assert pvalue[k] == pytest.approx(expected.pvalue, rel=1e-12, abs=1e-15)
    assert np.isnan(statistic[:3]).sum() >= 2


# -- huge cells ------------------------------------------------------------------------------------
def test_rule_measures_refuse_cells_whose_sum_overflows():
    # four cells of 1e308 gave Acc = Sens = Spec = 0.0 (the total overflowed to inf)
    from xplique_ext.rules import rule_measures

    with pytest.raises(ValueError, match="`bh`, `bhbar`, `bbarh` and `bbarhbar` must sum"):
        rule_measures(1e308, 1e308, 1e308, 1e308)
    assert rule_measures(1e300, 1e300, 1e300, 1e300)["Acc"] == pytest.approx(0.5)


def test_rule_measures_of_huge_cells_equal_those_of_the_cells_scaled_down():
    # past about 1e77 per cell, Lift's and Chi2's products of cells overflowed (inf / NaN)
    from xplique_ext.rules import MEASURES, rule_measures

    rng = np.random.default_rng(0)
    cells = rng.integers(0, 50, (4, 40)).astype(np.float64)
    cells[:, :3] = [[1, 0, 3], [2, 0, 1], [0, 4, 1], [0, 9, 1e10]]  # undefined, huge ratio
    scale = 2.0**664  # about 1.2e200, a power of two: the cancellations of Nov... stay exact
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no RuntimeWarning (nor any other)
        small = rule_measures(*cells, zero_division="nan")
        huge = rule_measures(*(cells * scale), zero_division="nan")
    for name in MEASURES:
        if name == "Chi2":  # homogeneous of degree 1 in the cells
            np.testing.assert_allclose(huge[name] / scale, small[name], rtol=1e-12, equal_nan=True)
        elif name not in ("Laplace", "Chi2_p"):  # these two need the actual counts
            np.testing.assert_allclose(huge[name], small[name], rtol=1e-12, equal_nan=True)
    assert np.isfinite(huge["Laplace"]).all()
    np.testing.assert_array_equal(np.isnan(huge["Chi2_p"]), np.isnan(small["Chi2_p"]))


def test_lift_and_chi2_are_correctly_rounded_like_their_typeset_formulas():
    # the scaling that keeps huge cells finite is exact: Lift = bh n / (b h) and
    # Chi2 = n d^2 / (b bbar h hbar) stay the correctly rounded values of the fractions

    cells = np.random.default_rng(0).integers(0, 60, size=(4, 400)).astype(float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = rule_measures(*cells)
    for k, (bh, bhbar, bbarh, bbarhbar) in enumerate(cells.T.astype(int)):
        n, b, h = bh + bhbar + bbarh + bbarhbar, bh + bhbar, bh + bbarh
        den = b * (bbarh + bbarhbar) * h * (bhbar + bbarhbar)
        if b and h:
            assert m["Lift"][k] == float(Fraction(bh * n, b * h))
        if den:
            assert m["Chi2"][k] == float(Fraction(n * (bh * bbarhbar - bhbar * bbarh) ** 2, den))


def test_rule_measures_take_python_integers_beyond_int64_or_name_the_cell():
    from xplique_ext.rules import rule_measures

    # 2**70 is an object array in NumPy: a count all the same (was "got dtype object")
    huge = rule_measures(3 * 2**70, 2**70, 3 * 2**70, 5 * 2**70)
    small = rule_measures(3, 1, 3, 5)
    for name in ("Acc", "Sens", "Spec", "Nov", "Lift"):
        assert float(huge[name]) == pytest.approx(float(small[name]), rel=1e-12)
    with pytest.raises(ValueError, match=r"`bbarh` must be whole counts within the float range"):
        rule_measures(1, 1, 10**400, 1)


# -- the report's tables (voyage) ------------------------------------------------------------------
def within(a, b, tol=0.002):
    return abs(a - b) <= tol + 1e-12


@pytest.mark.parametrize("mode", ["unordered", "ordered", "inter-class"])
def test_measures_reproduce_tables(mode):
    rules, data = load_voyage(mode)
    frame = evaluate_rules(rules, data, mode).to_frame().set_index("rule")
    checked = 0
    for rule, row in TABLES[mode].items():
        if rule in TABLE_EXCEPTIONS[mode]:
            continue
        for column, value in zip(TABLE_COLUMNS, row):
            assert within(frame.loc[rule, column], value), (rule, column, frame.loc[rule, column])
            checked += 1
    assert checked == 9 * (len(TABLES[mode]) - len(TABLE_EXCEPTIONS[mode]))


def test_table7_exceptions_follow_the_printed_figure():
    """Table 7's R0002 and R0006 come from Figure 12's printed (defective) rows."""
    for rule in ("R0002", "R0006"):
        f = FIG12_PRINTED[rule][0]
        # printed order f_bh, f_bh̄, f_b̄h̄, f_b̄h, n: the counts are round(f * n) (the cells
        # are counts; 3 decimals pin them down for n < 1000)
        counts = [round(v * f[4]) for v in f[:4]]
        assert np.allclose([c / f[4] for c in counts], f[:4], atol=5e-4)
        m = rule_measures(counts[0], counts[1], counts[3], counts[2])
        for column, value in zip(TABLE_COLUMNS, TABLES["unordered"][rule]):
            assert within(float(m[column]), value), (rule, column)
    # and the data-derived rows differ from them where the figure row was wrong
    rules, data = load_voyage("unordered")
    frame = evaluate_rules(rules, data).to_frame().set_index("rule")
    assert not within(frame.loc["R0002", "NegRel"], TABLES["unordered"]["R0002"][2])
    assert within(frame.loc["R0002", "Acc"], TABLES["unordered"]["R0002"][0])


def test_table8_r0003_matches_n_14():
    """Table 8's R0003 row is the table bh=3, bh̄=0, b̄h=7, b̄h̄=4 (n = 14), not Figure 14's."""
    m = rule_measures(3, 0, 7, 4)
    for column, value in zip(TABLE_COLUMNS, TABLES["ordered"]["R0003"]):
        assert within(float(m[column]), value), column
    rules, data = load_voyage("ordered")
    result = evaluate_rules(rules, data, "ordered")
    assert result.known.n[2] == 13


def test_each_measure_declares_its_direction_once():
    assert tuple(HIGHER_IS_BETTER) == MEASURES  # one table: the names and their order
    assert all(isinstance(v, bool) for v in HIGHER_IS_BETTER.values())
    assert [m for m, higher in HIGHER_IS_BETTER.items() if not higher] == ["Err", "Chi2_p"]
    # a better rule (more of its covered examples in the class) moves each measure
    # in its declared direction: Acc up, Err down; a stronger association: Chi2 up, p down
    weak = rule_measures(6, 4, 4, 6, n_classes=2)
    strong = rule_measures(9, 1, 1, 9, n_classes=2)
    for name in ("Acc", "Err", "Chi2", "Chi2_p"):
        assert (strong[name] > weak[name]) == HIGHER_IS_BETTER[name], name
