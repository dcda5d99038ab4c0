"""The declared constraints of the rule metrics' numeric arguments
(:mod:`xplique_ext.rules.validation`), at every entry point: booleans, strings and complex
numbers are refused naming the parameter, shapes that do not broadcast are named."""

import re

import numpy as np
import pytest

import xplique_ext.rules as xr
from xplique_ext.commons.params import check_param
from xplique_ext.metrics import (
    FiRe,
    QsScore,
    fire_compensation_alpha,
    fire_equilibrium_alpha,
    fire_isoline,
    fire_score,
    qs_score,
)
from xplique_ext.rules import load_voyage, rule_measures, score_rules
from xplique_ext.rules.validation import PSI


# -- booleans (and strings) are never numbers ------------------------------------------------------
def _plot_isolines(reference):
    import matplotlib

    matplotlib.use("Agg")
    return xr.plot_fire_isolines(reference, 1.0)


def _plot_alpha_beta(readability_losses):
    import matplotlib

    matplotlib.use("Agg")
    return xr.plot_alpha_beta(readability_losses, (1,))


def _tree_rules(**kwargs):
    from sklearn.tree import DecisionTreeClassifier

    x = np.array([[0.0], [1.0], [2.0], [3.0]])
    tree = DecisionTreeClassifier(random_state=0).fit(x, [0, 0, 1, 1])
    return xr.tree_to_rules(tree, ["x"], ["a", "b"], **kwargs)


def _score_voyage(psi):
    rules, data = load_voyage("ordered")
    return score_rules(rules, data, psi=psi)


BOOLEAN_CASES = {
    "FiRe(psi=True)": (lambda: FiRe(psi=True), "psi"),
    "FiRe(psi=np.True_)": (lambda: FiRe(psi=np.bool_(True)), "psi"),
    "FiRe().evaluate(p=True)": (lambda: FiRe().evaluate(True, 3), "predictive_loss"),
    "FiRe().evaluate(p=False)": (lambda: FiRe().evaluate(False, 3), "predictive_loss"),
    "FiRe().evaluate(r=True)": (lambda: FiRe().evaluate(0.1, True), "readability_loss"),
    "FiRe() p list with a bool": (lambda: FiRe().evaluate([0.1, True], 3), "predictive_loss"),
    "FiRe() p bool array": (
        lambda: FiRe().detailed_evaluate(np.array([True, False]), 3),
        "predictive_loss",
    ),
    "FiRe() p object array with a bool": (
        lambda: FiRe().evaluate(np.array([0.5, True], dtype=object), 3),
        "predictive_loss",
    ),
    "fire_score(psi=True)": (lambda: fire_score(True, 0.1, 3), "psi"),
    "QsScore coverage=True": (lambda: QsScore().evaluate(0.1, 3, True), "coverage"),
    "qs_score r=True": (lambda: qs_score(0.1, True, 1.0), "readability_loss"),
    "equilibrium beta=True": (lambda: fire_equilibrium_alpha(True, 4), "beta"),
    "equilibrium psi=True": (lambda: fire_equilibrium_alpha(2.0, 4, psi=True), "psi"),
    "compensation r=True": (lambda: fire_compensation_alpha(2.0, True), "readability_loss"),
    "isoline grid with a bool": (
        lambda: fire_isoline(1.0, 40.0, 1, [True, 2]),
        "readability_grid",
    ),
    "isoline psi=True": (lambda: fire_isoline(True, 40.0, 1, [2]), "psi"),
    "fire_isoline(p=True)": (lambda: fire_isoline(1.0, True, 1, [2]), "predictive_loss"),
    "score_rules(psi=True)": (lambda: _score_voyage(True), "psi"),
    "rule_measures(bh=True)": (lambda: rule_measures(True, 1, 2, 3), "bh"),
    "rule_measures bool array": (
        lambda: rule_measures(1, np.array([True, False]), 2, 3),
        "bhbar",
    ),
    "rule_measures(n_classes=True)": (
        lambda: rule_measures(1, 1, 2, 3, n_classes=True),
        "n_classes",
    ),
    "rule_measures(zero_division=False)": (
        lambda: rule_measures(1, 1, 2, 3, zero_division=False),
        "zero_division",
    ),
    "plot_fire_isolines reference p=True": (lambda: _plot_isolines((True, 4)), "reference"),
    "plot_fire_isolines psi=True": (
        lambda: xr.plot_fire_isolines((1.0, 4), [1.0, True]),
        "psi",
    ),
    "plot_fire_isolines extractor r=True": (
        lambda: xr.plot_fire_isolines((1.0, 4), 1.0, [(0.5, True)]),
        "extractors[0]",
    ),
    "plot_fire_isolines r_max=True": (
        lambda: xr.plot_fire_isolines((1.0, 4), 1.0, r_max=True),
        "r_max",
    ),
    "RuleSet.to_string(precision=True)": (
        lambda: load_voyage("ordered")[0].to_string(precision=True),
        "precision",
    ),
    "Rule.to_string(precision=True)": (
        lambda: load_voyage("ordered")[0].rules[0].to_string([1, 0, 0, 0, 1], None, True),
        "precision",
    ),
    "tree_to_rules(decimals=True)": (lambda: _tree_rules(decimals=True), "decimals"),
    "plot_alpha_beta r=True": (lambda: _plot_alpha_beta((True, 4)), "readability_losses"),
}


