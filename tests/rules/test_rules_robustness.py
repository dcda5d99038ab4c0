"""Bad input and edges of the rule metrics (issue 9, points 8, 12 and 13, and the FiRe/Qs
property test), and the layering of ``xplique_ext.rules`` (issue 11)."""

import ast
import math
import os
import pathlib
import re
import subprocess
import sys
import warnings
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from rules_cli_helpers import run_cli
from scipy.stats import chi2_contingency

import xplique_ext.rules as xr
from xplique_ext.cli import main as cli_main
from xplique_ext.commons.params import check_param
from xplique_ext.commons.warnings import UndefinedScoreWarning
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
from xplique_ext.rules.measures import chi_square
from xplique_ext.rules.validation import PSI

# -- point 8: booleans (and strings) are never numbers ---------------------------------


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


# -- point 12: shapes that do not broadcast are named --------------------------------------


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


# -- overflow: NaN with a warning, never inf ------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        lambda: fire_score(1.0, 1e308, 10),
        lambda: fire_score(1e-308, 0.5, 1e10),  # r / psi overflows
        lambda: fire_score(1e-308, 0.0, 1e10),  # 0 * inf
        lambda: qs_score(1e308, 10, 0.0),
    ],
)
def test_overflow_is_nan_with_a_warning(call):
    with pytest.warns(UndefinedScoreWarning, match="overflows float64"):
        value = call()
    assert math.isnan(value)


def test_overflow_warns_once_for_an_array():
    with pytest.warns(UndefinedScoreWarning, match=r"\(1 of 3 values\)") as record:
        values = FiRe().detailed_evaluate([1.0, 1e308, 2.0], [2, 10, 2])
    assert len(record) == 1
    assert np.isnan(values[1]) and np.isfinite(values[[0, 2]]).all()


# -- point 13: the rules CLI names the data file; negative-looking pairs reach FiRe ---------


def test_cli_missing_data_file_is_named(voyage_dir, capsys):
    # the default names file (nope.names) is missing too: the data file is what to report
    assert run_cli(["rules", "-d", "nope.data", "-f", "voyage.cn2.unordered.pbm"]) == 1
    err = capsys.readouterr().err
    assert "data file 'nope.data' (-d DATA)" in err and "No such file" in err
    assert "nope.names" not in err


def test_cli_missing_data_file_is_named_before_a_missing_names_file(voyage_dir, capsys):
    argv = ["rules", "-d", "nope.data", "-n", "nope.names", "-f", "voyage.cn2.unordered.pbm"]
    assert run_cli(argv) == 1
    assert "data file 'nope.data' (-d DATA)" in capsys.readouterr().err


def test_cli_fire_files_are_named(tmp_path, capsys):
    assert run_cli(["fire", "-f", str(tmp_path / "pairs.txt")]) == 1
    assert "pairs file" in capsys.readouterr().err
    assert run_cli(["fire", "0.1,3", "-s", str(tmp_path / "no" / "out.txt")]) == 1
    err = capsys.readouterr().err
    assert "output file" in err and "(-s OUT)" in err


def test_cli_missing_names_files_are_named_with_their_role(voyage_dir, capsys):
    (voyage_dir / "other.data").write_text((voyage_dir / "voyage.test").read_text())
    assert run_cli(["rules", "-d", "other.data", "-f", "voyage.cn2.unordered.pbm"]) == 1
    err = capsys.readouterr().err
    assert "names file 'other.names', the default for -d other.data" in err
    assert "-n NAMES" in err
    argv = ["rules", "-d", "voyage.test", "-n", "nope.names", "-f", "voyage.cn2.unordered.pbm"]
    assert run_cli(argv) == 1
    assert "names file 'nope.names' (-n NAMES)" in capsys.readouterr().err
    assert run_cli(["rules", "-d", "voyage.test", "-f", "nope.pbm"]) == 1
    assert "rule file 'nope.pbm' (-f RULES)" in capsys.readouterr().err
    argv = ["rules", "-d", "voyage.test", "-f", "voyage.cn2.unordered.pbm", "-s", "no/dir/out"]
    assert run_cli(argv) == 1
    assert "output file 'no/dir/out' (-s OUT)" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv, message",
    [
        (["fire", "-0.1,3"], r"`predictive_loss` must be numbers >= 0 \(Eq. 1\), got -0.1"),
        (["fire", "0.1,3", "-.5,2"], r"`predictive_loss` .* got -0.5"),
        (["fire", "--psi", "2", "-1,-3"], r"`predictive_loss` .* got -1$"),
        (["fire", "--psi", "-1", "0.1,3"], r"`psi` must be a finite real number > 0"),
        (["fire", "A=-0.1,3"], r"`predictive_loss` .* got -0.1"),
    ],
)
def test_cli_fire_negative_values_reach_the_domain_error(argv, message, capsys):
    assert run_cli(argv) == 1
    err = capsys.readouterr().err
    assert "unrecognized arguments" not in err
    assert re.search(message, err), err