@pytest.mark.parametrize("case", sorted(BOOLEAN_CASES))
def test_booleans_are_rejected_with_the_parameter_named(case):
    call, parameter = BOOLEAN_CASES[case]
    with pytest.raises(TypeError, match=re.escape(f"`{parameter}`")):
        call()


@pytest.mark.parametrize(
    "call, parameter",
    [
        (lambda: FiRe().evaluate("0.1", 3), "predictive_loss"),  # was read as 0.1
        (lambda: FiRe().evaluate(0.1, ["3"]), "readability_loss"),
        (lambda: FiRe().evaluate(0.1 + 0j, 3), "predictive_loss"),
        (lambda: FiRe().evaluate([[0.1], [0.2, 0.3]], 3), "predictive_loss"),  # ragged
        (lambda: qs_score(0.1, 3, "all"), "coverage"),
        (lambda: rule_measures("3", 1, 2, 3), "bh"),
        (lambda: FiRe(psi="1"), "psi"),
    ],
)
def test_strings_and_complex_are_rejected(call, parameter):
    with pytest.raises(TypeError, match=rf"`{parameter}`"):
        call()


def test_integer_dtypes_and_real_numbers_stay_accepted():
    assert FiRe(np.int64(2)).evaluate(np.int32(1), np.uint8(4)) == pytest.approx(2.14, abs=5e-3)
    np.testing.assert_array_equal(
        FiRe(2).detailed_evaluate(np.array([1, 1], dtype=np.int16), np.array([4, 4])),
        FiRe(2.0).detailed_evaluate([1.0, 1.0], [4.0, 4.0]),
    )
    assert float(rule_measures(np.int64(3), 1, 3, 5)["Acc"]) == 0.75


def test_the_psi_constraint_names_the_parameter():
    assert check_param(3, "psi", [PSI]) == 3.0
    with pytest.raises(TypeError, match="`psi`"):
        check_param(False, "psi", [PSI])


# -- shapes that do not broadcast are named --------------------------------------------------------
@pytest.mark.parametrize(
    "call, message",
    [
        (
            lambda: FiRe().evaluate([0.1, 0.2, 0.3], [1, 2]),
            r"`predictive_loss` \(shape \(3,\)\) and `readability_loss` \(shape \(2,\)\)",
        ),
        (
            lambda: FiRe().detailed_evaluate(np.zeros((2, 3)), np.ones((2, 2))),
            r"`predictive_loss` \(shape \(2, 3\)\) and `readability_loss` \(shape \(2, 2\)\)",
        ),
        (
            lambda: QsScore().detailed_evaluate([0.1, 0.2], [3, 4], [1.0, 0.9, 0.8]),
            r"`predictive_loss` \(shape \(2,\)\), `readability_loss` \(shape \(2,\)\) and "
            r"`coverage` \(shape \(3,\)\)",
        ),
        (
            lambda: qs_score([0.1, 0.2], [3, 4, 5], 1.0),
            r"`readability_loss` \(shape \(3,\)\)",
        ),
        (
            lambda: fire_equilibrium_alpha([2.0, 3.0], [4, 5, 6]),
            r"`beta` \(shape \(2,\)\) and `readability_loss` \(shape \(3,\)\)",
        ),
        (
            lambda: rule_measures([1, 2], [1, 2, 3], 1, 1),
            r"`bh` \(shape \(2,\)\), `bhbar` \(shape \(3,\)\)",
        ),
    ],
)
def test_shape_mismatch_names_the_parameters_and_shapes(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_isoline_needs_one_point():
    with pytest.raises(TypeError, match="`predictive_loss` and `readability_loss`"):
        fire_isoline(1.0, [40.0, 20.0], 1, [2, 4])


def test_broadcasting_still_works():
    grid = fire_score(2, np.array([[0.1], [0.2]]), np.array([1, 2, 3]))
    assert grid.shape == (2, 3)
    assert FiRe(2).detailed_evaluate([0.1, 0.2], np.array([1, 3])).shape == (2,)
    assert QsScore().detailed_evaluate([0.1, 0.2], 3, 1.0).shape == (2,)