def test_cli_fire_negative_pair_through_the_main_parser(capsys):
    assert cli_main(["fire", "-0.1,3"]) == 1
    assert "`predictive_loss` must be numbers >= 0 (Eq. 1)" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # real unknown options are still refused
        cli_main(["fire", "-x", "0.1,3"])


# -- the property test of FiRe and Qs (issue 9 acceptance) ---------------------------------

losses = st.floats(min_value=0.0, max_value=1e308, allow_nan=False, allow_infinity=False)
readabilities = st.floats(min_value=1.0, max_value=1e308, allow_nan=False, allow_infinity=False)
trade_offs = st.floats(min_value=1e-308, max_value=1e308, allow_nan=False, allow_infinity=False)
coverages = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


def _elementwise(function, *columns):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedScoreWarning)
        return np.array([function(*values) for values in zip(*columns)], dtype=np.float64)


def _vectorised(function, *arrays):
    """The result and whether an UndefinedScoreWarning was raised."""
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        values = np.asarray(function(*arrays), dtype=np.float64)
    assert all(issubclass(w.category, UndefinedScoreWarning) for w in record), [
        str(w.message) for w in record
    ]
    return values, len(record) > 0


@settings(max_examples=150, deadline=None)
@given(
    psi=trade_offs,
    rows=st.lists(st.tuples(losses, readabilities), min_size=1, max_size=12),
    cut=st.integers(min_value=0, max_value=12),
)
# r / psi within 1e-12 of a whole number (above it, below it), and clearly above one
@example(psi=1.0, rows=[(1.0, 1.0000000000000002), (1.0, 3.0 - 2**-51), (1.0, 1.5)], cut=1)
@example(psi=0.7, rows=[(1.0, 2.1), (0.5, 1.4000000001)], cut=0)
def test_fire_property(psi, rows, cut):
    p = np.array([row[0] for row in rows])
    r = np.array([row[1] for row in rows])
    p_in, r_in = p.copy(), r.copy()
    values, warned = _vectorised(lambda a, b: FiRe(psi).detailed_evaluate(a, b), p, r)
    np.testing.assert_array_equal(p, p_in)  # inputs untouched
    np.testing.assert_array_equal(r, r_in)
    assert values.shape == p.shape
    # finite and in the documented range [0, inf), or NaN with a warning
    finite = np.isfinite(values)
    assert np.all(values[finite] >= 0)
    assert np.all(np.isnan(values[~finite]))
    assert warned == bool(np.any(~finite))
    # Eq. 2, value by value, where it is representable, with the documented ceiling: the
    # exact quotient r / psi (fractions), taken as the whole number within a relative 1e-12
    for k in np.flatnonzero(finite):
        q = Fraction(float(r[k])) / Fraction(psi)
        whole = round(q)
        ceiling = whole if abs(q - whole) <= Fraction(1, 10**12) * whole else math.ceil(q)
        expected = p[k] * float(ceiling) * r[k] ** 0.05
        assert math.isclose(values[k], expected, rel_tol=1e-14), (values[k], expected)
    # identical one value at a time, and in two chunks
    np.testing.assert_array_equal(values, _elementwise(lambda a, b: fire_score(psi, a, b), p, r))
    cut = min(cut, len(rows))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedScoreWarning)
        chunks = np.concatenate(
            [
                FiRe(psi).detailed_evaluate(p[:cut], r[:cut]),
                FiRe(psi).detailed_evaluate(p[cut:], r[cut:]),
            ]
        )
    np.testing.assert_array_equal(values, chunks)


@settings(max_examples=150, deadline=None)
@given(
    rows=st.lists(st.tuples(losses, readabilities, coverages), min_size=1, max_size=12),
    cut=st.integers(min_value=0, max_value=12),
)
def test_qs_property(rows, cut):
    p, r, c = (np.array(column) for column in zip(*rows))
    values, warned = _vectorised(lambda *a: QsScore().detailed_evaluate(*a), p, r, c)
    finite = np.isfinite(values)
    assert np.all(values[finite] >= 0)
    assert np.all(np.isnan(values[~finite]))
    assert warned == bool(np.any(~finite))
    for k in np.flatnonzero(finite):
        assert values[k] == p[k] * (2.0 - c[k]) * r[k]
        assert values[k] / 2.0 <= float(p[k]) * float(r[k])
    np.testing.assert_array_equal(values, _elementwise(qs_score, p, r, c))
    cut = min(cut, len(rows))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedScoreWarning)
        chunks = np.concatenate(
            [
                QsScore().detailed_evaluate(p[:cut], r[:cut], c[:cut]),
                QsScore().detailed_evaluate(p[cut:], r[cut:], c[cut:]),
            ]
        )
    np.testing.assert_array_equal(values, chunks)


@settings(max_examples=100, deadline=None)
@given(psi=trade_offs, value=st.one_of(st.booleans(), st.just(np.bool_(True))))
def test_property_booleans_never_score(psi, value):
    with pytest.raises(TypeError, match="`predictive_loss`"):
        fire_score(psi, value, 2)
    with pytest.raises(TypeError, match="`readability_loss`"):
        qs_score(0.1, value, 1.0)


def test_the_psi_constraint_names_the_parameter():
    assert check_param(3, "psi", [PSI]) == 3.0
    with pytest.raises(TypeError, match="`psi`"):
        check_param(False, "psi", [PSI])


# -- chi-square: ours against scipy.stats.chi2_contingency ---------------------------------


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


# -- issue 11: layering of xplique_ext.rules ----------------------------------------------

RULES_DIR = pathlib.Path(xr.__file__).parent


def _internal_imports(path):
    """Modules of xplique_ext.rules imported by ``path``, at any depth (functions too)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                found.add(node.module.split(".")[0])
            else:
                found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.startswith("xplique_ext.rules."):
                found.add(node.module.split(".")[2])
    return found - {"__init__"}


def test_no_import_cycle_inside_rules():
    modules = {p.stem: p for p in RULES_DIR.glob("*.py") if p.stem != "__init__"}
    graph = {name: _internal_imports(path) & set(modules) for name, path in modules.items()}
    state = {}

    def visit(name, stack):
        state[name] = "open"
        for other in sorted(graph[name]):
            if state.get(other) == "open":
                cycle = stack[stack.index(other) :] + [other]
                pytest.fail(f"import cycle in xplique_ext.rules: {' -> '.join(cycle)}")
            if other not in state:
                visit(other, stack + [other])
        state[name] = "done"

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])


def test_import_rules_loads_neither_tensorflow_nor_numba():
    code = (
        "import sys, xplique_ext.rules, xplique_ext.rules.fire\n"
        f"assert xplique_ext.__file__.startswith({str(RULES_DIR.parent)!r}), xplique_ext.__file__\n"
        "heavy = sorted({m.split('.')[0] for m in sys.modules} & "
        "{'tensorflow', 'keras', 'numba', 'torch'})\n"
        "print(heavy)\n"
    )
    root = str(RULES_DIR.parent.parent)  # this checkout's xplique_ext, not an installed one
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    assert out.stdout.strip() == "[]", out.stdout
    loaded = {line.split("|")[-1].strip() for line in out.stderr.splitlines() if "|" in line}
    assert not {"tensorflow", "numba", "keras"} & loaded


def test_test_oracle_is_not_exported():
    assert "evaluate_rules_loop" not in xr.__all__
    assert not hasattr(xr, "evaluate_rules_loop")
    from rules_reference import evaluate_rules_loop

    assert callable(evaluate_rules_loop)


def test_names_without_a_column_read_from_the_file_is_refused(tmp_path):
    # every attribute derived (:=): no value is read from a line, so every line would be
    # dropped (0.x returned an empty Dataset; the first cut divided by zero)
    from xplique_ext.rules.datafile import parse_data, read_data
    from xplique_ext.rules.names import parse_names

    names = parse_names("null.\nx: real := 1.\n")
    (tmp_path / "z.data").write_text("a\n")
    for call in (
        lambda: parse_data("a\n", names),
        lambda: read_data(tmp_path / "z.data", names),
        lambda: list(read_data(tmp_path / "z.data", names, chunksize=1)),
    ):
        with pytest.raises(ValueError, match="`names` must declare at least one column"):
            call()


def test_names_mismatch_says_which_declaration_differs():
    from xplique_ext.rules import evaluate_rules, parse_rules
    from xplique_ext.rules.datafile import parse_data
    from xplique_ext.rules.names import parse_names

    ours, theirs = parse_names("yes, no.\nx: p, q.\n"), parse_names("yes, no.\nx: p, q, r.\n")
    rules = parse_rules("R0001  IF x = p\n        THEN CLASS = yes\n")
    with pytest.raises(ValueError, match=r"values=\('p', 'q'\).* instead of .*'r'\)"):
        evaluate_rules(rules, parse_data("p,yes\n", ours), "unordered", names=theirs)


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
